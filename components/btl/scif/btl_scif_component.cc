// SPDX-License-Identifier: BSD-3-Clause
// btl/scif: the on-node transport over the SCIF-like library of this
// directory (lib/weft/scif.h). This file holds the component entry points and
// parameters; the module is btl_scif_module.*, the library scif_*.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include <weft/btl_base.hpp>

#include "btl_scif_module.hpp"
#include "btl_scif_sendi.hpp"

namespace {

using weft::btl_scif::ScifConfig;
using weft::btl_scif::ScifModule;
using Modules = weft::btl::Modules<ScifModule>;

int scif_open_component(const weft_host_t *host);
int scif_query(const weft_host_t *host, weft_query_result_t *result);
int scif_init(const weft_host_t *host, weft_btl_module **modules, int max_modules,
              int *num_modules);

} // namespace

extern "C" WEFT_EXPORT const weft_btl_component_t weft_btl_scif_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "scif", 1, 0, 0),
             .open = scif_open_component, .query = scif_query,
             .finalize = Modules::finalize},
    .init = scif_init,
    .start_connect = Modules::start_connect,
};

namespace {

const weft_component_t *self() { return &weft_btl_scif_component.base; }

const weft::cutil::ParamSpec kParams[] = {
    {"priority", WEFT_PARAM_INT, "50", WEFT_LEVEL_TUNER_DETAIL,
     "Selection priority of btl/scif among transports that reach the same peer (higher wins)."},
    {"eager_limit", WEFT_PARAM_SIZE, "0", WEFT_LEVEL_TUNER_BASIC,
     "Largest message the runtime sends eagerly through the shared-memory ring (past 5k in "
     "fragments the receiver copies out while the next goes in); larger ones go by "
     "put/get, which copy once with process_vm_readv. 0: a 32nd of the ring, from 4k to 64k, "
     "and at most 32k toward a peer process_vm_readv reaches, past which btl_scif_eager_if_room "
     "applies (16k and no eager_if_room where that call is cheap: btl_scif_single_copy_call_us; "
     "weftrun --report shows each peer's)."},
    {"eager_if_room", WEFT_PARAM_BOOL, "true", WEFT_LEVEL_TUNER_DETAIL,
     "Toward a peer process_vm_readv reaches, when the eager limit is left automatic: messages "
     "past it up to the ring's own limit (64k with 2M rings) still stream through the ring when "
     "it has room for the whole message at once, and go by rendezvous when it has not (a full "
     "ring would queue them by copy). false: always by rendezvous."},
    {"stream_from", WEFT_PARAM_SIZE, "5k", WEFT_LEVEL_TUNER_DETAIL,
     "Eager messages longer than this go through the ring as fragments (of 2k up to "
     "btl_scif_stream_fragment, of btl_scif_stream_fragment bytes past it), each published as "
     "soon as it is written, so the receiver copies one out while the next goes in; shorter ones "
     "are one chunk, copied in whole first (1k to 16M)."},
    {"stream_reply_from", WEFT_PARAM_SIZE, "3k", WEFT_LEVEL_TUNER_DETAIL,
     "Eager messages longer than this that answer the peer (nothing sent on the connection since "
     "its last message came) are streamed too, in two fragments up to 4k: the peer most likely "
     "waits for them. Messages sent one after another stay one chunk up to btl_scif_stream_from "
     "(1k to 16M; at or above btl_scif_stream_from it changes nothing)."},
    {"stream_fragment", WEFT_PARAM_SIZE, "16k", WEFT_LEVEL_TUNER_DETAIL,
     "Data bytes per fragment of a streamed message longer than this (4k to 1M; at most what one "
     "ring chunk holds): smaller fragments start the receiver's copy sooner, larger ones cost "
     "fewer handoffs."},
    {"single_copy_call_us", WEFT_PARAM_DOUBLE, "0", WEFT_LEVEL_TUNER_DETAIL,
     "Microseconds one process_vm_readv call costs before it copies: under 1.25, the "
     "rendezvous (one copy) takes messages past 16k toward peers it reaches and "
     "btl_scif_eager_if_room is off; from 1.25 on, the eager limit toward them is 32k and "
     "eager_if_room applies. 0: timed at start-up (the least of 16 calls of 64 bytes)."},
    {"max_send", WEFT_PARAM_SIZE, "16M", WEFT_LEVEL_TUNER_DETAIL,
     "Largest payload of one send(); messages larger than one ring chunk travel as fragments."},
    {"ring_size", WEFT_PARAM_SIZE, "0", WEFT_LEVEL_TUNER_DETAIL,
     "Bytes of each per-peer receive ring (a power of two, 4k to 64M); bigger rings absorb "
     "bursts and carry larger eager messages, smaller ones save memory with many local peers. "
     "0: sized for the job, 2M with up to 16 local processes, halved as they grow (32M of "
     "rings per process at most), 64k at least."},
    {"max_ring_size", WEFT_PARAM_SIZE, "0", WEFT_LEVEL_TUNER_DETAIL,
     "Largest receive ring a connecting process may ask this one to map (bytes per direction; "
     "larger requests are refused). 0: this process's own btl_scif_ring_size, so every process "
     "of a job must use the same ring size."},
    {"handshake_timeout", WEFT_PARAM_DOUBLE, "10", WEFT_LEVEL_TUNER_DETAIL,
     "Seconds an incoming connection may take to send its connect request and its hello; slower "
     "ones are closed and counted as refused."},
    {"max_pending", WEFT_PARAM_INT, "64", WEFT_LEVEL_TUNER_DETAIL,
     "Incoming connections that may wait unauthenticated at once (no connect request or no "
     "hello yet); a new one past that closes the oldest (counted as refused)."},
};

int scif_open_component(const weft_host_t *host)
{
    return weft::cutil::register_params(host, self(), kParams);
}

int scif_query(const weft_host_t *host, weft_query_result_t *result)
{
    int64_t priority = 50;
    host->param_get_int("btl_scif_priority", &priority);
    result->priority = static_cast<int>(priority);
    // A real attempt, not an assumption: containers may forbid memfd.
    int fd = memfd_create("weft-scif-query", MFD_CLOEXEC);
    if (fd < 0) {
        weft::cutil::set_reason(result, "memfd_create failed here (seccomp or an old kernel); "
                                        "btl/scif needs it for its rings");
        return WEFT_SUCCESS;
    }
    close(fd);
    result->available = 1;
    weft::cutil::set_reason(result, "shared-memory rings to processes of this user on this node");
    return WEFT_SUCCESS;
}

int refuse(const weft_host_t *host, const char *name, uint64_t value, const char *accepted)
{
    const std::string text = std::to_string(value);
    const char *args[] = {"name", name, "value", text.c_str(), "accepted", accepted, nullptr};
    host->show_help(self(), "bad-limit", args);
    return WEFT_ERR_BAD_VALUE;
}

int read_config(const weft_host_t *host, ScifConfig *config)
{
    int64_t priority = config->priority;
    uint64_t eager = config->eager_limit, max_send = config->max_send, ring = config->ring_size;
    uint64_t max_ring = config->max_ring_size;
    double handshake = config->handshake_timeout;
    int64_t max_pending = static_cast<int64_t>(config->max_pending);
    host->param_get_size("btl_scif_max_ring_size", &max_ring);
    host->param_get_double("btl_scif_handshake_timeout", &handshake);
    host->param_get_int("btl_scif_max_pending", &max_pending);
    if (max_ring != 0 && (max_ring < 4096 || max_ring > (uint64_t{64} << 20)))
        return refuse(host, "btl_scif_max_ring_size", max_ring, "0 or 4k to 64M");
    if (!(handshake > 0) || handshake > 86400)
        return refuse(host, "btl_scif_handshake_timeout", static_cast<uint64_t>(handshake),
                      "seconds above 0, at most 86400");
    if (max_pending < 1 || max_pending > 65536)
        return refuse(host, "btl_scif_max_pending", static_cast<uint64_t>(max_pending), "1 to 65536");
    uint64_t stream_from = config->stream_from, stream_fragment = config->stream_fragment;
    uint64_t stream_reply_from = config->stream_reply_from;
    host->param_get_size("btl_scif_stream_from", &stream_from);
    host->param_get_size("btl_scif_stream_reply_from", &stream_reply_from);
    host->param_get_size("btl_scif_stream_fragment", &stream_fragment);
    if (stream_from < 1024 || stream_from > (uint64_t{16} << 20))
        return refuse(host, "btl_scif_stream_from", stream_from, "1k to 16M");
    if (stream_reply_from < 1024 || stream_reply_from > (uint64_t{16} << 20))
        return refuse(host, "btl_scif_stream_reply_from", stream_reply_from, "1k to 16M");
    if (stream_fragment < 4096 || stream_fragment > (uint64_t{1} << 20))
        return refuse(host, "btl_scif_stream_fragment", stream_fragment, "4k to 1M");
    double call_us = config->single_copy_call_us;
    host->param_get_double("btl_scif_single_copy_call_us", &call_us);
    if (!(call_us >= 0) || call_us > 1e6)
        return refuse(host, "btl_scif_single_copy_call_us", static_cast<uint64_t>(call_us > 0 ? call_us : 0),
                      "0 to 1000000");
    config->single_copy_call_us = call_us;
    config->stream_from = stream_from;
    config->stream_reply_from = stream_reply_from;
    config->stream_fragment = stream_fragment;
    config->max_ring_size = max_ring;
    config->handshake_timeout = handshake;
    config->max_pending = static_cast<size_t>(max_pending);
    host->param_get_int("btl_scif_priority", &priority);
    int if_room = config->eager_if_room ? 1 : 0;
    host->param_get_bool("btl_scif_eager_if_room", &if_room);
    config->eager_if_room = if_room != 0;
    host->param_get_size("btl_scif_eager_limit", &eager);
    host->param_get_size("btl_scif_max_send", &max_send);
    host->param_get_size("btl_scif_ring_size", &ring);
    config->auto_ring = ring == 0;
    config->auto_eager = eager == 0;
    if (config->auto_ring)
        ring = config->ring_size;   // until the job is known
    if (config->auto_eager)
        eager = std::min<uint64_t>(config->eager_limit, ring / 2 - 128);
    if (ring < 4096 || ring > (uint64_t{64} << 20) || (ring & (ring - 1)) != 0)
        return refuse(host, "btl_scif_ring_size", ring, "0 or a power of two from 4k to 64M");
    // A chunk may take at most half the ring (see scif_ring.hpp).
    const uint64_t chunk_max = config->auto_ring ? (uint64_t{64} << 20) / 2 - 128 : ring / 2 - 128;
    if (eager < 64 || eager > chunk_max)
        return refuse(host, "btl_scif_eager_limit", eager,
                      ("64 up to half of btl_scif_ring_size minus 128 (" +
                       std::to_string(chunk_max) + ")").c_str());
    if (max_send < eager)
        return refuse(host, "btl_scif_max_send", max_send, "at least btl_scif_eager_limit");
    config->priority = static_cast<int>(priority);
    config->eager_limit = eager;
    config->max_send = max_send;
    config->ring_size = ring;
    return WEFT_SUCCESS;
}

int scif_init(const weft_host_t *host, weft_btl_module **modules, int max_modules,
              int *num_modules)
{
    return Modules::init_one(host, self(), modules, max_modules, num_modules,
                             [&](std::unique_ptr<ScifModule> &m) {
                                 ScifConfig config;
                                 if (int rc = read_config(host, &config); rc != WEFT_SUCCESS)
                                     return rc;
                                 m = std::make_unique<ScifModule>(host, &weft_btl_scif_component, config);
                                 return static_cast<int>(WEFT_SUCCESS);
                             });
}

} // namespace
