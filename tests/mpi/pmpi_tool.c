/* SPDX-License-Identifier: BSD-3-Clause */
/* pmpi_tool.c: a minimal profiling tool, as mpiP or Score-P would be: it
 * defines MPI_Send, MPI_Bcast and MPI_Allreduce, counts the calls and hands
 * each to its PMPI_ twin. pmpi_count.c asks for the counts through
 * pmpi_tool_count(), found by dlsym so the same program runs with the tool
 * linked in, preloaded, or absent. */
#include <mpi.h>
#include <string.h>

static int sends, bcasts, allreduces;

int pmpi_tool_count(const char *name);
int pmpi_tool_count(const char *name)
{
    if (strcmp(name, "MPI_Send") == 0)
        return sends;
    if (strcmp(name, "MPI_Bcast") == 0)
        return bcasts;
    if (strcmp(name, "MPI_Allreduce") == 0)
        return allreduces;
    return -1;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    ++sends;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    ++bcasts;
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    ++allreduces;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
