// SPDX-License-Identifier: BSD-3-Clause
// The udcm connection state machine (udcm_fsm.hpp): two Connections, one
// per side, talk through a simulated network that the test controls (it
// drops, duplicates and delays messages) and a simulated clock (timers fire
// when the network is quiet; no sleeps, no wall clock). Every message goes
// through encode() and decode() on its way, as on the UD queue pair.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <weft/status.h>

#include "udcm_fsm.hpp"

using namespace weft::openib::udcm;
using namespace std::chrono_literals;

namespace {

class Net;

// One process's side of the connection: the Actions a Connection drives,
// recording what it was asked to do.
class Side final : public Actions {
public:
    Side(Net &net, uint32_t rank, uint32_t first_id) : net_(net), next_id_(first_id)
    {
        cfg.job_hash = job_hash("job-1");
        cfg.my_rank = rank;
        cfg.my_ud.qpn = 0x50 + rank;
        cfg.my_ud.lid = static_cast<uint16_t>(10 + rank);
        cfg.timeout = 100ms;
        cfg.retries = 3;
        cfg.max_backoff = 4;
        cfg.timewait = 200ms;
    }

    // A new Connection (a new endpoint incarnation) with the next id.
    void new_connection() { conn = std::make_unique<Connection>(cfg, next_id_++, *this); }

    void send(const Message &m) override;
    int prepare_qp(RcAddress *local_out, std::string *why) override
    {
        ++prepares;
        if (prepare_again > 0) {
            --prepare_again;
            *why = "no queue pair free yet";
            return WEFT_ERR_AGAIN;
        }
        if (prepare_fails) {
            *why = "ibv_create_qp: Cannot allocate memory";
            return WEFT_ERR_NO_MEMORY;
        }
        local = {};
        local.qpn = 0x1000 * (cfg.my_rank + 1) + static_cast<uint32_t>(prepares);
        local.psn = 0x777 + cfg.my_rank;
        local.mtu = 3;
        local.recv_credits = 64;
        *local_out = local;
        return WEFT_SUCCESS;
    }
    int ready_qp(const RcAddress &remote, std::string *) override
    {
        ++readies;
        readied_with = remote;
        return WEFT_SUCCESS;
    }
    int post_recvs(std::string *) override
    {
        ++posts;
        return WEFT_SUCCESS;
    }
    void connected() override { ++connects; }
    void failed(int status, const std::string &why) override
    {
        ++fails;
        fail_status = status;
        fail_why = why;
    }
    void closed(const std::string &why) override
    {
        ++closes;
        close_why = why;
    }
    void arm_timer(TimePoint deadline) override { armed = deadline; }

    size_t count_sent(MsgType t) const
    {
        return static_cast<size_t>(std::count_if(sent.begin(), sent.end(), [t](const Message &m) { return m.type == t; }));
    }

    Config cfg;
    std::unique_ptr<Connection> conn;
    int prepare_again = 0;       // prepare_qp says WEFT_ERR_AGAIN this many times
    bool prepare_fails = false;
    int prepares = 0, readies = 0, posts = 0, connects = 0, fails = 0, closes = 0;
    int fail_status = 0;
    std::string fail_why, close_why;
    RcAddress local{}, readied_with{};
    std::optional<TimePoint> armed;
    std::vector<Message> sent;
    std::vector<Disposition> dispositions;

private:
    Net &net_;
    uint32_t next_id_;
};

enum class Fate { deliver, drop, duplicate, delay };

class Net {
public:
    explicit Net(uint32_t rank_a = 0, uint32_t rank_b = 1) : a(*this, rank_a, 100), b(*this, rank_b, 200)
    {
        a.cfg.peer_rank = rank_b;
        b.cfg.peer_rank = rank_a;
        a.new_connection();
        b.new_connection();
    }

    void transmit(const Side &from, const Message &m)
    {
        Side &to = &from == &a ? b : a;
        Packet p{&to, encode(m)};
        switch (policy ? policy(m) : Fate::deliver) {
        case Fate::deliver: wire_.push_back(std::move(p)); break;
        case Fate::drop: ++dropped; break;
        case Fate::duplicate:
            wire_.push_back(p);
            wire_.push_back(std::move(p));
            break;
        case Fate::delay: delayed_.push_back(std::move(p)); break;
        }
    }

