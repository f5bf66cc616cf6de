// SPDX-License-Identifier: BSD-3-Clause
// Upcalls from the PMIx progress thread become Events in this queue; the
// main loop drains it after a byte on the wake pipe. Nothing else crosses
// threads, so the job state needs no locks.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include <pmix_server.h>

namespace weftrun {

struct Event {
    enum class Kind { Connected, Finalized, Abort, Fence };
    explicit Event(Kind k) : kind(k) {}
    Kind kind;
    int rank = -1;
    // Abort: the status and message (copied: the library frees them when
    // the upcall returns, P5) and the callback that unblocks the client.
    int status = 0;
    std::string msg;
    pmix_op_cbfunc_t op_cb = nullptr;
    void *op_cbdata = nullptr;
    // Fence: this server's contribution (copied, P2), the status the library
    // reported for the local part, and the callback completing it.
    std::vector<char> data;
    pmix_status_t fence_status = PMIX_SUCCESS;
    pmix_modex_cbfunc_t modex_cb = nullptr;
    void *modex_cbdata = nullptr;
};

class EventQueue {
public:
    EventQueue();                 // creates the wake pipe (close-on-exec, non-blocking)
    ~EventQueue();
    EventQueue(const EventQueue &) = delete;
    EventQueue &operator=(const EventQueue &) = delete;

    bool ok() const { return rfd_ >= 0; }
    int wake_fd() const { return rfd_; }  // poll this for POLLIN
    void push(Event e);                   // any thread
    std::deque<Event> drain();            // main thread; also empties the pipe

private:
    std::mutex mu_;
    std::deque<Event> q_;
    int rfd_ = -1, wfd_ = -1;
};

} // namespace weftrun
