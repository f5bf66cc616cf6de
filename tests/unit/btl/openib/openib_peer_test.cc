// SPDX-License-Identifier: BSD-3-Clause
// btl/openib on a real RDMA device (the Soft-RoCE VM: make check-rdma), in
// one or two processes: a peer killed mid-stream fails the endpoint with a
// reason, RDMA read and write move exactly the bytes asked for (and a bad
// rkey fails the operation and the endpoint instead of crashing), memory
// that cannot be registered gets a message that says what to do, and two
// peers without a connection method in common say so. Every test skips
// where openib's query finds no usable port, like the conformance suite.
// Every wait is bounded; nothing waits by sleeping.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../btl_harness.hpp"
#include "btl_openib_rcache.hpp"
#include "btl_openib_wire.hpp"
#include "core/framework.hpp"

using namespace weft::test::btl;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// A dead peer is noticed after (retry_count + 1) ack timeouts of
// 4.096 us * 2^timeout: 4 * 16.8 ms here, instead of the default's 8 * 4.3 s.
const std::vector<std::string> kQuickFailure = {"WEFT_MCA_btl_openib_timeout=12",
                                                "WEFT_MCA_btl_openib_retry_count=3"};

class OpenibPeer : public ::testing::Test {
protected:
    void SetUp() override
    {
        auto loaded = h_.load({"openib", PeerMode::other_process, kQuickFailure});
        if (loaded.skip)
            GTEST_SKIP() << loaded.message;
        ASSERT_TRUE(loaded.ok) << loaded.message;
    }
    BtlHarness h_;
};

// Kills and reaps a forked child when the test ends early (a failed
// ASSERT), so no child outlives its test.
class ChildGuard {
public:
    explicit ChildGuard(pid_t pid) : pid_(pid) {}
    ~ChildGuard() { kill_and_reap(); }
    ChildGuard(const ChildGuard &) = delete;
    ChildGuard &operator=(const ChildGuard &) = delete;
    // SIGKILL cannot be caught, so the wait after it is short.
    void kill_and_reap()
    {
        if (pid_ <= 0)
            return;
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    // The child's exit code, or -1 when it died of a signal (bounded: kills it
    // if it has not exited when the parent is done with it).
    int exit_code(std::chrono::milliseconds limit)
    {
        const auto deadline = Clock::now() + limit;
        int status = 0;
        while (Clock::now() < deadline) {
            pid_t r = waitpid(pid_, &status, WNOHANG);
            if (r == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            if (r < 0)
                return -1;
            sched_yield();
        }
        kill_and_reap();
        return -1;
    }

private:
    pid_t pid_;
};

std::string unique_job(const char *what)
{
    return std::string(what) + "-" + std::to_string(getpid()) + "-" +
           std::to_string(Clock::now().time_since_epoch().count());
}

// A peer process driven by hand (killed, or given other parameters), for
// what run_two_process cannot do. fork_peer runs child_part in the child
// with its end of the channel and _exits with what it returns; the parent
// keeps the guard (which kills the child if the test ends early) and its
// end of the channel.
struct PeerProcess {
    std::unique_ptr<ChildGuard> child;
    std::unique_ptr<Channel> channel;
};

PeerProcess fork_peer(const std::function<int(Channel &)> &child_part)
{
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        return {};
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return {};
    }
    if (pid == 0) {
        close(fds[0]);
        int code = 1;
        {
            Channel channel(fds[1]);
            code = child_part(channel);
        }
        _exit(code);   // no gtest reporting or destructors of the parent's state
    }
    close(fds[1]);
    return {std::make_unique<ChildGuard>(pid), std::make_unique<Channel>(fds[0])};
}

// Starts this side's modules as `rank` of a two-rank job and swaps cards
// over channel: the other side's card, or nullopt.
std::optional<std::vector<std::byte>> start_and_swap_cards(BtlHarness &h, Channel &channel, uint32_t rank,
                                                           const std::string &job)
{
    if (!h.init_modules().empty())
        return std::nullopt;
    h.set_process(rank, 2, job);
    if (!channel.send(h.card()))
        return std::nullopt;
    return channel.receive(30s);
}

// The text of any verbs completion status except success, found in reason.
std::string verbs_status_in(const std::string &reason)
{
    for (int s = IBV_WC_LOC_LEN_ERR; s <= IBV_WC_GENERAL_ERR; ++s) {
        const char *text = ibv_wc_status_str(static_cast<ibv_wc_status>(s));
        if (text && reason.find(text) != std::string::npos)
            return text;
    }
    return "";
}

const StateChange *failure_of(const BtlHarness &h, const weft_btl_endpoint_t *ep)
{
    for (const StateChange &st : h.states)
        if (st.ep == ep && st.state == WEFT_BTL_EP_FAILED)
            return &st;
    return nullptr;
}

// Narrows btl_openib_cpc before modules start (a forked child inherits it).
bool use_cpc(const char *cpc)
{
    weft::params::Origin api;
    api.source = weft::params::Source::Api;
    return weft::Framework::current()->params().set("btl_openib_cpc", cpc, api).ok();
}

// The endpoint the peer connected to this side with (the accepted one).
weft_btl_endpoint_t *wait_connected(BtlHarness &h)
{
    weft_btl_endpoint_t *ep = nullptr;
    h.progress_until([&] {
        for (const StateChange &st : h.states)
            if (st.state == WEFT_BTL_EP_CONNECTED)
                ep = st.ep;
        return ep != nullptr;
    });
    return ep;
}

} // namespace

