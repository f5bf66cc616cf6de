// SPDX-License-Identifier: BSD-3-Clause
// weft/scif.h against the SCIF contract's error lists, one case per
// documented errno that one host can produce, plus the documented behaviours
// around them (a failed connect leaves a usable endpoint, partial
// non-blocking transfers, windows spanning contiguous registrations, fence
// signals). Connections are made inside this process (an asynchronous
// connect, then accept): no fork unless a resource limit must change. Every
// wait is bounded (scif_poll/poll with timeouts); nothing sleeps to
// synchronise.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include <weft/scif.h>

namespace {

// The call fails: -1 (SCIF_REGISTER_FAILED for scif_register) and errno e.
template <class F>
::testing::AssertionResult scif_failed(F &&call, int e)
{
    errno = 0;
    const auto r = call();
    const int got = errno;
    if (r == static_cast<decltype(r)>(-1) && got == e)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "returned " << r << " with errno " << got << " ("
                                         << std::strerror(got) << "), expected -1 with "
                                         << e << " (" << std::strerror(e) << ")";
}
#define EXPECT_SCIF_ERR(call, e) EXPECT_TRUE(scif_failed([&] { return (call); }, (e))) << #call
// The same, fatal: for a step a blocking call after it depends on.
#define ASSERT_SCIF_ERR(call, e) ASSERT_TRUE(scif_failed([&] { return (call); }, (e))) << #call

constexpr size_t kPage = 4096;
constexpr off_t kPageOff = 4096;

// Page-aligned anonymous memory.
struct Pages {
    explicit Pages(size_t n)
        : len(n * kPage),
          p(static_cast<unsigned char *>(
              mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)))
    {
    }
    ~Pages()
    {
        if (p != MAP_FAILED)
            munmap(p, len);
    }
    Pages(const Pages &) = delete;
    Pages &operator=(const Pages &) = delete;
    size_t len;
    unsigned char *p;
};

// An address with nothing mapped: a page mapped, then unmapped.
void *hole()
{
    void *p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p, kPage);
    return p;
}

