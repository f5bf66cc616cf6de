// SPDX-License-Identifier: BSD-3-Clause
#include "scif_endpoint.hpp"

#include <weft/component_util.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include "scif_ctrl.hpp"

namespace weft::scif {

namespace {

using Clock = std::chrono::steady_clock;

std::mutex g_table_lock;   // open/close of the descriptor table only

// A word the peer reads with process_vm_readv to find out, by a real
// attempt, whether single-copy works toward this process.
uint64_t g_probe_word = 0;
std::once_flag g_probe_once;
uint64_t probe_word()
{
    std::call_once(g_probe_once, [] {
        std::random_device rd;
        g_probe_word = (uint64_t{rd()} << 32) | rd() | 1;
    });
    return g_probe_word;
}

// WEFT_SCIF_SINGLE_COPY=0 forces the copy-through-the-peer fallback (tests,
// or a kernel whose process_vm_* misbehaves in a way the probe misses).
bool single_copy_allowed()
{
    const char *v = std::getenv("WEFT_SCIF_SINGLE_COPY");
    return !(v && v[0] == '0');
}

// The abstract socket name of a port of this user: nothing on disk, and the
// name dies with the last socket, even after SIGKILL.
socklen_t port_address(uint16_t port, sockaddr_un *sa)
{
    std::memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    int n = std::snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "weft-scif.%u.%u",
                          static_cast<unsigned>(geteuid()), static_cast<unsigned>(port));
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Receives one control message without blocking. Returns its length, 0 at a
// hang-up, -EAGAIN when none waits, -errno. Descriptors that came with it
// are stored in fds_out (in order) if wanted, the rest closed.
ssize_t recv_ctrl(int fd, std::byte (&buf)[kCtrlMax], std::span<UniqueFd> fds_out = {})
{
    for (UniqueFd &f : fds_out)
        f.reset();
    size_t stored = 0;
    iovec iov{buf, kCtrlMax};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * (kMaxPassedFds + 1))];
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    ssize_t n;
    do {
        n = ::recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return errno == EAGAIN ? -EAGAIN : -errno;
    for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int got;
            std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            if (stored < fds_out.size())
                fds_out[stored++].reset(got);
            else
                ::close(got);   // unasked-for descriptors never leak
        }
    }
    if (mh.msg_flags & MSG_TRUNC)
        return -EPROTO;
    return n;
}

bool peer_has_my_uid(int fd, pid_t *pid)
{
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return false;
    *pid = cred.pid;
    return cred.uid == geteuid();
}

// May this process use process_vm_readv on pid at all? A real attempt on
// an address that is never mapped (page 0): a permitted call fails with
// EFAULT, a refused one with EPERM (ptrace rules, a seccomp filter), ENOSYS
// or EACCES. Asked before the peer's probe word is known (connect_req).
bool may_single_copy(pid_t pid)
{
    if (!single_copy_allowed())
        return false;
    char got = 0;
    iovec l{&got, 1};
    iovec r{nullptr, 1};
    return ::process_vm_readv(pid, &l, 1, &r, 1, 0) == 1 || errno == EFAULT;
}

// Does process_vm_readv reach pid? A real attempt on its probe word.
bool probe_single_copy(pid_t pid, uint64_t addr, uint64_t expect)
{
    if (!single_copy_allowed())
        return false;
    uint64_t got = 0;
    iovec l{&got, sizeof got};
    iovec r{reinterpret_cast<void *>(addr), sizeof got};
    return ::process_vm_readv(pid, &l, 1, &r, 1, 0) == static_cast<ssize_t>(sizeof got) &&
           got == expect;
}

// Segment layout: ring connector->acceptor, ring acceptor->connector, then
// the connector's and the acceptor's SideShared, then the DuplexShared line.
struct Layout {
    size_t c2s, s2c, side_c, side_s, duplex, total;
};
Layout layout(uint32_t cells)
{
    Layout l;
    l.c2s = 0;
    l.s2c = ring_bytes(cells);
    l.side_c = 2 * ring_bytes(cells);
    l.side_s = l.side_c + sizeof(SideShared);
    l.duplex = l.side_s + sizeof(SideShared);
    l.total = l.duplex + sizeof(DuplexShared);
    l.total = (l.total + 4095) & ~size_t{4095};
    return l;
}

