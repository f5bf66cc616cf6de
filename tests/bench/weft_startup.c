/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_startup: what the start-up benchmark times: weft_init, one barrier,
 * weft_finalize. mpi_startup.c is the same for MPI implementations. */
#include <stdio.h>

#include <weft.h>

int main(int argc, char **argv)
{
    int rc = weft_init(&argc, &argv);
    if (rc == WEFT_SUCCESS)
        rc = weft_barrier();
    if (rc != WEFT_SUCCESS) {
        fprintf(stderr, "weft_startup: %s\n", weft_error_message());
        return 1;
    }
    return weft_finalize() == WEFT_SUCCESS ? 0 : 1;
}
