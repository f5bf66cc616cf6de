// SPDX-License-Identifier: BSD-3-Clause
// The progress engine: polls every registered source (btl modules, the
// runtime's own bookkeeping) and decides what to do when nothing happened.
//
//  busy   poll again at once: lowest latency, one core per process; after a
//         long idle spin each idle pass also yields (sched_yield), so two
//         busy processes that time-slice one core without knowing it (ranks
//         of different hosts in network namespaces of one machine, or a
//         binding that puts two ranks on one core) hand the core over
//         instead of each spinning a whole time slice per message (4-7 ms
//         per message, measured); alone on its core, a yield returns at once;
//  yield  sched_yield() between idle polls: fair when processes share cores;
//  block  yield for a while, then sleep in epoll on the sources'
//         descriptors (wait_fd); only possible when every source has one,
//         otherwise it behaves as yield.
// "auto" (the default) is busy unless the node is oversubscribed (more
// local processes than cores), then block (or yield).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace weft::rt {

enum class ProgressMode { Busy, Yield, Block };
const char *progress_mode_name(ProgressMode m);

class ProgressEngine {
public:
    static constexpr int kNoWake = -2;
    using PollFn = int (*)(void *ctx);   // returns events handled (>= 0) or an error
    // Before a blocking wait: arm wake-ups on fd, re-check; > 0 = work now.
    using PrepareFn = int (*)(void *ctx);

    // A wait this long or longer has no deadline (and costs no clock reads).
    static constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365);

    ProgressEngine() = default;
    ~ProgressEngine();
    ProgressEngine(const ProgressEngine &) = delete;
    ProgressEngine &operator=(const ProgressEngine &) = delete;

    // fd: a descriptor that becomes readable when fn has work; -1: none
    // (a blocking wait then only yields); kNoWake: none needed, because the
    // source's work only ever comes from this process's own calls or from
    // other sources' events (a blocking wait does not watch it).
    // every: poll the source on one pass in `every` (1: each pass). A
    // transport that carries no traffic yet but must notice incoming
    // connections is polled rarely, so its system calls stay off the
    // latency of the transports in use.
    // prepare: called before each blocking wait (btl prepare_wait), or null.
    void add(PollFn fn, void *ctx, int fd, unsigned every = 1, PrepareFn prepare = nullptr);
    void set_every(PollFn fn, void *ctx, unsigned every);
    // Removes a source (its owner goes away before the engine does).
    void remove(PollFn fn, void *ctx);
    // The mode and the one-line reason for it (shown at info verbosity).
    void set_mode(ProgressMode mode, std::string reason);
    ProgressMode mode() const { return mode_; }
    // The effective mode: block without descriptors everywhere is yield.
    ProgressMode effective_mode() const;
    const std::string &reason() const { return reason_; }
    // How often an idle pass gave the core away (sched_yield), any mode.
    unsigned long yields() const { return yields_; }

    // One pass over every source; the number of events.
    int progress();
    // Progresses until done() is true or the timeout passes (false then).
    // Idle passes follow the mode. A template so that the waiting loop of
    // the small-message path calls no std::function.
    template <class Done>
    bool wait_until(Done &&done, std::chrono::milliseconds timeout)
    {
        // The clock is read only by a wait with a deadline: a blocking
        // receive waits forever and has no use for it (in a VM without a
        // paravirtual clock each read is a system call that reads the HPET,
        // about 1 us under emulation). A timed wait reads it every 64
        // passes, first after 64, and on every pass once passes may sleep
        // (blocking mode).
        const bool timed = timeout < kForever;
        const bool may_sleep = effective_mode() == ProgressMode::Block;
        std::chrono::steady_clock::time_point deadline{};
        int idle_passes = 0;
        for (unsigned pass = 1;; ++pass) {
            if (done())
                return true;
            if (timed && ((pass & 63) == 0 || (may_sleep && idle_passes >= kSpinBeforeBlock))) {
                const auto now = std::chrono::steady_clock::now();
                if (deadline == std::chrono::steady_clock::time_point{})
                    deadline = now + timeout;
                else if (now >= deadline)
                    return done();
            }
            if (progress() > 0) {
                idle_passes = 0;
                continue;
            }
            idle(++idle_passes);
        }
    }

private:
    // Idle passes before a blocking engine sleeps, each of them a
    // sched_yield: block is what auto picks when processes outnumber cores,
    // where the peer a rank waits for is often the process that needs its
    // core. A reply on its way then costs a yield (a few us), not a
    // wake-up from epoll (~30 us): 4 ranks on 2 cores, osu_barrier 30 ->
    // 4-6 us (Open MPI, which yields when oversubscribed: 3-4 us). A rank
    // alone on its core gets each yield back at once, so it sleeps after
    // a few hundred microseconds.
    static constexpr int kSpinBeforeBlock = 256;
    // Idle passes before a busy engine starts to yield: a reply already on
    // its way (a small-message round trip is a few passes) costs no system
    // call; 64 passes are tens of microseconds, well under a time slice.
    static constexpr int kSpinBeforeYield = 64;
    void idle(int idle_passes);
    // sched_yield, counted; now and then it also marks sources whose
    // descriptors are ready.
    void yield();
    // Marks the sources whose descriptors epoll reports ready, waiting up
    // to timeout_ms for one.
    void mark_ready(int timeout_ms);
    struct Source {
        PollFn fn;
        void *ctx;
        int fd;
        unsigned every;
        PrepareFn prepare;
        bool due = false;   // its descriptor woke a blocking wait: poll on the next pass
        unsigned countdown = 1;   // passes until it is polled again (every > 1)
    };
    std::vector<Source> sources_;
    ProgressMode mode_ = ProgressMode::Busy;
    std::string reason_ = "default";
    int epoll_fd_ = -1;
    bool all_have_fds_ = true;
    unsigned long yields_ = 0;
};

// Picks the mode from the rte_base_progress setting ("auto", "busy",
// "yield", "block"), the number of processes of this job on the node and the
// node's cores (0 = unknown).
ProgressMode decide_progress_mode(const std::string &setting, unsigned local_procs, unsigned cores,
                                  std::string *reason);

} // namespace weft::rt
