// SPDX-License-Identifier: BSD-3-Clause
// The observability part of weft.h: parameters by index (readable and
// settable before weft_init, which MPI_T_init_thread needs) and the
// counters of the process's counter page by name (weft/counters.h).
#include <weft.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/framework.hpp"
#include "engine/api_error.hpp"
#include "engine/counters.hpp"
#include "rte/runtime.hpp"

using weft::Status;

namespace weft::rt {

namespace {

// weft_params_open calls not yet closed.
std::mutex g_params_mutex;
int g_params_users = 0;

int fail(const Status &st) { return weft::api_fail(st); }

const params::Param *param_at(int index)
{
    Framework *fw = Framework::current();
    if (!fw || index < 0)
        return nullptr;
    const auto all = fw->params().all();
    return static_cast<size_t>(index) < all.size() ? all[static_cast<size_t>(index)] : nullptr;
}

weft_param_type_t c_type(params::Type t)
{
    switch (t) {
    case params::Type::Bool: return WEFT_PARAM_BOOL;
    case params::Type::Int: return WEFT_PARAM_INT;
    case params::Type::Size: return WEFT_PARAM_SIZE;
    case params::Type::Double: return WEFT_PARAM_DOUBLE;
    case params::Type::Enum: return WEFT_PARAM_ENUM;
    case params::Type::List: return WEFT_PARAM_LIST;
    case params::Type::String: break;
    }
    return WEFT_PARAM_STRING;
}

// ---- counters: one row per name, with where its value lives.

struct CounterRow {
    const char *name, *description, *unit;
    weft_counter_scope_t scope;
    weft_counter_kind_t kind;
    size_t offset;   // in the scope's struct
};

#define PROC(m, d, u, k) {"process_" #m, d, u, WEFT_COUNTER_PROCESS, k, offsetof(weft_process_counters_t, m)}
#define PEER(n, m, d, u, k) {"peer_" n, d, u, WEFT_COUNTER_PEER, k, offsetof(weft_peer_counters_t, m)}
#define TRAFFIC(dir, done, proto, idx, what)                                                            \
    PEER(#proto "_" #dir "_msgs", dir.msgs[idx], "messages " done " " what, "messages", WEFT_COUNTER_COUNT), \
        PEER(#proto "_" #dir "_bytes", dir.bytes[idx], "bytes " done " " what, "bytes", WEFT_COUNTER_COUNT)
#define MODULE(m, d, u) {"module_" #m, d, u, WEFT_COUNTER_MODULE, WEFT_COUNTER_COUNT, offsetof(weft_btl_counters_t, m)}

constexpr CounterRow kCounters[] = {
    PROC(unexpected_msgs, "messages that arrived before their receive was posted", "messages", WEFT_COUNTER_COUNT),
    PROC(unexpected_depth, "messages waiting in the unexpected queues now", "messages", WEFT_COUNTER_LEVEL),
    PROC(unexpected_hwm, "the most messages the unexpected queues ever held", "messages", WEFT_COUNTER_HIGHWATER),
    PROC(dropped, "puts that no match entry accepted", "messages", WEFT_COUNTER_COUNT),
    PROC(rejected, "malformed or unexpected frames from peers", "frames", WEFT_COUNTER_COUNT),
    TRAFFIC(sent, "sent to it", eager, WEFT_PROTO_EAGER, "eagerly (inline or eager send)"),
    TRAFFIC(sent, "sent to it", rndv_rdma, WEFT_PROTO_RNDV_RDMA, "by rendezvous, the data read by RDMA"),
    TRAFFIC(sent, "sent to it", rndv_chunks, WEFT_PROTO_RNDV_CHUNKS, "by rendezvous, the data in chunks"),
    TRAFFIC(recv, "received from it", eager, WEFT_PROTO_EAGER, "eagerly (inline or eager send)"),
    TRAFFIC(recv, "received from it", rndv_rdma, WEFT_PROTO_RNDV_RDMA, "by rendezvous, the data read by RDMA"),
    TRAFFIC(recv, "received from it", rndv_chunks, WEFT_PROTO_RNDV_CHUNKS, "by rendezvous, the data in chunks"),
    PEER("unexpected_msgs", unexpected_msgs, "its messages that arrived before their receive", "messages",
         WEFT_COUNTER_COUNT),
    PEER("credit_stalls", credit_stalls, "sends past its eager window (they went by rendezvous)", "messages",
         WEFT_COUNTER_COUNT),
    PEER("again", again, "frames to it a transport answered AGAIN (queued and retried)", "events",
         WEFT_COUNTER_COUNT),
    PEER("rndv_ns", rndv_ns, "time its rendezvous messages took to land here, from the match to the last byte", "ns",
         WEFT_COUNTER_COUNT),
    PEER("rdma_fallbacks", rdma_fallbacks, "rendezvous receives whose RDMA read could not start (chunks instead)",
         "messages", WEFT_COUNTER_COUNT),
    PEER("connects", connects, "times it became connected", "events", WEFT_COUNTER_COUNT),
    PEER("connect_ns", connect_ns, "its last connection's time from first use to connected", "ns",
         WEFT_COUNTER_LEVEL),
    PEER("failures", failures, "times its connection failed", "events", WEFT_COUNTER_COUNT),
    PEER("eager_limit", eager_limit, "largest message sent to it eagerly (0: not connected yet)", "bytes",
         WEFT_COUNTER_LEVEL),
    PEER("eager_if_room", eager_if_room,
         "past eager_limit, messages up to this go eagerly when the transport takes them at once, else by "
         "rendezvous (0: none)",
         "bytes", WEFT_COUNTER_LEVEL),
    MODULE(connects, "endpoints the module connected (either side began)", "events"),
    MODULE(failures, "endpoints of the module that failed", "events"),
    MODULE(again, "AGAIN answers of the module (ring, socket or queue full)", "events"),
    MODULE(registrations, "memory registrations the module made", "events"),
    MODULE(reg_cache_hits, "registrations answered from the module's cache", "events"),
    MODULE(rdma_ops, "RDMA operations the module started", "operations"),
    MODULE(rdma_bytes, "bytes of the RDMA operations the module started", "bytes"),
};
constexpr int kNumCounters = static_cast<int>(std::size(kCounters));

#undef PROC
#undef PEER
#undef TRAFFIC
#undef MODULE

engine::CounterPage *live_page()
{
    Runtime *rt = Runtime::current();
    return rt ? rt->counters() : nullptr;
}

} // namespace

int params_users()
{
    std::lock_guard lock(g_params_mutex);
    return g_params_users;
}

} // namespace weft::rt

using namespace weft::rt;

extern "C" {

int weft_params_open(void)
{
    std::lock_guard lock(g_params_mutex);
    if (!weft::Framework::current()) {
        weft::InitOptions opts;
        opts.extra_groups = param_groups();
        opts.extra_params = param_definitions();
        opts.warn_unknown = false;   // weft_init's rank 0 speaks for the job
        auto fw = weft::Framework::init(opts);
        if (!fw.ok())
            return fail(Status(fw.status().code(), "weft_params_open: " + fw.status().message()));
    }
    ++g_params_users;
    return WEFT_SUCCESS;
}

int weft_params_close(void)
{
    std::lock_guard lock(g_params_mutex);
    if (g_params_users == 0)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_params_close: no weft_params_open to close"));
    // The framework goes with the last close, unless a runtime still runs
    // on it (weft_finalize then finalizes it).
    if (--g_params_users == 0 && !Runtime::current() && weft::Framework::current())
        weft::Framework::finalize();
    return WEFT_SUCCESS;
}

int weft_param_count(void)
{
    weft::Framework *fw = weft::Framework::current();
    return fw ? static_cast<int>(fw->params().all().size()) : 0;
}

int weft_param_describe(int index, weft_param_desc_t *desc)
{
    const weft::params::Param *p = param_at(index);
    if (!p || !desc || desc->size < sizeof *desc)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_param_describe: index " + std::to_string(index) +
                                                   " is not a parameter (weft_param_count) or desc is "
                                                   "NULL or its size is not set"));
    desc->name = p->full_name().c_str();
    desc->framework = p->def().framework.c_str();
    desc->component = p->def().component.c_str();
    desc->help = p->def().help.c_str();
    desc->type = c_type(p->type());
    desc->level = p->def().level;
    desc->settable = Runtime::current() == nullptr;
    return WEFT_SUCCESS;
}

int weft_param_get(int index, char *value, size_t len, const char **source)
{
    const weft::params::Param *p = param_at(index);
    if (!p || (!value && len))
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_param_get: index " + std::to_string(index) +
                                                   " is not a parameter, or value is NULL"));
    if (source)
        *source = weft::params::source_name(p->origin().source);
    if (len) {
        std::snprintf(value, len, "%s", p->text().c_str());
        if (p->text().size() >= len)
            return WEFT_ERR_TRUNCATED;
    }
    return WEFT_SUCCESS;
}

