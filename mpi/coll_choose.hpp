// SPDX-License-Identifier: BSD-3-Clause
// Which algorithm each blocking collective runs, chosen in one place from
// the communicator's size, the bytes and whether the operation commutes,
// with the reason; the mpi_coll_*_algorithm parameters force one (as Open
// MPI's coll/tuned lets users force one). The thresholds come from an
// alpha-beta model (docs/collectives.md): a message costs alpha, a byte
// beta, and on shared memory alpha/beta is a few KiB.
#pragma once

#include <cstddef>

namespace weft::mpi::coll {

enum class Algorithm {
    RecursiveDoubling,     // allreduce, allgather (powers of two)
    Rabenseifner,          // allreduce: reduce-scatter by halving + allgather by doubling
    Binomial,              // reduce, bcast
    ReduceScatterGather,   // reduce: reduce-scatter by halving + binomial gather
    Bruck,                 // allgather, alltoall
    Ring,                  // allgather
    Pairwise,              // alltoall
    Scattered,             // alltoall: every exchange posted at once
    Linear,                // bcast: the root sends to every other rank itself; barrier: all to rank 0 and back
    Dissemination,         // barrier: log p rounds, each rank to rank + 2^k
};
const char *algorithm_name(Algorithm a);

struct Choice {
    Algorithm algorithm;
    const char *why;
    bool far_first = false;   // reduce's binomial tree: ranks p/2 apart first, neighbours last
};

// Allreduce and reduce: the halving algorithms send 2 log p messages and
// 2(p-1)/p of the vector, against log p messages of the whole vector for
// recursive doubling (binomial): at 16 ranks 8 alpha + 1.9 n beta against
// 4 alpha + 4 n beta, even at n = 1.9 alpha/beta, a few KiB.
// At 2 or 3 ranks halving sends n bytes in 2 messages where the tree
// sends them in 1 (2(p-1)/p = log p at p = 2): it wins from 4 ranks on.
// Where ranks share cores (progress mode block) every round may wait for
// a wake-up (milliseconds measured on the loaded 2-core VM at 4 ranks,
// 16-64 KiB: Rabenseifner's 4 rounds took 4-8 ms where recursive
// doubling's 2 took 30-85 us), so there the tree's fewer rounds win.
inline constexpr size_t kHalvingMinBytes = 8 * 1024;
inline constexpr int kHalvingMinRanks = 4;
// Allgather: Bruck (and recursive doubling) send log p messages, the ring
// p-1, of the same bytes; the ring moves no block twice through a scratch
// buffer and only to a neighbour, so it wins once the copies weigh more
// than the messages saved. Bytes are the whole gathered vector (MPICH's
// 80 KiB and 512 KiB). Recursive doubling's few large messages beat the
// ring's many at every size measured at 16 ranks on a 16-core host (32 KiB
// to 1 MiB blocks, 512 KiB to 16 MiB gathered: 0.59-0.92 of the ring's
// time, and below MPICH's), so it runs up to 16 MiB.
inline constexpr size_t kAllgatherBruckMaxBytes = 80 * 1024;
inline constexpr size_t kAllgatherDoublingMaxBytes = 16 * 1024 * 1024;
// Alltoall: Bruck sends log p messages of p/2 blocks each, pairwise
// exchange p-1 messages of one block: at 16 ranks 4 alpha + 32 m beta
// against 15 alpha + 15 m beta, even at m = 0.65 alpha/beta; with Bruck's
// local rotations (two more copies of everything) the gain ends sooner.
// Bytes are one block (MPICH's 256).
inline constexpr size_t kAlltoallBruckMaxBlock = 256;
// Bruck's log p rounds beat p-1 only from 4 ranks on.
inline constexpr int kAlltoallBruckMinRanks = 4;
// Larger blocks: the scattered exchange posts all p-1 pairs at once, so the
// exchanges overlap (each block still moves once) where the pairwise
// exchange runs them one after the other. Measured at 16 ranks on a
// 16-core host: pairwise was 1.5-2.4x MPICH's time from 512 B to 64 KiB
// blocks; scattered took 0.63-0.88 of pairwise's time from 64 KiB to
// 256 KiB blocks (MPICH switches to pairwise at 32 KiB). Past 256 KiB
// (not measured) pairwise's one exchange at a time keeps the rendezvous
// in flight few.
inline constexpr size_t kAlltoallScatterMaxBlock = 256 * 1024;
// Peers posted at once (MPICH's bblock 32): at larger p, windows of this many.
inline constexpr int kAlltoallScatterWindow = 32;

// Reduce where ranks share cores (progress mode block), up to this many
// bytes: the binomial tree pairs ranks p/2 apart first and neighbours
// last (as Open MPI's does). Placed round robin, ranks p/2 apart share a
// core, so the first rounds are a hand-over on one core and only the last
// crosses. 4 ranks on the 2-vCPU VM, osu_reduce in 3 alternated jobs:
// 1 B-8 KiB 1.18-1.96 us against 1.32-2.56 neighbours first (Open MPI
// vader 1.05-2.98); from 16 KiB neighbours first was faster (8.0-16.0 us
// against 8.8-20.4).
inline constexpr size_t kReduceFarFirstMaxBytes = 8 * 1024;

// Bcast: the binomial tree reaches the last rank after log p hops, each a
// receive and a send on the rank in between; sent by the root to every
// rank (linear), it arrives after one hop and p-1 sends at the root. Small
// messages at few ranks: the root's p-1 eager sends cost less than a hop.
// Where ranks share cores a hop also waits for the rank in between to get
// its core: 4 ranks on the 2-vCPU VM, 1-byte osu_bcast, binomial's last
// rank waited 2.9-3.0 us where the others waited 0.15-0.9.
inline constexpr int kBcastLinearMaxRanks = 4;
inline constexpr size_t kBcastLinearMaxBytes = 4 * 1024;
// Where ranks share cores (progress mode block) linear wins at larger sizes
// and more ranks too: on the 2-vCPU VM, 4 KiB-256 KiB, it took 0.44-0.87x
// binomial's time at 4 ranks and 0.29-0.82x at 8 (2 alternated jobs).
inline constexpr size_t kBcastLinearSharedMaxBytes = 256 * 1024;

// Barrier: dissemination takes log p rounds in which every rank sends and
// waits; linear gathers at rank 0 and releases (2 hops, rank 0 handling
// p-1 messages each way). At 3-4 ranks both are 2 hops, and in the linear
// one only rank 0 waits more than once: ranks that share cores give the
// core away fewer times. 4 ranks on the 2-vCPU VM, osu_barrier in 6
// alternated jobs: medians 2.18-2.58 us with dissemination, 1.89-2.53
// (most 1.9-2.0) linear, Open MPI vader 1.96-2.12 (its default there is
// linear too). Rank 0 also leaves first, so a collective rooted there
// that follows starts at once (osu_bcast 1 B: 1.0 -> 0.14 us).
inline constexpr int kBarrierLinearMaxRanks = 4;

// ranks: the communicator's size; bytes: the reduced vector (allreduce,
// reduce), the gathered vector (allgather) or one block (alltoall);
// elements: the vector's basic elements (the halving algorithms split it
// into one block per rank).
Choice choose_allreduce(int ranks, size_t bytes, size_t elements, bool commutative);
Choice choose_reduce(int ranks, size_t bytes, size_t elements, bool commutative);
// The binomial reduce's segment size (mpi_coll_reduce_segment_size; 0:
// whole vectors).
size_t reduce_segment_bytes();
Choice choose_allgather(int ranks, size_t bytes);
Choice choose_alltoall(int ranks, size_t block_bytes);
Choice choose_bcast(int ranks, size_t bytes);
Choice choose_barrier(int ranks);

// With mpi_coll_verbose: says on stderr (once per collective, algorithm
// and reason, at the communicator's rank 0: every member chooses the same)
// what `collective` chose and why.
void report_choice(const char *collective, int rank, int ranks, size_t bytes, const Choice &c);

} // namespace weft::mpi::coll
