// SPDX-License-Identifier: BSD-3-Clause
// The btl conformance harness: loads one btl component through the real
// framework repository (Framework::init over the build tree), initializes
// its modules, records every upcall, and drives progress with bounded waits.
// tests/unit/btl/btl_conformance_test.cc runs the same suite through it against
// every transport in its kTransports list.
//
// Adding a transport: append a TransportTraits to kTransports in
// btl_conformance_test.cc. A transport that reaches its own process
// (PeerMode::loopback, like self) runs the data-path tests on an endpoint to
// itself. A transport that needs another process (PeerMode::other_process:
// tcp, scif, openib) is exercised through run_two_process(): the process
// forks before any module exists, each side initializes the component,
// publishes its card and receives the other's over a socketpair, then both
// run the same body (the mirror) with their Side; the child reports its
// result over the socketpair. Every wait has a bound that fails the test
// instead of hanging, and a child that does not report is killed.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <weft/btl.h>

#include "../test_util.hpp"

namespace weft::test::btl {

// How the suite reaches a peer of the transport.
enum class PeerMode {
    loopback,       // the data-path tests use an endpoint to this process
    other_process,  // the data-path tests need a forked peer (run_two_process)
};

struct TransportTraits {
    std::string component;             // "self", "tcp", ...
    PeerMode mode = PeerMode::loopback;
    std::vector<std::string> env;      // extra NAME=value (WEFT_MCA_*) for this transport
};
// For gtest's messages: the component name instead of the struct's bytes.
inline void PrintTo(const TransportTraits &t, std::ostream *os) { *os << "btl/" << t.component; }

// Bounds of every wait: the first one reached fails the wait. The deadline
// is a guard against hangs, never a performance threshold.
struct Bounds {
    long max_progress_rounds = 100'000'000;
    std::chrono::milliseconds deadline{30'000};
};

// The rank the harness gives itself and the rank base of made-up peers.
inline constexpr uint32_t kMyRank = 0;

struct Delivery {
    weft_btl_endpoint_t *ep;
    uint8_t am_id;
    std::vector<std::byte> data;
};

struct StateChange {
    weft_btl_endpoint_t *ep;
    weft_btl_ep_state_t state;
    int status;
    std::string reason;
};

class BtlHarness {
public:
    BtlHarness() = default;
    ~BtlHarness();   // finalizes live modules, then the framework (and so the component)
    BtlHarness(const BtlHarness &) = delete;
    BtlHarness &operator=(const BtlHarness &) = delete;

    // Loads btl/<component> through Framework::init over the build tree, with
    // a private (empty) parameter file list and traits.env. ok: loaded,
    // opened and available; skip: not built here or query() says it cannot
    // run (message says why); otherwise message says what failed.
    struct LoadResult {
        bool ok = false;
        bool skip = false;
        std::string message;
    };
    LoadResult load(const TransportTraits &traits);

    // Calls the component's init() and installs the recording upcalls.
    // Returns "" or what failed.
    std::string init_modules();
    // Finalizes every module through its ops (idempotent). Returns "" or what failed.
    std::string finalize_modules();

    const TransportTraits &traits() const { return traits_; }
    const weft_btl_component_t *component() const { return component_; }
    const weft_btl_module_ops_t &ops() const { return *modules_.front()->ops; }
    weft_btl_module_t *module() const { return modules_.empty() ? nullptr : modules_.front(); }
    std::span<weft_btl_module_t *const> modules() const { return modules_; }

    // Tells every module who this process is (weft_btl_module_t::process),
    // as the runtime does before asking for cards. Transports that put the
    // rank and job in their handshakes (tcp) need it.
    void set_process(uint32_t rank, uint32_t job_size, const std::string &job_id);
    // weft_btl_process_t.node_cores that set_process() gives (0: not counted).
    uint32_t node_cores = 0;
    // The first module that reaches peer (the harness's connect() uses it),
    // or the first module when none does.
    weft_btl_module_t *module_for(const weft_btl_peer_t &peer) const;

    // The first module's card (empty if it publishes none).
    std::vector<std::byte> card() const;
    // The cards of other ranks that the peer_card upcall shows (by rank),
    // and the modex_ready op of every module that has it, as the runtime
    // calls them after its modex fence. modex_ready returns "" or what failed.
    void set_peer_cards(std::map<uint32_t, std::vector<std::byte>> cards);
    std::string modex_ready();
    // A peer description; card bytes must outlive its use.
    static weft_btl_peer_t peer(uint32_t rank, weft_peer_class_t peer_class,
                                std::span<const std::byte> card = {});

    // One progress() on every module: events handled, or the first error.
    int progress_once();
    // progress_once() until done() holds; false when a bound was reached
    // or progress failed (failure_ then says which).
    bool progress_until(const std::function<bool()> &done, const Bounds &bounds = {});
    // Runs op; while it answers WEFT_ERR_AGAIN, progresses once and retries
    // (bounded). Returns op's last answer.
    int retry_on_again(const std::function<int()> &op, const Bounds &bounds = {});
    // Starts a connection to peer and waits for its CONNECTED upcall.
    // Returns "" or what failed.
    std::string connect(const weft_btl_peer_t &peer, weft_btl_endpoint_t **ep);

