// SPDX-License-Identifier: BSD-3-Clause
#include "rte/report.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <map>
#include <tuple>
#include <vector>

#include "engine/engine.hpp"

namespace weft::rt {

namespace {

using engine::CounterView;

const char *class_name(uint32_t stored)
{
    switch (stored) {
    case WEFT_PEER_SELF + 1: return "self";
    case WEFT_PEER_SAME_NODE + 1: return "same-node";
    case WEFT_PEER_OTHER_NODE + 1: return "other-node";
    }
    return "unconnected";
}

std::string json_string(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\', out += c;
        else if (static_cast<unsigned char>(c) < 0x20) {
            char esc[8];
            std::snprintf(esc, sizeof esc, "\\u%04x", c);
            out += esc;
        } else
            out += c;
    }
    return out + "\"";
}

std::string fmt(const char *f, auto... args)
{
    char buf[512];
    std::snprintf(buf, sizeof buf, f, args...);
    return buf;
}

struct Carried {
    uint64_t msgs = 0, bytes = 0;
    uint64_t proto_bytes[WEFT_PROTO_COUNT] = {};
    // The eager limits its peers got (a module may choose one per
    // connection): the least and the most, 0 when none was recorded.
    uint64_t eager_min = 0, eager_max = 0;
    // The most any of them may send eagerly while the transport has room
    // (weft_peer_counters_t.eager_if_room), 0: none.
    uint64_t if_room_max = 0;
    void add_eager_limit(uint64_t limit, uint64_t if_room)
    {
        if_room_max = std::max(if_room_max, if_room);
        if (limit == 0)
            return;
        eager_min = eager_min ? std::min(eager_min, limit) : limit;
        eager_max = std::max(eager_max, limit);
    }
    std::string eager_limits() const
    {
        if (eager_max == 0)
            return "unknown";
        std::string s = eager_min == eager_max ? std::to_string(eager_max) + " B"
                                               : std::to_string(eager_min) + "-" + std::to_string(eager_max) + " B";
        if (if_room_max > eager_max)
            s += " (to " + std::to_string(if_room_max) + " B while the transport has room)";
        return s;
    }
};

// One fallback, retry or failure: who, what, how often, why.
struct Event {
    uint32_t rank;
    std::string where;   // "-> rank 3", "module tcp/lo"
    std::string what;
    uint64_t count;
    std::string reason;
};

} // namespace