short wait_for(scif_epd_t epd, short events)
{
    scif_pollepd p{epd, events, 0};
    return scif_poll(&p, 1, 30'000) == 1 ? p.revents : 0;
}

scif_epd_t listener(int *port)
{
    scif_epd_t l = scif_open();
    *port = scif_bind(l, 0);
    scif_listen(l, 8);
    return l;
}

// A connection inside this process: c connects asynchronously, the
// listener accepts (a), scif_poll sees the connect finish, and the second
// scif_connect reports c's port. c is blocking again afterwards.
struct Pair {
    scif_epd_t lis = -1, c = -1, a = -1;
    int port = 0, cport = -1;
    scif_port_id accepted_peer{};
    explicit Pair(int bind_c_to = 0)
    {
        lis = listener(&port);
        c = scif_open();
        if (bind_c_to)
            scif_bind(c, static_cast<uint16_t>(bind_c_to));
        fcntl(c, F_SETFL, O_NONBLOCK);
        scif_port_id dst{0, static_cast<uint16_t>(port)};
        if (scif_connect(c, &dst) != -1 || errno != EINPROGRESS)
            return;
        if (scif_accept(lis, &accepted_peer, &a, SCIF_ACCEPT_SYNC) != 0) {
            a = -1;
            return;
        }
        if (!(wait_for(c, POLLOUT) & POLLOUT))
            return;
        cport = scif_connect(c, &dst);
        fcntl(c, F_SETFL, 0);
    }
    ~Pair()
    {
        for (scif_epd_t e : {a, c, lis})
            if (e >= 0)
                scif_close(e);
    }
    bool ok() const { return a >= 0 && cport > 0; }
};

TEST(ScifErrors, EveryCallRejectsWhatIsNotAnEndpointWithEBADF)
{
    int pfd[2];
    ASSERT_EQ(pipe(pfd), 0);
    // -1, a number past any descriptor, and a real descriptor that is not an
    // endpoint (the contract allows EBADF or ENOTTY; we give EBADF).
    for (scif_epd_t bad : {-1, 1 << 20, pfd[0]}) {
        SCOPED_TRACE(bad);
        char b[8];
        int mark = 0;
        scif_port_id dst{0, 2000}, peer;
        scif_epd_t ne;
        EXPECT_SCIF_ERR(scif_close(bad), EBADF);
        EXPECT_SCIF_ERR(scif_bind(bad, 0), EBADF);
        EXPECT_SCIF_ERR(scif_listen(bad, 1), EBADF);
        EXPECT_SCIF_ERR(scif_connect(bad, &dst), EBADF);
        EXPECT_SCIF_ERR(scif_accept(bad, &peer, &ne, 0), EBADF);
        EXPECT_SCIF_ERR(scif_send(bad, b, 8, 0), EBADF);
        EXPECT_SCIF_ERR(scif_recv(bad, b, 8, SCIF_RECV_BLOCK), EBADF);
        EXPECT_SCIF_ERR(scif_register(bad, b, kPage, 0, SCIF_PROT_READ, 0), EBADF);
        EXPECT_SCIF_ERR(scif_unregister(bad, 0, kPage), EBADF);
        EXPECT_SCIF_ERR(scif_readfrom(bad, 0, 8, 0, 0), EBADF);
        EXPECT_SCIF_ERR(scif_writeto(bad, 0, 8, 0, 0), EBADF);
        EXPECT_SCIF_ERR(scif_vreadfrom(bad, b, 8, 0, 0), EBADF);
        EXPECT_SCIF_ERR(scif_vwriteto(bad, b, 8, 0, 0), EBADF);
        EXPECT_SCIF_ERR(scif_fence_mark(bad, SCIF_FENCE_INIT_SELF, &mark), EBADF);
        EXPECT_SCIF_ERR(scif_fence_wait(bad, 0), EBADF);
        EXPECT_SCIF_ERR(scif_fence_signal(bad, 0, 1, 0, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL),
                        EBADF);
    }
    EXPECT_NE(fcntl(pfd[0], F_GETFD), -1) << "scif_close must not close a foreign descriptor";
    close(pfd[0]);
    close(pfd[1]);
}

TEST(ScifErrors, OpenOutOfDescriptorsIsENOMEM)
{
    pid_t pid = fork();
    if (pid == 0) {
        rlimit rl{};
        getrlimit(RLIMIT_NOFILE, &rl);
        rl.rlim_cur = 64;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            _exit(80);
        for (int i = 0; i < 200; ++i) {
            if (scif_open() == SCIF_OPEN_FAILED)
                _exit(errno == ENOMEM ? 0 : 81);
        }
        _exit(82);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0) << "80: setrlimit, 81: another errno, 82: never failed";
}

TEST(ScifErrors, BindInEveryState)
{
    scif_epd_t e = scif_open();
    int port = scif_bind(e, 0);
    ASSERT_GE(port, SCIF_PORT_RSVD) << "port 0 picks one at or above SCIF_PORT_RSVD";
    ASSERT_EQ(scif_listen(e, 1), 0);
    EXPECT_SCIF_ERR(scif_bind(e, 0), EINVAL);   // listening: already bound
    scif_close(e);

    // A requested port is the one returned.
    scif_epd_t f = scif_open();
    ASSERT_EQ(scif_bind(f, static_cast<uint16_t>(port)), port);
    scif_close(f);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    EXPECT_SCIF_ERR(scif_bind(pr.c, 0), EISCONN);
    EXPECT_SCIF_ERR(scif_bind(pr.a, 0), EISCONN);
}

TEST(ScifErrors, BindPrivilegedPortAsNonRootIsEACCES)
{
    if (geteuid() == 0)
        GTEST_SKIP() << "running as root, which may bind below SCIF_ADMIN_PORT_END "
                        "(ScifApi.PrivilegedPortsNeedRoot checks EACCES after setuid)";
    scif_epd_t e = scif_open();
    EXPECT_SCIF_ERR(scif_bind(e, 1), EACCES);
    EXPECT_SCIF_ERR(scif_bind(e, SCIF_ADMIN_PORT_END - 1), EACCES);
    EXPECT_GE(scif_bind(e, 0), SCIF_PORT_RSVD) << "a refused bind leaves it unbound";
    scif_close(e);
}

TEST(ScifErrors, ListenOnConnectedOrConnectingIsEISCONN)
{
    Pair pr;
    ASSERT_TRUE(pr.ok());
    EXPECT_SCIF_ERR(scif_listen(pr.c, 1), EISCONN);
    EXPECT_SCIF_ERR(scif_listen(pr.a, 1), EISCONN);

    int port;
    scif_epd_t l = listener(&port);
    scif_epd_t c = scif_open();
    ASSERT_EQ(fcntl(c, F_SETFL, O_NONBLOCK), 0);
    scif_port_id dst{0, static_cast<uint16_t>(port)};
    EXPECT_SCIF_ERR(scif_connect(c, &dst), EINPROGRESS);
    EXPECT_SCIF_ERR(scif_listen(c, 1), EISCONN);   // a connect is under way
    EXPECT_SCIF_ERR(scif_connect(c, &dst), EALREADY);
    scif_close(c);
    scif_close(l);
}

TEST(ScifErrors, ConnectReturnsTheBoundPortAndAcceptReportsIt)
{
    // A port of our choosing for the connector, free now.
    scif_epd_t probe = scif_open();
    const int mine = scif_bind(probe, 0);
    scif_close(probe);
    Pair pr(mine);
    ASSERT_TRUE(pr.ok());
    EXPECT_EQ(pr.cport, mine);
    EXPECT_EQ(pr.accepted_peer.node, 0);
    EXPECT_EQ(pr.accepted_peer.port, mine);
    // Unbound connectors are bound by connect.
    Pair auto_bound;
    ASSERT_TRUE(auto_bound.ok());
    EXPECT_GE(auto_bound.cport, SCIF_PORT_RSVD);
    EXPECT_EQ(auto_bound.accepted_peer.port, auto_bound.cport);
}

TEST(ScifErrors, ConnectErrors)
{
    scif_epd_t c = scif_open();
    scif_port_id bad_node{1, 2000};
    EXPECT_SCIF_ERR(scif_connect(c, &bad_node), ENODEV);
    scif_port_id bad_port{0, 0};
    EXPECT_SCIF_ERR(scif_connect(c, &bad_port), EINVAL);
    scif_epd_t probe = scif_open();
    const int free_port = scif_bind(probe, 0);
    scif_close(probe);
    scif_port_id nobody{0, static_cast<uint16_t>(free_port)};
    EXPECT_SCIF_ERR(scif_connect(c, &nobody), ECONNREFUSED);
    EXPECT_SCIF_ERR(scif_connect(c, &nobody), ECONNREFUSED) << "and again";
    // A bound (not listening) port refuses too.
    scif_epd_t bound = scif_open();
    const int bport = scif_bind(bound, 0);
    scif_port_id not_listening{0, static_cast<uint16_t>(bport)};
    EXPECT_SCIF_ERR(scif_connect(c, &not_listening), ECONNREFUSED);
    scif_close(bound);
    // After the refusals c still connects.
    int port;
    scif_epd_t l = listener(&port);
    ASSERT_EQ(fcntl(c, F_SETFL, O_NONBLOCK), 0);
    scif_port_id dst{0, static_cast<uint16_t>(port)};
    ASSERT_SCIF_ERR(scif_connect(c, &dst), EINPROGRESS);
    scif_port_id peer;
    scif_epd_t a;
    ASSERT_EQ(scif_accept(l, &peer, &a, SCIF_ACCEPT_SYNC), 0);
    ASSERT_TRUE(wait_for(c, POLLOUT) & POLLOUT);
    EXPECT_GT(scif_connect(c, &dst), 0);
    EXPECT_SCIF_ERR(scif_connect(c, &dst), EISCONN);
    scif_close(a);
    scif_close(c);
    scif_close(l);
}

// scif_close() of a listener rejects its pending requests: the connector's
// asynchronous connect ends in ECONNREFUSED (seen by scif_poll or by the
// next scif_connect), and the endpoint stays bound and may connect again.
TEST(ScifErrors, ClosingAListenerRefusesPendingConnects)
{
    int port;
    scif_epd_t l = listener(&port);
    scif_port_id dst{0, static_cast<uint16_t>(port)};
    scif_epd_t via_poll = scif_open(), via_call = scif_open();
    const int via_poll_port = scif_bind(via_poll, 0);
    for (scif_epd_t c : {via_poll, via_call}) {
        ASSERT_EQ(fcntl(c, F_SETFL, O_NONBLOCK), 0);
        EXPECT_SCIF_ERR(scif_connect(c, &dst), EINPROGRESS);
    }
    ASSERT_EQ(scif_close(l), 0);

    EXPECT_TRUE(wait_for(via_poll, POLLOUT) & POLLERR);
    EXPECT_SCIF_ERR(scif_connect(via_poll, &dst), ECONNREFUSED);
    EXPECT_SCIF_ERR(scif_connect(via_call, &dst), ECONNREFUSED);
    char b[4];
    EXPECT_SCIF_ERR(scif_send(via_poll, b, 4, 0), ENOTCONN);
    // Still bound (to the same port), so bind says so.
    EXPECT_SCIF_ERR(scif_bind(via_poll, 0), EINVAL);
    EXPECT_SCIF_ERR(scif_bind(via_call, 0), EINVAL);

    int port2;
    scif_epd_t l2 = listener(&port2);
    scif_port_id dst2{0, static_cast<uint16_t>(port2)};
    for (scif_epd_t c : {via_poll, via_call}) {
        ASSERT_SCIF_ERR(scif_connect(c, &dst2), EINPROGRESS);
        scif_port_id peer;
        scif_epd_t a;
        ASSERT_EQ(scif_accept(l2, &peer, &a, SCIF_ACCEPT_SYNC), 0);
        if (c == via_poll) {
            EXPECT_EQ(peer.port, via_poll_port) << "reconnects from the port it had";
        }
        ASSERT_TRUE(wait_for(c, POLLOUT) & POLLOUT);
        EXPECT_GT(scif_connect(c, &dst2), 0);
        ASSERT_EQ(fcntl(c, F_SETFL, 0), 0);
        int v = 42, got = 0;
        EXPECT_EQ(scif_send(c, &v, sizeof v, SCIF_SEND_BLOCK), 4);
        EXPECT_EQ(scif_recv(a, &got, sizeof got, SCIF_RECV_BLOCK), 4);
        EXPECT_EQ(got, 42);
        scif_close(a);
        scif_close(c);
    }
    scif_close(l2);
}

TEST(ScifErrors, AcceptErrors)
{
    int port;
    scif_epd_t l = listener(&port);
    scif_port_id peer;
    scif_epd_t ne;
    EXPECT_SCIF_ERR(scif_accept(l, &peer, &ne, 0), EAGAIN);
    EXPECT_SCIF_ERR(scif_accept(l, &peer, nullptr, 0), EINVAL);
    EXPECT_SCIF_ERR(scif_accept(l, nullptr, &ne, SCIF_ACCEPT_SYNC), EINVAL);
    EXPECT_SCIF_ERR(scif_accept(l, &peer, &ne, 2), EINVAL);
    scif_epd_t bound = scif_open();
    scif_bind(bound, 0);
    EXPECT_SCIF_ERR(scif_accept(bound, &peer, &ne, 0), EINVAL);
    scif_close(bound);
    Pair pr;
    ASSERT_TRUE(pr.ok());
    EXPECT_SCIF_ERR(scif_accept(pr.a, &peer, &ne, 0), EINVAL);
    scif_close(l);
}

void on_signal(int) {}

TEST(ScifErrors, SyncAcceptInterruptedBySignalIsEINTR)
{
    int port;
    scif_epd_t l = listener(&port);
    struct sigaction sa{}, old{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;   // no SA_RESTART: the call is interrupted
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    int done[2];
    ASSERT_EQ(pipe(done), 0);
    std::atomic<int> rc{0}, err{0};
    std::thread t([&] {
        scif_port_id peer;
        scif_epd_t ne;
        int r = scif_accept(l, &peer, &ne, SCIF_ACCEPT_SYNC);
        err = errno;
        rc = r;
        if (r == 0)
            scif_close(ne);
        char x = 1;
        (void)!write(done[1], &x, 1);
    });
    // Signal until the accept returns: a signal that lands before the thread
    // blocks is lost, the next one is not. Bounded: 3000 rounds of 10 ms.
    bool finished = false;
    for (int i = 0; i < 3000 && !finished; ++i) {
        pthread_kill(t.native_handle(), SIGUSR1);
        pollfd p{done[0], POLLIN, 0};
        finished = poll(&p, 1, 10) == 1;
    }
    scif_epd_t unblock = -1;
    if (!finished) {   // give it a connection so the thread ends
        unblock = scif_open();
        fcntl(unblock, F_SETFL, O_NONBLOCK);
        scif_port_id dst{0, static_cast<uint16_t>(port)};
        scif_connect(unblock, &dst);
    }
    t.join();
    sigaction(SIGUSR1, &old, nullptr);
    EXPECT_TRUE(finished) << "SCIF_ACCEPT_SYNC ignored the signals";
    EXPECT_EQ(rc.load(), -1);
    EXPECT_EQ(err.load(), EINTR);
    if (unblock >= 0)
        scif_close(unblock);
    close(done[0]);
    close(done[1]);
    scif_close(l);
}

TEST(ScifErrors, SendRecvErrors)
{
    char b[16] = {};
    scif_epd_t e = scif_open();
    EXPECT_SCIF_ERR(scif_recv(e, b, 4, 0), ENOTCONN);
    EXPECT_SCIF_ERR(scif_send(e, b, 4, SCIF_SEND_BLOCK), ENOTCONN);
    scif_bind(e, 0);
    scif_listen(e, 1);
    EXPECT_SCIF_ERR(scif_recv(e, b, 4, 0), ENOTCONN) << "listening";
    scif_close(e);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    EXPECT_SCIF_ERR(scif_recv(pr.a, b, 4, 0x2), EINVAL);
    EXPECT_SCIF_ERR(scif_recv(pr.a, b, -4, 0), EINVAL);
    EXPECT_SCIF_ERR(scif_send(pr.a, b, -4, SCIF_SEND_BLOCK), EINVAL);
    EXPECT_SCIF_ERR(scif_send(pr.a, b, 4, SCIF_SEND_BLOCK | 0x4), EINVAL);
    EXPECT_SCIF_ERR(scif_send(pr.a, nullptr, 4, 0), EFAULT);
    void *h = hole();
    EXPECT_SCIF_ERR(scif_send(pr.a, h, 4, SCIF_SEND_BLOCK), EFAULT);
    EXPECT_SCIF_ERR(scif_recv(pr.a, h, 4, SCIF_RECV_BLOCK), EFAULT);
    // A buffer whose end runs into the hole.
    Pages two(2);
    munmap(two.p + kPage, kPage);
    EXPECT_SCIF_ERR(scif_send(pr.a, two.p + kPage - 8, 16, 0), EFAULT);
    EXPECT_EQ(scif_send(pr.a, two.p + kPage - 8, 8, SCIF_SEND_BLOCK), 8);
    EXPECT_EQ(scif_send(pr.a, nullptr, 0, 0), 0) << "len 0: nothing sent";
    EXPECT_EQ(scif_recv(pr.c, nullptr, 0, SCIF_RECV_BLOCK), 0) << "len 0: nothing received";
    EXPECT_EQ(scif_recv(pr.c, b, 8, SCIF_RECV_BLOCK), 8);
    two.len = kPage;   // the second page is gone already
}

TEST(ScifErrors, NonBlockingTransfersArePartial)
{
    Pair pr;
    ASSERT_TRUE(pr.ok());
    const int big = 1 << 20;
    std::vector<unsigned char> out(big), in(big);
    for (int i = 0; i < big; ++i)
        out[static_cast<size_t>(i)] = static_cast<unsigned char>(i * 13 + 1);
    const int sent = scif_send(pr.c, out.data(), big, 0);
    ASSERT_GT(sent, 0);
    ASSERT_LT(sent, big) << "more than a ring in one non-blocking send";
    // Full: a non-blocking send sends what fits without waiting (nothing).
    int more = sent, rounds = 0;
    for (int n; (n = scif_send(pr.c, out.data() + more, big - more, 0)) > 0 && rounds < 1000; ++rounds)
        more += n;
    EXPECT_EQ(scif_send(pr.c, out.data() + more, big - more, 0), 0);
    // The receiver takes what is there without waiting, possibly less than asked.
    int got = 0;
    rounds = 0;
    while (got < more && rounds++ < 100000) {
        int n = scif_recv(pr.a, in.data() + got, big, 0);
        ASSERT_GE(n, 0);
        if (n == 0) {
            ASSERT_TRUE(wait_for(pr.a, POLLIN) & POLLIN);
        }
        got += n;
    }
    ASSERT_EQ(got, more);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), static_cast<size_t>(got)), 0);
    EXPECT_EQ(scif_recv(pr.a, in.data(), big, 0), 0) << "nothing more";
}