    // Delivers a message as if it came off the wire.
    Disposition inject(Side &to, const Message &m)
    {
        deliver(Packet{&to, encode(m)});
        return to.dispositions.back();
    }

    // Runs until nothing is in flight and no timer is due within limit:
    // delivers everything in flight, then fires the earliest timer (moving
    // the clock), then releases delayed messages in reverse order of
    // sending (so they arrive after a retransmission, and reordered).
    void run(Clock::duration limit = 10min)
    {
        const TimePoint end = now + limit;
        for (;;) {
            drain();
            const std::optional<TimePoint> next = earliest_deadline();
            if (next && *next <= end) {
                now = std::max(now, *next);
                a.conn->on_timer(now);
                b.conn->on_timer(now);
            } else if (delayed_.empty()) {
                break;
            }
            std::reverse(delayed_.begin(), delayed_.end());
            for (Packet &p : delayed_)
                wire_.push_back(std::move(p));
            delayed_.clear();
        }
    }

    // A policy that gives `fate` to the first n messages of type t.
    static std::function<Fate(const Message &)> first(MsgType t, Fate fate, int n = 1)
    {
        auto left = std::make_shared<int>(n);
        return [t, fate, left](const Message &m) {
            if (m.type == t && *left > 0) {
                --*left;
                return fate;
            }
            return Fate::deliver;
        };
    }
    static std::function<Fate(const Message &)> all(MsgType t, Fate fate)
    {
        return [t, fate](const Message &m) { return m.type == t ? fate : Fate::deliver; };
    }

    TimePoint now = TimePoint{} + 1h;
    Side a, b;
    std::function<Fate(const Message &)> policy;
    int dropped = 0;

private:
    struct Packet {
        Side *to;
        std::vector<uint8_t> bytes;
    };

    void deliver(const Packet &p)
    {
        Message m;
        std::string why;
        ASSERT_TRUE(decode(p.bytes, &m, &why)) << why;
        Disposition d = p.to->conn->on_message(m, now);
        if (d == Disposition::new_attempt) {
            // What cpc_udcm does: a finished connection's record gives way
            // to a new Connection for the peer's new attempt.
            p.to->new_connection();
            d = p.to->conn->on_message(m, now);
        }
        p.to->dispositions.push_back(d);
    }

    void drain()
    {
        for (int guard = 0; !wire_.empty(); ++guard) {
            ASSERT_LT(guard, 10000) << "message storm";
            Packet p = std::move(wire_.front());
            wire_.pop_front();
            deliver(p);
        }
    }

    std::optional<TimePoint> earliest_deadline() const
    {
        std::optional<TimePoint> da = a.conn->deadline(), db = b.conn->deadline();
        if (da && db)
            return std::min(*da, *db);
        return da ? da : db;
    }

    std::deque<Packet> wire_;
    std::vector<Packet> delayed_;
};

void Side::send(const Message &m)
{
    sent.push_back(m);
    net_.transmit(*this, m);
}

// Both sides connected exactly once, to each other's QP, each QP readied once.
void expect_one_qp_pair(const Net &net)
{
    for (const Side *s : {&net.a, &net.b}) {
        SCOPED_TRACE("rank " + std::to_string(s->cfg.my_rank));
        EXPECT_EQ(s->conn->state(), State::established);
        EXPECT_EQ(s->connects, 1);
        EXPECT_EQ(s->fails, 0) << s->fail_why;
        EXPECT_EQ(s->readies, 1);
        EXPECT_EQ(s->posts, 1);
        EXPECT_FALSE(s->conn->deadline().has_value());
    }
    EXPECT_EQ(net.a.readied_with.qpn, net.b.local.qpn);
    EXPECT_EQ(net.b.readied_with.qpn, net.a.local.qpn);
    EXPECT_EQ(net.a.conn->remote_id(), net.b.conn->local_id());
    EXPECT_EQ(net.b.conn->remote_id(), net.a.conn->local_id());
    EXPECT_NE(net.a.conn->is_initiator(), net.b.conn->is_initiator());
}

} // namespace

