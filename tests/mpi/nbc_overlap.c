/* nbc_overlap: how much of a nonblocking collective hides behind
 * computation, measured as OSU's osu_iallreduce / osu_ialltoall do:
 *   pure    = time of MPI_I<x> + MPI_Wait
 *   overall = time of MPI_I<x> + compute(pure) + MPI_Wait
 *   overlap = 100 * (1 - (overall - compute) / pure), clamped to [0, 100]
 * The computation makes no MPI call (what a program without progress
 * calls sees). Plain MPI: builds with weftcc or another MPI's mpicc.
 *
 *   nbc_overlap [iterations]      (default 200; sizes 8 B .. 64 KiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* Busy for about `seconds`, without MPI calls (the clock is read through
 * MPI_Wtime only to calibrate, once per size). */
static long spins_for(double seconds)
{
    long n = 1000;
    for (;;) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++)
            sink += (double)i * 0.5;
        double dt = MPI_Wtime() - t0;
        if (dt > 0.01 || n > (1L << 40))
            return (long)((double)n * seconds / dt);
        n *= 2;
    }
}

static void compute(long spins)
{
    for (long i = 0; i < spins; i++)
        sink += (double)i * 0.5;
}

enum { ALLREDUCE, ALLTOALL };

static void start(int which, double *s, double *r, int n, MPI_Request *req)
{
    if (which == ALLREDUCE)
        MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, req);
    else
        MPI_Ialltoall(s, n, MPI_DOUBLE, r, n, MPI_DOUBLE, MPI_COMM_WORLD, req);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    const int max_doubles = 8192;   /* 64 KiB per block */
    double *s = calloc((size_t)max_doubles * (size_t)size, sizeof(double));
    double *r = calloc((size_t)max_doubles * (size_t)size, sizeof(double));
    const char *names[] = {"Iallreduce", "Ialltoall"};
    if (rank == 0)
        printf("# %d ranks, %d iterations\n# %-10s %8s %10s %10s %10s %8s\n", size, iters, "op", "bytes", "pure_us",
               "overall_us", "compute_us", "overlap%");
    for (int which = ALLREDUCE; which <= ALLTOALL; which++)
        for (int n = 1; n <= max_doubles; n *= 8) {
            MPI_Request req;
            for (int i = 0; i < 10; i++) {   /* warm-up */
                start(which, s, r, n, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                start(which, s, r, n, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            double pure = (MPI_Wtime() - t0) / iters, max_pure;
            MPI_Allreduce(&pure, &max_pure, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            long spins = spins_for(max_pure);
            MPI_Barrier(MPI_COMM_WORLD);
            double tc = 0, overall;
            t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                start(which, s, r, n, &req);
                double c0 = MPI_Wtime();
                compute(spins);
                tc += MPI_Wtime() - c0;
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            overall = (MPI_Wtime() - t0) / iters;
            tc /= iters;
            double ov = 100.0 * (1.0 - (overall - tc) / max_pure), mean_ov;
            if (ov < 0)
                ov = 0;
            if (ov > 100)
                ov = 100;
            MPI_Reduce(&ov, &mean_ov, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            if (rank == 0)
                printf("  %-10s %8zu %10.2f %10.2f %10.2f %8.1f\n", names[which], (size_t)n * sizeof(double),
                       max_pure * 1e6, overall * 1e6, tc * 1e6, mean_ov / size);
        }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