// ---- a peer killed mid-stream ---------------------------------------------

TEST_F(OpenibPeer, KilledPeerFailsTheEndpointWithAReason)
{
    constexpr size_t kFlowing = 50;   // deliveries before the child says the stream flows
    const std::string job = unique_job("openib-kill");
    PeerProcess victim = fork_peer([&](Channel &ch) {
        // Receives until killed, and tells the parent once the stream
        // flows, so the kill lands in the middle of it.
        if (!start_and_swap_cards(h_, ch, 1, job))
            return 1;
        bool told = false;
        h_.progress_until(
            [&] {
                if (!told && h_.deliveries.size() >= kFlowing)
                    told = ch.send(std::string("flowing"));
                return false;
            },
            Bounds{.deadline = 120s});
        return 2;   // never killed: the parent gave up long ago
    });
    ASSERT_TRUE(victim.child) << "fork failed";
    ChildGuard &child = *victim.child;
    Channel &ch = *victim.channel;
    auto card = start_and_swap_cards(h_, ch, 0, job);
    ASSERT_TRUE(card.has_value()) << "no modules here, or the child sent no card";
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(h_.connect(BtlHarness::peer(1, WEFT_PEER_SAME_NODE, *card), &ep), "");

    // Send 4 KiB frames (through send buffers, not inline) without pause;
    // kill the child as soon as it reports the stream flowing, and go on
    // sending until the endpoint fails.
    const std::vector<std::byte> payload = pattern(4096, 11);
    iovec iov{const_cast<std::byte *>(payload.data()), payload.size()};
    auto failed = [&] { return h_.count_states(ep, WEFT_BTL_EP_FAILED) > 0; };
    size_t sent = 0, sent_after_kill = 0;
    bool killed = false;
    Clock::time_point killed_at{};
    const auto deadline = Clock::now() + 60s;
    while (!failed() && Clock::now() < deadline) {
        const int rc = weft_btl_send(ep, 3, &iov, 1);
        ASSERT_TRUE(rc == WEFT_SUCCESS || rc == WEFT_ERR_AGAIN || rc == WEFT_ERR_UNREACHABLE)
            << weft_status_string(rc);
        if (rc == WEFT_SUCCESS) {
            ++sent;
            sent_after_kill += killed ? 1 : 0;
        }
        ASSERT_GE(h_.progress_once(), 0);
        if (!killed && ch.readable()) {
            child.kill_and_reap();
            killed = true;
            killed_at = Clock::now();
        }
    }
    ASSERT_TRUE(killed) << "the child never reported the stream flowing (" << sent << " frames sent)";
    ASSERT_TRUE(failed()) << "no FAILED upcall within the 60 s of the stream (" << sent << " frames sent, "
                          << sent_after_kill << " after the kill)";
    const auto detection = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at);
    RecordProperty("detection_ms", std::to_string(detection.count()));
    // Generous for Soft-RoCE under emulation on a loaded host; the retry
    // settings above make it tens of milliseconds on an idle one.
    EXPECT_LT(detection, 20s);

    const StateChange *failure = failure_of(h_, ep);
    ASSERT_NE(failure, nullptr);
    RecordProperty("reason", failure->reason);
    EXPECT_LT(failure->status, 0);
    EXPECT_NE(failure->reason.find("peer rank 1"), std::string::npos) << failure->reason;
    EXPECT_NE(verbs_status_in(failure->reason), "") << "no verbs status in: " << failure->reason;
    EXPECT_EQ(h_.count_states(ep, WEFT_BTL_EP_FAILED), 1u);
    // The endpoint is gone: sends are refused, progress stays quiet.
    EXPECT_EQ(weft_btl_send(ep, 3, &iov, 1), WEFT_ERR_UNREACHABLE);
    for (int i = 0; i < 100; ++i)
        ASSERT_GE(h_.progress_once(), 0);
    EXPECT_EQ(h_.count_states(ep, WEFT_BTL_EP_FAILED), 1u);
}

// ---- RDMA read and write ----------------------------------------------------