TEST(ScifErrors, RegisterErrors)
{
    Pages mem(4);
    scif_epd_t e = scif_open();
    EXPECT_SCIF_ERR(scif_register(e, mem.p, kPage, 0, SCIF_PROT_READ, 0), ENOTCONN);
    scif_close(e);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    const int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p + 8, kPage, 0, rw, 0), EINVAL) << "addr";
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage + 8, 0, rw, 0), EINVAL) << "len";
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, 0, 0, rw, 0), EINVAL) << "len 0";
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, -static_cast<off_t>(kPage), rw, 0), EINVAL);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, -static_cast<off_t>(kPage), rw,
                                  SCIF_MAP_FIXED),
                    EINVAL);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, 0x10008, rw, SCIF_MAP_FIXED), EINVAL);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, 0, rw, SCIF_MAP_KERNEL), EINVAL)
        << "kernel-mode flag";
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, 0, rw, 0x1), EINVAL);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, 0, 0x4, 0), EINVAL) << "prot";
    EXPECT_SCIF_ERR(scif_register(pr.c, hole(), kPage, 0, rw, 0), EFAULT);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, kPage, static_cast<off_t>(LLONG_MAX & ~(kPage - 1)),
                                  rw, SCIF_MAP_FIXED),
                    ENOMEM)
        << "past the end of the registered address space";

    const off_t fixed = 0x40000;
    ASSERT_EQ(scif_register(pr.c, mem.p, 2 * kPage, fixed, rw, SCIF_MAP_FIXED), fixed);
    // Any page in common with a window: EADDRINUSE, also a partial overlap.
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, 2 * kPage, fixed + kPage, rw, SCIF_MAP_FIXED),
                    EADDRINUSE);
    EXPECT_SCIF_ERR(scif_register(pr.c, mem.p, 2 * kPage, fixed - kPage, rw, SCIF_MAP_FIXED),
                    EADDRINUSE);
    // Without SCIF_MAP_FIXED: a free aligned hint is taken, a taken one is
    // moved, 0 gives a page multiple; windows never overlap.
    EXPECT_EQ(scif_register(pr.c, mem.p, kPage, 0x80000, rw, 0), 0x80000);
    const off_t moved = scif_register(pr.c, mem.p, kPage, fixed, rw, 0);
    ASSERT_NE(moved, SCIF_REGISTER_FAILED);
    EXPECT_TRUE(moved + static_cast<off_t>(kPage) <= fixed || moved >= fixed + 2 * static_cast<off_t>(kPage))
        << moved;
    const off_t any = scif_register(pr.c, mem.p, kPage, 0, SCIF_PROT_READ, 0);
    ASSERT_NE(any, SCIF_REGISTER_FAILED);
    EXPECT_EQ(any % static_cast<off_t>(kPage), 0);
    EXPECT_NE(any, moved);
    // The same pages in several windows is allowed.
    EXPECT_NE(scif_register(pr.c, mem.p, kPage, 0, 0, 0), SCIF_REGISTER_FAILED);
}

