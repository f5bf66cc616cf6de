/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_truncate: errors returned under MPI_ERRORS_RETURN. A receive buffer
 * too short (eager and rendezvous sizes) gives MPI_ERR_TRUNCATE; invalid
 * arguments give MPI_ERR_RANK / _TAG / _TYPE / _COUNT / _COMM; every error
 * class has a non-empty string. The communicator keeps working after each
 * error. Any number of ranks. */
#include "mtest.h"

static int right, left;

static int err_class(int code)
{
    int cls = -12345;
    int rc = MPI_Error_class(code, &cls);
    CHECK(rc == MPI_SUCCESS, "MPI_Error_class(%d) returned %d", code, rc);
    return cls;
}

static void check_class(int rc, int expected, const char *expname, const char *what)
{
    CHECK(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS, expected an error of class %s", what, expname);
    if (rc == MPI_SUCCESS)
        return;
    int cls = err_class(rc);
    CHECK(cls == expected, "%s: error class %d, expected %s (%d)", what, cls, expname, expected);
    char str[MPI_MAX_ERROR_STRING];
    int len = -1;
    str[0] = '\0';
    MPI_OK(MPI_Error_string(rc, str, &len));
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (size_t)len == strlen(str),
          "%s: Error_string of %d has length %d (strlen %zu)", what, rc, len, strlen(str));
}

/* The communicator still carries messages after an error. */
static void still_works(int tag, const char *after)
{
    int s = 77 + mtest_rank, r = -1;
    MPI_Status st;
    int rc = MPI_Sendrecv(&s, 1, MPI_INT, right, tag, &r, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
    CHECK(rc == MPI_SUCCESS && r == 77 + left, "after %s: Sendrecv rc %d value %d, expected 0 and %d", after, rc, r,
          77 + left);
}

static void truncation(int nbytes, int tag)
{
    char what[96];
    unsigned char *sbuf = malloc((size_t)nbytes), *rbuf = malloc((size_t)nbytes);
    mtest_fill(sbuf, (size_t)nbytes, mtest_rank, tag);
    int short_len = nbytes / 4;

    /* Blocking receive. */
    MPI_Request s;
    MPI_Status st;
    MPI_OK(MPI_Isend(sbuf, nbytes, MPI_BYTE, right, tag, MPI_COMM_WORLD, &s));
    st.MPI_ERROR = -4242;
    int rc = MPI_Recv(rbuf, short_len, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st);
    snprintf(what, sizeof what, "Recv of %d bytes into %d", nbytes, short_len);
    check_class(rc, MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", what);
    /* The standard leaves status.MPI_ERROR of a single-completion call
     * unspecified; if it is set, it must say truncation. */
    if (st.MPI_ERROR != -4242 && st.MPI_ERROR != MPI_SUCCESS)
        CHECK(err_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: status.MPI_ERROR class %d, expected MPI_ERR_TRUNCATE",
              what, err_class(st.MPI_ERROR));
    /* The sender of a truncated message completes normally. */
    rc = MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "%s: the sender's Wait returned %d", what, rc);
    still_works(tag + 1, what);

    /* Nonblocking receive completed by Wait, then by Waitall (which must
     * report it through MPI_ERR_IN_STATUS and statuses[i].MPI_ERROR). */
    MPI_Request r;
    MPI_OK(MPI_Isend(sbuf, nbytes, MPI_BYTE, right, tag, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Irecv(rbuf, short_len, MPI_BYTE, left, tag, MPI_COMM_WORLD, &r));
    rc = MPI_Wait(&r, &st);
    snprintf(what, sizeof what, "Irecv+Wait of %d bytes into %d", nbytes, short_len);
    check_class(rc, MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", what);
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));

    MPI_Request rr[2];
    MPI_Status sts[2];
    int ok_val = -1, ok_send = 5 + mtest_rank;
    MPI_OK(MPI_Isend(sbuf, nbytes, MPI_BYTE, right, tag, MPI_COMM_WORLD, &s));
    MPI_OK(MPI_Irecv(rbuf, short_len, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rr[0]));
    MPI_OK(MPI_Irecv(&ok_val, 1, MPI_INT, left, tag + 2, MPI_COMM_WORLD, &rr[1]));
    MPI_OK(MPI_Send(&ok_send, 1, MPI_INT, right, tag + 2, MPI_COMM_WORLD));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -4242;
    rc = MPI_Waitall(2, rr, sts);
    snprintf(what, sizeof what, "Irecv+Waitall of %d bytes into %d", nbytes, short_len);
    CHECK(rc == MPI_ERR_IN_STATUS, "%s returned %d, expected MPI_ERR_IN_STATUS (%d)", what, rc, MPI_ERR_IN_STATUS);
    if (rc == MPI_ERR_IN_STATUS) {
        CHECK(err_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: statuses[0].MPI_ERROR class %d, expected %d",
              what, err_class(sts[0].MPI_ERROR), MPI_ERR_TRUNCATE);
        /* The other receive succeeded (or, allowed too, was left pending). */
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING,
              "%s: statuses[1].MPI_ERROR %d, expected MPI_SUCCESS", what, sts[1].MPI_ERROR);
        if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
            MPI_OK(MPI_Wait(&rr[1], MPI_STATUS_IGNORE));
    }
    CHECK(ok_val == 5 + left, "%s: the untruncated receive got %d, expected %d", what, ok_val, 5 + left);
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    still_works(tag + 3, what);
    free(sbuf);
    free(rbuf);
}

