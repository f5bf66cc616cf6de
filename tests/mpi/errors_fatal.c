/* SPDX-License-Identifier: BSD-3-Clause */
/* errors_fatal: under the default MPI_ERRORS_ARE_FATAL, rank 0 sends to
 * rank == size. The whole job must end with a non-zero exit status; the
 * other ranks sit in a receive that nothing will match, so a launcher that
 * only loses rank 0 hangs (the runner's timeout turns that into a failure).
 * This program never prints "No Errors": if the send returns, it says so and
 * exits 0, which the runner counts as a failure. Any number of ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, buf = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("errors_fatal: rank 0 sends to rank %d (== size); the job must abort\n", size);
        fflush(stdout);
        int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        printf("ERROR: MPI_Send to rank == size returned %d under MPI_ERRORS_ARE_FATAL\n", rc);
        fflush(stdout);
        /* Let the others go, so that the job ends (with status 0: a failure). */
        for (int r = 1; r < size; r++)
            MPI_Send(&buf, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&buf, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