int weft_param_set(int index, const char *value)
{
    const weft::params::Param *p = param_at(index);
    if (!p || !value)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_param_set: index " + std::to_string(index) +
                                                   " is not a parameter, or value is NULL"));
    if (Runtime::current())
        return fail(Status(WEFT_ERR_NOT_AVAILABLE, "weft_param_set " + p->full_name() +
                                                       ": parameters are read by weft_init; set it before "
                                                       "(weft_params_open) or in the environment"));
    weft::params::Origin origin;
    origin.source = weft::params::Source::Api;
    if (Status st = weft::Framework::current()->params().set(p->full_name(), value, origin); !st.ok())
        return fail(st);
    return WEFT_SUCCESS;
}

int weft_counter_count(void) { return kNumCounters; }

int weft_counter_describe(int index, weft_counter_desc_t *desc)
{
    if (index < 0 || index >= kNumCounters || !desc || desc->size < sizeof *desc)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_counter_describe: index " + std::to_string(index) +
                                                   " is not a counter (weft_counter_count) or desc is "
                                                   "NULL or its size is not set"));
    const CounterRow &c = kCounters[index];
    desc->name = c.name;
    desc->description = c.description;
    desc->unit = c.unit;
    desc->scope = c.scope;
    desc->kind = c.kind;
    return WEFT_SUCCESS;
}