void attach(Endpoint &ep, bool connector, uint32_t cells)
{
    const Layout l = layout(cells);
    auto *c2s = reinterpret_cast<RingShared *>(ep.segment.data() + l.c2s);
    auto *s2c = reinterpret_cast<RingShared *>(ep.segment.data() + l.s2c);
    auto *sc = reinterpret_cast<SideShared *>(ep.segment.data() + l.side_c);
    auto *ss = reinterpret_cast<SideShared *>(ep.segment.data() + l.side_s);
    ep.tx = RingProducer(connector ? c2s : s2c);
    ep.rx = RingConsumer(connector ? s2c : c2s);
    ep.mine = connector ? sc : ss;
    ep.theirs = connector ? ss : sc;
    ep.duplex = Duplex(reinterpret_cast<DuplexShared *>(ep.segment.data() + l.duplex), connector);
}

// Whether this host has more than one NUMA node online (sysfs's node list
// is "0" on one); unknown counts as more, which keeps the first touch.
bool several_numa_nodes()
{
    static const bool several = [] {
        std::FILE *f = std::fopen("/sys/devices/system/node/online", "re");
        if (!f)
            return true;
        char list[64] = "";
        const bool read = std::fgets(list, sizeof list, f) != nullptr;
        std::fclose(f);
        return !read || std::strcmp(list, "0\n") != 0;
    }();
    return several;
}

// First touch of the ring this side receives on, so its pages come from the
// receiver's NUMA node (the connector creates the segment but touches only
// its own receive ring; the acceptor touches the other before acking). On
// a host of one NUMA node there is nothing to place: the connection is made
// without it, and the owner faults the pages in a chunk at a time while it
// has nothing else to do (populate_rings_step). Two times 2 MiB of
// page faults one after the other were most of a first contact (2 ranks on
// the VM: the first round trip 3.2-3.4 ms, Open MPI's 24-136 us); left to
// the peer's first writes, they halved the 8-byte message rate of the
// connection's first tens of thousands of messages.
// The send ring's pages are mapped the same way, after the receive ring's:
// a page the peer has in its memory still faults in this process at its
// first store. The first lap of streamed 8 KiB messages took 1,043 such
// faults (2 ranks, osu_allgather), about 0.6 us each on the VM: 2.0 us an
// exchange over 1,100 calls against 1.6 over 2,200. Not where NUMA nodes
// are several: the peer places its receive ring's pages by touching them,
// and a populate from here may come first.
void touch_receive_ring(Endpoint &ep, bool connector, uint32_t cells)
{
    const Layout l = layout(cells);
    std::byte *ring = ep.segment.data() + (connector ? l.s2c : l.c2s);
    std::byte *send_ring = ep.segment.data() + (connector ? l.c2s : l.s2c);
    const size_t bytes = kRingHeaderBytes + size_t{cells} * kCell;
    if (!several_numa_nodes()) {
        ep.populate[0] = {ring, ring + bytes};
        ep.populate[1] = {send_ring, send_ring + bytes};
        return;
    }
    std::memset(ring + kRingHeaderBytes, 0, size_t{cells} * kCell);
}

int wait_readable(int fd, int timeout_ms)
{
    pollfd p{fd, POLLIN, 0};
    int r;
    do {
        r = ::poll(&p, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    return r;
}

constexpr int kPeerMemfdSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

} // namespace

int make_sealed_memfd(const char *name, size_t len, UniqueFd *out)
{
    UniqueFd mfd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!mfd)
        return errno == EMFILE || errno == ENFILE ? -ENOMEM : -errno;
    if (::ftruncate(mfd.get(), static_cast<off_t>(len)) != 0)
        return -ENOMEM;
    if (::fcntl(mfd.get(), F_ADD_SEALS, kPeerMemfdSeals) != 0)
        return -errno;
    *out = std::move(mfd);
    return 0;
}

int map_peer_memfd(int fd, size_t len, Mapping *out)
{
    // Without these seals the peer could shrink the file under our mapping
    // and the next access to a lost page would kill us with SIGBUS.
    const int seals = ::fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & kPeerMemfdSeals) != kPeerMemfdSeals)
        return -EPROTO;
    struct stat st{};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        static_cast<size_t>(st.st_size) != len)
        return -EPROTO;
    *out = Mapping::shared(fd, len);
    return *out ? 0 : -ENOMEM;
}

