// SPDX-License-Identifier: BSD-3-Clause
// The engine's parameters (group "engine"), beside the engine. The runtime
// registers them with its own (rte/params.cc), so WEFT_MCA_engine_* names
// are known before unknown names are judged, and weft_info lists them.
#include "engine/params.hpp"

#include <algorithm>

namespace weft::engine {

namespace {

params::Definition def(const char *name, params::Type type, const char *dflt, int level, const char *help)
{
    return params::Definition{.framework = "engine", .component = "base", .name = name, .type = type,
                              .default_text = dflt, .level = level, .help = help, .enumerators = {},
                              .synonyms = {}, .deprecated = {}};
}

} // namespace

FrameworkInfo param_group()
{
    return {"engine", "messaging engine: portals, tagged messages, eager and rendezvous protocols"};
}

std::vector<params::Definition> param_definitions()
{
    std::vector<params::Definition> out;
    out.push_back(def("eager_limit", params::Type::Size, "0", WEFT_LEVEL_TUNER_BASIC,
                      "Largest message sent eagerly (in one active message, copied on arrival); larger "
                      "ones use the rendezvous protocol. 0 takes each transport's own eager limit, which a "
                      "transport may lower per connection (weftrun --report shows each peer's); a value "
                      "caps the transport's and replaces a connection's own."));
    out.push_back(def("eager_window", params::Type::Size, "4M", WEFT_LEVEL_TUNER_DETAIL,
                      "Eager bytes a process may have sent to one peer and not yet seen consumed; "
                      "past it messages go by rendezvous until the peer returns credit. Bounds the "
                      "memory a peer's unexpected messages can take."));
    // 512k: over btl/tcp's two links a 1 MiB message is then one chunk per
    // link; against 256k, loopback 1 MiB ping-pong 184 -> 146 us and 1-4 MiB
    // bandwidth 5.4 -> 6.7 GB/s (1m chunks were slower again, 6.4 GB/s).
    out.push_back(def("rndv_chunk", params::Type::Size, "512k", WEFT_LEVEL_TUNER_DETAIL,
                      "Chunk size of rendezvous data and get replies sent as messages (when the "
                      "transport cannot read the sender's memory directly)."));
    // 0: measured on the 2-vCPU VM (compare, tcp, 10 reps), 64k made 128k-1M
    // slower (latency vs ompi-tcp 1.10 -> 1.44 at 128k, 1.10 -> 1.65 at
    // 256k, 1.01 -> 1.29 at 1M): an Rts above btl/tcp's 64 KiB read buffer
    // is received into a buffer of its own and copied once more.
    out.push_back(def("rndv_first", params::Type::Size, "0", WEFT_LEVEL_TUNER_DETAIL,
                      "Bytes of a rendezvous message's data sent with its header when the data goes "
                      "in chunks (not read by RDMA): they land while the target's request for the "
                      "rest makes its round trip. Capped by the transport's largest message; they "
                      "count against engine_base_eager_window. 0 sends the header alone."));
    out.push_back(def("rndv_rdma", params::Type::Bool, "true", WEFT_LEVEL_TUNER_DETAIL,
                      "Let the target of a rendezvous read the data directly from the sender's memory "
                      "(RDMA get, single copy) when the transport can; false always sends it in "
                      "chunks."));
    out.push_back(def("rndv_split", params::Type::Size, "64k", WEFT_LEVEL_TUNER_DETAIL,
                      "Rendezvous messages of at least this size, on a transport that can both read "
                      "and write the peer's memory, are moved by both sides at once: the target reads "
                      "the first half while the sender writes the second (two cores copying instead of "
                      "one). Not in an exchange, where the target has a rendezvous of its own to the "
                      "sender in flight: the sender's core is busy reading it; not for a receive whose "
                      "data is read at once (WEFT_RECV_READ_AT_ONCE: the MPI reductions), which the "
                      "target's own copy puts in its cache; and not where ranks share cores (progress "
                      "mode yield or block). 0 disables it."));
    out.push_back(def("finalize_timeout", params::Type::Double, "10", WEFT_LEVEL_TUNER_DETAIL,
                      "Seconds weft_finalize waits for this process's unfinished operations before "
                      "giving up with an error naming them."));
    return out;
}

Config read_config(const params::Registry &params, uint32_t rank, uint32_t job_size)
{
    Config c;
    c.my_rank = rank;
    c.job_size = job_size;
    c.eager_limit_cap = params.find("engine_base_eager_limit")->as_size();
    c.eager_window = params.find("engine_base_eager_window")->as_size();
    c.chunk = std::max<size_t>(4096, params.find("engine_base_rndv_chunk")->as_size());
    c.rndv_first = params.find("engine_base_rndv_first")->as_size();
    c.rndv_rdma = params.find("engine_base_rndv_rdma")->as_bool();
    c.rndv_split = params.find("engine_base_rndv_split")->as_size();
    c.finalize_timeout = std::chrono::milliseconds(
        static_cast<int64_t>(params.find("engine_base_finalize_timeout")->as_double() * 1000));
    return c;
}

} // namespace weft::engine
