// SPDX-License-Identifier: BSD-3-Clause
// weft_bench: point-to-point benchmarks of the messaging engine, measured
// the way shared/bench's mpi_pp.c (OSU osu_latency / osu_bw) measures MPI,
// so ../shared/bench/compare can put them side by side.
//
//   weft_bench [--csv FILE] [--limits] [lat|bw|both|rate|multi|raw|rawbw|latdist|rawdist|idle] [SIZE,...]
//
//   lat    ping-pong between ranks 0 and 1 (blocking send/recv); one-way
//          latency = total / (2 x iterations), after warm-up
//   bw     rank 0 sends a window of 64 non-blocking sends, rank 1 has 64
//          receives posted; then a 4-byte ack from rank 1; MB/s (10^6)
//   both   lat then bw (the default)
//   rate   message rate of 8-byte messages (window 64), messages/s
//   multi  every even rank streams to the next odd one (window 64);
//          aggregate MB/s of all pairs
//   raw    the transport alone: a ping-pong of btl active messages on the
//          module the runtime chose for the peer, without the engine; the
//          difference to `lat` is what the engine adds per message
//   rawbw  the transport alone, measured like `bw`: RDMA gets as the
//          engine's rendezvous does them, or max_send-sized active messages
//   latdist  the ping-pong of `lat`, each round trip timed on its own (with
//          the cycle counter, as perftest's ib_send_lat does): the median
//          and the mean one-way latency, for comparison with a tool that
//          reports a typical (median) value, and the 90th and 99th
//          percentiles (half a round trip each: the tail)
//   rawdist  raw's ping-pong timed as latdist's (rawmed, rawavg, rawp90,
//          rawp99): whether a tail is the transport's or the engine's
//   idle   the cost of one progress pass with the peer connected and nothing
//          arriving, in ns (SIZE is ignored): a busy waiter notices a message
//          half a pass late on average
//
// Sizes default to 0 B .. 4 MiB (powers of two), or WEFT_BENCH_SIZES.
// WEFT_BENCH_ITERS=N caps every row's iterations (and the limits') at N:
// for tests of the output, never for numbers.
// Only rank 0 prints: `lat <bytes> <us>`, `bw <bytes> <MB/s>`,
// `rate <bytes> <msgs/s>`, `multi <bytes> <MB/s>`, `raw <bytes> <us>`,
// `rawbw <bytes> <MB/s>`, `idle 0 <ns per pass>`,
// `latmed <bytes> <us>`, `latavg <bytes> <us>`, `latp90 <bytes> <us>` and
// `latp99 <bytes> <us>` (latdist), and the same as raw* (rawdist).
// With --csv FILE (or WEFT_BENCH_CSV=FILE) rank 0 also writes every one of
// those lines as a CSV row `test,size,value,unit` (header first) for
// contrib/plot-bench; the text on stdout stays the same.
//
// With --limits (or WEFT_BENCH_LIMITS=1) ranks 0 and 1 also measure the
// machine's limit for each latency row (lat, raw, latmed, latavg) and each
// bandwidth row (bw, rawbw) on their own cores, in the same run (limits.hpp:
// a cache line and memcpy for btl/scif, a busy-polled loopback socket for
// btl/tcp; other transports have none). After a row with a limit, rank 0
// prints `limit <test> <bytes> <limit> <fraction>`: the limit in the row's
// unit, and the fraction of it the row reaches (latency: limit / value;
// bandwidth: value / limit; 1 = at the limit). The row's own line is
// unchanged, so compare still reads it. The CSV gets two more columns,
// `limit,fraction`, empty where a row has no limit.
#include <weft.h>

#include <sched.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "limits.hpp"
#include "rte/endpoints.hpp"
#include "rte/runtime.hpp"

