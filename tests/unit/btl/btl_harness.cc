// SPDX-License-Identifier: BSD-3-Clause
#include "btl_harness.hpp"

#include <sched.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <algorithm>

#include "core/framework.hpp"

namespace weft::test::btl {

namespace {

using Clock = std::chrono::steady_clock;

// The most modules a component may create in one init().
constexpr int kMaxModules = 16;

BtlHarness *from_ctx(void *ctx) { return static_cast<BtlHarness *>(ctx); }

// Counts upcall nesting for the no-re-entry checks.
class UpcallScope {
public:
    explicit UpcallScope(BtlHarness &h) : h_(h)
    {
        ++h_.upcall_depth;
        if (h_.upcall_depth > h_.max_upcall_depth)
            h_.max_upcall_depth = h_.upcall_depth;
    }
    ~UpcallScope() { --h_.upcall_depth; }
    UpcallScope(const UpcallScope &) = delete;
    UpcallScope &operator=(const UpcallScope &) = delete;

private:
    BtlHarness &h_;
};

} // namespace

// ---- loading -------------------------------------------------------------

BtlHarness::~BtlHarness()
{
    finalize_modules();
    if (framework_up_)
        Framework::finalize();
}

BtlHarness::LoadResult BtlHarness::load(const TransportTraits &traits)
{
    traits_ = traits;
    // A private parameter file list: the user's ~/.weft must not change the suite.
    env_storage_ = traits.env;
    env_storage_.push_back("WEFT_MCA_mca_base_param_files=" + home_.path() + "/mca-params.conf");
    std::vector<const char *> envp;
    for (const auto &e : env_storage_)
        envp.push_back(e.c_str());
    envp.push_back(nullptr);
    InitOptions opts;
    opts.envp = envp.data();
    opts.log_sink = [this](std::string_view line) { log_lines.emplace_back(line); };
    auto fw = Framework::init(opts);
    if (!fw.ok())
        return {false, false, "Framework::init failed: " + fw.status().message()};
    framework_up_ = true;

    const std::string label = "btl/" + traits.component;
    auto *rec = fw.value()->repository().find(WEFT_BTL_FRAMEWORK, traits.component);
    if (!rec)
        return {false, true, label + " is not built in this tree (configure skipped it)"};
    if (!rec->loaded || !rec->opened)
        return {false, false, label + " did not load or open: " + rec->failure};
    fw.value()->repository().query_all(WEFT_BTL_FRAMEWORK, fw.value()->host());
    if (!rec->queried)
        return {false, false, label + ": query() was not answered: " + rec->failure};
    if (!rec->query.available)
        return {false, true, label + " cannot run on this machine: " + rec->query.reason};
    component_ = reinterpret_cast<const weft_btl_component_t *>(rec->component);
    return {true, false, ""};
}

std::string BtlHarness::init_modules()
{
    if (!component_)
        return "init_modules: no component loaded";
    if (!modules_.empty())
        return "init_modules: modules already initialized";
    weft_btl_module_t *made[kMaxModules] = {};
    int count = 0;
    int rc = component_->init(Framework::current()->host(), made, kMaxModules, &count);
    if (rc != WEFT_SUCCESS)
        return "btl/" + traits_.component + " init failed: " + weft_status_string(rc);
    if (count < 1 || count > kMaxModules)
        return "btl/" + traits_.component + " init created " + std::to_string(count) +
               " modules; the suite needs at least one";
    for (int i = 0; i < count; ++i) {
        weft_btl_module_t *m = made[i];
        if (const char *problem = weft_btl_module_abi_problem(m))
            return "init returned module " + std::to_string(i) + " that does not follow the ABI: " + problem;
        weft_btl_upcalls_t up{};
        up.size = sizeof up;
        up.ctx = this;
        up.recv = up_recv;
        up.state = up_state;
        up.accepted = up_accepted;
        up.place = up_place;
        up.placed = up_placed;
        weft_btl_module_set_upcalls(m, &up);
        modules_.push_back(m);
    }
    return "";
}

std::string BtlHarness::finalize_modules()
{
    std::string out;
    for (weft_btl_module_t *m : modules_)
        if (int rc = weft_btl_finalize(m); rc != WEFT_SUCCESS)
            out += std::string("module finalize failed: ") + weft_status_string(rc) + "; ";
    modules_.clear();
    return out;
}

void BtlHarness::set_process(uint32_t rank, uint32_t job_size, const std::string &job_id)
{
    job_id_ = job_id;
    process_ = weft_btl_process_t{};
    process_.size = sizeof process_;
    process_.rank = rank;
    process_.job_size = job_size;
    process_.node_id = 0;
    process_.local_rank = rank;
    process_.local_size = job_size;
    process_.job_id = job_id_.c_str();
    process_.hostname = "localhost";
    process_.card_ctx = this;
    process_.peer_card = up_peer_card;
    process_.node_cores = node_cores;
    for (weft_btl_module_t *m : modules_)
        m->process = &process_;
}

weft_btl_module_t *BtlHarness::module_for(const weft_btl_peer_t &peer) const
{
    for (weft_btl_module_t *m : modules_) {
        char why[WEFT_REASON_MAX];
        if (weft_btl_reachable(m, &peer, why, sizeof why) == 1)
            return m;
    }
    return module();
}

std::vector<std::byte> BtlHarness::card() const
{
    std::vector<std::byte> buf(WEFT_REASON_MAX);
    size_t len = buf.size();
    int rc = weft_btl_card(module(), buf.data(), &len);
    if (rc == WEFT_ERR_TRUNCATED) {
        buf.resize(len);
        rc = weft_btl_card(module(), buf.data(), &len);
    }
    buf.resize(rc == WEFT_SUCCESS ? len : 0);
    return buf;
}

weft_btl_peer_t BtlHarness::peer(uint32_t rank, weft_peer_class_t peer_class,
                                 std::span<const std::byte> card)
{
    weft_btl_peer_t p{};
    p.size = sizeof p;
    p.rank = rank;
    p.node_id = peer_class == WEFT_PEER_OTHER_NODE ? 1 : 0;
    p.peer_class = peer_class;
    p.hostname = peer_class == WEFT_PEER_OTHER_NODE ? "conformance-remote" : "localhost";
    p.card = card.empty() ? nullptr : card.data();
    p.card_len = card.size();
    return p;
}

void BtlHarness::set_peer_cards(std::map<uint32_t, std::vector<std::byte>> cards)
{
    peer_cards_ = std::move(cards);
}

std::string BtlHarness::modex_ready()
{
    std::string out;
    for (weft_btl_module_t *m : modules_)
        if (int rc = weft_btl_modex_ready(m); rc != WEFT_SUCCESS && rc != WEFT_ERR_NOT_SUPPORTED)
                out += std::string(m->name) + ": modex_ready failed: " + weft_status_string(rc) + "; ";
    return out;
}

// ---- upcalls -------------------------------------------------------------

int BtlHarness::up_peer_card(void *ctx, weft_btl_module_t *m, uint32_t rank, void *buf, size_t *len)
{
    BtlHarness &h = *from_ctx(ctx);
    // The harness exchanges the first module's card only.
    if (!len || h.modules_.empty() || m != h.modules_.front())
        return WEFT_ERR_BAD_PARAM;
    auto it = h.peer_cards_.find(rank);
    if (it == h.peer_cards_.end())
        return WEFT_ERR_NOT_FOUND;
    const size_t room = *len;
    *len = it->second.size();
    if (room < it->second.size())
        return WEFT_ERR_TRUNCATED;
    if (!it->second.empty())
        std::memcpy(buf, it->second.data(), it->second.size());
    return WEFT_SUCCESS;
}

void BtlHarness::up_recv(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *data,
                         size_t len)
{
    BtlHarness &h = *from_ctx(ctx);
    UpcallScope scope(h);
    const auto *bytes = static_cast<const std::byte *>(data);
    h.deliveries.push_back({ep, am_id, std::vector<std::byte>(bytes, bytes + len)});
    if (h.on_recv)
        h.on_recv(h.deliveries.back());
}

void BtlHarness::up_state(void *ctx, weft_btl_endpoint_t *ep, weft_btl_ep_state_t state,
                          int status, const char *reason)
{
    BtlHarness &h = *from_ctx(ctx);
    UpcallScope scope(h);
    h.states.push_back({ep, state, status, reason ? reason : ""});
}

void *BtlHarness::up_accepted(void *ctx, weft_btl_endpoint_t *)
{
    // Any non-null runtime_ctx accepts; the harness has no per-peer state.
    return ctx;
}

int BtlHarness::up_place(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, const void *head, size_t head_len,
                         size_t len, weft_btl_placement_t *place)
{
    BtlHarness &h = *from_ctx(ctx);
    UpcallScope scope(h);
    if (!h.on_place)
        return 0;
    return h.on_place(ep, am_id, {static_cast<const std::byte *>(head), head_len}, len, place);
}

void BtlHarness::up_placed(void *ctx, weft_btl_endpoint_t *ep, uint8_t am_id, uint64_t token, int status)
{
    BtlHarness &h = *from_ctx(ctx);
    UpcallScope scope(h);
    if (h.on_placed)
        h.on_placed(ep, am_id, token, status);
}

std::string BtlHarness::state_story(const weft_btl_endpoint_t *ep) const
{
    std::string story;
    for (const StateChange &st : states) {
        if (st.ep != ep)
            continue;
        const char *name = st.state == WEFT_BTL_EP_CONNECTED ? "CONNECTED"
                           : st.state == WEFT_BTL_EP_CLOSED  ? "CLOSED"
                           : st.state == WEFT_BTL_EP_FAILED  ? "FAILED"
                                                             : "other";
        story += (story.empty() ? "" : ", ") + std::string(name) + (st.reason.empty() ? "" : " (" + st.reason + ")");
    }
    return story.empty() ? "no state upcalls" : "states: " + story;
}

size_t BtlHarness::count_states(const weft_btl_endpoint_t *ep, weft_btl_ep_state_t state) const
{
    size_t n = 0;
    for (const auto &s : states)
        n += (s.ep == ep && s.state == state) ? 1 : 0;
    return n;
}

// ---- bounded progress ----------------------------------------------------

int BtlHarness::progress_once()
{
    int total = 0;
    for (weft_btl_module_t *m : modules_) {
        int rc = weft_btl_progress(m);
        if (rc < 0)
            return rc;
        total += rc;
    }
    return total;
}

bool BtlHarness::progress_until(const std::function<bool()> &done, const Bounds &bounds)
{
    const auto deadline = Clock::now() + bounds.deadline;
    for (long round = 0; !done(); ++round) {
        if (round >= bounds.max_progress_rounds || Clock::now() > deadline) {
            failure_ = "gave up after " + std::to_string(round) + " progress rounds";
            return false;
        }
        int rc = progress_once();
        if (rc < 0) {
            failure_ = std::string("progress failed: ") + weft_status_string(rc);
            return false;
        }
        // Idle: now and then let the peer process (or a parallel test) have
        // the core; on two busy cores a pure spin can starve the very peer
        // it waits for.
        if (rc == 0 && (round & 255) == 255)
            sched_yield();
    }
    return true;
}

int BtlHarness::retry_on_again(const std::function<int()> &op, const Bounds &bounds)
{
    int rc = op();
    const auto deadline = Clock::now() + bounds.deadline;
    for (long round = 0; rc == WEFT_ERR_AGAIN; ++round) {
        ++agains;
        if (round >= bounds.max_progress_rounds || Clock::now() > deadline) {
            failure_ = "still WEFT_ERR_AGAIN after " + std::to_string(round) + " progress rounds";
            return rc;
        }
        if (int prc = progress_once(); prc < 0)
            return prc;
        rc = op();
    }
    return rc;
}

std::string BtlHarness::connect(const weft_btl_peer_t &peer, weft_btl_endpoint_t **ep)
{
    *ep = nullptr;
    int rc = component_->start_connect(module_for(peer), &peer, ep);
    if (rc != WEFT_SUCCESS)
        return std::string("start_connect failed: ") + weft_status_string(rc);
    if (!*ep)
        return "start_connect succeeded without an endpoint";
    weft_btl_endpoint_t *e = *ep;
    bool ok = progress_until([&] {
        return count_states(e, WEFT_BTL_EP_CONNECTED) > 0 || count_states(e, WEFT_BTL_EP_FAILED) > 0;
    });
    if (!ok)
        return "no CONNECTED upcall: " + failure_;
    for (const StateChange &st : states)
        if (st.ep == e && st.state == WEFT_BTL_EP_FAILED)
            return "endpoint FAILED instead of CONNECTED: " + st.reason;
    return "";
}

// ---- two processes -------------------------------------------------------

Channel::~Channel()
{
    if (fd_ >= 0)
        close(fd_);
}

namespace {

// Moves len bytes to (events POLLOUT) or from (POLLIN) the socket, waiting
// at most until deadline in either direction.
bool transfer_all(int fd, char *p, size_t len, short events, Clock::time_point deadline)
{
    while (len > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            return false;
        pollfd pfd{fd, events, 0};
        int r = poll(&pfd, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        ssize_t n = events == POLLOUT ? ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                                      : ::recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

// Frames are cards and reports; a minute covers any machine that runs the suite.
constexpr std::chrono::seconds kChannelWriteLimit{60};

} // namespace

bool Channel::send(std::span<const std::byte> bytes)
{
    const auto deadline = Clock::now() + kChannelWriteLimit;
    uint64_t len = bytes.size();
    auto *data = const_cast<std::byte *>(bytes.data());   // only read: POLLOUT sends
    return transfer_all(fd_, reinterpret_cast<char *>(&len), sizeof len, POLLOUT, deadline) &&
           transfer_all(fd_, reinterpret_cast<char *>(data), bytes.size(), POLLOUT, deadline);
}

bool Channel::readable() const
{
    pollfd pfd{fd_, POLLIN, 0};
    return poll(&pfd, 1, 0) != 0;
}

bool Channel::send(const std::string &text)
{
    return send(std::as_bytes(std::span(text.data(), text.size())));
}

std::optional<std::vector<std::byte>> Channel::receive(std::chrono::milliseconds limit)
{
    const auto deadline = Clock::now() + limit;
    uint64_t len = 0;
    // Frames here are cards and reports: anything huge is a broken stream.
    if (!transfer_all(fd_, reinterpret_cast<char *>(&len), sizeof len, POLLIN, deadline) ||
        len > (uint64_t{1} << 20))
        return std::nullopt;
    std::vector<std::byte> bytes(len);
    if (!transfer_all(fd_, reinterpret_cast<char *>(bytes.data()), bytes.size(), POLLIN, deadline))
        return std::nullopt;
    return bytes;
}

namespace {

// One side's part: modules, card exchange, body. Returns "" or what failed.
std::string run_side(Side side, BtlHarness &harness, Channel &channel, const MirrorBody &body,
                     const Bounds &bounds, const std::string &job_id)
{
    if (std::string err = harness.init_modules(); !err.empty())
        return err;
    harness.set_process(side == Side::parent ? 0u : 1u, 2, job_id);
    if (!channel.send(harness.card()))
        return "could not send the card to the other process";
    auto peer_card = channel.receive(bounds.deadline);
    if (!peer_card)
        return "no card from the other process within the deadline";
    // As the runtime after its modex fence: peers' cards are readable, and
    // modules that wire at init (openib's oob) do it now.
    harness.set_peer_cards({{side == Side::parent ? 1u : 0u, *peer_card}});
    if (std::string err = harness.modex_ready(); !err.empty())
        return err;
    PeerContext ctx{side,
                    harness,
                    channel,
                    side == Side::parent ? 0u : 1u,
                    side == Side::parent ? 1u : 0u,
                    std::move(*peer_card)};
    std::string result;
    try {
        result = body(ctx);
    } catch (const std::exception &e) {
        result = std::string("exception: ") + e.what();
    }
    std::string fin = harness.finalize_modules();
    return result + fin;
}

// Waits for the child to exit, killing it at the deadline. Returns "" or why
// it did not exit cleanly. A pidfd makes the wait a bounded poll instead of
// a sleep loop.
std::string reap(pid_t pid, Clock::time_point deadline)
{
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            if (pidfd >= 0)
                close(pidfd);
            return std::string("waitpid failed: ") + std::strerror(errno);
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            if (pidfd >= 0)
                close(pidfd);
            return "child did not exit within the deadline and was killed";
        }
        // Readable when the child exits; without a pidfd (old kernel) the
        // timeout makes this a short, bounded pause between checks.
        pollfd pfd{pidfd, POLLIN, 0};
        poll(pidfd >= 0 ? &pfd : nullptr, pidfd >= 0 ? 1 : 0,
             pidfd >= 0 ? static_cast<int>(left.count()) : 10);
    }
    if (pidfd >= 0)
        close(pidfd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return "";
    if (WIFSIGNALED(status))
        return "child died of signal " + std::to_string(WTERMSIG(status));
    return "child exited with status " + std::to_string(WEXITSTATUS(status));
}

} // namespace

std::string run_two_process(BtlHarness &harness, const MirrorBody &body, const Bounds &bounds)
{
    if (!harness.component() || !harness.modules().empty())
        return "run_two_process needs a loaded component without modules (fork first, then init)";
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return std::string("socketpair failed: ") + std::strerror(errno);
    // One job id for both sides, unique per run.
    const std::string job_id = "conformance-" + std::to_string(getpid()) + "-" +
                               std::to_string(Clock::now().time_since_epoch().count());
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return std::string("fork failed: ") + std::strerror(errno);
    }
    if (pid == 0) {
        close(fds[0]);
        int code = 0;
        {
            Channel channel(fds[1]);
            std::string result = run_side(Side::child, harness, channel, body, bounds, job_id);
            code = (channel.send(result) && result.empty()) ? 0 : 1;
        }
        // No destructors, atexit handlers or gtest reporting in the child:
        // the parent owns the test's outcome.
        _exit(code);
    }
    close(fds[1]);
    const auto deadline = Clock::now() + bounds.deadline;
    Channel channel(fds[0]);
    std::string mine = run_side(Side::parent, harness, channel, body, bounds, job_id);
    std::string theirs;
    if (auto report = channel.receive(bounds.deadline)) {
        theirs.assign(reinterpret_cast<const char *>(report->data()), report->size());
    } else {
        theirs = "no report from the child within the deadline";
    }
    std::string exit_problem = reap(pid, deadline + bounds.deadline);
    std::string out;
    if (!mine.empty())
        out += "parent: " + mine + "\n";
    if (!theirs.empty())
        out += "child: " + theirs + "\n";
    if (!exit_problem.empty() && theirs.empty())
        out += "child: " + exit_problem + "\n";
    return out;
}

// ---- RDMA callbacks ------------------------------------------------------

std::string connect_from_parent(PeerContext &ctx, weft_btl_endpoint_t **ep)
{
    if (ctx.side == Side::parent)
        return ctx.harness.connect(ctx.peer(WEFT_PEER_SAME_NODE), ep);
    return "";
}

void record_rdma(weft_btl_endpoint_t *ep, void *cb_ctx, int status)
{
    auto *c = static_cast<RdmaCompletion *>(cb_ctx);
    ++c->calls;
    c->status = status;
    c->ep = ep;
}

// ---- content -------------------------------------------------------------

SplitPlacer::SplitPlacer(BtlHarness &h, uint8_t am, size_t head_bytes)
{
    h.on_place = [this, am, head_bytes](weft_btl_endpoint_t *, uint8_t id, std::span<const std::byte> head,
                                        size_t len, weft_btl_placement_t *p) -> int {
        if (id != am)
            return 0;
        if (head.size() < std::min<size_t>(len, WEFT_BTL_PLACE_HEAD) || head.size() < head_bytes ||
            len < head_bytes) {
            problem_ = "place upcall shown " + std::to_string(head.size()) + " bytes of " + std::to_string(len);
            return 0;
        }
        PlacedHead ph;
        std::memcpy(&ph, head.data(), sizeof ph);
        if (ph.index % 2 == 0)
            return 0;
        Placed &pl = placed_[ph.index];
        pl.head = ph;
        const size_t body = len - head_bytes;
        pl.first.resize(body / 3);
        pl.second.resize(body - body / 3);
        p->skip = head_bytes;
        p->iov[0] = {pl.first.data(), pl.first.size()};
        p->iov[1] = {pl.second.data(), pl.second.size()};
        p->iovcnt = 2;
        p->token = ph.index;
        return 1;
    };
    h.on_placed = [this](weft_btl_endpoint_t *, uint8_t, uint64_t token, int status) {
        Placed &pl = placed_[token];
        ++pl.calls;
        pl.status = status;
        ++landed_;
    };
}

std::string SplitPlacer::check(size_t expect) const
{
    for (const auto &[index, pl] : placed_) {
        std::vector<std::byte> whole = pl.first;
        whole.insert(whole.end(), pl.second.begin(), pl.second.end());
        if (pl.calls != 1 || pl.status != WEFT_SUCCESS)
            return "message " + std::to_string(index) + ": " + std::to_string(pl.calls) + " placed upcalls, status " +
                   std::to_string(pl.status);
        if (checksum(whole) != checksum(pattern(whole.size(), pl.head.seed)))
            return "message " + std::to_string(index) + " (placed) differs";
    }
    if (placed_.size() != expect)
        return std::to_string(placed_.size()) + " messages placed, expected " + std::to_string(expect);
    return "";
}

uint64_t checksum(std::span<const std::byte> bytes)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (std::byte b : bytes) {
        h ^= static_cast<uint64_t>(b);
        h *= 0x100000001b3ull;
    }
    return h;
}

std::vector<std::byte> pattern(size_t len, uint32_t seed)
{
    std::vector<std::byte> out(len);
    uint32_t x = seed ? seed : 1;
    for (size_t i = 0; i < len; ++i) {
        // xorshift32: cheap, never repeats within a message of any size here.
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out[i] = static_cast<std::byte>(x);
    }
    return out;
}

} // namespace weft::test::btl
