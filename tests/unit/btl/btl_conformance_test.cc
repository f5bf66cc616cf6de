// SPDX-License-Identifier: BSD-3-Clause
// The btl conformance suite: what every btl transport must do, run against
// each transport in kTransports through the real framework repository. See
// btl_harness.hpp for how a transport is added, including the two-process
// mode for transports that need a peer process.
#include <gtest/gtest.h>

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "btl_harness.hpp"
#include "progress/progress.hpp"

using namespace weft::test::btl;

namespace {

// Every btl transport the suite runs against. A transport not built here,
// or whose query() says it cannot run on this machine, is skipped with the
// reason.
const std::vector<TransportTraits> kTransports = {
    {"self", PeerMode::loopback, {}},
    {"tcp", PeerMode::other_process, {}},
    // Several connections per peer: ordering, close and simultaneous connect per link.
    {"tcp", PeerMode::other_process, {"WEFT_MCA_btl_tcp_links=2"}},
    {"tcp", PeerMode::other_process, {"WEFT_MCA_btl_tcp_links=4"}},
    {"scif", PeerMode::other_process, {}},
    // Real verbs only where an RDMA device is (make check-rdma runs this in
    // a Soft-RoCE VM); elsewhere query() says why and the tests skip.
    {"openib", PeerMode::other_process, {"WEFT_MCA_btl_openib_cpc=udcm"}},
    {"openib", PeerMode::other_process, {"WEFT_MCA_btl_openib_cpc=rdmacm"}},
    // oob wires the pair inside modex_ready (the harness calls it after the
    // card exchange). It has no connection manager to say a peer finalized
    // abruptly: the survivor learns it when its next send (a credit return)
    // exhausts the RC retries, so those are quick here (7 x 67 ms instead of
    // 7 x 4.3 s, which is more than a test's deadline). A count of 7 would
    // never run out on Soft-RoCE, which retries forever at 7.
    {"openib", PeerMode::other_process,
     {"WEFT_MCA_btl_openib_cpc=oob", "WEFT_MCA_btl_openib_timeout=14", "WEFT_MCA_btl_openib_retry_count=6"}},
};

// The test name of a transport: its component, and for a variant its
// settings ("tcp_links2" for WEFT_MCA_btl_tcp_links=2).
std::string transport_name(const ::testing::TestParamInfo<TransportTraits> &info)
{
    std::string name = info.param.component;
    const std::string own = "WEFT_MCA_btl_" + name + "_";
    for (const std::string &e : info.param.env) {
        std::string setting = e.rfind(own, 0) == 0 ? e.substr(own.size()) : e;
        std::erase_if(setting, [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); });
        name += "_" + setting;
    }
    return name;
}

std::span<const std::byte> bytes_of(const std::string &s)
{
    return std::as_bytes(std::span(s.data(), s.size()));
}

// The rkey of a registration, as the peer would pass it.
struct Rkey {
    const void *data;
    size_t len;
};

class BtlConformance : public ::testing::TestWithParam<TransportTraits> {
protected:
    void SetUp() override
    {
        auto loaded = h_.load(GetParam());
        if (loaded.skip)
            GTEST_SKIP() << loaded.message;
        ASSERT_TRUE(loaded.ok) << loaded.message;
        // A skip inside start() does not stop the test body (it is not a
        // fatal failure), so data-path tests of peer-process transports are
        // skipped here, before the body dereferences a module it never got.
        if (GetParam().mode != PeerMode::loopback && uses_loopback_endpoint())
            GTEST_SKIP() << "data-path tests of transports that need a peer process run through "
                            "run_two_process; their mirrors are not written yet";
    }

    static bool uses_loopback_endpoint()
    {
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        // The two-process suite (BtlPeerConformance) derives from this one;
        // its tests of the same names are the mirrors, never skipped here.
        if (std::string(info->test_suite_name()).find("BtlPeerConformance") != std::string::npos)
            return false;
        const std::string name = info->name();
        for (const char *t : {"SmallMessagesBySendiAndSend", "LargeMessagesKeepTheirContent",
                              "MaxSendIsEnforcedBeforeAnyCopy", "IovecPiecesArriveConcatenated",
                              "TenThousandMessagesArriveInOrder",
                              "EndpointsAndActiveMessageIdsRouteApart",
                              "AgainIsRetriableAfterProgress", "PutAndGetStayInsideRegisteredMemory",
                              "DisconnectClosesAndLaterSendsFail", "MisuseIsAnErrorCodeNotACrash",
                              "FinalizeWithPendingWorkFreesEverything",
                              "HandlerMaySendWithoutRecursion"})
            if (name.rfind(t, 0) == 0)
                return true;
        return false;
    }

    void TearDown() override
    {
        // Upcalls are never re-entered, whatever a test did from a handler.
        EXPECT_LE(h_.max_upcall_depth, 1);
    }

    // Modules up. Fatal on failure: call through ASSERT_NO_FATAL_FAILURE.
    void init()
    {
        std::string err = h_.init_modules();
        ASSERT_TRUE(err.empty()) << err;
        m_ = h_.module();
        ops_ = &h_.ops();
    }

    // Modules up and an endpoint that carries the data-path tests: for a
    // loopback transport, an endpoint to this process.
    void start()
    {
        if (GetParam().mode != PeerMode::loopback)
            GTEST_SKIP() << "data-path tests of transports that need a peer process run through "
                            "run_two_process; their mirrors are not written yet";
        ASSERT_NO_FATAL_FAILURE(init());
        my_card_ = h_.card();
        std::string err = h_.connect(self_peer(), &ep_);
        ASSERT_TRUE(err.empty()) << err;
    }

    weft_btl_peer_t self_peer() { return BtlHarness::peer(kMyRank, WEFT_PEER_SELF, my_card_); }

    int send(weft_btl_endpoint_t *ep, uint8_t am_id, std::span<const std::byte> data)
    {
        iovec iov{const_cast<std::byte *>(data.data()), data.size()};
        return h_.retry_on_again([&] { return weft_btl_send(ep, am_id, &iov, 1); });
    }
    // sendi with the first bytes as the header and the rest as the payload.
    int sendi(weft_btl_endpoint_t *ep, uint8_t am_id, std::span<const std::byte> data)
    {
        size_t hdr = std::min<size_t>(data.size(), 8);
        return h_.retry_on_again([&] {
            return weft_btl_sendi(ep, am_id, data.data(), hdr, data.data() + hdr, data.size() - hdr);
        });
    }
    bool wait_deliveries(size_t n)
    {
        return h_.progress_until([&] { return h_.deliveries.size() >= n; });
    }

    BtlHarness h_;
    weft_btl_module_t *m_ = nullptr;
    // The raw table, for the misuse tests only: they pass NULL endpoints
    // straight to the module, which the weft_btl_*() wrappers never do.
    const weft_btl_module_ops_t *ops_ = nullptr;
    weft_btl_endpoint_t *ep_ = nullptr;
    std::vector<std::byte> my_card_;
};

// An error, and not the retryable kind.
#define EXPECT_HARD_ERROR(expr)                                                    \
    do {                                                                           \
        int rc_ = (expr);                                                          \
        EXPECT_LT(rc_, 0) << #expr;                                                \
        EXPECT_NE(rc_, WEFT_ERR_AGAIN) << #expr << " must fail, not ask to retry"; \
    } while (0)

} // namespace

