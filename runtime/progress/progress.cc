// SPDX-License-Identifier: BSD-3-Clause
#include "progress/progress.hpp"

#include <algorithm>

#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

namespace weft::rt {

namespace {
// Longest single sleep, so PMIx events and deadlines are looked at even
// when no descriptor fires.
constexpr int kMaxBlockMs = 10;
} // namespace

const char *progress_mode_name(ProgressMode m)
{
    switch (m) {
    case ProgressMode::Busy: return "busy";
    case ProgressMode::Yield: return "yield";
    case ProgressMode::Block: return "block";
    }
    return "?";
}

ProgressEngine::~ProgressEngine()
{
    if (epoll_fd_ >= 0)
        ::close(epoll_fd_);
}

void ProgressEngine::add(PollFn fn, void *ctx, int fd, unsigned every, PrepareFn prepare)
{
    sources_.push_back({fn, ctx, fd, every ? every : 1, prepare, false, 1});
    if (fd == kNoWake)
        return;
    if (fd < 0) {
        all_have_fds_ = false;
        return;
    }
    if (epoll_fd_ < 0)
        epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
        all_have_fds_ = false;   // cannot block on it: stay awake instead
}

void ProgressEngine::set_every(PollFn fn, void *ctx, unsigned every)
{
    for (Source &s : sources_)
        if (s.fn == fn && s.ctx == ctx) {
            s.every = every ? every : 1;
            s.countdown = 1;   // polled on the next pass
        }
}

void ProgressEngine::remove(PollFn fn, void *ctx)
{
    for (auto it = sources_.begin(); it != sources_.end(); ++it)
        if (it->fn == fn && it->ctx == ctx) {
            if (it->fd >= 0 && epoll_fd_ >= 0)
                ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->fd, nullptr);
            sources_.erase(it);
            return;
        }
}

void ProgressEngine::set_mode(ProgressMode mode, std::string reason)
{
    mode_ = mode;
    reason_ = std::move(reason);
}

ProgressMode ProgressEngine::effective_mode() const
{
    if (mode_ == ProgressMode::Block && (!all_have_fds_ || epoll_fd_ < 0))
        return ProgressMode::Yield;
    return mode_;
}

int ProgressEngine::progress()
{
    int events = 0;
    for (Source &s : sources_) {
        // A countdown, not pass % every: a division on every pass for each
        // rarely polled source costs more than the check is worth.
        if (s.every != 1 && --s.countdown != 0 && !s.due)
            continue;
        s.countdown = s.every;
        s.due = false;
        int n = s.fn(s.ctx);
        if (n > 0) {
            events += n;
            // A rarely polled source that found work (a connection
            // accepted) is polled again on the next pass: what follows it
            // (the peer's hello) must not wait another `every` passes.
            s.countdown = 1;
        }
    }
    return events;
}

void ProgressEngine::yield()
{
    ++yields_;
    sched_yield();
    // A source polled every N passes (a socket module with no connected
    // peer) would otherwise wait N yields for its turn; on a loaded machine
    // each yield can last a time slice, and 16384 of them are minutes: a
    // peer's connection request then times out unanswered. Every 16th
    // yield asks the kernel which of their descriptors are ready.
    if ((yields_ & 15) == 0 && epoll_fd_ >= 0)
        mark_ready(0);
}

void ProgressEngine::mark_ready(int timeout_ms)
{
    epoll_event evs[8];
    const int n = ::epoll_wait(epoll_fd_, evs, 8, timeout_ms);
    for (int i = 0; i < n; ++i)
        for (Source &s : sources_)
            if (s.fd == evs[i].data.fd)
                s.due = true;   // a rarely polled source that has work
}