namespace {
std::atomic<uint32_t> g_ring_cells{0};
}

void set_ring_cells(uint32_t cells)
{
    if (cells >= kMinRingCells && cells <= kMaxRingCells && (cells & (cells - 1)) == 0)
        g_ring_cells.store(cells, std::memory_order_relaxed);
}

uint32_t ring_cells_default()
{
    if (uint32_t c = g_ring_cells.load(std::memory_order_relaxed))
        return c;
    // 64 KiB per direction: 1024 cells; WEFT_SCIF_RING_CELLS overrides (btl/scif
    // sets it from btl_scif_ring_size).
    if (const char *v = std::getenv("WEFT_SCIF_RING_CELLS")) {
        unsigned long c = std::strtoul(v, nullptr, 10);
        if (c >= kMinRingCells && c <= kMaxRingCells && (c & (c - 1)) == 0)
            return static_cast<uint32_t>(c);
    }
    return 1024;
}

// ---- table -------------------------------------------------------------------

std::atomic<Endpoint *> g_table[kMaxEndpoints];

int adopt(std::unique_ptr<Endpoint> ep)
{
    const int fd = ep->fd();
    if (fd >= kMaxEndpoints)
        return -ENOMEM;   // the table is full: "not enough space"
    std::lock_guard<std::mutex> lock(g_table_lock);
    g_table[fd].store(ep.release(), std::memory_order_release);
    return fd;
}

int open_endpoint()
{
    UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s)
        return errno == EMFILE || errno == ENFILE ? -ENOMEM : -errno;
    std::unique_ptr<Endpoint> ep(new (std::nothrow) Endpoint(std::move(s)));
    if (!ep)
        return -ENOMEM;
    return adopt(std::move(ep));
}

int close_endpoint(int epd)
{
    Endpoint *ep;
    {
        std::lock_guard<std::mutex> lock(g_table_lock);
        ep = lookup(epd);
        if (!ep)
            return -EBADF;
        g_table[epd].store(nullptr, std::memory_order_release);
    }
    std::unique_ptr<Endpoint> owned(ep);
    if (owned->state == State::connected) {
        // The flag lets the peer tell an orderly close from a crash; the
        // socket's hang-up (below, when the descriptor closes) wakes it.
        owned->tx.mark_closed();
    }
    return 0;   // the destructor unmaps the rings and closes the socket
}

// ---- setup ---------------------------------------------------------------------

int bind_port(Endpoint &ep, uint16_t pn)
{
    if (ep.state == State::connected || ep.state == State::connecting)
        return -EISCONN;
    if (ep.state != State::unbound)
        return -EINVAL;
    if (pn != 0 && pn < SCIF_ADMIN_PORT_END && geteuid() != 0)
        return -EACCES;
    sockaddr_un sa;
    if (pn != 0) {
        socklen_t len = port_address(pn, &sa);
        if (::bind(ep.fd(), reinterpret_cast<sockaddr *>(&sa), len) != 0)
            return errno == EADDRINUSE ? -EINVAL : -errno;   // the seed: "port already bound"
        ep.port = pn;
        ep.state = State::bound;
        return pn;
    }
    // Start at a pseudo-random port so endpoints of many processes rarely
    // collide: the pid and a per-process counter, mixed. (No thread_local:
    // a TLS block in a DSO that is dlclosed and reloaded trips
    // LeakSanitizer's scan of the threads' TLS.)
    static std::atomic<uint32_t> calls{0};
    uint64_t x = (static_cast<uint64_t>(getpid()) << 32) | calls.fetch_add(1, std::memory_order_relaxed);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    const uint32_t range = 65536 - SCIF_PORT_RSVD;
    const uint32_t start = static_cast<uint32_t>(x % range);
    for (uint32_t i = 0; i < range; ++i) {
        const auto port = static_cast<uint16_t>(SCIF_PORT_RSVD + (start + i) % range);
        socklen_t len = port_address(port, &sa);
        if (::bind(ep.fd(), reinterpret_cast<sockaddr *>(&sa), len) == 0) {
            ep.port = port;
            ep.state = State::bound;
            return port;
        }
        if (errno != EADDRINUSE)
            return -errno;
    }
    return -ENOSPC;
}

