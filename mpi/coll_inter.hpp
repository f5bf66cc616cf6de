// SPDX-License-Identifier: BSD-3-Clause
// The collectives on an intercommunicator (MPI-3.1 5.2.3): each group's
// result comes from the other group. Rooted ones take MPI_ROOT at the root,
// MPI_PROC_NULL at the rest of its group, and the root's rank in the remote
// group on the other side. Each is one round between the groups (every
// message goes straight to the remote rank that needs it), run as a
// schedule (coll_sched.hpp). MPI_IN_PLACE is not defined on them.
#pragma once

#include "mpi/coll.hpp"

namespace weft::mpi::coll::inter {

int barrier(const Ctx &cx);
int bcast(const Ctx &cx, void *buf, int count, MPI_Datatype th, int root);
int reduce(const Ctx &cx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op, int root);
int allreduce(const Ctx &cx, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op);
int gatherv(const Ctx &cx, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root);
int scatterv(const Ctx &cx, const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root);
int allgatherv(const Ctx &cx, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype);
int alltoallv(const Ctx &cx, const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
              void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);

} // namespace weft::mpi::coll::inter
