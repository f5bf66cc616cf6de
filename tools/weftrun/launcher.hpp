// SPDX-License-Identifier: BSD-3-Clause
// One job, start to end: placement, session dir, PMIx server, ranks, then
// the event loop (launcher_loop.cc) until every rank is gone.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "weftrun/events.hpp"
#include "weftrun/judge.hpp"
#include "weftrun/options.hpp"
#include "weftrun/output.hpp"
#include "weftrun/placement.hpp"
#include "weftrun/session_dir.hpp"
#include "weftrun/signals.hpp"

namespace weftrun {

class Launcher {
public:
    Launcher(Options opts, std::string program_path);
    // Runs the job and never returns: the exit status follows the rules in
    // weftrun(1); the session dir is removed on every path.
    [[noreturn]] void run();

private:
    using Clock = std::chrono::steady_clock;

    // launcher.cc: setup and teardown
    void setup();
    void spawn_all();
    [[noreturn]] void fail_setup(const std::string &msg, int code = 1);
    [[noreturn]] void finish();

    // launcher_loop.cc
    void loop();
    void reap();
    void handle_events();
    void handle_signals();
    void judge_batch(const std::vector<int> &ranks);
    void note_failure(Failure f, const std::vector<uint32_t> &named_failed);
    void settle();
    void start_termination(int sig);
    void signal_live(int sig);
    int live_count() const;
    int find_rank(pid_t pid) const;

    Options opts_;
    std::string program_;
    std::string host_;
    std::string nspace_;
    bool debug_ = false;
    std::unique_ptr<Placement> placement_;
    std::vector<RankPlacement> places_;
    BindTo bind_ = BindTo::None;
    std::optional<SessionDir> session_;
    std::optional<SignalFd> sigfd_;
    EventQueue events_;
    bool pmix_up_ = false;
    std::unique_ptr<OutputForwarder> output_;
    std::vector<RankState> ranks_;

    // Termination: the first failure decides the exit status; after it,
    // ranks get SIGTERM (or the forwarded signal) and SIGKILL at kill_at_.
    bool terminating_ = false;
    bool killed_ = false;
    int exit_code_ = 0;
    std::optional<Clock::time_point> deadline_;   // --timeout
    unsigned fences_done_ = 0;                    // told on --timeout
    int reap_pause_ms_ = 0;                       // WEFTRUN_TEST_REAP_PAUSE_MS (tests)
    static constexpr int kStackTraceLimitS = 20;  // gdb's time per rank
    Clock::time_point kill_at_;
    Clock::time_point give_up_at_;
    static constexpr std::chrono::milliseconds kGrace{1000};

    // The verdict: a failure is not judged alone. Ranks that were already
    // dying when it was seen, and peers a survivor's abort names as failed,
    // are waited for (up to kSettle, though a dying rank takes moments), so
    // that their ends are judged with it: a named peer's failure is the
    // cause of the abort naming it; otherwise a signal beats an exit (a
    // survivor exits 1 when a killed peer's connection drops), and the
    // first rank to end wins a tie.
    struct Pending {
        std::vector<Failure> seen;
        std::vector<int> awaited;
        std::vector<int> named;
        Clock::time_point settle_by;
    };
    std::optional<Pending> pending_;
    static constexpr std::chrono::milliseconds kSettle{3000};
    // Pids from SIGCHLD, in the order the children ended (see
    // SignalFd::read_all), to judge one batch of exits in that order.
    std::vector<pid_t> death_order_;
};

} // namespace weftrun
