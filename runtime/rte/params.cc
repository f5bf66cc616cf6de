// The runtime's parameters (group "rte"). They are registered with the
// framework's own, so WEFT_MCA_rte_* names are known before unknown names
// are judged, and weft_info lists them.
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
            {"engine", "messaging engine: portals, tagged messages, eager and rendezvous protocols"}};
}

std::vector<params::Definition> param_definitions()
{
    std::vector<params::Definition> out;
    auto progress = def("progress", params::Type::Enum, "auto", WEFT_LEVEL_TUNER_BASIC,
                        "How a process waits for communication: 'busy' polls without pause "
                        "(lowest latency, a core per process) and yields after a long idle spin "
                        "(ranks that share a core unknowingly hand it over), 'yield' gives the core away "
                        "between polls, 'block' sleeps on the transports' descriptors after a "
                        "short spin (yield when a transport has none), 'auto' is busy unless the "
                        "node is oversubscribed (more local processes than cores), then block.");
    progress.enumerators = {"auto", "busy", "yield", "block"};
    out.push_back(progress);
    out.push_back(def("preconnect", params::Type::Bool, "false", WEFT_LEVEL_TUNER_BASIC,
                      "Connect to every peer during weft_init instead of on first use "
                      "(start-up pays for all connections; the first message to each peer "
                      "does not)."));
    out.push_back(def("connect_timeout", params::Type::Double, "30", WEFT_LEVEL_TUNER_DETAIL,
                      "Seconds a connection to one peer may take before it fails with an error "
                      "naming the peer and the transport."));
    out.push_back(def("line_buffered", params::Type::Bool, "true", WEFT_LEVEL_TUNER_BASIC,
                      "Under a launcher, make stdout line-buffered in weft_init when it is not a "
                      "terminal (a pipe to the launcher or a file), so every line a rank prints "
                      "reaches the user even if the rank is killed or aborts. false keeps stdio's "
                      "full buffering (fewer write calls for programs that print a lot)."));
    auto eng = [](const char *name, params::Type type, const char *dflt, int level, const char *help) {
        params::Definition d = def(name, type, dflt, level, help);
        d.framework = "engine";
        return d;
    };
    out.push_back(eng("eager_limit", params::Type::Size, "0", WEFT_LEVEL_TUNER_BASIC,
                      "Largest message sent eagerly (in one active message, copied on arrival); larger "
                      "ones use the rendezvous protocol. 0 takes each transport's own eager limit; "
                      "a value caps it."));
    out.push_back(eng("eager_window", params::Type::Size, "4M", WEFT_LEVEL_TUNER_DETAIL,
                      "Eager bytes a process may have sent to one peer and not yet seen consumed; "
                      "past it messages go by rendezvous until the peer returns credit. Bounds the "
                      "memory a peer's unexpected messages can take."));
    // 512k: over btl/tcp's two links a 1 MiB message is then one chunk per
    // link; against 256k, loopback 1 MiB ping-pong 184 -> 146 us and 1-4 MiB
    // bandwidth 5.4 -> 6.7 GB/s (1m chunks were slower again, 6.4 GB/s).
    out.push_back(eng("rndv_chunk", params::Type::Size, "512k", WEFT_LEVEL_TUNER_DETAIL,
                      "Chunk size of rendezvous data and get replies sent as messages (when the "
                      "transport cannot read the sender's memory directly)."));
    out.push_back(eng("rndv_rdma", params::Type::Bool, "true", WEFT_LEVEL_TUNER_DETAIL,
                      "Let the target of a rendezvous read the data directly from the sender's memory "
                      "(RDMA get, single copy) when the transport can; false always sends it in "
                      "chunks."));
    out.push_back(eng("rndv_split", params::Type::Size, "64k", WEFT_LEVEL_TUNER_DETAIL,
                      "Rendezvous messages of at least this size, on a transport that can both read "
                      "and write the peer's memory, are moved by both sides at once: the target reads "
                      "the first half while the sender writes the second (two cores copying instead of "
                      "one). 0 disables it."));
    out.push_back(eng("finalize_timeout", params::Type::Double, "10", WEFT_LEVEL_TUNER_DETAIL,
                      "Seconds weft_finalize waits for this process's unfinished operations before "
                      "giving up with an error naming them."));
    return out;
}

} // namespace weft::rt