TEST_P(BtlConformance, ModulesPublishCapsAndCard)
{
    ASSERT_NO_FATAL_FAILURE(init());
    for (weft_btl_module_t *m : h_.modules()) {
        EXPECT_GE(m->size, sizeof(weft_btl_module_t));
        EXPECT_EQ(m->component, h_.component());
        EXPECT_GE(m->ops->size, sizeof(weft_btl_module_ops_t));
        EXPECT_EQ(weft_btl_module_abi_problem(m), nullptr) << weft_btl_module_abi_problem(m);
        EXPECT_NE(m->name[0], '\0');
        EXPECT_EQ(m->caps.size, sizeof(weft_btl_caps_t));
        EXPECT_TRUE(m->caps.flags & WEFT_BTL_FLAG_SEND);
        EXPECT_GT(m->caps.max_send, 0u);
        EXPECT_GT(m->caps.latency_us, 0.0);
        EXPECT_GT(m->caps.bandwidth_mbs, 0.0);
        EXPECT_LE(m->caps.eager_limit, m->caps.max_send);
        if (m->caps.flags & WEFT_BTL_FLAG_INLINE) {
            EXPECT_TRUE(WEFT_BTL_HAS_OP(m, sendi));
            EXPECT_GT(m->caps.inline_max, 0u);
        }
        if (m->caps.flags & (WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET)) {
            EXPECT_TRUE(WEFT_BTL_HAS_OP(m, mem_register));
        }
        if (!(m->caps.flags & WEFT_BTL_FLAG_FD)) {
            EXPECT_EQ(weft_btl_wait_fd(m), -1);
        }
        if (m->caps.flags & WEFT_BTL_FLAG_FD) {
            ASSERT_TRUE(WEFT_BTL_HAS_OP(m, wait_fd));
            EXPECT_GE(weft_btl_wait_fd(m), 0);
        }
        if (WEFT_BTL_HAS_OP(m, prepare_wait)) {
            // Arming an idle module is allowed at any time; progress() disarms.
            EXPECT_TRUE(m->caps.flags & WEFT_BTL_FLAG_FD) << "prepare_wait without a wait_fd";
            EXPECT_GE(weft_btl_prepare_wait(m), 0);
            EXPECT_GE(weft_btl_progress(m), 0);
        }
    }
    if (GetParam().mode == PeerMode::loopback) {
        EXPECT_EQ(m_->caps.exclusivity, WEFT_BTL_EXCLUSIVITY_SELF);
    }

    // The card: a too-small buffer says TRUNCATED and how much is needed.
    size_t len = 0;
    int rc = weft_btl_card(m_, nullptr, &len);
    if (rc == WEFT_ERR_TRUNCATED) {
        EXPECT_GT(len, 0u);
        std::vector<std::byte> buf(len);
        size_t got = buf.size();
        EXPECT_EQ(weft_btl_card(m_, buf.data(), &got), WEFT_SUCCESS);
        EXPECT_EQ(got, len);
    } else {
        EXPECT_EQ(rc, WEFT_SUCCESS);
        EXPECT_EQ(len, 0u);
    }
}

TEST_P(BtlConformance, ConnectIsReportedFromProgressOnly)
{
    if (GetParam().mode != PeerMode::loopback)
        GTEST_SKIP() << "connect of peer-process transports: OtherProcess covers it";
    ASSERT_NO_FATAL_FAILURE(init());
    my_card_ = h_.card();
    weft_btl_peer_t me = self_peer();
    weft_btl_endpoint_t *ep = nullptr;
    ASSERT_EQ(h_.component()->start_connect(m_, &me, &ep), WEFT_SUCCESS);
    ASSERT_NE(ep, nullptr);
    EXPECT_TRUE(h_.states.empty()) << "an upcall ran inside start_connect()";
    EXPECT_EQ(ep->module, m_);
    EXPECT_EQ(ep->peer_rank, kMyRank);
    ASSERT_TRUE(h_.progress_until([&] { return !h_.states.empty(); })) << h_.failure();
    EXPECT_EQ(h_.count_states(ep, WEFT_BTL_EP_CONNECTED), 1u);
    EXPECT_EQ(ep->state, WEFT_BTL_EP_CONNECTED);
    // Nothing more to report.
    for (int i = 0; i < 10; ++i)
        h_.progress_once();
    EXPECT_EQ(h_.states.size(), 1u);
}

TEST_P(BtlConformance, SmallMessagesBySendiAndSend)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    const size_t inline_max = m_->caps.inline_max;
    std::vector<size_t> sizes = {0, 1, 8};
    if (inline_max > 8)
        sizes.push_back(inline_max);
    std::vector<std::vector<std::byte>> sent;
    for (size_t n : sizes) {
        sent.push_back(pattern(n, static_cast<uint32_t>(n + 1)));
        if (WEFT_BTL_HAS_OP(m_, sendi) && (m_->caps.flags & WEFT_BTL_FLAG_INLINE) && n <= inline_max)
            ASSERT_EQ(sendi(ep_, 17, sent.back()), WEFT_SUCCESS) << n << " bytes by sendi";
        else
            ASSERT_EQ(send(ep_, 17, sent.back()), WEFT_SUCCESS) << n << " bytes by send";
        sent.push_back(pattern(n, static_cast<uint32_t>(n + 100)));
        ASSERT_EQ(send(ep_, 18, sent.back()), WEFT_SUCCESS) << n << " bytes by send";
    }
    EXPECT_TRUE(h_.deliveries.empty()) << "an upcall ran inside send()/sendi()";
    ASSERT_TRUE(wait_deliveries(sent.size())) << h_.failure();
    ASSERT_EQ(h_.deliveries.size(), sent.size());
    for (size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(h_.deliveries[i].ep, ep_);
        EXPECT_EQ(h_.deliveries[i].am_id, i % 2 ? 18 : 17);
        EXPECT_EQ(h_.deliveries[i].data, sent[i]) << "message " << i;
    }
}

TEST_P(BtlConformance, LargeMessagesKeepTheirContent)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    struct Sent { size_t len; uint64_t sum; };
    std::vector<Sent> sent;
    for (size_t n : {size_t{64} << 10, size_t{1} << 20, size_t{4} << 20}) {
        if (n > m_->caps.max_send)
            continue;
        auto data = pattern(n, static_cast<uint32_t>(n));
        sent.push_back({n, checksum(data)});
        ASSERT_EQ(send(ep_, 40, data), WEFT_SUCCESS) << n << " bytes";
        // Copy semantics: the buffer may change as soon as send() returns.
        std::fill(data.begin(), data.end(), std::byte{0xee});
    }
    ASSERT_TRUE(wait_deliveries(sent.size())) << h_.failure();
    for (size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(h_.deliveries[i].data.size(), sent[i].len);
        EXPECT_EQ(checksum(h_.deliveries[i].data), sent[i].sum) << sent[i].len << " bytes";
    }
}

TEST_P(BtlConformance, MaxSendIsEnforcedBeforeAnyCopy)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    const size_t max_send = m_->caps.max_send;
    // Exactly max_send goes through when it is small enough to test here.
    if (max_send <= (size_t{16} << 20)) {
        auto data = pattern(max_send, 7);
        ASSERT_EQ(send(ep_, 41, data), WEFT_SUCCESS);
        ASSERT_TRUE(wait_deliveries(1)) << h_.failure();
        EXPECT_EQ(checksum(h_.deliveries[0].data), checksum(data));
    }
    // One byte more is refused, built from pieces that all point at one
    // real buffer, so a module that copied before checking would still
    // read only valid memory, and the refusal is what is tested.
    const size_t piece = size_t{1} << 20;
    if (max_send == SIZE_MAX || max_send / piece > 4096)
        GTEST_SKIP() << "max_send " << max_send << " is too large to exceed here";
    std::vector<std::byte> buf(piece);
    std::vector<iovec> iov(max_send / piece + 1, iovec{buf.data(), piece});
    EXPECT_HARD_ERROR(weft_btl_send(ep_, 41, iov.data(), static_cast<int>(iov.size())));
    const size_t before = h_.deliveries.size();
    for (int i = 0; i < 10; ++i)
        h_.progress_once();
    EXPECT_EQ(h_.deliveries.size(), before) << "a refused send was delivered";
}

TEST_P(BtlConformance, IovecPiecesArriveConcatenated)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    std::vector<std::vector<std::byte>> pieces;
    std::vector<std::byte> whole;
    std::vector<iovec> iov;
    for (size_t n : {3, 0, 100, 1, 4000, 0, 77, 70000}) {
        pieces.push_back(pattern(n, static_cast<uint32_t>(n + 3)));
        whole.insert(whole.end(), pieces.back().begin(), pieces.back().end());
    }
    for (auto &p : pieces)
        iov.push_back({p.data(), p.size()});
    ASSERT_EQ(h_.retry_on_again(
                  [&] { return weft_btl_send(ep_, 9, iov.data(), static_cast<int>(iov.size())); }),
              WEFT_SUCCESS);
    // No pieces at all: an empty message.
    ASSERT_EQ(h_.retry_on_again([&] { return weft_btl_send(ep_, 10, nullptr, 0); }), WEFT_SUCCESS);
    ASSERT_TRUE(wait_deliveries(2)) << h_.failure();
    EXPECT_EQ(h_.deliveries[0].data, whole);
    EXPECT_EQ(h_.deliveries[1].am_id, 10);
    EXPECT_TRUE(h_.deliveries[1].data.empty());
}

