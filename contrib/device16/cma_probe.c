// SPDX-License-Identifier: BSD-3-Clause
// cma_probe: the least time of 50 process_vm_readv calls on this process at
// 64 B, 4 KiB and 32 KiB, beside memcpy of the same bytes: the fixed cost
// btl/scif times at start-up (btl_scif_single_copy_call_us) and what the
// copy adds.
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    static char from[32768] __attribute__((aligned(64))), to[32768] __attribute__((aligned(64)));
    const size_t sizes[] = {64, 4096, 32768};
    memset(from, 1, sizeof from);
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const size_t n = sizes[k];
        double best_cma = 1e18, best_copy = 1e18;
        for (int i = 0; i < 50; ++i) {
            struct iovec local = {to, n}, remote = {from, n};
            double t0 = now_ns();
            const ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
            double t1 = now_ns();
            if (got != (ssize_t)n) {
                perror("process_vm_readv");
                return 1;
            }
            if (t1 - t0 < best_cma)
                best_cma = t1 - t0;
            t0 = now_ns();
            memcpy(to, from, n);
            __asm__ volatile("" ::"r"(to) : "memory");   // keep the copy
            t1 = now_ns();
            if (t1 - t0 < best_copy)
                best_copy = t1 - t0;
        }
        printf("n=%zu cma_min=%.0f ns memcpy_min=%.0f ns\n", n, best_cma, best_copy);
    }
    return 0;
}