int listen_on(Endpoint &ep, int backlog)
{
    if (ep.state == State::connected || ep.state == State::connecting ||
        ep.state == State::listening)
        return -EISCONN;
    if (ep.state != State::bound)
        return -EINVAL;
    if (::listen(ep.fd(), backlog < 1 ? 1 : backlog) != 0)
        return -errno;
    ep.state = State::listening;
    return 0;
}

namespace {

// Starts serving the peer's RMA through its bounce slots when its message
// asks for it (flags) and brought the socket and memfd.
void maybe_serve(Endpoint &ep, uint16_t flags, UniqueFd &sock, UniqueFd &memfd)
{
    if (!(flags & kCtrlNeedBounce) || !ep.rma_service)
        return;
    // Failure leaves the peer's requests unanswered: its RMA sees a hang-up
    // (ECONNRESET) once the descriptors close here, never a hang.
    ep.server.start(ep, std::move(sock), std::move(memfd));
}

// Handles a connect_ack on a connecting endpoint.
void complete_connect(Endpoint &ep, const ConnectAck &ack, std::span<UniqueFd> fds)
{
    ep.peer.port = ack.port;
    ep.single_copy = ep.single_copy && probe_single_copy(ep.peer_pid, ack.probe_addr, ack.probe_value);
    ep.ack_pending = false;
    ep.state = State::connected;
    maybe_serve(ep, ack.flags, fds[0], fds[1]);
}

} // namespace

namespace {

// A SOCK_SEQPACKET socket connects once: after a connect that got as far as
// the socket connection and then failed, the endpoint gets a fresh socket at
// the same descriptor number (dup3 closes the old one, which frees the port's
// name), with the user's file status flags (O_NONBLOCK), bound to its port
// again. So a failed scif_connect() leaves the endpoint bound, as the SCIF
// driver does, and it may connect again. If the port went to someone else in
// between, the endpoint is unbound (the next connect binds a new port).
// Returns err.
int abandon_connect(Endpoint &ep, int err)
{
    ep.segment.reset();
    ep.tx = RingProducer();
    ep.rx = RingConsumer();
    ep.mine = ep.theirs = nullptr;
    ep.bounce = BounceRequester();
    ep.peer = {};
    ep.peer_pid = 0;
    ep.single_copy = false;
    ep.peer_gone = false;
    ep.ack_pending = false;
    ep.state = State::bound;
    const int fd = ep.fd();
    const int fl = ::fcntl(fd, F_GETFL);
    UniqueFd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s || ::dup3(s.get(), fd, O_CLOEXEC) < 0)
        return err;   // keeps the old socket: a later connect fails again, cleanly
    if (fl >= 0)
        ::fcntl(fd, F_SETFL, fl);
    sockaddr_un sa;
    const socklen_t len = port_address(ep.port, &sa);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&sa), len) != 0) {
        ep.state = State::unbound;
        ep.port = 0;
    }
    return err;
}

// Sends the connect request (with the ring segment) on a connected socket.
int start_handshake(Endpoint &ep, uint16_t dst_port)
{
    const uint32_t cells = ring_cells_default();
    const Layout l = layout(cells);
    UniqueFd mfd;
    if (int rc = make_sealed_memfd("weft-scif", l.total, &mfd); rc != 0)
        return rc;
    ep.segment = Mapping::shared(mfd.get(), l.total);
    if (!ep.segment)
        return -ENOMEM;
    ring_init(reinterpret_cast<RingShared *>(ep.segment.data() + l.c2s), cells);
    ring_init(reinterpret_cast<RingShared *>(ep.segment.data() + l.s2c), cells);
    touch_receive_ring(ep, true, cells);
    attach(ep, true, cells);
    ep.ring_cells = cells;
    CtrlMsg req{};
    req.type = CtrlType::connect_req;
    req.u.req.src_port = ep.port;
    req.u.req.ring_cells = cells;
    req.u.req.probe_addr = reinterpret_cast<uintptr_t>(&g_probe_word);
    req.u.req.probe_value = probe_word();
    // Refused single copy (a real attempt): ask the acceptor to serve our
    // RMA through bounce slots. The probe word check follows on the ack.
    ep.single_copy = may_single_copy(ep.peer_pid);
    UniqueFd svc_sock, svc_mem;
    if (!ep.single_copy && ep.rma_service) {
        if (int rc = make_bounce(&ep.bounce, &svc_sock, &svc_mem); rc != 0)
            return rc;
        req.u.req.flags |= kCtrlNeedBounce;
    }
    const int pass[3] = {mfd.get(), svc_sock.get(), svc_mem.get()};
    if (int src = send_ctrl(ep.fd(), req, std::span<const int>(pass, svc_sock ? 3 : 1)); src != 0)
        return src == -EPIPE || src == -ECONNRESET ? -ECONNREFUSED : src;
    // The memfd closes here: from now on only the two mappings hold it.
    ep.peer = {0, dst_port};
    ep.state = State::connecting;
    ep.ack_pending = true;
    return 0;
}

} // namespace

