// SPDX-License-Identifier: BSD-3-Clause
// The process runtime: one per process, created by weft_init(). It ties
// together the framework (parameters, components), PMIx (job, modex,
// failures), the btl modules, the per-peer endpoints and the progress
// engine, and routes incoming active messages to their handlers.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/framework.hpp"
#include "engine/host.hpp"
#include "progress/progress.hpp"
#include "rte/btl_layer.hpp"
#include "rte/endpoints.hpp"
#include "rte/pmix_client.hpp"

namespace weft::engine { class Engine; }

namespace weft::rt {

// The runtime's parameter group ("rte") and parameters, for
// Framework::init (weft_init and weft_info both register them).
std::vector<FrameworkInfo> param_groups();
std::vector<params::Definition> param_definitions();

// Active-message, placement and peer-failure handlers (engine/host.hpp).
using engine::AmHandler;
using engine::PeerFailedHandler;
using engine::PlacedHandler;
using engine::PlaceHandler;

// The runtime is the engine's Host: it builds the engine after itself and
// serves it progress, endpoints, handler registration and peer failures
// (PMIx termination events arrive as those).
class Runtime final : public engine::Host {
public:
    static Result<Runtime *> init();
    static Runtime *current();
    // Orderly end: endpoints closed, modules and components released, PMIx
    // finalized (the launcher then counts this rank as finished).
    static Status finalize();
    ~Runtime() override;

    PmixClient &pmix() { return pmix_; }
    Endpoints &endpoints() { return *endpoints_; }
    ProgressEngine &progress() override { return progress_; }
    log::Logger &logger() override { return fw_->logger(); }
    BtlLayer &btl() { return btl_; }
    Framework &framework() { return *fw_; }

    // Registers the handler of an active-message id (0..255).
    Status set_handler(uint8_t am_id, AmHandler fn, void *ctx) override;
    void set_peer_failed_handler(PeerFailedHandler fn, void *ctx) override;
    // Peers that failed after having been usable, in the order they failed
    // (weft_abort names them to the launcher: abort_note.hpp).
    const std::vector<uint32_t> &failed_peers() const { return failed_peers_; }
    // Optional placement for an id that has a handler (nullptr fns remove it).
    void set_place_handler(uint8_t am_id, PlaceHandler place, PlacedHandler placed, void *ctx) override;
    Status start_connect(uint32_t rank) override;
    std::span<weft_btl_endpoint_t *const> connected_endpoints(uint32_t rank) override;
    // The messaging engine (runtime/engine), created by init().
    engine::Engine &engine() { return *engine_; }
    // The counter page (the engine's, kept here until the modules are gone).
    engine::CounterPage *counters() { return counters_.get(); }
    // Connects to rank and waits (bounded by timeout).
    Status connect(uint32_t rank, std::chrono::milliseconds timeout);
    std::chrono::milliseconds connect_timeout() const { return connect_timeout_; }

private:
    Runtime() = default;
    Status setup();
    Status choose_progress_mode();
    // The cores of this node the job may use; 0 when alone on the node.
    uint32_t node_cores();
    void attach_counters();
    Status preconnect();
    // The modex after this process published its cards: full or direct
    // (rte_base_modex), with or without a fence.
    Status exchange_cards();
    static int poll_events(void *ctx);   // PMIx failure events -> endpoints
    // The slow parts of poll_events and up_recv, apart so that the checks
    // on every pass and message stay small functions.
    [[gnu::noinline]] int take_terminations();
    [[gnu::noinline]] void no_handler(weft_btl_endpoint_t *ep, uint8_t am_id);
    static int poll_module(void *ctx);
    static int prepare_module(void *ctx);   // btl prepare_wait before blocking
    // A module now carries a connected peer: poll it on every pass.
    void note_in_use(weft_btl_module_t *m);
    // Passes between polls of a descriptor-based module that carries no
    // peer and is not connecting to one: it only has to notice a peer that
    // connects to it (a module is polled on every pass once it connects or
    // accepts). Its poll is a system call (btl/tcp's epoll_wait, ~0.5 us):
    // every 64 passes it added 50 ns to scif's 8 B one-way latency (0.20
    // against 0.15 us, A/B in one run), because a message that arrives
    // during the call waits for it. 16384 passes are about a millisecond
    // of waiting; a blocking wait polls a source whose descriptor woke it
    // at once.
    static constexpr unsigned kColdPollEvery = 16384;
    // The same before any module carries a peer: nothing's latency is at
    // stake yet, and the job's first contacts wait for these polls. A
    // connection's first round trip took 0.5-1.6 ms, of which 300-450 us
    // was the acceptor's wait for its cold poll to see the connect (2
    // ranks on the 2-vCPU VM, about 27 ns a pass); 256 passes are about 7 us.
    static constexpr unsigned kColdPollEveryAtStart = 256;
    // Modules polled rarely (a descriptor to wait on, no peer yet) and
    // whether any module carries a peer yet (note_in_use).
    std::vector<weft_btl_module_t *> cold_modules_;
    bool any_in_use_ = false;
    // PMIx failure events: a busy pass is well under a microsecond, so a
    // death is still seen within microseconds; a sleeping runtime polls
    // them when their descriptor fires.
    static constexpr unsigned kEventsPollEvery = 16;

    // Upcalls from the modules (C ABI), ctx = this.
    static void up_recv(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *data, size_t len);
    static void up_state(void *ctx, weft_btl_endpoint_t *ep, weft_btl_ep_state_t state, int status,
                         const char *reason);
    static void *up_accepted(void *ctx, weft_btl_endpoint_t *ep);
    static int up_place(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *head, size_t head_len,
                        size_t len, weft_btl_placement_t *place);
    static void up_placed(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, uint64_t token, int status);
    static int up_peer_card(void *ctx, weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len);

    Framework *fw_ = nullptr;
    PmixClient pmix_;
    weft_btl_process_t process_{};   // what the modules learn of this process
    uint32_t node_cores_ = 0;        // node_cores(), once counted
    // The engine's counter page, held here too: the modules write into it
    // until btl_ closes them (declared first, so it goes last).
    std::shared_ptr<engine::CounterPage> counters_;
    BtlLayer btl_;
    bool modex_done_ = false;        // the modex is through: peer cards are readable
    bool direct_modex_ = false;      // cards fetched on first contact (rte_base_modex)
    std::unique_ptr<Endpoints> endpoints_;
    ProgressEngine progress_;
    std::array<std::pair<AmHandler, void *>, 256> handlers_{};
    struct Placer {
        PlaceHandler place = nullptr;
        PlacedHandler placed = nullptr;
        void *ctx = nullptr;
    };
    std::array<Placer, 256> placers_{};
    std::unique_ptr<engine::Engine> engine_;
    PeerFailedHandler failed_fn_ = nullptr;
    void *failed_ctx_ = nullptr;
    std::vector<uint32_t> failed_peers_;
    std::chrono::milliseconds connect_timeout_{30000};
};

// Opens of weft_params_open not yet closed (observe_api.cc): while there
// are some, weft_finalize leaves the framework to the last close.
int params_users();

} // namespace weft::rt
