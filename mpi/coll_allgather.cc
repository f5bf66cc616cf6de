// SPDX-License-Identifier: BSD-3-Clause
// Allgather in log p rounds, for small and medium vectors (the ring, for
// large ones, is in coll.cc's MPI_Allgatherv):
//  - Bruck: any size; round k sends the first min(2^k, p-2^k) blocks of a
//    rotated copy (this rank's block first) to rank - 2^k;
//  - recursive doubling: powers of two; round k swaps the 2^k blocks of
//    this rank's aligned group with the partner rank ^ 2^k, in place.
#include <algorithm>
#include <cstring>

#include "mpi/coll_algos.hpp"

namespace weft::mpi::coll {

int allgather_bruck(const Comm &c, std::byte *buf, const std::vector<size_t> &off, std::byte *work)
{
    const int p = c.size, me = c.rank;
    // Position j of work holds block (me + j) % p, from pos[j].
    std::vector<size_t> pos(static_cast<size_t>(p) + 1, 0);
    for (int j = 0; j < p; ++j) {
        const int b = (me + j) % p;
        pos[j + 1] = pos[j] + (off[b + 1] - off[b]);
    }
    std::memcpy(work, buf + off[me], off[me + 1] - off[me]);
    for (int dist = 1; dist < p; dist <<= 1) {
        // The sender (me + dist) has at its positions [0, n) the blocks
        // that are at this rank's [dist, dist + n).
        const int n = std::min(dist, p - dist);
        if (int rc = coll_sendrecv(c, work, pos[n], (me - dist + p) % p, work + pos[dist], pos[dist + n] - pos[dist],
                                   (me + dist) % p, kTagAllgather))
            return rc;
    }
    // Undo the rotation: positions [0, p-me) are blocks [me, p), the rest
    // blocks [0, me).
    std::memcpy(buf + off[me], work, off[p] - off[me]);
    std::memcpy(buf, work + pos[p - me], off[me]);
    return WEFT_SUCCESS;
}

int allgather_recursive_doubling(const Comm &c, std::byte *buf, const std::vector<size_t> &off)
{
    const int p = c.size, me = c.rank;
    for (int mask = 1; mask < p; mask <<= 1) {
        const int peer = me ^ mask;
        const int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        if (int rc = coll_sendrecv(c, buf + off[mine], off[mine + mask] - off[mine], peer, buf + off[theirs],
                                   off[theirs + mask] - off[theirs], peer, kTagAllgather))
            return rc;
    }
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