int weft_counter_read(int index, uint32_t which, uint64_t *value)
{
    if (index < 0 || index >= kNumCounters || !value)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_counter_read: index " + std::to_string(index) +
                                                   " is not a counter, or value is NULL"));
    weft::engine::CounterPage *page = live_page();
    if (!page)
        return fail(Status(WEFT_ERR_NOT_AVAILABLE, "weft_counter_read: call weft_init first"));
    const CounterRow &c = kCounters[index];
    const weft_counters_header_t &h = page->header();
    const std::byte *base = nullptr;
    switch (c.scope) {
    case WEFT_COUNTER_PROCESS:
        base = reinterpret_cast<const std::byte *>(&page->process());
        break;
    case WEFT_COUNTER_PEER:
        if (which >= h.peer_count)
            return fail(Status(WEFT_ERR_BAD_PARAM, "weft_counter_read " + std::string(c.name) + ": rank " +
                                                       std::to_string(which) + " is not in the job"));
        base = reinterpret_cast<const std::byte *>(&page->peer(which));
        break;
    case WEFT_COUNTER_MODULE:
        if (which >= h.module_count)
            return fail(Status(WEFT_ERR_BAD_PARAM, "weft_counter_read " + std::string(c.name) + ": module " +
                                                       std::to_string(which) + " does not exist (" +
                                                       std::to_string(h.module_count) + " modules)"));
        base = reinterpret_cast<const std::byte *>(&page->module(which).btl);
        break;
    }
    // Relaxed: MPI_T may read while another thread's engine counts.
    *value = __atomic_load_n(reinterpret_cast<const uint64_t *>(base + c.offset), __ATOMIC_RELAXED);
    return WEFT_SUCCESS;
}

int weft_counter_modules(void)
{
    weft::engine::CounterPage *page = live_page();
    return page ? static_cast<int>(page->header().module_count) : 0;
}

int weft_counter_module_name(uint32_t module, char *name, size_t len)
{
    weft::engine::CounterPage *page = live_page();
    if (!page || module >= page->header().module_count || !name || !len)
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_counter_module_name: module " + std::to_string(module) +
                                                   " does not exist (weft_counter_modules), or no buffer"));
    std::snprintf(name, len, "%s", page->module(module).name);
    return WEFT_SUCCESS;
}

} // extern "C"
