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
    Clock::time_point kill_at_;
    Clock::time_point give_up_at_;
    static constexpr std::chrono::milliseconds kGrace{1000};
};

} // namespace weftrun