TEST(ScifErrors, UnregisterErrors)
{
    scif_epd_t e = scif_open();
    EXPECT_SCIF_ERR(scif_unregister(e, 0, kPage), ENOTCONN);
    scif_close(e);

    Pages mem(4);
    Pair pr;
    ASSERT_TRUE(pr.ok());
    const int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
    ASSERT_EQ(scif_register(pr.a, mem.p, kPage, 0x10000, rw, SCIF_MAP_FIXED), 0x10000);
    ASSERT_EQ(scif_register(pr.a, mem.p + kPage, 2 * kPage, 0x11000, rw, SCIF_MAP_FIXED), 0x11000);
    EXPECT_SCIF_ERR(scif_unregister(pr.a, -static_cast<off_t>(kPage), kPage), EINVAL);
    EXPECT_SCIF_ERR(scif_unregister(pr.a, 0x20000, kPage), ENXIO);
    // Covers the first window and half the second: nothing is unregistered.
    EXPECT_SCIF_ERR(scif_unregister(pr.a, 0x10000, 2 * kPage), EINVAL);
    unsigned char v[8];
    EXPECT_EQ(scif_vreadfrom(pr.c, v, 8, 0x10000, SCIF_RMA_SYNC), 0) << "first window kept";
    // Both whole windows at once.
    EXPECT_EQ(scif_unregister(pr.a, 0x10000, 3 * kPage), 0);
    EXPECT_SCIF_ERR(scif_unregister(pr.a, 0x10000, kPage), ENXIO) << "gone";
    EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, v, 8, 0x10000, SCIF_RMA_SYNC), ENXIO);
}