TEST(UdcmFsm, HappyPathConnectsOneQpPair)
{
    Net net;
    net.a.conn->start(net.now);
    EXPECT_EQ(net.a.conn->state(), State::req_sent);
    ASSERT_TRUE(net.a.armed.has_value());
    EXPECT_EQ(*net.a.armed, net.now + 100ms);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_TRUE(net.a.conn->is_initiator());
    EXPECT_EQ(net.a.count_sent(MsgType::req), 1u);
    EXPECT_EQ(net.b.count_sent(MsgType::rep), 1u);
    EXPECT_EQ(net.a.count_sent(MsgType::rtu), 1u);
    // The REQ and REP carried the QP and the UD return address.
    EXPECT_EQ(net.a.sent[0].rc.qpn, net.a.local.qpn);
    EXPECT_EQ(net.a.sent[0].ud.qpn, net.a.cfg.my_ud.qpn);
    EXPECT_EQ(net.b.sent[0].ud.lid, net.b.cfg.my_ud.lid);
    EXPECT_EQ(net.b.readied_with.recv_credits, 64u);
}

TEST(UdcmFsm, EachHandshakeMessageLostOnceStillConnects)
{
    for (MsgType lost : {MsgType::req, MsgType::rep, MsgType::rtu}) {
        SCOPED_TRACE(std::string("lost ") + to_string(lost));
        Net net;
        net.policy = Net::first(lost, Fate::drop);
        net.a.conn->start(net.now);
        net.run();
        EXPECT_EQ(net.dropped, 1);
        expect_one_qp_pair(net);
    }
}

TEST(UdcmFsm, LostRepIsResentOnTheDuplicateReq)
{
    Net net;
    net.b.cfg.timeout = 1s;   // b's own REP timer must not be what resends it
    net.b.new_connection();
    net.policy = Net::first(MsgType::rep, Fate::drop);
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_EQ(net.a.count_sent(MsgType::req), 2u);
    EXPECT_EQ(net.b.count_sent(MsgType::rep), 2u);
    EXPECT_EQ(net.a.sent[1].attempt, 1u);
    EXPECT_EQ(net.b.dispositions[1], Disposition::duplicate);
}

TEST(UdcmFsm, LostRtuIsResentOnTheRepeatedRep)
{
    Net net;
    net.policy = Net::first(MsgType::rtu, Fate::drop);
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_EQ(net.b.count_sent(MsgType::rep), 2u);   // resent on its timeout
    EXPECT_EQ(net.a.count_sent(MsgType::rtu), 2u);   // answered the duplicate REP
}

TEST(UdcmFsm, DuplicatedMessagesConnectOnce)
{
    Net net;
    net.policy = [](const Message &) { return Fate::duplicate; };
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_EQ(net.b.prepares, 1);
    EXPECT_EQ(net.a.prepares, 1);
}

TEST(UdcmFsm, ReorderedAndLateMessagesConnectOnce)
{
    // The first REQ arrives after its retransmission; the first REP after
    // its retransmission; then every message is late, arriving after the
    // next timer and in reverse order.
    for (MsgType late : {MsgType::req, MsgType::rep, MsgType::rtu}) {
        SCOPED_TRACE(std::string("late ") + to_string(late));
        Net net;
        net.policy = Net::first(late, Fate::delay);
        net.a.conn->start(net.now);
        net.run();
        expect_one_qp_pair(net);
    }
    Net net;
    net.policy = [](const Message &) { return Fate::delay; };
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
}

