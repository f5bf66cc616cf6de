/* SPDX-License-Identifier: BSD-3-Clause */
/* hwloc_spy: an LD_PRELOAD library for the launcher tests. It stands
 * between a process and libhwloc's hwloc_topology_load and appends one line
 * per topology load to the file named by WEFT_HWLOC_SPY:
 *
 *   load pid PID comm NAME pci FILTER osdev FILTER
 *
 * with the I/O type filters the topology was loaded with (none, all,
 * structure, important). A process that asks hwloc for no I/O objects
 * shows "pci none osdev none" on every line; I/O discovery (PCI, GPUs
 * through CUDA/NVML/OpenCL) costs hundreds of milliseconds on hosts that
 * have them, so weftrun must not ask for it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <hwloc.h>

static const char *filter_name(enum hwloc_type_filter_e f)
{
    switch (f) {
    case HWLOC_TYPE_FILTER_KEEP_ALL: return "all";
    case HWLOC_TYPE_FILTER_KEEP_NONE: return "none";
    case HWLOC_TYPE_FILTER_KEEP_STRUCTURE: return "structure";
    case HWLOC_TYPE_FILTER_KEEP_IMPORTANT: return "important";
    }
    return "unknown";
}

int hwloc_topology_load(hwloc_topology_t topology)
{
    int (*real)(hwloc_topology_t) = (int (*)(hwloc_topology_t))dlsym(RTLD_NEXT, "hwloc_topology_load");
    const char *path = getenv("WEFT_HWLOC_SPY");
    if (path && *path) {
        enum hwloc_type_filter_e pci = HWLOC_TYPE_FILTER_KEEP_ALL, osdev = HWLOC_TYPE_FILTER_KEEP_ALL;
        hwloc_topology_get_type_filter(topology, HWLOC_OBJ_PCI_DEVICE, &pci);
        hwloc_topology_get_type_filter(topology, HWLOC_OBJ_OS_DEVICE, &osdev);
        FILE *f = fopen(path, "a");
        if (f) {
            char comm[64] = "?";
            FILE *c = fopen("/proc/self/comm", "r");
            if (c) {
                if (fscanf(c, "%63s", comm) != 1)
                    comm[0] = '?', comm[1] = '\0';
                fclose(c);
            }
            fprintf(f, "load pid %ld comm %s pci %s osdev %s\n", (long)getpid(), comm, filter_name(pci),
                    filter_name(osdev));
            fclose(f);
        }
    }
    return real ? real(topology) : -1;
}