TEST_P(BtlConformance, TenThousandMessagesArriveInOrder)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    constexpr uint32_t kCount = 10'000;
    const bool has_sendi = WEFT_BTL_HAS_OP(m_, sendi) && (m_->caps.flags & WEFT_BTL_FLAG_INLINE) &&
                           m_->caps.inline_max >= sizeof(uint32_t);
    for (uint32_t seq = 0; seq < kCount; ++seq) {
        auto bytes = std::as_bytes(std::span(&seq, 1));
        int rc = (has_sendi && seq % 2) ? sendi(ep_, 5, bytes) : send(ep_, 5, bytes);
        ASSERT_EQ(rc, WEFT_SUCCESS) << "message " << seq << ": " << h_.failure();
    }
    ASSERT_TRUE(wait_deliveries(kCount)) << h_.failure();
    ASSERT_EQ(h_.deliveries.size(), kCount);
    for (uint32_t i = 0; i < kCount; ++i) {
        uint32_t seq = 0;
        ASSERT_EQ(h_.deliveries[i].data.size(), sizeof seq);
        std::memcpy(&seq, h_.deliveries[i].data.data(), sizeof seq);
        ASSERT_EQ(seq, i) << "out of order";
    }
}

TEST_P(BtlConformance, ManyPeersReachableOrRefusedWithReasons)
{
    ASSERT_NO_FATAL_FAILURE(init());
    my_card_ = h_.card();
    const std::string name = GetParam().component;
    constexpr uint32_t kPeers = 16;
    for (uint32_t rank = 1; rank < kPeers; ++rank) {
        // Made-up peers with no card: nobody can reach them, and each
        // refusal says which component refused and why.
        auto peer = BtlHarness::peer(rank, rank % 2 ? WEFT_PEER_SAME_NODE : WEFT_PEER_OTHER_NODE);
        char why[WEFT_REASON_MAX] = {};
        if (weft_btl_reachable(m_, &peer, why, sizeof why) == 0) {
            EXPECT_NE(why[0], '\0') << "rank " << rank << " refused without a reason";
            EXPECT_NE(std::string(why).find(name), std::string::npos) << why;
            weft_btl_endpoint_t stale{};   // start_connect must clear *endpoint on refusal
            weft_btl_endpoint_t *ep = &stale;
            EXPECT_EQ(h_.component()->start_connect(m_, &peer, &ep), WEFT_ERR_UNREACHABLE);
            EXPECT_EQ(ep, nullptr);
        }
    }
    if (GetParam().mode == PeerMode::loopback) {
        auto me = self_peer();
        char why[WEFT_REASON_MAX] = {};
        EXPECT_EQ(weft_btl_reachable(m_, &me, why, sizeof why), 1);
        weft_btl_endpoint_t *ep = nullptr;
        EXPECT_EQ(h_.connect(me, &ep), "");
        // Only the one endpoint ever connected.
        EXPECT_EQ(h_.states.size(), 1u);
    }
    // Truncation of a reason is safe.
    auto far = BtlHarness::peer(99, WEFT_PEER_OTHER_NODE);
    char tiny[8];
    std::memset(tiny, 'x', sizeof tiny);
    if (weft_btl_reachable(m_, &far, tiny, sizeof tiny) == 0) {
        EXPECT_NE(std::memchr(tiny, '\0', sizeof tiny), nullptr);
    }
}

TEST_P(BtlConformance, EndpointsAndActiveMessageIdsRouteApart)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    std::vector<weft_btl_endpoint_t *> eps = {ep_};
    for (int i = 0; i < 3; ++i) {
        weft_btl_endpoint_t *ep = nullptr;
        std::string err = h_.connect(self_peer(), &ep);
        ASSERT_TRUE(err.empty()) << err;
        eps.push_back(ep);
    }
    struct Sent { weft_btl_endpoint_t *ep; uint8_t am; };
    std::vector<Sent> sent;
    for (int am : {0, 255, 1, 128, 254}) {
        for (auto *ep : eps) {
            uint8_t tag[2] = {static_cast<uint8_t>(am), static_cast<uint8_t>(sent.size())};
            ASSERT_EQ(send(ep, static_cast<uint8_t>(am), std::as_bytes(std::span(tag))), WEFT_SUCCESS);
            sent.push_back({ep, static_cast<uint8_t>(am)});
        }
    }
    ASSERT_TRUE(wait_deliveries(sent.size())) << h_.failure();
    for (size_t i = 0; i < sent.size(); ++i) {
        EXPECT_EQ(h_.deliveries[i].ep, sent[i].ep) << "message " << i;
        EXPECT_EQ(h_.deliveries[i].am_id, sent[i].am) << "message " << i;
        EXPECT_EQ(static_cast<uint8_t>(h_.deliveries[i].data.at(1)), i);
    }
}

TEST_P(BtlConformance, AgainIsRetriableAfterProgress)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    // Send without progress until the module pushes back (or a bound).
    constexpr uint32_t kBound = 100'000;
    uint32_t queued = 0;
    int rc = WEFT_SUCCESS;
    for (; queued < kBound; ++queued) {
        iovec iov{&queued, sizeof queued};
        rc = weft_btl_send(ep_, 3, &iov, 1);
        if (rc != WEFT_SUCCESS)
            break;
    }
    if (rc != WEFT_SUCCESS) {
        ASSERT_EQ(rc, WEFT_ERR_AGAIN) << "a full module must answer AGAIN, not fail";
        EXPECT_TRUE(h_.deliveries.empty());
        // Progress frees room; the same message then goes through.
        ASSERT_GT(h_.progress_once(), 0);
        iovec iov{&queued, sizeof queued};
        ASSERT_EQ(h_.retry_on_again([&] { return weft_btl_send(ep_, 3, &iov, 1); }), WEFT_SUCCESS);
        ++queued;
    } else {
        RecordProperty("again", "never answered AGAIN within the bound");
    }
    ASSERT_TRUE(wait_deliveries(queued)) << h_.failure();
    ASSERT_EQ(h_.deliveries.size(), queued);
    for (uint32_t i = 0; i < queued; ++i) {
        uint32_t seq = 0;
        std::memcpy(&seq, h_.deliveries[i].data.data(), sizeof seq);
        ASSERT_EQ(seq, i);
    }
}

namespace {

} // namespace

