// SPDX-License-Identifier: BSD-3-Clause
// The collectives' algorithm choice (coll_choose.hpp) and the parameters
// that force one.
#include "mpi/coll_choose.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "mpi/coll_algos.hpp"
#include "mpi/internal.hpp"

namespace weft::mpi::coll {

namespace {

// A parameter's value as text; "" when it is not registered.
std::string param_text(const char *name)
{
    const int n = weft_param_count();
    for (int i = 0; i < n; ++i) {
        weft_param_desc_t d;
        d.size = sizeof d;
        if (weft_param_describe(i, &d) != WEFT_SUCCESS || !d.name || std::strcmp(d.name, name) != 0)
            continue;
        char text[64] = "";
        if (weft_param_get(i, text, sizeof text, nullptr) != WEFT_SUCCESS)
            return {};
        return text;
    }
    return {};
}

constexpr std::array<std::pair<const char *, Algorithm>, 10> kNames{{
    {"recursive_doubling", Algorithm::RecursiveDoubling},
    {"rabenseifner", Algorithm::Rabenseifner},
    {"binomial", Algorithm::Binomial},
    {"reduce_scatter_gather", Algorithm::ReduceScatterGather},
    {"bruck", Algorithm::Bruck},
    {"ring", Algorithm::Ring},
    {"pairwise", Algorithm::Pairwise},
    {"scattered", Algorithm::Scattered},
    {"linear", Algorithm::Linear},
    {"dissemination", Algorithm::Dissemination},
}};

// What the parameters force (read once: they are fixed from weft_init on).
struct Forced {
    bool allreduce = false, reduce = false, allgather = false, alltoall = false, bcast = false, barrier = false;
    Algorithm allreduce_alg{}, reduce_alg{}, allgather_alg{}, alltoall_alg{}, bcast_alg{}, barrier_alg{};
    bool verbose = false;
    size_t reduce_segment = 0;   // mpi_coll_reduce_segment_size (0: whole vectors)
    // The ranks sleep while they wait (progress mode block: more ranks
    // than cores on the node): a round can cost a wake-up, milliseconds on
    // a loaded host, and dwarfs the bytes a halving algorithm saves. Only
    // in a job on one node (see forced()).
    bool ranks_sleep = false;
};

void read_forced(const char *name, bool *set, Algorithm *alg)
{
    const std::string v = param_text(name);
    for (const auto &[n, a] : kNames)
        if (v == n) {
            *set = true;
            *alg = a;
        }
}

const Forced &forced()
{
    static const Forced f = [] {
        Forced r;
        read_forced("mpi_coll_allreduce_algorithm", &r.allreduce, &r.allreduce_alg);
        read_forced("mpi_coll_reduce_algorithm", &r.reduce, &r.reduce_alg);
        read_forced("mpi_coll_allgather_algorithm", &r.allgather, &r.allgather_alg);
        read_forced("mpi_coll_alltoall_algorithm", &r.alltoall, &r.alltoall_alg);
        read_forced("mpi_coll_bcast_algorithm", &r.bcast, &r.bcast_alg);
        read_forced("mpi_coll_barrier_algorithm", &r.barrier, &r.barrier_alg);
        const std::string v = param_text("mpi_coll_verbose");
        r.verbose = v == "true" || v == "1";
        r.reduce_segment = std::strtoull(param_text("mpi_coll_reduce_segment_size").c_str(), nullptr, 10);
        weft_job_info_t job{};
        job.size = sizeof job;
        // Every member of a collective must choose alike, and the mode is
        // decided per node (its ranks against its cores): on several nodes
        // one may sleep and another not, so only a one-node job counts it.
        r.ranks_sleep = weft_job_info(&job) == WEFT_SUCCESS && std::strcmp(job.progress_mode, "block") == 0 &&
                        job.num_nodes == 1;
        return r;
    }();
    return f;
}

bool power_of_two(int p) { return (p & (p - 1)) == 0; }

// Allreduce and reduce share the halving rule.
Choice choose_halving(int ranks, size_t bytes, size_t elements, bool commutative, bool is_forced, Algorithm forced_alg,
                      Algorithm tree)
{
    const Algorithm halving = tree == Algorithm::Binomial ? Algorithm::ReduceScatterGather : Algorithm::Rabenseifner;
    if (!commutative)
        return {tree, "the operation does not commute: one tree keeps rank order"};
    if (is_forced)
        return {forced_alg, "forced by its parameter"};
    if (ranks < kHalvingMinRanks)
        return {tree, "fewer than 4 ranks: halving moves as many bytes in twice the messages"};
    if (elements < static_cast<size_t>(floor_power_of_two(ranks)))
        return {tree, "fewer elements than ranks: halving has blocks to split only below one per rank"};
    if (bytes < kHalvingMinBytes)
        return {tree, "small vector: log p messages of it cost less than 2 log p of its parts"};
    if (forced().ranks_sleep)
        return {tree, "ranks sleep while they wait (more ranks than cores): log p rounds, not 2 log p"};
    return {halving, "large vector: 2(p-1)/p of it moves instead of log p times all of it"};
}

} // namespace

const char *algorithm_name(Algorithm a)
{
    for (const auto &[n, alg] : kNames)
        if (alg == a)
            return n;
    return "?";
}

Choice choose_allreduce(int ranks, size_t bytes, size_t elements, bool commutative)
{
    const Forced &f = forced();
    return choose_halving(ranks, bytes, elements, commutative, f.allreduce, f.allreduce_alg,
                          Algorithm::RecursiveDoubling);
}

Choice choose_reduce(int ranks, size_t bytes, size_t elements, bool commutative)
{
    const Forced &f = forced();
    const Choice c = choose_halving(ranks, bytes, elements, commutative, f.reduce, f.reduce_alg, Algorithm::Binomial);
    if (c.algorithm == Algorithm::Binomial && commutative && !f.reduce && f.ranks_sleep && ranks > 2 &&
        bytes <= kReduceFarFirstMaxBytes)
        return {Algorithm::Binomial, "ranks share cores, small vector: ranks p/2 apart (one core) first, neighbours last",
                true};
    return c;
}

size_t reduce_segment_bytes()
{
    return forced().reduce_segment;
}

Choice choose_allgather(int ranks, size_t bytes)
{
    const Forced &f = forced();
    if (f.allgather) {
        if (f.allgather_alg == Algorithm::RecursiveDoubling && !power_of_two(ranks))
            return {Algorithm::Bruck, "recursive doubling forced, but the size is not a power of two"};
        return {f.allgather_alg, "forced by its parameter"};
    }
    // Where ranks share cores (block) the same rules hold since a waiting
    // rank yields its core 256 times before it sleeps: on the 2-vCPU VM,
    // 1 B-64 KiB per rank, the ring took 1.3-2.1x recursive doubling's
    // time at 4 and 8 ranks, and 1.0-1.6x Bruck's at 6. (When a wait went
    // straight to sleep the ring, which wakes one neighbour a step, won.)
    if (power_of_two(ranks) && bytes <= kAllgatherDoublingMaxBytes)
        return {Algorithm::RecursiveDoubling, "power of two, small or medium: log p messages, no local copies"};
    if (bytes < kAllgatherBruckMaxBytes)
        return {Algorithm::Bruck, "small: log p messages instead of p-1"};
    return {Algorithm::Ring, "large: p-1 steps to a neighbour, each block copied once"};
}

Choice choose_alltoall(int ranks, size_t block_bytes)
{
    const Forced &f = forced();
    if (f.alltoall)
        return {f.alltoall_alg, "forced by its parameter"};
    // Ranks that share cores: every exchange posted at once lets whichever
    // rank has a core move all of its blocks; Bruck's and the pairwise
    // rounds each wait for one partner to get its core. On the 2-vCPU VM,
    // 1 B-64 KiB blocks: 0.83-1.0x Bruck's time at small blocks and
    // 0.25-0.5x from 4 KiB, 0.3-0.7x pairwise's, at 4, 6 and 8 ranks.
    if (f.ranks_sleep && block_bytes <= kAlltoallScatterMaxBlock)
        return {Algorithm::Scattered, "ranks share cores: exchanges posted at once progress whoever has a core"};
    if (ranks >= kAlltoallBruckMinRanks && block_bytes <= kAlltoallBruckMaxBlock)
        return {Algorithm::Bruck, "small blocks: log p messages of p/2 blocks instead of p-1 of one"};
    if (ranks >= kAlltoallBruckMinRanks && block_bytes <= kAlltoallScatterMaxBlock)
        return {Algorithm::Scattered, "medium blocks: the p-1 exchanges, posted at once, overlap"};
    return {Algorithm::Pairwise, "large blocks (or few ranks): one exchange at a time, each block moves once"};
}

Choice choose_bcast(int ranks, size_t bytes)
{
    const Forced &f = forced();
    if (f.bcast)
        return {f.bcast_alg, "forced by its parameter"};
    if (ranks <= kBcastLinearMaxRanks && bytes <= kBcastLinearMaxBytes)
        return {Algorithm::Linear, "small, few ranks: one hop, the root's few eager sends cost less than a second"};
    if (f.ranks_sleep && bytes <= kBcastLinearSharedMaxBytes)
        return {Algorithm::Linear, "ranks share cores: a hop through a rank waits for it to get a core"};
    return {Algorithm::Binomial, "log p hops, no rank sends more than log p times"};
}

Choice choose_barrier(int ranks)
{
    const Forced &f = forced();
    if (f.barrier)
        return {f.barrier_alg, "forced by its parameter"};
    if (ranks > 2 && ranks <= kBarrierLinearMaxRanks)
        return {Algorithm::Linear, "3-4 ranks: as many hops as dissemination, and only rank 0 waits twice"};
    return {Algorithm::Dissemination, "log p rounds of empty messages"};
}

void report_choice(const char *collective, int rank, int ranks, size_t bytes, const Choice &c)
{
    if (!forced().verbose || rank != 0)
        return;
    static std::mutex m;
    static std::set<std::pair<std::string, std::string>> said;
    std::lock_guard<std::mutex> lock(m);
    if (!said.insert({collective, std::string(algorithm_name(c.algorithm)) + c.why}).second)
        return;
    std::fprintf(stderr, "weft mpi_coll: %s of %zu bytes on %d ranks: %s (%s)\n", collective, bytes, ranks,
                 algorithm_name(c.algorithm), c.why);
}

} // namespace weft::mpi::coll