int connect_to(Endpoint &ep, uint16_t dst_port, bool block)
{
    if (ep.state == State::unbound) {
        if (int rc = bind_port(ep, 0); rc < 0)
            return rc;
    }
    sockaddr_un sa;
    socklen_t salen = port_address(dst_port, &sa);
    int rc;
    do {
        rc = ::connect(ep.fd(), reinterpret_cast<sockaddr *>(&sa), salen);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        // No listener (ENOENT, ECONNREFUSED) or its queue is full (EAGAIN).
        return errno == ENOENT || errno == ECONNREFUSED || errno == EAGAIN ? -ECONNREFUSED
                                                                           : -errno;
    }
    if (!peer_has_my_uid(ep.fd(), &ep.peer_pid))
        return abandon_connect(ep, -ECONNREFUSED);   // another user's port: never share memory
    // The socket is connected: from here a failure needs a fresh one.
    const int rc2 = no_throw([&] { return start_handshake(ep, dst_port); });
    if (rc2 < 0)
        return abandon_connect(ep, rc2);
    return finish_connect(ep, block);
}

int finish_connect(Endpoint &ep, bool block)
{
    if (ep.state == State::connected)
        return 0;
    if (ep.state != State::connecting)
        return -EINVAL;
    for (;;) {
        drain_control(ep);
        if (ep.state == State::connected)
            return 0;
        if (ep.peer_gone) {
            // The listener closed, or refused us, before accepting.
            ep.connect_error = ECONNREFUSED;
            return abandon_connect(ep, -ECONNREFUSED);
        }
        if (!block)
            return -EINPROGRESS;
        wait_readable(ep.fd(), -1);
    }
}