namespace {

double now_us()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void die(const char *what, int rc)
{
    std::fprintf(stderr, "weft_bench: %s: %s: %s\n", what, weft_status_string(rc), weft_error_message());
    std::exit(1);
}

void check(int rc, const char *what)
{
    if (rc != WEFT_SUCCESS)
        die(what, rc);
}

struct Iters {
    int iters, warmup;
};
// WEFT_BENCH_ITERS=N: at most N iterations per row (and N/10 warm-up), for
// tests that check what is printed, not how fast, on a loaded machine.
int g_iteration_cap = 0;
Iters capped(Iters it)
{
    if (g_iteration_cap <= 0)
        return it;
    return {std::min(it.iters, g_iteration_cap), std::min(it.warmup, std::max(1, g_iteration_cap / 10))};
}
Iters lat_iters(size_t n)
{
    if (n <= 8192)
        return capped({10000, 1000});
    if (n <= (1u << 20))
        return capped({1000, 100});
    return capped({200, 20});
}
Iters bw_iters(size_t n)
{
    if (n <= 8192)
        return capped({1000, 100});
    if (n <= 65536)
        return capped({200, 20});
    if (n <= (1u << 20))
        return capped({30, 3});
    return capped({10, 2});
}

constexpr int kWindow = 64;
constexpr int kTagData = 1, kTagAck = 2;

struct Buffer {
    explicit Buffer(size_t n)
    {
        void *p = nullptr;
        if (posix_memalign(&p, 4096, n ? n : 1) != 0)
            die("posix_memalign", WEFT_ERR_NO_MEMORY);
        ptr.reset(static_cast<unsigned char *>(p));
        std::memset(ptr.get(), 1, n ? n : 1);   // touched before timing
    }
    struct Free { void operator()(unsigned char *p) const { std::free(p); } };
    std::unique_ptr<unsigned char, Free> ptr;
    unsigned char *get() { return ptr.get(); }
};

// One ping-pong exchange of n bytes between ranks 0 and 1.
void round_trip(Buffer &sbuf, Buffer &rbuf, size_t n, int me)
{
    if (me == 0) {
        check(weft_send(sbuf.get(), n, 1, kTagData), "send");
        check(weft_recv(rbuf.get(), n, 1, kTagData, nullptr), "recv");
    } else {
        check(weft_recv(rbuf.get(), n, 0, kTagData, nullptr), "recv");
        check(weft_send(sbuf.get(), n, 0, kTagData), "send");
    }
}

double latency(size_t n, int me)
{
    Buffer sbuf(n), rbuf(n);
    auto [iters, warmup] = lat_iters(n);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
        if (i == warmup)
            t0 = now_us();
        round_trip(sbuf, rbuf, n, me);
    }
    return (now_us() - t0) / (2.0 * iters);
}

// A cheap per-iteration clock: the cycle counter where there is one (in a
// VM without a paravirtual clock, clock_gettime is a system call that would
// cost more than a Soft-RoCE message), converted with a rate measured
// against CLOCK_MONOTONIC over the whole run.
uint64_t ticks()
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
#endif
}

// One-way latency in us from round trips timed one by one: percentiles of
// the round trips (halved) and the mean.
struct Distribution {
    double p50, p90, p99, mean;
};
// exchange() makes one round trip.
template <class Exchange>
Distribution time_each_round_trip(size_t n, Exchange exchange)
{
    auto [iters, warmup] = lat_iters(n);
    std::vector<uint64_t> rtt(iters);
    for (int i = 0; i < warmup; ++i)
        exchange();
    const double t0 = now_us();
    const uint64_t c0 = ticks();
    uint64_t last = c0;
    for (int i = 0; i < iters; ++i) {
        exchange();
        const uint64_t now = ticks();
        rtt[i] = now - last;
        last = now;
    }
    const double us = now_us() - t0;
    const double us_per_tick = us / static_cast<double>(last - c0);
    std::sort(rtt.begin(), rtt.end());
    auto one_way = [&](int percent) { return static_cast<double>(rtt[iters * percent / 100]) * us_per_tick / 2; };
    return {one_way(50), one_way(90), one_way(99), us / (2.0 * iters)};
}

Distribution latency_distribution(size_t n, int me)
{
    Buffer sbuf(n), rbuf(n);
    return time_each_round_trip(n, [&] { round_trip(sbuf, rbuf, n, me); });
}

