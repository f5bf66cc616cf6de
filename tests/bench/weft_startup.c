/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_startup: what the start-up benchmark times: weft_init, one barrier,
 * weft_finalize. mpi_startup.c is the same for MPI implementations.
 *
 *   weft_startup         init, barrier, finalize
 *   weft_startup idle    init, barrier, then prints "ready RANK pid PID" and
 *                        waits for a signal (scale.sh reads the idle
 *                        ranks' memory and descriptors) */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    if (argc > 1 && !strcmp(argv[1], "idle")) {
        printf("ready %d pid %ld\n", weft_rank(), (long)getpid());
        fflush(stdout);
        for (;;)
            pause();
    }
    return weft_finalize() == WEFT_SUCCESS ? 0 : 1;
}
