/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_faults: an MPI program failing the ways real applications do, for
 * the launcher's tests (tests/runtime/jobs.sh).
 *
 *   mpi_faults exit-in-barrier   rank 0 exits 1 after MPI_Init while the
 *                                others wait in MPI_Barrier (whose failure
 *                                is fatal under MPI_ERRORS_ARE_FATAL)
 *   mpi_faults say-abort         rank 0 prints why it gives up (stdout left
 *                                as the runtime set it), then MPI_Abort(3)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(mode, "exit-in-barrier")) {
        if (rank == 0)
            exit(1);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(mode, "say-abort")) {
        if (rank == 0) {
            printf("mpi_faults: this program needs 3 ranks, not %d\n", size);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        fprintf(stderr, "mpi_faults: unknown mode '%s'\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
