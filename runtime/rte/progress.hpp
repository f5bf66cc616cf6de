// The progress engine: polls every registered source (btl modules, the
// runtime's own bookkeeping) and decides what to do when nothing happened.
//
//  busy   poll again at once: lowest latency, one core per process;
//  yield  sched_yield() between idle polls: fair when processes share cores;
//  block  after a short spin, sleep in epoll on the sources' descriptors
//         (wait_fd); only possible when every source has one, otherwise
//         it behaves as yield.
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
    using PollFn = int (*)(void *ctx);   // returns events handled (>= 0) or an error

    ProgressEngine() = default;
    ~ProgressEngine();
    ProgressEngine(const ProgressEngine &) = delete;
    ProgressEngine &operator=(const ProgressEngine &) = delete;

    // fd: a descriptor that becomes readable when fn has work, or -1.
    void add(PollFn fn, void *ctx, int fd);
    // Removes a source (its owner goes away before the engine does).
    void remove(PollFn fn, void *ctx);
    // The mode and the one-line reason for it (shown at info verbosity).
    void set_mode(ProgressMode mode, std::string reason);
    ProgressMode mode() const { return mode_; }
    // The effective mode: block without descriptors everywhere is yield.
    ProgressMode effective_mode() const;
    const std::string &reason() const { return reason_; }

    // One pass over every source; the number of events.
    int progress();
    // Progresses until done() is true or the timeout passes (false then).
    // Idle passes follow the mode.
    bool wait_until(const std::function<bool()> &done, std::chrono::milliseconds timeout);

private:
    void idle(int idle_passes);
    struct Source { PollFn fn; void *ctx; int fd; };
    std::vector<Source> sources_;
    ProgressMode mode_ = ProgressMode::Busy;
    std::string reason_ = "default";
    int epoll_fd_ = -1;
    bool all_have_fds_ = true;
};

// Picks the mode from the rte_base_progress setting ("auto", "busy",
// "yield", "block"), the number of processes of this job on the node and the
// node's cores (0 = unknown).
ProgressMode decide_progress_mode(const std::string &setting, unsigned local_procs, unsigned cores,
                                  std::string *reason);

} // namespace weft::rt