TEST(UdcmFsm, AllRequestsLostFailsAfterRetriesNamingPeerAndParameters)
{
    Net net;
    net.policy = Net::all(MsgType::req, Fate::drop);
    net.a.conn->start(net.now);
    const TimePoint started = net.now;
    net.run();
    EXPECT_EQ(net.a.conn->state(), State::failed);
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_EQ(net.a.fail_status, WEFT_ERR_TIMEOUT);
    EXPECT_EQ(net.a.count_sent(MsgType::req), 4u);   // the first and 3 retries
    for (uint32_t i = 0; i < 4; ++i)
        EXPECT_EQ(net.a.sent[i].attempt, i);
    // Backoff: 100, 200, 400, then capped at 4 x 100.
    EXPECT_EQ(net.now - started, 1100ms);
    const std::string &why = net.a.fail_why;
    EXPECT_NE(why.find("no answer from rank 1"), std::string::npos) << why;
    EXPECT_NE(why.find("4 tries over 1100 ms"), std::string::npos) << why;
    EXPECT_NE(why.find("btl_openib_cpc_udcm_retries=3"), std::string::npos) << why;
    EXPECT_NE(why.find("btl_openib_cpc_udcm_timeout=100 ms"), std::string::npos) << why;
    EXPECT_NE(why.find("raise btl_openib_cpc_udcm_timeout"), std::string::npos) << why;
    EXPECT_EQ(net.b.conn->state(), State::idle);
    EXPECT_EQ(net.b.connects + net.b.fails, 0);
}

TEST(UdcmFsm, AllRtusLostFailsBothSides)
{
    Net net;
    net.policy = Net::all(MsgType::rtu, Fate::drop);
    net.a.conn->start(net.now);
    net.run();
    // The acceptor gives up after its REP retries and says so with REJ;
    // the initiator, connected in the meantime, learns it is not.
    EXPECT_EQ(net.b.fails, 1);
    EXPECT_EQ(net.b.fail_status, WEFT_ERR_TIMEOUT);
    EXPECT_NE(net.b.fail_why.find("no RTU from rank 0 after 4 tries"), std::string::npos) << net.b.fail_why;
    EXPECT_EQ(net.b.count_sent(MsgType::rep), 4u);
    EXPECT_EQ(net.b.connects, 0);
    EXPECT_EQ(net.a.connects, 1);
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_NE(net.a.fail_why.find("rank 1 rejected the connection reply: timeout"), std::string::npos)
        << net.a.fail_why;
}

TEST(UdcmFsm, RejectFailsTheInitiatorWithTheReason)
{
    Net net;
    net.b.prepare_fails = true;
    net.a.conn->start(net.now);
    net.run();
    EXPECT_EQ(net.b.fails, 1);
    EXPECT_EQ(net.b.fail_status, WEFT_ERR_NO_MEMORY);
    EXPECT_NE(net.b.fail_why.find("Cannot allocate memory"), std::string::npos) << net.b.fail_why;
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_EQ(net.a.conn->state(), State::failed);
    EXPECT_NE(net.a.fail_why.find("rank 1 rejected the connection request: no resources"), std::string::npos)
        << net.a.fail_why;
    EXPECT_EQ(net.a.count_sent(MsgType::req), 1u) << "a REJ ends the attempt; no retries";
    EXPECT_FALSE(net.a.conn->deadline().has_value());
}

TEST(UdcmFsm, RejectWithoutConnectionReachesTheRequester)
{
    // openib refused the peer (CpcHost::incoming said no): cpc_udcm answers
    // without making a Connection.
    Net net;
    net.policy = [](const Message &) { return Fate::drop; };
    net.a.conn->start(net.now);
    net.policy = nullptr;
    const Message req = net.a.sent.at(0);
    EXPECT_EQ(net.inject(net.a, reject_without_connection(req, RejectReason::consumer, 1)), Disposition::handled);
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_NE(net.a.fail_why.find("refused by the peer's openib"), std::string::npos) << net.a.fail_why;

    // Another job's REQ: screened out, answered with wrong_job in the
    // requester's own job, which it accepts and understands.
    Net other;
    other.b.cfg.job_hash = job_hash("job-2");
    other.b.new_connection();
    other.policy = [](const Message &) { return Fate::drop; };
    other.a.conn->start(other.now);
    other.policy = nullptr;
    const Message foreign = other.a.sent.at(0);
    EXPECT_EQ(screen(foreign, other.b.cfg.job_hash, 1), Disposition::other_job);
    EXPECT_EQ(other.b.conn->on_message(foreign, other.now), Disposition::other_job);
    EXPECT_TRUE(other.b.sent.empty());
    EXPECT_EQ(other.inject(other.a, reject_without_connection(foreign, RejectReason::wrong_job, 1)),
              Disposition::handled);
    EXPECT_NE(other.a.fail_why.find("belongs to another job"), std::string::npos) << other.a.fail_why;
}

