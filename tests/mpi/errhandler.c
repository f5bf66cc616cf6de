/* SPDX-License-Identifier: BSD-3-Clause */
/* errhandler: Comm_set/get_errhandler, a user handler (Comm_create_errhandler)
 * that records the code it is called with, Comm_call_errhandler, handlers
 * inherited by Comm_dup and Comm_split, a handler on a dup leaving the
 * original's alone, and window handlers (Win_create_errhandler,
 * Win_call_errhandler, MPI_ERR_WIN on MPI_WIN_NULL). Any number of ranks. */
#include "mtest.h"

static int calls = 0, last_code = -1;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void recorder(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

static int win_calls = 0, win_last_code = -1;
static MPI_Win win_last = MPI_WIN_NULL;

static void win_recorder(MPI_Win *win, int *code, ...)
{
    win_calls++;
    win_last_code = *code;
    win_last = *win;
}

static int err_class(int code)
{
    int c = -1;
    MPI_Error_class(code, &c);
    return c;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;

    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "world's initial handler is not MPI_ERRORS_ARE_FATAL");

    /* ERRORS_RETURN on a dup; the original keeps its handler. */
    MPI_Comm d1;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d1));
    MPI_OK(MPI_Comm_get_errhandler(d1, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a dup of world did not inherit MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Comm_set_errhandler(d1, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(d1, &got));
    CHECK(got == MPI_ERRORS_RETURN, "Comm_get_errhandler after set(MPI_ERRORS_RETURN) differs");
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "setting a handler on a dup changed world's");
    int buf = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, mtest_size, 0, d1);
    CHECK(rc != MPI_SUCCESS && err_class(rc) == MPI_ERR_RANK, "send to rank size on the ERRORS_RETURN dup: rc %d "
          "class %d, expected class MPI_ERR_RANK", rc, err_class(rc));
    /* With ERRORS_RETURN, calling the handler returns (does not abort). */
    rc = MPI_Comm_call_errhandler(d1, MPI_ERR_OTHER);
    (void)rc; /* what it returns under ERRORS_RETURN differs between implementations */

    /* A user handler. */
    MPI_OK(MPI_Comm_create_errhandler(recorder, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "Comm_create_errhandler gave MPI_ERRHANDLER_NULL");
    MPI_Comm d2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
    MPI_OK(MPI_Comm_set_errhandler(d2, eh));
    MPI_OK(MPI_Comm_get_errhandler(d2, &got));
    CHECK(got == eh, "Comm_get_errhandler does not give back the user handler");
    rc = MPI_Comm_call_errhandler(d2, MPI_ERR_OTHER);
    CHECK(rc == MPI_SUCCESS, "Comm_call_errhandler with a user handler returned %d, expected MPI_SUCCESS", rc);
    CHECK(calls == 1 && last_code == MPI_ERR_OTHER, "user handler: %d calls, last code %d, expected 1 call with %d",
          calls, last_code, MPI_ERR_OTHER);
    int cmp = -1;
    if (last_comm != MPI_COMM_NULL)
        MPI_Comm_compare(last_comm, d2, &cmp);
    CHECK(cmp == MPI_IDENT, "the user handler was called with another communicator");

    /* A real error goes to the user handler with its class. */
    calls = 0;
    last_code = -1;
    rc = MPI_Send(&buf, 1, MPI_INT, mtest_size, 0, d2);
    CHECK(calls == 1, "an invalid rank on a user-handled communicator: handler called %d times, expected 1", calls);
    CHECK(calls == 0 || err_class(last_code) == MPI_ERR_RANK, "the user handler got code %d (class %d), expected "
          "class MPI_ERR_RANK", last_code, err_class(last_code));
    calls = 0;
    rc = MPI_Send(&buf, 1, MPI_INT, 0, -5, d2);
    CHECK(calls == 1 && err_class(last_code) == MPI_ERR_TAG, "invalid tag: %d calls, class %d, expected 1 call, "
          "MPI_ERR_TAG", calls, err_class(last_code));

    /* Inheritance: dup and split of d2 carry the user handler. */
    MPI_Comm d3, s3;
    MPI_OK(MPI_Comm_dup(d2, &d3));
    MPI_OK(MPI_Comm_get_errhandler(d3, &got));
    CHECK(got == eh, "Comm_dup did not copy the user handler");
    MPI_OK(MPI_Comm_split(d2, mtest_rank % 2, 0, &s3));
    MPI_OK(MPI_Comm_get_errhandler(s3, &got));
    CHECK(got == eh, "Comm_split did not inherit the user handler");
    calls = 0;
    MPI_Comm_call_errhandler(s3, MPI_ERR_ARG);
    CHECK(calls == 1 && last_code == MPI_ERR_ARG, "handler on a split: %d calls code %d", calls, last_code);

    /* Freeing the handler object does not detach it. */
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not set the handle to MPI_ERRHANDLER_NULL");
    calls = 0;
    MPI_Comm_call_errhandler(d3, MPI_ERR_COUNT);
    CHECK(calls == 1 && last_code == MPI_ERR_COUNT, "after Errhandler_free: %d calls code %d, expected 1 and %d",
          calls, last_code, MPI_ERR_COUNT);

    /* Replacing it with ERRORS_RETURN stops the calls. */
    MPI_OK(MPI_Comm_set_errhandler(d2, MPI_ERRORS_RETURN));
    calls = 0;
    rc = MPI_Send(&buf, 1, MPI_INT, mtest_size, 0, d2);
    CHECK(calls == 0 && rc != MPI_SUCCESS, "after switching to ERRORS_RETURN: %d calls, rc %d", calls, rc);

    /* Windows: ERRORS_ARE_FATAL by default, settable. */
    int mem[4];
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a new window's handler is not MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_RETURN, "Win_get_errhandler after set differs");
    CHECK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER) == MPI_SUCCESS,
          "Win_call_errhandler under MPI_ERRORS_RETURN did not return MPI_SUCCESS");
    MPI_Errhandler weh = MPI_ERRHANDLER_NULL;
    MPI_OK(MPI_Win_create_errhandler(win_recorder, &weh));
    MPI_OK(MPI_Win_set_errhandler(win, weh));
    CHECK(MPI_Win_call_errhandler(win, MPI_ERR_RMA_SYNC) == MPI_SUCCESS, "Win_call_errhandler did not succeed");
    CHECK(win_calls == 1 && win_last_code == MPI_ERR_RMA_SYNC && win_last == win,
          "the window's handler saw %d calls, code %d, window %d; expected 1, %d, %d", win_calls, win_last_code,
          win_last, MPI_ERR_RMA_SYNC, win);
    MPI_OK(MPI_Errhandler_free(&weh));
    MPI_OK(MPI_Win_free(&win));
    /* A null window or communicator: the class names the kind of handle
     * (raised on MPI_COMM_WORLD's handler, MPI_ERRORS_RETURN meanwhile). */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(err_class(MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER)) == MPI_ERR_WIN,
          "Win_call_errhandler(MPI_WIN_NULL) is not MPI_ERR_WIN");
    CHECK(err_class(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER)) == MPI_ERR_COMM,
          "Comm_call_errhandler(MPI_COMM_NULL) is not MPI_ERR_COMM");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    MPI_OK(MPI_Comm_free(&s3));
    MPI_OK(MPI_Comm_free(&d3));
    MPI_OK(MPI_Comm_free(&d2));
    MPI_OK(MPI_Comm_free(&d1));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "world's handler changed during the test");
    return mtest_finish();
}
