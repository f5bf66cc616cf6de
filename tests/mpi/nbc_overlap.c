/* SPDX-License-Identifier: BSD-3-Clause */
/* nbc_overlap: how much of a nonblocking collective hides behind
 * computation, measured as OSU's osu_iallreduce / osu_ialltoall do:
 *   pure    = time of MPI_I<x> + MPI_Wait (median over the iterations)
 *   overall = time of MPI_I<x> + compute(pure) + MPI_Wait (median)
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

/* Busy for `seconds` without progressing MPI (MPI_Wtime only reads the
 * clock), as OSU's compute phase. */
static void compute(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        for (int i = 0; i < 50; i++)
            sink += (double)i * 0.5;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Medians, not means: on a shared host a descheduled iteration is noise. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
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
    double *t_pure = malloc(sizeof(double) * (size_t)iters), *t_all = malloc(sizeof(double) * (size_t)iters),
           *t_comp = malloc(sizeof(double) * (size_t)iters);
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
            for (int i = 0; i < iters; i++) {
                double t0 = MPI_Wtime();
                start(which, s, r, n, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                t_pure[i] = MPI_Wtime() - t0;
            }
            double pure = median(t_pure, iters), max_pure;
            MPI_Allreduce(&pure, &max_pure, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int i = 0; i < iters; i++) {
                double t0 = MPI_Wtime();
                start(which, s, r, n, &req);
                double c0 = MPI_Wtime();
                compute(max_pure);
                t_comp[i] = MPI_Wtime() - c0;
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                t_all[i] = MPI_Wtime() - t0;
            }
            double overall = median(t_all, iters), tc = median(t_comp, iters);
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
    free(s), free(r), free(t_pure), free(t_all), free(t_comp);
    MPI_Finalize();
    return 0;
}