TEST(UdcmFsm, MessagesOfAnotherJobOrRankAreDropped)
{
    Net net;
    net.a.conn->start(net.now);
    Message rep = net.a.sent.at(0);   // shape a REP to a from b by hand
    rep.type = MsgType::rep;
    rep.src_rank = 1;
    rep.dst_rank = 0;
    rep.src_id = 999;
    rep.dst_id = net.a.conn->local_id();
    Message wrong = rep;
    wrong.job_hash = job_hash("job-2");
    EXPECT_EQ(net.a.conn->on_message(wrong, net.now), Disposition::other_job);
    wrong = rep;
    wrong.dst_rank = 7;
    EXPECT_EQ(net.a.conn->on_message(wrong, net.now), Disposition::other_rank);
    wrong = rep;
    wrong.src_rank = 5;
    EXPECT_EQ(net.a.conn->on_message(wrong, net.now), Disposition::other_rank);
    EXPECT_EQ(net.a.conn->state(), State::req_sent);
    EXPECT_EQ(net.a.readies, 0);
    // A REP naming another connection id of a is stale: refused with
    // invalid_comm_id from no connection (src id 0) so its sender stops.
    wrong = rep;
    wrong.dst_id = net.a.conn->local_id() + 1;
    const size_t before = net.a.sent.size();
    EXPECT_EQ(net.a.conn->on_message(wrong, net.now), Disposition::stale);
    ASSERT_EQ(net.a.sent.size(), before + 1);
    EXPECT_EQ(net.a.sent.back().type, MsgType::rej);
    EXPECT_EQ(net.a.sent.back().reason, RejectReason::invalid_comm_id);
    EXPECT_EQ(net.a.sent.back().src_id, 0u);
    EXPECT_EQ(net.a.conn->state(), State::req_sent);
}

TEST(UdcmFsm, MraHoldsRetransmissionsWhileTheAcceptorIsBusy)
{
    Net net;
    net.b.prepare_again = 2;   // b cannot make its QP for two tries
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_EQ(net.b.count_sent(MsgType::mra), 2u);
    EXPECT_EQ(net.b.prepares, 3);
    // Without the MRAs a would have resent REQ at 100 ms and 300 ms.
    EXPECT_EQ(net.a.count_sent(MsgType::req), 1u);
}

TEST(UdcmFsm, AcceptorThatNeverGetsItsQpGivesUp)
{
    Net net;
    net.b.prepare_again = 1000;
    net.a.conn->start(net.now);
    net.run();
    EXPECT_EQ(net.b.fails, 1);
    EXPECT_EQ(net.b.fail_status, WEFT_ERR_TIMEOUT);
    EXPECT_NE(net.b.fail_why.find("could not prepare a queue pair for rank 0"), std::string::npos) << net.b.fail_why;
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_NE(net.a.fail_why.find("no resources"), std::string::npos) << net.a.fail_why;
    EXPECT_EQ(net.a.count_sent(MsgType::req), 1u);
}

// Simultaneous connect, for both orders of ranks between the two sides and
// with each side's REQ lost once.
struct SimultaneousCase {
    uint32_t rank_a, rank_b;
    std::optional<uint32_t> req_lost_from;   // the rank whose first REQ is lost
};

class UdcmFsmSimultaneous : public ::testing::TestWithParam<SimultaneousCase> {};

TEST_P(UdcmFsmSimultaneous, TheLowerRanksRequestWinsAndOneQpPairConnects)
{
    const SimultaneousCase c = GetParam();
    Net net(c.rank_a, c.rank_b);
    if (c.req_lost_from) {
        auto left = std::make_shared<int>(1);
        const uint32_t from = *c.req_lost_from;
        net.policy = [left, from](const Message &m) {
            if (m.type == MsgType::req && m.src_rank == from && *left > 0) {
                --*left;
                return Fate::drop;
            }
            return Fate::deliver;
        };
    }
    net.a.conn->start(net.now);
    net.b.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    Side &lower = c.rank_a < c.rank_b ? net.a : net.b;
    Side &higher = c.rank_a < c.rank_b ? net.b : net.a;
    EXPECT_TRUE(lower.conn->is_initiator());
    EXPECT_FALSE(higher.conn->is_initiator());
    // The higher rank reused the QP it had prepared for its own REQ.
    EXPECT_EQ(higher.prepares, 1);
    EXPECT_EQ(lower.prepares, 1);
    EXPECT_EQ(lower.count_sent(MsgType::rep), 0u);
    EXPECT_EQ(higher.count_sent(MsgType::rtu), 0u);
}

