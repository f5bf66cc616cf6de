// SPDX-License-Identifier: BSD-3-Clause
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
//  - Accumulates (and every atomic: Get_accumulate, Fetch_and_op,
//    Compare_and_swap) have to be applied by the target, so they travel as
//    tagged messages (WinHeader, its target blocks, then the data) that
//    the target applies in its service, one message at a time: they are
//    atomic with respect to each other. A fetching one (kWinFetch) is
//    answered with the target memory's old contents (kWinFetched), which
//    the origin receives into the result buffer.
//  - Dynamic windows expose no memory through a match entry (the attached
//    regions come and go): their Put and Get travel as those messages too
//    (a replacing accumulate and a fetching no-op, of bytes), addressed by
//    absolute address; the target checks the regions attached.
//  - Shared windows (Win_allocate_shared): one memfd, made by the lowest
//    rank and handed to the others over an abstract unix socket
//    (SCM_RIGHTS), mapped whole by every member: load/store reach every
//    member's segment, nothing is ever named in /dev/shm, and the memory
//    goes away with the last mapping. Put/Get/atomics work as above.
//  - PSCW: Win_post sends POSTED to each origin of the group; Win_start
//    waits for one from each target. Win_complete completes the origin's
//    operations and sends each target COMPLETED with the number of
//    accumulate messages sent to it so far; Win_wait/test waits for each
//    origin's COMPLETED and until that many of its accumulates are applied.
//  - The service runs in g_service, which every blocking wait of the MPI
//    layer calls between progress passes. A target that makes no MPI call
//    therefore delays passive-target epochs aimed at it (locks, flushes,
//    accumulates) until it makes one, as in MPI libraries without an
//    asynchronous progress thread. Puts and Gets to windows with memory
//    need no target service.
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
enum WinMsg : int32_t { kWinAcc = 1, kWinLock = 2, kWinUnlock = 3, kWinFlush = 4, kWinFetch = 5 };
// The target's replies, on the window's second context (far above the
// CollTag values), and PSCW's two messages there.
enum WinReply : int32_t {
    kWinGrant = 1001, kWinDone = 1002, kWinFlushed = 1003, kWinFetched = 1004, kWinPosted = 1005,
    kWinCompleted = 1006
};
// The op of a Compare_and_swap message (its data: the new value, then the compare value).
constexpr int32_t kWinCompareAndSwap = -1;

// ACC / FETCH: followed by `blocks` WinBlocks, then the data (none for
// MPI_NO_OP, the value and the compare value for kWinCompareAndSwap).
struct WinHeader {
    uint64_t blocks = 0;   // ACC/FETCH: target blocks that follow
    uint64_t elem = 0;     // ACC/FETCH: bytes of one basic element in memory
    int32_t op = 0;        // ACC/FETCH: the MPI_Op (or kWinCompareAndSwap)
    int32_t basic = 0;     // ACC/FETCH: the Basic; LOCK/UNLOCK: the lock type
};
// A byte range of the target: offset in its window (dynamic: an address).
struct WinBlock {
    uint64_t offset = 0;
    uint64_t bytes = 0;
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

// A message to a target's service (ACC or FETCH), until its send completes.
struct AccSend {
    uint64_t id = 0;                     // the operation (shared with its Fetch)
    int target = 0;
    weft_request_t req = WEFT_REQUEST_NULL;
    std::vector<std::byte> msg;          // header + blocks + data
};

// A FETCH's answer on its way: received into dst directly or staged.
struct Fetch {
    uint64_t id = 0;
    int target = 0;
    weft_request_t req = WEFT_REQUEST_NULL;
    size_t bytes = 0;                    // the answer's length (an empty answer: refused)
    std::vector<std::byte> staging;      // staged: unpacked into dst at the end
    void *dst = nullptr;
    int count = 0;
    std::unique_ptr<Datatype> type;      // staged: the result type (a copy)
};

// A shared window's mapping of every member's memory (munmapped with it).
struct SharedMap {
    void *addr = nullptr;
    size_t len = 0;
    std::vector<uint64_t> offset;        // window rank -> its segment in the mapping
    SharedMap() = default;
    SharedMap(const SharedMap &) = delete;
    SharedMap &operator=(const SharedMap &) = delete;
    ~SharedMap();
};

// A dynamic window's attached region.
struct Region {
    uintptr_t base = 0;
    size_t size = 0;
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
    std::unique_ptr<SharedMap> shared;   // MPI_Win_allocate_shared's mapping
    std::vector<Region> regions;         // dynamic: attached memory, by base
    int flavor = MPI_WIN_FLAVOR_CREATE;
    MPI_Aint attr_size = 0;              // MPI_WIN_SIZE / DISP_UNIT / MODEL point at these
    int attr_disp_unit = 1;
    int model = MPI_WIN_UNIFIED;
    std::map<std::string, std::string> info;   // the info keys in effect
    std::string name;
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
    std::deque<Fetch> fetches;
    std::vector<uint64_t> acc_sent_to;       // per target: ACC/FETCH messages sent since creation
    std::vector<uint64_t> acc_since_flush;   // per target: since the last flush/unlock
    std::vector<int> access;             // PSCW: the targets of the open access epoch
    bool access_open = false;
    std::vector<LockHeld> locked;        // per target: the lock this origin holds
    std::vector<bool> nocheck;           // per target: held with MPI_MODE_NOCHECK (no lock message)
    int error_class = MPI_SUCCESS;       // the first failed transfer since the last sync call
    std::string error_why;