namespace {

// Where the child's registered memory is, as it tells the parent.
struct RemoteRegion {
    uint64_t addr = 0;
    uint32_t rkey_len = 0;
    uint8_t rkey[64] = {};
};

// One transfer: n bytes between the parent's buffer at local_offset and the
// child's at remote_offset. Odd offsets on purpose: RDMA needs no alignment.
struct Transfer {
    size_t n;
    size_t remote_offset;
    size_t local_offset;
};
constexpr Transfer kTransfers[] = {
    {1, 1, 3},
    {4096, 4099, 5},
    {(size_t{1} << 20) + 3, 8199, 11},
};
constexpr size_t kRemoteBytes = size_t{3} << 20;
constexpr size_t kLocalBytes = (size_t{1} << 20) + 4096;
constexpr uint32_t kRemoteSeed = 7;
uint32_t put_seed(size_t i) { return static_cast<uint32_t>(100 + i); }

// What the child's memory holds after every put: its own pattern, with each
// put's bytes over it.
std::vector<std::byte> remote_after_puts()
{
    std::vector<std::byte> expect = pattern(kRemoteBytes, kRemoteSeed);
    for (size_t i = 0; i < std::size(kTransfers); ++i) {
        const std::vector<std::byte> bytes = pattern(kTransfers[i].n, put_seed(i));
        std::copy(bytes.begin(), bytes.end(), expect.begin() + kTransfers[i].remote_offset);
    }
    return expect;
}

// First differing byte of a and b, or "".
std::string first_difference(std::span<const std::byte> a, std::span<const std::byte> b)
{
    if (a.size() != b.size())
        return "sizes differ";
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i])
            return "byte " + std::to_string(i) + " differs";
    return "";
}

// One put or get, waited for: "" or what went wrong.
std::string rdma_and_wait(BtlHarness &h, weft_btl_endpoint_t *ep, bool write, std::byte *local, size_t n,
                          uint64_t remote, const RemoteRegion &region, RdmaCompletion *result)
{
    *result = RdmaCompletion{};
    const int rc = h.retry_on_again([&] {
        return write ? weft_btl_put(ep, local, n, remote, region.rkey, region.rkey_len, record_rdma, result)
                     : weft_btl_get(ep, local, n, remote, region.rkey, region.rkey_len, record_rdma, result);
    });
    if (rc != WEFT_SUCCESS)
        return std::string(write ? "put" : "get") + " refused: " + weft_status_string(rc);
    if (!h.progress_until([&] { return result->calls > 0; }))
        return std::string(write ? "put" : "get") + " never completed: " + h.failure();
    return "";
}

// The parent's side: gets, then puts, has the child check its memory, then
// a get with a wrong rkey.
std::string rdma_initiator(PeerContext &ctx, weft_btl_endpoint_t *ep)
{
    BtlHarness &h = ctx.harness;
    auto info = ctx.channel.receive(30s);
    RemoteRegion region;
    if (!info || info->size() != sizeof region)
        return "no registration from the child";
    std::memcpy(&region, info->data(), sizeof region);

    std::vector<std::byte> local(kLocalBytes);
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    if (int rc = weft_btl_mem_register(ep->module, local.data(), local.size(), &reg); rc != WEFT_SUCCESS)
        return std::string("mem_register of the local buffer failed: ") + weft_status_string(rc);
    const std::vector<std::byte> remote_before = pattern(kRemoteBytes, kRemoteSeed);
    constexpr std::byte kUntouched{0xee};
    RdmaCompletion result;

    for (const Transfer &t : kTransfers) {
        const std::string what = "get of " + std::to_string(t.n) + " bytes";
        std::fill(local.begin(), local.end(), kUntouched);
        if (auto err = rdma_and_wait(h, ep, false, local.data() + t.local_offset, t.n,
                                     region.addr + t.remote_offset, region, &result);
            !err.empty())
            return what + ": " + err;
        if (result.calls != 1 || result.status != WEFT_SUCCESS || result.ep != ep)
            return what + ": callback " + std::to_string(result.calls) + " times, status " +
                   weft_status_string(result.status);
        if (auto diff = first_difference(std::span(local).subspan(t.local_offset, t.n),
                                         std::span(remote_before).subspan(t.remote_offset, t.n));
            !diff.empty())
            return what + ": " + diff;
        if (local[t.local_offset - 1] != kUntouched || local[t.local_offset + t.n] != kUntouched)
            return what + ": wrote outside its range";
    }
    for (size_t i = 0; i < std::size(kTransfers); ++i) {
        const Transfer &t = kTransfers[i];
        const std::string what = "put of " + std::to_string(t.n) + " bytes";
        const std::vector<std::byte> bytes = pattern(t.n, put_seed(i));
        std::copy(bytes.begin(), bytes.end(), local.begin() + t.local_offset);
        if (auto err = rdma_and_wait(h, ep, true, local.data() + t.local_offset, t.n,
                                     region.addr + t.remote_offset, region, &result);
            !err.empty())
            return what + ": " + err;
        if (result.calls != 1 || result.status != WEFT_SUCCESS)
            return what + ": callback " + std::to_string(result.calls) + " times, status " +
                   weft_status_string(result.status);
    }
    if (!ctx.channel.send(std::string("check")))
        return "the child went away";
    if (!h.progress_until([&] { return ctx.channel.readable(); }))
        return "no verdict from the child: " + h.failure();
    auto verdict = ctx.channel.receive(30s);
    if (!verdict)
        return "the child went away before its verdict";
    if (std::string text(reinterpret_cast<const char *>(verdict->data()), verdict->size()); text != "ok")
        return "the child's memory after the puts: " + text;

    // A wrong rkey: the peer's device refuses the read. The operation ends
    // with an error status and the endpoint fails (an RC queue pair stops at
    // its first error), with a reason.
    RemoteRegion wrong = region;
    uint32_t key;
    std::memcpy(&key, wrong.rkey, sizeof key);
    key ^= 0xffffff00u;
    std::memcpy(wrong.rkey, &key, sizeof key);
    std::string problem;
    if (auto err = rdma_and_wait(h, ep, false, local.data() + 1, 64, region.addr, wrong, &result); !err.empty())
        problem = "get with a wrong rkey: " + err;
    else if (result.calls != 1 || result.status == WEFT_SUCCESS)
        problem = "get with a wrong rkey: callback " + std::to_string(result.calls) + " times, status " +
                  weft_status_string(result.status);
    else if (!h.progress_until([&] { return failure_of(h, ep) != nullptr; }))
        problem = "the endpoint did not fail after the bad rkey: " + h.failure();
    else if (const std::string reason = failure_of(h, ep)->reason;
             reason.find("peer rank 1") == std::string::npos || verbs_status_in(reason).empty())
        problem = "the endpoint's reason names no peer rank or verbs status: " + reason;
    weft_btl_mem_deregister(ep->module, &reg);
    ctx.channel.send(std::string("done"));
    return problem;
}

