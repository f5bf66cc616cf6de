// SPDX-License-Identifier: BSD-3-Clause
// The whole-vector reductions, for small vectors: the binomial tree of
// MPI_Reduce and recursive doubling of MPI_Allreduce (log p messages, each
// the whole vector).
#include <bit>
#include <cstring>
#include <utility>

#include "mpi/coll_algos.hpp"

namespace weft::mpi::coll {

int reduce_binomial(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work, int root)
{
    const int p = c.size, vr = (c.rank - root + p) % p;
    const std::byte *mine = input;   // this subtree's data so far
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask)
            return coll_send(c, mine, v.bytes(), ((vr - mask) + root) % p, kTagReduce);
        if (vr + mask < p) {
            if (int rc = coll_recv(c, work, v.bytes(), (vr + mask + root) % p, kTagReduce))
                return rc;
            // The lower virtual ranks' data first; the first child's
            // combine reads the input where it is (no copy into result).
            v.combine(mine, work, result);
            mine = result;
        }
    }
    if (mine != result)   // a root without children: a communicator of one
        std::memcpy(result, mine, v.bytes());
    return WEFT_SUCCESS;
}

int allreduce_recursive_doubling(const Comm &c, const Vec &v, const std::byte *input, std::byte *result,
                                 std::byte *work)
{
    const size_t bytes = v.bytes();
    const int p = c.size, me = c.rank;
    const int p2 = floor_power_of_two(p), extra = p - p2;
    // Of the first 2*extra ranks, the even ones hand their data to the odd
    // ones and wait for the result (fold); the others take part in the
    // doubling as virtual rank vr.
    const int vr = me < 2 * extra ? (me % 2 == 0 ? -1 : me / 2) : me - extra;
    if (vr < 0) {
        if (int rc = coll_send(c, input, bytes, me + 1, kTagAllreduce))
            return rc;
        return coll_recv(c, result, bytes, me + 1, kTagAllreduce);
    }
    // Two arrays: mine (this rank's partial result) and other (a partner's
    // data). A step with a lower partner leaves the result in other (the
    // lower rank's data goes first), and the two swap; those are the steps
    // whose bit is set in vr. Starting in the right one of them, the result
    // ends in result itself.
    const bool odd_swaps = std::popcount(static_cast<unsigned>(vr)) % 2 == 1;
    std::byte *mine = odd_swaps ? work : result;
    std::byte *other = odd_swaps ? result : work;
    const std::byte *cur = input;   // read by the first combine where it is
    if (input == other) {           // in place, and the first receive would overwrite it
        std::memcpy(mine, input, bytes);
        cur = mine;
    }
    if (me < 2 * extra) {
        if (int rc = coll_recv(c, other, bytes, me - 1, kTagAllreduce))
            return rc;
        v.combine(other, cur, mine);
        cur = mine;
    }
    for (int mask = 1; mask < p2; mask <<= 1) {
        const int pv = vr ^ mask;
        const int partner = pv < extra ? pv * 2 + 1 : pv + extra;
        if (int rc = coll_sendrecv(c, cur, bytes, partner, other, bytes, partner, kTagAllreduce))
            return rc;
        // Apply in rank order so every rank computes the same value.
        if (partner < me) {
            v.combine(other, cur, other);
            std::swap(mine, other);
        } else {
            v.combine(cur, other, mine);
        }
        cur = mine;
    }
    if (cur != result)   // a communicator of one
        std::memcpy(result, cur, bytes);
    if (me < 2 * extra)
        return coll_send(c, result, bytes, me - 1, kTagAllreduce);
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
