/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi_startup: MPI_Init, one barrier, MPI_Finalize; the peers' side of the
 * start-up benchmark (built by startup.sh with each implementation's mpicc). */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