namespace {

// Why a connect_req is refused, or nullptr: it is complete and ep is
// connected (the ack sent). Descriptors: the segment memfd, then the
// bounce server's socket and memfd when the request asks for them.
const char *complete_accept(Endpoint &lis, Endpoint &ep, std::span<const std::byte> msg,
                            std::span<UniqueFd, kMaxPassedFds> fds, int *err)
{
    const AcceptPolicy &policy = lis.accept_policy;
    CtrlMsg req;
    if (parse_ctrl(msg, &req) != 0 || req.type != CtrlType::connect_req)
        return "its first message is not a valid connect request";
    UniqueFd &mfd = fds[0];
    if (!mfd)
        return "its connect request brought no ring segment";
    const uint32_t cells = req.u.req.ring_cells;
    if (cells > policy.max_ring_cells)
        return "it asked for rings larger than this process accepts";
    const Layout l = layout(cells);
    if (int rc = map_peer_memfd(mfd.get(), l.total, &ep.segment); rc != 0) {
        *err = rc;
        return rc == -EPROTO ? "its ring segment is not a sealed memfd of the announced size"
                             : "cannot map its ring segment";
    }
    auto *c2s = reinterpret_cast<RingShared *>(ep.segment.data() + l.c2s);
    auto *s2c = reinterpret_cast<RingShared *>(ep.segment.data() + l.s2c);
    if ((c2s->magic != kRingMagic && (c2s->magic >> 8) == (kRingMagic >> 8)) ||
        (s2c->magic != kRingMagic && (s2c->magic >> 8) == (kRingMagic >> 8)))
        return "its rings are of another ring version (\"RIN\" and a digit other than this side's): "
               "the peer runs a different weft build; use one build for the whole job";
    if (c2s->magic != kRingMagic || s2c->magic != kRingMagic || c2s->cells != cells ||
        s2c->cells != cells)
        return "its ring segment holds no valid rings";
    ep.ring_cells = cells;
    ep.receive_ring_cold = true;
    if (policy.commit_on_accept)
        commit_receive_ring(ep);
    attach(ep, false, cells);
    ep.rma_service = lis.rma_service;
    ep.single_copy = probe_single_copy(ep.peer_pid, req.u.req.probe_addr, req.u.req.probe_value);
    CtrlMsg ack{};
    ack.type = CtrlType::connect_ack;
    ack.u.ack.port = lis.port;
    ack.u.ack.probe_addr = reinterpret_cast<uintptr_t>(&g_probe_word);
    ack.u.ack.probe_value = probe_word();
    UniqueFd svc_sock, svc_mem;
    if (!ep.single_copy && ep.rma_service) {
        if (int rc = make_bounce(&ep.bounce, &svc_sock, &svc_mem); rc != 0) {
            *err = rc;
            return "cannot make its bounce buffers";
        }
        ack.u.ack.flags |= kCtrlNeedBounce;
    }
    maybe_serve(ep, req.u.req.flags, fds[1], fds[2]);
    const int pass[2] = {svc_sock.get(), svc_mem.get()};
    if (int rc = send_ctrl(ep.fd(), ack, std::span<const int>(pass, svc_sock ? 2 : 0)); rc != 0) {
        *err = rc == -EPIPE || rc == -ECONNRESET ? -EPIPE : rc;   // -EPIPE: it left (accept_one)
        return "it went away before the connect ack";
    }
    ep.port = lis.port;
    ep.peer = {0, req.u.req.src_port};
    ep.state = State::connected;
    return nullptr;
}

void refuse_half_open(Endpoint &lis, const Endpoint &ep, const char *why)
{
    if (lis.accept_policy.on_refuse)
        lis.accept_policy.on_refuse(ep.peer_pid, why);
}

// Moves the listen queue into lis.half_open. 0, or -errno of a failed accept
// other than an empty queue.
int take_new_connections(Endpoint &lis, const std::function<void(int)> &on_half_open)
{
    const AcceptPolicy &policy = lis.accept_policy;
    // The listening socket blocks (its flags are the user's): ask poll() first.
    while (wait_readable(lis.fd(), 0) > 0) {
        UniqueFd conn(::accept4(lis.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (!conn) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN)
                return 0;
            return errno == EMFILE || errno == ENFILE || errno == ENOBUFS ? -ENOMEM : -errno;
        }
        auto ep = std::make_unique<Endpoint>(std::move(conn));
        if (!peer_has_my_uid(ep->fd(), &ep->peer_pid)) {
            // Another user's process (it sees a hang-up): its pid says nothing here.
            ep->peer_pid = 0;
            refuse_half_open(lis, *ep, "it runs as another user");
            continue;
        }
        if (lis.half_open.size() >= std::max<size_t>(policy.max_pending, 1)) {
            refuse_half_open(lis, *lis.half_open.front().ep,
                             "too many connections without a connect request (evicted)");
            lis.half_open.erase(lis.half_open.begin());
        }
        if (on_half_open)
            on_half_open(ep->fd());
        lis.half_open.push_back({std::move(ep), Clock::now() + policy.handshake_timeout});
    }
    return 0;
}

} // namespace

