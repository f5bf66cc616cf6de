// SPDX-License-Identifier: BSD-3-Clause
// Alltoall on one dense array of equal blocks: Bruck's for small blocks,
// the scattered exchange for medium ones, the pairwise exchange for large
// ones and for few ranks (coll.cc's MPI_Alltoallv does it for any layout).
//
// Bruck: the blocks are rotated so that
// position j holds the one for rank me + j; in round k every block whose
// position has bit k set moves to rank me + 2^k, packed into one message;
// after log p rounds position j holds the block from rank me - j. Each
// block travels as many times as its position has bits set: about p/2
// blocks per round, log p rounds, against p-1 rounds of one block.
#include <algorithm>
#include <cstring>
#include <vector>

#include "mpi/coll_algos.hpp"
#include "mpi/coll_choose.hpp"

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

// Scattered: every receive is posted, then every send, a window of peers at
// a time, in the order me+1, me+2, ... (receives from me-1, me-2, ...) so
// that no rank is every other's first target; then all are waited for.
// The p-1 exchanges overlap instead of following one another, each block
// moving once; a window bounds the requests (and, past the eager limit,
// the rendezvous) in flight at large p.
int alltoall_scattered(const Comm &c, const std::byte *send, std::byte *recv, size_t block)
{
    const int p = c.size, me = c.rank;
    std::memcpy(recv + static_cast<size_t>(me) * block, send + static_cast<size_t>(me) * block, block);
    std::vector<weft_request_t> reqs;
    reqs.reserve(2 * static_cast<size_t>(std::min(p - 1, kAlltoallScatterWindow)));
    int first_rc = WEFT_SUCCESS;
    for (int start = 1; start < p; start += kAlltoallScatterWindow) {
        const int end = std::min(p, start + kAlltoallScatterWindow);
        for (int s = start; s < end && first_rc == WEFT_SUCCESS; ++s) {
            const int from = (me - s + p) % p;
            weft_request_t r;
            if (int rc = coll_irecv(c, recv + static_cast<size_t>(from) * block, block, from, kTagAlltoall, &r))
                first_rc = rc;
            else
                reqs.push_back(r);
        }
        for (int s = start; s < end && first_rc == WEFT_SUCCESS; ++s) {
            const int to = (me + s) % p;
            weft_request_t r;
            if (int rc = coll_isend(c, send + static_cast<size_t>(to) * block, block, to, kTagAlltoall, &r,
                                    WEFT_SEND_DONE_NULL))
                first_rc = rc;
            else
                reqs.push_back(r);
        }
        // On a failure the requests already posted are still waited for:
        // their buffers are the caller's.
        if (int rc = coll_waitall(reqs); rc != WEFT_SUCCESS && first_rc == WEFT_SUCCESS)
            first_rc = rc;
        if (first_rc != WEFT_SUCCESS)
            return first_rc;
    }
    return WEFT_SUCCESS;
}

// Pairwise: p-1 exchanges one after the other, with me+s and me-s in step
// s; each block moves once. On the dense arrays themselves: through
// MPI_Alltoallv's general layout, a 1-byte alltoall at 2 ranks made six
// vectors a call and took 0.70 us against Open MPI's 0.33-0.40.
int alltoall_pairwise(const Comm &c, const std::byte *send, std::byte *recv, size_t block)
{
    const int p = c.size, me = c.rank;
    std::memcpy(recv + static_cast<size_t>(me) * block, send + static_cast<size_t>(me) * block, block);
    for (int s = 1; s < p; ++s) {
        const int to = (me + s) % p, from = (me - s + p) % p;
        if (int rc = coll_sendrecv(c, send + static_cast<size_t>(to) * block, block, to,
                                   recv + static_cast<size_t>(from) * block, block, from, kTagAlltoall))
            return rc;
    }
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
