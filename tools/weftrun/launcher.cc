// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/launcher.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weftrun/limits.hpp"
#include "weftrun/pmix_glue.hpp"
#include "weftrun/rank_env.hpp"
#include "weftrun/spawn.hpp"

extern char **environ;

namespace weftrun {

namespace {
std::string hostname()
{
    char h[256] = {0};
    if (gethostname(h, sizeof h - 1) != 0) return "localhost";
    return h;
}

void say(const std::string &s)
{
    std::string line = "weftrun: " + s + "\n";
    ssize_t r = write(STDERR_FILENO, line.data(), line.size());
    (void)r;
}
} // namespace

Launcher::Launcher(Options opts, std::string program_path)
    : opts_(std::move(opts)), program_(std::move(program_path)), host_(hostname())
{
    const char *d = std::getenv("WEFTRUN_DEBUG");
    debug_ = d && *d && std::strcmp(d, "0") != 0;
    // For tests only: a pause in reap() between its waitpid pass and its
    // read of the signalfd, so that a test can make ranks exit inside it.
    if (const char *p = std::getenv("WEFTRUN_TEST_REAP_PAUSE_MS"))
        reap_pause_ms_ = std::clamp(std::atoi(p), 0, 10000);
}

void Launcher::run()
{
    setup();
    spawn_all();
    loop();
    finish();
}

[[noreturn]] void Launcher::fail_setup(const std::string &msg, int code)
{
    say(msg);
    signal_live(SIGKILL);
    if (session_) session_->remove();
    // PMIx may be half set up; its finalize is not safe to call here (P7).
    _exit(code);
}

void Launcher::setup()
{
    // Topology first: an oversubscription error must come before anything
    // is created.
    auto pl = Placement::discover();
    if (!pl.ok()) fail_setup(pl.status().message());
    placement_ = std::move(pl.value());
    const int slots = placement_->slots();
    if (opts_.np == 0) opts_.np = slots;
    if (opts_.np > slots && !opts_.oversubscribe)
        fail_setup("-np " + std::to_string(opts_.np) + " asks for more ranks than this host has cores (" +
                   std::to_string(slots) + ", as counted by hwloc); ranks would share cores and run slowly. "
                   "Add --oversubscribe to run anyway, or use -np " + std::to_string(slots) + " or less.", 1);
    // Before PMIx registers the job (its memory grows with -np) and before
    // any fork: a job that cannot fit is refused with the limit named.
    if (auto s = check_room_for_ranks(opts_.np, opts_.tag_output); !s.ok()) fail_setup(s.message());
    bind_ = placement_->effective_bind(opts_.bind_to, opts_.np);
    auto places = placement_->place(opts_.np, opts_.map_by, opts_.bind_to);
    if (!places.ok()) fail_setup(places.status().message());
    places_ = std::move(places.value());

    // Signals blocked before any thread exists (PMIx's progress thread
    // inherits the mask; P9).
    auto sfd = SignalFd::open();
    if (!sfd.ok()) fail_setup("cannot set up signal handling: " + sfd.status().message());
    sigfd_.emplace(std::move(sfd.value()));
    if (!events_.ok()) fail_setup(std::string("cannot create the event pipe: ") + std::strerror(errno));

    SessionDir::sweep_stale();
    auto sd = SessionDir::create();
    if (!sd.ok()) fail_setup(sd.status().message());
    session_.emplace(std::move(sd.value()));
    if (auto s = placement_->export_xml(session_->path() + "/topology.xml"); !s.ok()) fail_setup(s.message());

    // The hash gds keeps the job data in each process instead of shared
    // memory files: measured faster for small jobs here (P12), and nothing
    // to leak in the session dir. A user's own choice wins.
    setenv("PMIX_MCA_gds", "hash", 0);

    if (auto s = PmixServer::init(session_->path(), events_, debug_, placement_->topology()); !s.ok()) fail_setup(s.message());
    pmix_up_ = true;
    nspace_ = "weftrun." + std::to_string(getpid());
    if (auto s = PmixServer::register_job(nspace_, opts_.np, host_); !s.ok()) fail_setup(s.message());
    // Tagged output passes through weftrun; when it ends on a terminal, the
    // ranks get a pseudo-terminal each, so their stdio line-buffers as it
    // would on the terminal itself.
    if (opts_.tag_output) output_ = std::make_unique<OutputForwarder>(isatty(STDOUT_FILENO) == 1);
    if (opts_.timeout_s > 0) deadline_ = Clock::now() + std::chrono::seconds(opts_.timeout_s);
}

void Launcher::spawn_all()
{
    JobEnv job{session_->path(), session_->path() + "/topology.xml", placement_->slots()};
    std::vector<std::string> warnings;
    const std::vector<std::string> env = build_rank_env(opts_, job, environ, warnings);
    for (const auto &w : warnings) say("warning: " + w);

    std::vector<char *> argv;
    for (auto &a : opts_.argv) argv.push_back(a.data());
    argv.push_back(nullptr);

    ranks_.resize(static_cast<size_t>(opts_.np));
    for (int r = 0; r < opts_.np; ++r) {
        // Between ranks: a ^C or SIGTERM, or a rank that already failed,
        // ends the job now; the loop then ends the ranks started so far.
        handle_signals();
        reap();
        settle();
        if (terminating_) {
            say("stopped starting ranks after " + std::to_string(r) + " of " + std::to_string(opts_.np));
            return;
        }
        if (auto s = PmixServer::register_client(r); !s.ok()) fail_setup(s.message());
        char **cenv = make_c_env(env);
        if (!cenv) fail_setup("out of memory building the environment of rank " + std::to_string(r));
        if (auto s = PmixServer::setup_fork(r, &cenv); !s.ok()) { free_c_env(cenv); fail_setup(s.message()); }
        int out = -1, err = -1;
        if (output_)
            if (auto s = output_->add_rank(r, out, err); !s.ok()) { free_c_env(cenv); fail_setup(s.message()); }
        SpawnSpec spec;
        spec.path = program_.c_str();
        spec.argv = argv.data();
        spec.envp = cenv;
        spec.placement = &places_[static_cast<size_t>(r)];
        spec.stdout_fd = out;
        spec.stderr_fd = err;
        spec.child_mask = &sigfd_->original_mask();
        auto pid = spawn_rank(spec);
        free_c_env(cenv);
        if (output_) output_->close_child_ends(out, err);
        if (!pid.ok()) fail_setup("cannot start rank " + std::to_string(r) + ": " + pid.status().message());
        ranks_[static_cast<size_t>(r)].pid = pid.value();
        if (opts_.report_bindings) {
            const auto &p = places_[static_cast<size_t>(r)];
            std::string line = "[" + host_ + ":" + std::to_string(pid.value()) + "] rank " + std::to_string(r) +
                               (p.bound ? " bound to " : " ") + p.description + "\n";
            ssize_t w = write(STDERR_FILENO, line.data(), line.size());
            (void)w;
        }
    }
}

void Launcher::finish()
{
    if (output_) {
        // What ranks wrote before they died, even if a forgotten child of
        // theirs still holds a pipe open.
        output_->drain();
        output_->flush_partial();
    }
    if (!terminating_ && exit_code_ == 0) {
        // Clean end: every rank exited 0 after finalize (or never used PMIx).
        PmixServer::finalize();
        session_->remove();
        std::exit(0);
    }
    // Abnormal end: PMIx_server_finalize can crash or hang now (P7); the
    // session dir holds everything PMIx created, so removing it suffices.
    session_->remove();
    _exit(exit_code_);
}

} // namespace weftrun
