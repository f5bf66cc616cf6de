/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_startup: MPI_Init, one barrier, MPI_Finalize; the peers' side of the
 * start-up benchmark (built by startup.sh and scale.sh with each
 * implementation's mpicc). With "idle" it prints "ready RANK pid PID" after
 * the barrier and waits for a signal, as weft_startup idle does. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && !strcmp(argv[1], "idle")) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        printf("ready %d pid %ld\n", rank, (long)getpid());
        fflush(stdout);
        for (;;)
            pause();
    }
    MPI_Finalize();
    return 0;
}
