// SPDX-License-Identifier: BSD-3-Clause
// The blocking collectives' algorithms on dense byte arrays (coll.cc
// checks the arguments, packs what is not contiguous and picks one with
// coll_choose.hpp). Each returns a weft status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi::coll {

// A reduction's vector: n basic elements of elem bytes, combined with op.
struct Vec {
    MPI_Op op;
    Basic basic;
    size_t n;
    size_t elem;
    size_t bytes() const { return n * elem; }
    // out = a op in over the elements [from, to) of the three arrays.
    void combine(const std::byte *a, const std::byte *in, std::byte *out, size_t from = 0, size_t to = SIZE_MAX) const
    {
        if (to == SIZE_MAX)
            to = n;
        reduce_apply3(op, basic, a + from * elem, in + from * elem, out + from * elem, to - from);
    }
};

// Whether a child's vector may land in result itself: not when the input
// is there (MPI_IN_PLACE), which the first combine still reads.
inline bool result_apart_from_input(const Vec &v, const std::byte *input, const std::byte *result)
{
    return input + v.bytes() <= result || result + v.bytes() <= input;
}

// input: this rank's vector (may be result itself: MPI_IN_PLACE); result:
// where the reduction ends (every rank for allreduce, the root for reduce;
// a non-root's result is working memory); work: bytes() of scratch. None
// copies input before combining: the first combine reads it and writes
// result (the three-array kernel).
int allreduce_recursive_doubling(const Comm &c, const Vec &v, const std::byte *input, std::byte *result,
                                 std::byte *work);
int allreduce_rabenseifner(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work);
// far_first: the tree that pairs ranks p/2 apart first and neighbours
// last (else neighbours first).
int reduce_binomial(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work, int root,
                    bool far_first = false);
// The same tree, pipelined: the vector goes up in segments of about
// segment_bytes, each combined as it arrives while the next is on its way,
// so a child's data is reduced while it is still in cache and every level
// of the tree works at once. Needs 2 segments per child of work (work is
// the vector's size); where that does not fit at the root (or one segment
// covers the vector) every rank runs reduce_binomial instead. *pipelined
// (may be null) is set when it did not.
int reduce_binomial_segmented(const Comm &c, const Vec &v, const std::byte *input, std::byte *result,
                              std::byte *work, int root, size_t segment_bytes, bool *pipelined);
int reduce_scatter_gather(const Comm &c, const Vec &v, const std::byte *input, std::byte *result, std::byte *work,
                          int root);

// Allgather on one dense array: block r is [off[r], off[r+1]) of buf, and
// this rank's block is in place. Bruck needs off[p] bytes of work;
// recursive doubling needs a power-of-two size.
int allgather_bruck(const Comm &c, std::byte *buf, const std::vector<size_t> &off, std::byte *work);
// own: this rank's block where the caller's send buffer holds it, not yet
// copied into buf (null: buf has it).
int allgather_recursive_doubling(const Comm &c, std::byte *buf, const std::vector<size_t> &off,
                                 const std::byte *own = nullptr);

// Alltoall of p blocks of block bytes each; work: alltoall_bruck_work(p,
// block) bytes. Bruck's send may be recv (in place); the scattered
// exchange's may not (it sends from send while blocks land in recv).
size_t alltoall_bruck_work(int p, size_t block);
int alltoall_bruck(const Comm &c, const std::byte *send, std::byte *recv, size_t block, std::byte *work);
int alltoall_scattered(const Comm &c, const std::byte *send, std::byte *recv, size_t block);
int alltoall_pairwise(const Comm &c, const std::byte *send, std::byte *recv, size_t block);

// The largest power of two not above p.
inline int floor_power_of_two(int p)
{
    int p2 = 1;
    while (p2 * 2 <= p)
        p2 *= 2;
    return p2;
}

} // namespace weft::mpi::coll
