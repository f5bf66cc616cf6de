// SPDX-License-Identifier: BSD-3-Clause
// The messaging engine in one process (a singleton job over btl/self):
// tagged send/recv with wildcards and truncation, the unexpected queue,
// eager and rendezvous (RDMA and chunked), and the portals API: match and
// ignore bits, ME order, thresholds and unlink, events and their order,
// ACKs, gets, lazy portals, bad handles. Everything really goes through
// the runtime, the engine's wire format and the self module.
#include <gtest/gtest.h>

#include <weft.h>

#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "engine/engine.hpp"

namespace {

class Engine : public ::testing::Test {
protected:
    void SetUp() override
    {
        for (auto &[k, v] : env_)
            ::setenv(k.c_str(), v.c_str(), 1);
        ASSERT_EQ(weft_init(nullptr, nullptr), WEFT_SUCCESS) << weft_error_message();
        ASSERT_EQ(weft_size(), 1);
    }
    void TearDown() override
    {
        EXPECT_EQ(weft_finalize(), WEFT_SUCCESS) << weft_error_message();
        for (auto &[k, v] : env_)
            ::unsetenv(k.c_str());
    }
    std::vector<std::pair<std::string, std::string>> env_ = {{"WEFT_MCA_btl", "self"}};

    static std::vector<unsigned char> pattern(size_t n, unsigned seed)
    {
        std::vector<unsigned char> v(n);
        for (size_t i = 0; i < n; ++i)
            v[i] = static_cast<unsigned char>((i * 131 + seed) & 0xff);
        return v;
    }
    static weft_md_desc_t desc(void *start, size_t len, unsigned options, weft_eq_t eq,
                               int threshold = WEFT_MD_THRESH_INF)
    {
        weft_md_desc_t d{};
        d.start = start;
        d.length = len;
        d.threshold = threshold;
        d.options = options;
        d.eq = eq;
        return d;
    }
};

TEST_F(Engine, TaggedSendRecvSmallAndLarge)
{
    for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{4096}, size_t{65536}, size_t{1} << 20,
                     size_t{4} << 20}) {
        auto out = pattern(n, 7);
        std::vector<unsigned char> in(n);
        weft_request_t r;
        ASSERT_EQ(weft_irecv(in.data(), n, 0, 5, &r), WEFT_SUCCESS) << weft_error_message();
        ASSERT_EQ(weft_send(out.data(), n, 0, 5), WEFT_SUCCESS) << weft_error_message();
        weft_msg_status_t st;
        ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS) << n;
        EXPECT_EQ(r, WEFT_REQUEST_NULL);
        EXPECT_EQ(st.count, n);
        EXPECT_EQ(st.source, 0u);
        EXPECT_EQ(st.tag, 5);
        EXPECT_EQ(in, out) << n;
    }
}