// The child's side: registers its memory, tells the parent, checks it
// when asked, and keeps its endpoint up until the parent is done. The
// parent's bad rkey put this side's queue pair in the error state too (the
// responder of a refused access): its endpoint must fail as well, not stay
// "connected" with every send silently flushed.
std::string rdma_target(PeerContext &ctx, weft_btl_endpoint_t *ep)
{
    BtlHarness &h = ctx.harness;
    std::vector<std::byte> memory = pattern(kRemoteBytes, kRemoteSeed);
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    if (int rc = weft_btl_mem_register(ep->module, memory.data(), memory.size(), &reg); rc != WEFT_SUCCESS)
        return std::string("mem_register failed: ") + weft_status_string(rc);
    if (reg.rkey_len == 0 || reg.rkey_len > sizeof RemoteRegion{}.rkey)
        return "mem_register gave an rkey of " + std::to_string(reg.rkey_len) + " bytes";
    RemoteRegion region;
    region.addr = reinterpret_cast<uintptr_t>(memory.data());
    region.rkey_len = static_cast<uint32_t>(reg.rkey_len);
    std::memcpy(region.rkey, reg.rkey, reg.rkey_len);
    if (!ctx.channel.send(std::as_bytes(std::span(&region, 1))))
        return "could not send the registration";
    // The parent's reads and writes need nothing from this side's progress,
    // but its frames (none here) and the connection's health do.
    if (!h.progress_until([&] { return ctx.channel.readable(); }))
        return "the parent never asked for the check: " + h.failure();
    ctx.channel.receive(30s);
    const std::string diff = first_difference(memory, remote_after_puts());
    ctx.channel.send(diff.empty() ? std::string("ok") : diff);
    if (!h.progress_until([&] { return ctx.channel.readable(); }))
        return "the parent never said it was done: " + h.failure();
    ctx.channel.receive(30s);
    std::string problem;
    if (!h.progress_until([&] { return failure_of(h, ep) != nullptr; }, Bounds{.deadline = 20s}))
        problem = "this side's endpoint never failed after the refused access: " + h.failure();
    else if (const std::string reason = failure_of(h, ep)->reason; reason.find("peer rank 0") == std::string::npos)
        problem = "this side's failure does not name the peer: " + reason;
    weft_btl_mem_deregister(ep->module, &reg);
    return problem;
}

} // namespace