TEST_P(BtlConformance, PutAndGetStayInsideRegisteredMemory)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    const uint32_t need = WEFT_BTL_FLAG_PUT | WEFT_BTL_FLAG_GET;
    if ((m_->caps.flags & need) != need)
        GTEST_SKIP() << "btl/" << GetParam().component << " has no put/get";
    // Heap memory, exactly the registered size: ASan reports any overread.
    std::vector<std::byte> target(4096, std::byte{0});
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    ASSERT_EQ(weft_btl_mem_register(m_, target.data(), target.size(), &reg), WEFT_SUCCESS);
    ASSERT_GT(reg.rkey_len, 0u);
    const uint64_t base = reinterpret_cast<uintptr_t>(target.data());

    auto source = pattern(100, 11);
    RdmaCompletion put_done, get_done;
    ASSERT_EQ(h_.retry_on_again([&] {
                  return weft_btl_put(ep_, source.data(), source.size(), base + 10, reg.rkey,
                                   reg.rkey_len, record_rdma, &put_done);
              }),
              WEFT_SUCCESS);
    EXPECT_EQ(put_done.calls, 0) << "completion ran inside put()";
    std::vector<std::byte> back(100);
    ASSERT_EQ(h_.retry_on_again([&] {
                  return weft_btl_get(ep_, back.data(), back.size(), base + 10, reg.rkey,
                                   reg.rkey_len, record_rdma, &get_done);
              }),
              WEFT_SUCCESS);
    ASSERT_TRUE(h_.progress_until([&] { return put_done.calls && get_done.calls; }))
        << h_.failure();
    for (int i = 0; i < 10; ++i)
        h_.progress_once();
    EXPECT_EQ(put_done.calls, 1);
    EXPECT_EQ(get_done.calls, 1);
    EXPECT_EQ(put_done.status, WEFT_SUCCESS);
    EXPECT_EQ(put_done.ep, ep_);
    EXPECT_EQ(back, source);
    EXPECT_TRUE(std::equal(source.begin(), source.end(), target.begin() + 10));

    // The last byte and an empty range at the end are inside.
    std::byte one{0x5a};
    EXPECT_EQ(weft_btl_put(ep_, &one, 1, base + 4095, reg.rkey, reg.rkey_len, nullptr, nullptr),
              WEFT_SUCCESS);
    EXPECT_EQ(weft_btl_get(ep_, &one, 0, base + 4096, reg.rkey, reg.rkey_len, nullptr, nullptr),
              WEFT_SUCCESS);

    // Out of range, overflowing, or with a broken key: refused, no callback.
    RdmaCompletion never;
    std::vector<std::byte> big(8192);
    auto refused_get = [&](uint64_t addr, size_t len, const void *rkey, size_t rkey_len) {
        return weft_btl_get(ep_, big.data(), len, addr, rkey, rkey_len, record_rdma, &never);
    };
    auto refused_put = [&](uint64_t addr, size_t len, const void *rkey, size_t rkey_len) {
        return weft_btl_put(ep_, big.data(), len, addr, rkey, rkey_len, record_rdma, &never);
    };
    EXPECT_HARD_ERROR(refused_get(base + 4000, 200, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_put(base + 4000, 200, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(base, 4097, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(base - 1, 2, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(base + 4097, 0, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(UINT64_MAX - 8, 100, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(base + 16, SIZE_MAX - 8, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(refused_get(base, 16, reg.rkey, reg.rkey_len - 1));
    EXPECT_HARD_ERROR(refused_get(base, 16, nullptr, 0));
    weft_btl_reg_t forged = reg;
    for (size_t i = 0; i < forged.rkey_len; ++i)
        forged.rkey[i] ^= 0xa5;
    EXPECT_HARD_ERROR(refused_put(base, 16, forged.rkey, forged.rkey_len));

    // After deregistration the key no longer reaches anything.
    ASSERT_EQ(weft_btl_mem_deregister(m_, &reg), WEFT_SUCCESS);
    EXPECT_HARD_ERROR(refused_put(base, 16, reg.rkey, reg.rkey_len));
    EXPECT_HARD_ERROR(weft_btl_mem_deregister(m_, &reg));
    for (int i = 0; i < 10; ++i)
        h_.progress_once();
    EXPECT_EQ(never.calls, 0) << "a refused put/get completed";
}

TEST_P(BtlConformance, DisconnectClosesAndLaterSendsFail)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    const std::string before = "sent before disconnect";
    ASSERT_EQ(send(ep_, 1, bytes_of(before)), WEFT_SUCCESS);
    ASSERT_EQ(weft_btl_disconnect(ep_), WEFT_SUCCESS);
    // Once disconnect() returned, the endpoint takes nothing new.
    const std::string after = "after";
    iovec iov{const_cast<char *>(after.data()), after.size()};
    EXPECT_HARD_ERROR(weft_btl_send(ep_, 1, &iov, 1));
    if (WEFT_BTL_HAS_OP(m_, sendi))
        EXPECT_HARD_ERROR(weft_btl_sendi(ep_, 1, after.data(), after.size(), nullptr, 0));
    EXPECT_HARD_ERROR(weft_btl_disconnect(ep_));
    weft_btl_endpoint_t *closed = ep_;
    ASSERT_TRUE(h_.progress_until([&] { return h_.count_states(closed, WEFT_BTL_EP_CLOSED) > 0; }))
        << h_.failure();
    ASSERT_EQ(h_.deliveries.size(), 1u);
    EXPECT_EQ(h_.deliveries[0].data, std::vector<std::byte>(bytes_of(before).begin(),
                                                             bytes_of(before).end()));
    EXPECT_EQ(h_.count_states(closed, WEFT_BTL_EP_CLOSED), 1u);
    EXPECT_EQ(h_.states.back().state, WEFT_BTL_EP_CLOSED);
    // The module freed the endpoint after the CLOSED upcall: the harness
    // drops its pointer, and progress has nothing more to say about it.
    ep_ = nullptr;
    for (int i = 0; i < 10; ++i)
        h_.progress_once();
    EXPECT_EQ(h_.count_states(closed, WEFT_BTL_EP_CLOSED), 1u);
}

TEST_P(BtlConformance, MisuseIsAnErrorCodeNotACrash)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    std::byte data[16] = {};
    iovec iov{data, sizeof data};
    EXPECT_HARD_ERROR(ops_->send(nullptr, 0, &iov, 1));
    EXPECT_HARD_ERROR(ops_->send(ep_, 0, &iov, -1));
    EXPECT_HARD_ERROR(ops_->send(ep_, 0, nullptr, 1));
    iovec null_piece{nullptr, 8};
    EXPECT_HARD_ERROR(ops_->send(ep_, 0, &null_piece, 1));
    if (WEFT_BTL_HAS_OP(m_, sendi)) {
        EXPECT_HARD_ERROR(ops_->sendi(nullptr, 0, data, 1, nullptr, 0));
        EXPECT_HARD_ERROR(ops_->sendi(ep_, 0, nullptr, 4, nullptr, 0));
        EXPECT_HARD_ERROR(ops_->sendi(ep_, 0, data, 1, nullptr, 4));
        std::vector<std::byte> over(m_->caps.inline_max + 1);
        EXPECT_HARD_ERROR(ops_->sendi(ep_, 0, over.data(), over.size(), nullptr, 0));
        EXPECT_HARD_ERROR(ops_->sendi(ep_, 0, over.data(), 1, over.data(), over.size() - 1));
    }
    EXPECT_HARD_ERROR(ops_->disconnect(nullptr));
    if (WEFT_BTL_HAS_OP(m_, put))
        EXPECT_HARD_ERROR(ops_->put(nullptr, data, 1, 0, data, 1, nullptr, nullptr));
    if (WEFT_BTL_HAS_OP(m_, mem_register)) {
        EXPECT_HARD_ERROR(ops_->mem_register(m_, data, sizeof data, nullptr));
        weft_btl_reg_t never{};
        never.size = sizeof never;
        EXPECT_HARD_ERROR(ops_->mem_deregister(m_, &never));
    }
    EXPECT_HARD_ERROR(ops_->card(m_, data, nullptr));
    weft_btl_endpoint_t *ep = nullptr;
    EXPECT_HARD_ERROR(h_.component()->start_connect(m_, nullptr, &ep));
    EXPECT_EQ(ep, nullptr);
    for (int i = 0; i < 10; ++i)
        EXPECT_GE(h_.progress_once(), 0);
    EXPECT_TRUE(h_.deliveries.empty()) << "a refused send was delivered";
}

TEST_P(BtlConformance, FinalizeWithPendingWorkFreesEverything)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    // Small and large messages, completions and a disconnect, all pending:
    // finalize must free them (LeakSanitizer checks) without an upcall.
    for (uint32_t i = 0; i < 100; ++i)
        ASSERT_EQ(send(ep_, 2, std::as_bytes(std::span(&i, 1))), WEFT_SUCCESS);
    for (size_t n : {size_t{100} << 10, size_t{1} << 20}) {
        if (n <= m_->caps.max_send) {
            ASSERT_EQ(send(ep_, 2, pattern(n, 5)), WEFT_SUCCESS);
        }
    }
    std::vector<std::byte> target(256);
    weft_btl_reg_t reg{};
    reg.size = sizeof reg;
    RdmaCompletion never;
    if ((m_->caps.flags & WEFT_BTL_FLAG_PUT) &&
        weft_btl_mem_register(m_, target.data(), target.size(), &reg) == WEFT_SUCCESS) {
        std::byte b{1};
        EXPECT_EQ(weft_btl_put(ep_, &b, 1, reinterpret_cast<uintptr_t>(target.data()), reg.rkey,
                            reg.rkey_len, record_rdma, &never),
                  WEFT_SUCCESS);
    }
    // A second endpoint whose CONNECTED upcall is still pending.
    weft_btl_endpoint_t *second = nullptr;
    const weft_btl_peer_t me = self_peer();
    ASSERT_EQ(h_.component()->start_connect(m_, &me, &second), WEFT_SUCCESS);
    ASSERT_EQ(weft_btl_disconnect(ep_), WEFT_SUCCESS);
    const size_t deliveries = h_.deliveries.size(), states = h_.states.size();
    EXPECT_EQ(h_.finalize_modules(), "");
    EXPECT_EQ(h_.deliveries.size(), deliveries) << "finalize ran a recv upcall";
    EXPECT_EQ(h_.states.size(), states) << "finalize ran a state upcall";
    EXPECT_EQ(never.calls, 0) << "finalize ran a completion";
}

TEST_P(BtlConformance, HandlerMaySendWithoutRecursion)
{
    ASSERT_NO_FATAL_FAILURE(start());
    if (IsSkipped())
        return;   // a skip inside start() only leaves start()
    int nested_progress_events = 0;
    h_.on_recv = [&](const Delivery &d) {
        if (d.am_id != 1)
            return;
        // Reply from inside the upcall, both ways; neither may re-enter it.
        const std::string reply = "reply";
        if (WEFT_BTL_HAS_OP(m_, sendi)) {
            EXPECT_EQ(h_.retry_on_again([&] {
                          return weft_btl_sendi(d.ep, 2, reply.data(), reply.size(), nullptr, 0);
                      }),
                      WEFT_SUCCESS);
        }
        iovec iov{const_cast<char *>(reply.data()), reply.size()};
        EXPECT_EQ(weft_btl_send(d.ep, 3, &iov, 1), WEFT_SUCCESS);
        // A runtime that progresses from a handler must not be called back.
        int rc = weft_btl_progress(m_);
        EXPECT_GE(rc, 0);
        nested_progress_events += rc > 0 ? rc : 0;
    };
    constexpr size_t kRequests = 10;
    for (size_t i = 0; i < kRequests; ++i)
        ASSERT_EQ(send(ep_, 1, bytes_of("request")), WEFT_SUCCESS);
    const size_t replies = WEFT_BTL_HAS_OP(m_, sendi) ? 2 : 1;
    ASSERT_TRUE(wait_deliveries(kRequests * (1 + replies))) << h_.failure();
    EXPECT_EQ(h_.max_upcall_depth, 1);
    EXPECT_EQ(nested_progress_events, 0);
    size_t seen_replies = 0;
    for (const auto &d : h_.deliveries)
        seen_replies += d.am_id != 1 ? 1 : 0;
    EXPECT_EQ(seen_replies, kRequests * replies);
}

TEST_P(BtlConformance, OtherProcessIsReachedOrRefusedWithReason)
{
    const TransportTraits traits = GetParam();
    std::string result = run_two_process(h_, [&](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string side = ctx.side == Side::parent ? "parent" : "child";
        if (ctx.peer_card.empty() && traits.mode == PeerMode::other_process)
            return side + ": the other process published no card";
        auto peer = ctx.peer(WEFT_PEER_SAME_NODE);
        // A transport with several modules (tcp: one per interface) reaches
        // a same-node peer through one of them (tcp: loopback).
        weft_btl_module_t *m = h.module_for(peer);
        char why[WEFT_REASON_MAX] = {};
        const int reach = weft_btl_reachable(m, &peer, why, sizeof why);
        weft_btl_endpoint_t *ep = nullptr;
        if (traits.mode == PeerMode::loopback) {
            if (reach != 0)
                return side + ": claims to reach another process";
            if (std::string(why).find(traits.component) == std::string::npos)
                return side + ": reason does not name the component: \"" + why + "\"";
            if (int rc = h.component()->start_connect(m, &peer, &ep); rc != WEFT_ERR_UNREACHABLE)
                return side + ": start_connect to another process gave " + weft_status_string(rc);
            // Nor is it fooled by the other process's card in a SELF description.
            auto impostor = ctx.peer(WEFT_PEER_SELF);
            if (!ctx.peer_card.empty() && weft_btl_reachable(m, &impostor, why, sizeof why) != 0)
                return side + ": reaches a SELF description carrying another process's card";
            return "";
        }
        // A transport with a peer process: connect and ping-pong one message.
        if (reach != 1)
            return side + ": cannot reach the other process: " + why;
        if (std::string err = h.connect(peer, &ep); !err.empty())
            return side + ": " + err;
        const std::string ping = "ping from " + side;
        if (ctx.side == Side::parent) {
            iovec iov{const_cast<char *>(ping.data()), ping.size()};
            if (int rc = h.retry_on_again([&] { return weft_btl_send(ep, 7, &iov, 1); }); rc != 0)
                return side + ": send failed: " + weft_status_string(rc);
        }
        if (!h.progress_until([&] { return !h.deliveries.empty(); }))
            return side + ": nothing arrived: " + h.failure();
        if (ctx.side == Side::child) {
            iovec iov{const_cast<char *>(ping.data()), ping.size()};
            if (int rc = h.retry_on_again([&] { return weft_btl_send(ep, 7, &iov, 1); }); rc != 0)
                return side + ": reply failed: " + weft_status_string(rc);
            // Wait until the parent says it got the reply before closing.
            if (!ctx.channel.receive(std::chrono::seconds(30)))
                return side + ": parent never confirmed the reply";
        } else {
            ctx.channel.send(std::string("done"));
        }
        return "";
    });
    EXPECT_TRUE(result.empty()) << result;
}

// ---- the data-path tests with a peer process (PeerMode::other_process) -----
//
// Each body runs on both sides (run_two_process); both sides connect to each
// other at once, so every test also exercises the simultaneous-connect rule.
// Contents are deterministic (pattern()), so each side checks what the other
// sent without shipping it over the control channel.

namespace {

std::string side_name(const PeerContext &ctx) { return ctx.side == Side::parent ? "parent" : "child"; }

// Connects to the other process; "" or what failed.
std::string connect_peer(PeerContext &ctx, weft_btl_endpoint_t **ep)
{
    auto peer = ctx.peer(WEFT_PEER_SAME_NODE);
    if (std::string err = ctx.harness.connect(peer, ep); !err.empty())
        return side_name(ctx) + ": " + err;
    if ((*ep)->peer_rank != ctx.peer_rank)
        return side_name(ctx) + ": endpoint names rank " + std::to_string((*ep)->peer_rank);
    return "";
}

int send_bytes(BtlHarness &h, weft_btl_endpoint_t *ep, uint8_t am, std::span<const std::byte> data)
{
    iovec iov{const_cast<std::byte *>(data.data()), data.size()};
    return h.retry_on_again([&] { return weft_btl_send(ep, am, &iov, 1); });
}

// Waits until the other side says it is done too, so neither closes early.
std::string barrier(PeerContext &ctx)
{
    if (!ctx.channel.send(std::string("barrier")))
        return side_name(ctx) + ": barrier send failed";
    // Keep progressing while waiting: what this side queued may still need
    // progress to reach the peer.
    if (!ctx.harness.progress_until([&] { return ctx.channel.readable(); }))
        return side_name(ctx) + ": no barrier from the peer: " + ctx.harness.failure();
    auto got = ctx.channel.receive(std::chrono::seconds(30));
    if (!got)
        return side_name(ctx) + ": barrier broken";
    std::string text(reinterpret_cast<const char *>(got->data()), got->size());
    // Anything else is the peer's failure report, sent instead of its barrier.
    return text == "barrier" ? "" : side_name(ctx) + ": the peer failed: " + text;
}

} // namespace

class BtlPeerConformance : public BtlConformance {
protected:
    void mirror(const MirrorBody &body)
    {
        if (GetParam().mode != PeerMode::other_process)
            GTEST_SKIP() << "loopback transports run the single-process versions";
        std::string result = run_two_process(h_, body);
        EXPECT_TRUE(result.empty()) << result;
    }
};

TEST_P(BtlPeerConformance, ConnectAtOnceFromBothSidesGivesOneEndpoint)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        weft_btl_endpoint_t *ep = nullptr;
        auto peer = ctx.peer(WEFT_PEER_SAME_NODE);
        weft_btl_module_t *m = h.module_for(peer);
        if (int rc = h.component()->start_connect(m, &peer, &ep); rc != WEFT_SUCCESS || !ep)
            return side_name(ctx) + ": start_connect failed";
        if (!h.states.empty())
            return side_name(ctx) + ": an upcall ran inside start_connect()";
        if (!h.progress_until([&] { return h.count_states(ep, WEFT_BTL_EP_CONNECTED) > 0; }))
            return side_name(ctx) + ": not connected: " + h.failure();
        if (std::string err = barrier(ctx); !err.empty())
            return err;
        for (int i = 0; i < 100; ++i)
            h.progress_once();
        // One endpoint, connected once, nothing failed on either side.
        if (h.states.size() != 1 || h.states[0].ep != ep)
            return side_name(ctx) + ": " + std::to_string(h.states.size()) + " state upcalls, expected 1";
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, AcceptedEndpointCarriesTrafficBothWays)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (ctx.side == Side::parent) {
            if (std::string err = connect_peer(ctx, &ep); !err.empty())
                return err;
            if (send_bytes(h, ep, 3, pattern(100, 1)) != WEFT_SUCCESS)
                return me + ": send failed";
        }
        if (!h.progress_until([&] { return !h.deliveries.empty(); }))
            return me + ": nothing arrived: " + h.failure();
        if (ctx.side == Side::child) {
            ep = h.deliveries[0].ep;   // the endpoint the accepted upcall announced
            if (!ep || ep->peer_rank != ctx.peer_rank)
                return me + ": delivery on an endpoint without the peer's rank";
            if (h.deliveries[0].data != pattern(100, 1))
                return me + ": content differs";
            if (send_bytes(h, ep, 4, pattern(50, 2)) != WEFT_SUCCESS)
                return me + ": reply failed";
        } else if (h.deliveries[0].ep != ep || h.deliveries[0].am_id != 4 ||
                   h.deliveries[0].data != pattern(50, 2)) {
            return me + ": wrong reply";
        }
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, SmallAndLargeMessagesKeepTheirContent)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        const size_t max_send = ep->module->caps.max_send;
        std::vector<size_t> sizes;
        for (size_t n : {size_t{0}, size_t{1}, size_t{8}, size_t{1000}, size_t{64} << 10,
                         size_t{1} << 20, size_t{4} << 20})
            if (n <= max_send)
                sizes.push_back(n);
        // Both directions at once: each side sends while the other does.
        for (size_t i = 0; i < sizes.size(); ++i) {
            auto data = pattern(sizes[i], static_cast<uint32_t>(sizes[i] + ctx.my_rank + 1));
            if (int rc = send_bytes(h, ep, static_cast<uint8_t>(40 + i), data); rc != WEFT_SUCCESS)
                return me + ": send of " + std::to_string(sizes[i]) + " bytes: " + weft_status_string(rc);
            std::fill(data.begin(), data.end(), std::byte{0xee});   // copy semantics
        }
        if (!h.progress_until([&] { return h.deliveries.size() >= sizes.size(); }))
            return me + ": " + std::to_string(h.deliveries.size()) + " of " + std::to_string(sizes.size()) +
                   " arrived: " + h.failure();
        for (size_t i = 0; i < sizes.size(); ++i) {
            const auto &d = h.deliveries[i];
            auto want = pattern(sizes[i], static_cast<uint32_t>(sizes[i] + ctx.peer_rank + 1));
            if (d.ep != ep || d.am_id != 40 + i || d.data.size() != sizes[i] || checksum(d.data) != checksum(want))
                return me + ": message " + std::to_string(i) + " (" + std::to_string(sizes[i]) + " bytes) differs";
        }
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, IovecPiecesArriveConcatenated)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        std::vector<std::vector<std::byte>> pieces;
        std::vector<std::byte> whole;
        for (size_t n : {3, 0, 100, 1, 4000, 0, 77, 70000}) {
            pieces.push_back(pattern(n, static_cast<uint32_t>(n + 3)));
            whole.insert(whole.end(), pieces.back().begin(), pieces.back().end());
        }
        std::vector<iovec> iov;
        for (auto &p : pieces)
            iov.push_back({p.data(), p.size()});
        if (h.retry_on_again([&] { return weft_btl_send(ep, 9, iov.data(), static_cast<int>(iov.size())); }) != 0 ||
            h.retry_on_again([&] { return weft_btl_send(ep, 10, nullptr, 0); }) != 0)
            return me + ": send failed";
        if (!h.progress_until([&] { return h.deliveries.size() >= 2; }))
            return me + ": nothing arrived: " + h.failure();
        if (h.deliveries[0].data != whole || h.deliveries[1].am_id != 10 || !h.deliveries[1].data.empty())
            return me + ": pieces did not arrive concatenated";
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, TenThousandMessagesArriveInOrder)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        constexpr uint32_t kCount = 10'000;
        for (uint32_t seq = 0; seq < kCount; ++seq)
            if (int rc = send_bytes(h, ep, 5, std::as_bytes(std::span(&seq, 1))); rc != WEFT_SUCCESS)
                return me + ": message " + std::to_string(seq) + ": " + weft_status_string(rc);
        if (!h.progress_until([&] { return h.deliveries.size() >= kCount; }))
            return me + ": " + std::to_string(h.deliveries.size()) + " arrived: " + h.failure();
        for (uint32_t i = 0; i < kCount; ++i) {
            uint32_t seq = ~0u;
            if (h.deliveries[i].data.size() == sizeof seq)
                std::memcpy(&seq, h.deliveries[i].data.data(), sizeof seq);
            if (seq != i)
                return me + ": out of order at " + std::to_string(i);
        }
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, EveryActiveMessageIdRoutes)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        for (int am = 0; am < 256; ++am) {
            uint8_t tag[2] = {static_cast<uint8_t>(am), static_cast<uint8_t>(ctx.my_rank)};
            if (send_bytes(h, ep, static_cast<uint8_t>(am), std::as_bytes(std::span(tag))) != WEFT_SUCCESS)
                return me + ": send failed";
        }
        if (!h.progress_until([&] { return h.deliveries.size() >= 256; }))
            return me + ": " + h.failure();
        for (int am = 0; am < 256; ++am) {
            const auto &d = h.deliveries[static_cast<size_t>(am)];
            if (d.ep != ep || d.am_id != am || d.data.size() != 2 || static_cast<int>(d.data[0]) != am ||
                static_cast<uint32_t>(d.data[1]) != ctx.peer_rank)
                return me + ": am id " + std::to_string(am) + " routed wrong";
        }
        return barrier(ctx);
    });
}