TEST_F(Engine, ContextsKeepTrafficApartAndSyncSendsWaitForTheMatch)
{
    const uint32_t a = WEFT_CONTEXT_FIRST_FREE, b = WEFT_CONTEXT_FIRST_FREE + 2;
    int x = 1, y = 2, got = 0;
    ASSERT_EQ(weft_send_ctx(&x, sizeof x, 0, 3, a), WEFT_SUCCESS) << weft_error_message();
    ASSERT_EQ(weft_send_ctx(&y, sizeof y, 0, 3, b), WEFT_SUCCESS) << weft_error_message();
    // Neither the default context nor another one sees them.
    int flag = 1;
    ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, &flag, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(weft_iprobe_ctx(WEFT_ANY_SOURCE, WEFT_ANY_TAG, b + 1, &flag, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    weft_msg_status_t st;
    weft_request_t r;
    ASSERT_EQ(weft_irecv_ctx(&got, sizeof got, 0, 3, b, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS);
    EXPECT_EQ(got, 2);
    ASSERT_EQ(weft_irecv_ctx(&got, sizeof got, WEFT_ANY_SOURCE, WEFT_ANY_TAG, a, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS);
    EXPECT_EQ(got, 1);
    EXPECT_EQ(st.tag, 3);

    // A synchronous send, even of 0 or 8 bytes, is not complete before a
    // receive matched it.
    for (size_t n : {size_t{0}, size_t{8}, size_t{100000}}) {
        auto out = pattern(n, 3);
        std::vector<unsigned char> in(n);
        weft_request_t s;
        ASSERT_EQ(weft_isend_ctx(out.data(), n, 0, 9, a, WEFT_SEND_SYNC, &s), WEFT_SUCCESS) << weft_error_message();
        int done = 1;
        for (int i = 0; i < 100; ++i) {
            ASSERT_EQ(weft_test(&s, &done, nullptr), WEFT_SUCCESS);
            ASSERT_EQ(done, 0) << n;
        }
        ASSERT_EQ(weft_irecv_ctx(in.data(), n, 0, 9, a, &r), WEFT_SUCCESS);
        ASSERT_EQ(weft_wait(&s, nullptr), WEFT_SUCCESS) << n;
        ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS) << n;
        EXPECT_EQ(st.count, n);
        EXPECT_EQ(in, out);
    }
    // The engine's own contexts are refused, with the range in the message.
    EXPECT_EQ(weft_send_ctx(&x, sizeof x, 0, 3, 1), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("reserved"), std::string::npos);
    EXPECT_EQ(weft_isend_ctx(&x, sizeof x, 0, 3, a, 0x80, &r), WEFT_ERR_BAD_PARAM);
    // weft_irecv_flags: a receive like weft_irecv_ctx's; unknown flags and
    // the engine's contexts are refused.
    ASSERT_EQ(weft_send_ctx(&x, sizeof x, 0, 4, b), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv_flags(&got, sizeof got, 0, 4, b, WEFT_RECV_READ_AT_ONCE, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS);
    EXPECT_EQ(got, 1);
    EXPECT_EQ(weft_irecv_flags(&got, sizeof got, 0, 4, b, 0x80, &r), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("unknown flags"), std::string::npos);
    EXPECT_EQ(weft_irecv_flags(&got, sizeof got, 0, 4, 1, 0, &r), WEFT_ERR_BAD_PARAM);
}

TEST_F(Engine, SendsCompleteAtOnceLeaveNoRequestWithDoneNull)
{
    const uint32_t a = WEFT_CONTEXT_FIRST_FREE;
    // Connected first: the first send to a peer waits for its connection.
    int warm = 0;
    ASSERT_EQ(weft_send_ctx(&warm, sizeof warm, 0, 4, a), WEFT_SUCCESS) << weft_error_message();
    ASSERT_EQ(weft_recv_ctx(&warm, sizeof warm, 0, 4, a, nullptr), WEFT_SUCCESS) << weft_error_message();
    // A small send to a connected peer goes out whole: no request, and the
    // message arrives.
    for (size_t n : {size_t{0}, size_t{8}, size_t{1000}}) {
        auto out = pattern(n, 5);
        std::vector<unsigned char> in(n);
        weft_request_t s = reinterpret_cast<weft_request_t>(uintptr_t{1});
        ASSERT_EQ(weft_isend_ctx(out.data(), n, 0, 4, a, WEFT_SEND_DONE_NULL, &s), WEFT_SUCCESS)
            << weft_error_message();
        EXPECT_EQ(s, WEFT_REQUEST_NULL) << n;
        // A null request is complete to every completion call.
        weft_msg_status_t st;
        EXPECT_EQ(weft_wait(&s, &st), WEFT_SUCCESS);
        EXPECT_EQ(weft_request_free(&s), WEFT_SUCCESS);
        weft_request_t r;
        ASSERT_EQ(weft_irecv_ctx(in.data(), n, 0, 4, a, &r), WEFT_SUCCESS);
        ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS);
        EXPECT_EQ(st.count, n);
        EXPECT_EQ(in, out) << n;
    }
    // A synchronous send is never complete on return: it keeps its request.
    int x = 7, got = 0;
    weft_request_t s, r;
    ASSERT_EQ(weft_isend_ctx(&x, sizeof x, 0, 6, a, WEFT_SEND_SYNC | WEFT_SEND_DONE_NULL, &s), WEFT_SUCCESS);
    ASSERT_NE(s, WEFT_REQUEST_NULL);
    int done = 1;
    ASSERT_EQ(weft_test(&s, &done, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(done, 0);
    ASSERT_EQ(weft_irecv_ctx(&got, sizeof got, 0, 6, a, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&s, nullptr), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(got, 7);
    // A send that failed at once still reports through its request.
    ASSERT_EQ(weft_isend_ctx(&x, sizeof x, 0, 6, a, WEFT_SEND_DONE_NULL | 0x80, &s), WEFT_ERR_BAD_PARAM);
}

TEST_F(Engine, ContextsPastTheShortFramesRangeStayApart)
{
    // Tagged frames carry a 24-bit context; larger ones go as Eager frames.
    // Either way a message matches only its own context, posted or not.
    const uint32_t contexts[] = {0xffffff, 0x1000000, 0x1000000 + WEFT_CONTEXT_FIRST_FREE, 0xffffffff};
    const int32_t tag = 0x7fffffff;
    for (bool posted : {false, true}) {
        std::vector<int> got(std::size(contexts), -1);
        std::vector<weft_request_t> reqs(std::size(contexts));
        if (posted) {
            for (size_t i = 0; i < std::size(contexts); ++i)
                ASSERT_EQ(weft_irecv_ctx(&got[i], sizeof(int), 0, tag, contexts[i], &reqs[i]), WEFT_SUCCESS)
                    << weft_error_message();
        }
        for (size_t i = std::size(contexts); i-- > 0;) {   // sent in the reverse order
            const int v = static_cast<int>(i) + 10;
            ASSERT_EQ(weft_send_ctx(&v, sizeof v, 0, tag, contexts[i]), WEFT_SUCCESS) << weft_error_message();
        }
        // Nothing reached the default context or the low bits of a large one.
        int flag = 1;
        ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, &flag, nullptr), WEFT_SUCCESS);
        EXPECT_EQ(flag, 0);
        ASSERT_EQ(weft_iprobe_ctx(WEFT_ANY_SOURCE, WEFT_ANY_TAG, WEFT_CONTEXT_FIRST_FREE, &flag, nullptr),
                  WEFT_SUCCESS);
        EXPECT_EQ(flag, 0);
        for (size_t i = 0; i < std::size(contexts); ++i) {
            weft_msg_status_t st;
            if (!posted) {
                ASSERT_EQ(weft_irecv_ctx(&got[i], sizeof(int), 0, tag, contexts[i], &reqs[i]), WEFT_SUCCESS);
            }
            // Bounded: a message lost to the wrong context must fail the test, not hang it.
            int done = 0;
            for (int poll = 0; poll < 100000 && !done; ++poll)
                ASSERT_EQ(weft_test(&reqs[i], &done, &st), WEFT_SUCCESS);
            ASSERT_EQ(done, 1) << "context " << std::hex << contexts[i] << ": its message never matched";
            EXPECT_EQ(got[i], static_cast<int>(i) + 10) << std::hex << contexts[i];
            EXPECT_EQ(st.tag, tag);
            EXPECT_EQ(st.count, sizeof(int));
        }
    }
}

TEST_F(Engine, UnexpectedMessagesMatchInOrderWithWildcards)
{
    // Sent before any receive is posted: they wait in the unexpected queue.
    for (int i = 0; i < 20; ++i) {
        int v = i;
        ASSERT_EQ(weft_send(&v, sizeof v, 0, i % 2 ? 9 : 4), WEFT_SUCCESS);
    }
    std::vector<unsigned char> big = pattern(3 << 20, 3);
    weft_request_t sreq;
    ASSERT_EQ(weft_isend(big.data(), big.size(), 0, 77, &sreq), WEFT_SUCCESS);
    // Tag 9 first, in send order; then ANY_TAG takes the oldest left (tag 4).
    for (int i = 1; i < 20; i += 2) {
        int v = -1;
        weft_msg_status_t st;
        ASSERT_EQ(weft_recv(&v, sizeof v, 0, 9, &st), WEFT_SUCCESS);
        EXPECT_EQ(v, i);
    }
    for (int i = 0; i < 20; i += 2) {
        int v = -1;
        weft_msg_status_t st;
        ASSERT_EQ(weft_recv(&v, sizeof v, WEFT_ANY_SOURCE, WEFT_ANY_TAG, &st), WEFT_SUCCESS);
        EXPECT_EQ(v, i);
        EXPECT_EQ(st.tag, 4);
    }
    std::vector<unsigned char> got(big.size());
    weft_msg_status_t st;
    ASSERT_EQ(weft_recv(got.data(), got.size(), WEFT_ANY_SOURCE, WEFT_ANY_TAG, &st), WEFT_SUCCESS);
    EXPECT_EQ(st.tag, 77);
    EXPECT_EQ(got, big);
    ASSERT_EQ(weft_wait(&sreq, nullptr), WEFT_SUCCESS);
}

TEST_F(Engine, PostedReceivesMatchInPostingOrder)
{
    // Posted before anything is sent: each arrival takes the oldest posted
    // receive that matches it, wildcard or not, eager or rendezvous.
    int any = -1, five_a = -1, five_b = -1, seven = -1;
    std::vector<unsigned char> big_in(2 << 20);
    weft_request_t r_any, r_five_a, r_big, r_five_b;
    ASSERT_EQ(weft_irecv(&any, sizeof any, WEFT_ANY_SOURCE, WEFT_ANY_TAG, &r_any), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv(&five_a, sizeof five_a, 0, 5, &r_five_a), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv(big_in.data(), big_in.size(), WEFT_ANY_SOURCE, 6, &r_big), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv(&five_b, sizeof five_b, 0, 5, &r_five_b), WEFT_SUCCESS);
    for (int v : {50, 51, 52}) {
        ASSERT_EQ(weft_send(&v, sizeof v, 0, 5), WEFT_SUCCESS);
    }
    int v7 = 70;
    ASSERT_EQ(weft_send(&v7, sizeof v7, 0, 7), WEFT_SUCCESS);   // nothing posted wants it yet
    auto big_out = pattern(big_in.size(), 9);
    ASSERT_EQ(weft_send(big_out.data(), big_out.size(), 0, 6), WEFT_SUCCESS);
    weft_msg_status_t st;
    ASSERT_EQ(weft_wait(&r_any, &st), WEFT_SUCCESS);
    EXPECT_EQ(any, 50);
    EXPECT_EQ(st.tag, 5);
    ASSERT_EQ(weft_wait(&r_five_a, &st), WEFT_SUCCESS);
    EXPECT_EQ(five_a, 51);
    ASSERT_EQ(weft_wait(&r_five_b, &st), WEFT_SUCCESS);
    EXPECT_EQ(five_b, 52);
    ASSERT_EQ(weft_wait(&r_big, &st), WEFT_SUCCESS);
    EXPECT_EQ(st.count, big_out.size());
    EXPECT_EQ(big_in, big_out);
    ASSERT_EQ(weft_recv(&seven, sizeof seven, 0, 7, &st), WEFT_SUCCESS);
    EXPECT_EQ(seven, 70);

    // A posted receive that is dropped by its request leaves the list: the
    // next message goes to the receive posted after it.
    int dropped = -1, kept = -1;
    weft_request_t r_drop, r_keep;
    ASSERT_EQ(weft_irecv(&dropped, sizeof dropped, 0, 3, &r_drop), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv(&kept, sizeof kept, 0, 3, &r_keep), WEFT_SUCCESS);
    ASSERT_EQ(weft_request_free(&r_drop), WEFT_SUCCESS);
    EXPECT_EQ(r_drop, WEFT_REQUEST_NULL);
    int v3 = 33;
    ASSERT_EQ(weft_send(&v3, sizeof v3, 0, 3), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r_keep, &st), WEFT_SUCCESS);
    EXPECT_EQ(kept, 33);
    EXPECT_EQ(dropped, -1);
}

TEST_F(Engine, CancelProbeAndFreedSends)
{
    // A posted receive canceled before anything matched it.
    int never = -1;
    weft_request_t r;
    ASSERT_EQ(weft_irecv(&never, sizeof never, 0, 11, &r), WEFT_SUCCESS);
    ASSERT_EQ(weft_cancel(&r), WEFT_SUCCESS);
    weft_msg_status_t st;
    EXPECT_EQ(weft_wait(&r, &st), WEFT_ERR_CANCELED);
    EXPECT_EQ(st.error, WEFT_ERR_CANCELED);
    EXPECT_EQ(st.count, 0u);

    // Probe sees a waiting message (eager and rendezvous) without taking it.
    int flag = 1;
    ASSERT_EQ(weft_iprobe(0, 11, &flag, &st), WEFT_SUCCESS);
    EXPECT_EQ(flag, 0);
    int v = 42;
    ASSERT_EQ(weft_send(&v, sizeof v, 0, 11), WEFT_SUCCESS);
    auto big = pattern(1 << 20, 4);
    weft_request_t big_send;
    ASSERT_EQ(weft_isend(big.data(), big.size(), 0, 12, &big_send), WEFT_SUCCESS);
    ASSERT_EQ(weft_request_free(&big_send), WEFT_SUCCESS);   // it completes on its own
    EXPECT_EQ(big_send, WEFT_REQUEST_NULL);
    ASSERT_EQ(weft_iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, &flag, &st), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(st.tag, 11);
    EXPECT_EQ(st.count, sizeof v);
    ASSERT_EQ(weft_probe(0, 12, &st), WEFT_SUCCESS);
    EXPECT_EQ(st.count, big.size());
    // A canceled receive never takes a message: the message stays for the next.
    ASSERT_EQ(weft_irecv(&never, sizeof never, 0, 11, &r), WEFT_SUCCESS);
    // Matched at once from the unexpected queue, so the cancel is too late.
    ASSERT_EQ(weft_cancel(&r), WEFT_SUCCESS);
    ASSERT_EQ(weft_wait(&r, &st), WEFT_SUCCESS);
    EXPECT_EQ(never, 42);
    std::vector<unsigned char> got(big.size());
    ASSERT_EQ(weft_recv(got.data(), got.size(), 0, 12, &st), WEFT_SUCCESS);
    EXPECT_EQ(got, big);
    EXPECT_EQ(weft_cancel(nullptr), WEFT_ERR_BAD_PARAM);
}

TEST_F(Engine, TaggedPortalTakesNoMatchEntries)
{
    weft_me_t me;
    EXPECT_EQ(weft_me_attach(WEFT_PT_TAGGED, WEFT_RANK_ANY, 0, 0, WEFT_UNLINK, WEFT_INS_AFTER, &me),
              WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("tagged messaging"), std::string::npos)
        << weft_error_message();
}

TEST_F(Engine, ShortBufferIsTruncatedAndSaysSo)
{
    for (size_t n : {size_t{100}, size_t{2} << 20}) {
        auto out = pattern(n, 1);
        std::vector<unsigned char> in(10);
        weft_request_t r;
        ASSERT_EQ(weft_irecv(in.data(), in.size(), 0, 1, &r), WEFT_SUCCESS);
        ASSERT_EQ(weft_send(out.data(), n, 0, 1), WEFT_SUCCESS);
        weft_msg_status_t st;
        EXPECT_EQ(weft_wait(&r, &st), WEFT_ERR_TRUNCATED);
        EXPECT_EQ(st.error, WEFT_ERR_TRUNCATED);
        EXPECT_EQ(st.count, 10u);
        EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin()));
    }
}

TEST_F(Engine, BlockingReceiveTruncatesMatchesContextsAndChecksArguments)
{
    // weft_recv / weft_recv_ctx keep their request on the stack: the same
    // semantics as irecv + wait, eager and rendezvous sizes alike.
    for (size_t n : {size_t{100}, size_t{2} << 20}) {
        auto out = pattern(n, 4);
        weft_request_t s;   // a rendezvous send to self completes once received
        ASSERT_EQ(weft_isend(out.data(), n, 0, 5, &s), WEFT_SUCCESS) << weft_error_message();
        std::vector<unsigned char> in(10);
        weft_msg_status_t st{};
        EXPECT_EQ(weft_recv(in.data(), in.size(), 0, 5, &st), WEFT_ERR_TRUNCATED) << n;
        ASSERT_EQ(weft_wait(&s, nullptr), WEFT_SUCCESS) << n;
        EXPECT_NE(std::string(weft_error_message()).find("longer than the buffer"), std::string::npos);
        EXPECT_EQ(st.error, WEFT_ERR_TRUNCATED);
        EXPECT_EQ(st.count, 10u);
        EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin()));
    }
    const uint32_t a = WEFT_CONTEXT_FIRST_FREE, b = WEFT_CONTEXT_FIRST_FREE + 1;
    int x = 11, y = 22, got = 0;
    ASSERT_EQ(weft_send_ctx(&x, sizeof x, 0, 3, a), WEFT_SUCCESS) << weft_error_message();
    ASSERT_EQ(weft_send_ctx(&y, sizeof y, 0, 3, b), WEFT_SUCCESS) << weft_error_message();
    weft_msg_status_t st{};
    ASSERT_EQ(weft_recv_ctx(&got, sizeof got, WEFT_ANY_SOURCE, WEFT_ANY_TAG, b, &st), WEFT_SUCCESS);
    EXPECT_EQ(got, 22);   // context b's message, although a's came first
    EXPECT_EQ(st.tag, 3);
    EXPECT_EQ(st.count, sizeof got);
    ASSERT_EQ(weft_recv_ctx(&got, sizeof got, 0, 3, a, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(got, 11);
    // Arguments are checked before anything is posted.
    EXPECT_EQ(weft_recv_ctx(&got, sizeof got, 0, 3, 1, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("reserved"), std::string::npos);
    EXPECT_EQ(weft_recv(&got, sizeof got, 7, 3, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("not in the job"), std::string::npos);
    EXPECT_EQ(weft_recv(&got, sizeof got, 0, -4, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("tag -4"), std::string::npos);
    EXPECT_EQ(weft_recv(nullptr, 4, 0, 3, nullptr), WEFT_ERR_BAD_PARAM);
    // Nothing stayed posted: a later message goes to a later receive.
    ASSERT_EQ(weft_send(&x, sizeof x, 0, 3), WEFT_SUCCESS);
    int flag = 0;
    ASSERT_EQ(weft_iprobe(0, 3, &flag, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(flag, 1);
    ASSERT_EQ(weft_recv(&got, sizeof got, 0, 3, nullptr), WEFT_SUCCESS);
}

TEST_F(Engine, TestWaitanyWaitall)
{
    int a = 0, b = 0;
    weft_request_t reqs[2];
    ASSERT_EQ(weft_irecv(&a, sizeof a, 0, 1, &reqs[0]), WEFT_SUCCESS);
    ASSERT_EQ(weft_irecv(&b, sizeof b, 0, 2, &reqs[1]), WEFT_SUCCESS);
    int done = 1;
    ASSERT_EQ(weft_test(&reqs[0], &done, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(done, 0);
    int two = 2;
    ASSERT_EQ(weft_send(&two, sizeof two, 0, 2), WEFT_SUCCESS);
    int index = -1;
    weft_msg_status_t st;
    ASSERT_EQ(weft_waitany(2, reqs, &index, &st), WEFT_SUCCESS);
    EXPECT_EQ(index, 1);
    EXPECT_EQ(b, 2);
    EXPECT_EQ(reqs[1], WEFT_REQUEST_NULL);
    int one = 1;
    ASSERT_EQ(weft_send(&one, sizeof one, 0, 1), WEFT_SUCCESS);
    ASSERT_EQ(weft_waitall(2, reqs, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(a, 1);
}

TEST_F(Engine, BadArgumentsAreErrorsWithMessages)
{
    weft_request_t r;
    EXPECT_EQ(weft_isend("x", 1, 0, -3, &r), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("tag -3"), std::string::npos);
    EXPECT_EQ(weft_isend("x", 1, 5, 0, &r), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("not in the job"), std::string::npos);
    EXPECT_EQ(weft_isend_ctx("x", 1, 0, 0, WEFT_CONTEXT_FIRST_FREE, 0, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("req is NULL"), std::string::npos);
    char in[4];
    EXPECT_EQ(weft_irecv(in, sizeof in, 9, 0, &r), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("source 9 is not in the job"), std::string::npos);
    EXPECT_EQ(weft_irecv_ctx(nullptr, 4, 0, -7, WEFT_CONTEXT_FIRST_FREE, &r), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("tag -7"), std::string::npos);
    EXPECT_EQ(weft_irecv(in, sizeof in, 0, 0, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("req is NULL"), std::string::npos);
    weft_request_t forged = reinterpret_cast<weft_request_t>(0x0400000100000001ull);
    EXPECT_EQ(weft_wait(&forged, nullptr), WEFT_ERR_BAD_PARAM);
    weft_md_t md{0x0300000500000009ull};
    EXPECT_EQ(weft_put(md, WEFT_NOACK_REQ, 0, 1, 0, 0, 0), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("stale or invalid"), std::string::npos);
    weft_me_t me;
    EXPECT_EQ(weft_me_attach(WEFT_MAX_PORTALS, WEFT_RANK_ANY, 0, 0, WEFT_UNLINK, WEFT_INS_AFTER, &me),
              WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(weft_eq_alloc(0, nullptr, nullptr), WEFT_ERR_BAD_PARAM);
}

TEST_F(Engine, AStaleRequestHandleIsRefusedAfterItsSlotIsReused)
{
    // A completed send frees its slot; the next request takes that slot
    // (last freed, first reused) under a new generation. The old handle
    // must name nothing, not the new request.
    int x = 1;
    weft_request_t first;
    ASSERT_EQ(weft_isend(&x, sizeof x, 0, 5, &first), WEFT_SUCCESS);
    const weft_request_t stale = first;
    ASSERT_EQ(weft_wait(&first, nullptr), WEFT_SUCCESS);
    int y = 0;
    weft_request_t second;
    ASSERT_EQ(weft_irecv(&y, sizeof y, 0, 6, &second), WEFT_SUCCESS);   // nothing sent with tag 6 yet
    EXPECT_EQ(reinterpret_cast<uint64_t>(second) & 0xffffffffu, reinterpret_cast<uint64_t>(stale) & 0xffffffffu)
        << "the receive should reuse the send's slot";
    EXPECT_NE(second, stale);
    weft_request_t h = stale;
    int done = 1;
    EXPECT_EQ(weft_wait(&h, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("weft_wait: not a request (stale"), std::string::npos);
    EXPECT_EQ(weft_test(&h, &done, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(weft_cancel(&h), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(weft_request_free(&h), WEFT_ERR_BAD_PARAM);
    EXPECT_EQ(h, stale);
    // weft_waitall names itself, and refuses the stale handle without
    // touching the live one beside it.
    weft_request_t both[2] = {stale, second};
    EXPECT_EQ(weft_waitall(1, both, nullptr), WEFT_ERR_BAD_PARAM);
    EXPECT_NE(std::string(weft_error_message()).find("weft_waitall: not a request (stale"), std::string::npos);
    // The receive the slot now holds is untouched: still pending, then done.
    ASSERT_EQ(weft_test(&second, &done, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(done, 0);
    int z = 7;
    ASSERT_EQ(weft_send(&z, sizeof z, 0, 6), WEFT_SUCCESS);
    weft_msg_status_t st;
    ASSERT_EQ(weft_wait(&second, &st), WEFT_SUCCESS);
    EXPECT_EQ(y, 7);
    EXPECT_EQ(st.tag, 6);
    ASSERT_EQ(weft_recv(&y, sizeof y, 0, 5, nullptr), WEFT_SUCCESS);   // the first send's message
    EXPECT_EQ(y, 1);
}

class EngineChunked : public Engine {
protected:
    EngineChunked() { env_.push_back({"WEFT_MCA_engine_base_rndv_rdma", "false"}); }
};

TEST_F(EngineChunked, RendezvousByChunks)
{
    for (size_t n : {size_t{100000}, size_t{1} << 20, (size_t{5} << 20) + 3}) {
        auto out = pattern(n, 11);
        std::vector<unsigned char> in(n);
        weft_request_t r, s;
        ASSERT_EQ(weft_isend(out.data(), n, 0, 3, &s), WEFT_SUCCESS);
        ASSERT_EQ(weft_irecv(in.data(), n, 0, 3, &r), WEFT_SUCCESS);
        ASSERT_EQ(weft_wait(&r, nullptr), WEFT_SUCCESS);
        ASSERT_EQ(weft_wait(&s, nullptr), WEFT_SUCCESS);
        EXPECT_EQ(in, out);
    }
}

class Portals : public Engine {
protected:
    void SetUp() override
    {
        Engine::SetUp();
        ASSERT_EQ(weft_eq_alloc(64, nullptr, &eq_), WEFT_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(weft_eq_free(eq_), WEFT_SUCCESS);
        Engine::TearDown();
    }
    weft_event_t next(int timeout_ms = 10000)
    {
        weft_event_t ev{};
        int rc = weft_eq_poll(&eq_, 1, timeout_ms, &ev, nullptr);
        EXPECT_EQ(rc, WEFT_SUCCESS) << weft_error_message();
        return ev;
    }
    // Puts `data` to (portal, bits) of rank 0 with a bound MD reporting to eq_.
    void put(std::vector<unsigned char> &data, unsigned portal, uint64_t bits, weft_ack_req_t ack,
             size_t offset = 0, uint64_t hdr = 0)
    {
        weft_md_t md;
        auto d = desc(data.data(), data.size(), 0, eq_, 1);
        ASSERT_EQ(weft_md_bind(&d, WEFT_UNLINK, &md), WEFT_SUCCESS);
        ASSERT_EQ(weft_put(md, ack, 0, portal, bits, offset, hdr), WEFT_SUCCESS) << weft_error_message();
    }
    weft_eq_t eq_{};
};

TEST_F(Portals, MatchBitsIgnoreBitsAndListOrder)
{
    std::vector<unsigned char> a(16), b(16), c(16);
    weft_me_t me_a, me_b, me_c;
    // b: exact bits 0x12; a: any bits in the low byte of 0x1??; c (inserted
    // before a): only 0x100.
    ASSERT_EQ(weft_me_attach(4, WEFT_RANK_ANY, 0x12, 0, WEFT_RETAIN, WEFT_INS_AFTER, &me_b), WEFT_SUCCESS);
    ASSERT_EQ(weft_me_attach(4, 0, 0x100, 0xff, WEFT_RETAIN, WEFT_INS_AFTER, &me_a), WEFT_SUCCESS);
    ASSERT_EQ(weft_me_insert(me_a, WEFT_RANK_ANY, 0x100, 0, WEFT_RETAIN, WEFT_INS_BEFORE, &me_c), WEFT_SUCCESS);
    weft_md_t md_a, md_b, md_c;
    auto da = desc(a.data(), a.size(), WEFT_MD_OP_PUT | WEFT_MD_MANAGE_REMOTE, eq_);
    auto db = desc(b.data(), b.size(), WEFT_MD_OP_PUT | WEFT_MD_MANAGE_REMOTE, eq_);
    auto dc = desc(c.data(), c.size(), WEFT_MD_OP_PUT | WEFT_MD_MANAGE_REMOTE, eq_);
    ASSERT_EQ(weft_md_attach(me_a, &da, WEFT_RETAIN, &md_a), WEFT_SUCCESS);
    ASSERT_EQ(weft_md_attach(me_b, &db, WEFT_RETAIN, &md_b), WEFT_SUCCESS);
    ASSERT_EQ(weft_md_attach(me_c, &dc, WEFT_RETAIN, &md_c), WEFT_SUCCESS);

    std::vector<unsigned char> x = {1, 2, 3, 4};
    put(x, 4, 0x1ab, WEFT_NOACK_REQ, 2);   // a (ignore bits)
    put(x, 4, 0x100, WEFT_NOACK_REQ, 0);   // c comes before a
    put(x, 4, 0x12, WEFT_NOACK_REQ, 8);    // b
    int puts = 0, sends = 0;
    std::vector<weft_event_t> put_events;
    while (puts < 3 || sends < 3) {
        weft_event_t ev = next();
        if (ev.type == WEFT_EVENT_PUT) {
            ++puts;
            put_events.push_back(ev);
        } else if (ev.type == WEFT_EVENT_SEND) {
            ++sends;
            EXPECT_EQ(ev.status, WEFT_SUCCESS);
        } else {
            ADD_FAILURE() << "unexpected event " << ev.type;
            break;
        }
    }
    ASSERT_EQ(put_events.size(), 3u);
    EXPECT_EQ(put_events[0].md.cookie, md_a.cookie);
    EXPECT_EQ(put_events[0].offset, 2u);
    EXPECT_EQ(put_events[0].match_bits, 0x1abu);
    EXPECT_EQ(put_events[1].md.cookie, md_c.cookie);
    EXPECT_EQ(put_events[2].md.cookie, md_b.cookie);
    EXPECT_EQ(put_events[2].mlength, 4u);
    EXPECT_EQ(a[2], 1);
    EXPECT_EQ(a[5], 4);
    EXPECT_EQ(c[0], 1);
    EXPECT_EQ(b[8], 1);
    EXPECT_LT(put_events[0].sequence, put_events[1].sequence);
    EXPECT_EQ(weft_me_unlink(me_a), WEFT_SUCCESS);
    EXPECT_EQ(weft_me_unlink(me_a), WEFT_ERR_BAD_PARAM);   // stale now
}

TEST_F(Portals, ThresholdUnlinksAndNoMatchIsAcked)
{
    std::vector<unsigned char> buf(8);
    weft_me_t me;
    ASSERT_EQ(weft_me_attach(7, WEFT_RANK_ANY, 1, 0, WEFT_UNLINK, WEFT_INS_AFTER, &me), WEFT_SUCCESS);
    auto d = desc(buf.data(), buf.size(), WEFT_MD_OP_PUT | WEFT_MD_TRUNCATE, eq_, 2);
    weft_md_t md;
    ASSERT_EQ(weft_md_attach(me, &d, WEFT_UNLINK, &md), WEFT_SUCCESS);
    std::vector<unsigned char> x = {9, 9, 9, 9, 9, 9};
    put(x, 7, 1, WEFT_ACK_REQ);   // lands at local offset 0
    put(x, 7, 1, WEFT_ACK_REQ);   // local offset 6: truncated to 2; MD used up and unlinked
    put(x, 7, 1, WEFT_ACK_REQ);   // nothing matches: dropped, ACK says so
    std::vector<weft_event_t> puts, acks;
    while (puts.size() < 2 || acks.size() < 3) {
        weft_event_t ev = next();
        if (ev.type == WEFT_EVENT_PUT)
            puts.push_back(ev);
        else if (ev.type == WEFT_EVENT_ACK)
            acks.push_back(ev);
    }
    EXPECT_EQ(puts[0].mlength, 6u);
    EXPECT_EQ(puts[1].mlength, 2u);
    EXPECT_EQ(puts[1].rlength, 6u);
    EXPECT_EQ(puts[1].offset, 6u);
    EXPECT_EQ(puts[0].unlinked, 0);
    EXPECT_EQ(puts[1].unlinked, 1);
    EXPECT_EQ(acks[0].status, WEFT_SUCCESS);
    EXPECT_EQ(acks[0].mlength, 6u);
    EXPECT_EQ(acks[1].mlength, 2u);
    EXPECT_EQ(acks[2].status, WEFT_ERR_NO_MATCH);
    EXPECT_EQ(weft_md_unlink(md), WEFT_ERR_BAD_PARAM);   // already gone
    EXPECT_EQ(weft_me_unlink(me), WEFT_ERR_BAD_PARAM);
}

TEST_F(Portals, HdrDataAckDisableAndExplicitUnlinkEvent)
{
    std::vector<unsigned char> buf(64);
    weft_me_t me;
    ASSERT_EQ(weft_me_attach(2, WEFT_RANK_ANY, 0, ~0ull, WEFT_RETAIN, WEFT_INS_AFTER, &me), WEFT_SUCCESS);
    auto d = desc(buf.data(), buf.size(), WEFT_MD_OP_PUT | WEFT_MD_ACK_DISABLE, eq_);
    d.user_ptr = &buf;
    weft_md_t md;
    ASSERT_EQ(weft_md_attach(me, &d, WEFT_RETAIN, &md), WEFT_SUCCESS);
    std::vector<unsigned char> x(5, 1);
    put(x, 2, 0xabc, WEFT_ACK_REQ, 0, 0xfeedULL);
    weft_event_t ev{};
    bool put_seen = false;
    for (int i = 0; i < 2; ++i) {
        ev = next();
        if (ev.type == WEFT_EVENT_PUT) {
            put_seen = true;
            EXPECT_EQ(ev.hdr_data, 0xfeedULL);
            EXPECT_EQ(ev.md_user_ptr, &buf);
        }
        EXPECT_NE(ev.type, WEFT_EVENT_ACK);   // ACKs are disabled by the target MD
    }
    EXPECT_TRUE(put_seen);
    ASSERT_EQ(weft_md_unlink(md), WEFT_SUCCESS);
    ev = next();
    EXPECT_EQ(ev.type, WEFT_EVENT_UNLINK);
    EXPECT_EQ(ev.unlinked, 1);
    weft_event_t none;
    EXPECT_EQ(weft_eq_poll(&eq_, 1, 0, &none, nullptr), WEFT_ERR_TIMEOUT);
}

TEST_F(Portals, GetReadsAndReplies)
{
    auto src = pattern(300000, 5);
    weft_me_t me;
    ASSERT_EQ(weft_me_attach(9, WEFT_RANK_ANY, 42, 0, WEFT_RETAIN, WEFT_INS_AFTER, &me), WEFT_SUCCESS);
    auto d = desc(src.data(), src.size(), WEFT_MD_OP_GET | WEFT_MD_MANAGE_REMOTE, eq_);
    weft_md_t md;
    ASSERT_EQ(weft_md_attach(me, &d, WEFT_RETAIN, &md), WEFT_SUCCESS);
    std::vector<unsigned char> dst(200000);
    auto dd = desc(dst.data(), dst.size(), 0, eq_, 1);
    weft_md_t sink;
    ASSERT_EQ(weft_md_bind(&dd, WEFT_UNLINK, &sink), WEFT_SUCCESS);
    ASSERT_EQ(weft_get(sink, 0, 9, 42, 1000), WEFT_SUCCESS);
    bool got = false, reply = false;
    while (!got || !reply) {
        weft_event_t ev = next();
        if (ev.type == WEFT_EVENT_GET) {
            got = true;
            EXPECT_EQ(ev.mlength, 200000u);
            EXPECT_EQ(ev.offset, 1000u);
        } else if (ev.type == WEFT_EVENT_REPLY) {
            reply = true;
            EXPECT_EQ(ev.status, WEFT_SUCCESS);
            EXPECT_EQ(ev.mlength, 200000u);
        }
    }
    EXPECT_TRUE(std::equal(dst.begin(), dst.end(), src.begin() + 1000));
    // A get that matches nothing completes with NO_MATCH.
    auto d2 = desc(dst.data(), 8, 0, eq_, 1);
    ASSERT_EQ(weft_md_bind(&d2, WEFT_UNLINK, &sink), WEFT_SUCCESS);
    ASSERT_EQ(weft_get(sink, 0, 9, 43, 0), WEFT_SUCCESS);
    weft_event_t ev = next();
    EXPECT_EQ(ev.type, WEFT_EVENT_REPLY);
    EXPECT_EQ(ev.status, WEFT_ERR_NO_MATCH);
}

TEST_F(Portals, LazyPortalKeepsUnmatchedPutsUntilAnMeArrives)
{
    ASSERT_EQ(weft_portal_set_lazy(11, 1), WEFT_SUCCESS);
    std::vector<unsigned char> x = {5, 6, 7};
    put(x, 11, 3, WEFT_NOACK_REQ);
    weft_event_t ev = next();
    EXPECT_EQ(ev.type, WEFT_EVENT_SEND);
    weft_event_t none;
    EXPECT_EQ(weft_eq_poll(&eq_, 1, 0, &none, nullptr), WEFT_ERR_TIMEOUT);
    std::vector<unsigned char> buf(3);
    weft_me_t me;
    ASSERT_EQ(weft_me_attach(11, WEFT_RANK_ANY, 3, 0, WEFT_UNLINK, WEFT_INS_AFTER, &me), WEFT_SUCCESS);
    auto d = desc(buf.data(), buf.size(), WEFT_MD_OP_PUT, eq_, 1);
    ASSERT_EQ(weft_md_attach(me, &d, WEFT_UNLINK, nullptr), WEFT_SUCCESS);
    ev = next(0);
    EXPECT_EQ(ev.type, WEFT_EVENT_PUT);
    EXPECT_EQ(buf, x);
    EXPECT_EQ(weft_portal_set_lazy(WEFT_PT_TAGGED, 0), WEFT_ERR_BAD_PARAM);
}

TEST_F(Portals, FullEventQueueReportsOverflow)
{
    weft_eq_t small;
    ASSERT_EQ(weft_eq_alloc(2, nullptr, &small), WEFT_SUCCESS);
    std::vector<unsigned char> x = {1};
    for (int i = 0; i < 4; ++i) {
        weft_md_t md;
        auto d = desc(x.data(), 1, 0, small, 1);
        ASSERT_EQ(weft_md_bind(&d, WEFT_UNLINK, &md), WEFT_SUCCESS);
        ASSERT_EQ(weft_put(md, WEFT_NOACK_REQ, 0, 20, 0, 0, 0), WEFT_SUCCESS);
    }
    weft_event_t ev;
    EXPECT_EQ(weft_eq_poll(&small, 1, 10000, &ev, nullptr), WEFT_ERR_OVERFLOW);
    EXPECT_EQ(ev.type, WEFT_EVENT_SEND);
    EXPECT_EQ(weft_eq_poll(&small, 1, 0, &ev, nullptr), WEFT_SUCCESS);
    EXPECT_EQ(weft_eq_poll(&small, 1, 0, &ev, nullptr), WEFT_ERR_TIMEOUT);
    EXPECT_EQ(weft_eq_free(small), WEFT_SUCCESS);
}

TEST_F(Engine, BarrierOfOneAndGetId)
{
    EXPECT_EQ(weft_barrier(), WEFT_SUCCESS);
    uint32_t id = 99;
    EXPECT_EQ(weft_get_id(&id), WEFT_SUCCESS);
    EXPECT_EQ(id, 0u);
}

} // namespace

TEST(EngineRequest, ResetRestoresEveryInitialValue)
{
    // The pool resets requests with Request::reset(), not with Request{}:
    // a field added to one and not the other would leak from a previous use.
    weft::engine::Request fresh, used;
    used.handle = 7;
    used.done = used.is_recv = used.posted = used.orphaned = used.landing = used.reads_at_once = true;
    used.status = weft_msg_status_t{3, 4, 5, 6};
    used.md = reinterpret_cast<weft::engine::Md *>(&used);
    used.buf = &used;
    used.len = 9;
    used.source = 2;
    used.bits = used.ignore = 1;
    used.prev = used.next = &used;
    used.reset();
    EXPECT_EQ(used.handle, fresh.handle);
    EXPECT_EQ(used.done, fresh.done);
    EXPECT_EQ(used.is_recv, fresh.is_recv);
    EXPECT_EQ(used.posted, fresh.posted);
    EXPECT_EQ(used.orphaned, fresh.orphaned);
    EXPECT_EQ(used.landing, fresh.landing);
    EXPECT_EQ(used.reads_at_once, fresh.reads_at_once);
    EXPECT_EQ(used.status.source, fresh.status.source);
    EXPECT_EQ(used.status.tag, fresh.status.tag);
    EXPECT_EQ(used.status.count, fresh.status.count);
    EXPECT_EQ(used.status.error, fresh.status.error);
    EXPECT_EQ(used.md, fresh.md);
    EXPECT_EQ(used.buf, fresh.buf);
    EXPECT_EQ(used.len, fresh.len);
    EXPECT_EQ(used.source, fresh.source);
    EXPECT_EQ(used.bits, fresh.bits);
    EXPECT_EQ(used.ignore, fresh.ignore);
    EXPECT_EQ(used.prev, fresh.prev);
    EXPECT_EQ(used.next, fresh.next);
    // Every field is listed above: a new one changes the size and fails here
    // until it is added to reset() and to this test.
    EXPECT_EQ(sizeof(weft::engine::Request), 104u);
}

namespace {
struct PoolItem {
    uint64_t handle = 0;
    int value = 0;
};
using ItemPool = weft::engine::Pool<PoolItem, 9>;
} // namespace

TEST(EnginePool, HandlesOfFreedSlotsAreRefusedAndReuseBumpsTheGeneration)
{
    ItemPool pool;
    uint64_t h1 = 0, h2 = 0;
    PoolItem *a = pool.alloc(&h1);
    EXPECT_EQ(a->handle, h1);
    EXPECT_EQ(pool.get(h1), a);
    pool.free(a);
    EXPECT_EQ(pool.get(h1), nullptr);
    EXPECT_EQ(pool.live(), 0u);
    PoolItem *b = pool.alloc(&h2);
    EXPECT_EQ(b, a) << "the slot freed last is reused first";
    EXPECT_NE(h2, h1);
    EXPECT_EQ(h2 & 0xffffffffu, h1 & 0xffffffffu);
    EXPECT_EQ(pool.get(h1), nullptr) << "a stale handle names the slot's new object";
    EXPECT_EQ(pool.get(h2), b);
    // Handles of another kind, without a slot or past the slots made.
    EXPECT_EQ(pool.get(0), nullptr);
    EXPECT_EQ(pool.get(h2 & ~(uint64_t{0xff} << 56)), nullptr);
    EXPECT_EQ(pool.get(h2 & ~uint64_t{0xffffffffu}), nullptr);
    EXPECT_EQ(pool.get(h2 + 1), nullptr);
    EXPECT_EQ(pool.get(h2 | 0xffffffffu), nullptr);
}

TEST(EnginePool, FreeIgnoresWhatIsNotALiveObjectOfThePool)
{
    ItemPool pool;
    uint64_t h = 0;
    PoolItem *a = pool.alloc(&h);
    PoolItem copy = *a;   // same handle, another address
    PoolItem none;        // never allocated: handle 0
    pool.free(&copy);
    pool.free(&none);
    pool.free(nullptr);
    EXPECT_EQ(pool.get(h), a);
    EXPECT_EQ(pool.live(), 1u);
    pool.free(a);
    pool.free(a);   // twice: the second is ignored, the free list stays sound
    EXPECT_EQ(pool.live(), 0u);
    uint64_t h1 = 0, h2 = 0;
    PoolItem *x = pool.alloc(&h1);
    PoolItem *y = pool.alloc(&h2);
    EXPECT_NE(x, y) << "a slot freed twice would be handed out twice";
    EXPECT_EQ(pool.get(h1), x);
    EXPECT_EQ(pool.get(h2), y);
}

TEST(EnginePool, SlotsPastOneChunkAndForEachVisitOnlyLiveObjects)
{
    ItemPool pool;
    std::vector<std::pair<uint64_t, PoolItem *>> items(600);
    for (size_t i = 0; i < items.size(); ++i) {
        items[i].second = pool.alloc(&items[i].first);
        items[i].second->value = static_cast<int>(i);
    }
    for (size_t i = 0; i < items.size(); i += 2)
        pool.free(items[i].second);
    EXPECT_EQ(pool.live(), 300u);
    for (size_t i = 0; i < items.size(); ++i)
        EXPECT_EQ(pool.get(items[i].first), i % 2 ? items[i].second : nullptr) << i;
    size_t visited = 0;
    pool.for_each([&](PoolItem *it) {
        EXPECT_EQ(it->value % 2, 1);
        ++visited;
    });
    EXPECT_EQ(visited, 300u);
    // The 300 freed slots come back (newest first) before a new one is made.
    std::vector<PoolItem *> again;
    for (int i = 0; i < 300; ++i) {
        uint64_t h;
        again.push_back(pool.alloc(&h));
        EXPECT_EQ(pool.get(h), again.back());
    }
    EXPECT_EQ(again.front(), items[598].second);
    EXPECT_EQ(again.back(), items[0].second);
    EXPECT_EQ(pool.live(), 600u);
}
