/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_nb: nonblocking (MPI_I*) and persistent (MPI_*_init + MPI_Start)
 * collectives against references computed here:
 *  - every nonblocking collective, completed by MPI_Wait, by MPI_Test
 *    loops and by MPI_Waitall of several outstanding at once (waited in
 *    reverse order, with blocking collectives between start and wait);
 *  - MPI_IN_PLACE forms, a non-contiguous receive type (Iallgatherv), a
 *    non-commutative user operation (Iallreduce, Ireduce, Iscan);
 *  - a late rank: the others start an Iallreduce and find it incomplete
 *    until rank 0, told last, joins;
 *  - persistent collectives started three times with new data (MPI_Start
 *    and MPI_Startall), MPI_Wait on an inactive one, MPI_Start of an active
 *    one (MPI_ERR_REQUEST), MPI_Request_free;
 *  - kept schedules (a communicator's cache): new data each call, identical
 *    calls outstanding together, a datatype handle reused, a new
 *    communicator with another rank order.
 * Any number of ranks. Waits are bounded (a hang fails the test). */
#include "mtest.h"

#define LIMIT_S 60.0

static int rank, size;

/* MPI_Test until done; 0 if it did not complete within LIMIT_S. */
static int test_until_done(MPI_Request *req)
{
    double t0 = MPI_Wtime();
    int flag = 0;
    while (!flag) {
        MPI_OK(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        if (!flag && MPI_Wtime() - t0 > LIMIT_S)
            return 0;
    }
    return 1;
}

typedef struct {
    long long a, b, c, d;
} mat;
#define PRIME 1000003LL
static mat mat_mul(mat x, mat y)
{
    mat r = {(x.a * y.a + x.b * y.c) % PRIME, (x.a * y.b + x.b * y.d) % PRIME, (x.c * y.a + x.d * y.c) % PRIME,
             (x.c * y.b + x.d * y.d) % PRIME};
    return r;
}
static mat mat_of(int r)
{
    mat m = {r + 2, 1, r, 1};
    return m;
}
static mat mat_range(int lo, int hi)
{
    mat acc = {1, 0, 0, 1};
    for (int r = lo; r < hi; r++)
        acc = mat_mul(acc, mat_of(r));
    return acc;
}
static int mat_eq(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((mat *)inout)[i] = mat_mul(((mat *)in)[i], ((mat *)inout)[i]);
}

static void test_each(void)
{
    const int n = 4;
    int *sbuf = malloc(sizeof(int) * (size_t)(n * size)), *rbuf = malloc(sizeof(int) * (size_t)(n * size));
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    MPI_Request req;
    for (int r = 0; r < size; r++) {
        counts[r] = n;
        displs[r] = r * n;
    }

    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    CHECK(test_until_done(&req), "Ibarrier did not complete under MPI_Test");

    for (int root = 0; root < size; root += size > 1 ? size - 1 : 1) {
        for (int i = 0; i < n; i++)
            rbuf[i] = rank == root ? 7 * i + root : -1;
        MPI_OK(MPI_Ibcast(rbuf, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(rbuf[i] == 7 * i + root, "Ibcast(root %d)[%d] = %d", root, i, rbuf[i]);

        for (int i = 0; i < n; i++)
            sbuf[i] = rank + i;
        MPI_OK(MPI_Ireduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req));
        CHECK(test_until_done(&req), "Ireduce did not complete under MPI_Test");
        if (rank == root)
            for (int i = 0; i < n; i++)
                CHECK(rbuf[i] == size * (size - 1) / 2 + size * i, "Ireduce(root %d)[%d] = %d", root, i, rbuf[i]);

        for (int i = 0; i < n; i++)
            sbuf[i] = rank * 10 + i;
        MPI_OK(MPI_Igather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == root)
            for (int i = 0; i < n * size; i++)
                CHECK(rbuf[i] == (i / n) * 10 + i % n, "Igather(root %d)[%d] = %d", root, i, rbuf[i]);
        MPI_OK(MPI_Igatherv(sbuf, n, MPI_INT, rbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank == root)
            for (int i = 0; i < n * size; i++)
                CHECK(rbuf[i] == (i / n) * 10 + i % n, "Igatherv(root %d)[%d] = %d", root, i, rbuf[i]);

        for (int i = 0; i < n * size; i++)
            sbuf[i] = root * 100 + i;
        MPI_OK(MPI_Iscatter(sbuf, n, MPI_INT, rbuf, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(rbuf[i] == root * 100 + rank * n + i, "Iscatter(root %d)[%d] = %d", root, i, rbuf[i]);
        MPI_OK(MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rank == root ? MPI_IN_PLACE : rbuf, n, MPI_INT, root,
                             MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (rank != root)
            for (int i = 0; i < n; i++)
                CHECK(rbuf[i] == root * 100 + rank * n + i, "Iscatterv(root %d)[%d] = %d", root, i, rbuf[i]);
    }

    for (int i = 0; i < n; i++)
        sbuf[i] = rank * 10 + i;
    MPI_OK(MPI_Iallgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n * size; i++)
        CHECK(rbuf[i] == (i / n) * 10 + i % n, "Iallgather[%d] = %d", i, rbuf[i]);
    for (int i = 0; i < n * size; i++)
        rbuf[i] = i / n == rank ? rank * 10 + i % n : -1;
    MPI_OK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n * size; i++)
        CHECK(rbuf[i] == (i / n) * 10 + i % n, "Iallgatherv(MPI_IN_PLACE)[%d] = %d", i, rbuf[i]);

    for (int i = 0; i < n * size; i++)
        sbuf[i] = rank * 1000 + i;
    MPI_OK(MPI_Ialltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n * size; i++)
        CHECK(rbuf[i] == (i / n) * 1000 + rank * n + i % n, "Ialltoall[%d] = %d", i, rbuf[i]);
    MPI_OK(MPI_Ialltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD, &req));
    CHECK(test_until_done(&req), "Ialltoallv did not complete under MPI_Test");
    for (int i = 0; i < n * size; i++)
        CHECK(rbuf[i] == (i / n) * 1000 + rank * n + i % n, "Ialltoallv[%d] = %d", i, rbuf[i]);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
    int *bdispls = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        types[r] = MPI_INT;
        bdispls[r] = displs[r] * (int)sizeof(int);
    }
    MPI_OK(MPI_Ialltoallw(sbuf, counts, bdispls, types, rbuf, counts, bdispls, types, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n * size; i++)
        CHECK(rbuf[i] == (i / n) * 1000 + rank * n + i % n, "Ialltoallw[%d] = %d", i, rbuf[i]);

    for (int i = 0; i < n; i++)
        sbuf[i] = rank + i;
    MPI_OK(MPI_Iallreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(rbuf[i] == size * (size - 1) / 2 + size * i, "Iallreduce[%d] = %d", i, rbuf[i]);
    MPI_OK(MPI_Iscan(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(rbuf[i] == rank * (rank + 1) / 2 + (rank + 1) * i, "Iscan[%d] = %d", i, rbuf[i]);
    MPI_OK(MPI_Iexscan(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank > 0)
        for (int i = 0; i < n; i++)
            CHECK(rbuf[i] == rank * (rank - 1) / 2 + rank * i, "Iexscan[%d] = %d", i, rbuf[i]);

    for (int i = 0; i < n * size; i++)
        sbuf[i] = rank + i;
    MPI_OK(MPI_Ireduce_scatter_block(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(rbuf[i] == size * (size - 1) / 2 + size * (rank * n + i), "Ireduce_scatter_block[%d] = %d", i, rbuf[i]);
    MPI_OK(MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(rbuf[i] == size * (size - 1) / 2 + size * (rank * n + i), "Ireduce_scatter[%d] = %d", i, rbuf[i]);

    free(types), free(bdispls), free(sbuf), free(rbuf), free(counts), free(displs);
}

/* Several at once, waited in reverse, with blocking collectives between. */
static void test_outstanding(void)
{
    int a = rank, asum = -1, b = rank == 0 ? 99 : -1, c[2] = {rank, -rank}, cmax[2] = {0, 0};
    MPI_Request reqs[4];
    MPI_OK(MPI_Iallreduce(&a, &asum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Ibcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[2]));
    MPI_OK(MPI_Iallreduce(c, cmax, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &reqs[3]));
    int x = rank + 1, xs = 0;
    MPI_OK(MPI_Allreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(xs == size * (size + 1) / 2, "Allreduce between nonblocking ones = %d", xs);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 3; i >= 0; i--)
        MPI_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
    CHECK(asum == size * (size - 1) / 2, "Iallreduce (outstanding with others) = %d", asum);
    CHECK(b == 99, "Ibcast (outstanding with others) = %d", b);
    CHECK(cmax[0] == size - 1 && cmax[1] == 0, "Iallreduce(MAX) (outstanding) = {%d, %d}", cmax[0], cmax[1]);

    /* Waitall and Waitany on a mix. */
    MPI_OK(MPI_Iallreduce(&a, &asum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[1]));
    int idx = -1;
    MPI_OK(MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
    MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Waitall left requests");
}

/* The others start first and see the collective incomplete until rank 0,
 * told once all of them are done testing, joins. */
static void test_late_rank(void)
{
    if (size < 2)
        return;
    int v = rank + 1, sum = 0, go = 1;
    MPI_Request req;
    if (rank != 0) {
        MPI_OK(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        int flag = 0;
        for (int i = 0; i < 100; i++) {
            MPI_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "Iallreduce completed before rank 0 joined");
            if (flag)
                break;
        }
        MPI_OK(MPI_Send(&go, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));   /* done testing */
        if (!flag)
            CHECK(test_until_done(&req), "Iallreduce did not complete after rank 0 joined");
    } else {
        for (int r = 1; r < size; r++)   /* joins once every other rank has tested */
            MPI_OK(MPI_Recv(&go, 1, MPI_INT, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    CHECK(sum == size * (size + 1) / 2, "late-rank Iallreduce = %d", sum);
}

/* Start, compute (no MPI calls), then wait. */
static void test_compute_between(void)
{
    double in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = rank + i;
    MPI_Request req;
    MPI_OK(MPI_Iallreduce(in, out, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req));
    volatile double x = 0;
    for (int i = 0; i < 200000; i++)
        x += i * 0.5;
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 64; i++)
        CHECK(out[i] == size * (size - 1) / 2.0 + size * i, "Iallreduce after computing [%d] = %g", i, out[i]);
}

static void test_noncommutative(void)
{
    MPI_Datatype mt;
    MPI_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mt));
    MPI_OK(MPI_Type_commit(&mt));
    MPI_Op op;
    MPI_OK(MPI_Op_create(mat_op, 0, &op));
    mat in = mat_of(rank), all, pre, red = {0, 0, 0, 0};
    MPI_Request reqs[3];
    MPI_OK(MPI_Iallreduce(&in, &all, 1, mt, op, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Iscan(&in, &pre, 1, mt, op, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Ireduce(&in, &red, 1, mt, op, size - 1, MPI_COMM_WORLD, &reqs[2]));
    /* Free the operation and the type before completion: MPI lets them go. */
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&mt));
    MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    CHECK(mat_eq(all, mat_range(0, size)), "Iallreduce(non-commutative): not M_0 * ... * M_%d", size - 1);
    CHECK(mat_eq(pre, mat_range(0, rank + 1)), "Iscan(non-commutative): not M_0 * ... * M_%d", rank);
    if (rank == size - 1)
        CHECK(mat_eq(red, mat_range(0, size)), "Ireduce(non-commutative, root %d) wrong", size - 1);
}

/* Iallgatherv into a receive type with holes: every other int. */
static void test_noncontiguous(void)
{
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    int mine[2] = {rank * 10, rank * 10 + 1};
    int *all = malloc(sizeof(int) * (size_t)(4 * size)), *counts = malloc(sizeof(int) * (size_t)size),
        *displs = malloc(sizeof(int) * (size_t)size);
    /* Block r at int 4r: the vector's extent (3 ints) resized to 4. */
    MPI_Datatype spaced;
    MPI_OK(MPI_Type_create_resized(every_other, 0, 4 * (MPI_Aint)sizeof(int), &spaced));
    MPI_OK(MPI_Type_commit(&spaced));
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = r;
    }
    for (int i = 0; i < 4 * size; i++)
        all[i] = -1;
    MPI_Request req;
    MPI_OK(MPI_Iallgatherv(mine, 2, MPI_INT, all, counts, displs, spaced, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int r = 0; r < size; r++) {
        CHECK(all[4 * r] == r * 10 && all[4 * r + 2] == r * 10 + 1, "Iallgatherv(vector) block %d = {%d, %d}", r,
              all[4 * r], all[4 * r + 2]);
        CHECK(all[4 * r + 1] == -1 && all[4 * r + 3] == -1, "Iallgatherv(vector) wrote a hole of block %d", r);
    }
    MPI_OK(MPI_Type_free(&spaced));
    MPI_OK(MPI_Type_free(&every_other));
    free(all), free(counts), free(displs);
}

static void test_persistent(void)
{
    int v = 0, sum = 0, b = 0, g[64], gathered[64 * 4 + 64], sc = 0, all[64];
    MPI_Request reqs[5];
    MPI_OK(MPI_Allreduce_init(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]));
    MPI_OK(MPI_Bcast_init(&b, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
    MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[2]));
    MPI_OK(MPI_Gather_init(&v, 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[3]));
    MPI_OK(MPI_Alltoall_init(g, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[4]));
    /* Inactive: a wait returns at once. */
    MPI_Status st;
    MPI_OK(MPI_Wait(&reqs[0], &st));
    CHECK(reqs[0] != MPI_REQUEST_NULL, "MPI_Wait on an inactive persistent request freed it");
    for (int round = 0; round < 3; round++) {
        v = rank * 10 + round;
        b = rank == size - 1 ? 500 + round : -1;
        for (int r = 0; r < size; r++)
            g[r] = rank * 100 + r + round;
        if (round == 1) {
            for (int i = 0; i < 5; i++)
                MPI_OK(MPI_Start(&reqs[i]));
        } else {
            MPI_OK(MPI_Startall(5, reqs));
        }
        if (round == 2) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            int rc = MPI_Start(&reqs[0]), cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active request gave class %d, expected MPI_ERR_REQUEST",
                  cls);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            for (int i = 4; i >= 0; i--)
                CHECK(test_until_done(&reqs[i]), "persistent request %d did not complete under MPI_Test", i);
        } else {
            MPI_OK(MPI_Waitall(5, reqs, MPI_STATUSES_IGNORE));
        }
        for (int i = 0; i < 5; i++)
            CHECK(reqs[i] != MPI_REQUEST_NULL, "completing persistent request %d freed it", i);
        CHECK(sum == 10 * size * (size - 1) / 2 + size * round, "round %d: Allreduce_init = %d", round, sum);
        CHECK(b == 500 + round, "round %d: Bcast_init = %d", round, b);
        if (rank == 0)
            for (int r = 0; r < size; r++)
                CHECK(gathered[r] == r * 10 + round, "round %d: Gather_init[%d] = %d", round, r, gathered[r]);
        for (int r = 0; r < size; r++)
            CHECK(all[r] == r * 100 + rank + round, "round %d: Alltoall_init[%d] = %d", round, r, all[r]);
        sc++;
    }
    int idx = 0;
    MPI_OK(MPI_Waitany(5, reqs, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED, "MPI_Waitany over inactive persistent requests gave index %d", idx);
    for (int i = 0; i < 5; i++) {
        MPI_OK(MPI_Request_free(&reqs[i]));
        CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free left request %d", i);
    }
    CHECK(sc == 3, "%d rounds", sc);
}

/* A communicator keeps the schedules of its nonblocking collectives for the
 * next call with the same arguments: repeated calls see each call's data,
 * identical calls outstanding at once each run their own, a derived
 * datatype freed and made again under the same handle is the new one, and
 * a new communicator (perhaps under a freed one's handle, with other rank
 * order) has its own. */
static void test_kept_schedules(void)
{
    for (int round = 0; round < 4; round++) {   /* same buffers, new data */
        int v[3] = {rank + round, round, -rank}, sum[3] = {0, 0, 0};
        MPI_Request req;
        MPI_OK(MPI_Iallreduce(v, sum, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(sum[0] == size * (size - 1) / 2 + size * round && sum[1] == size * round &&
                  sum[2] == -size * (size - 1) / 2,
              "round %d: Iallreduce = {%d, %d, %d}", round, sum[0], sum[1], sum[2]);
        int a2a_in[64], a2a_out[64];
        for (int r = 0; r < size && r < 64; r++)
            a2a_in[r] = 1000 * rank + r + round;
        MPI_OK(MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; r < size && r < 64; r++)
            CHECK(a2a_out[r] == 1000 * r + rank + round, "round %d: Ialltoall from %d = %d", round, r, a2a_out[r]);
    }
    for (int round = 0; round < 3; round++) {   /* identical calls outstanding at once */
        MPI_Request reqs[3];
        for (int i = 0; i < 3; i++)
            MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[i]));
        MPI_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
        int b[2] = {rank == 0 ? 7 + round : -1, rank == 0 ? 8 + round : -1};
        MPI_OK(MPI_Ibcast(&b[0], 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Ibcast(&b[1], 1, MPI_INT, 0, MPI_COMM_WORLD, &reqs[1]));
        MPI_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        CHECK(b[0] == 7 + round && b[1] == 8 + round, "round %d: Ibcast pair = {%d, %d}", round, b[0], b[1]);
    }
    for (int round = 0; round < 2; round++) {   /* a derived type made again */
        MPI_Datatype t;
        MPI_OK(MPI_Type_vector(2, 1, round + 1, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        int buf[4] = {-1, -1, -1, -1};
        if (rank == 0)
            buf[0] = 10, buf[1] = 11, buf[2] = 12, buf[3] = 13;
        MPI_Request req;
        MPI_OK(MPI_Ibcast(buf, 1, t, 0, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        const int second = round == 0 ? 1 : 2;
        CHECK(buf[0] == 10 && buf[second] == 10 + second, "round %d: Ibcast of vector(2, 1, %d) = {%d, %d, %d, %d}",
              round, round + 1, buf[0], buf[1], buf[2], buf[3]);
        MPI_OK(MPI_Type_free(&t));
    }
    for (int round = 0; round < 2; round++) {   /* a new communicator, other rank order */
        MPI_Comm c;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, round == 0 ? rank : size - 1 - rank, &c));
        int me = -1, v = rank, prefix = -1;
        MPI_OK(MPI_Comm_rank(c, &me));
        MPI_Request req;
        MPI_OK(MPI_Iscan(&v, &prefix, 1, MPI_INT, MPI_SUM, c, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        int want = 0;   /* the world ranks of c's ranks 0..me */
        for (int r = 0; r <= me; r++)
            want += round == 0 ? r : size - 1 - r;
        CHECK(prefix == want, "round %d: Iscan on a split communicator = %d, expected %d", round, prefix, want);
        MPI_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    test_each();
    test_outstanding();
    test_late_rank();
    test_compute_between();
    test_noncommutative();
    test_noncontiguous();
    test_persistent();
    test_kept_schedules();
    return mtest_finish();
}
