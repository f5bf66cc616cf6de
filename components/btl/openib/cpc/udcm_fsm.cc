// SPDX-License-Identifier: BSD-3-Clause
#include "udcm_fsm.hpp"

#include <algorithm>
#include <utility>

#include <weft/status.h>

namespace weft::openib::udcm {

namespace {

long long ms(std::chrono::steady_clock::duration d)
{
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

} // namespace

const char *to_string(State s)
{
    switch (s) {
    case State::idle: return "idle";
    case State::req_sent: return "req_sent";
    case State::mra_rcvd: return "mra_rcvd";
    case State::awaiting_req: return "awaiting_req";
    case State::mra_sent: return "mra_sent";
    case State::rep_sent: return "rep_sent";
    case State::established: return "established";
    case State::dreq_sent: return "dreq_sent";
    case State::timewait: return "timewait";
    case State::closed: return "closed";
    case State::failed: return "failed";
    }
    return "unknown";
}

const char *to_string(Disposition d)
{
    switch (d) {
    case Disposition::handled: return "handled";
    case Disposition::duplicate: return "duplicate";
    case Disposition::stale: return "stale";
    case Disposition::unexpected: return "unexpected";
    case Disposition::other_job: return "other_job";
    case Disposition::other_rank: return "other_rank";
    case Disposition::new_attempt: return "new_attempt";
    }
    return "unknown";
}

Disposition screen(const Message &m, uint64_t job_hash, uint32_t my_rank)
{
    if (m.job_hash != job_hash)
        return Disposition::other_job;
    if (m.dst_rank != my_rank)
        return Disposition::other_rank;
    return Disposition::handled;
}

Message reject_without_connection(const Message &in, RejectReason reason, uint32_t my_rank)
{
    Message r;
    r.type = MsgType::rej;
    r.job_hash = in.job_hash;
    r.src_rank = my_rank;
    r.dst_rank = in.src_rank;
    r.src_id = 0;
    r.dst_id = in.src_id;
    r.reason = reason;
    r.rejected = in.type;
    return r;
}

Connection::Connection(Config config, uint32_t local_id, Actions &actions)
    : config_(std::move(config)), actions_(actions), local_id_(local_id)
{
}

std::string Connection::peer() const { return "rank " + std::to_string(config_.peer_rank); }

std::string Connection::tries_text(unsigned tries, TimePoint now) const
{
    return std::to_string(tries + 1) + " tries over " + std::to_string(ms(now - phase_start_)) + " ms (" +
           config_.retries_param + "=" + std::to_string(config_.retries) + ", " + config_.timeout_param + "=" +
           std::to_string(config_.timeout.count()) + " ms)";
}

Message Connection::make(MsgType type) const
{
    Message m;
    m.type = type;
    m.job_hash = config_.job_hash;
    m.src_rank = config_.my_rank;
    m.dst_rank = config_.peer_rank;
    m.src_id = local_id_;
    m.dst_id = type == MsgType::req ? 0 : remote_id_;
    m.attempt = tries_;
    if (type == MsgType::req || type == MsgType::rep) {
        m.rc = local_rc_;
        m.ud = config_.my_ud;
    }
    return m;
}

void Connection::send(MsgType type) { actions_.send(make(type)); }

void Connection::send_reject(uint32_t dst_id, MsgType rejected, RejectReason reason)
{
    Message r = make(MsgType::rej);
    r.dst_id = dst_id;
    r.reason = reason;
    r.rejected = rejected;
    actions_.send(r);
}

void Connection::send_mra()
{
    Message mra = make(MsgType::mra);
    mra.acknowledged = MsgType::req;
    // The initiator waits this long (plus its own timeout) before resending
    // REQ; the acceptor tries to prepare again after one timeout.
    mra.service_timeout_ms =
        static_cast<uint32_t>(std::min<long long>(2 * config_.timeout.count(), kMaxServiceTimeoutMs));
    actions_.send(mra);
}

void Connection::arm(TimePoint deadline)
{
    deadline_ = deadline;
    actions_.arm_timer(deadline);
}

std::chrono::milliseconds Connection::backoff(unsigned tries) const
{
    // Exponential, capped: a slow peer gets more time, a dead one is not
    // waited for forever.
    const unsigned shift = std::min(tries, 16u);
    const unsigned factor = std::min(1u << shift, std::max(config_.max_backoff, 1u));
    return config_.timeout * factor;
}

int Connection::ensure_prepared(std::string *why)
{
    if (prepared_)
        return WEFT_SUCCESS;
    const int rc = actions_.prepare_qp(&local_rc_, why);
    prepared_ = rc == WEFT_SUCCESS;
    return rc;
}

void Connection::fail(int status, RejectReason reason, const std::string &why)
{
    state_ = State::failed;
    fail_reason_ = reason;
    deadline_.reset();
    actions_.failed(status, why);
}

void Connection::start(TimePoint now)
{
    if (state_ != State::idle)
        return;
    initiator_ = true;
    std::string why;
    if (int rc = ensure_prepared(&why); rc != WEFT_SUCCESS) {
        fail(rc == WEFT_ERR_AGAIN ? WEFT_ERROR : rc, RejectReason::no_resources,
             "udcm: cannot prepare a queue pair to connect to " + peer() + ": " + why);
        return;
    }
    begin_phase(State::req_sent, MsgType::req, now);
}

Disposition Connection::on_message(const Message &m, TimePoint now)
{
    if (Disposition d = screen(m, config_.job_hash, config_.my_rank); d != Disposition::handled)
        return d;
    if (m.src_rank != config_.peer_rank)
        return Disposition::other_rank;
    if (m.dst_id != 0 && m.dst_id != local_id_) {
        // Addressed to an earlier connection of ours. Answering the two
        // messages whose sender otherwise keeps resending lets the peer's
        // side of that connection finish without waiting out its retries.
        // The answer names no id of ours (src_id 0): it is from no
        // connection the peer knows.
        if (m.type == MsgType::rep || m.type == MsgType::dreq) {
            Message answer = make(m.type == MsgType::rep ? MsgType::rej : MsgType::drep);
            answer.src_id = 0;
            answer.dst_id = m.src_id;
            answer.reason = RejectReason::invalid_comm_id;
            answer.rejected = m.type;
            actions_.send(answer);
        }
        return Disposition::stale;
    }
    switch (m.type) {
    case MsgType::req: return on_req(m, now);
    case MsgType::rep: return on_rep(m);
    case MsgType::rtu: return on_rtu(m);
    case MsgType::rej: return on_rej(m);
    case MsgType::mra: return on_mra(m, now);
    case MsgType::dreq: return on_dreq(m, now);
    case MsgType::drep: return on_drep(m, now);
    }
    return Disposition::unexpected;
}

Disposition Connection::on_req(const Message &m, TimePoint now)
{
    const bool peer_known = remote_id_ != 0;
    if (peer_known && m.src_id == remote_id_) {
        // A repeat of the request this connection is (or was) about.
        switch (state_) {
        case State::rep_sent: send(MsgType::rep); break;        // our REP was lost
        case State::mra_sent: send_mra(); break;
        case State::failed: send_reject(m.src_id, MsgType::req, fail_reason_); break; // we gave up
        default: break;   // connected or closing: the initiator has our REP already
        }
        return Disposition::duplicate;
    }
    if (peer_known) {
        // A new incarnation of the peer (see the header: stale connection).
        switch (state_) {
        case State::closed:
        case State::failed: return Disposition::new_attempt;
        case State::timewait:
            send_reject(m.src_id, MsgType::req, RejectReason::stale_connection);
            return Disposition::stale;
        case State::mra_sent:
        case State::rep_sent:
        case State::established:
        case State::dreq_sent: {
            const State was = state_;
            send_reject(m.src_id, MsgType::req, RejectReason::stale_connection);
            fail(WEFT_ERR_UNREACHABLE, RejectReason::stale_connection,
                 "udcm: stale connection: " + peer() + " sent a new connection request (id " +
                     std::to_string(m.src_id) + ") while connection " + std::to_string(local_id_) + "<->" +
                     std::to_string(remote_id_) + " was " + to_string(was) +
                     "; the peer dropped the old connection (restarted its endpoint?), so its traffic is lost");
            return Disposition::stale;
        }
        default: break;
        }
    }
    switch (state_) {
    case State::idle:
    case State::awaiting_req: accept(m, now); return Disposition::handled;
    case State::req_sent:
    case State::mra_rcvd:
        if (config_.my_rank < config_.peer_rank) {
            // Simultaneous connect, and our REQ wins. The peer's REQ got
            // here, so ours may have been lost: resend it now rather than at
            // our next timeout.
            send_reject(m.src_id, MsgType::req, RejectReason::simultaneous_connect);
            send(MsgType::req);
            return Disposition::handled;
        }
        accept(m, now);   // the lower rank's REQ wins: abandon ours
        return Disposition::handled;
    case State::closed:
    case State::failed: return Disposition::new_attempt;
    default: return Disposition::unexpected;
    }
}

void Connection::accept(const Message &req, TimePoint now)
{
    initiator_ = false;
    remote_id_ = req.src_id;
    remote_rc_ = req.rc;
    tries_ = 0;
    phase_start_ = now;
    try_accept(now);
}

void Connection::try_accept(TimePoint now)
{
    std::string why;
    const int rc = ensure_prepared(&why);
    if (rc == WEFT_ERR_AGAIN) {
        if (state_ == State::mra_sent && tries_ >= config_.retries) {
            send_reject(remote_id_, MsgType::req, RejectReason::no_resources);
            fail(WEFT_ERR_TIMEOUT, RejectReason::no_resources,
                 "udcm: could not prepare a queue pair for " + peer() + "'s connection request after " +
                     tries_text(tries_, now) + ": " + why);
            return;
        }
        if (state_ == State::mra_sent)
            ++tries_;
        state_ = State::mra_sent;
        send_mra();
        arm(now + config_.timeout);
        return;
    }
    if (rc != WEFT_SUCCESS) {
        send_reject(remote_id_, MsgType::req, RejectReason::no_resources);
        fail(rc, RejectReason::no_resources,
             "udcm: cannot prepare a queue pair for " + peer() + "'s connection request: " + why);
        return;
    }
    if (!ready_and_post(MsgType::req))
        return;
    begin_phase(State::rep_sent, MsgType::rep, now);
}

bool Connection::ready_and_post(MsgType answering)
{
    std::string why;
    int rc = actions_.ready_qp(remote_rc_, &why);
    std::string what = "cannot ready the queue pair toward " + peer() + " (its qpn " +
                       std::to_string(remote_rc_.qpn) + ")";
    if (rc == WEFT_SUCCESS) {
        rc = actions_.post_recvs(&why);
        what = "cannot post receives for " + peer();
    }
    if (rc == WEFT_SUCCESS)
        return true;
    send_reject(remote_id_, answering, RejectReason::no_resources);
    fail(rc, RejectReason::no_resources, "udcm: " + what + ": " + why);
    return false;
}

void Connection::begin_phase(State state, MsgType first, TimePoint now)
{
    state_ = state;
    tries_ = 0;
    phase_start_ = now;
    send(first);
    arm(now + backoff(0));
}

void Connection::become_established()
{
    state_ = State::established;
    deadline_.reset();
    tries_ = 0;
    actions_.connected();
}

Disposition Connection::on_rep(const Message &m)
{
    switch (state_) {
    case State::req_sent:
    case State::mra_rcvd:
    case State::awaiting_req: {
        // awaiting_req: the peer accepted our REQ after all (it was idle when
        // it came); that connection is as good as the one we waited for.
        initiator_ = true;
        remote_id_ = m.src_id;
        remote_rc_ = m.rc;
        if (!ready_and_post(MsgType::rep))
            return Disposition::handled;
        send(MsgType::rtu);
        become_established();
        return Disposition::handled;
    }
    case State::established:
    case State::dreq_sent:
        if (m.src_id != remote_id_)
            return Disposition::stale;
        if (state_ == State::established)
            send(MsgType::rtu);   // our RTU was lost: the acceptor still waits for it
        return Disposition::duplicate;
    case State::failed:
        if (m.src_id == remote_id_ || remote_id_ == 0)
            send_reject(m.src_id, MsgType::rep, fail_reason_);
        return Disposition::duplicate;
    default: return Disposition::unexpected;
    }
}

Disposition Connection::on_rtu(const Message &m)
{
    if (m.src_id != remote_id_)
        return Disposition::stale;
    if (state_ == State::rep_sent) {
        become_established();
        return Disposition::handled;
    }
    return state_ == State::established ? Disposition::duplicate : Disposition::unexpected;
}

Disposition Connection::on_rej(const Message &m)
{
    if (remote_id_ != 0 && m.src_id != 0 && m.src_id != remote_id_)
        return Disposition::stale;
    const bool req_pending =
        state_ == State::req_sent || state_ == State::mra_rcvd || state_ == State::awaiting_req;
    if (req_pending && m.rejected == MsgType::req) {
        switch (m.reason) {
        case RejectReason::simultaneous_connect:
            if (config_.my_rank > config_.peer_rank) {
                // The peer's REQ wins; it comes (or came) separately. Keep
                // the timer: on timeout our REQ pokes the peer again.
                state_ = State::awaiting_req;
                return Disposition::handled;
            }
            fail(WEFT_ERROR, m.reason,
                 "udcm: protocol error: " + peer() + " claims its connection request wins over ours, but rank " +
                     std::to_string(config_.my_rank) +
                     " is the lower rank (mixed weft versions in one job?)");
            return Disposition::handled;
        case RejectReason::stale_connection:
            // The peer held an older connection with us and is dropping it
            // now: our next resend (at the current deadline) finds it gone.
            return Disposition::handled;
        case RejectReason::wrong_job:
            fail(WEFT_ERR_UNREACHABLE, m.reason,
                 "udcm: the udcm at " + peer() + "'s address belongs to another job: a stale card, or two "
                 "jobs sharing the port with mixed-up addresses");
            return Disposition::handled;
        default:
            fail(WEFT_ERR_UNREACHABLE, m.reason,
                 "udcm: " + peer() + " rejected the connection request: " + to_string(m.reason));
            return Disposition::handled;
        }
    }
    if (m.rejected == MsgType::rep && (state_ == State::rep_sent || state_ == State::established)) {
        fail(WEFT_ERR_UNREACHABLE, m.reason,
             "udcm: " + peer() + " rejected the connection reply: " + to_string(m.reason));
        return Disposition::handled;
    }
    return Disposition::unexpected;   // e.g. a late REJ of a REQ we abandoned
}

Disposition Connection::on_mra(const Message &m, TimePoint now)
{
    const auto wait = std::chrono::milliseconds(m.service_timeout_ms) + config_.timeout;
    if ((state_ == State::req_sent || state_ == State::mra_rcvd) && m.acknowledged == MsgType::req) {
        const bool repeat = state_ == State::mra_rcvd;
        state_ = State::mra_rcvd;
        arm(now + wait);
        return repeat ? Disposition::duplicate : Disposition::handled;
    }
    if (state_ == State::rep_sent && m.acknowledged == MsgType::rep && m.src_id == remote_id_) {
        arm(now + wait);
        return Disposition::handled;
    }
    return Disposition::unexpected;
}

Disposition Connection::on_dreq(const Message &m, TimePoint now)
{
    if (m.src_id != remote_id_)
        return Disposition::stale;
    switch (state_) {
    case State::rep_sent:      // the initiator got our REP, lost its RTU and is leaving already
    case State::established:
    case State::dreq_sent:     // both disconnect at once
        send(MsgType::drep);
        enter_timewait(now, "udcm: " + peer() + " disconnected");
        return Disposition::handled;
    case State::timewait:
    case State::closed:
    case State::failed:
        send(MsgType::drep);   // our DREP was lost
        return Disposition::duplicate;
    default: return Disposition::unexpected;
    }
}

Disposition Connection::on_drep(const Message &m, TimePoint now)
{
    if (m.src_id != remote_id_ && m.src_id != 0)
        return Disposition::stale;
    if (state_ == State::dreq_sent) {
        enter_timewait(now, "udcm: disconnected from " + peer());
        return Disposition::handled;
    }
    return state_ == State::timewait || state_ == State::closed ? Disposition::duplicate : Disposition::unexpected;
}

void Connection::enter_timewait(TimePoint now, const std::string &why)
{
    state_ = State::timewait;
    tries_ = 0;
    arm(now + config_.timewait);
    actions_.closed(why);
}

void Connection::resend_req(TimePoint now)
{
    if (tries_ >= config_.retries) {
        fail(WEFT_ERR_TIMEOUT, RejectReason::timeout,
             "udcm: no answer from " + peer() + " to the connection request after " + tries_text(tries_, now) +
                 "; the peer may be dead or unreachable on this port; if it is only slow (Soft-RoCE, a loaded "
                 "node) raise " + config_.timeout_param + " or " + config_.retries_param);
        return;
    }
    ++tries_;
    state_ = State::req_sent;
    send(MsgType::req);
    arm(now + backoff(tries_));
}

void Connection::on_timer(TimePoint now)
{
    if (!deadline_ || now < *deadline_)
        return;
    deadline_.reset();
    switch (state_) {
    case State::req_sent:
    case State::mra_rcvd:
    case State::awaiting_req: resend_req(now); break;
    case State::mra_sent: try_accept(now); break;
    case State::rep_sent:
        if (tries_ >= config_.retries) {
            // Tell the initiator, in case it is alive but lost every RTU.
            send_reject(remote_id_, MsgType::rep, RejectReason::timeout);
            fail(WEFT_ERR_TIMEOUT, RejectReason::timeout,
                 "udcm: no RTU from " + peer() + " after " + tries_text(tries_, now) +
                     " of the connection reply; the peer may be dead or unreachable on this port; if it is only "
                     "slow raise " + config_.timeout_param + " or " + config_.retries_param);
            break;
        }
        ++tries_;
        send(MsgType::rep);
        arm(now + backoff(tries_));
        break;
    case State::dreq_sent:
        if (tries_ >= config_.retries) {
            enter_timewait(now, "udcm: " + peer() + " did not answer the disconnect request; closed anyway");
            break;
        }
        ++tries_;
        send(MsgType::dreq);
        arm(now + backoff(tries_));
        break;
    case State::timewait: state_ = State::closed; break;
    default: break;
    }
}

void Connection::on_traffic(TimePoint)
{
    if (state_ == State::rep_sent)
        become_established();
}

void Connection::disconnect(TimePoint now)
{
    switch (state_) {
    case State::rep_sent:
    case State::established:
        begin_phase(State::dreq_sent, MsgType::dreq, now);
        break;
    case State::mra_sent: {
        send_reject(remote_id_, MsgType::req, RejectReason::consumer);
        state_ = State::closed;
        deadline_.reset();
        break;
    }
    case State::dreq_sent:
    case State::timewait:
    case State::closed:
    case State::failed: break;
    default:
        // idle, or a REQ without an answer: the peer has no id of ours to
        // be told about; its attempt fails on its own timeout if it accepted.
        state_ = State::closed;
        deadline_.reset();
        break;
    }
}

} // namespace weft::openib::udcm