// Streams windows from `from` to `to`; returns MB/s on `from`.
double stream(size_t n, int me, int from, int to, Iters it)
{
    // One buffer for the whole window, as osu_bw and shared/bench's mpi_pp.c do.
    Buffer buf(n);
    int ack = 0;
    weft_request_t reqs[kWindow];
    double t0 = 0;
    for (int i = 0; i < it.iters + it.warmup; ++i) {
        if (i == it.warmup)
            t0 = now_us();
        if (me == from) {
            for (int w = 0; w < kWindow; ++w)
                check(weft_isend(buf.get(), n, to, kTagData, &reqs[w]), "isend");
            check(weft_waitall(kWindow, reqs, nullptr), "waitall");
            check(weft_recv(&ack, sizeof ack, to, kTagAck, nullptr), "recv ack");
        } else if (me == to) {
            for (int w = 0; w < kWindow; ++w)
                check(weft_irecv(buf.get(), n, from, kTagData, &reqs[w]), "irecv");
            check(weft_waitall(kWindow, reqs, nullptr), "waitall");
            check(weft_send(&ack, sizeof ack, from, kTagAck), "send ack");
        }
    }
    const double secs = (now_us() - t0) / 1e6;
    return static_cast<double>(n) * kWindow * it.iters / 1e6 / secs;
}

// --- raw: btl active messages on the chosen module, no engine ---------------

constexpr uint8_t kAmRaw = 200;
// Messages a handler counted and how many the benchmark has used. Waiting
// for "consumed + n" rather than "what has arrived now + n" keeps a message
// that came early (while this rank was still in the barrier) from being
// counted as the next one's.
struct Arrivals {
    volatile size_t arrived = 0;
    size_t consumed = 0;
    void note() { arrived = arrived + 1; }
    void take(size_t n)
    {
        consumed += n;
        while (arrived < consumed)
            weft::rt::Runtime::current()->progress().progress();
    }
};
Arrivals g_raw_msgs;
void raw_handler(void *, weft_btl_endpoint_t *, const void *, size_t) { g_raw_msgs.note(); }

// The endpoint the runtime chose for the other rank of the pair (connected).
weft_btl_endpoint_t *raw_endpoint(int me)
{
    auto *rt = weft::rt::Runtime::current();
    const uint32_t peer = me == 0 ? 1 : 0;
    if (auto st = rt->connect(peer, std::chrono::seconds(30)); !st.ok()) {
        std::fprintf(stderr, "weft_bench: raw: %s\n", st.message().c_str());
        std::exit(1);
    }
    return rt->endpoints().peer(peer)->endpoints.front();
}

// The raw ping-pong's parts: the endpoint, the send of one n-byte active
// message, and one round trip (raw and rawdist).
struct RawPingPong {
    weft::rt::Runtime *rt;
    weft_btl_endpoint_t *ep;
    size_t n;
    int me;
    Buffer buf;
    bool inline_ok;
    RawPingPong(size_t bytes, int rank, weft_btl_endpoint_t *endpoint)
        : rt(weft::rt::Runtime::current()), ep(endpoint), n(bytes), me(rank), buf(bytes),
          inline_ok(WEFT_BTL_HAS_OP(ep->module, sendi) && (ep->module->caps.flags & WEFT_BTL_FLAG_INLINE) &&
                    bytes <= ep->module->caps.inline_max)
    {
    }
    void send()
    {
        int rc;
        do {
            if (inline_ok) {
                rc = weft_btl_sendi(ep, kAmRaw, nullptr, 0, buf.get(), n);
            } else {
                iovec iov{buf.get(), n};
                rc = weft_btl_send(ep, kAmRaw, &iov, 1);
            }
            if (rc == WEFT_ERR_AGAIN)
                rt->progress().progress();
        } while (rc == WEFT_ERR_AGAIN);
        check(rc, "raw send");
    }
    void round_trip()
    {
        if (me == 0) {
            send();
            g_raw_msgs.take(1);
        } else {
            g_raw_msgs.take(1);
            send();
        }
    }
};

