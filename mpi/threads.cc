// SPDX-License-Identifier: BSD-3-Clause
// MPI_THREAD_MULTIPLE: one lock around the MPI layer, and so around every
// call into the engine (whose calls must come from one thread at a time,
// weft.h). It is taken only when the program asked for MULTIPLE; otherwise
// MPI_THREAD_GUARD costs one predictable branch.
//
// A thread that waits (MPI_Wait, MPI_Recv, MPI_Probe, a collective...) must
// let the others in, or a receive waiting for a send another thread of the
// same rank is about to make would never end. Every blocking wait of the
// MPI layer already runs the services between progress passes (and takes
// the waiting path, not the engine's blocking calls, while there are
// services), so under MULTIPLE the lock registers itself as a service:
// when another thread is queued for the lock, the waiter hands it over.
//
// The lock is a ticket lock, so the handover is first come, first served
// (a plain mutex released and taken back at once is usually taken back by
// the same thread). It is recursive per thread: MPI calls made by the
// library itself, by error handlers and by generalized requests' functions
// nest.
#include <sched.h>

#include <atomic>
#include <cstdint>

#include "mpi/internal.hpp"

namespace weft::mpi {

bool g_thread_multiple = false;

namespace {

std::atomic<uint32_t> g_next_ticket{0};
std::atomic<uint32_t> g_serving{0};
thread_local int t_depth = 0;   // this thread's nesting of the lock

void acquire()
{
    const uint32_t mine = g_next_ticket.fetch_add(1, std::memory_order_relaxed);
    for (unsigned spins = 0; g_serving.load(std::memory_order_acquire) != mine; ++spins) {
        if (spins >= 64)   // the holder may be off the CPU (more threads than cores)
            sched_yield();
    }
}

void release() { g_serving.fetch_add(1, std::memory_order_release); }

// The service: hands the lock to the threads queued for it, then queues
// for it again.
void let_other_threads_in()
{
    if (t_depth == 0 ||
        g_next_ticket.load(std::memory_order_relaxed) - g_serving.load(std::memory_order_relaxed) <= 1)
        return;
    const int depth = t_depth;
    t_depth = 0;
    release();
    acquire();
    t_depth = depth;
}

} // namespace

void big_lock()
{
    if (t_depth++ == 0)
        acquire();
}

void big_unlock()
{
    if (--t_depth == 0)
        release();
}

void enable_thread_multiple()
{
    g_thread_multiple = true;
    add_service(let_other_threads_in);
}

} // namespace weft::mpi