TEST(ScifErrors, RmaErrorsAndContiguousWindows)
{
    const int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
    scif_epd_t e = scif_open();
    unsigned char v[64] = {};
    EXPECT_SCIF_ERR(scif_readfrom(e, 0, 8, 0, 0), ENOTCONN);
    EXPECT_SCIF_ERR(scif_writeto(e, 0, 8, 0, 0), ENOTCONN);
    EXPECT_SCIF_ERR(scif_vreadfrom(e, v, 8, 0, 0), ENOTCONN);
    EXPECT_SCIF_ERR(scif_vwriteto(e, v, 8, 0, 0), ENOTCONN);
    scif_close(e);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    // The peer (a): two separate buffers as contiguous windows at 0x100000,
    // a read-only window at 0x200000.
    Pages r1(1), r2(1), rro(1);
    ASSERT_EQ(scif_register(pr.a, r1.p, kPage, 0x100000, rw, SCIF_MAP_FIXED), 0x100000);
    ASSERT_EQ(scif_register(pr.a, r2.p, kPage, 0x101000, rw, SCIF_MAP_FIXED), 0x101000);
    ASSERT_EQ(scif_register(pr.a, rro.p, kPage, 0x200000, SCIF_PROT_READ, SCIF_MAP_FIXED), 0x200000);
    // Ours (c): read-write at 0x10000 (2 pages), read-only at 0x30000.
    Pages l(2), lro(1);
    ASSERT_EQ(scif_register(pr.c, l.p, 2 * kPage, 0x10000, rw, SCIF_MAP_FIXED), 0x10000);
    ASSERT_EQ(scif_register(pr.c, lro.p, kPage, 0x30000, SCIF_PROT_READ, SCIF_MAP_FIXED), 0x30000);

    for (int bad : {0x10, 0x100, -1}) {
        EXPECT_SCIF_ERR(scif_readfrom(pr.c, 0x10000, 8, 0x100000, bad), EINVAL);
        EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x10000, 8, 0x100000, bad), EINVAL);
        EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, v, 8, 0x100000, bad), EINVAL);
        EXPECT_SCIF_ERR(scif_vwriteto(pr.c, v, 8, 0x100000, bad), EINVAL);
    }
    // ENXIO: negative offsets, ranges outside windows on either side.
    EXPECT_SCIF_ERR(scif_readfrom(pr.c, -kPageOff, 8, 0x100000, 0), ENXIO);
    EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x10000, 8, -kPageOff, 0), ENXIO);
    EXPECT_SCIF_ERR(scif_readfrom(pr.c, 0x10000 + kPageOff, 2 * kPage, 0x100000, 0), ENXIO)
        << "local range runs past its window";
    EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x50000, 8, 0x100000, 0), ENXIO) << "no local window";
    EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x10000, 8, 0x300000, 0), ENXIO) << "no remote window";
    EXPECT_SCIF_ERR(scif_vwriteto(pr.c, v, 16, 0x102000 - 8, 0), ENXIO) << "past the last window";
    EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, v, 8, -8, 0), ENXIO);
    EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, v, 16, 0x200000 + kPageOff - 8, 0), ENXIO)
        << "windows that are not contiguous";
    // EACCES: writing into a read-only range, locally or remotely.
    EXPECT_SCIF_ERR(scif_readfrom(pr.c, 0x30000, 8, 0x100000, 0), EACCES);
    EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x10000, 8, 0x200000, 0), EACCES);
    EXPECT_SCIF_ERR(scif_vwriteto(pr.c, v, 8, 0x200000, 0), EACCES);
    EXPECT_EQ(scif_writeto(pr.c, 0x30000, 8, 0x100000, 0), 0) << "reading a read-only one is fine";
    EXPECT_EQ(scif_vreadfrom(pr.c, v, 8, 0x200000, 0), 0);
    // EFAULT: a local buffer that is not mapped.
    EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, hole(), 8, 0x100000, SCIF_RMA_SYNC), EFAULT);
    EXPECT_SCIF_ERR(scif_vwriteto(pr.c, hole(), 8, 0x100000, SCIF_RMA_SYNC), EFAULT);
    EXPECT_SCIF_ERR(scif_vwriteto(pr.c, nullptr, 8, 0x100000, 0), EFAULT);
    EXPECT_EQ(scif_vwriteto(pr.c, nullptr, 0, 0x100000, 0), 0) << "len 0";

    // Across the two contiguous remote windows, with each documented flag.
    for (int flags : std::initializer_list<int>{0, SCIF_RMA_USECPU, SCIF_RMA_SYNC, SCIF_RMA_ORDERED, SCIF_RMA_USECACHE,
                      SCIF_RMA_USECPU | SCIF_RMA_SYNC | SCIF_RMA_ORDERED}) {
        SCOPED_TRACE(flags);
        const auto seed = static_cast<unsigned char>(flags + 1);
        for (size_t i = 0; i < 2 * kPage; ++i)
            l.p[i] = static_cast<unsigned char>(i + seed);
        ASSERT_EQ(scif_writeto(pr.c, 0x10000, 2 * kPage, 0x100000, flags), 0);
        EXPECT_EQ(std::memcmp(r1.p, l.p, kPage), 0);
        EXPECT_EQ(std::memcmp(r2.p, l.p + kPage, kPage), 0);
        std::vector<unsigned char> back(2 * kPage);
        ASSERT_EQ(scif_vreadfrom(pr.c, back.data(), 100, 0x101000 - 50, flags), 0);
        EXPECT_EQ(std::memcmp(back.data(), l.p + kPage - 50, 100), 0);
        std::memset(l.p, 0, 2 * kPage);
        ASSERT_EQ(scif_readfrom(pr.c, 0x10000 + 1, kPage + 2, 0x100000 + 1, flags), 0);
        EXPECT_EQ(l.p[1], static_cast<unsigned char>(1 + seed));
        EXPECT_EQ(l.p[kPage + 2], static_cast<unsigned char>(kPage + 2 + seed));
        EXPECT_EQ(l.p[0], 0);
        unsigned char w[3] = {7, 8, 9};
        ASSERT_EQ(scif_vwriteto(pr.c, w, 3, 0x101000 - 1, flags), 0);
        EXPECT_EQ(r1.p[kPage - 1], 7);
        EXPECT_EQ(r2.p[1], 9);
    }
}

