// SPDX-License-Identifier: BSD-3-Clause
// Bruck's alltoall, for small blocks (the pairwise exchange, for large
// ones, is coll.cc's MPI_Alltoallv): the blocks are rotated so that
// position j holds the one for rank me + j; in round k every block whose
// position has bit k set moves to rank me + 2^k, packed into one message;
// after log p rounds position j holds the block from rank me - j. Each
// block travels as many times as its position has bits set: about p/2
// blocks per round, log p rounds, against p-1 rounds of one block.
#include <cstring>

#include "mpi/coll_algos.hpp"

namespace weft::mpi::coll {

size_t alltoall_bruck_work(int p, size_t block)
{
    // The rotated blocks, and one round's outgoing and incoming blocks.
    return (static_cast<size_t>(p) + 2 * (static_cast<size_t>(p) / 2 + 1)) * block;
}

int alltoall_bruck(const Comm &c, const std::byte *send, std::byte *recv, size_t block, std::byte *work)
{
    const int p = c.size, me = c.rank;
    std::byte *rot = work;
    std::byte *out = rot + static_cast<size_t>(p) * block;
    std::byte *in = out + (static_cast<size_t>(p) / 2 + 1) * block;
    for (int j = 0; j < p; ++j)
        std::memcpy(rot + j * block, send + static_cast<size_t>((me + j) % p) * block, block);
    for (int dist = 1; dist < p; dist <<= 1) {
        size_t k = 0;
        for (int j = dist; j < p; ++j)
            if (j & dist)
                std::memcpy(out + block * k++, rot + j * block, block);
        if (int rc = coll_sendrecv(c, out, k * block, (me + dist) % p, in, k * block, (me - dist + p) % p,
                                   kTagAlltoall))
            return rc;
        k = 0;
        for (int j = dist; j < p; ++j)
            if (j & dist)
                std::memcpy(rot + j * block, in + block * k++, block);
    }
    for (int j = 0; j < p; ++j)
        std::memcpy(recv + static_cast<size_t>((me - j + p) % p) * block, rot + j * block, block);
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
