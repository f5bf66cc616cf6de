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
//         per message, measured); alone on its core, a yield returns at once.
//         How long "long" is adapts (busy_spin()): on a core shared with
//         other programs a yield can cost a whole time slice, so waits that
//         end while spinning lengthen the spin, waits that a yield ended
//         (the core went to the peer, which answered) shorten it, and waits
//         that went on through many yields (each came straight back: the
//         wait was for a slower transport, not for this core) lengthen it;
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
    // The busy spin's range. A rank that shares its core with other
    // programs (a compile, another job) loses the core for a time slice
    // (4 ms at HZ=250) at each yield while they want it, so a wait that
    // yields early took 8-24 ms where spinning on took 14-160 us (2-rank
    // allreduce, 64 KiB and 1 MiB, at load 9 on 2 vCPUs; Open MPI, which
    // never yields, 17-200 us). The longest spin stays well under a slice;
    // the shortest costs about what the 64 passes before the first clock
    // read do.
    static constexpr std::chrono::nanoseconds kMaxBusySpin = std::chrono::microseconds(1000);
    static constexpr std::chrono::nanoseconds kMinBusySpin = std::chrono::microseconds(4);

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
    // latency of the transports in use. A rarely polled source whose poll
    // reports events is polled again on the next pass (and so on while it
    // keeps reporting them).
    // prepare: called before each blocking wait (btl prepare_wait), or null.
    void add(PollFn fn, void *ctx, int fd, unsigned every = 1, PrepareFn prepare = nullptr);
    void set_every(PollFn fn, void *ctx, unsigned every);
    // Asked once per busy wait, when its first kSpinBeforeYield idle passes
    // are through: true makes the rest of that wait yield on every idle
    // pass instead of spinning first (up to kMaxBusySpin, which is where
    // the spin starts). The runtime says so while a connection's handshake
    // is under way: the other side, and the launcher's PMIx server it may
    // be asking about us, may need this core, and a woken thread queued
    // behind a spinning rank waited for a scheduler tick (1 ms on the VM).
    // Such a wait teaches the spin nothing.
    using HintFn = bool (*)(void *ctx);
    void set_yield_hint(HintFn fn, void *ctx)
    {
        yield_hint_ = fn;
        yield_hint_ctx_ = ctx;
    }
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
    // A pass of a caller's own wait loop (the MPI layer's): one progress()
    // and, when it found nothing, the idle step of the mode, as wait_until
    // takes it, except that it never sleeps (the caller has work of its own
    // to check between passes). *idle_passes starts at 0 and counts the idle
    // passes in a row. Returns the events.
    int progress_wait(int *idle_passes)
    {
        const int events = progress();
        if (events > 0) {
            if (*idle_passes >= kSpinBeforeYield)
                waited();
            *idle_passes = 0;
        } else {
            *idle_passes = next_idle(*idle_passes);
            idle(*idle_passes, false);
        }
        return events;
    }
    // How long a busy wait spins before it yields, now (it adapts between
    // kMinBusySpin and kMaxBusySpin), and setting it (tests; the adaptation
    // goes on from there).
    std::chrono::nanoseconds busy_spin() const { return busy_spin_; }
    void set_busy_spin(std::chrono::nanoseconds spin) { busy_spin_ = spin; }
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
                if (idle_passes >= kSpinBeforeYield)
                    waited();
                idle_passes = 0;
                continue;
            }
            idle_passes = next_idle(idle_passes);
            idle(idle_passes, true);
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
    // Idle passes before a busy engine looks at the clock: a reply already
    // on its way (a small-message round trip is a few passes) costs no
    // clock read and no system call. 64 passes are 7 us over btl/scif and
    // 80 us over btl/tcp (measured on the VM).
    static constexpr int kSpinBeforeYield = 64;
    // Counting idle passes stops at 2^30 (a wait of minutes): past the
    // spin and the yields before a sleep the count changes nothing, and an
    // int must not overflow.
    // Yields within which a wait that handed the core over ends: the
    // process it waits for runs at the first yield, answers, and gives the
    // core back at its own (one more for a third program on the core).
    static constexpr unsigned long kYieldsOfAHandover = 4;
    static int next_idle(int n) { return n < (1 << 30) ? n + 1 : n; }
    // may_sleep: block mode may sleep in epoll (wait_until); false: it
    // yields instead (progress_wait). The first kSpinBeforeYield idle passes
    // of a busy wait do nothing, and they are most passes of a spinning
    // rank: they return here, inlined, without a call (the call and the
    // mode switch were about 30 instructions of an idle pass of about 250
    // over btl/scif, which is how long a spinning rank takes to see a
    // message that landed).
    void idle(int idle_passes, bool may_sleep)
    {
        if (mode_ == ProgressMode::Busy && idle_passes < kSpinBeforeYield)
            return;
        idle_step(idle_passes, may_sleep);
    }
    void idle_step(int idle_passes, bool may_sleep);
    // A wait ended with events after kSpinBeforeYield idle passes or more: in
    // busy mode, one that ended while spinning or went on through more than
    // kYieldsOfAHandover yields lengthens the spin, one that a yield ended
    // shortens it (the peer it waited for may share this core).
    void waited();
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
    std::chrono::nanoseconds busy_spin_ = kMaxBusySpin;
    std::chrono::steady_clock::time_point spin_since_{};   // this busy wait's clock start
    bool spun_out_ = false;                                 // this busy wait yields now
    HintFn yield_hint_ = nullptr;                           // set_yield_hint
    void *yield_hint_ctx_ = nullptr;
    bool hinted_ = false;                                   // this busy wait yields at once (the hint)
    unsigned long yields_at_spin_out_ = 0;                  // yields_ when it began to
    unsigned short_waits_ = 0;                              // waits begun at the shortest spin
};

// Picks the mode from the rte_base_progress setting ("auto", "busy",
// "yield", "block"), the number of processes of this job on the node and the
// node's cores (0 = unknown).
ProgressMode decide_progress_mode(const std::string &setting, unsigned local_procs, unsigned cores,
                                  std::string *reason);

} // namespace weft::rt
