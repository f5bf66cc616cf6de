// SPDX-License-Identifier: BSD-3-Clause
// The runtime's parameters (group "rte"). They are registered with the
// framework's own, so WEFT_MCA_rte_* names are known before unknown names
// are judged, and weft_info lists them.
#include "engine/params.hpp"
#include "rte/runtime.hpp"

namespace weft::rt {

namespace {

params::Definition def(const char *name, params::Type type, const char *dflt, int level, const char *help)
{
    params::Definition d;
    d.framework = "rte";
    d.component = "base";
    d.name = name;
    d.type = type;
    d.default_text = dflt;
    d.level = level;
    d.help = help;
    return d;
}

} // namespace

std::vector<FrameworkInfo> param_groups()
{
    return {{"rte", "process runtime: PMIx job and modex, progress engine, per-peer endpoints"},
            engine::param_group(),
            {"mpi", "the MPI layer (libweft_mpi): which algorithm each collective uses"}};
}

std::vector<params::Definition> param_definitions()
{
    std::vector<params::Definition> out;
    auto progress = def("progress", params::Type::Enum, "auto", WEFT_LEVEL_TUNER_BASIC,
                        "How a process waits for communication: 'busy' polls without pause "
                        "(lowest latency, a core per process) and yields after a long idle spin "
                        "(ranks that share a core unknowingly hand it over), 'yield' gives the core away "
                        "between polls, 'block' sleeps on the transports' descriptors after a "
                        "few hundred yielding polls (yield when a transport has none), 'auto' is busy unless the "
                        "node is oversubscribed (more local processes than cores), then block.");
    progress.enumerators = {"auto", "busy", "yield", "block"};
    out.push_back(progress);
    out.push_back(def("preconnect", params::Type::Bool, "false", WEFT_LEVEL_TUNER_BASIC,
                      "Connect to every peer during weft_init instead of on first use "
                      "(start-up pays for all connections; the first message to each peer "
                      "does not)."));
    auto modex = def("modex", params::Type::Enum, "auto", WEFT_LEVEL_TUNER_BASIC,
                     "How ranks exchange their transports' business cards in weft_init: 'full' "
                     "gathers every rank's card on every rank with one collecting PMIx fence "
                     "(work and memory grow with the job); 'direct' publishes the cards, fences "
                     "without data and reads a peer's card from the PMIx server on first contact, "
                     "so a peer never contacted is never fetched; it falls back to 'full' where the PMIx server is not known to serve "
                     "cards across nodes (the reason is logged at rte_base_verbose=debug). "
                     "'auto' is direct.");
    modex.enumerators = {"auto", "full", "direct"};
    out.push_back(modex);
    out.push_back(def("connect_timeout", params::Type::Double, "30", WEFT_LEVEL_TUNER_DETAIL,
                      "Seconds a connection to one peer may take before it fails with an error "
                      "naming the peer and the transport."));
    out.push_back(def("line_buffered", params::Type::Bool, "true", WEFT_LEVEL_TUNER_BASIC,
                      "Under a launcher, make stdout line-buffered in weft_init when it is not a "
                      "terminal (a pipe to the launcher or a file), so every line a rank prints "
                      "reaches the user even if the rank is killed or aborts. false keeps stdio's "
                      "full buffering (fewer write calls for programs that print a lot)."));
    out.push_back(def("report", params::Type::String, "", WEFT_LEVEL_USER_BASIC,
                      "At weft_finalize, rank 0 gathers every rank's counters and prints a summary "
                      "of the job on its stderr: transports and bytes per peer class, the slowest pair "
                      "by measured bandwidth, the deepest unexpected queue, every fallback and retry. "
                      "'text' prints it, 'json:FILE' writes it as JSON to FILE, '' (the default) does "
                      "neither. weftrun --report sets it; other launchers set it themselves."));
    // The MPI layer's collective algorithms (mpi/coll_choose.cc reads them;
    // libweft_mpi sits on weft.h and cannot register parameters itself).
    auto coll = [](const char *name, const char *help, std::vector<std::string> algorithms) {
        params::Definition d = def(name, params::Type::Enum, "auto", WEFT_LEVEL_TUNER_DETAIL, help);
        d.framework = "mpi";
        d.component = "coll";
        d.enumerators = std::move(algorithms);
        return d;
    };
    out.push_back(coll("allreduce_algorithm",
                       "Algorithm of MPI_Allreduce with a predefined operation: 'auto' chooses by "
                       "communicator size and bytes (mpi_coll_verbose shows the choice and why); "
                       "'recursive_doubling' (log p rounds of the whole vector); 'rabenseifner' "
                       "(reduce-scatter by recursive halving, then allgather by recursive doubling).",
                       {"auto", "recursive_doubling", "rabenseifner"}));
    out.push_back(coll("reduce_algorithm",
                       "Algorithm of MPI_Reduce with a predefined operation: 'auto', 'binomial' "
                       "(tree toward the root), 'reduce_scatter_gather' (recursive halving, then a "
                       "binomial gather of the reduced blocks at the root).",
                       {"auto", "binomial", "reduce_scatter_gather"}));
    out.push_back(coll("allgather_algorithm",
                       "Algorithm of MPI_Allgather(v) on contiguous data: 'auto', 'bruck' (log p "
                       "rounds, any size), 'recursive_doubling' (log p rounds, powers of two only; "
                       "others use bruck), 'ring' (p-1 rounds to a neighbour).",
                       {"auto", "bruck", "recursive_doubling", "ring"}));
    out.push_back(coll("alltoall_algorithm",
                       "Algorithm of MPI_Alltoall on contiguous data: 'auto', 'bruck' (log p "
                       "rounds of half the data each), 'pairwise' (p-1 rounds of one block), "
                       "'scattered' (the p-1 exchanges posted at once, in windows of 32 peers).",
                       {"auto", "bruck", "pairwise", "scattered"}));
    out.push_back(coll("bcast_algorithm",
                       "Algorithm of MPI_Bcast: 'auto', 'binomial' (a tree: log p hops, each rank "
                       "sends at most log p times), 'linear' (the root sends to every rank itself: "
                       "one hop, p-1 sends at the root).",
                       {"auto", "binomial", "linear"}));
    out.push_back(coll("barrier_algorithm",
                       "Algorithm of MPI_Barrier: 'auto', 'dissemination' (log p rounds, each rank "
                       "to the one 2^k after it), 'linear' (every rank to rank 0, which then "
                       "releases them).",
                       {"auto", "dissemination", "linear"}));
    auto segment = def("reduce_segment_size", params::Type::Size, "256k", WEFT_LEVEL_TUNER_DETAIL,
                       "MPI_Reduce's binomial tree sends vectors longer than this in segments of "
                       "about this size, each reduced as it arrives while the next is on its way "
                       "(pipelined, and in cache); 0 sends every vector whole. Only on 4 ranks or more: "
                       "below, no rank both receives and sends, and vectors go whole.");
    segment.framework = "mpi";
    segment.component = "coll";
    out.push_back(segment);
    auto verbose = def("verbose", params::Type::Bool, "false", WEFT_LEVEL_TUNER_DETAIL,
                       "Print on stderr which algorithm each blocking collective chose and why (rank 0, once "
                       "per collective and reason).");
    verbose.framework = "mpi";
    verbose.component = "coll";
    out.push_back(verbose);
    // The engine's own (engine/params.cc), registered with the runtime's.
    for (auto &d : engine::param_definitions())
        out.push_back(std::move(d));
    return out;
}

} // namespace weft::rt