namespace {

// The parent connects to the child, which waits for the connection: *ep
// on each side. "" or what failed.
std::string connect_pair(PeerContext &ctx, weft_btl_endpoint_t **ep)
{
    BtlHarness &h = ctx.harness;
    if (ctx.side == Side::parent)
        return h.connect(ctx.peer(WEFT_PEER_SAME_NODE), ep);
    *ep = wait_connected(h);
    return *ep ? "" : "the parent's connection never arrived: " + h.failure();
}

std::string rdma_mirror(PeerContext &ctx)
{
    weft_btl_endpoint_t *ep = nullptr;
    if (auto err = connect_pair(ctx, &ep); !err.empty())
        return err;
    return ctx.side == Side::parent ? rdma_initiator(ctx, ep) : rdma_target(ctx, ep);
}

} // namespace

TEST_F(OpenibPeer, RdmaReadAndWriteMoveTheBytes)
{
    // The data path is the same whichever cpc connected the queue pairs, but
    // how the target learns of the broken connection is not.
    for (const char *cpc : {"udcm", "rdmacm"}) {
        SCOPED_TRACE(std::string("btl_openib_cpc=") + cpc);
        ASSERT_TRUE(use_cpc(cpc));
        // The upcalls of the previous round name endpoints that are gone.
        h_.states.clear();
        h_.deliveries.clear();
        EXPECT_EQ(run_two_process(h_, rdma_mirror), "");
    }
}

// ---- an idle connected module ------------------------------------------------

namespace {

// The read and write system calls this thread has made so far (syscr +
// syscw of /proc/thread-self/io), or -1 where the kernel does not say.
long long read_write_calls()
{
    const int fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char text[512];
    const ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -1;
    const std::string io(text, static_cast<size_t>(n));
    auto field = [&](const char *name) {
        const size_t at = io.find(name);
        return at == std::string::npos ? -1 : std::atoll(io.c_str() + at + std::strlen(name));
    };
    const long long reads = field("syscr: "), writes = field("syscw: ");
    return reads < 0 || writes < 0 ? -1 : reads + writes;
}

// Each side of a connected pair that has exchanged a frame polls its idle
// module through three of openib's looks at its cpcs (every 16384th pass):
// no read or write system call on any of them. Under emulation a system
// call costs microseconds, and a round trip that met the look paid three
// (udcm's completion channel read, its clock read, rdmacm's event fetch).
std::string idle_mirror(PeerContext &ctx)
{
    BtlHarness &h = ctx.harness;
    weft_btl_endpoint_t *ep = nullptr;
    if (auto err = connect_pair(ctx, &ep); !err.empty())
        return err;
    // The parent's frame, then the child's answer: both queue pairs carry traffic.
    std::vector<std::byte> bytes = pattern(64, 5);
    iovec iov{bytes.data(), bytes.size()};
    auto send = [&] { return h.retry_on_again([&] { return weft_btl_send(ep, 3, &iov, 1); }); };
    if (ctx.side == Side::parent && send() != WEFT_SUCCESS)
        return "the first frame did not go: " + h.failure();
    if (!h.progress_until([&] { return !h.deliveries.empty(); }))
        return "no frame arrived: " + h.failure();
    if (ctx.side == Side::child && send() != WEFT_SUCCESS)
        return "the answer did not go: " + h.failure();
    if (!ctx.channel.send(std::string("sent")) || !h.progress_until([&] { return ctx.channel.readable(); }) ||
        !ctx.channel.receive(30s))
        return "the other side went away: " + h.failure();
    // The handshake's last datagrams (the child connected on the parent's
    // first frame) and the last send's completion come in meanwhile.
    constexpr int kPasses = 3 * 16384 + 1000;
    for (int i = 0; i < kPasses; ++i)
        h.progress_once();
    const long long before = read_write_calls(), after_one_look = read_write_calls();
    if (before < 0)
        return "";   // this kernel does not count them: nothing to check
    for (int i = 0; i < kPasses; ++i)
        if (h.progress_once() < 0)
            return "progress failed: " + h.failure();
    const long long calls = read_write_calls() - after_one_look - (after_one_look - before);
    std::string problem;
    if (calls != 0)
        problem = std::to_string(calls) + " read/write system calls in " + std::to_string(kPasses) +
                  " passes of an idle connected module";
    // Both sides measured before either closes.
    ctx.channel.send(std::string("measured"));
    if (!h.progress_until([&] { return ctx.channel.readable(); }))
        return "the other side never finished measuring: " + h.failure();
    ctx.channel.receive(30s);
    return problem;
}

} // namespace

TEST_F(OpenibPeer, IdleConnectedModuleMakesNoReadOrWriteSystemCalls)
{
    ASSERT_TRUE(use_cpc("udcm"));   // rdmacm's event fetch is a write even with nothing pending
    EXPECT_EQ(run_two_process(h_, idle_mirror), "");
}

// ---- registration failures --------------------------------------------------

