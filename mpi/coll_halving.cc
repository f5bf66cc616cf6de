// SPDX-License-Identifier: BSD-3-Clause
// The vector-splitting reductions, for large vectors (Rabenseifner): a
// reduce-scatter by recursive halving leaves each of p2 ranks (p2 the
// largest power of two not above p) one reduced block, and then
//  - allreduce: an allgather by recursive doubling hands every block to
//    every rank;
//  - reduce: a binomial gather hands them to the root.
// Each rank sends 2 log p2 messages and 2(p2-1)/p2 of the vector, against
// log p whole vectors for the tree algorithms (coll_reduce_tree.cc). The
// p - p2 extra ranks fold in first: each hands its vector to a partner and
// (allreduce) gets the result back at the end.
#include <algorithm>
#include <cstring>

#include "mpi/coll_algos.hpp"

namespace weft::mpi::coll {

namespace {

// The ranks taking part, in virtual ranks 0..p2-1. Pair i of the first
// 2*extra ranks is (2i, 2i+1): one survives (2i+1, or the root when it is
// 2i) and takes the virtual rank i, the other folds in. Virtual ranks are
// relabelled by xor with the root's, so the root is virtual rank 0 and the
// halving's partners (v ^ mask) stay partners.
struct Fold {
    int p2 = 1, extra = 0, root = -1, shift = 0;
    Fold(int p, int root_) : p2(floor_power_of_two(p)), extra(p - p2), root(root_)
    {
        if (root >= 0)
            shift = raw(root);
    }
    int survivor(int pair) const { return root == 2 * pair ? 2 * pair : 2 * pair + 1; }
    int raw(int rank) const
    {
        if (rank >= 2 * extra)
            return rank - extra;
        return rank == survivor(rank / 2) ? rank / 2 : -1;
    }
    // Virtual rank of rank (-1: it folds in), and back.
    int virt(int rank) const
    {
        const int r = raw(rank);
        return r < 0 ? -1 : r ^ shift;
    }
    int real(int v) const
    {
        const int r = v ^ shift;
        return r < extra ? survivor(r) : r + extra;
    }
    // The survivor a folding rank hands its vector to.
    int partner_of(int rank) const { return survivor(rank / 2); }
};

// Block b of the vector: elements [first(b), first(b+1)), as even as n
// allows.
struct Blocks {
    size_t n, per, rest;
    Blocks(size_t n_, int p2) : n(n_), per(n_ / static_cast<size_t>(p2)), rest(n_ % static_cast<size_t>(p2)) {}
    size_t first(int b) const { return static_cast<size_t>(b) * per + std::min(static_cast<size_t>(b), rest); }
};

// Before the halving: a folding rank hands over its vector (*done: it has
// no more part); a survivor of a pair combines its partner's into result.
int fold_in(const Comm &c, const Vec &v, const Fold &f, const std::byte *input, std::byte *result, std::byte *work,
            const std::byte **cur, int tag, bool *folded)
{
    const int me = c.rank;
    *folded = false;
    *cur = input;
    if (me >= 2 * f.extra)
        return WEFT_SUCCESS;
    const int partner = me == f.partner_of(me) ? (me % 2 == 0 ? me + 1 : me - 1) : f.partner_of(me);
    if (f.raw(me) < 0) {
        *folded = true;
        return coll_send(c, input, v.bytes(), partner, tag);
    }
    if (int rc = coll_recv(c, work, v.bytes(), partner, tag))
        return rc;
    if (partner < me)
        v.combine(work, input, result);
    else
        v.combine(input, work, result);
    *cur = result;
    return WEFT_SUCCESS;
}

// Recursive halving: from cur (the whole vector), result ends holding the
// reduced block my (this rank's virtual rank); work takes the partners'
// halves.
int halve(const Comm &c, const Vec &v, const Fold &f, const Blocks &bl, int my, const std::byte *cur,
          std::byte *result, std::byte *work, int tag)
{
    int lo = 0, hi = f.p2;   // the blocks this rank still reduces
    for (int mask = f.p2 / 2; mask > 0; mask >>= 1) {
        const int partner = f.real(my ^ mask);
        const int mid = lo + (hi - lo) / 2;
        const bool lower = (my & mask) == 0;
        const int keep_lo = lower ? lo : mid, keep_hi = lower ? mid : hi;
        const int give_lo = lower ? mid : lo, give_hi = lower ? hi : mid;
        const size_t k0 = bl.first(keep_lo), k1 = bl.first(keep_hi);
        const size_t g0 = bl.first(give_lo), g1 = bl.first(give_hi);
        if (int rc = coll_sendrecv(c, cur + g0 * v.elem, (g1 - g0) * v.elem, partner, work + k0 * v.elem,
                                   (k1 - k0) * v.elem, partner, tag))
            return rc;
        if (partner < c.rank)
            v.combine(work, cur, result, k0, k1);
        else
            v.combine(cur, work, result, k0, k1);
        cur = result;
        lo = keep_lo;
        hi = keep_hi;
    }
    if (cur != result)   // one rank left after folding: nothing was halved
        std::memcpy(result, cur, v.bytes());
    return WEFT_SUCCESS;
}

} // namespace

int allreduce_rabenseifner(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work)
{
    const Fold f(c.size, -1);
    const std::byte *cur = nullptr;
    bool folded = false;
    if (int rc = fold_in(c, v, f, input, result, work, &cur, kTagAllreduce, &folded))
        return rc;
    if (folded)   // the survivor sends the result back
        return coll_recv(c, result, v.bytes(), f.partner_of(c.rank), kTagAllreduce);
    const int my = f.virt(c.rank);
    const Blocks bl(v.n, f.p2);
    if (int rc = halve(c, v, f, bl, my, cur, result, work, kTagAllreduce))
        return rc;
    // Recursive doubling of the reduced blocks: after the step of mask,
    // this rank holds the 2*mask blocks of its aligned group.
    for (int mask = 1; mask < f.p2; mask <<= 1) {
        const int peer = my ^ mask;
        const int mine_lo = my & ~(mask - 1), theirs_lo = peer & ~(mask - 1);
        const size_t m0 = bl.first(mine_lo), m1 = bl.first(mine_lo + mask);
        const size_t t0 = bl.first(theirs_lo), t1 = bl.first(theirs_lo + mask);
        if (int rc = coll_sendrecv(c, result + m0 * v.elem, (m1 - m0) * v.elem, f.real(peer), result + t0 * v.elem,
                                   (t1 - t0) * v.elem, f.real(peer), kTagAllreduce))
            return rc;
    }
    if (c.rank < 2 * f.extra)   // hand the result to the rank that folded in
        return coll_send(c, result, v.bytes(), c.rank % 2 == 0 ? c.rank + 1 : c.rank - 1, kTagAllreduce);
    return WEFT_SUCCESS;
}

int reduce_scatter_gather(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work,
                          int root)
{
    const Fold f(c.size, root);
    const std::byte *cur = nullptr;
    bool folded = false;
    if (int rc = fold_in(c, v, f, input, result, work, &cur, kTagReduce, &folded))
        return rc;
    if (folded)
        return WEFT_SUCCESS;
    const int my = f.virt(c.rank);   // the root's is 0
    const Blocks bl(v.n, f.p2);
    if (int rc = halve(c, v, f, bl, my, cur, result, work, kTagReduce))
        return rc;
    // Binomial gather toward virtual rank 0: after the step of mask, a
    // rank still in holds blocks [my, my + 2*mask).
    for (int mask = 1; mask < f.p2; mask <<= 1) {
        const size_t h0 = bl.first(my);
        if (my & mask) {
            const size_t h1 = bl.first(my + mask);
            return coll_send(c, result + h0 * v.elem, (h1 - h0) * v.elem, f.real(my - mask), kTagReduce);
        }
        const size_t r0 = bl.first(my + mask), r1 = bl.first(my + 2 * mask);
        if (int rc = coll_recv(c, result + r0 * v.elem, (r1 - r0) * v.elem, f.real(my + mask), kTagReduce))
            return rc;
    }
    return WEFT_SUCCESS;
}

} // namespace weft::mpi::coll
