// SPDX-License-Identifier: BSD-3-Clause
// weft_bench --limits: the machine's limits, measured by ranks 0 and 1 on
// their own cores (see limits.hpp for what each limit is and why).
#include "limits.hpp"

#include <weft.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bench {
namespace {

// The limits talk to each other through weft only to set up (names, ports,
// verdicts); the measurements themselves never touch weft.
constexpr int32_t kTagLimits = 90;
// Any wait on the other rank gives up after this: a rank that died must not
// leave the other spinning for ever.
constexpr double kWaitLimitS = 60;

double now_s()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

[[noreturn]] void fail(const char *what, int err = 0)
{
    std::fprintf(stderr, "weft_bench: --limits: %s%s%s\n", what, err ? ": " : "", err ? std::strerror(err) : "");
    std::exit(1);
}

void exchange_check(int rc, const char *what)
{
    if (rc != WEFT_SUCCESS) {
        std::fprintf(stderr, "weft_bench: --limits: %s: %s: %s\n", what, weft_status_string(rc),
                     weft_error_message());
        std::exit(1);
    }
}

// Rank 0 and rank 1 swap one small value over weft; each gets the other's.
template <typename T>
T swap_with_peer(int me, const T &mine)
{
    T theirs{};
    const uint32_t peer = me == 0 ? 1 : 0;
    if (me == 0) {
        exchange_check(weft_send(&mine, sizeof mine, peer, kTagLimits), "send to rank 1");
        exchange_check(weft_recv(&theirs, sizeof theirs, peer, kTagLimits, nullptr), "receive from rank 1");
    } else {
        exchange_check(weft_recv(&theirs, sizeof theirs, peer, kTagLimits, nullptr), "receive from rank 0");
        exchange_check(weft_send(&mine, sizeof mine, peer, kTagLimits), "send to rank 0");
    }
    return theirs;
}

// Busy waiting with a bound on the time without progress. It looks at the
// clock only every few thousand turns of a wait (never on a wait that ends
// sooner), so the bound costs nothing beside what is waited for; a slow but
// moving probe on a loaded machine is not cut off.
class Deadline {
public:
    void progressed() { ++progress_; }
    void tick(const char *waiting_for)
    {
        if ((++turns_ & 0xfff) != 0)
            return;
        const double now = now_s();
        if (end_ == 0 || progress_ != seen_) {
            seen_ = progress_;
            end_ = now + kWaitLimitS;
        } else if (now > end_) {
            std::fprintf(stderr, "weft_bench: --limits: no progress in %.0f s waiting for %s\n", kWaitLimitS,
                         waiting_for);
            std::exit(1);
        }
    }

private:
    double end_ = 0;
    uint64_t progress_ = 0, seen_ = 0;
    unsigned turns_ = 0;
};

double median(std::vector<double> v)
{
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

// Non-blocking socket I/O, retried in a busy loop as a polling progress
// engine would (no sleep, no wake-up).
void send_all(int fd, const unsigned char *p, size_t n)
{
    Deadline deadline;
    while (n > 0) {
        const ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
        if (r > 0) {
            p += r;
            n -= static_cast<size_t>(r);
            deadline.progressed();
        } else if (r < 0 && errno != EAGAIN && errno != EINTR) {
            fail("loopback socket send", errno);
        } else {
            deadline.tick("the loopback socket to drain");
        }
    }
}

// What is there, up to n bytes; 0 when nothing is.
size_t recv_some(int fd, unsigned char *p, size_t n, Deadline &deadline)
{
    const ssize_t r = ::recv(fd, p, n, 0);
    if (r > 0) {
        deadline.progressed();
        return static_cast<size_t>(r);
    }
    if (r == 0)
        fail("the other rank closed the loopback socket");
    if (errno != EAGAIN && errno != EINTR)
        fail("loopback socket receive", errno);
    deadline.tick("the loopback socket's data");
    return 0;
}

void recv_all(int fd, unsigned char *p, size_t n)
{
    Deadline deadline;
    while (n > 0) {
        const size_t got = recv_some(fd, p, n, deadline);
        p += got;
        n -= got;
    }
}

int make_fast_socket(int fd)
{
    const int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        return errno;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        return errno;
    return 0;
}

struct Iterations {
    int iters, warmup;
};
Iterations capped(Iterations it, int cap)
{
    if (cap <= 0)
        return it;
    return {std::min(it.iters, cap), std::min(it.warmup, std::max(1, cap / 10))};
}
// Fewer than the benchmark's own rows use: the limit is a steady rate, and
// three trials of these take well under a second per size.
Iterations socket_lat_iters(size_t n)
{
    if (n <= 8192)
        return {5000, 500};
    if (n <= (1u << 20))
        return {500, 50};
    return {100, 10};
}
Iterations socket_bw_iters(size_t n)
{
    if (n <= 8192)
        return {500, 50};
    if (n <= 65536)
        return {100, 10};
    if (n <= (1u << 20))
        return {15, 2};
    return {5, 1};
}
constexpr int kTrials = 3;
constexpr int kWindow = 64;                 // as weft_bench's bw
constexpr size_t kCacheLine = 64;           // the cache-line floor applies up to here
constexpr size_t kMemcpyFromBytes = 4096;   // memcpy is a bandwidth bound from here up

} // namespace

struct MachineLimits::SharedLine {
    alignas(64) std::atomic<uint64_t> value;
};

std::unique_ptr<MachineLimits> MachineLimits::open(int me, Kind kind, int iteration_cap, std::string &why)
{
    struct Host {
        char name[256];
    } mine{};
    gethostname(mine.name, sizeof mine.name - 1);
    const Host theirs = swap_with_peer(me, mine);
    if (std::strncmp(theirs.name, mine.name, sizeof mine.name) != 0) {
        why = std::string("ranks 0 and 1 are on different hosts (") + mine.name + ", " + theirs.name +
              "); the limits are those of one host";
        return nullptr;
    }
    std::unique_ptr<MachineLimits> limits(new MachineLimits(me, kind, iteration_cap));
    const bool ok = kind == Kind::SharedMemory ? limits->map_shared_line(why) : limits->connect_socket(why);
    return ok ? std::move(limits) : nullptr;
}

// Rank 0 creates a page, rank 1 maps it, rank 0 removes its name; both learn
// whether the other succeeded, so they agree on what comes next.
bool MachineLimits::map_shared_line(std::string &why)
{
    int my_error = 0;
    char name[64] = {};
    int fd = -1;
    bool created = false;   // only a name this rank created is removed
    if (me_ == 0) {
        std::snprintf(name, sizeof name, "/weft_bench_line.%d", static_cast<int>(getpid()));
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        created = fd >= 0;
        if (fd < 0) {
            my_error = errno;
        } else if (ftruncate(fd, 4096) != 0) {
            my_error = errno;
            close(fd);
            fd = -1;
        }
        if (!created)
            name[0] = '\0';   // an existing name is someone else's: rank 1 must not open it
        exchange_check(weft_send(name, sizeof name, 1, kTagLimits), "send the line's name");
    } else {
        exchange_check(weft_recv(name, sizeof name, 0, kTagLimits, nullptr), "receive the line's name");
        fd = name[0] ? shm_open(name, O_RDWR, 0) : -1;
        if (fd < 0)
            my_error = name[0] ? errno : ENOENT;
    }
    if (fd >= 0) {
        void *p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            my_error = errno;
        else
            line_ = static_cast<SharedLine *>(p);   // a fresh page reads 0: the ping-pong's start
        close(fd);
    }
    const int their_error = swap_with_peer(me_, my_error);
    if (created)
        shm_unlink(name);   // both hold it through their mappings now, or never will
    if (my_error || their_error) {
        why = std::string("shared memory for the cache-line ping-pong: ") + std::strerror(my_error ? my_error : their_error);
        return false;
    }
    return true;
}

// Rank 1 listens on 127.0.0.1 and tells rank 0 the port (or -errno); rank 0
// connects; rank 1 accepts only once rank 0 says it connected, since accept()
// would otherwise wait for a connection that is not coming.
bool MachineLimits::connect_socket(std::string &why)
{
    int my_error = 0, listener = -1, port = 0;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (me_ == 1) {
        socklen_t len = sizeof a;
        listener = socket(AF_INET, SOCK_STREAM, 0);
        if (listener < 0 || bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
            listen(listener, 1) != 0 || getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len) != 0)
            my_error = errno;
        swap_with_peer(me_, my_error ? -my_error : static_cast<int>(ntohs(a.sin_port)));
    } else {
        port = swap_with_peer(me_, 0);
        if (port <= 0) {
            my_error = -port;
        } else {
            a.sin_port = htons(static_cast<uint16_t>(port));
            sock_ = socket(AF_INET, SOCK_STREAM, 0);
            if (sock_ < 0 || ::connect(sock_, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
                my_error = errno;
            else
                my_error = make_fast_socket(sock_);
        }
    }
    int their_error = swap_with_peer(me_, my_error);
    if (!my_error && !their_error) {   // the same answer on both ranks
        if (me_ == 1) {
            sock_ = accept(listener, nullptr, nullptr);
            my_error = sock_ < 0 ? errno : make_fast_socket(sock_);
        }
        their_error = swap_with_peer(me_, my_error);
    }
    if (listener >= 0)
        close(listener);
    if (my_error || their_error) {
        why = std::string("loopback TCP socket between ranks 0 and 1: ") + std::strerror(my_error ? my_error : their_error);
        return false;
    }
    return true;
}

MachineLimits::~MachineLimits()
{
    if (line_)
        munmap(line_, 4096);
    if (sock_ >= 0)
        close(sock_);
}

const char *MachineLimits::describe_latency() const
{
    return kind_ == Kind::SharedMemory ? "cache-line ping-pong between the ranks' cores (sizes <= 64 B)"
                                       : "busy-polled loopback TCP ping-pong of the same size";
}

const char *MachineLimits::describe_bandwidth() const
{
    return kind_ == Kind::SharedMemory ? "single-core in-cache memcpy of the same size (sizes >= 4 KiB)"
                                       : "one busy-polled loopback TCP stream of the same size (a baseline)";
}

double MachineLimits::latency_us(size_t n)
{
    if (kind_ == Kind::SharedMemory) {
        if (n > kCacheLine)
            return -1;
        if (cache_line_us_ < 0)
            cache_line_us_ = cache_line_one_way_us();
        return cache_line_us_;
    }
    auto it = lat_.find(n);
    if (it == lat_.end())
        it = lat_.emplace(n, socket_one_way_us(n)).first;
    return it->second;
}

double MachineLimits::bandwidth_mbs(size_t n)
{
    if (n == 0 || (kind_ == Kind::SharedMemory && n < kMemcpyFromBytes))
        return -1;
    auto it = bw_.find(n);
    if (it == bw_.end())
        it = bw_.emplace(n, kind_ == Kind::SharedMemory ? memcpy_mbs(n) : socket_stream_mbs(n)).first;
    return it->second;
}

// Rank 0 stores 2i+1 and spins until it reads 2i+2; rank 1 answers each odd
// value with the next even one. One round trip moves the line there and back.
double MachineLimits::cache_line_one_way_us()
{
    constexpr int kLineTrials = 7;
    const Iterations count = capped({20000, 10000}, iteration_cap_);
    std::atomic<uint64_t> &v = line_->value;
    Deadline deadline;
    if (me_ == 1) {
        for (uint64_t i = 0; i < uint64_t(count.warmup) + uint64_t{kLineTrials} * count.iters; ++i) {
            while (v.load(std::memory_order_acquire) != 2 * i + 1)
                deadline.tick("rank 0's cache line");
            deadline.progressed();
            v.store(2 * i + 2, std::memory_order_release);
        }
        return 0;
    }
    uint64_t i = 0;
    auto round_trips = [&](int count) {
        for (int k = 0; k < count; ++k, ++i) {
            v.store(2 * i + 1, std::memory_order_release);
            while (v.load(std::memory_order_acquire) != 2 * i + 2)
                deadline.tick("rank 1's cache line");
            deadline.progressed();
        }
    };
    round_trips(count.warmup);
    std::vector<double> one_way_us;
    for (int t = 0; t < kLineTrials; ++t) {
        const double t0 = now_s();
        round_trips(count.iters);
        one_way_us.push_back((now_s() - t0) * 1e6 / (2.0 * count.iters));
    }
    return median(one_way_us);
}

// Rank 0 alone, on its own core; rank 1 has nothing to do.
double MachineLimits::memcpy_mbs(size_t n) const
{
    if (me_ != 0)
        return 0;
    std::vector<unsigned char> src(n, 1), dst(n, 2);   // touched, so no page faults are timed
    // Through a volatile pointer, so the compiler cannot drop copies whose
    // result nobody reads.
    void *(*volatile copy)(void *, const void *, size_t) = std::memcpy;
    auto copies = [&](long count) {
        const double t0 = now_s();
        for (long k = 0; k < count; ++k)
            copy(dst.data(), src.data(), n);
        return now_s() - t0;
    };
    long count = 1;
    double s;
    while ((s = copies(count)) < 0.01)
        count *= 2;
    count = static_cast<long>(static_cast<double>(count) * 0.04 / s) + 1;   // ~40 ms a trial
    std::vector<double> mbs;
    for (int t = 0; t < 5; ++t)
        mbs.push_back(static_cast<double>(n) * static_cast<double>(count) / copies(count) / 1e6);
    return median(mbs);
}

// A ping-pong of n bytes (1 for n = 0: a stream cannot carry an empty message).
double MachineLimits::socket_one_way_us(size_t n)
{
    const size_t len = std::max<size_t>(n, 1);
    std::vector<unsigned char> buf(len, 7);
    const auto [iters, warmup] = capped(socket_lat_iters(n), iteration_cap_);
    if (me_ == 1) {
        for (int i = 0; i < warmup + kTrials * iters; ++i) {
            recv_all(sock_, buf.data(), len);
            send_all(sock_, buf.data(), len);
        }
        return 0;
    }
    auto round_trips = [&](int count) {
        for (int i = 0; i < count; ++i) {
            send_all(sock_, buf.data(), len);
            recv_all(sock_, buf.data(), len);
        }
    };
    round_trips(warmup);
    std::vector<double> one_way_us;
    for (int t = 0; t < kTrials; ++t) {
        const double t0 = now_s();
        round_trips(iters);
        one_way_us.push_back((now_s() - t0) * 1e6 / (2.0 * iters));
    }
    return median(one_way_us);
}

// Windows of 64 messages of n bytes from rank 0, each answered by a 1-byte
// ack once rank 1 has read all of it; MB/s on rank 0, as `bw` measures.
double MachineLimits::socket_stream_mbs(size_t n)
{
    const auto [iters, warmup] = capped(socket_bw_iters(n), iteration_cap_);
    const size_t window_bytes = n * kWindow;
    unsigned char ack = 'a';
    if (me_ == 1) {
        // Reads as much as is there, up to 1 MiB at a time: the raw stream
        // need not keep message boundaries.
        std::vector<unsigned char> buf(std::min<size_t>(window_bytes, 1u << 20));
        for (int i = 0; i < warmup + kTrials * iters; ++i) {
            Deadline deadline;
            for (size_t left = window_bytes; left > 0;)
                left -= recv_some(sock_, buf.data(), std::min(left, buf.size()), deadline);
            send_all(sock_, &ack, 1);
        }
        return 0;
    }
    std::vector<unsigned char> msg(n, 7);
    auto windows = [&](int count) {
        for (int i = 0; i < count; ++i) {
            for (int w = 0; w < kWindow; ++w)
                send_all(sock_, msg.data(), n);
            recv_all(sock_, &ack, 1);
        }
    };
    windows(warmup);
    std::vector<double> mbs;
    for (int t = 0; t < kTrials; ++t) {
        const double t0 = now_s();
        windows(iters);
        mbs.push_back(static_cast<double>(window_bytes) * iters / 1e6 / (now_s() - t0));
    }
    return median(mbs);
}

} // namespace bench