namespace {

// Memory the kernel will not pin: mapped without access, or not mapped.
class Unpinnable {
public:
    explicit Unpinnable(size_t bytes) : bytes_(bytes)
    {
        void *p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        addr_ = p == MAP_FAILED ? nullptr : p;
    }
    ~Unpinnable()
    {
        if (addr_ && mapped_)
            munmap(addr_, bytes_);
    }
    Unpinnable(const Unpinnable &) = delete;
    Unpinnable &operator=(const Unpinnable &) = delete;
    void *addr() const { return addr_; }
    // Leaves the range unmapped (the address stays reserved for nobody:
    // nothing else in this single-threaded test maps memory meanwhile).
    void unmap()
    {
        munmap(addr_, bytes_);
        mapped_ = false;
    }

private:
    size_t bytes_;
    void *addr_ = nullptr;
    bool mapped_ = true;
};

} // namespace

TEST(Openib, RegistrationFailureSaysWhatToDo)
{
    BtlHarness h;
    auto loaded = h.load({"openib", PeerMode::other_process, {}});
    if (loaded.skip)
        GTEST_SKIP() << loaded.message;
    ASSERT_TRUE(loaded.ok) << loaded.message;
    ASSERT_EQ(h.init_modules(), "");
    const std::string limit = weft::openib::memlock_limit_text();
    constexpr size_t kBytes = 16 * 4096;
    Unpinnable memory(kBytes);
    ASSERT_NE(memory.addr(), nullptr);

    for (const char *how : {"PROT_NONE", "unmapped"}) {
        if (std::string(how) == "unmapped")
            memory.unmap();
        h.log_lines.clear();
        weft_btl_reg_t reg{};
        reg.size = sizeof reg;
        EXPECT_NE(weft_btl_mem_register(h.module(), memory.addr(), kBytes, &reg), WEFT_SUCCESS) << how;
        std::string log;
        for (const std::string &line : h.log_lines)
            log += line + "\n";
        EXPECT_NE(log.find("cannot register " + std::to_string(kBytes) + " bytes"), std::string::npos)
            << how << ": " << log;
        EXPECT_NE(log.find("ulimit -l) is " + limit), std::string::npos) << how << ": " << log;
        EXPECT_NE(log.find("'ulimit -l unlimited'"), std::string::npos) << how << ": " << log;
        EXPECT_NE(log.find("limits.conf"), std::string::npos) << how << ": " << log;
        // ...and, since no limit is the cause here, what is.
        EXPECT_NE(log.find("not mapped with read and write access"), std::string::npos) << how << ": " << log;
    }
    // The failures left nothing behind: ordinary memory still registers.
    std::vector<std::byte> fine(kBytes);
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    ASSERT_EQ(weft_btl_mem_register(h.module(), fine.data(), fine.size(), &reg), WEFT_SUCCESS);
    EXPECT_EQ(weft_btl_mem_deregister(h.module(), &reg), WEFT_SUCCESS);
}

namespace {

// The first RDMA device's context and a protection domain of it.
class VerbsPd {
public:
    VerbsPd()
    {
        int count = 0;
        ibv_device **list = ibv_get_device_list(&count);
        if (list && count > 0) {
            ctx_ = ibv_open_device(list[0]);
            name_ = ibv_get_device_name(list[0]);
        }
        if (list)
            ibv_free_device_list(list);
        if (ctx_)
            pd_ = ibv_alloc_pd(ctx_);
    }
    ~VerbsPd()
    {
        if (pd_)
            ibv_dealloc_pd(pd_);
        if (ctx_)
            ibv_close_device(ctx_);
    }
    VerbsPd(const VerbsPd &) = delete;
    VerbsPd &operator=(const VerbsPd &) = delete;
    ibv_pd *pd() const { return pd_; }
    const std::string &name() const { return name_; }

private:
    ibv_context *ctx_ = nullptr;
    ibv_pd *pd_ = nullptr;
    std::string name_;
};

} // namespace