// The connected endpoint to the pair's other rank with the raw handler set
// on both ranks; null when n is more than the module sends in one message.
weft_btl_endpoint_t *raw_ready(size_t n, int me)
{
    auto *rt = weft::rt::Runtime::current();
    weft_btl_endpoint_t *ep = raw_endpoint(me);
    if (n > ep->module->caps.max_send)
        return nullptr;
    static bool registered = false;
    if (!registered) {
        // Both ranks register before either sends: a frame that comes
        // before its handler is dropped, and the ping-pong would wait forever.
        rt->set_handler(kAmRaw, raw_handler, nullptr);
        registered = true;
        check(weft_barrier(), "barrier");
    }
    return ep;
}

double raw_latency(size_t n, int me)
{
    weft_btl_endpoint_t *ep = raw_ready(n, me);
    if (!ep)
        return -1;
    RawPingPong pp(n, me, ep);
    auto [iters, warmup] = lat_iters(n);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
        if (i == warmup)
            t0 = now_us();
        pp.round_trip();
    }
    return (now_us() - t0) / (2.0 * iters);
}

// raw's round trips timed one by one, as latdist's; false when n is more
// than one message of the module.
bool raw_distribution(size_t n, int me, Distribution *out)
{
    weft_btl_endpoint_t *ep = raw_ready(n, me);
    if (!ep)
        return false;
    RawPingPong pp(n, me, ep);
    *out = time_each_round_trip(n, [&] { pp.round_trip(); });
    return true;
}

// The transport's own bandwidth, measured like `bw` (a window of 64
// messages, then an ack, timed on rank 0). A module with RDMA get moves
// each message the way the engine's rendezvous does: rank 1 reads it from
// rank 0's registered buffer. Otherwise rank 0 sends it in active messages
// of at most max_send bytes.
constexpr uint8_t kAmRawKey = 201;
constexpr uint8_t kAmRawAck = 202;
constexpr uint8_t kAmRawFrag = 203;
struct RawKey {
    uint64_t addr = 0;
    size_t rkey_len = 0;
    uint8_t rkey[64] = {};
};
RawKey g_raw_key;
Arrivals g_raw_keys, g_raw_acks, g_raw_frags, g_raw_gets;
void raw_key_handler(void *, weft_btl_endpoint_t *, const void *data, size_t len)
{
    if (len == sizeof g_raw_key)
        std::memcpy(&g_raw_key, data, len);
    g_raw_keys.note();
}
void raw_ack_handler(void *, weft_btl_endpoint_t *, const void *, size_t) { g_raw_acks.note(); }
void raw_frag_handler(void *, weft_btl_endpoint_t *, const void *, size_t) { g_raw_frags.note(); }
void raw_get_done(weft_btl_endpoint_t *, void *, int status)
{
    check(status, "raw get");
    g_raw_gets.note();
}

