// SPDX-License-Identifier: BSD-3-Clause
// The udcm cpc's connection state machine: the InfiniBand CM handshake
// between this process and one peer, as pure logic. No verbs, no clock and
// no sockets: events come in (start, on_message, on_timer, disconnect, each
// with the current time), and everything the machine wants done goes out
// through Actions (send a message, prepare / ready the RC QP, post receives,
// report connected / failed / closed, arm the timer). cpc_udcm.cc drives it
// from the UD queue pair and steady_clock; tests/unit/udcm_fsm_test.cc drives
// two of them through a simulated lossy network.
//
// Handshake (initiator I, acceptor A):
//
//   I: prepare_qp, REQ ------------->  A: prepare_qp, ready_qp, post_recvs
//                    <------------- REP
//   I: ready_qp, post_recvs, RTU --->  A: connected
//   I: connected
//
// The acceptor readies its QP and posts receives before its REP leaves, and
// the initiator before its RTU, so neither side can receive data on a QP
// that is not ready for it.
//
// States (names of the IB CM where one fits):
//   idle          nothing sent or received yet
//   req_sent      initiator: REQ sent, waiting for REP (resends REQ on timeout)
//   mra_rcvd      initiator: the acceptor sent MRA: REP will be late, REQ is not resent
//                 until the MRA's service timeout has passed
//   awaiting_req  initiator that lost a simultaneous connect: waits for the
//                 peer's REQ (pokes the peer with its own REQ on timeout)
//   mra_sent      acceptor: could not prepare its QP yet (prepare_qp said
//                 WEFT_ERR_AGAIN); told the initiator with MRA, tries again on timeout
//   rep_sent      acceptor: QP ready, REP sent, waiting for RTU (resends REP on timeout)
//   established   connected
//   dreq_sent     disconnect requested, waiting for DREP (resends DREQ on timeout)
//   timewait      disconnected; late messages of this connection are answered
//                 (DREQ -> DREP) or ignored until the timewait period ends
//   closed        finished after a disconnect
//   failed        finished after an error (reported once through Actions::failed)
//
// Identity. Each Connection has a local id (nonzero, chosen by the owner,
// different for every Connection of a process). Every message names the
// sender's id and the receiver's id as the sender knows it (0 in a REQ).
// A message naming another id of ours belongs to an earlier connection and
// is stale; a message from a different id of the peer than the one we
// connected with comes from a new incarnation of the peer's endpoint.
//
// Duplicates and losses. The acceptor answers a duplicate REQ by resending
// its REP (the REP was lost) or MRA; the initiator answers a duplicate REP by
// resending RTU (the RTU was lost); the acceptor resends REP on timeout until
// an RTU arrives. Each side gives up after Config::retries resends with a
// message naming the peer, the tries and the parameters to raise.
//
// Simultaneous connect. When both sides send a REQ at once, the REQ of the
// lower rank wins: the lower rank answers the higher rank's REQ with REJ
// (simultaneous_connect) and resends its own REQ at once; the higher rank
// abandons its own attempt and accepts the lower rank's REQ, whether that
// REQ or the REJ arrives first (after the REJ it waits in awaiting_req). Its
// QP, already prepared for its own REQ, is reused. Exactly one QP pair gets
// connected.
//
// Stale connection. A REQ from a new incarnation of the peer (a new sender
// id) while this side still holds a connection with the old one (mra_sent,
// rep_sent, established, dreq_sent) means the peer dropped the old
// connection, e.g. it restarted its endpoint: this side fails the old
// connection (its traffic is lost; reported through Actions::failed with
// "stale") and answers the REQ with REJ(stale_connection), as the IB CM
// does. The new initiator treats that REJ as "retry": it resends its REQ on
// its next timeout, which the owner of the failed Connection hands to a new
// Connection (on_message returns Disposition::new_attempt for a REQ of a new
// incarnation once a Connection is finished). In timewait the REQ is
// answered with REJ(stale_connection) too, until the timewait ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "udcm_wire.hpp"