int accept_one(Endpoint &lis, bool block, std::unique_ptr<Endpoint> *out,
               const std::function<void(int fd)> &on_half_open)
{
    for (;;) {
        if (int rc = take_new_connections(lis, on_half_open); rc != 0 && lis.half_open.empty())
            return rc;
        const auto now = Clock::now();
        auto soonest = Clock::time_point::max();
        for (size_t i = 0; i < lis.half_open.size();) {
            Endpoint &ep = *lis.half_open[i].ep;
            std::byte buf[kCtrlMax];
            UniqueFd fds[kMaxPassedFds];
            const ssize_t n = recv_ctrl(ep.fd(), buf, fds);
            const char *why = nullptr;
            int err = 0;
            if (n == -EAGAIN) {
                if (now < lis.half_open[i].deadline) {
                    soonest = std::min(soonest, lis.half_open[i].deadline);
                    ++i;
                    continue;
                }
                why = "no connect request within the handshake timeout";
            } else if (n <= 0) {
                why = n == 0 ? "it closed before its connect request"
                             : "its connect request could not be read";
            } else {
                why = complete_accept(lis, ep, std::span(buf, static_cast<size_t>(n)), fds, &err);
            }
            std::unique_ptr<Endpoint> done = std::move(lis.half_open[i].ep);
            lis.half_open.erase(lis.half_open.begin() + static_cast<long>(i));
            if (!why) {
                *out = std::move(done);
                return 0;
            }
            if (err == -EPIPE && lis.accept_policy.on_gone)
                lis.accept_policy.on_gone(done->peer_pid, why);
            else
                refuse_half_open(lis, *done, why);
            if (err == -ENOMEM)
                return err;
        }
        if (!block)
            return -EAGAIN;
        // Wait for the queue or any half-open connection, until the nearest
        // deadline: no connector can hold the others up.
        std::vector<pollfd> fds;
        fds.push_back({lis.fd(), POLLIN, 0});
        for (const auto &h : lis.half_open)
            fds.push_back({h.ep->fd(), POLLIN, 0});
        int timeout = -1;
        if (soonest != Clock::time_point::max()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(soonest - Clock::now());
            timeout = static_cast<int>(std::clamp<long long>(left.count(), 0, INT32_MAX));
        }
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno == EINTR)
            return -EINTR;
    }
}

bool populate_rings_step(Endpoint &ep, size_t max_bytes)
{
    auto *r = &ep.populate[0];
    if (r->at >= r->end)
        r = &ep.populate[1];
    if (r->at >= r->end)
        return false;
    // madvise wants a page-aligned start; the page before is the ring's
    // header or the other ring's last page, already in use.
    const uintptr_t page = 4096;
    auto *from = reinterpret_cast<std::byte *>(reinterpret_cast<uintptr_t>(r->at) & ~(page - 1));
    const size_t len = std::min<size_t>(max_bytes, static_cast<size_t>(r->end - from));
#ifdef MADV_POPULATE_WRITE
    // Faults the pages in writable without writing them (Linux 5.14 on).
    if (::madvise(from, len, MADV_POPULATE_WRITE) != 0) {
        // An older kernel: the first writes fault them in.
        for (auto &each : ep.populate)
            each.at = each.end;
        return false;
    }
    r->at = from + len;
#else
    r->at = r->end;
#endif
    return ep.populate_pending();
}

void commit_receive_ring(Endpoint &ep)
{
    if (!ep.receive_ring_cold || !ep.segment)
        return;
    ep.receive_ring_cold = false;
    touch_receive_ring(ep, false, ep.ring_cells);
}

// ---- control socket -------------------------------------------------------------

namespace {

void add_remote_window(Endpoint &ep, const WinReg &r)
{
    ep.remote_windows.push_back(
        {r.offset, r.length, reinterpret_cast<std::byte *>(static_cast<uintptr_t>(r.addr)),
         static_cast<int>(r.prot)});
}

void remove_remote_windows(Endpoint &ep, const WinUnreg &u)
{
    std::erase_if(ep.remote_windows, [&](const Window &w) {
        return w.offset >= u.offset && w.offset + w.length <= u.offset + u.length;
    });
}

} // namespace

void drain_control(Endpoint &ep)
{
    if (ep.peer_gone)
        return;
    std::byte buf[kCtrlMax];
    for (;;) {
        // Only a connect_ack brings descriptors (the bounce server's).
        UniqueFd fds[2];
        ssize_t n = recv_ctrl(ep.fd(), buf, fds);
        if (n == -EAGAIN)
            return;
        if (n <= 0 && n != -EPROTO) {
            ep.peer_gone = true;   // EOF or a reset: the peer closed or died
            return;
        }
        CtrlMsg msg;
        if (n < 0 || parse_ctrl(std::span(buf, static_cast<size_t>(n)), &msg) != 0)
            continue;   // malformed: ignored, never trusted
        switch (msg.type) {
        case CtrlType::connect_ack:
            if (ep.state == State::connecting)
                complete_connect(ep, msg.u.ack, fds);
            break;
        case CtrlType::win_reg:
            if (ep.state == State::connected)
                add_remote_window(ep, msg.u.reg);
            break;
        case CtrlType::win_unreg:
            remove_remote_windows(ep, msg.u.unreg);
            break;
        case CtrlType::wake:
        case CtrlType::connect_req:
        case CtrlType::rma_req:     // belong on the service socket: ignored here
        case CtrlType::rma_reply:
            break;
        }
    }
}

