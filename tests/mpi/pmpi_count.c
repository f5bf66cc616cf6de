/* SPDX-License-Identifier: BSD-3-Clause */
/* pmpi_count: the profiling interface seen from a program.
 *
 *   pmpi_count tool|none
 *
 * With "tool", a tool (pmpi_tool.c, linked in before libweft_mpi or loaded
 * with LD_PRELOAD) must see exactly the program's own MPI_Send, MPI_Bcast
 * and MPI_Allreduce calls: not the PMPI_ calls the program makes itself,
 * and not the sends libweft_mpi makes inside its collectives, its
 * Sendrecv or its Bcast. With "none", no tool is there and every call
 * still works. Prints "No Errors" when every check held. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    const int want_tool = argc > 1 && strcmp(argv[1], "tool") == 0;
    mtest_init(&argc, &argv);
    const int rank = mtest_rank, size = mtest_size;

    int (*count)(const char *) = (int (*)(const char *))dlsym(RTLD_DEFAULT, "pmpi_tool_count");
    CHECK(want_tool == (count != NULL), "the tool is %s but should be %s", count ? "present" : "absent",
          want_tool ? "present" : "absent");

    /* Five sends through MPI_Send, one through PMPI_Send, each to the next
     * rank (to itself when alone), received through posted receives. */
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int in[6], out[6];
    MPI_Request reqs[6];
    for (int i = 0; i < 6; ++i)
        MPI_Irecv(&in[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &reqs[i]);
    for (int i = 0; i < 5; ++i) {
        out[i] = rank * 100 + i;
        MPI_Send(&out[i], 1, MPI_INT, next, i, MPI_COMM_WORLD);
    }
    out[5] = rank * 100 + 5;
    PMPI_Send(&out[5], 1, MPI_INT, next, 5, MPI_COMM_WORLD);
    MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 6; ++i)
        CHECK(in[i] == prev * 100 + i, "message %d holds %d, expected %d", i, in[i], prev * 100 + i);

    /* Collectives and Sendrecv send inside the library: none of it may
     * reach the tool's MPI_Send. */
    int value = rank == 0 ? 42 : -1;
    for (int i = 0; i < 3; ++i)
        MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 9, &got, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(value == 42 && sum == size * (size - 1) / 2 && got == prev, "bcast %d, allreduce %d, sendrecv %d",
          value, sum, got);

    if (count) {
        const struct { const char *name; int want; } expect[] = {
            {"MPI_Send", 5}, {"MPI_Bcast", 3}, {"MPI_Allreduce", 1}};
        for (size_t i = 0; i < sizeof expect / sizeof expect[0]; ++i)
            CHECK(count(expect[i].name) == expect[i].want, "the tool saw %d calls of %s, expected %d",
                  count(expect[i].name), expect[i].name, expect[i].want);
    }
    return mtest_finish();
}