namespace {

// The parent floods without progress until the module pushes back (or a
// bound), then sends an end marker by retrying after progress; the child
// checks that every message arrived, in order. With sendi, small messages
// through the module's inline path (a socket or queue pair filling up
// while they go straight out).
std::string flood_then_drain(PeerContext &ctx, bool by_sendi)
{
    BtlHarness &h = ctx.harness;
    const std::string me = side_name(ctx);
    weft_btl_endpoint_t *ep = nullptr;
    if (std::string err = connect_peer(ctx, &ep); !err.empty())
        return err;
    const auto *ops = ep->module->ops;
    const weft_btl_caps_t &caps = ep->module->caps;
    if (by_sendi && (!ops->sendi || !(caps.flags & WEFT_BTL_FLAG_INLINE) || caps.inline_max < 16))
        return barrier(ctx);   // no inline path to flood (both sides have the same caps)
    if (ctx.side == Side::parent) {
        const uint32_t bound = by_sendi ? 400'000 : 50'000;
        std::vector<std::byte> filler(by_sendi ? std::min<size_t>(caps.inline_max, 200) : 1024);
        uint32_t sent = 0;
        int rc = WEFT_SUCCESS;
        for (; sent < bound; ++sent) {
            std::memcpy(filler.data(), &sent, sizeof sent);
            iovec iov{filler.data(), filler.size()};
            rc = by_sendi ? weft_btl_sendi(ep, 3, filler.data(), 8, filler.data() + 8, filler.size() - 8)
                          : weft_btl_send(ep, 3, &iov, 1);
            if (rc != WEFT_SUCCESS)
                break;
        }
        if (rc != WEFT_SUCCESS && rc != WEFT_ERR_AGAIN)
            return me + ": a full module must answer AGAIN, got " + weft_status_string(rc);
        if (!h.deliveries.empty())
            return me + ": an upcall ran inside send()";
        // The child starts draining only now, so the flood met a full
        // module (or the bound), whatever the machine's speed.
        if (!ctx.channel.send(std::string("full")))
            return me + ": channel broken";
        if (send_bytes(h, ep, 4, std::as_bytes(std::span(&sent, 1))) != WEFT_SUCCESS)
            return me + ": still refused after progress: " + h.failure();
    } else {
        if (!ctx.channel.receive(std::chrono::seconds(30)))
            return me + ": the parent never filled the module";
        if (!h.progress_until([&] { return !h.deliveries.empty() && h.deliveries.back().am_id == 4; }))
            return me + ": no end marker: " + h.failure();
        uint32_t count = 0;
        std::memcpy(&count, h.deliveries.back().data.data(), sizeof count);
        if (h.deliveries.size() != count + 1)
            return me + ": " + std::to_string(h.deliveries.size() - 1) + " arrived, " + std::to_string(count) +
                   " sent";
        for (uint32_t i = 0; i < count; ++i) {
            uint32_t seq = 0;
            std::memcpy(&seq, h.deliveries[i].data.data(), sizeof seq);
            if (seq != i)
                return me + ": out of order at " + std::to_string(i);
        }
    }
    return barrier(ctx);
}

} // namespace