void notify(Endpoint &ep)
{
    CtrlMsg m{};
    m.type = CtrlType::wake;
    send_ctrl(ep.fd(), m);   // best effort: a lost wake-up costs one kMaxSleepMs
}

void sleep_on_socket(Endpoint &ep, int timeout_ms)
{
    if (ep.peer_gone)
        return;
    int t = timeout_ms < 0 || timeout_ms > kMaxSleepMs ? kMaxSleepMs : timeout_ms;
    wait_readable(ep.fd(), t);
    drain_control(ep);
}

// ---- data -------------------------------------------------------------------------

int stream_send(Endpoint &ep, std::span<const std::byte> data, bool block)
{
    size_t sent = 0;
    while (sent < data.size()) {
        if (ep.peer_closed())
            return sent > 0 ? static_cast<int>(sent) : -ECONNRESET;
        const size_t want = std::min(data.size() - sent, ep.tx.max_chunk());
        // Take what fits now rather than waiting for room for all of it.
        size_t n = want;
        while (n > 0 && !ep.tx.has_room(n))
            n = n > kCell * 4 ? n / 2 : (n > 1 ? n - 1 : 0);
        if (n > 0) {
            auto dst = ep.tx.reserve(n);
            std::memcpy(dst.data(), data.data() + sent, n);
            ep.tx.publish(ChunkType::stream, 0);
            sent += n;
            if (ep.tx.consumer_sleeps())
                notify(ep);
            continue;
        }
        if (!block)
            break;
        ep.tx.set_waiting(true);
        if (!ep.tx.has_room(1) && !ep.peer_closed())
            sleep_on_socket(ep, kMaxSleepMs);
        ep.tx.set_waiting(false);
        drain_control(ep);
    }
    return static_cast<int>(sent);
}

int stream_recv(Endpoint &ep, std::span<std::byte> data, bool block)
{
    size_t got = 0;
    while (got < data.size()) {
        Chunk c;
        if (ep.rx.peek(&c)) {
            if (c.type != ChunkType::stream) {
                ep.rx.pop();   // not ours (a framed message on a stream endpoint)
                continue;
            }
            const size_t n = std::min(c.payload.size() - ep.rx_offset, data.size() - got);
            std::memcpy(data.data() + got, c.payload.data() + ep.rx_offset, n);
            got += n;
            ep.rx_offset += n;
            if (ep.rx_offset == c.payload.size()) {
                ep.rx.pop();
                ep.rx_offset = 0;
                if (ep.rx.producer_sleeps())
                    notify(ep);
            }
            continue;
        }
        if (ep.rx.producer_closed())
            break;
        drain_control(ep);
        if (ep.peer_gone) {
            if (ep.rx.peek(&c))
                continue;   // data published before the peer died is still data
            break;
        }
        if (!block)
            break;
        ep.rx.set_waiting(true);
        if (!ep.rx.peek(&c))
            sleep_on_socket(ep, kMaxSleepMs);
        ep.rx.set_waiting(false);
    }
    if (got == 0 && !data.empty() && ep.peer_closed()) {
        Chunk c;
        if (!ep.rx.peek(&c))
            return -ECONNRESET;
    }
    return static_cast<int>(got);
}

size_t max_message(const Endpoint &ep) { return ep.tx.max_chunk(); }

// ---- single copy ---------------------------------------------------------------------

int copy_with_peer(Endpoint &ep, bool read, std::byte *local, uint64_t remote, size_t len)
{
    while (len > 0) {
        iovec l{local, len};
        iovec r{reinterpret_cast<void *>(static_cast<uintptr_t>(remote)), len};
        ssize_t n = read ? ::process_vm_readv(ep.peer_pid, &l, 1, &r, 1, 0)
                         : ::process_vm_writev(ep.peer_pid, &l, 1, &r, 1, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ESRCH) {
                ep.peer_gone = true;
                return -ECONNRESET;
            }
            return errno == EFAULT ? -EFAULT : -errno;
        }
        if (n == 0)
            return -EFAULT;
        local += n;
        remote += static_cast<uint64_t>(n);
        len -= static_cast<size_t>(n);
    }
    return 0;
}

} // namespace weft::scif