void ProgressEngine::idle_step(int idle_passes, bool may_sleep)
{
    switch (effective_mode()) {
    case ProgressMode::Busy:
        // Alone on the core, sched_yield returns at once; sharing it with a
        // busy peer, it hands the core over instead of spinning out the
        // slice. The clock is read from the 64th idle pass on, once in 16
        // (a read is a few percent of a pass; once in 64 made the shortest
        // spin 64 more passes, 77 us over btl/tcp).
        if (idle_passes < kSpinBeforeYield)
            return;
        if (idle_passes == kSpinBeforeYield)
            hinted_ = yield_hint_ && yield_hint_(yield_hint_ctx_);
        if (hinted_) {
            yield();
            return;
        }
        if (idle_passes == kSpinBeforeYield) {
            // At the shortest spin (ranks that share a core), seven waits
            // in eight yield at once, as spinning on only delays the peer;
            // the eighth spins, so that waits ending while spinning can
            // lengthen the spin again.
            spun_out_ = busy_spin_ <= kMinBusySpin && (++short_waits_ & 7) != 0;
            yields_at_spin_out_ = yields_;
            if (!spun_out_) {
                spin_since_ = std::chrono::steady_clock::now();
                return;
            }
        }
        if (!spun_out_) {
            if ((idle_passes & 15) != 0 ||
                std::chrono::steady_clock::now() - spin_since_ < busy_spin_)
                return;
            spun_out_ = true;
            yields_at_spin_out_ = yields_;
        }
        yield();
        return;
    case ProgressMode::Yield:
        yield();
        return;
    case ProgressMode::Block:
        if (idle_passes < kSpinBeforeBlock || !may_sleep) {
            yield();
            return;
        }
        // Sources that arm their wake-ups only when asked (btl/scif) are
        // asked now; one with work already means no sleep.
        for (const Source &s : sources_)
            if (s.prepare && s.prepare(s.ctx) > 0)
                return;
        mark_ready(kMaxBlockMs);
        return;
    }
}

void ProgressEngine::waited()
{
    if (effective_mode() != ProgressMode::Busy)
        return;
    if (hinted_) {   // it yielded because it was told to: no sample
        hinted_ = false;
        spun_out_ = false;
        return;
    }
    // A wait that yielded needed the core if one of its first few yields
    // handed the core to what it waited for (the peer on this core ran and
    // answered). One that went on through more yields was waiting for
    // something else: each yield came straight back (nobody here wanted the
    // core), so yielding only made it notice its event a system call late.
    // Counting such waits as needing the core kept the spin at its floor
    // for good wherever waits are longer than the floor: over Soft-RoCE a
    // 64-byte round trip waits about 35 us, so each wait yielded about 180
    // times (perf, in the VM) and never ended while spinning again.
    // A wait that outlasted the spin without a yield of its own was
    // preempted (it lost the core anyway): that counts as a wait that
    // needed one, or two ranks on one core would lengthen their spin at
    // each preemption.
    const bool needed_core =
        spun_out_ ? yields_ - yields_at_spin_out_ <= kYieldsOfAHandover
                  : std::chrono::steady_clock::now() - spin_since_ >= busy_spin_;
    // (spin_since_ is unset when the wait yielded at once: spun_out_ then.)
    busy_spin_ = needed_core ? std::max(kMinBusySpin, busy_spin_ / 2) : std::min(kMaxBusySpin, busy_spin_ * 2);
    spun_out_ = false;
}

ProgressMode decide_progress_mode(const std::string &setting, unsigned local_procs, unsigned cores,
                                  std::string *reason)
{
    auto say = [&](std::string r) {
        if (reason)
            *reason = std::move(r);
    };
    if (setting == "busy" || setting == "yield" || setting == "block") {
        say("rte_base_progress=" + setting);
        return setting == "busy" ? ProgressMode::Busy
                                 : setting == "yield" ? ProgressMode::Yield : ProgressMode::Block;
    }
    if (cores > 0 && local_procs > cores) {
        say("oversubscribed: " + std::to_string(local_procs) + " processes on " +
            std::to_string(cores) + " cores");
        return ProgressMode::Block;
    }
    say(cores > 0 ? std::to_string(local_procs) + " processes on " + std::to_string(cores) + " cores"
                  : "core count unknown");
    return ProgressMode::Busy;
}

} // namespace weft::rt