    // What the upcalls saw, in order.
    std::vector<Delivery> deliveries;
    std::vector<StateChange> states;
    size_t count_states(const weft_btl_endpoint_t *ep, weft_btl_ep_state_t state) const;
    // The state upcalls ep got, with their reasons, for failure messages.
    std::string state_story(const weft_btl_endpoint_t *ep) const;
    long agains = 0;             // WEFT_ERR_AGAIN answers seen by retry_on_again
    int upcall_depth = 0;        // upcalls currently running
    int max_upcall_depth = 0;    // deepest nesting seen: 1 means never re-entered
    // Optional: runs inside the recv upcall after the delivery is recorded.
    std::function<void(const Delivery &)> on_recv;
    // Optional: answers the place upcall (btl.h); unset, every placement is
    // declined. on_placed gets the placed upcalls.
    std::function<int(weft_btl_endpoint_t *ep, uint8_t am_id, std::span<const std::byte> head, size_t len,
                      weft_btl_placement_t *place)>
        on_place;
    std::function<void(weft_btl_endpoint_t *ep, uint8_t am_id, uint64_t token, int status)> on_placed;
    // Log lines the framework wrote while loaded.
    std::vector<std::string> log_lines;
    // Why the last bounded wait gave up.
    const std::string &failure() const { return failure_; }

private:
    static void up_recv(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *data,
                        size_t len);
    static void up_state(void *ctx, weft_btl_endpoint_t *ep, weft_btl_ep_state_t state,
                         int status, const char *reason);
    static void *up_accepted(void *ctx, weft_btl_endpoint_t *ep);
    static int up_place(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *head, size_t head_len,
                        size_t len, weft_btl_placement_t *place);
    static void up_placed(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, uint64_t token, int status);
    static int up_peer_card(void *ctx, weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len);

    TransportTraits traits_;
    TempDir home_;                   // holds the empty parameter file list
    bool framework_up_ = false;
    const weft_btl_component_t *component_ = nullptr;
    std::vector<weft_btl_module_t *> modules_;
    std::vector<std::string> env_storage_;
    std::string failure_;
    std::string job_id_;
    weft_btl_process_t process_{};
    std::map<uint32_t, std::vector<std::byte>> peer_cards_;
};

// A framed, bounded byte channel over one end of a socketpair.
class Channel {
public:
    explicit Channel(int fd) : fd_(fd) {}
    ~Channel();
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;
    bool send(std::span<const std::byte> bytes);
    bool send(const std::string &text);
    // Has the other side sent something (or gone away)? Does not wait.
    bool readable() const;
    // The next frame, or nullopt when the limit passes or the other side is gone.
    std::optional<std::vector<std::byte>> receive(std::chrono::milliseconds limit);

private:
    int fd_;
};

enum class Side { parent, child };

// What a mirror body sees on each side of run_two_process().
struct PeerContext {
    Side side;
    BtlHarness &harness;                  // this side's, modules initialized
    Channel &channel;                     // to the other side (barriers, extra data)
    uint32_t my_rank;                     // parent 0, child 1
    uint32_t peer_rank;
    std::vector<std::byte> peer_card;     // the other side's card (module 0)
    // The other process, described with its card.
    weft_btl_peer_t peer(weft_peer_class_t peer_class) const
    {
        return BtlHarness::peer(peer_rank, peer_class, peer_card);
    }
};

// A body returns "" on success or what failed. It runs on both sides, so it
// must not use gtest assertions (the child's would be lost).
using MirrorBody = std::function<std::string(PeerContext &)>;

// Forks; each side initializes harness's modules (harness must be loaded,
// with no modules yet), exchanges cards, runs body, and finalizes its
// modules; the child reports over the socketpair and _exits. Returns "" if
// both sides succeeded, else each side's failure.
std::string run_two_process(BtlHarness &harness, const MirrorBody &body,
                            const Bounds &bounds = {});

// Inside a mirror body: the parent connects to the child (*ep); the child
// does nothing and learns the endpoint from the parent's first message.
// "" or what failed.
std::string connect_from_parent(PeerContext &ctx, weft_btl_endpoint_t **ep);

// What the callback of one put or get reported: pass record_rdma as the
// callback and an RdmaCompletion as its cb_ctx.
struct RdmaCompletion {
    int calls = 0;
    int status = 1;                       // not a weft status until called
    weft_btl_endpoint_t *ep = nullptr;
};
void record_rdma(weft_btl_endpoint_t *ep, void *cb_ctx, int status);

// The receiving side of a placement test: answers the place upcall for
// messages of am id `am` that begin with a PlacedHead (then head_bytes - 8
// more bytes of the test's own): odd indexes are placed, split over two
// buffers (a third and the rest), even ones declined (delivered through
// recv). Each placed() is recorded. Keep it alive while the harness runs.
struct PlacedHead {
    uint32_t index;
    uint32_t seed;   // the body is pattern(len - head_bytes, seed)
};
class SplitPlacer {
public:
    SplitPlacer(BtlHarness &h, uint8_t am, size_t head_bytes);
    size_t landed() const { return landed_; }
    // A place upcall that showed too little of its message, or "".
    const std::string &problem() const { return problem_; }
    // "" or what is wrong with the placed messages: each placed once with
    // WEFT_SUCCESS holding its pattern, and `expect` of them.
    std::string check(size_t expect) const;

private:
    struct Placed {
        PlacedHead head{};
        std::vector<std::byte> first, second;
        int calls = 0, status = 1;
    };
    std::map<uint64_t, Placed> placed_;
    std::string problem_;
    size_t landed_ = 0;
};

// FNV-1a over bytes: a content check for large messages.
uint64_t checksum(std::span<const std::byte> bytes);
// Deterministic, position-dependent bytes (so a shifted copy is caught).
std::vector<std::byte> pattern(size_t len, uint32_t seed);

} // namespace weft::test::btl