// The registration cache itself, on a real protection domain: the message
// counts what this process already has registered.
TEST(Openib, RegistrationFailureCountsWhatIsAlreadyRegistered)
{
    VerbsPd verbs;
    if (!verbs.pd())
        GTEST_SKIP() << "no RDMA device to allocate a protection domain on";
    weft_btl_counters_t counters{};
    weft_btl_counters_t *counted = &counters;
    weft::openib::RegCache cache(verbs.pd(), verbs.name() + ":1", size_t{1} << 30, false, &counted);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<std::byte> fine(3 * page);
    std::string why;
    // Page-aligned inside the vector: exactly two pages get registered.
    auto *aligned = reinterpret_cast<std::byte *>((reinterpret_cast<uintptr_t>(fine.data()) + page - 1) & ~(page - 1));
    weft::openib::RegCache::Region *ok = cache.acquire(aligned, 2 * page, &why);
    ASSERT_NE(ok, nullptr) << why;
    ASSERT_EQ(cache.registered_bytes(), 2 * page);
    weft::openib::RegCache::Region *again = cache.acquire(aligned + 1, page, &why);   // inside it: a hit
    EXPECT_EQ(again, ok);
    cache.release(again);
    EXPECT_EQ(counters.registrations, 1u);
    EXPECT_EQ(counters.reg_cache_hits, 1u);

    Unpinnable memory(8 * page);
    ASSERT_NE(memory.addr(), nullptr);
    EXPECT_EQ(cache.acquire(memory.addr(), 8 * page, &why), nullptr);
    EXPECT_NE(why.find("cannot register " + std::to_string(8 * page) + " bytes on " + verbs.name() + ":1"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("has " + std::to_string(2 * page) + " bytes registered"), std::string::npos) << why;
    EXPECT_NE(why.find("(ulimit -l) is " + weft::openib::memlock_limit_text()), std::string::npos) << why;
    EXPECT_NE(why.find("limits.conf"), std::string::npos) << why;
    // A refused registration is not counted or kept.
    EXPECT_EQ(counters.registrations, 1u);
    EXPECT_EQ(cache.registered_bytes(), 2 * page);
    EXPECT_EQ(cache.regions(), 1u);
    cache.release(ok);
    EXPECT_EQ(cache.registered_bytes(), 0u);
}

// ---- no connection method in common -------------------------------------------

TEST_F(OpenibPeer, PeerWithoutCommonCpcIsUnreachableWithReason)
{
    // Each side narrows btl_openib_cpc before its modules start: the parent
    // runs udcm only, the child rdmacm only.
    // reachable()'s answer about the other side: "" when it says 0 with a
    // reason naming both lists, else what is wrong.
    auto unreachable_with_reason = [](BtlHarness &h, const std::vector<std::byte> &card, const std::string &here,
                                      const std::string &there) -> std::string {
        const weft_btl_peer_t peer = BtlHarness::peer(9, WEFT_PEER_SAME_NODE, card);
        char why[WEFT_REASON_MAX] = {};
        const int verdict = weft_btl_reachable(h.module(), &peer, why, sizeof why);
        const std::string reason = why;
        if (verdict != 0)
            return "reachable() said " + std::to_string(verdict) + " (" + reason + ")";
        if (reason.find("no connection method in common") == std::string::npos ||
            reason.find("here: " + here) == std::string::npos || reason.find("the peer: " + there) == std::string::npos)
            return "the reason does not list both sides' cpcs: " + reason;
        return "";
    };
    const std::string job = unique_job("openib-cpc");
    PeerProcess other = fork_peer([&](Channel &ch) {
        auto card = use_cpc("rdmacm") ? start_and_swap_cards(h_, ch, 1, job) : std::nullopt;
        if (!card)
            return 1;
        ch.send(unreachable_with_reason(h_, *card, "rdmacm", "udcm"));
        // Until the parent is done with this side's card.
        ch.receive(60s);
        return 0;
    });
    ASSERT_TRUE(other.child) << "fork failed";
    Channel &ch = *other.channel;
    ASSERT_TRUE(use_cpc("udcm"));
    auto card = start_and_swap_cards(h_, ch, 0, job);
    ASSERT_TRUE(card.has_value()) << "no modules here, or the child sent no card";
    EXPECT_EQ(unreachable_with_reason(h_, *card, "udcm", "rdmacm"), "") << "parent";
    auto theirs = ch.receive(30s);
    ASSERT_TRUE(theirs.has_value()) << "no verdict from the child";
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(theirs->data()), theirs->size()), "") << "child";

    // Connecting anyway fails at once with a reason, instead of hanging.
    weft_btl_endpoint_t *ep = nullptr;
    const weft_btl_peer_t peer = BtlHarness::peer(1, WEFT_PEER_SAME_NODE, *card);
    EXPECT_NE(h_.connect(peer, &ep), "");
    ASSERT_NE(ep, nullptr);
    const StateChange *failure = failure_of(h_, ep);
    ASSERT_NE(failure, nullptr);
    EXPECT_NE(failure->reason.find("no connection method in common"), std::string::npos) << failure->reason;
    EXPECT_NE(failure->reason.find("peer rank 1"), std::string::npos) << failure->reason;
    ch.send(std::string("done"));
    EXPECT_EQ(other.child->exit_code(30s), 0);
}

// ---- the oob cpc: every pair wired at init, never rewired -----------------------