// Named Udcm* so that --gtest_filter='Udcm*' runs it.
INSTANTIATE_TEST_SUITE_P(UdcmBothRankOrders, UdcmFsmSimultaneous,
                         ::testing::Values(SimultaneousCase{0, 1, std::nullopt},
                                           SimultaneousCase{5, 2, std::nullopt},
                                           SimultaneousCase{0, 1, 0u}, SimultaneousCase{0, 1, 1u},
                                           SimultaneousCase{5, 2, 2u}, SimultaneousCase{5, 2, 5u}));

TEST(UdcmFsm, SimultaneousConnectRejectArrivingBeforeTheWinningRequest)
{
    // The higher rank hears REJ(simultaneous_connect) before the lower
    // rank's REQ (delayed): it waits in awaiting_req, then accepts.
    Net net(0, 1);
    auto left = std::make_shared<int>(1);
    net.policy = [left](const Message &m) {
        if (m.type == MsgType::req && m.src_rank == 0 && *left > 0) {
            --*left;
            return Fate::delay;
        }
        return Fate::deliver;
    };
    net.a.conn->start(net.now);
    net.b.conn->start(net.now);
    EXPECT_EQ(net.b.conn->state(), State::req_sent);
    net.run();
    expect_one_qp_pair(net);
    EXPECT_TRUE(net.a.conn->is_initiator());
}

TEST(UdcmFsm, SecondStartWhileAcceptingDoesNothing)
{
    Net net;
    net.b.conn->start(net.now);   // higher rank connects first, alone
    net.run();
    net.a.conn->start(net.now);   // the lower rank's runtime asks too, late
    net.run();
    expect_one_qp_pair(net);
    EXPECT_TRUE(net.b.conn->is_initiator());
    EXPECT_EQ(net.a.count_sent(MsgType::req), 0u);
}

TEST(UdcmFsm, StaleConnectionIsFailedAndTheNewAttemptConnects)
{
    Net net;
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    const uint32_t old_b = net.b.conn->local_id();
    const uint32_t old_a = net.a.conn->local_id();

    // b restarts its endpoint: a new Connection (new id) connects again.
    net.b.new_connection();
    net.b.conn->start(net.now);
    net.run();
    // a failed its old connection as stale and told b to retry ...
    EXPECT_EQ(net.a.fails, 1);
    EXPECT_EQ(net.a.fail_status, WEFT_ERR_UNREACHABLE);
    EXPECT_NE(net.a.fail_why.find("stale connection"), std::string::npos) << net.a.fail_why;
    EXPECT_NE(net.a.fail_why.find("restarted its endpoint"), std::string::npos) << net.a.fail_why;
    EXPECT_EQ(net.a.count_sent(MsgType::rej), 1u);
    // ... whose retry reached a new Connection on a's side, and connected.
    EXPECT_NE(net.a.conn->local_id(), old_a);
    EXPECT_NE(net.b.conn->remote_id(), old_a);
    EXPECT_EQ(net.a.conn->remote_id(), net.b.conn->local_id());
    EXPECT_EQ(net.a.conn->state(), State::established);
    EXPECT_EQ(net.b.conn->state(), State::established);
    EXPECT_EQ(net.a.connects, 2);
    EXPECT_EQ(net.b.connects, 2);
    EXPECT_EQ(net.a.readied_with.qpn, net.b.local.qpn);
    EXPECT_EQ(net.b.readied_with.qpn, net.a.local.qpn);
    EXPECT_EQ(net.b.fails, 0) << net.b.fail_why;

    // A late RTU of the old incarnation is recognised and ignored.
    Message old_rtu;
    old_rtu.type = MsgType::rtu;
    old_rtu.job_hash = net.a.cfg.job_hash;
    old_rtu.src_rank = 1;
    old_rtu.dst_rank = 0;
    old_rtu.src_id = old_b;
    old_rtu.dst_id = old_a;
    EXPECT_EQ(net.inject(net.a, old_rtu), Disposition::stale);
    EXPECT_EQ(net.a.conn->state(), State::established);
}

