// SPDX-License-Identifier: BSD-3-Clause
// The main loop: one poll over the signalfd, the upcall wake pipe and the
// ranks' output pipes. Order per turn matters: reap first, then drain the
// upcall events, then judge, so a client_finalized posted before a rank
// exited is always seen before that exit is judged (P4, P6).
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "weftrun/launcher.hpp"
#include "rte/abort_note.hpp"
#include "weftrun/pmix_glue.hpp"
#include "weftrun/stack_traces.hpp"

namespace weftrun {

namespace {
void say(const std::string &s)
{
    std::string line = "weftrun: " + s + "\n";
    ssize_t r = write(STDERR_FILENO, line.data(), line.size());
    (void)r;
}
} // namespace

int Launcher::live_count() const
{
    return static_cast<int>(std::count_if(ranks_.begin(), ranks_.end(),
                                           [](const RankState &r) { return r.pid > 0 && !r.reaped; }));
}

int Launcher::find_rank(pid_t pid) const
{
    for (size_t i = 0; i < ranks_.size(); ++i)
        if (ranks_[i].pid == pid) return static_cast<int>(i);
    return -1;
}

void Launcher::signal_live(int sig)
{
    // The whole process group: the rank and anything it started.
    for (const auto &r : ranks_)
        if (r.pid > 0 && !r.reaped) kill(-r.pid, sig);
}

void Launcher::start_termination(int sig)
{
    if (terminating_) return;
    terminating_ = true;
    signal_live(sig);
    kill_at_ = Clock::now() + kGrace;
}

void Launcher::loop()
{
    std::optional<Clock::time_point> drain_until;
    for (;;) {
        const int live = live_count();
        if (live == 0) {
            // Every rank is gone; collect the rest of their output, but do
            // not wait for forgotten grandchildren holding a pipe open.
            if (!output_ || output_->all_closed()) return;
            if (!drain_until) drain_until = Clock::now() + std::chrono::milliseconds(1000);
            if (Clock::now() >= *drain_until) return;
        }
        // Next wake-up: the nearest of timeout, SIGKILL escalation, give-up.
        auto now = Clock::now();
        std::optional<Clock::time_point> next;
        auto consider = [&](Clock::time_point t) { if (!next || t < *next) next = t; };
        if (deadline_ && !terminating_) consider(*deadline_);
        if (terminating_ && !killed_) consider(kill_at_);
        if (killed_) consider(give_up_at_);
        if (drain_until) consider(*drain_until);
        if (pending_) consider(pending_->settle_by);
        int timeout_ms = -1;
        if (next)
            timeout_ms = static_cast<int>(std::max<long long>(
                0, std::chrono::duration_cast<std::chrono::milliseconds>(*next - now).count() + 1));

        std::vector<pollfd> fds{{sigfd_->fd(), POLLIN, 0}, {events_.wake_fd(), POLLIN, 0}};
        if (output_) output_->add_pollfds(fds);
        int n = poll(fds.data(), fds.size(), timeout_ms);
        if (n < 0 && errno != EINTR) { say(std::string("poll failed; ending the job")); exit_code_ = 1; start_termination(SIGKILL); }

        if (output_ && n > 0) output_->handle(fds);
        handle_signals();
        reap();
        handle_events();
        settle();

        now = Clock::now();
        if (deadline_ && !terminating_ && now >= *deadline_) {
            int l = live_count();
            say("the job ran longer than --timeout " + std::to_string(opts_.timeout_s) + " s; killing " +
                std::to_string(l) + (l == 1 ? " rank" : " ranks"));
            describe_live_ranks(ranks_, fences_done_, say);
            if (opts_.stack_traces) print_stack_traces(ranks_, kStackTraceLimitS, say);
            exit_code_ = 124;
            start_termination(SIGTERM);
        }
        if (terminating_ && !killed_ && now >= kill_at_ && live_count() > 0) {
            signal_live(SIGKILL);
            killed_ = true;
            give_up_at_ = now + std::chrono::seconds(5);
        }
        if (killed_ && now >= give_up_at_ && live_count() > 0) {
            say("some ranks did not die 5 s after SIGKILL (stuck in the kernel?); giving up on them");
            return;
        }
    }
}

void Launcher::handle_signals()
{
    for (const auto &[sig, pid] : sigfd_->read_all()) {
        switch (sig) {
        case SIGCHLD:
            // reap() runs every turn; this only keeps the order of deaths.
            if (std::find(death_order_.begin(), death_order_.end(), pid) == death_order_.end())
                death_order_.push_back(pid);
            break;
        case SIGUSR1:
        case SIGUSR2:
            // Application signals: pass on, the ranks decide what they mean.
            signal_live(sig);
            break;
        case SIGINT:
        case SIGTERM:
        case SIGHUP:
        case SIGQUIT:
            if (terminating_) {
                // A second ^C: stop waiting for the grace period.
                if (!killed_) { kill_at_ = Clock::now(); }
                break;
            }
            {
                int l = live_count();
                say("received signal " + signal_text(sig) + "; forwarding it to " + std::to_string(l) +
                    (l == 1 ? " rank" : " ranks") + " and ending the job");
            }
            exit_code_ = 128 + sig;
            // QUIT is not forwarded as such (it would core dump the ranks):
            // they get TERM.
            start_termination(sig == SIGQUIT ? SIGTERM : sig);
            break;
        default:
            break;
        }
    }
}

void Launcher::reap()
{
    std::vector<int> batch;
    // Reading the signalfd (for the order of deaths) also takes the SIGCHLD
    // of a rank that exits after the waitpid pass: every read is followed by
    // another pass, or that rank would stay a zombie that no signal wakes
    // the loop for (weftrun then slept until --timeout, or for good, after
    // every rank had exited).
    for (size_t seen = 0;; seen = batch.size()) {
        for (;;) {
            int ws = 0;
            pid_t pid = waitpid(-1, &ws, WNOHANG);
            if (pid <= 0) break;
            int r = find_rank(pid);
            if (r < 0) continue;   // not ours (cannot happen: we fork only ranks)
            ranks_[static_cast<size_t>(r)].reaped = true;
            ranks_[static_cast<size_t>(r)].wstatus = ws;
            batch.push_back(r);
        }
        if (batch.size() == seen) break;
        if (reap_pause_ms_ > 0) {   // tests widen the window between the pass and the read
            const timespec pause{reap_pause_ms_ / 1000, (reap_pause_ms_ % 1000) * 1000000L};
            nanosleep(&pause, nullptr);
        }
        // The SIGCHLDs of these exits, for their order.
        handle_signals();
    }
    if (batch.empty()) return;
    // Ranks in the order of their SIGCHLDs, those without one (their signal
    // was coalesced) after, as waitpid gave them.
    auto death_rank = [&](int r) {
        auto it = std::find(death_order_.begin(), death_order_.end(), ranks_[static_cast<size_t>(r)].pid);
        return it - death_order_.begin();
    };
    std::stable_sort(batch.begin(), batch.end(), [&](int a, int b) { return death_rank(a) < death_rank(b); });
    std::erase_if(death_order_, [&](pid_t p) { int r = find_rank(p); return r < 0 || ranks_[static_cast<size_t>(r)].reaped; });
    // Upcalls that happened before these exits are in the queue now.
    handle_events();
    judge_batch(batch);
}

void Launcher::handle_events()
{
    for (Event &e : events_.drain()) {
        RankState *r = (e.rank >= 0 && e.rank < static_cast<int>(ranks_.size())) ? &ranks_[static_cast<size_t>(e.rank)] : nullptr;
        switch (e.kind) {
        case Event::Kind::Connected:
            if (r) r->connected = true;
            break;
        case Event::Kind::Finalized:
            if (r) r->finalized = true;
            break;
        case Event::Kind::Fence:
            PmixServer::complete_fence(e);
            ++fences_done_;
            break;
        case Event::Kind::Abort:
            // Unblock the client first, then end the job like MPI_Abort,
            // unless the peers a weft rank names as failed caused it.
            PmixServer::complete_abort(e);
            if (!r) break;
            note_failure(abort_failure(e.rank, e.status, e.msg), weft::rt::parse_failed_peers(e.msg));
            break;
        }
    }
}

void Launcher::judge_batch(const std::vector<int> &batch)
{
    for (int r : batch)
        if (auto f = judge_exit(r, ranks_[static_cast<size_t>(r)])) note_failure(std::move(*f), {});
}

void Launcher::note_failure(Failure f, const std::vector<uint32_t> &named_failed)
{
    if (terminating_) return;   // the job is already ending; these are expected
    if (!pending_) {
        pending_.emplace();
        pending_->settle_by = Clock::now() + kSettle;
        // Ranks already on their way out end within moments; their ends
        // (a signal most of all) compete with this one.
        for (size_t i = 0; i < ranks_.size(); ++i)
            if (ranks_[i].pid > 0 && !ranks_[i].reaped && is_dying(ranks_[i].pid))
                pending_->awaited.push_back(static_cast<int>(i));
    }
    auto add = [](std::vector<int> &v, int r) {
        if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
    };
    for (uint32_t n : named_failed)
        if (n < ranks_.size() && static_cast<int>(n) != f.rank) {
            add(pending_->awaited, static_cast<int>(n));
            add(pending_->named, static_cast<int>(n));
        }
    // One failure per rank: the exit that follows an abort adds nothing.
    auto &seen = pending_->seen;
    if (std::any_of(seen.begin(), seen.end(), [&](const Failure &s) { return s.rank == f.rank; })) return;
    f.order = static_cast<int>(seen.size());
    seen.push_back(std::move(f));
}

void Launcher::settle()
{
    if (!pending_) return;
    if (terminating_) { pending_.reset(); return; }   // a signal or the timeout decided
    const auto &aw = pending_->awaited;
    const bool waiting = std::any_of(aw.begin(), aw.end(), [&](int r) { return !ranks_[static_cast<size_t>(r)].reaped; });
    if (waiting && Clock::now() < pending_->settle_by) return;
    const auto &named = pending_->named;
    for (auto &f : pending_->seen) f.prior = std::find(named.begin(), named.end(), f.rank) != named.end();
    const Failure cause = first_cause(pending_->seen);
    pending_.reset();
    const RankState &r = ranks_[static_cast<size_t>(cause.rank)];
    std::string b = banner(cause, r.pid, host_, live_count() - (r.reaped ? 0 : 1));
    ssize_t w = write(STDERR_FILENO, b.data(), b.size());
    (void)w;
    exit_code_ = cause.exit_code;
    start_termination(SIGTERM);
}

} // namespace weftrun
