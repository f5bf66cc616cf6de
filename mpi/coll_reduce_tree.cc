// SPDX-License-Identifier: BSD-3-Clause
// The whole-vector reductions, for small vectors: the binomial tree of
// MPI_Reduce and recursive doubling of MPI_Allreduce (log p messages, each
// the whole vector).
#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>
#include <vector>

#include "mpi/coll_algos.hpp"

namespace weft::mpi::coll {

int reduce_binomial(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work, int root,
                    bool far_first)
{
    const int p = c.size, vr = (c.rank - root + p) % p;
    const std::byte *mine = input;   // this subtree's data so far
    // Round by round at distance d: neighbours first (d = 1, 2, 4...: a
    // rank with bit d set sends to rank - d), or far first (d from the
    // largest power of two below p down to 1: of the ranks still in,
    // [0, 2d), the upper half sends to rank - d).
    const int far = floor_power_of_two(std::max(p - 1, 1));
    // The first child's vector lands in result itself (unless the input is
    // there: MPI_IN_PLACE), and is combined with the input in place: two
    // arrays, not three, and no scratch in cache. A 512 KiB reduce at 2
    // ranks (MPI_CHAR sum) touched 2 MiB at the root through work, past its
    // core's L2, and took 1.5x Open MPI's time.
    const size_t bytes = v.bytes();
    const bool land_in_result = result_apart_from_input(v, input, result);
    for (int d = far_first ? far : 1; far_first ? d >= 1 : d < p; d = far_first ? d >> 1 : d << 1) {
        if (far_first ? vr >= d : (vr & d) != 0)
            return coll_send(c, mine, bytes, (vr - d + root) % p, kTagReduce);
        if (vr + d < p) {
            std::byte *landing = land_in_result && mine == input ? result : work;
            if (int rc = coll_recv(c, landing, bytes, (vr + d + root) % p, kTagReduce))
                return rc;
            // The lower virtual ranks' data first (out = mine op child);
            // where the child's data is in result already, the predefined
            // operations commute element by element (reduce_apply3), so
            // the two-array kernel runs with result as io.
            v.combine(mine, landing, result);
            mine = result;
        }
    }
    if (mine != result)   // a root without children: a communicator of one
        std::memcpy(result, mine, bytes);
    return WEFT_SUCCESS;
}

namespace {

// The receives of one child's segments, two in flight, each into its own
// slot of work; whatever is still posted when the reduce ends early is
// freed.
struct ChildSegments {
    int rank = 0;
    std::byte *slot[2] = {nullptr, nullptr};
    weft_request_t req[2] = {WEFT_REQUEST_NULL, WEFT_REQUEST_NULL};
};

struct Posted {
    std::vector<ChildSegments> children;
    std::vector<weft_request_t> sends;
    ~Posted()
    {
        for (auto &ch : children)
            for (auto &r : ch.req)
                if (r != WEFT_REQUEST_NULL)
                    weft_request_free(&r);
        for (auto &r : sends)
            if (r != WEFT_REQUEST_NULL)
                weft_request_free(&r);
    }
};

} // namespace

int reduce_binomial_segmented(const Comm &c, const Vec &v, const std::byte *input, std::byte *result,
                              std::byte *work, int root, size_t segment_bytes, bool *pipelined)
{
    const int p = c.size, vr = (c.rank - root + p) % p;
    const size_t per = std::max<size_t>(1, segment_bytes / v.elem);   // elements a segment
    const size_t segments = (v.n + per - 1) / per;
    // The children, lowest mask first (the order reduce_binomial combines
    // in), and the parent (none at the root).
    Posted posted;
    int parent = -1;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            parent = ((vr - mask) + root) % p;
            break;
        }
        if (vr + mask < p)
            posted.children.push_back({(vr + mask + root) % p, {}, {}});
    }
    // Every rank decides alike (a child that sent its vector whole to a
    // parent waiting for segments would be truncated): by the root's count
    // of children, the most any rank has.
    const size_t seg_bytes = per * v.elem;
    const auto most_children = static_cast<size_t>(std::bit_width(static_cast<unsigned>(p - 1)));
    // Below 4 ranks no rank both receives and sends, so there is nothing to
    // overlap: the root alone copies (the single copy reads the child's
    // memory) and combines, and each segment costs its own rendezvous, for
    // which the child waits. 2 ranks on the VM (MPI_CHAR sum, the mean of
    // the two ranks' times): 512 KiB 37.4 us in 256 KiB segments, 23.1
    // whole, 1 MiB 101.7 against 84.8, 4 MiB 576 against 535 (Open MPI
    // 23.8, 86.3, 538).
    if (p < 4 || segments < 2 || 2 * most_children * seg_bytes > v.bytes())
        return reduce_binomial(c, v, input, result, work, root);
    if (pipelined)
        *pipelined = true;
    // The first child's segments land in result itself, as in
    // reduce_binomial (a null slot); the others' in two slots of work each.
    const bool land_in_result = result_apart_from_input(v, input, result);
    for (size_t k = 0; k < posted.children.size(); ++k)
        for (int b = 0; b < 2; ++b)
            posted.children[k].slot[b] =
                k == 0 && land_in_result ? nullptr : work + (2 * k + static_cast<size_t>(b)) * seg_bytes;
    auto landing = [&](const ChildSegments &ch, size_t s) {
        return ch.slot[s & 1] ? ch.slot[s & 1] : result + s * per * v.elem;
    };
    auto elements_of = [&](size_t s) { return std::min(per, v.n - s * per); };
    auto post = [&](ChildSegments &ch, size_t s) {
        return coll_irecv(c, landing(ch, s), elements_of(s) * v.elem, ch.rank, kTagReduce, &ch.req[s & 1]);
    };
    for (auto &ch : posted.children)
        for (size_t s = 0; s < 2 && s < segments; ++s)
            if (int rc = post(ch, s))
                return rc;
    if (parent >= 0)
        posted.sends.reserve(segments);
    for (size_t s = 0; s < segments; ++s) {
        const size_t off = s * per * v.elem, count = elements_of(s);
        const std::byte *mine = input + off;
        for (auto &ch : posted.children) {
            weft_msg_status_t st{};
            if (int rc = wait_one(&ch.req[s & 1], &st))
                return rc;
            // The lower virtual ranks' data first, as reduce_binomial.
            reduce_apply3(v.op, v.basic, mine, landing(ch, s), result + off, count);
            mine = result + off;
            if (s + 2 < segments)
                if (int rc = post(ch, s + 2))
                    return rc;
        }
        if (parent >= 0) {
            posted.sends.push_back(WEFT_REQUEST_NULL);
            if (int rc = coll_isend(c, mine, count * v.elem, parent, kTagReduce, &posted.sends.back()))
                return rc;
        } else if (mine != result + off) {   // a root without children: a communicator of one
            std::memcpy(result + off, mine, count * v.elem);
        }
    }
    return coll_waitall(posted.sends);
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