double raw_bandwidth(size_t n, int me)
{
    auto *rt = weft::rt::Runtime::current();
    weft_btl_endpoint_t *ep = raw_endpoint(me);
    weft_btl_module_t *m = ep->module;
    static bool registered = false;
    if (!registered) {
        rt->set_handler(kAmRawKey, raw_key_handler, nullptr);
        rt->set_handler(kAmRawAck, raw_ack_handler, nullptr);
        rt->set_handler(kAmRawFrag, raw_frag_handler, nullptr);
        registered = true;
        check(weft_barrier(), "barrier");   // as in raw_latency: handlers before frames
    }
    auto am = [&](uint8_t id, const void *p, size_t len) {
        int rc;
        do {
            iovec iov{const_cast<void *>(p), len};
            rc = weft_btl_send(ep, id, &iov, len ? 1 : 0);
            if (rc == WEFT_ERR_AGAIN)
                rt->progress().progress();
        } while (rc == WEFT_ERR_AGAIN);
        check(rc, "raw send");
    };
    const bool by_get = (m->caps.flags & WEFT_BTL_FLAG_GET) && WEFT_BTL_HAS_OP(m, get) &&
                        WEFT_BTL_HAS_OP(m, mem_register) && n > 0;
    Buffer buf(n);
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    if (by_get && me == 0) {
        check(weft_btl_mem_register(m, buf.get(), n, &reg), "raw mem_register");
        RawKey k;
        k.addr = reinterpret_cast<uintptr_t>(buf.get());
        k.rkey_len = reg.rkey_len;
        std::memcpy(k.rkey, reg.rkey, reg.rkey_len);
        am(kAmRawKey, &k, sizeof k);
    } else if (by_get) {
        g_raw_keys.take(1);
    }
    const size_t frag = std::min(n, m->caps.max_send);
    const size_t frags = n == 0 ? 1 : (n + frag - 1) / frag;
    auto [iters, warmup] = bw_iters(n);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
        if (i == warmup)
            t0 = now_us();
        if (me == 0) {
            if (by_get)
                am(kAmRawKey, nullptr, 0);   // go: the window may be read now
            else
                for (int w = 0; w < kWindow; ++w)
                    for (size_t f = 0; f < frags; ++f)
                        am(kAmRawFrag, buf.get() + f * frag, std::min(frag, n - f * frag));
            g_raw_acks.take(1);
        } else {
            if (by_get) {
                g_raw_keys.take(1);   // go
                for (int w = 0; w < kWindow; ++w) {
                    int rc;
                    while ((rc = weft_btl_get(ep, buf.get(), n, g_raw_key.addr, g_raw_key.rkey, g_raw_key.rkey_len,
                                          raw_get_done, nullptr)) == WEFT_ERR_AGAIN)
                        rt->progress().progress();
                    check(rc, "raw get");
                }
                g_raw_gets.take(kWindow);
            } else {
                g_raw_frags.take(frags * kWindow);
            }
            am(kAmRawAck, nullptr, 0);
        }
    }
    const double secs = (now_us() - t0) / 1e6;
    if (by_get && me == 0)
        weft_btl_mem_deregister(m, &reg);
    return static_cast<double>(n) * kWindow * iters / 1e6 / secs;
}

// ns per progress pass, with the pair connected and idle.
double idle_pass_ns(int me)
{
    auto *rt = weft::rt::Runtime::current();
    raw_endpoint(me);   // connected, as during a ping-pong
    constexpr int kPasses = 200000;
    for (int i = 0; i < kPasses / 10; ++i)
        rt->progress().progress();
    const double t0 = now_us();
    for (int i = 0; i < kPasses; ++i)
        rt->progress().progress();
    return (now_us() - t0) * 1e3 / kPasses;
}

// The machine's limit for one row (limit < 0: none at this size) and the
// fraction of it the row reaches.
struct RowLimit {
    double limit = -1;
    double fraction = 0;
};

// What rank 0 prints: one text line per measurement and, when asked, the
// same measurement as a CSV row.
class Report {
public:
    struct FileClose { void operator()(std::FILE *f) const { std::fclose(f); } };

    // Opens the CSV (truncating it) on rank 0; other ranks report nothing.
    Report(int rank, const char *csv_path, bool with_limits) : rank_(rank), with_limits_(with_limits)
    {
        if (rank_ != 0 || !csv_path || !*csv_path)
            return;
        csv_.reset(std::fopen(csv_path, "w"));
        if (!csv_) {
            std::fprintf(stderr, "weft_bench: cannot write the CSV file %s: %s\n", csv_path, std::strerror(errno));
            std::exit(1);
        }
        std::fprintf(csv_.get(), "test,size,value,unit%s\n", with_limits_ ? ",limit,fraction" : "");
    }


    // `test size value` on stdout with `decimals` digits after the point,
    // as before CSV existed; the CSV row keeps the same digits.
    void line(const char *test, size_t size, double value, int decimals, const char *unit, RowLimit limit = {})
    {
        if (rank_ != 0)
            return;
        std::printf("%s %zu %.*f\n", test, size, decimals, value);
        const bool has_limit = with_limits_ && limit.limit > 0;
        if (has_limit)
            std::printf("limit %s %zu %.*f %.3f\n", test, size, decimals, limit.limit, limit.fraction);
        if (csv_) {
            std::fprintf(csv_.get(), "%s,%zu,%.*f,%s", test, size, decimals, value, unit);
            if (has_limit)
                std::fprintf(csv_.get(), ",%.*f,%.3f", decimals, limit.limit, limit.fraction);
            else if (with_limits_)
                std::fprintf(csv_.get(), ",,");
            std::fprintf(csv_.get(), "\n");
            std::fflush(csv_.get());   // rows survive a later failure of the run
        }
    }

private:
    int rank_;
    bool with_limits_;
    std::unique_ptr<std::FILE, FileClose> csv_;
};

