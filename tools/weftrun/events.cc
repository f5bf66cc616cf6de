// SPDX-License-Identifier: BSD-3-Clause
#include "weftrun/events.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace weftrun {

EventQueue::EventQueue()
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0) { rfd_ = p[0]; wfd_ = p[1]; }
}

EventQueue::~EventQueue()
{
    if (rfd_ >= 0) close(rfd_);
    if (wfd_ >= 0) close(wfd_);
}

void EventQueue::push(Event e)
{
    {
        std::lock_guard<std::mutex> g(mu_);
        q_.push_back(std::move(e));
    }
    // A full pipe already means "wake up"; losing this byte is harmless.
    char b = 1;
    ssize_t r = write(wfd_, &b, 1);
    (void)r;
}

std::deque<Event> EventQueue::drain()
{
    char buf[256];
    while (read(rfd_, buf, sizeof buf) > 0) {}
    std::lock_guard<std::mutex> g(mu_);
    std::deque<Event> out;
    out.swap(q_);
    return out;
}

} // namespace weftrun