std::string render_report(std::span<const CounterView> pages, double seconds, bool json)
{
    using U = unsigned long long;
    std::map<std::pair<std::string, std::string>, Carried> carried;   // (class, module) -> sent
    struct Slowest {
        bool found = false;
        uint32_t from = 0, to = 0;
        double mbs = 0;
        uint64_t bytes = 0, msgs = 0;
    } slowest;
    uint64_t deepest = 0;
    uint32_t deepest_rank = 0;
    std::vector<Event> events;
    for (const CounterView &v : pages) {
        const uint32_t rank = CounterView::load(v.h().rank);
        const weft_process_counters_t &pc = v.process();
        if (CounterView::load(pc.unexpected_hwm) > deepest) {
            deepest = CounterView::load(pc.unexpected_hwm);
            deepest_rank = rank;
        }
        for (uint64_t p = 0; p < v.h().peer_count; ++p) {
            const weft_peer_counters_t &c = v.peer(p);
            const auto to = static_cast<uint32_t>(p);
            const uint64_t sent = CounterView::total_bytes(c.sent);
            const uint64_t msgs = CounterView::total_msgs(c.sent);
            if (msgs > 0) {
                Carried &k = carried[{class_name(CounterView::load(c.peer_class)),
                                      v.module_name(CounterView::load(c.primary_module))}];
                k.msgs += msgs;
                k.bytes += sent;
                for (int x = 0; x < WEFT_PROTO_COUNT; ++x)
                    k.proto_bytes[x] += CounterView::load(c.sent.bytes[x]);
                k.add_eager_limit(CounterView::load(c.eager_limit), CounterView::load(c.eager_if_room));
            }
            // Measured where the data lands: from the match to the last byte.
            const uint64_t rndv = CounterView::load(c.recv.bytes[WEFT_PROTO_RNDV_RDMA]) +
                                  CounterView::load(c.recv.bytes[WEFT_PROTO_RNDV_CHUNKS]);
            const uint64_t ns = CounterView::load(c.rndv_ns);
            if (rndv > 0 && ns > 0) {
                const double mbs = static_cast<double>(rndv) * 1e3 / static_cast<double>(ns);
                if (!slowest.found || mbs < slowest.mbs)
                    slowest = {true, to, rank,
                               mbs, rndv,
                               CounterView::load(c.recv.msgs[WEFT_PROTO_RNDV_RDMA]) +
                                   CounterView::load(c.recv.msgs[WEFT_PROTO_RNDV_CHUNKS])};
            }
            const std::string peer = "-> rank " + std::to_string(p);
            if (uint64_t n = CounterView::load(c.credit_stalls))
                events.push_back({rank, peer, "eager sends went by rendezvous (eager window full)", n, ""});
            if (uint64_t n = CounterView::load(c.again))
                events.push_back({rank, peer, "frames were retried (the transport answered AGAIN)", n, ""});
            if (uint64_t n = CounterView::load(c.rdma_fallbacks))
                events.push_back({rank, "<- rank " + std::to_string(p),
                                  "rendezvous receives fell back from RDMA to chunks", n, ""});
            if (uint64_t n = CounterView::load(c.failures))
                events.push_back({rank, peer, "connection failures", n, CounterView::text(c.failure)});
        }
        for (uint64_t m = 0; m < v.h().module_count; ++m) {
            const weft_module_counters_t &mc = v.module(m);
            const std::string where = "module " + CounterView::text(mc.name);
            if (uint64_t n = CounterView::load(mc.btl.again))
                events.push_back({rank, where, "AGAIN answers (ring, socket or queue full)", n, ""});
            if (uint64_t n = CounterView::load(mc.btl.failures))
                events.push_back({rank, where, "endpoint failures", n, CounterView::text(mc.btl.last_failure)});
        }
    }

    const std::string job = pages.empty() ? "" : pages.front().job_id();
    std::string out;
    if (json) {
        out = "{\"job\":" + json_string(job) + ",\"ranks\":" + std::to_string(pages.size()) +
              fmt(",\"seconds\":%.3f", seconds) + ",\"transports\":[";
        bool first = true;
        for (const auto &[key, k] : carried) {
            out += fmt("%s{\"class\":%s,\"module\":%s,\"messages\":%llu,\"bytes\":%llu,\"eager_bytes\":%llu,"
                       "\"rndv_rdma_bytes\":%llu,\"rndv_chunks_bytes\":%llu,\"eager_limit_min\":%llu,"
                       "\"eager_limit_max\":%llu,\"eager_if_room_max\":%llu}",
                       first ? "" : ",", json_string(key.first).c_str(), json_string(key.second).c_str(), U(k.msgs),
                       U(k.bytes), U(k.proto_bytes[0]), U(k.proto_bytes[1]), U(k.proto_bytes[2]), U(k.eager_min),
                       U(k.eager_max), U(k.if_room_max));
            first = false;
        }
        out += "],\"slowest_pair\":";
        out += slowest.found ? fmt("{\"from\":%u,\"to\":%u,\"mb_per_s\":%.1f,\"bytes\":%llu,\"transfers\":%llu}",
                                   slowest.from, slowest.to, slowest.mbs, U(slowest.bytes), U(slowest.msgs))
                             : std::string("null");
        out += fmt(",\"unexpected_hwm\":{\"rank\":%u,\"depth\":%llu},\"events\":[", deepest_rank, U(deepest));
        first = true;
        for (const Event &e : events) {
            out += std::string(first ? "" : ",") + "{\"rank\":" + std::to_string(e.rank) + ",\"where\":" +
                   json_string(e.where) + ",\"what\":" + json_string(e.what) + ",\"count\":" +
                   std::to_string(e.count) + ",\"reason\":" + json_string(e.reason) + "}";
            first = false;
        }
        return out + "]}\n";
    }
    out = fmt("weft report: job %s, %zu ranks, %.2f s\n", job.c_str(), pages.size(), seconds);
    out += "  sent, by peer class and transport:\n";
    if (carried.empty())
        out += "    nothing\n";
    for (const auto &[key, k] : carried)
        out += fmt("    %-11s %-14s %12llu B in %8llu msgs (eager %llu B, rendezvous RDMA %llu B, chunks %llu B), "
                   "eager limit %s\n",
                   key.first.c_str(), key.second.c_str(), U(k.bytes), U(k.msgs), U(k.proto_bytes[0]),
                   U(k.proto_bytes[1]), U(k.proto_bytes[2]), k.eager_limits().c_str());
    if (slowest.found)
        out += fmt("  slowest pair by measured bandwidth: rank %u -> rank %u, %.1f MB/s (%llu rendezvous "
                   "transfers, %llu B)\n",
                   slowest.from, slowest.to, slowest.mbs, U(slowest.msgs), U(slowest.bytes));
    else
        out += "  slowest pair by measured bandwidth: none measured (no rendezvous transfer)\n";
    out += fmt("  deepest unexpected queue: %llu messages, at rank %u\n", U(deepest), deepest_rank);
    out += "  fallbacks, retries and failures:";
    if (events.empty())
        out += " none\n";
    else
        out += "\n";
    for (const Event &e : events)
        out += fmt("    rank %u %s: %llu %s%s%s\n", e.rank, e.where.c_str(), U(e.count), e.what.c_str(),
                   e.reason.empty() ? "" : ": ", e.reason.c_str());
    return out;
}

