// The main loop: one poll over the signalfd, the upcall wake pipe and the
// ranks' output pipes. Order per turn matters: reap first, then drain the
// upcall events, then judge, so a client_finalized posted before a rank
// exited is always seen before that exit is judged (P4, P6).
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "weftrun/launcher.hpp"
#include "weftrun/pmix_glue.hpp"

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

        now = Clock::now();
        if (deadline_ && !terminating_ && now >= *deadline_) {
            int l = live_count();
            say("the job ran longer than --timeout " + std::to_string(opts_.timeout_s) + " s; killing " +
                std::to_string(l) + (l == 1 ? " rank" : " ranks"));
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
    for (int sig : sigfd_->read_all()) {
        switch (sig) {
        case SIGCHLD:
            break;   // reap() runs every turn
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
    if (batch.empty()) return;
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
            break;
        case Event::Kind::Abort: {
            // Unblock the client first, then end the job like MPI_Abort.
            PmixServer::complete_abort(e);
            if (terminating_ || !r) break;
            Failure f = abort_failure(e.rank, e.status, e.msg);
            int others = live_count() - (r->reaped ? 0 : 1);
            std::string b = banner(f, r->pid, host_, others);
            ssize_t w = write(STDERR_FILENO, b.data(), b.size());
            (void)w;
            exit_code_ = f.exit_code;
            start_termination(SIGTERM);
            break;
        }
        }
    }
}

void Launcher::judge_batch(const std::vector<int> &batch)
{
    if (terminating_) return;   // the job is already ending; these are expected
    std::optional<Failure> worst;
    for (int r : batch) {
        auto f = judge_exit(r, ranks_[static_cast<size_t>(r)]);
        if (f && (!worst || f->severity < worst->severity)) worst = f;
    }
    if (!worst) return;
    std::string b = banner(*worst, ranks_[static_cast<size_t>(worst->rank)].pid, host_, live_count());
    ssize_t w = write(STDERR_FILENO, b.data(), b.size());
    (void)w;
    exit_code_ = worst->exit_code;
    start_termination(SIGTERM);
}

} // namespace weftrun
