// SPDX-License-Identifier: BSD-3-Clause
// The per-job session directory: $TMPDIR/weftrun.XXXXXX. It holds the PMIx
// server's rendezvous and shared-memory (dstore) files and the topology XML,
// so removing it removes everything the job left on disk.
#pragma once

#include <string>

#include "core/status.hpp"

namespace weftrun {

class SessionDir {
public:
    // Creates the directory (mode 0700) and a "pid" file naming this
    // process, which lets a later weftrun sweep it if this one is SIGKILLed.
    static weft::Result<SessionDir> create();
    SessionDir(SessionDir &&o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
    SessionDir &operator=(SessionDir &&) = delete;
    SessionDir(const SessionDir &) = delete;
    ~SessionDir() { remove(); }

    const std::string &path() const { return path_; }
    // Idempotent; also called explicitly before _exit, which skips destructors.
    void remove();

    // Removes weftrun.* dirs in the temp dir whose pid file names a process
    // that no longer exists (a weftrun killed by SIGKILL cannot clean up).
    static void sweep_stale();

private:
    explicit SessionDir(std::string p) : path_(std::move(p)) {}
    std::string path_;
};

std::string temp_root();   // $TMPDIR, or /tmp

} // namespace weftrun