namespace weft::openib::udcm {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

struct Config {
    uint64_t job_hash = 0;
    uint32_t my_rank = 0;
    uint32_t peer_rank = 0;
    UdAddress my_ud{};                               // the return address carried in REQ and REP
    std::chrono::milliseconds timeout{2000};         // first wait for an answer
    unsigned retries = 8;                            // resends before giving up
    unsigned max_backoff = 4;                        // the n-th resend waits timeout * min(2^n, max_backoff)
    std::chrono::milliseconds timewait{2000};        // how long a disconnected connection lingers
    // Named in failure messages as what to raise.
    std::string timeout_param = "btl_openib_cpc_udcm_timeout";
    std::string retries_param = "btl_openib_cpc_udcm_retries";
};

enum class State {
    idle, req_sent, mra_rcvd, awaiting_req, mra_sent, rep_sent, established, dreq_sent, timewait,
    closed, failed
};
const char *to_string(State s);

// What the machine wants done. Called synchronously from the event that
// caused it. connected(), failed() and closed() are the last thing an event
// does, but the owner must still not destroy the Connection from inside
// them (defer it until the event call returns).
class Actions {
public:
    virtual ~Actions() = default;
    virtual void send(const Message &m) = 0;
    // Creates (or resets) the local RC QP and fills its address. WEFT_SUCCESS,
    // WEFT_ERR_AGAIN when it cannot be done yet (the acceptor sends MRA and
    // tries again later), or another error with *why.
    virtual int prepare_qp(RcAddress *local, std::string *why) = 0;
    virtual int ready_qp(const RcAddress &remote, std::string *why) = 0;
    virtual int post_recvs(std::string *why) = 0;
    virtual void connected() = 0;
    virtual void failed(int status, const std::string &why) = 0;
    // The connection stopped carrying data after a disconnect (either side's).
    virtual void closed(const std::string &why) = 0;
    // on_timer should be called at (or after) deadline; a later arm replaces
    // an earlier one. A Connection without a deadline needs no timer.
    virtual void arm_timer(TimePoint deadline) = 0;
};

// What on_message did with a message (for counters, logs and tests).
enum class Disposition {
    handled,       // moved the connection forward
    duplicate,     // a repeat of something already handled; answered again if needed
    stale,         // belongs to another connection attempt (old ids); ignored or rejected
    unexpected,    // valid, but means nothing in this state; ignored
    other_job,     // another job's message (job hash differs); dropped
    other_rank,    // not from this Connection's peer to this rank; dropped
    new_attempt    // a REQ of a new incarnation of the peer reached a finished Connection:
                   // the owner should give it to a new Connection
};
const char *to_string(Disposition d);

// Whether a decoded message is for this process at all (job and rank). The
// owner checks it before routing a message by its sender's rank.
Disposition screen(const Message &m, uint64_t job_hash, uint32_t my_rank);

// A REJ answering `in` from a side that has no Connection for it (another
// job's REQ: wrong_job; openib refused the peer: consumer). It carries the
// job hash of `in`, so the sender accepts it and learns why.
Message reject_without_connection(const Message &in, RejectReason reason, uint32_t my_rank);

class Connection {
public:
    // local_id must be nonzero. actions must outlive the Connection.
    Connection(Config config, uint32_t local_id, Actions &actions);
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    // Connects actively: prepares the QP and sends REQ. Only from idle;
    // otherwise a connection is already under way (or over) and this does
    // nothing.
    void start(TimePoint now);
    Disposition on_message(const Message &m, TimePoint now);
    // Fires the timer if its deadline has passed (harmless otherwise).
    void on_timer(TimePoint now);
    // Orderly disconnect (DREQ/DREP); abandons an attempt still in progress.
    void disconnect(TimePoint now);
    // Data arrived on the RC QP before the RTU (the RTU is late or lost):
    // only an initiator that got our REP sends data, so the acceptor is
    // connected (the IB CM's ib_cm_establish). No effect in other states.
    void on_traffic(TimePoint now);

    State state() const { return state_; }
    bool finished() const { return state_ == State::closed || state_ == State::failed; }
    bool is_initiator() const { return initiator_; }
    uint32_t local_id() const { return local_id_; }
    uint32_t remote_id() const { return remote_id_; }
    uint32_t peer_rank() const { return config_.peer_rank; }
    std::optional<TimePoint> deadline() const { return deadline_; }

private:
    Message make(MsgType type) const;
    void send(MsgType type);
    void send_reject(uint32_t dst_id, MsgType rejected, RejectReason reason);
    void send_mra();
    void arm(TimePoint deadline);
    std::chrono::milliseconds backoff(unsigned tries) const;
    int ensure_prepared(std::string *why);

    Disposition on_req(const Message &m, TimePoint now);
    Disposition on_rep(const Message &m);
    Disposition on_rtu(const Message &m);
    Disposition on_rej(const Message &m);
    Disposition on_mra(const Message &m, TimePoint now);
    Disposition on_dreq(const Message &m, TimePoint now);
    Disposition on_drep(const Message &m, TimePoint now);

    // First message of a phase (REQ, REP, DREQ): state, send, timer.
    void begin_phase(State state, MsgType first, TimePoint now);
    // ready_qp then post_recvs; on failure REJ(no_resources) the message
    // being answered and fail.
    bool ready_and_post(MsgType answering);
    void become_established();
    void accept(const Message &req, TimePoint now);
    void try_accept(TimePoint now);
    void resend_req(TimePoint now);
    void enter_timewait(TimePoint now, const std::string &why);
    void fail(int status, RejectReason reason, const std::string &why);
    std::string peer() const;
    std::string tries_text(unsigned tries, TimePoint now) const;

    Config config_;
    Actions &actions_;
    uint32_t local_id_;
    uint32_t remote_id_ = 0;          // 0 until the peer's id is known
    State state_ = State::idle;
    bool initiator_ = false;
    bool prepared_ = false;           // local_rc_ is valid
    RcAddress local_rc_{};
    RcAddress remote_rc_{};
    unsigned tries_ = 0;              // resends in the current phase
    TimePoint phase_start_{};         // when the current phase's first message left
    std::optional<TimePoint> deadline_;
    RejectReason fail_reason_ = RejectReason::timeout;
};

} // namespace weft::openib::udcm