TEST(ScifErrors, FenceErrorsAndSignals)
{
    int mark = 0;
    scif_epd_t e = scif_open();
    EXPECT_SCIF_ERR(scif_fence_mark(e, SCIF_FENCE_INIT_SELF, &mark), ENOTCONN);
    EXPECT_SCIF_ERR(scif_fence_wait(e, 0), ENOTCONN);
    EXPECT_SCIF_ERR(scif_fence_signal(e, 0, 1, 0, 1, SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL),
                    ENOTCONN);
    scif_close(e);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    const int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
    Pages mine(1), theirs(1);
    ASSERT_EQ(scif_register(pr.c, mine.p, kPage, 0x10000, rw, SCIF_MAP_FIXED), 0x10000);
    ASSERT_EQ(scif_register(pr.a, theirs.p, kPage, 0x20000, rw, SCIF_MAP_FIXED), 0x20000);

    for (int bad : std::initializer_list<int>{0, SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER, SCIF_SIGNAL_LOCAL, 0x40})
        EXPECT_SCIF_ERR(scif_fence_mark(pr.c, bad, &mark), EINVAL);
    EXPECT_SCIF_ERR(scif_fence_mark(pr.c, SCIF_FENCE_INIT_SELF, nullptr), EINVAL);
    // A mark no scif_fence_mark() gave: refused rather than waited for ever.
    EXPECT_SCIF_ERR(scif_fence_wait(pr.c, -1), EINVAL);
    EXPECT_SCIF_ERR(scif_fence_wait(pr.c, 0x7ffffff1), EINVAL);

    const int self_local = SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL;
    const int self_remote = SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_REMOTE;
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000, 1, 0, 0, SCIF_SIGNAL_LOCAL), EINVAL)
        << "no INIT flag";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000, 1, 0, 0,
                                      SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL),
                    EINVAL)
        << "both INIT flags";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000, 1, 0, 0, SCIF_FENCE_INIT_SELF), EINVAL)
        << "no SIGNAL flag";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000, 1, 0, 0, self_local | 0x100), EINVAL);
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10002, 1, 0, 0, self_local), EINVAL) << "loff";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0, 0, 0x20001, 1, self_remote), EINVAL) << "roff";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x50000, 1, 0, 0, self_local), ENXIO);
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, -4, 1, 0, 0, self_local), ENXIO);
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000 + kPageOff - 4, 1, 0, 0, self_local), ENXIO)
        << "the 8-byte value runs past the window";
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0, 0, 0x50000, 1, self_remote), ENXIO);
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0, 0, -8, 1, self_remote), ENXIO);

    // The documented effect: the values land at the offsets.
    uint64_t got = 0;
    ASSERT_EQ(scif_fence_signal(pr.c, 0x10008, 0x1111, 0x20010, 0x2222,
                                self_local | SCIF_SIGNAL_REMOTE),
              0);
    std::memcpy(&got, mine.p + 8, 8);
    EXPECT_EQ(got, 0x1111u);
    std::memcpy(&got, theirs.p + 16, 8);
    EXPECT_EQ(got, 0x2222u);
    ASSERT_EQ(scif_fence_signal(pr.a, 0x20020, 0x3333, 0, 0,
                                SCIF_FENCE_INIT_PEER | SCIF_SIGNAL_LOCAL),
              0);
    std::memcpy(&got, theirs.p + 32, 8);
    EXPECT_EQ(got, 0x3333u);
    // Marks of both kinds after some RMAs, then their waits.
    ASSERT_EQ(scif_vwriteto(pr.c, mine.p, 64, 0x20000, 0), 0);
    ASSERT_EQ(scif_fence_mark(pr.c, SCIF_FENCE_INIT_SELF, &mark), 0);
    EXPECT_GE(mark, 0);
    EXPECT_EQ(scif_fence_wait(pr.c, mark), 0);
    ASSERT_EQ(scif_fence_mark(pr.a, SCIF_FENCE_INIT_PEER, &mark), 0);
    EXPECT_EQ(scif_fence_wait(pr.a, mark), 0);
}

