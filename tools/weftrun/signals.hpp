// SPDX-License-Identifier: BSD-3-Clause
// Signals arrive through a signalfd read by the main loop. They are blocked
// before PMIx_server_init so the library's progress thread (which inherits
// the mask) never takes one (P9).
#pragma once

#include <signal.h>

#include <string>
#include <vector>

#include "core/status.hpp"

namespace weftrun {

class SignalFd {
public:
    // Blocks CHLD, INT, TERM, HUP, QUIT, USR1, USR2 in the calling thread
    // (call it before any thread exists) and ignores SIGPIPE (P8). Keeps
    // the original mask for the children.
    static weft::Result<SignalFd> open();
    SignalFd(SignalFd &&o) noexcept : fd_(o.fd_), orig_(o.orig_) { o.fd_ = -1; }
    SignalFd &operator=(SignalFd &&) = delete;
    ~SignalFd();

    int fd() const { return fd_; }
    const sigset_t &original_mask() const { return orig_; }
    struct Caught {
        int sig;
        pid_t pid;   // the sender; for SIGCHLD the child that changed state
    };
    // The signals pending on the fd, in arrival order. SIGCHLD does not
    // queue: while one is pending, later ones are dropped, so its pid is
    // the first child to end since the last read.
    std::vector<Caught> read_all();

private:
    SignalFd() = default;
    int fd_ = -1;
    sigset_t orig_;
};

// "9 (Killed)"
std::string signal_text(int sig);

} // namespace weftrun