TEST(UdcmFsm, DisconnectClosesBothSidesThroughTimewait)
{
    Net net;
    net.a.conn->start(net.now);
    net.run();
    expect_one_qp_pair(net);
    net.a.conn->disconnect(net.now);
    EXPECT_EQ(net.a.conn->state(), State::dreq_sent);
    net.run(10ms);   // DREQ and DREP travel; timewait not over
    EXPECT_EQ(net.a.conn->state(), State::timewait);
    EXPECT_EQ(net.b.conn->state(), State::timewait);
    EXPECT_EQ(net.a.closes, 1);
    EXPECT_EQ(net.b.closes, 1);
    EXPECT_NE(net.b.close_why.find("rank 0 disconnected"), std::string::npos) << net.b.close_why;
    // In timewait a new incarnation's REQ is refused as stale.
    Message req = net.a.sent.at(0);
    req.src_id = 4242;
    EXPECT_EQ(net.inject(net.b, req), Disposition::stale);
    EXPECT_EQ(net.b.sent.back().reason, RejectReason::stale_connection);
    net.run();
    EXPECT_EQ(net.a.conn->state(), State::closed);
    EXPECT_EQ(net.b.conn->state(), State::closed);
    EXPECT_TRUE(net.a.conn->finished());
    EXPECT_EQ(net.a.fails + net.b.fails, 0);
}

// Both sides went through timewait to closed, each told once.
void expect_both_closed(const Net &net)
{
    for (const Side *s : {&net.a, &net.b}) {
        SCOPED_TRACE("rank " + std::to_string(s->cfg.my_rank));
        EXPECT_EQ(s->conn->state(), State::closed);
        EXPECT_EQ(s->closes, 1);
        EXPECT_EQ(s->fails, 0) << s->fail_why;
    }
}

TEST(UdcmFsm, DisconnectWithLostDrepIsAnsweredFromTimewait)
{
    Net net;
    net.a.conn->start(net.now);
    net.run();
    net.policy = Net::first(MsgType::drep, Fate::drop);
    net.a.conn->disconnect(net.now);
    net.run();
    EXPECT_EQ(net.a.count_sent(MsgType::dreq), 2u);
    EXPECT_EQ(net.b.count_sent(MsgType::drep), 2u);
    expect_both_closed(net);
}

TEST(UdcmFsm, DisconnectFromBothSidesAtOnce)
{
    Net net;
    net.a.conn->start(net.now);
    net.run();
    net.a.conn->disconnect(net.now);
    net.b.conn->disconnect(net.now);
    net.run();
    expect_both_closed(net);
}

TEST(UdcmFsm, DisconnectFromAGonePeerClosesAfterRetries)
{
    Net net;
    net.a.conn->start(net.now);
    net.run();
    net.policy = Net::all(MsgType::dreq, Fate::drop);
    net.a.conn->disconnect(net.now);
    net.run();
    EXPECT_EQ(net.a.count_sent(MsgType::dreq), 4u);
    EXPECT_EQ(net.a.conn->state(), State::closed);
    EXPECT_NE(net.a.close_why.find("did not answer"), std::string::npos) << net.a.close_why;
}

TEST(UdcmFsm, TrafficBeforeTheRtuEstablishesTheAcceptor)
{
    Net net;
    net.policy = Net::all(MsgType::rtu, Fate::drop);
    net.a.conn->start(net.now);
    net.run(1ms);   // REQ, REP; the RTU is lost and no timer is due yet
    EXPECT_EQ(net.a.conn->state(), State::established);
    EXPECT_EQ(net.b.conn->state(), State::rep_sent);
    net.a.conn->on_traffic(net.now);   // no effect on an initiator
    net.b.conn->on_traffic(net.now);   // openib saw the initiator's first data
    net.run();
    expect_one_qp_pair(net);
    EXPECT_EQ(net.b.count_sent(MsgType::rep), 1u) << "no REP resent after the traffic";
}