// After the peer closes: queued data is still received, then every call on
// the connection says ECONNRESET.
TEST(ScifErrors, PeerClosedIsECONNRESETEverywhere)
{
    Pair pr;
    ASSERT_TRUE(pr.ok());
    const int rw = SCIF_PROT_READ | SCIF_PROT_WRITE;
    Pages mine(2), theirs(1);
    ASSERT_EQ(scif_register(pr.c, mine.p, kPage, 0x10000, rw, SCIF_MAP_FIXED), 0x10000);
    ASSERT_EQ(scif_register(pr.a, theirs.p, kPage, 0x20000, rw, SCIF_MAP_FIXED), 0x20000);
    int mark = 0;
    ASSERT_EQ(scif_fence_mark(pr.c, SCIF_FENCE_INIT_SELF, &mark), 0);
    int v = 5;
    ASSERT_EQ(scif_send(pr.a, &v, sizeof v, SCIF_SEND_BLOCK), 4);
    ASSERT_EQ(scif_close(pr.a), 0);
    pr.a = -1;

    EXPECT_TRUE(wait_for(pr.c, POLLIN) & POLLHUP);
    int got = 0;
    EXPECT_EQ(scif_recv(pr.c, &got, sizeof got, SCIF_RECV_BLOCK), 4) << "queued before the close";
    EXPECT_EQ(got, 5);
    char b[8];
    EXPECT_SCIF_ERR(scif_recv(pr.c, b, 8, SCIF_RECV_BLOCK), ECONNRESET);
    EXPECT_SCIF_ERR(scif_recv(pr.c, b, 8, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_send(pr.c, b, 8, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_register(pr.c, mine.p + kPage, kPage, 0, rw, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_unregister(pr.c, 0x10000, kPage), ECONNRESET);
    EXPECT_SCIF_ERR(scif_readfrom(pr.c, 0x10000, 8, 0x20000, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_writeto(pr.c, 0x10000, 8, 0x20000, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_vreadfrom(pr.c, b, 8, 0x20000, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_vwriteto(pr.c, b, 8, 0x20000, 0), ECONNRESET);
    EXPECT_SCIF_ERR(scif_fence_mark(pr.c, SCIF_FENCE_INIT_PEER, &mark), ECONNRESET);
    EXPECT_SCIF_ERR(scif_fence_wait(pr.c, mark), ECONNRESET);
    EXPECT_SCIF_ERR(scif_fence_signal(pr.c, 0x10000, 1, 0, 0,
                                      SCIF_FENCE_INIT_SELF | SCIF_SIGNAL_LOCAL),
                    ECONNRESET);
    // Still connected as far as the state goes: not a fresh endpoint.
    scif_port_id dst{0, static_cast<uint16_t>(pr.port)};
    EXPECT_SCIF_ERR(scif_connect(pr.c, &dst), EISCONN);
    EXPECT_EQ(scif_close(pr.c), 0);
    pr.c = -1;
}

TEST(ScifErrors, PollAndNodeIds)
{
    scif_pollepd bad{1 << 20, POLLIN, 0};
    EXPECT_EQ(scif_poll(&bad, 1, 0), 1);
    EXPECT_EQ(bad.revents, POLLNVAL);
    EXPECT_SCIF_ERR(scif_poll(nullptr, 1, 0), EFAULT);
    EXPECT_EQ(scif_poll(nullptr, 0, 0), 0);

    Pair pr;
    ASSERT_TRUE(pr.ok());
    scif_pollepd idle[2] = {{pr.a, POLLIN, 0}, {pr.lis, POLLIN, 0}};
    EXPECT_EQ(scif_poll(idle, 2, 0), 0) << "nothing to read, nobody connecting";
    EXPECT_EQ(scif_poll(idle, 2, 20), 0) << "a timeout, bounded";
    scif_pollepd out{pr.a, POLLOUT, 0};
    EXPECT_EQ(scif_poll(&out, 1, 0), 1);
    EXPECT_EQ(out.revents, POLLOUT);
    char x = 1;
    ASSERT_EQ(scif_send(pr.c, &x, 1, SCIF_SEND_BLOCK), 1);
    EXPECT_EQ(wait_for(pr.a, POLLIN), POLLIN);

    uint16_t nodes[2] = {7, 7}, self = 7;
    EXPECT_SCIF_ERR(scif_get_node_ids(nullptr, 2, &self), EFAULT);
    EXPECT_EQ(scif_get_node_ids(nullptr, 0, &self), 1);
    EXPECT_EQ(self, 0);
    EXPECT_EQ(scif_get_node_ids(nodes, 2, &self), 1);
    EXPECT_EQ(nodes[0], 0);
    EXPECT_EQ(nodes[1], 7) << "only the online nodes are written";
}

} // namespace
