// SPDX-License-Identifier: BSD-3-Clause
// Allgather in log p rounds, for small and medium vectors (the ring, for
// large ones, is in coll.cc's MPI_Allgatherv):
//  - Bruck: any size; round k sends the first min(2^k, p-2^k) blocks of a
//    rotated copy (this rank's block first) to rank - 2^k;
//  - recursive doubling: powers of two; round k swaps the 2^k blocks of
//    this rank's aligned group with the partner rank ^ 2^k, in place.
// Both send forwarded messages (WEFT_SEND_FORWARD): the partner waits for
// each and passes it on in its next round, so they go eagerly where the
// transport can, not by a single copy's handshake a round. 16 ranks on a
// 16-core host (btl/scif's single copy from 8 KiB), blocks of 2, 4 and
// 8 KiB: 20.7, 34.9, 56.9 us before, 16.2, 25.6, 69.4 forwarded (3-4 jobs
// each, one run); in two full runs 20.6, 35.3, 55.8 against 15.1, 24.6,
// 53.0 (MPICH 14.5-15.9, 21.9-24.4, 40.0-43.3). 16-32 KiB blocks were
// within the runs' spread (87-105 and 153-172 us, either way).
// Except at 2 ranks: the one exchange is the whole allgather, so nothing
// is passed on, and both ranks come to it together (no round before it
// made one late), so each reads the other's block by single copy, where
// btl/scif's ring would copy it twice. 2 ranks on the 2-vCPU VM (single copy
// from 8 KiB), blocks of 32 and 64 KiB: 4.25 and 8.12 us forwarded, 3.30
// and 5.04 plain (Open MPI vader 3.46, 5.05). Whether the last round of
// 16 ranks, which carries 8 blocks, should go plain too needs that host.
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
                                   (me + dist) % p, kTagAllgather, WEFT_SEND_FORWARD))
            return rc;
    }
    // Undo the rotation: positions [0, p-me) are blocks [me, p), the rest
    // blocks [0, me).
    std::memcpy(buf + off[me], work, off[p] - off[me]);
    std::memcpy(buf, work + pos[p - me], off[me]);
    return WEFT_SUCCESS;
}

int allgather_recursive_doubling(const Comm &c, std::byte *buf, const std::vector<size_t> &off, const std::byte *own)
{
    const int p = c.size, me = c.rank;
    const uint32_t forward = p > 2 ? WEFT_SEND_FORWARD : 0u;   // see the top of this file
    for (int mask = 1; mask < p; mask <<= 1) {
        const int peer = me ^ mask;
        const int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        if (mask == 1 && own) {
            // This rank's block goes out of the send buffer and is copied
            // into buf while the exchange is in flight. Sent out of buf it
            // would leave from lines the copy just dirtied in this core's
            // cache, which the peer's single-copy read then pulls across
            // (2 ranks on the VM, 64 KiB blocks: 13.8 us a call against
            // Open MPI's 5.3, which sends from the send buffer).
            const size_t mine_bytes = off[me + 1] - off[me];
            weft_request_t rr = WEFT_REQUEST_NULL, sr = WEFT_REQUEST_NULL;
            if (int rc = coll_irecv(c, buf + off[peer], off[peer + 1] - off[peer], peer, kTagAllgather, &rr))
                return rc;
            if (int rc = coll_isend(c, own, mine_bytes, peer, kTagAllgather, &sr,
                                    WEFT_SEND_DONE_NULL | forward)) {
                weft_request_free(&rr);
                return rc;
            }
            std::memcpy(buf + off[me], own, mine_bytes);
            weft_msg_status_t st{};
            const int src = wait_one(&sr, &st);
            const int rrc = wait_one(&rr, &st);
            if (src != WEFT_SUCCESS || rrc != WEFT_SUCCESS)
                return src != WEFT_SUCCESS ? src : rrc;
            continue;
        }
        if (int rc = coll_sendrecv(c, buf + off[mine], off[mine + mask] - off[mine], peer, buf + off[theirs],
                                   off[theirs + mask] - off[theirs], peer, kTagAllgather, forward))
            return rc;
    }
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