namespace {

// One side of the oob test: the pair is connected before anyone asks
// (modex_ready ran in run_two_process), start_connect finds that endpoint,
// and after an orderly close a second connect fails with oob's reason, or,
// when udcm runs beside oob (lazy), is made by udcm.
std::string oob_mirror(PeerContext &ctx, bool udcm_beside)
{
    BtlHarness &h = ctx.harness;
    // CONNECTED comes from progress without any start_connect.
    weft_btl_endpoint_t *wired = wait_connected(h);
    if (!wired)
        return "no CONNECTED upcall for the pair oob wired at init: " + h.failure();
    if (wired->peer_rank != ctx.peer_rank)
        return "the wired endpoint names rank " + std::to_string(wired->peer_rank);
    const weft_btl_peer_t peer = ctx.peer(WEFT_PEER_SAME_NODE);
    weft_btl_endpoint_t *ep = nullptr;
    if (std::string err = h.connect(peer, &ep); !err.empty())
        return "connect to the wired peer: " + err;
    if (ep != wired)
        return "start_connect made a second endpoint instead of returning the wired one";
    // Both sides are up before anyone closes.
    if (!ctx.channel.send(std::string("up")) || !ctx.channel.receive(30s))
        return "no barrier before the close";
    if (ctx.side == Side::parent && weft_btl_disconnect(ep) != WEFT_SUCCESS)
        return "disconnect failed";
    if (!h.progress_until([&] { return h.count_states(ep, WEFT_BTL_EP_CLOSED) > 0; }))
        return "no CLOSED upcall after the orderly close: " + h.failure();
    weft_btl_endpoint_t *again = nullptr;
    const std::string err = h.connect(peer, &again);
    if (udcm_beside) {
        if (!err.empty())
            return "the reconnect with udcm beside oob failed: " + err;
        if (again == ep)
            return "the reconnect returned the closed endpoint";
        if (!ctx.channel.send(std::string("done")) || !ctx.channel.receive(30s))
            return "no barrier after the reconnect";
        return "";
    }
    if (err.empty())
        return "a reconnect over oob succeeded; oob wires each pair once per job";
    const StateChange *failure = again ? failure_of(h, again) : nullptr;
    if (!failure)
        return "the reconnect failed without a FAILED upcall: " + err;
    if (failure->reason.find("once per job") == std::string::npos ||
        failure->reason.find("udcm or rdmacm") == std::string::npos)
        return "the refused reconnect does not say why and what to do: " + failure->reason;
    if (!ctx.channel.send(std::string("done")) || !ctx.channel.receive(30s))
        return "no barrier after the reconnect";
    return "";
}

} // namespace

TEST_F(OpenibPeer, OobWiresThePairAtInitAndRefusesAReconnectWithTheReason)
{
    ASSERT_TRUE(use_cpc("oob"));
    EXPECT_EQ(run_two_process(h_, [](PeerContext &ctx) { return oob_mirror(ctx, false); }), "");
    // udcm beside oob (its priority is higher, but a live wired pair is used
    // whatever the order): the same wiring at init, a lazy reconnect by udcm.
    h_.states.clear();
    h_.deliveries.clear();
    ASSERT_TRUE(use_cpc("oob,udcm"));
    EXPECT_EQ(run_two_process(h_, [](PeerContext &ctx) { return oob_mirror(ctx, true); }), "");
}

TEST_F(OpenibPeer, OobDeclinesAboveItsMaxProcsNamingTheLazyCpcs)
{
    weft::params::Origin api;
    api.source = weft::params::Source::Api;
    ASSERT_TRUE(weft::Framework::current()->params().set("btl_openib_cpc_oob_max_procs", "2", api).ok());
    for (const char *cpcs : {"oob,udcm", "oob"}) {
        SCOPED_TRACE(std::string("btl_openib_cpc=") + cpcs);
        ASSERT_TRUE(use_cpc(cpcs));
        h_.log_lines.clear();
        ASSERT_EQ(h_.init_modules(), "");
        h_.set_process(0, 3, unique_job("openib-oob-max"));
        const std::vector<std::byte> bytes = h_.card();
        weft::openib::Card card;
        std::string why;
        ASSERT_TRUE(weft::openib::decode_card(
            std::span(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()), &card, &why))
            << why;
        // No oob section (no queue pairs were made for the job of 3); the
        // other cpcs carry on.
        for (const auto &s : card.sections)
            EXPECT_NE(s.cpc, "oob");
        if (std::string(cpcs) == "oob") {
            // Alone, its refusal is a warning that says why and names the
            // lazy alternatives.
            EXPECT_TRUE(card.sections.empty());
            std::string all;
            for (const std::string &l : h_.log_lines)
                all += l + "\n";
            EXPECT_NE(all.find("btl_openib_cpc_oob_max_procs=2"), std::string::npos) << all;
            EXPECT_NE(all.find("udcm and rdmacm"), std::string::npos) << all;
        } else {
            ASSERT_EQ(card.sections.size(), 1u);
            EXPECT_EQ(card.sections[0].cpc, "udcm");
        }
        EXPECT_EQ(h_.finalize_modules(), "");
    }
}
