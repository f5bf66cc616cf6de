// SPDX-License-Identifier: BSD-3-Clause
// The C API of weft.h for the process (init, finalize, job and peer
// information, connect, progress, barrier, abort) over the C++ runtime:
// status codes out, the message of the last failure kept per thread
// (engine/api_error.hpp), no exception ever crosses. Messaging is in
// engine/messaging_api.cc.
#include <weft.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <unistd.h>

#include "engine/api_error.hpp"
#include "engine/engine.hpp"
#include "log/log.hpp"
#include "rte/abort_note.hpp"
#include "rte/runtime.hpp"

using weft::Status;
using weft::rt::Runtime;

namespace {

int fail(const Status &st) { return weft::api_fail(st); }

int not_initialized(const char *fn)
{
    return fail(Status(WEFT_ERR_NOT_AVAILABLE, std::string(fn) + ": call weft_init first"));
}

void copy(char *dst, size_t n, const std::string &src) { std::snprintf(dst, n, "%s", src.c_str()); }

template <class T>
bool size_ok(const T *p)
{
    return p && p->size >= sizeof(T);
}

} // namespace

extern "C" {

int weft_init(int *, char ***)
{
    auto rt = Runtime::init();
    return rt.ok() ? WEFT_SUCCESS : fail(rt.status());
}

int weft_finalize(void)
{
    Status st = Runtime::finalize();
    return st.ok() ? WEFT_SUCCESS : fail(st);
}

int weft_initialized(void) { return Runtime::current() != nullptr; }

int weft_job_info(weft_job_info_t *info)
{
    Runtime *rt = Runtime::current();
    if (!rt)
        return not_initialized("weft_job_info");
    if (!size_ok(info))
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_job_info: info->size must be sizeof(weft_job_info_t)"));
    auto &p = rt->pmix();
    info->rank = p.rank();
    info->job_size = p.size();
    info->local_rank = p.local_rank();
    info->local_size = p.local_size();
    info->node_id = p.node_id();
    info->num_nodes = p.num_nodes();
    info->singleton = p.singleton();
    copy(info->nspace, sizeof info->nspace, p.nspace());
    copy(info->hostname, sizeof info->hostname, p.hostname());
    copy(info->progress_mode, sizeof info->progress_mode,
         weft::rt::progress_mode_name(rt->progress().effective_mode()));
    return WEFT_SUCCESS;
}

int weft_rank(void) { return Runtime::current() ? static_cast<int>(Runtime::current()->pmix().rank()) : -1; }
int weft_size(void) { return Runtime::current() ? static_cast<int>(Runtime::current()->pmix().size()) : -1; }

int weft_peer_info(uint32_t rank, weft_peer_info_t *info)
{
    Runtime *rt = Runtime::current();
    if (!rt)
        return not_initialized("weft_peer_info");
    if (!size_ok(info))
        return fail(Status(WEFT_ERR_BAD_PARAM, "weft_peer_info: info->size must be sizeof(weft_peer_info_t)"));
    auto r = rt->endpoints().resolve(rank);
    if (!r.ok())
        return fail(r.status());
    const weft::rt::Peer &p = *r.value();
    info->rank = p.rank;
    info->node_id = p.node_id;
    info->peer_class = p.peer_class;
    info->cards_found = static_cast<uint32_t>(p.cards_found);
    info->modules = static_cast<uint32_t>(rt->btl().modules().size());
    info->reachable = p.choice.reachable();
    copy(info->hostname, sizeof info->hostname, p.hostname);
    copy(info->transports, sizeof info->transports, p.choice.summary());
    copy(info->state, sizeof info->state, weft::rt::peer_state_name(p.state));
    copy(info->explanation, sizeof info->explanation,
         p.state == weft::rt::PeerState::Failed ? p.failure : p.choice.details());
    return WEFT_SUCCESS;
}

int weft_connect(uint32_t rank, int timeout_ms)
{
    Runtime *rt = Runtime::current();
    if (!rt)
        return not_initialized("weft_connect");
    auto t = timeout_ms < 0 ? rt->connect_timeout() : std::chrono::milliseconds(timeout_ms);
    Status st = rt->connect(rank, t);
    return st.ok() ? WEFT_SUCCESS : fail(st);
}

int weft_progress(void)
{
    Runtime *rt = Runtime::current();
    return rt ? rt->progress().progress() : not_initialized("weft_progress");
}

int weft_progress_wait(int *idle_passes)
{
    Runtime *rt = Runtime::current();
    if (!rt)
        return not_initialized("weft_progress_wait");
    if (!idle_passes)
        return WEFT_ERR_BAD_PARAM;
    return rt->progress().progress_wait(idle_passes);
}

int weft_barrier(void)
{
    Runtime *rt = Runtime::current();
    if (!rt)
        return not_initialized("weft_barrier");
    Status st = rt->engine().barrier();
    return st.ok() ? WEFT_SUCCESS : fail(st);
}

void weft_abort(int status, const char *message)
{
    // Whatever the program printed before deciding to abort is the
    // explanation the user needs: out of stdio's buffers before the
    // launcher's SIGTERM or our _exit can drop it.
    std::fflush(nullptr);
    std::string msg = message ? message : "";
    if (Runtime *rt = Runtime::current()) {
        rt->pmix().abort(status, msg + weft::rt::failed_peers_note(rt->failed_peers()));
    }
    // Singleton, or the launcher did not end us: end the process ourselves,
    // which is what the caller asked for.
    std::string line = "weft_abort(" + std::to_string(status) + ")" + (msg.empty() ? "" : ": " + msg) + "\n";
    weft::log::write_stderr(line);
    _exit(status & 0xff ? status & 0xff : 1);
}

} // extern "C"