TEST_P(BtlPeerConformance, AgainIsRetriableAfterProgress)
{
    mirror([](PeerContext &ctx) { return flood_then_drain(ctx, false); });
}

TEST_P(BtlPeerConformance, SendiFloodIsRetriableAndInOrder)
{
    mirror([](PeerContext &ctx) { return flood_then_drain(ctx, true); });
}

TEST_P(BtlPeerConformance, DisconnectDeliversFirstThenCloses)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        const auto before = pattern(200000, 9);
        if (ctx.side == Side::parent) {
            if (send_bytes(h, ep, 1, before) != WEFT_SUCCESS || weft_btl_disconnect(ep) != WEFT_SUCCESS)
                return me + ": send or disconnect failed";
            iovec iov{const_cast<std::byte *>(before.data()), 4};
            int rc = weft_btl_send(ep, 1, &iov, 1);
            if (rc >= 0 || rc == WEFT_ERR_AGAIN)
                return me + ": send after disconnect gave " + std::string(weft_status_string(rc));
            if (weft_btl_disconnect(ep) >= 0)
                return me + ": second disconnect succeeded";
        }
        weft_btl_endpoint_t *mine = ep;
        if (!h.progress_until([&] { return h.count_states(mine, WEFT_BTL_EP_CLOSED) > 0 ||
                                           h.count_states(mine, WEFT_BTL_EP_FAILED) > 0; }))
            return me + ": no CLOSED: " + h.failure();
        if (h.count_states(mine, WEFT_BTL_EP_CLOSED) != 1)
            return me + ": FAILED instead of CLOSED: " + h.states.back().reason;
        if (ctx.side == Side::child && (h.deliveries.size() != 1 || h.deliveries[0].data != before))
            return me + ": the message before the disconnect was not delivered first";
        for (int i = 0; i < 10; ++i)
            h.progress_once();
        if (h.count_states(mine, WEFT_BTL_EP_CLOSED) != 1)
            return me + ": more than one CLOSED";
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, MisuseIsAnErrorCodeNotACrash)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        const auto *ops = ep->module->ops;   // raw on purpose, as in MisuseIsAnErrorCodeNotACrash
        std::byte data[16] = {};
        iovec iov{data, sizeof data};
        iovec null_piece{nullptr, 8};
        auto hard = [](int rc) { return rc < 0 && rc != WEFT_ERR_AGAIN; };
        if (!hard(ops->send(nullptr, 0, &iov, 1)) || !hard(ops->send(ep, 0, &iov, -1)) ||
            !hard(ops->send(ep, 0, nullptr, 1)) || !hard(ops->send(ep, 0, &null_piece, 1)) ||
            !hard(ops->disconnect(nullptr)) || !hard(ops->card(ep->module, data, nullptr)))
            return me + ": misuse was not refused";
        if (ops->sendi && (ep->module->caps.flags & WEFT_BTL_FLAG_INLINE)) {
            // btl.h: sendi takes header + payload up to caps.inline_max, no more.
            std::vector<std::byte> over(ep->module->caps.inline_max + 1);
            if (!hard(ops->sendi(nullptr, 0, data, 1, nullptr, 0)) || !hard(ops->sendi(ep, 0, nullptr, 4, nullptr, 0)) ||
                !hard(ops->sendi(ep, 0, data, 1, nullptr, 4)) ||
                !hard(ops->sendi(ep, 0, over.data(), over.size(), nullptr, 0)) ||
                !hard(ops->sendi(ep, 0, over.data(), 1, over.data(), over.size() - 1)))
                return me + ": sendi misuse was not refused";
        }
        const size_t max_send = ep->module->caps.max_send, piece = size_t{1} << 20;
        if (max_send / piece <= 4096) {
            std::vector<std::byte> buf(piece);
            std::vector<iovec> over(max_send / piece + 1, iovec{buf.data(), piece});
            if (!hard(ops->send(ep, 0, over.data(), static_cast<int>(over.size()))))
                return me + ": a send above max_send was accepted";
        }
        for (int i = 0; i < 20; ++i)
            if (h.progress_once() < 0)
                return me + ": progress failed";
        if (std::string err = barrier(ctx); !err.empty())
            return err;
        for (int i = 0; i < 20; ++i)
            h.progress_once();
        if (!h.deliveries.empty())
            return me + ": a refused send was delivered";
        return barrier(ctx);
    });
}

