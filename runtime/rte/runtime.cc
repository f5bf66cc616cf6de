// SPDX-License-Identifier: BSD-3-Clause
#include "rte/runtime.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "engine/engine.hpp"
#include "rte/report.hpp"
#include "log/log.hpp"

namespace weft::rt {

namespace {
// Owned here, but deliberately not a static unique_ptr: a program that
// exits without weft_finalize() must not run the teardown from static
// destructors (PMIx's thread is still running and the component libraries
// may already be gone); the launcher reports the missing finalize instead.
// Holder::release() in finalize() is the only delete.
struct Holder {
    Runtime *ptr = nullptr;
    Runtime *get() const { return ptr; }
    explicit operator bool() const { return ptr != nullptr; }
    Runtime *operator->() const { return ptr; }
    Runtime &operator*() const { return *ptr; }
    void reset(Runtime *r = nullptr)
    {
        delete ptr;
        ptr = r;
    }
} g_runtime;
} // namespace

Runtime *Runtime::current() { return g_runtime.get(); }

Result<Runtime *> Runtime::init()
{
    if (g_runtime)
        return Status(WEFT_ERR_EXISTS, "weft_init: the runtime is already initialized in this process");
    g_runtime.reset(new Runtime());
    if (Status st = g_runtime->setup(); !st.ok()) {
        (void)finalize();
        return st;
    }
    return g_runtime.get();
}

Status Runtime::setup()
{
    // PMIx first: the rank decides who warns about unknown parameter names
    // (rank 0, once per job, not once per process).
    if (Status st = pmix_.init(); !st.ok())
        return st;
    InitOptions opts;
    opts.extra_groups = param_groups();
    opts.extra_params = param_definitions();
    opts.warn_unknown = pmix_.rank() == 0;
    // weft_params_open (MPI_T before MPI_Init) may have opened it, with
    // what its caller set: that is the framework this process runs with.
    if (Framework *open = Framework::current())
        fw_ = open;
    else {
        auto fw = Framework::init(opts);
        if (!fw.ok())
            return fw.status();
        fw_ = fw.value();
    }
    connect_timeout_ = std::chrono::milliseconds(
        static_cast<int64_t>(fw_->params().find("rte_base_connect_timeout")->as_double() * 1000));
    // A launched rank's stdout is a pipe to the launcher or a file shared by
    // the job: stdio would buffer it fully, and a rank that is killed or
    // aborts would lose what it printed. Lines, as users expect from mpirun
    // (a terminal is line-buffered already).
    if (!pmix_.singleton() && fw_->params().find("rte_base_line_buffered")->as_bool() && !isatty(STDOUT_FILENO)) {
        std::fflush(stdout);
        std::setvbuf(stdout, nullptr, _IOLBF, 0);
    }

    weft_btl_upcalls_t up{};
    up.size = sizeof up;
    up.ctx = this;
    up.recv = up_recv;
    up.state = up_state;
    up.accepted = up_accepted;
    up.place = up_place;
    up.placed = up_placed;
    process_.size = sizeof process_;
    process_.rank = pmix_.rank();
    process_.job_size = pmix_.size();
    process_.node_id = pmix_.node_id();
    process_.local_rank = pmix_.local_rank();
    process_.local_size = pmix_.local_size();
    process_.job_id = pmix_.nspace().c_str();
    process_.hostname = pmix_.hostname().c_str();
    process_.card_ctx = this;
    process_.peer_card = up_peer_card;
    process_.node_cores = node_cores();
    if (Status st = btl_.open(*fw_, up, &process_); !st.ok())
        return st;
    endpoints_ = std::make_unique<Endpoints>(pmix_, btl_, fw_->logger());
    for (const auto &om : btl_.modules()) {
        int fd = weft_btl_wait_fd(om.module);
        if (fd < 0 && (om.module->caps.flags & WEFT_BTL_FLAG_LOCAL_ONLY))
            fd = ProgressEngine::kNoWake;   // nothing arrives from elsewhere
        // Modules that wait on descriptors poll with a system call:
        // rarely until they carry a connected peer (note_in_use).
        const bool cold = fd >= 0;
        if (cold)
            cold_modules_.push_back(om.module);
        // A process alone in its job never gets a first contact.
        const unsigned every = pmix_.size() > 1 ? kColdPollEveryAtStart : kColdPollEvery;
        progress_.add(poll_module, om.module, fd, cold ? every : 1,
                      WEFT_BTL_HAS_OP(om.module, prepare_wait) ? prepare_module : nullptr);
    }
    if (!pmix_.singleton())
        progress_.add(poll_events, this, pmix_.event_fd(), kEventsPollEvery);
    if (Status st = choose_progress_mode(); !st.ok())
        return st;

    endpoints_->set_failed_callback(
        [](void *ctx, uint32_t rank, const std::string &why) {
            auto *rt = static_cast<Runtime *>(ctx);
            rt->failed_peers_.push_back(rank);
            if (rt->failed_fn_)
                rt->failed_fn_(rt->failed_ctx_, rank, why);
        },
        this);
    endpoints_->set_connecting_callback(
        [](void *ctx, weft_btl_module_t *m) { static_cast<Runtime *>(ctx)->note_in_use(m); }, this);
    // While a handshake is under way, or before any module carries a peer
    // (a peer's first contact may be on its way), a busy wait yields at
    // once (see set_yield_hint): the first round trip to a peer had a 1 ms
    // mode (7 of 12 jobs on the 2-vCPU VM), a PMIx_Get on one side (the
    // acceptor's of the connector's card, or the connector's of the
    // acceptor's) waiting for the server's thread, queued behind the other
    // side's spinning rank.
    progress_.set_yield_hint(
        [](void *ctx) {
            const auto *rt = static_cast<Runtime *>(ctx);
            return !rt->any_in_use_ || rt->endpoints_->connecting() > 0;
        },
        this);
    engine::Config config = engine::read_config(fw_->params(), pmix_.rank(), pmix_.size());
    config.counter_modules = btl_.modules().size();
    config.job_id = pmix_.nspace();
    engine_ = std::make_unique<engine::Engine>(*this, config);
    if (Status st = engine_->init(); !st.ok())
        return st;
    attach_counters();

    if (Status st = btl_.publish_cards(pmix_); !st.ok())
        return st;
    if (Status st = exchange_cards(); !st.ok())
        return st;
    // Every card is readable now (here or on first get): modules that wire
    // their peers at init (openib's oob cpc) finish here, before weft_init
    // returns on any rank that could send to them.
    modex_done_ = true;
    btl_.modex_ready(fw_->logger());
    if (fw_->logger().enabled("rte", WEFT_LOG_INFO))
        fw_->logger().write("rte", "base", WEFT_LOG_INFO,
                            "rank " + std::to_string(pmix_.rank()) + " of " + std::to_string(pmix_.size()) +
                                (pmix_.singleton() ? " (singleton)" : " in " + pmix_.nspace()) +
                                ", node " + std::to_string(pmix_.node_id()) + ", local rank " +
                                std::to_string(pmix_.local_rank()) + " of " +
                                std::to_string(pmix_.local_size()) + "; progress " +
                                progress_mode_name(progress_.effective_mode()) + " (" +
                                progress_.reason() + ")");
    if (fw_->params().find("rte_base_preconnect")->as_bool())
        return preconnect();
    return Status::success();
}

Status Runtime::exchange_cards()
{
    const std::string setting = fw_->params().find("rte_base_modex")->as_string();
    direct_modex_ = setting != "full";
    std::string why = setting == "full" ? "rte_base_modex=full" : "rte_base_modex=" + setting;
    if (direct_modex_) {
        if (std::string obstacle = pmix_.direct_modex_obstacle(); !obstacle.empty()) {
            direct_modex_ = false;
            why += ", but " + obstacle + ": full";
        }
    }
    // Direct still fences, without data: every rank has committed its cards
    // before anyone asks, so a first contact is one fetch. Without the fence
    // a get can arrive before the peer's commit, and PMIx 4.2.2's server
    // then left some waiting for good (ranks of a 24-rank job under weftrun
    // blocked in PMIx_Get for a peer that had committed).
    log::Logger &log = fw_->logger();
    if (log.enabled("rte", WEFT_LOG_DEBUG))
        log.write("rte", "base", WEFT_LOG_DEBUG,
                  std::string("modex: ") + (direct_modex_ ? "direct" : "full") + " (" + why + "); " +
                      (direct_modex_ ? "a fence without data, cards fetched on first contact"
                                     : "a fence collecting every card"));
    return pmix_.fence(!direct_modex_);
}

// Every module gets its block of the engine's counter page (before any
// connection: the modex fence comes later), and the endpoints count
// connection events into it.
void Runtime::attach_counters()
{
    counters_ = engine_->shared_counters();
    engine::CounterPage &page = *counters_;
    const auto &modules = btl_.modules();
    for (size_t i = 0; i < modules.size(); ++i) {
        weft_module_counters_t &mc = page.module(i);
        std::snprintf(mc.name, sizeof mc.name, "%s", modules[i].module->name);
        (void)weft_btl_attach_counters(modules[i].module, &mc.btl);   // without the op: nothing kept
    }
    endpoints_->set_counters(&page);
    if (page.fd() < 0)
        fw_->logger().write("rte", "base", WEFT_LOG_INFO,
                            "the counter page is private memory (" + page.why_private() +
                                "): no other process can read this rank's counters");
}

uint32_t Runtime::node_cores()
{
    // Only a shared node needs the count (the progress mode, and the
    // modules: weft_btl_process_t.node_cores): from weftrun, which counted
    // them already (WEFT_NODE_CORES), else from hwloc (whose plugins and
    // discovery are a few ms of a rank's start-up at least).
    if (node_cores_ != 0 || pmix_.local_size() <= 1)
        return node_cores_;
    if (const char *env = std::getenv("WEFT_NODE_CORES"))
        node_cores_ = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
    if (node_cores_ == 0) {
        auto topo = fw_->topology();
        if (topo.ok())
            node_cores_ = static_cast<uint32_t>(topo.value()->num_cores());
        if (node_cores_ == 0)
            node_cores_ = std::thread::hardware_concurrency();
    }
    return node_cores_;
}

Status Runtime::choose_progress_mode()
{
    const std::string setting = fw_->params().find("rte_base_progress")->as_string();
    const unsigned cores = setting == "auto" ? node_cores() : 0;
    std::string reason;
    ProgressMode m = decide_progress_mode(setting, pmix_.local_size(), cores, &reason);
    progress_.set_mode(m, reason);
    return Status::success();
}

Status Runtime::preconnect()
{
    for (uint32_t r = 0; r < pmix_.size(); ++r)
        if (Status st = endpoints_->start(r); !st.ok())
            return st;
    for (uint32_t r = 0; r < pmix_.size(); ++r) {
        if (!progress_.wait_until([&] { return endpoints_->settled(r); }, connect_timeout_))
            return Status(WEFT_ERR_UNREACHABLE,
                          "rte_base_preconnect: rank " + std::to_string(r) + " did not connect within " +
                              std::to_string(connect_timeout_.count()) +
                              " ms (rte_base_connect_timeout)");
        if (Status st = endpoints_->status_of(r); !st.ok())
            return st;
    }
    return Status::success();
}

Status Runtime::connect(uint32_t rank, std::chrono::milliseconds timeout)
{
    if (Status st = endpoints_->start(rank); !st.ok())
        return st;
    if (!progress_.wait_until([&] { return endpoints_->settled(rank); }, timeout))
        return Status(WEFT_ERR_AGAIN, "connection to rank " + std::to_string(rank) + " not complete after " +
                                          std::to_string(timeout.count()) + " ms");
    return endpoints_->status_of(rank);
}

Status Runtime::start_connect(uint32_t rank) { return endpoints_->start(rank); }

std::span<weft_btl_endpoint_t *const> Runtime::connected_endpoints(uint32_t rank)
{
    const Peer *p = endpoints_->peer(rank);
    if (!p || p->state != PeerState::Connected)
        return {};
    return p->endpoints;
}

void Runtime::set_peer_failed_handler(PeerFailedHandler fn, void *ctx)
{
    failed_fn_ = fn;
    failed_ctx_ = ctx;
}

Runtime::~Runtime() = default;

Status Runtime::set_handler(uint8_t am_id, AmHandler fn, void *ctx)
{
    if (handlers_[am_id].first && fn)
        return Status(WEFT_ERR_EXISTS, "active-message id " + std::to_string(am_id) + " already has a handler");
    handlers_[am_id] = {fn, ctx};
    return Status::success();
}

void Runtime::set_place_handler(uint8_t am_id, PlaceHandler place, PlacedHandler placed, void *ctx)
{
    placers_[am_id] = place && placed ? Placer{place, placed, ctx} : Placer{};
}

int Runtime::poll_module(void *ctx)
{
    auto *m = static_cast<weft_btl_module_t *>(ctx);
    return weft_btl_progress(m);
}

int Runtime::prepare_module(void *ctx)
{
    auto *m = static_cast<weft_btl_module_t *>(ctx);
    return weft_btl_prepare_wait(m);
}

int Runtime::poll_events(void *ctx)
{
    // Polled on every busy pass: the check is one load, the rest apart.
    auto *rt = static_cast<Runtime *>(ctx);
    return rt->pmix_.has_terminated() ? rt->take_terminations() : 0;
}

int Runtime::take_terminations()
{
    auto dead = pmix_.take_terminated();
    for (uint32_t r : dead)
        endpoints_->fail(r, "rank " + std::to_string(r) + " on " + pmix_.hostname_of(r) + " terminated (PMIx event)");
    return static_cast<int>(dead.size());
}

void Runtime::up_recv(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *data, size_t len)
{
    auto *rt = static_cast<Runtime *>(ctx);
    const auto &[fn, hctx] = rt->handlers_[am_id];
    if (fn) [[likely]]
        return fn(hctx, ep, data, len);
    rt->no_handler(ep, am_id);
}

void Runtime::no_handler(weft_btl_endpoint_t *ep, uint8_t am_id)
{
    fw_->logger().write("rte", "base", WEFT_LOG_WARN,
                        "dropped a message with active-message id " + std::to_string(am_id) + " from rank " +
                            std::to_string(ep->peer_rank) + ": no handler");
}

int Runtime::up_place(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *head, size_t head_len,
                      size_t len, weft_btl_placement_t *place)
{
    const Placer &p = static_cast<Runtime *>(ctx)->placers_[am_id];
    if (!p.place || !head || !place || !WEFT_HAS_MEMBER(place, weft_btl_placement_t, token))
        return 0;
    return p.place(p.ctx, ep, {static_cast<const std::byte *>(head), head_len}, len, place) == 1 ? 1 : 0;
}

void Runtime::up_placed(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, uint64_t token, int status)
{
    const Placer &p = static_cast<Runtime *>(ctx)->placers_[am_id];
    if (p.placed)
        p.placed(p.ctx, ep, token, status);
}

int Runtime::up_peer_card(void *ctx, weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len)
{
    auto *rt = static_cast<Runtime *>(ctx);
    if (!rt->modex_done_)
        return WEFT_ERR_BAD_PARAM;
    return rt->btl_.peer_card(rt->pmix_, m, rank, buf, len);
}

void Runtime::up_state(void *ctx, weft_btl_endpoint_t *ep, weft_btl_ep_state_t state, int status,
                       const char *reason)
{
    auto *rt = static_cast<Runtime *>(ctx);
    if (state == WEFT_BTL_EP_CONNECTED)
        rt->note_in_use(ep->module);
    rt->endpoints_->on_state(ep, state, status, reason);
}

void *Runtime::up_accepted(void *ctx, weft_btl_endpoint_t *ep)
{
    auto *rt = static_cast<Runtime *>(ctx);
    rt->note_in_use(ep->module);
    return rt->endpoints_->on_accepted(ep);
}

void Runtime::note_in_use(weft_btl_module_t *m)
{
    progress_.set_every(poll_module, m, 1);
    if (any_in_use_)
        return;
    // From now on a message's latency is at stake: the modules still
    // without a peer go to their rare polls.
    any_in_use_ = true;
    for (weft_btl_module_t *c : cold_modules_)
        if (c != m)
            progress_.set_every(poll_module, c, kColdPollEvery);
}

Status Runtime::finalize()
{
    if (!g_runtime)
        return Status(WEFT_ERR_NOT_FOUND, "weft_finalize: the runtime is not initialized");
    Runtime &rt = *g_runtime;
    Status drained;
    if (rt.engine_)
        drained = rt.engine_->drain();
    // The report's gather, while every rank still has its engine (collective).
    if (rt.engine_ && rt.counters_ && rt.fw_) {
        const std::string report = rt.fw_->params().find("rte_base_report")->as_string();
        if (!report.empty())
            if (Status st = gather_report(*rt.engine_, *rt.counters_, report); !st.ok())
                rt.fw_->logger().write("rte", "base", WEFT_LOG_WARN, st.message());
    }
    // Nobody disconnects before everybody is done: a peer may still be
    // reading what this process sent, and a transport may still hold some
    // of it. The fence runs while this process keeps its transports (and
    // the engine, for late control messages) going.
    if (rt.endpoints_ && rt.pmix_.size() > 1 && rt.pmix_.fence_start().ok())
        rt.progress_.wait_until([&] { return rt.pmix_.fence_done(); }, ProgressEngine::kForever);
    rt.engine_.reset();
    if (rt.fw_ && rt.fw_->logger().enabled("rte", WEFT_LOG_DEBUG) && !rt.pmix_.singleton())
        rt.fw_->logger().write("rte", "base", WEFT_LOG_DEBUG,
                               "modex " + std::string(rt.direct_modex_ ? "direct" : "full") + ": rank " +
                                   std::to_string(rt.pmix_.rank()) + " read the cards of " +
                                   std::to_string(rt.pmix_.peers_fetched()) + " of " +
                                   std::to_string(rt.pmix_.size() - 1) + " peers");
    if (rt.endpoints_) {
        rt.endpoints_->close_all();
        rt.progress_.progress();   // deliver the CLOSED upcalls the modules queued
    }
    rt.btl_.close();
    if (rt.counters_)
        rt.counters_->header().state = WEFT_COUNTERS_FINALIZED;
    if (rt.fw_ && params_users() == 0)   // else the last weft_params_close does
        Framework::finalize();
    Status st = rt.pmix_.finalize();
    g_runtime.reset();
    return drained.ok() ? st : drained;
}

} // namespace weft::rt
