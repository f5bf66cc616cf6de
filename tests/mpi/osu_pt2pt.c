/* SPDX-License-Identifier: BSD-3-Clause */
/* osu_pt2pt: point-to-point latency and bandwidth between two ranks, in the
 * manner of the OSU micro-benchmarks, using MPI calls of weft's subset only.
 *
 *   osu_pt2pt [--mode lat|bw|both] [SIZES]
 *
 * SIZES is a comma-separated list of byte counts (default
 * 0,1,8,64,1024,4096,65536,1048576,4194304). Rank 0 prints, per size:
 *   lat <bytes> <one-way microseconds>   ping-pong, half the round trip
 *   bw <bytes> <MB/s>                     windows of 64 Isends, then a 4-byte
 *                                         ack; MB = 10^6 bytes
 * Warm-up iterations come first; iterations shrink for large messages.
 * Exactly two ranks. */
#define _POSIX_C_SOURCE 200809L   /* posix_memalign */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define MAX_SIZES 64

/* The iteration counts of weft's own weft_bench, so that the two measure
 * over the same number of messages (MPI minus weft_bench is the MPI layer). */
static int lat_iters(size_t n) { return n <= 8192 ? 10000 : n <= 1048576 ? 1000 : 200; }
static int lat_warmup(size_t n) { return n <= 8192 ? 1000 : n <= 1048576 ? 100 : 20; }
static int bw_iters(size_t n) { return n <= 8192 ? 1000 : n <= 65536 ? 200 : n <= 1048576 ? 30 : 10; }
static int bw_warmup(size_t n) { return n <= 8192 ? 100 : n <= 65536 ? 20 : n <= 1048576 ? 3 : 2; }

static double latency(int rank, char *sbuf, char *rbuf, size_t n)
{
    int iters = lat_iters(n), warm = lat_warmup(n);
    double t0 = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            MPI_Send(sbuf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return t * 1e6 / (2.0 * iters);
}

static double bandwidth(int rank, char *sbuf, char *rbuf, size_t n)
{
    int iters = bw_iters(n), warm = bw_warmup(n);
    MPI_Request req[WINDOW];
    char ack[4] = {0, 0, 0, 0};
    double t0 = 0.0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < warm + iters; i++) {
        if (i == warm) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf, (int)n, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Recv(ack, 4, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            MPI_Send(ack, 4, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return (double)n * WINDOW * iters / t / 1e6;
}

static int parse_sizes(const char *s, size_t *out)
{
    int k = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && k < MAX_SIZES; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long long v = strtoull(tok, &end, 10);
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        if (*end != '\0' || v > (1ull << 30)) {
            free(copy);
            return -1;
        }
        out[k++] = (size_t)v;
    }
    free(copy);
    return k;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const char *mode = "both";
    size_t sizes[MAX_SIZES];
    int nsizes = parse_sizes("0,1,8,64,1024,4096,65536,1048576,4194304", sizes);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            mode = argv[++i];
        } else if (strncmp(argv[i], "--mode=", 7) == 0) {
            mode = argv[i] + 7;
        } else {
            nsizes = parse_sizes(argv[i], sizes);
            if (nsizes <= 0) {
                if (rank == 0)
                    fprintf(stderr, "osu_pt2pt: bad size list \"%s\"\n", argv[i]);
                MPI_Finalize();
                return 2;
            }
        }
    }
    int do_lat = strcmp(mode, "lat") == 0 || strcmp(mode, "both") == 0;
    int do_bw = strcmp(mode, "bw") == 0 || strcmp(mode, "both") == 0;
    if ((!do_lat && !do_bw) || size != 2) {
        if (rank == 0)
            fprintf(stderr, size != 2 ? "osu_pt2pt: needs exactly 2 ranks (got %d)\n"
                                      : "osu_pt2pt: --mode is lat, bw or both\n",
                    size);
        MPI_Finalize();
        return 2;
    }

    size_t maxn = 1;
    for (int k = 0; k < nsizes; k++)
        if (sizes[k] > maxn)
            maxn = sizes[k];
    /* Page-aligned, as the OSU benchmarks allocate theirs: where a buffer
     * starts changes memcpy's speed, and every implementation gets the same. */
    char *sbuf = NULL, *rbuf = NULL;
    if (posix_memalign((void **)&sbuf, 4096, maxn) != 0 || posix_memalign((void **)&rbuf, 4096, maxn) != 0) {
        fprintf(stderr, "osu_pt2pt: cannot allocate %zu bytes\n", maxn);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 'a', maxn);
    memset(rbuf, 0, maxn);

    if (do_lat)
        for (int k = 0; k < nsizes; k++) {
            double us = latency(rank, sbuf, rbuf, sizes[k]);
            if (rank == 0) {
                printf("lat %zu %.3f\n", sizes[k], us);
                fflush(stdout);
            }
        }
    if (do_bw)
        for (int k = 0; k < nsizes; k++) {
            double mbs = bandwidth(rank, sbuf, rbuf, sizes[k]);
            if (rank == 0) {
                printf("bw %zu %.2f\n", sizes[k], mbs);
                fflush(stdout);
            }
        }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