// The limits for the pair's transport, or nullptr (with a note from rank 0)
// where there are none. Ranks 0 and 1 call it together; rank 0 decides the
// transport, so both measure the same kind.
std::unique_ptr<bench::MachineLimits> open_limits(int me)
{
    using Kind = bench::MachineLimits::Kind;
    const std::string btl = raw_endpoint(me)->module->name;
    int kind = -1;
    if (btl == "scif")
        kind = static_cast<int>(Kind::SharedMemory);
    else if (btl.rfind("tcp/", 0) == 0)
        kind = static_cast<int>(Kind::Tcp);
    if (me == 0)
        check(weft_send(&kind, sizeof kind, 1, kTagData), "send the limits' kind");
    else
        check(weft_recv(&kind, sizeof kind, 0, kTagData, nullptr), "receive the limits' kind");
    if (kind < 0) {
        if (me == 0)
            std::fprintf(stderr, "weft_bench: --limits: no machine limit for btl %s (only scif and tcp have one)\n",
                         btl.c_str());
        return nullptr;
    }
    std::string why;
    auto limits = bench::MachineLimits::open(me, static_cast<Kind>(kind), g_iteration_cap, why);
    if (!limits && me == 0)
        std::fprintf(stderr, "weft_bench: --limits: cannot measure the limits: %s\n", why.c_str());
    if (limits && me == 0)
        std::fprintf(stderr, "weft_bench: --limits: latency: %s; bandwidth: %s\n", limits->describe_latency(),
                     limits->describe_bandwidth());
    return limits;
}

// The limit of a latency row of n bytes measuring `us`; both pair ranks call.
RowLimit latency_limit(bench::MachineLimits *limits, size_t n, double us)
{
    const double floor = limits ? limits->latency_us(n) : -1;
    return floor > 0 && us > 0 ? RowLimit{floor, floor / us} : RowLimit{};
}

// The limit of a bandwidth row of n bytes measuring `mbs`; both pair ranks call.
RowLimit bandwidth_limit(bench::MachineLimits *limits, size_t n, double mbs)
{
    const double bound = limits ? limits->bandwidth_mbs(n) : -1;
    return bound > 0 ? RowLimit{bound, mbs / bound} : RowLimit{};
}

struct Options {
    const char *csv_path;
    bool limits;
};

// Takes `--csv FILE` / `--csv=FILE` and `--limits` out of the arguments (so
// the mode stays argv[1]); WEFT_BENCH_CSV and WEFT_BENCH_LIMITS=1 are the
// fallbacks.
Options take_options(int &argc, char **argv)
{
    const char *limits_env = std::getenv("WEFT_BENCH_LIMITS");
    Options o{std::getenv("WEFT_BENCH_CSV"), limits_env && std::strcmp(limits_env, "1") == 0};
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            o.csv_path = argv[++i];
        } else if (std::strncmp(argv[i], "--csv=", 6) == 0) {
            o.csv_path = argv[i] + 6;
        } else if (std::strcmp(argv[i], "--limits") == 0) {
            o.limits = true;
        } else {
            argv[out++] = argv[i];
        }
    }
    argc = out;
    argv[argc] = nullptr;
    return o;
}