    // ---- target side
    std::vector<uint64_t> acc_applied_from;   // per origin: ACC/FETCH messages applied since creation
    struct Exposure {                    // PSCW: an origin of the open exposure epoch
        int origin = 0;
        uint64_t count = 0;              // its COMPLETED: the ACCs it sent so far
        weft_request_t req = WEFT_REQUEST_NULL;
        bool completed = false;
    };
    std::vector<Exposure> exposure;
    bool exposure_open = false;
    int shared_holders = 0;
    bool exclusive_held = false;
    struct Waiter {
        uint32_t origin;                 // job rank
        int type;
    };
    std::deque<Waiter> lock_queue;
};

// An RMA call's target: its blocks of the target's window.
struct Target {
    Win *w = nullptr;
    int rank = 0;
    uint32_t world = 0;
    std::vector<Block> blocks;   // byte offsets in the target's window (dynamic: addresses), in type-map order
    size_t bytes = 0;
};
// count and h checked (MPI_ERR_COUNT / TYPE on w's handler, *rc set): null when bad.
const Datatype *check_type(Win &w, const char *fn, MPI_Datatype h, int count, const char *which, int *rc);
// Checks the target rank, displacement and type, and lays count elements
// of t at disp out as byte blocks of the target's window (neighbours merged).
int target_blocks(Win &w, const char *fn, int rank, MPI_Aint disp, int count, const Datatype &t, Target *out);

// The RMA calls on w (their checks and errors included); fn names the call.
// A fetching accumulate receives the target's old contents into result;
// op kWinCompareAndSwap compares with compare's value (one element).
int rma_put(Win &w, const char *fn, const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
            int tcount, MPI_Datatype ttype);
int rma_get(Win &w, const char *fn, void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
            int tcount, MPI_Datatype ttype);
int rma_accumulate(Win &w, const char *fn, const void *origin, int ocount, MPI_Datatype otype, void *result,
                   int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, int op,
                   bool fetch, const void *compare);

// The checks every window creation makes: h names a communicator (*c),
// no pointer argument is NULL (else null_pointer names it), size >= 0,
// disp_unit > 0. MPI_SUCCESS or the error raised on the communicator.
int win_check_args(const char *fn, MPI_Comm h, const char *null_pointer, MPI_Aint size, int disp_unit, Comm **c);
// Makes the window w describes (base, size, disp_unit, flavor, memory
// owned) over c: collective. The handle in *out.
int win_make(const char *fn, Comm *c, std::unique_ptr<Win> w, MPI_Info info, MPI_Win *out);
// The info keys: their defaults for w's flavor, and the ones info sets.
void win_info_defaults(Win &w);
void win_info_apply(Win &w, MPI_Info info);

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

// The error a sync call reports: a failed transfer since the last one
// (reported on w's handler and forgotten), else MPI_SUCCESS.
int win_take_error(Win &w, const char *fn);
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
// Origin, without blocking: retires the finished ACC sends and fetches.
void win_poll(Win &w);
// Is any operation with an id in [lo, hi) still in flight?
bool win_pending(const Win &w, uint64_t lo, uint64_t hi);
// Target: waits until every origin r's first counts[r] ACC/FETCH messages are applied.
void win_wait_applied(Win &w, const std::vector<uint64_t> &counts);
// Sends a message of kind tag (ACC or FETCH) to window rank `target`'s service.
int win_send_msg(Win &w, int target, int32_t tag, std::vector<std::byte> msg, uint64_t id);
// The values of the predefined window attributes (MPI_WIN_BASE, SIZE,
// DISP_UNIT, CREATE_FLAVOR, MODEL) as MPI_Win_get_attr returns them: false
// when keyval is not one of them. *attribute_val receives a pointer (the
// base itself for MPI_WIN_BASE, else to the value), *flag is 1.
bool win_predefined_attr(MPI_Win h, int keyval, void *attribute_val, int *flag);
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