TEST_P(BtlPeerConformance, FinalizeWithPendingWorkNeitherHangsNorCallsBack)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        // The child finalizes and then exits: its process, and with it
        // every queue pair it had, is gone, as when a rank ends abruptly.
        if (ctx.side == Side::child) {
            for (uint32_t i = 0; i < 100; ++i) {
                iovec iov{&i, sizeof i};
                weft_btl_send(ep, 2, &iov, 1);
            }
            auto big = pattern(size_t{4} << 20, 5);
            iovec iov{big.data(), std::min(big.size(), ep->module->caps.max_send)};
            weft_btl_send(ep, 2, &iov, 1);
            weft_btl_disconnect(ep);
            const size_t d = h.deliveries.size(), s = h.states.size();
            if (std::string err = h.finalize_modules(); !err.empty())
                return me + ": " + err;
            if (h.deliveries.size() != d || h.states.size() != s)
                return me + ": finalize ran an upcall";
            return barrier(ctx);
        }
        // The peer vanished with work in flight: CLOSED or FAILED, never a hang.
        // The child's barrier comes after its finalize, so from here on the
        // peer is gone or going (this side progresses while it waits and may
        // see the end already). A transport without a connection manager (openib's
        // oob cpc) learns that its peer is gone only when it sends (RC retries
        // run out), and the peer may have finalized before any of its frames
        // left: so this side sends now and then while it waits, as a live
        // program would.
        if (std::string err = barrier(ctx); !err.empty())
            return err;
        weft_btl_endpoint_t *mine = ep;
        unsigned polls = 0;
        if (!h.progress_until([&] {
                if (h.count_states(mine, WEFT_BTL_EP_CLOSED) > 0 || h.count_states(mine, WEFT_BTL_EP_FAILED) > 0)
                    return true;
                if (++polls % 4096 == 0) {
                    uint8_t probe = 0;
                    iovec iov{&probe, 1};
                    (void)weft_btl_send(mine, 2, &iov, 1);
                }
                return false;
            }))
            return me + ": the finalized peer's endpoint never closed or failed: " + h.failure();
        if (h.count_states(mine, WEFT_BTL_EP_FAILED) > 0 && h.states.back().reason.empty())
            return me + ": FAILED without a reason";
        return std::string();
    });
}

TEST_P(BtlPeerConformance, HandlerMaySendWithoutRecursion)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        constexpr size_t kRequests = 10;
        int nested = 0;
        std::string problem;
        // The handler is in place before connecting: the peer may connect and
        // send first, and its first requests then arrive within the very
        // progress call that reports this side's CONNECTED (openib's udcm
        // acceptor connects on the peer's first frame).
        h.on_recv = [&](const Delivery &d) {
            if (d.am_id != 1)
                return;
            const std::string reply = "reply";
            iovec iov{const_cast<char *>(reply.data()), reply.size()};
            if (weft_btl_send(d.ep, 3, &iov, 1) != WEFT_SUCCESS)
                problem = "send from the handler failed";
            int rc = weft_btl_progress(d.ep->module);
            nested += rc > 0 ? rc : 0;
        };
        weft_btl_endpoint_t *ep = nullptr;
        if (std::string err = connect_peer(ctx, &ep); !err.empty())
            return err;
        const std::string request = "request";
        for (size_t i = 0; i < kRequests; ++i)
            if (send_bytes(h, ep, 1, std::as_bytes(std::span(request.data(), request.size()))) != WEFT_SUCCESS)
                return me + ": request failed";
        // Each side answers the other's requests and gets its own replies.
        if (!h.progress_until([&] { return h.deliveries.size() >= 2 * kRequests; }))
            return me + ": " + h.failure();
        if (!problem.empty())
            return me + ": " + problem;
        if (h.max_upcall_depth != 1 || nested != 0)
            return me + ": an upcall was re-entered";
        return barrier(ctx);
    });
}

