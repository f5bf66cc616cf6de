// SPDX-License-Identifier: BSD-3-Clause
// The SCIF API of btl/scif's library (weft/scif.h): every call with the
// error cases the SCIF contract documents, and multi-process behaviour via
// fork: connect/accept, stream data, RMA, peer close, a peer killed with
// SIGKILL mid-transfer (an error, not a hang), and nothing left in /dev/shm
// or $TMPDIR afterwards. Every wait is bounded (scif_poll timeouts, a
// deadline on child reaping); nothing sleeps to synchronise.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <weft/scif.h>

#include "no_process_vm.hpp"
#include "../../../runtime/scif_raw.hpp"

namespace {

std::set<std::string> list_dir(const char *path)
{
    std::set<std::string> out;
    if (DIR *d = opendir(path)) {
        while (dirent *e = readdir(d))
            out.insert(e->d_name);
        closedir(d);
    }
    return out;
}

// What a test's processes could leave behind, checked without being fooled
// by everything else on the machine (make -j check runs Open MPI jobs beside
// the unit tests, and compilers write to /tmp): a TMPDIR of the test's own,
// which must stay empty, and /dev/shm entries with a name of ours.
class Leftovers {
public:
    Leftovers()
    {
        if (const char *base = std::getenv("TMPDIR"))
            old_tmp_ = base;
        std::string tmpl = old_tmp_ + "/weft-scif-test.XXXXXX";
        if (mkdtemp(tmpl.data()))
            tmp_ = tmpl;
        if (!tmp_.empty())
            ::setenv("TMPDIR", tmp_.c_str(), 1);
        shm_before_ = ours(list_dir("/dev/shm"));
    }
    ~Leftovers()
    {
        ::setenv("TMPDIR", old_tmp_.c_str(), 1);
        if (!tmp_.empty())
            ::rmdir(tmp_.c_str());
    }
    void expect_none() const
    {
        ASSERT_FALSE(tmp_.empty()) << "could not make a private TMPDIR under " << old_tmp_;
        auto left = list_dir(tmp_.c_str());
        left.erase(".");
        left.erase("..");
        EXPECT_TRUE(left.empty()) << left.size() << " entries left in TMPDIR, first " << *left.begin();
        EXPECT_EQ(ours(list_dir("/dev/shm")), shm_before_);
    }

private:
    static std::set<std::string> ours(std::set<std::string> names)
    {
        std::erase_if(names, [](const std::string &n) {
            return n.find("weft") == std::string::npos && n.find("scif") == std::string::npos;
        });
        return names;
    }
    std::string old_tmp_ = "/tmp", tmp_;
    std::set<std::string> shm_before_;
};

// A listening endpoint on a fresh port.
struct Listener {
    scif_epd_t epd = scif_open();
    int port = scif_bind(epd, 0);
    Listener() { scif_listen(epd, 16); }
    ~Listener() { scif_close(epd); }
};

// Waits for events on one endpoint, bounded (30 s: a guard, not a threshold).
short wait_for(scif_epd_t epd, short events)
{
    scif_pollepd p{epd, events, 0};
    return scif_poll(&p, 1, 30'000) == 1 ? p.revents : 0;
}

// Forks a child that connects to port and runs body(epd); returns its pid.
template <class Body>
pid_t spawn_client(int port, Body body)
{
    pid_t pid = fork();
    if (pid == 0) {
        scif_epd_t e = scif_open();
        scif_port_id dst{0, static_cast<uint16_t>(port)};
        int code = scif_connect(e, &dst) >= 0 ? body(e) : 90;
        _exit(code);
    }
    return pid;
}

// The child's exit code, killing it if it outlives the bound.
int reap(pid_t pid)
{
    for (int i = 0; i < 3000; ++i) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pollfd none{};
        poll(&none, 0, 10);   // bounded pause between checks of a child we own
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
}

TEST(ScifApi, OpenCloseAndBadDescriptors)
{
    scif_epd_t e = scif_open();
    ASSERT_NE(e, SCIF_OPEN_FAILED);
    EXPECT_EQ(scif_close(e), 0);
    errno = 0;
    EXPECT_EQ(scif_close(e), -1);
    EXPECT_EQ(errno, EBADF);
    char b[4];
    EXPECT_EQ(scif_send(-5, b, 4, 0), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(scif_recv(123456, b, 4, 0), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(scif_bind(-1, 0), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(scif_listen(-1, 1), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(scif_register(-1, nullptr, 4096, 0, SCIF_PROT_READ, 0), SCIF_REGISTER_FAILED);
    EXPECT_EQ(errno, EBADF);
    int mark;
    EXPECT_EQ(scif_fence_mark(-1, SCIF_FENCE_INIT_SELF, &mark), -1);
    EXPECT_EQ(errno, EBADF);
}

TEST(ScifApi, BindRules)
{
    scif_epd_t a = scif_open();
    int port = scif_bind(a, 0);
    ASSERT_GE(port, SCIF_PORT_RSVD);
    EXPECT_EQ(scif_bind(a, 0), -1);
    EXPECT_EQ(errno, EINVAL) << "already bound";
    scif_epd_t b = scif_open();
    EXPECT_EQ(scif_bind(b, static_cast<uint16_t>(port)), -1);
    EXPECT_EQ(errno, EINVAL) << "port already bound";
    scif_close(a);
    EXPECT_EQ(scif_bind(b, static_cast<uint16_t>(port)), port) << "port free again after close";
    scif_close(b);
}

TEST(ScifApi, PrivilegedPortsNeedRoot)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "checks both sides of the rule; needs to start as root";
    scif_epd_t a = scif_open();
    // Root may bind below 1024 (pick an odd one unlikely to be in use).
    int rc = scif_bind(a, 1001);
    EXPECT_TRUE(rc == 1001 || (rc == -1 && errno == EINVAL)) << rc;
    scif_close(a);
    pid_t pid = fork();
    if (pid == 0) {
        if (setuid(65534) != 0)
            _exit(80);
        scif_epd_t e = scif_open();
        int r = scif_bind(e, 1002);
        _exit(r == -1 && errno == EACCES ? 0 : 81);
    }
    EXPECT_EQ(reap(pid), 0) << "an unprivileged bind below 1024 must fail with EACCES";
}

TEST(ScifApi, ListenAndConnectErrors)
{
    scif_epd_t e = scif_open();
    EXPECT_EQ(scif_listen(e, 4), -1);
    EXPECT_EQ(errno, EINVAL) << "not bound";
    ASSERT_GT(scif_bind(e, 0), 0);
    ASSERT_EQ(scif_listen(e, 4), 0);
    EXPECT_EQ(scif_listen(e, 4), -1);
    EXPECT_EQ(errno, EISCONN);
    scif_port_id dst{0, 2000};
    EXPECT_EQ(scif_connect(e, &dst), -1);
    EXPECT_EQ(errno, EOPNOTSUPP);
    scif_port_id peer;
    scif_epd_t ne;
    EXPECT_EQ(scif_accept(e, &peer, &ne, 0), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(scif_accept(e, nullptr, &ne, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_accept(e, &peer, &ne, 0x40), -1);
    EXPECT_EQ(errno, EINVAL);

    scif_epd_t c = scif_open();
    EXPECT_EQ(scif_connect(c, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    scif_port_id zero{0, 0};
    EXPECT_EQ(scif_connect(c, &zero), -1);
    EXPECT_EQ(errno, EINVAL);
    scif_port_id other_node{3, 2000};
    EXPECT_EQ(scif_connect(c, &other_node), -1);
    EXPECT_EQ(errno, ENODEV);
    // A port nobody listens on.
    scif_epd_t probe = scif_open();
    int free_port = scif_bind(probe, 0);
    scif_close(probe);
    scif_port_id nobody{0, static_cast<uint16_t>(free_port)};
    EXPECT_EQ(scif_connect(c, &nobody), -1);
    EXPECT_EQ(errno, ECONNREFUSED);
    char b[4];
    EXPECT_EQ(scif_send(c, b, 4, 0), -1);
    EXPECT_EQ(errno, ENOTCONN);
    EXPECT_EQ(scif_accept(c, &peer, &ne, 0), -1);
    EXPECT_EQ(errno, EINVAL) << "not listening";
    scif_close(c);
    scif_close(e);
}

TEST(ScifApi, NodeIds)
{
    uint16_t nodes[4] = {9, 9, 9, 9}, self = 9;
    EXPECT_EQ(scif_get_node_ids(nodes, 4, &self), 1);
    EXPECT_EQ(nodes[0], 0);
    EXPECT_EQ(self, 0);
    EXPECT_EQ(scif_get_node_ids(nodes, 0, &self), 1);
    EXPECT_EQ(scif_get_node_ids(nodes, 4, nullptr), -1);
    EXPECT_EQ(errno, EFAULT);
}

TEST(ScifApi, ConnectAcceptSendRecvAndPeerClose)
{
    Listener l;
    ASSERT_GT(l.port, 0);
    pid_t pid = spawn_client(l.port, [](scif_epd_t e) {
        char msg[100000];
        for (size_t i = 0; i < sizeof msg; ++i)
            msg[i] = static_cast<char>(i * 7);
        if (scif_send(e, msg, sizeof msg, SCIF_SEND_BLOCK) != static_cast<int>(sizeof msg))
            return 1;
        char reply[5];
        if (scif_recv(e, reply, 5, SCIF_RECV_BLOCK) != 5 || std::memcmp(reply, "done!", 5))
            return 2;
        int extra = 77;
        scif_send(e, &extra, sizeof extra, SCIF_SEND_BLOCK);
        scif_close(e);   // the parent still reads `extra` after this
        return 0;
    });
    ASSERT_EQ(wait_for(l.epd, POLLIN) & POLLIN, POLLIN);
    scif_port_id peer{};
    scif_epd_t c;
    ASSERT_EQ(scif_accept(l.epd, &peer, &c, SCIF_ACCEPT_SYNC), 0);
    EXPECT_EQ(peer.node, 0);
    EXPECT_GE(peer.port, SCIF_PORT_RSVD);
    char b[4];
    EXPECT_EQ(scif_send(c, b, 4, 0x8), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_send(c, b, -1, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_recv(c, nullptr, 4, 0), -1);
    EXPECT_EQ(errno, EFAULT);
    std::vector<char> got(100000);
    ASSERT_EQ(scif_recv(c, got.data(), static_cast<int>(got.size()), SCIF_RECV_BLOCK), 100000);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], static_cast<char>(i * 7)) << i;
    EXPECT_EQ(scif_recv(c, b, 4, 0), 0) << "non-blocking, nothing there";
    ASSERT_EQ(scif_send(c, const_cast<char *>("done!"), 5, SCIF_SEND_BLOCK), 5);
    int extra = 0;
    ASSERT_EQ(scif_recv(c, &extra, sizeof extra, SCIF_RECV_BLOCK), 4);
    EXPECT_EQ(extra, 77);
    // The child closed: once drained, receive says the connection is gone.
    ASSERT_TRUE(wait_for(c, POLLIN) & POLLHUP);
    EXPECT_EQ(scif_recv(c, b, 4, SCIF_RECV_BLOCK), -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_EQ(scif_send(c, b, 4, SCIF_SEND_BLOCK), -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_EQ(reap(pid), 0);
    scif_close(c);
}

TEST(ScifApi, AsynchronousConnect)
{
    Listener l;
    scif_epd_t c = scif_open();
    ASSERT_EQ(fcntl(c, F_SETFL, O_NONBLOCK), 0);
    scif_port_id dst{0, static_cast<uint16_t>(l.port)};
    ASSERT_EQ(scif_connect(c, &dst), -1);
    EXPECT_EQ(errno, EINPROGRESS);
    scif_port_id peer;
    scif_epd_t a;
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, SCIF_ACCEPT_SYNC), 0);
    EXPECT_TRUE(wait_for(c, POLLOUT) & POLLOUT);
    EXPECT_GT(scif_connect(c, &dst), 0) << "the second call completes";
    EXPECT_EQ(scif_connect(c, &dst), -1);
    EXPECT_EQ(errno, EISCONN);
    EXPECT_EQ(scif_bind(c, 0), -1);
    EXPECT_EQ(errno, EISCONN);
    scif_close(a);
    scif_close(c);
}

TEST(ScifApi, RegisterRmaAndFences)
{
    Listener l;
    pid_t pid = spawn_client(l.port, [](scif_epd_t e) {
        void *buf = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        std::memset(buf, 0x5a, 8192);
        if (scif_register(e, buf, 8192, 0x10000, SCIF_PROT_READ | SCIF_PROT_WRITE,
                          SCIF_MAP_FIXED) != 0x10000)
            return 1;
        char go = 1;
        scif_send(e, &go, 1, SCIF_SEND_BLOCK);   // "registered"
        if (scif_recv(e, &go, 1, SCIF_RECV_BLOCK) != 1)   // "done with it"
            return 2;
        // The parent wrote 0x11 into the first page and signalled 99 at 4096.
        auto *p = static_cast<unsigned char *>(buf);
        uint64_t sig;
        std::memcpy(&sig, p + 4096, sizeof sig);
        return p[0] == 0x11 && p[4095] == 0x11 && sig == 99 ? 0 : 3;
    });
    scif_port_id peer;
    scif_epd_t c;
    ASSERT_EQ(scif_accept(l.epd, &peer, &c, SCIF_ACCEPT_SYNC), 0);
    char go;
    ASSERT_EQ(scif_recv(c, &go, 1, SCIF_RECV_BLOCK), 1);
    std::vector<unsigned char> local(4096);
    EXPECT_EQ(scif_vreadfrom(c, local.data(), 4096, 0x10000, SCIF_RMA_SYNC), 0);
    EXPECT_EQ(local[0], 0x5a);
    EXPECT_EQ(local[4095], 0x5a);
    EXPECT_EQ(scif_vreadfrom(c, local.data(), 4096, 0x90000, 0), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(scif_vreadfrom(c, local.data(), 4096, -4096, 0), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(scif_vreadfrom(c, local.data(), 4096, 0x10000, 0x100), -1);
    EXPECT_EQ(errno, EINVAL);
    // Registered windows on this side, then readfrom/writeto between windows.
    void *mine = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_EQ(scif_register(c, mine, 100, 0, SCIF_PROT_READ, 0), SCIF_REGISTER_FAILED);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_register(c, mine, 4096, 100, SCIF_PROT_READ, SCIF_MAP_FIXED),
              SCIF_REGISTER_FAILED);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_register(c, mine, 4096, 0, 0x40, 0), SCIF_REGISTER_FAILED);
    EXPECT_EQ(errno, EINVAL);
    off_t ro = scif_register(c, mine, 4096, 0, SCIF_PROT_READ, 0);
    ASSERT_NE(ro, SCIF_REGISTER_FAILED);
    EXPECT_EQ(scif_register(c, static_cast<char *>(mine) + 4096, 4096, ro, SCIF_PROT_READ,
                            SCIF_MAP_FIXED),
              SCIF_REGISTER_FAILED);
    EXPECT_EQ(errno, EADDRINUSE);
    std::memset(mine, 0x11, 4096);
    EXPECT_EQ(scif_readfrom(c, ro, 4096, 0x10000, SCIF_RMA_SYNC), -1);
    EXPECT_EQ(errno, EACCES) << "the local window is read-only";
    EXPECT_EQ(scif_writeto(c, ro, 4096, 0x10000, SCIF_RMA_SYNC | SCIF_RMA_ORDERED), 0);
    int mark = -1;
    ASSERT_EQ(scif_fence_mark(c, SCIF_FENCE_INIT_SELF, &mark), 0);
    EXPECT_EQ(scif_fence_wait(c, mark), 0);
    ASSERT_EQ(scif_fence_mark(c, SCIF_FENCE_INIT_PEER, &mark), 0);
    EXPECT_EQ(scif_fence_wait(c, mark), 0);
    EXPECT_EQ(scif_fence_mark(c, 3, &mark), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(scif_fence_signal(c, 0, 0, 0x10000 + 4096 + 2, 99,
                                SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE), -1);
    EXPECT_EQ(errno, EINVAL) << "roff not DWORD aligned";
    EXPECT_EQ(scif_fence_signal(c, 0, 0, 0x10000 + 4096, 99,
                                SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE), 0);
    EXPECT_EQ(scif_unregister(c, ro + 1024, 1024), -1);
    EXPECT_EQ(errno, EINVAL) << "part of a window";
    EXPECT_EQ(scif_unregister(c, 0x700000, 4096), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(scif_unregister(c, ro, 4096), 0);
    ASSERT_EQ(scif_send(c, &go, 1, SCIF_SEND_BLOCK), 1);
    EXPECT_EQ(reap(pid), 0);
    scif_close(c);
    munmap(mine, 8192);
}

// Byte i of a pattern seeded with seed.
unsigned char pat(size_t i, unsigned seed) { return static_cast<unsigned char>((i * 131 + seed) ^ (i >> 9)); }

bool matches(const unsigned char *p, size_t len, unsigned seed, size_t from = 0)
{
    for (size_t i = 0; i < len; ++i)
        if (p[i] != pat(from + i, seed))
            return false;
    return true;
}

void fill(unsigned char *p, size_t len, unsigned seed, size_t from = 0)
{
    for (size_t i = 0; i < len; ++i)
        p[i] = pat(from + i, seed);
}

// RMA between two processes that the kernel forbids process_vm_readv/writev
// (a seccomp filter): everything goes through the bounce fallback. Runs in
// a forked child (the filter stays with it); returns 0 or the failing step.
int rma_without_process_vm()
{
    constexpr size_t kWin = 1 << 20;
    constexpr off_t kRemote = 0x100000;
    Listener l;
    pid_t pid = spawn_client(l.port, [&](scif_epd_t e) {
        auto *buf = static_cast<unsigned char *>(
            mmap(nullptr, kWin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        fill(buf, kWin, 1);
        if (scif_register(e, buf, kWin, kRemote, SCIF_PROT_READ | SCIF_PROT_WRITE,
                          SCIF_MAP_FIXED) != kRemote)
            return 10;
        auto *ro = static_cast<unsigned char *>(
            mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (scif_register(e, ro, 4096, 0x400000, SCIF_PROT_READ, SCIF_MAP_FIXED) != 0x400000)
            return 11;
        // A window whose pages go away after registering (they are not
        // pinned): the peer's RMA on it must fail, not kill this process.
        void *gone = mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (scif_register(e, gone, 8192, 0x500000, SCIF_PROT_READ | SCIF_PROT_WRITE, SCIF_MAP_FIXED) != 0x500000)
            return 18;
        munmap(gone, 8192);
        char go = 1;
        scif_send(e, &go, 1, SCIF_SEND_BLOCK);
        if (scif_recv(e, &go, 1, SCIF_RECV_BLOCK) != 1)
            return 12;
        // Our bounce-server thread wrote the window under its lock; the
        // parent's go came through another process, which ThreadSanitizer
        // cannot follow. Unregistering takes that lock: the handoff it sees.
        if (scif_unregister(e, kRemote, kWin) != 0)
            return 17;
        // The parent wrote seed 2 at [0x80000, +300001) and seed 3 by
        // writeto at [0x10, +65537), and signalled 77 at 0xff000.
        if (!matches(buf + 0x80000, 300001, 2))
            return 13;
        if (!matches(buf + 0x10, 65537, 3))
            return 14;
        if (!matches(buf + 0x10 + 65537, 0x80000 - 0x10 - 65537, 1, 0x10 + 65537))
            return 15;   // bytes between the writes untouched
        uint64_t sig;
        std::memcpy(&sig, buf + 0xff000, sizeof sig);
        return sig == 77 ? 0 : 16;
    });
    scif_port_id peer;
    scif_epd_t c;
    if (scif_accept(l.epd, &peer, &c, SCIF_ACCEPT_SYNC) != 0)
        return 20;
    char go;
    if (scif_recv(c, &go, 1, SCIF_RECV_BLOCK) != 1)
        return 21;
    // vreadfrom/vwriteto of sizes that are not multiples of a bounce slot.
    std::vector<unsigned char> local(kWin);
    for (size_t n : {size_t{1}, size_t{4095}, size_t{65536}, size_t{65537}, size_t{300001}, kWin}) {
        std::fill(local.begin(), local.end(), 0);
        if (scif_vreadfrom(c, local.data(), n, kRemote, SCIF_RMA_SYNC) != 0)
            return 22;
        if (!matches(local.data(), n, 1))
            return 23;
    }
    if (scif_vreadfrom(c, local.data(), 100, kRemote + 7, 0) != 0 || !matches(local.data(), 100, 1, 7))
        return 24;
    fill(local.data(), 300001, 2);
    if (scif_vwriteto(c, local.data(), 300001, kRemote + 0x80000, SCIF_RMA_ORDERED) != 0)
        return 25;
    // Registered-to-registered: readfrom into our window, writeto from it.
    auto *mine = static_cast<unsigned char *>(
        mmap(nullptr, kWin, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    off_t lo = scif_register(c, mine, kWin, 0, SCIF_PROT_READ | SCIF_PROT_WRITE, 0);
    if (lo == SCIF_REGISTER_FAILED)
        return 26;
    if (scif_readfrom(c, lo + 5, 200003, kRemote + 0x80000, SCIF_RMA_SYNC) != 0 ||
        !matches(mine + 5, 200003, 2))
        return 27;
    fill(mine, 65537, 3);
    if (scif_writeto(c, lo, 65537, kRemote + 0x10, SCIF_RMA_SYNC | SCIF_RMA_ORDERED) != 0)
        return 28;
    int mark = -1;
    if (scif_fence_mark(c, SCIF_FENCE_INIT_SELF, &mark) != 0 || scif_fence_wait(c, mark) != 0)
        return 29;
    if (scif_fence_signal(c, 0, 0, kRemote + 0xff000, 77, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE) != 0)
        return 30;
    // Errors still come back: past the window, and a write to a read-only one.
    if (scif_vreadfrom(c, local.data(), 8192, kRemote + kWin - 4096, 0) != -1 || errno != ENXIO)
        return 31;
    if (scif_vwriteto(c, local.data(), 16, 0x400000, 0) != -1 || errno != EACCES)
        return 32;
    // The unmapped window: EFAULT both ways, and the peer lives on (its
    // exit status below is still checked).
    if (scif_vreadfrom(c, local.data(), 100, 0x500000, 0) != -1 || errno != EFAULT)
        return 34;
    if (scif_vwriteto(c, local.data(), 100, 0x500000 + 4096, 0) != -1 || errno != EFAULT)
        return 35;
    if (scif_send(c, &go, 1, SCIF_SEND_BLOCK) != 1)
        return 33;
    const int child = reap(pid);
    scif_close(c);
    munmap(mine, kWin);
    return child == 0 ? 0 : 100 + child;
}

TEST(ScifApi, RmaFallsBackToBounceBuffersWhenTheKernelRefusesProcessVm)
{
    const Leftovers leftovers;
    const int code = weft::test::run_without_process_vm(rma_without_process_vm);
    if (code == 77)
        GTEST_SKIP() << "cannot install a seccomp filter here";
    EXPECT_EQ(code, 0) << "failing step (see rma_without_process_vm; 100+ = the peer's)";
    leftovers.expect_none();
}

TEST(ScifApi, PeerKilledMidTransferIsAnErrorAndLeavesNothing)
{
    const Leftovers leftovers;
    Listener l;
    // The child sends forever; the parent kills it while the ring is busy.
    pid_t pid = spawn_client(l.port, [](scif_epd_t e) {
        char chunk[4096] = {};
        for (;;)
            if (scif_send(e, chunk, sizeof chunk, SCIF_SEND_BLOCK) < 0)
                return 5;
    });
    scif_port_id peer;
    scif_epd_t c;
    ASSERT_EQ(scif_accept(l.epd, &peer, &c, SCIF_ACCEPT_SYNC), 0);
    std::vector<char> buf(1 << 16);
    ASSERT_GT(scif_recv(c, buf.data(), static_cast<int>(buf.size()), SCIF_RECV_BLOCK), 0);
    kill(pid, SIGKILL);
    EXPECT_EQ(reap(pid), 128 + SIGKILL);
    // Drain what was published; then an error, not a hang.
    int rc;
    while ((rc = scif_recv(c, buf.data(), static_cast<int>(buf.size()), SCIF_RECV_BLOCK)) > 0) {
    }
    EXPECT_EQ(rc, -1);
    EXPECT_EQ(errno, ECONNRESET);
    EXPECT_EQ(scif_send(c, buf.data(), 10, SCIF_SEND_BLOCK), -1);
    EXPECT_EQ(errno, ECONNRESET);
    scif_close(c);
    leftovers.expect_none();
}

TEST(ScifApi, WholeJobKilledLeavesNothingBehind)
{
    const Leftovers leftovers;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    // Both ends of a connection in two children, both SIGKILLed mid-stream.
    pid_t server = fork();
    if (server == 0) {
        scif_epd_t lis = scif_open();
        int port = scif_bind(lis, 0);
        scif_listen(lis, 1);
        if (write(ready[1], &port, sizeof port) != sizeof port)
            _exit(1);
        scif_port_id peer;
        scif_epd_t c;
        scif_accept(lis, &peer, &c, SCIF_ACCEPT_SYNC);
        char buf[4096];
        for (;;)
            if (scif_recv(c, buf, sizeof buf, SCIF_RECV_BLOCK) < 0)
                _exit(2);
    }
    int port = 0;
    ASSERT_EQ(read(ready[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
    pid_t client = spawn_client(port, [&](scif_epd_t e) {
        char chunk[4096] = {};
        int n = 1;
        if (write(ready[1], &n, sizeof n) != sizeof n)
            return 1;
        for (;;)
            if (scif_send(e, chunk, sizeof chunk, SCIF_SEND_BLOCK) < 0)
                return 5;
    });
    int n = 0;
    ASSERT_EQ(read(ready[0], &n, sizeof n), static_cast<ssize_t>(sizeof n));
    kill(client, SIGKILL);
    kill(server, SIGKILL);
    EXPECT_EQ(reap(client), 128 + SIGKILL);
    EXPECT_EQ(reap(server), 128 + SIGKILL);
    close(ready[0]);
    close(ready[1]);
    leftovers.expect_none();
}

} // namespace

// A stranger's ring segment that it could shrink under the acceptor's
// mapping (SIGBUS on the next access) is refused before it is mapped:
// unsealed, sealed against growing only, or not the announced size.
TEST(ScifApi, AcceptRefusesSegmentsThePeerCouldResize)
{
    using namespace weft::test::scif_raw;
    Listener l;
    const struct {
        const char *what;
        Seal seal;
        size_t extra;
    } cases[] = {{"unsealed", Seal::none, 0},
                 {"sealed against growing only", Seal::grow_only, 0},
                 {"sealed, a page larger than announced", Seal::all, 4096}};
    scif_port_id peer{};
    scif_epd_t a = -1;
    for (const auto &c : cases) {
        Conn conn;
        ASSERT_EQ(send_request(conn, static_cast<unsigned>(l.port), 1024, c.seal, c.extra), 0) << c.what;
        EXPECT_EQ(scif_accept(l.epd, &peer, &a, 0), -1) << c.what << ": accepted";
        EXPECT_EQ(errno, EAGAIN) << c.what;
        EXPECT_TRUE(hung_up(conn.fd)) << c.what << ": the refused connection is still open";
    }
    // The control: sealed and of the announced size.
    Conn good;
    ASSERT_EQ(send_request(good, static_cast<unsigned>(l.port), 1024, Seal::all), 0);
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, SCIF_ACCEPT_SYNC), 0);
    EXPECT_EQ(ack_answer(good.fd), 1);
    scif_close(a);
}

// A connector of the previous ring version (no duplex line: it would never
// read the small messages put there) is refused, and so is one with no
// ring magic at all; the control of this version is accepted.
TEST(ScifApi, AcceptRefusesRingsOfAnotherVersion)
{
    using namespace weft::test::scif_raw;
    Listener l;
    scif_port_id peer{};
    scif_epd_t a = -1;
    for (uint32_t magic : {0x52494e33u /* "RIN3" */, 0u}) {
        Conn conn;
        ASSERT_EQ(send_request(conn, static_cast<unsigned>(l.port), 1024, Seal::all, 0, magic), 0);
        EXPECT_EQ(scif_accept(l.epd, &peer, &a, 0), -1) << std::hex << magic << ": accepted";
        EXPECT_TRUE(hung_up(conn.fd)) << std::hex << magic << ": the refused connection is still open";
    }
    Conn good;
    ASSERT_EQ(send_request(good, static_cast<unsigned>(l.port), 1024, Seal::all), 0);
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, SCIF_ACCEPT_SYNC), 0);
    EXPECT_EQ(ack_answer(good.fd), 1);
    scif_close(a);
}

// A connector that never sends its connect request does not hold up the
// accept of the next one (it stays half-open until its deadline).
TEST(ScifApi, SilentConnectorDoesNotHoldUpAccept)
{
    using namespace weft::test::scif_raw;
    Listener l;
    Conn silent;
    silent.fd = dial(static_cast<unsigned>(l.port));
    ASSERT_GE(silent.fd, 0);
    scif_epd_t c = scif_open();
    ASSERT_EQ(fcntl(c, F_SETFL, O_NONBLOCK), 0);
    scif_port_id dst{0, static_cast<uint16_t>(l.port)};
    ASSERT_EQ(scif_connect(c, &dst), -1);
    ASSERT_EQ(errno, EINPROGRESS);
    scif_port_id peer{};
    scif_epd_t a = -1;
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, SCIF_ACCEPT_SYNC), 0);
    EXPECT_FALSE(hung_up(silent.fd)) << "accept waited for the silent connector and dropped it";
    EXPECT_TRUE(wait_for(c, POLLOUT) & POLLOUT);
    EXPECT_GT(scif_connect(c, &dst), 0);
    scif_close(a);
    scif_close(c);
}

// A connection whose request comes after accept took it off the queue
// (half-open) makes the listener readable again, and the next accept
// completes it.
TEST(ScifApi, LateConnectRequestMakesTheListenerReadable)
{
    using namespace weft::test::scif_raw;
    Listener l;
    Conn late;
    late.fd = dial(static_cast<unsigned>(l.port));
    ASSERT_GE(late.fd, 0);
    scif_port_id peer{};
    scif_epd_t a = -1;
    EXPECT_EQ(scif_accept(l.epd, &peer, &a, 0), -1);
    EXPECT_EQ(errno, EAGAIN);
    scif_pollepd p{l.epd, POLLIN, 0};
    EXPECT_EQ(scif_poll(&p, 1, 0), 0) << "nothing to accept yet";
    // The request on the same socket, as send_request would have sent it.
    Conn req;
    ASSERT_EQ(send_request(req, static_cast<unsigned>(l.port), 1024, Seal::all), 0);
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, 0), 0) << "the on-time connector";
    scif_close(a);
    late.cells = req.cells;
    ASSERT_EQ(send_ctrl(late.fd, [] {
        CtrlMsg m{};
        m.type = CtrlType::connect_req;
        m.u.req.src_port = 4242;
        m.u.req.ring_cells = 1024;
        return m;
    }(), std::span<const int>(&req.memfd, 1)), 0);
    EXPECT_EQ(wait_for(l.epd, POLLIN) & POLLIN, POLLIN) << "the late request did not wake the listener";
    ASSERT_EQ(scif_accept(l.epd, &peer, &a, 0), 0);
    EXPECT_EQ(ack_answer(late.fd), 1);
    scif_close(a);
}