static void bad_arguments(void)
{
    int buf[4] = {0, 0, 0, 0};
    int rc;
    MPI_Request r;

    rc = MPI_Send(buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_RANK, "MPI_ERR_RANK", "Send to rank == size");
    rc = MPI_Send(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_RANK, "MPI_ERR_RANK", "Send to rank -7");
    rc = MPI_Recv(buf, 1, MPI_INT, mtest_size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_class(rc, MPI_ERR_RANK, "MPI_ERR_RANK", "Recv from rank size+3");
    rc = MPI_Irecv(buf, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &r);
    check_class(rc, MPI_ERR_RANK, "MPI_ERR_RANK", "Irecv from rank == size");

    rc = MPI_Send(buf, 1, MPI_INT, right, -7, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_TAG, "MPI_ERR_TAG", "Send with tag -7");
    rc = MPI_Isend(buf, 1, MPI_INT, right, -7, MPI_COMM_WORLD, &r);
    check_class(rc, MPI_ERR_TAG, "MPI_ERR_TAG", "Isend with tag -7");
    rc = MPI_Recv(buf, 1, MPI_INT, left, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_class(rc, MPI_ERR_TAG, "MPI_ERR_TAG", "Recv with tag -7");
    int *tag_ub = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    if (flag && tag_ub && *tag_ub < 2147483647) {
        rc = MPI_Send(buf, 1, MPI_INT, right, *tag_ub + 1, MPI_COMM_WORLD);
        check_class(rc, MPI_ERR_TAG, "MPI_ERR_TAG", "Send with tag MPI_TAG_UB+1");
    }

    rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_TYPE, "MPI_ERR_TYPE", "Send of MPI_DATATYPE_NULL");
    rc = MPI_Recv(buf, 1, MPI_DATATYPE_NULL, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check_class(rc, MPI_ERR_TYPE, "MPI_ERR_TYPE", "Recv of MPI_DATATYPE_NULL");

    rc = MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_COUNT, "MPI_ERR_COUNT", "Send with count -1");

    /* Errors on MPI_COMM_NULL go to MPI_COMM_WORLD's handler. */
    rc = MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    check_class(rc, MPI_ERR_COMM, "MPI_ERR_COMM", "Send on MPI_COMM_NULL");
    rc = MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_STATUS_IGNORE);
    check_class(rc, MPI_ERR_COMM, "MPI_ERR_COMM", "Recv on MPI_COMM_NULL");
    int size = -1;
    rc = MPI_Comm_size(MPI_COMM_NULL, &size);
    check_class(rc, MPI_ERR_COMM, "MPI_ERR_COMM", "Comm_size of MPI_COMM_NULL");
    rc = MPI_Barrier(MPI_COMM_NULL);
    check_class(rc, MPI_ERR_COMM, "MPI_ERR_COMM", "Barrier on MPI_COMM_NULL");

    still_works(900, "the invalid-argument calls");
}

static void error_strings(void)
{
    /* Only the named classes: MPI_ERR_LASTCODE is a bound on codes, which
     * some implementations set far above the last class. */
    static const int classes[] = {MPI_SUCCESS,      MPI_ERR_BUFFER,   MPI_ERR_COUNT,     MPI_ERR_TYPE,
                                  MPI_ERR_TAG,      MPI_ERR_COMM,     MPI_ERR_RANK,      MPI_ERR_REQUEST,
                                  MPI_ERR_ROOT,     MPI_ERR_GROUP,    MPI_ERR_OP,        MPI_ERR_TOPOLOGY,
                                  MPI_ERR_DIMS,     MPI_ERR_ARG,      MPI_ERR_UNKNOWN,   MPI_ERR_TRUNCATE,
                                  MPI_ERR_OTHER,    MPI_ERR_INTERN,   MPI_ERR_IN_STATUS, MPI_ERR_PENDING,
                                  MPI_ERR_NO_MEM,   MPI_ERR_WIN,      MPI_ERR_BASE,      MPI_ERR_SIZE,
                                  MPI_ERR_DISP,     MPI_ERR_LOCKTYPE, MPI_ERR_ASSERT,    MPI_ERR_RMA_CONFLICT,
                                  MPI_ERR_RMA_SYNC, MPI_ERR_INFO};
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        int c = classes[i];
        CHECK(err_class(c) == c, "Error_class of class %d is %d, expected itself", c, err_class(c));
        CHECK(c == MPI_SUCCESS || c <= MPI_ERR_LASTCODE, "class %d is above MPI_ERR_LASTCODE %d", c, MPI_ERR_LASTCODE);
        char str[MPI_MAX_ERROR_STRING];
        int len = -1;
        str[0] = '\0';
        MPI_OK(MPI_Error_string(c, str, &len));
        CHECK(len > 0 && (size_t)len == strlen(str), "Error_string(%d): length %d, strlen %zu", c, len, strlen(str));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    truncation(64, 10);       /* eager */
    truncation(1 << 20, 20);  /* rendezvous on most transports */
    bad_arguments();
    error_strings();
    return mtest_finish();
}