// ---- wait_fd: a receiver asleep on it is woken -----------------------------

namespace {

// A module with wait_fd but no prepare_wait keeps the descriptor readable
// on work unasked (btl.h): 0 then, as prepare_wait would say.
int prepare_wait(weft_btl_module_t *m)
{
    const int rc = weft_btl_prepare_wait(m);
    return rc == WEFT_ERR_NOT_SUPPORTED ? 0 : rc;
}

// Polls the module until it reports nothing to do and prepare_wait() says
// blocking is safe. "" or what failed.
std::string arm_idle_module(weft_btl_module_t *m)
{
    for (int i = 0; i < 100'000; ++i) {
        if (weft_btl_progress(m) > 0)
            continue;
        int rc = prepare_wait(m);
        if (rc == 0)
            return "";
        if (rc < 0)
            return "prepare_wait failed: " + std::string(weft_status_string(rc));
    }
    return "the module never became idle";
}

// 30 s: a guard against a lost wake-up hanging the test, not a threshold.
constexpr int kWakeGuardMs = 30'000;

} // namespace

// The receiver, after busy polling, sleeps in poll() on the wait_fd of the
// module that carries the connection (btl/tcp has one per interface); the
// sender sends only then. A small message, then a large one (fragments, or
// a placement, which also needs the wake-ups between its pieces). A module
// that takes its descriptors out of the epoll set while it polls (btl/tcp)
// must put them back in prepare_wait.
TEST_P(BtlPeerConformance, WaitFdWakesASleepingReceiver)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        if (!(h.module()->caps.flags & WEFT_BTL_FLAG_FD))
            return "";   // nothing to sleep on
        weft_btl_endpoint_t *ep = nullptr;
        if (auto err = connect_from_parent(ctx, &ep); !err.empty())
            return err;
        const size_t large = std::min(size_t{3} << 20, h.module()->caps.max_send);
        if (ctx.side == Side::parent) {
            if (int rc = send_bytes(h, ep, 7, pattern(8, 1)); rc)
                return "first send: " + std::string(weft_status_string(rc));
            for (size_t n : {size_t{24}, large}) {
                // Progress meanwhile: what this side queued may need it.
                if (!h.progress_until([&] { return ctx.channel.readable(); }))
                    return "the child never said it sleeps before the message of " + std::to_string(n) +
                           " bytes (was it woken by the one before?): " + h.failure();
                auto word = ctx.channel.receive(std::chrono::seconds(30));
                if (!word)
                    return "control channel broken";
                // Anything else is the child's failure report.
                if (std::string text(reinterpret_cast<const char *>(word->data()), word->size()); text != "sleeping")
                    return "the child failed: " + text;
                if (int rc = send_bytes(h, ep, 8, pattern(n, 2)); rc)
                    return "send while the peer sleeps: " + std::string(weft_status_string(rc)) + "; " +
                           h.state_story(ep);
            }
            if (!h.progress_until([&] { return h.deliveries.size() == 1; }))
                return "no verdict: " + h.failure();
            ctx.channel.send(std::string("done"));
            return "";
        }
        if (!h.progress_until([&] { return h.deliveries.size() == 1; }))
            return "first message missing: " + h.failure();
        weft_btl_endpoint_t *back = h.deliveries[0].ep;
        weft_btl_module_t *m = back->module;
        const int fd = weft_btl_wait_fd(m);
        if (fd < 0)
            return "WEFT_BTL_FLAG_FD without a wait_fd";
        for (size_t n : {size_t{24}, large}) {
            const size_t before = h.deliveries.size();
            if (auto err = arm_idle_module(m); !err.empty())
                return err;
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 0) != 0)
                return "wait_fd is readable with nothing to do";
            ctx.channel.send(std::string("sleeping"));
            // Asleep until the sender's wake-up; the peer sends only now.
            if (::poll(&p, 1, kWakeGuardMs) != 1)
                return "not woken by a message of " + std::to_string(n) + " bytes";
            // Woken: take the message, sleeping again between pieces.
            while (h.deliveries.size() == before) {
                if (weft_btl_progress(m) > 0)
                    continue;
                if (prepare_wait(m) == 0 && ::poll(&p, 1, kWakeGuardMs) != 1)
                    return "stalled inside a message of " + std::to_string(n) + " bytes";
            }
            const auto &d = h.deliveries.back();
            if (d.am_id != 8 || d.data.size() != n || checksum(d.data) != checksum(pattern(n, 2)))
                return "message of " + std::to_string(n) + " bytes corrupted";
        }
        if (int rc = send_bytes(h, back, 1, pattern(3, 3)); rc)
            return "verdict failed";
        // Delivered before this side finalizes and closes.
        if (!h.progress_until([&] { return ctx.channel.readable(); }))
            return "the parent never confirmed the verdict: " + h.failure();
        (void)ctx.channel.receive(std::chrono::seconds(30));
        return "";
    });
}

// The runtime's progress engine in block mode, every module a source: each
// side of a ping-pong sleeps in epoll on the wait_fds between messages, and
// every message arrives whole, small ones and every tenth of 1 MiB.
TEST_P(BtlPeerConformance, ProgressEngineBlockModeDeliversEverything)
{
    mirror([](PeerContext &ctx) -> std::string {
        BtlHarness &h = ctx.harness;
        const std::string me = side_name(ctx);
        if (!(h.module()->caps.flags & WEFT_BTL_FLAG_FD))
            return "";
        weft_btl_endpoint_t *ep = nullptr;
        if (auto err = connect_from_parent(ctx, &ep); !err.empty())
            return me + ": " + err;
        weft::rt::ProgressEngine pe;
        for (weft_btl_module_t *m : h.modules())
            pe.add([](void *c) {
                       auto *mm = static_cast<weft_btl_module_t *>(c);
                       return weft_btl_progress(mm);
                   },
                   m, weft_btl_wait_fd(m), 1, [](void *c) { return prepare_wait(static_cast<weft_btl_module_t *>(c)); });
        pe.set_mode(weft::rt::ProgressMode::Block, "test");
        if (pe.effective_mode() != weft::rt::ProgressMode::Block)
            return me + ": block mode is not effective (no wait_fd?)";
        constexpr uint32_t kRounds = 200;
        const size_t large = std::min((size_t{1} << 20) + 13, h.module()->caps.max_send);
        auto size_of = [&](uint32_t i) { return i % 10 == 4 ? large : size_t{4}; };
        weft_btl_endpoint_t *to = ep;
        for (uint32_t i = 0; i < kRounds; ++i) {
            const bool my_turn = (i % 2 == 0) == (ctx.side == Side::parent);
            if (my_turn) {
                if (int rc = send_bytes(h, to, 9, pattern(size_of(i), i)); rc)
                    return me + ": send " + std::to_string(i) + ": " + weft_status_string(rc);
                continue;
            }
            const size_t want = i / 2 + 1;
            if (!pe.wait_until([&] { return h.deliveries.size() >= want; },
                               std::chrono::milliseconds(kWakeGuardMs)))
                return me + ": message " + std::to_string(i) + " never arrived";
            const auto &d = h.deliveries.back();
            const size_t n = size_of(i);
            if (d.data.size() != n || checksum(d.data) != checksum(pattern(n, i)))
                return me + ": message " + std::to_string(i) + " corrupted";
            to = d.ep;
        }
        return barrier(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Transports, BtlPeerConformance, ::testing::ValuesIn(kTransports),
                         transport_name);

INSTANTIATE_TEST_SUITE_P(Transports, BtlConformance, ::testing::ValuesIn(kTransports),
                         transport_name);