std::vector<size_t> sizes_from(const char *text)
{
    std::vector<size_t> out;
    if (text && *text) {
        std::string s(text);
        size_t pos = 0;
        while (pos <= s.size()) {
            size_t comma = s.find(',', pos);
            std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            if (!item.empty())
                out.push_back(std::strtoull(item.c_str(), nullptr, 10));
            if (comma == std::string::npos)
                break;
            pos = comma + 1;
        }
        return out;
    }
    out.push_back(0);
    for (size_t n = 1; n <= (4u << 20); n <<= 1)
        out.push_back(n);
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    const Options options = take_options(argc, argv);
    if (const char *cap = std::getenv("WEFT_BENCH_ITERS"))
        g_iteration_cap = std::atoi(cap);
    std::string mode = argc > 1 ? argv[1] : "both";
    check(weft_init(&argc, &argv), "weft_init");
    const int me = weft_rank(), np = weft_size();
    if (np < 2) {
        std::fprintf(stderr, "weft_bench: needs at least 2 ranks (weftrun -np 2 ...)\n");
        weft_finalize();
        return 1;
    }
    const auto sizes = sizes_from(argc > 2 ? argv[2] : std::getenv("WEFT_BENCH_SIZES"));
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool pair = me < 2;
    Report report(me, options.csv_path, options.limits);
    check(weft_barrier(), "barrier");
    std::unique_ptr<bench::MachineLimits> limits;
    if (options.limits && pair)
        limits = open_limits(me);
    check(weft_barrier(), "barrier");
    for (size_t n : sizes) {
        if ((mode == "lat" || mode == "both") && pair) {
            double us = latency(n, me);
            report.line("lat", n, us, 3, "us", latency_limit(limits.get(), n, us));
        }
        if (mode == "raw" && pair) {
            double us = raw_latency(n, me);
            if (us >= 0)
                report.line("raw", n, us, 3, "us", latency_limit(limits.get(), n, us));
        }
        if (mode == "latdist" && pair) {
            const Distribution d = latency_distribution(n, me);
            report.line("latmed", n, d.p50, 3, "us", latency_limit(limits.get(), n, d.p50));
            report.line("latavg", n, d.mean, 3, "us", latency_limit(limits.get(), n, d.mean));
            report.line("latp90", n, d.p90, 3, "us", latency_limit(limits.get(), n, d.p90));
            report.line("latp99", n, d.p99, 3, "us", latency_limit(limits.get(), n, d.p99));
        }
        if (Distribution d; mode == "rawdist" && pair && raw_distribution(n, me, &d)) {
            report.line("rawmed", n, d.p50, 3, "us", latency_limit(limits.get(), n, d.p50));
            report.line("rawavg", n, d.mean, 3, "us", latency_limit(limits.get(), n, d.mean));
            report.line("rawp90", n, d.p90, 3, "us", latency_limit(limits.get(), n, d.p90));
            report.line("rawp99", n, d.p99, 3, "us", latency_limit(limits.get(), n, d.p99));
        }
        if (mode == "idle" && pair) {
            double ns = idle_pass_ns(me);
            report.line("idle", 0, ns, 1, "ns");
        }
        if (mode == "rawbw" && pair) {
            double mbs = raw_bandwidth(n, me);
            report.line("rawbw", n, mbs, 2, "MB/s", bandwidth_limit(limits.get(), n, mbs));
        }
        if ((mode == "bw" || mode == "both") && pair) {
            double mbs = stream(n, me, 0, 1, bw_iters(n));
            report.line("bw", n, mbs, 2, "MB/s", bandwidth_limit(limits.get(), n, mbs));
        }
        if (mode == "rate" && pair) {
            double mbs = stream(n, me, 0, 1, capped({2000, 200}));
            report.line("rate", n, n ? mbs * 1e6 / n : 0.0, 0, "msgs/s");
        }
        if (mode == "multi") {
            const int pairs = np / 2;
            double mbs = me < 2 * pairs ? stream(n, me, me & ~1, me | 1, bw_iters(n)) : 0;
            // Rank 0 adds up what every sender measured.
            if (me % 2 == 0 && me > 0 && me < 2 * pairs)
                check(weft_send(&mbs, sizeof mbs, 0, 3), "send result");
            if (me == 0) {
                double total = mbs;
                for (int p = 1; p < pairs; ++p) {
                    double v = 0;
                    check(weft_recv(&v, sizeof v, 2 * p, 3, nullptr), "recv result");
                    total += v;
                }
                report.line("multi", n, total, 2, "MB/s");
            }
        }
        check(weft_barrier(), "barrier");
    }
    check(weft_finalize(), "weft_finalize");
    return 0;
}
