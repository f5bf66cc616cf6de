/* SPDX-License-Identifier: BSD-3-Clause */
/* Built by `make installcheck` with the installed weftcc and run as a
 * singleton: the installed wrapper, header and libraries work together. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int size = 0, sum = 0, one = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("installed MPI: size %d sum %d\n", size, sum);
    MPI_Finalize();
    return size == 1 && sum == 1 ? 0 : 1;
}
