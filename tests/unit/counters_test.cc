// SPDX-License-Identifier: BSD-3-Clause
// The counter page (runtime/engine/counters.hpp, weft/counters.h): its
// layout as a reader checks it, the memfd other processes map, and the
// engine's hooks.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "engine/counter_view.hpp"
#include "engine/counters.hpp"

namespace {

using weft::engine::CounterPage;
using weft::engine::CounterView;

TEST(CounterPage, ReadersFindEverySectionInsideTheSealedMemfd)
{
    CounterPage page(3, 5, 2, "job-x");
    CounterView view(page.bytes());
    ASSERT_TRUE(view.valid());
    EXPECT_EQ(view.h().rank, 3u);
    EXPECT_EQ(view.h().job_size, 5u);
    EXPECT_EQ(view.h().peer_count, 5u);
    EXPECT_EQ(view.h().module_count, 2u);
    EXPECT_EQ(view.h().state, WEFT_COUNTERS_RUNNING);
    EXPECT_EQ(view.job_id(), "job-x");
    EXPECT_EQ(view.peer(4).primary_module, -1);
    EXPECT_EQ(view.module(1).btl.size, sizeof(weft_btl_counters_t));
    EXPECT_EQ(view.h().peer_stride % 64, 0u);

    // Another process sees it as a sealed memfd of the page's size, which
    // it may map read-only and nobody may grow or shrink.
    ASSERT_GE(page.fd(), 0) << page.why_private();
    struct stat st;
    ASSERT_EQ(fstat(page.fd(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), view.h().page_size);
    EXPECT_NE(ftruncate(page.fd(), st.st_size * 2), 0);
    const std::string path = "/proc/self/fd/" + std::to_string(page.fd());
    int ro = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(ro, 0);
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, ro, 0);
    close(ro);
    ASSERT_NE(p, MAP_FAILED);
    weft::engine::count_sent(&page.peer(2), WEFT_PROTO_EAGER, 8);
    CounterView other(std::span(static_cast<const std::byte *>(p), static_cast<size_t>(st.st_size)));
    ASSERT_TRUE(other.valid());
    EXPECT_EQ(CounterView::load(other.peer(2).sent.bytes[WEFT_PROTO_EAGER]), 8u);
    munmap(p, static_cast<size_t>(st.st_size));
}

TEST(CounterPage, HooksCountMessagesBytesAndTheUnexpectedQueue)
{
    CounterPage page(0, 2, 0, "");
    weft_peer_counters_t *c = &page.peer(1);
    weft::engine::count_sent(c, WEFT_PROTO_RNDV_RDMA, 100000);
    weft::engine::count_sent(c, WEFT_PROTO_RNDV_RDMA, 1);
    weft::engine::count_received(c, WEFT_PROTO_EAGER, 0);
    EXPECT_EQ(c->sent.msgs[WEFT_PROTO_RNDV_RDMA], 2u);
    EXPECT_EQ(c->sent.bytes[WEFT_PROTO_RNDV_RDMA], 100001u);
    EXPECT_EQ(c->recv.msgs[WEFT_PROTO_EAGER], 1u);
    EXPECT_EQ(CounterView::total_msgs(c->sent), 2u);

    weft_process_counters_t &p = page.process();
    for (int i = 0; i < 3; ++i)
        weft::engine::count_unexpected_in(p, *c);
    weft::engine::count_unexpected_out(p);
    weft::engine::count_unexpected_in(p, *c);
    EXPECT_EQ(p.unexpected_msgs, 4u);
    EXPECT_EQ(p.unexpected_depth, 3u);
    EXPECT_EQ(p.unexpected_hwm, 3u);
    EXPECT_EQ(c->unexpected_msgs, 4u);
}

TEST(CounterView, RefusesWhatIsNotAPageOfThisVersion)
{
    CounterPage page(0, 4, 1, "");
    std::vector<std::byte> copy(page.bytes().begin(), page.bytes().end());
    EXPECT_TRUE(CounterView(copy).valid());
    EXPECT_FALSE(CounterView(std::span(copy).first(sizeof(weft_counters_header_t) - 1)).valid());
    EXPECT_FALSE(CounterView(std::span(copy).first(copy.size() / 2)).valid());   // sections outside it
    auto *h = reinterpret_cast<weft_counters_header_t *>(copy.data());
    h->version = WEFT_COUNTERS_VERSION + 1;
    EXPECT_FALSE(CounterView(copy).valid());
    h->version = WEFT_COUNTERS_VERSION;
    h->peer_count = uint64_t{1} << 40;
    EXPECT_FALSE(CounterView(copy).valid());
}

} // namespace
