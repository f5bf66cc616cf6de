// The one-sided layer's shared state: the window object, the operations an
// origin has in flight, and the control messages origins and targets
// exchange. win.cc holds creation, freeing and the RMA calls; win_sync.cc
// the synchronization (fence, lock/unlock, flush) and the target's service.
//
// How it maps onto weft:
//  - Each window has a context pair agreed over its communicator (like a
//    communicator's). Its first context carries control messages to a
//    target (ACC, LOCK, UNLOCK, FLUSH); the second is the window's
//    collective context (barrier, fence counts) and carries the target's
//    replies (GRANT, DONE, FLUSHED) under their own tags.
//  - Every member exposes its memory as one match entry on portal
//    kWinPortal, match bits = the window's context, with an MD that accepts
//    puts and gets at the initiator's offset. Put and Get are weft_put /
//    weft_get into it: the target's CPU is not involved.
//  - Accumulate has to be applied by the target, so it travels as a tagged
//    message (header + data) that the target applies in its service.
//  - The service runs in g_service, which every blocking wait of the MPI
//    layer calls between progress passes. A target that makes no MPI call
//    therefore delays passive-target epochs aimed at it (locks, flushes,
//    accumulates) until it makes one, as in MPI libraries without an
//    asynchronous progress thread. Puts and Gets need no target service.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi {

// The portal every window's memory is exposed on (match bits tell windows apart).
constexpr unsigned kWinPortal = 8;
// Origin events in flight per window before the origin drains its queue.
constexpr unsigned kWinEqSize = 4096;

// Control messages to a target, on the window's first context; the tag is the kind.
enum WinMsg : int32_t { kWinAcc = 1, kWinLock = 2, kWinUnlock = 3, kWinFlush = 4 };
// The target's replies, on the window's second context (far above the CollTag values).
enum WinReply : int32_t { kWinGrant = 1001, kWinDone = 1002, kWinFlushed = 1003 };

struct WinHeader {
    uint64_t offset = 0;   // ACC: byte offset in the target's window
    uint64_t n = 0;        // ACC: basic elements
    uint64_t elem = 0;     // ACC: bytes of one basic element in memory
    int32_t op = 0;        // ACC: the MPI_Op
    int32_t basic = 0;     // ACC: the Basic; LOCK/UNLOCK: the lock type
};

struct WinPeer {
    uint64_t size = 0;
    int64_t disp_unit = 1;
};

// One Put or Get call's transfers (one per target block), done when every
// transfer's ACK or REPLY has come.
struct RmaOp {
    int target = 0;                      // window rank
    int parts = 0;                       // transfers not finished yet
    std::vector<std::byte> buf;          // packed origin data / get staging
    void *dst = nullptr;                 // get staged: unpack here at the end
    int count = 0;
    std::unique_ptr<Datatype> type;      // get staged: the origin type (a copy)
};

struct AccSend {
    int target = 0;
    weft_request_t req = WEFT_REQUEST_NULL;
    std::vector<std::byte> msg;          // header + data, until the send completes
};

enum class LockHeld : uint8_t { None, Shared, Exclusive };

struct Win {
    int handle = 0;
    uint32_t ctx = 0;
    Comm comm;                           // the members; context = ctx (not in the comm table)
    std::byte *base = nullptr;
    size_t size = 0;
    int disp_unit = 1;
    std::unique_ptr<std::byte[]> owned;  // MPI_Win_allocate's memory
    std::vector<WinPeer> peers;          // window rank -> its size and disp_unit
    weft_me_t me = WEFT_HANDLE_NONE;
    weft_md_t md = WEFT_HANDLE_NONE;
    weft_eq_t eq = WEFT_HANDLE_NONE;
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;

    // ---- origin side
    std::map<uint64_t, RmaOp> ops;       // in flight, by id (the MDs' user_ptr)
    uint64_t next_op = 1;
    size_t events_due = 0;               // events the EQ will still receive
    std::vector<int> parts_to;           // per target: transfers in flight
    std::deque<AccSend> acc_sends;
    std::vector<uint64_t> acc_since_fence;   // per target: ACC messages sent since the last fence
    std::vector<uint64_t> acc_since_flush;   // per target: since the last flush/unlock
    std::vector<LockHeld> locked;        // per target: the lock this origin holds
    std::vector<bool> nocheck;           // per target: held with MPI_MODE_NOCHECK (no lock message)
    int error_class = MPI_SUCCESS;       // the first failed transfer since the last sync call
    std::string error_why;

    // ---- target side
    uint64_t acc_applied = 0;            // ACC messages applied since creation
    uint64_t acc_expected = 0;           // ... that the fences so far said would come
    int shared_holders = 0;
    bool exclusive_held = false;
    struct Waiter {
        uint32_t origin;                 // job rank
        int type;
    };
    std::deque<Waiter> lock_queue;
};

Win *win(MPI_Win h);
// Every window call's first step: MPI is up and h names a window (w).
#define WIN_OR_RETURN(fn, h, w)                                                                    \
    MPI_NEED_INIT(fn);                                                                             \
    Win *w = win(h);                                                                               \
    if (!w)                                                                                        \
        return raise(nullptr, MPI_ERR_WIN, fn,                                                     \
                     (h) == MPI_WIN_NULL ? std::string("the window is MPI_WIN_NULL")               \
                                         : "window " + std::to_string(h) + " is not valid")

// Reports an error of class cls on w (through its handler).
int win_error(Win &w, int cls, const char *fn, const std::string &why);

// Origin: handles the events already in w's EQ (without waiting); the
// failures are kept in w.error_class / error_why.
void win_drain(Win &w);
// Origin: waits until no transfer to target (-1: any) is in flight and
// every ACC send (to target / any) has completed. Returns the first error
// class seen (also reported on w's handler by the caller).
int win_complete(Win &w, int target);
// The one-sided service: every window's incoming control messages.
void win_service();
// Installs / removes win_service as g_service with the first / last window.
void win_service_attach();
void win_service_detach_if_idle();
// Like a fence without its assertions: local completion, everyone's ACCs applied, a barrier.
int win_quiesce(Win &w, const char *fn);
// Frees w's portal objects and its table slot.
void win_destroy(Win &w);

template <class F>
void for_each_win(F f);
extern Table<Win> g_wins;

template <class F>
void for_each_win(F f)
{
    g_wins.for_each(f);
}

} // namespace weft::mpi