Status gather_report(engine::Engine &engine, const engine::CounterPage &page, const std::string &setting)
{
    const uint32_t rank = engine.rank();
    const auto mine = page.bytes();
    const uint32_t size = page.header().job_size;
    auto fail_with = [](const Status &st) { return st.code(); };
    if (rank != 0) {
        // A copy: the page goes on counting while it is sent.
        const std::vector<std::byte> copy(mine.begin(), mine.end());
        const uint64_t n = copy.size();
        if (int rc = engine.send(&n, sizeof n, 0, 0, engine::kTaggedContextReport, fail_with); rc != WEFT_SUCCESS)
            return Status(rc, "the report: sending rank " + std::to_string(rank) + "'s counters to rank 0 failed");
        if (int rc = engine.send(copy.data(), copy.size(), 0, 1, engine::kTaggedContextReport, fail_with);
            rc != WEFT_SUCCESS)
            return Status(rc, "the report: sending rank " + std::to_string(rank) + "'s counters to rank 0 failed");
        return Status::success();
    }
    std::vector<std::vector<std::byte>> copies(size);
    copies[0].assign(mine.begin(), mine.end());
    for (uint32_t r = 1; r < size; ++r) {
        uint64_t n = 0;
        Status error;
        if (int rc = engine.recv(&n, sizeof n, r, 0, engine::kTaggedContextReport, nullptr, &error); rc != WEFT_SUCCESS)
            return Status(rc, "the report: rank " + std::to_string(r) + "'s counters: " + error.message());
        if (n > (uint64_t{1} << 30))
            return Status(WEFT_ERR_BAD_PARAM, "the report: rank " + std::to_string(r) + " announced a page of " +
                                                  std::to_string(n) + " bytes");
        copies[r].resize(n);
        if (int rc = engine.recv(copies[r].data(), n, r, 1, engine::kTaggedContextReport, nullptr, &error);
            rc != WEFT_SUCCESS)
            return Status(rc, "the report: rank " + std::to_string(r) + "'s counters: " + error.message());
    }
    std::vector<CounterView> views;
    for (uint32_t r = 0; r < size; ++r) {
        CounterView v(copies[r]);
        if (v.valid())
            views.push_back(v);
    }
    const auto start = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(page.header().start_realtime_ns)));
    const double seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - start).count();
    if (setting.starts_with("json:")) {
        const std::string path = setting.substr(5);
        std::ofstream f(path);
        f << render_report(views, seconds, true);
        if (!f)
            return Status(WEFT_ERR_IO, "the report: cannot write " + path + " (rte_base_report=" + setting + ")");
        return Status::success();
    }
    const std::string text = render_report(views, seconds, false);
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    return Status::success();
}

} // namespace weft::rt
