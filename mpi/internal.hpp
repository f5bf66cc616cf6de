// SPDX-License-Identifier: BSD-3-Clause
// libweft_mpi's shared internals: the objects behind MPI's integer
// handles (communicators, groups, datatypes, requests, error handlers),
// error reporting, and the tagged-message helpers every part uses. The
// MPI layer sits on weft.h only: it never reaches into the engine or the
// transports.
//
// Handles index tables; a freed slot is reused, and a handle that names
// nothing is an MPI_ERR_* error, never a crash. Predefined datatypes keep
// their fixed numbers (mpi.h), so the common path is an array index.
#pragma once

#include <mpi.h>
#include <weft.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

// The profiling interface: every MPI function is defined as PMPI_X, and
// MPI_X is a weak alias of it, so a tool library that defines MPI_X (and
// calls PMPI_X) takes the calls; with no tool, MPI_X is the library's.
// The library calls PMPI_X itself, so a tool sees only the user's calls.
// Write WEFT_MPI_WEAK(X) on the line before the definition of PMPI_X.
#define WEFT_MPI_PRAGMA_(text) _Pragma(#text)
#define WEFT_MPI_WEAK(name) WEFT_MPI_PRAGMA_(weak MPI_##name = PMPI_##name)

namespace weft::mpi {

// ---------------------------------------------------------------- tables

template <class T>
class Table {
public:
    explicit Table(int first) : first_(first) {}
    T *get(int h) const
    {
        const long i = static_cast<long>(h) - first_;
        return i >= 0 && i < static_cast<long>(slots_.size()) ? slots_[i].get() : nullptr;
    }
    int add(std::unique_ptr<T> obj)
    {
        if (!free_.empty()) {
            const int i = free_.back();
            free_.pop_back();
            slots_[i] = std::move(obj);
            return i + first_;
        }
        slots_.push_back(std::move(obj));
        return static_cast<int>(slots_.size()) - 1 + first_;
    }
    void remove(int h)
    {
        if (T *p = get(h); p) {
            slots_[h - first_].reset();
            free_.push_back(h - first_);
        }
    }
    void clear()
    {
        slots_.clear();
        free_.clear();
    }
    template <class F>
    void for_each(F f) const
    {
        for (auto &s : slots_)
            if (s)
                f(*s);
    }

private:
    int first_;
    std::vector<std::unique_ptr<T>> slots_;
    std::vector<int> free_;
};

// ---------------------------------------------------------------- datatypes

// The scalar a datatype is made of, for reductions and MPI_Get_elements.
enum class Basic : uint8_t {
    None, Char, SChar, UChar, Byte, WChar, Short, UShort, Int, UInt, Long, ULong, LongLong, ULongLong,
    Float, Double, LongDouble, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Bool,
    FloatComplex, DoubleComplex, LongDoubleComplex, Aint, Offset, Count, Packed,
    FloatInt, DoubleInt, LongInt, TwoInt, ShortInt, LongDoubleInt,
    Mixed   // a struct of different basics: no reductions
};

struct Block {
    std::ptrdiff_t offset;   // from the element's start (the buffer address)
    size_t length;
};

struct Datatype {
    int handle = 0;
    bool predefined = false;
    bool committed = false;
    size_t size = 0;                 // data bytes in one element
    std::ptrdiff_t lb = 0, ub = 0;   // extent = ub - lb
    std::ptrdiff_t true_lb = 0, true_ub = 0;
    std::vector<Block> blocks;       // one element's data, in type-map order, neighbours merged
    Basic basic = Basic::None;
    size_t basic_size = 0;           // data bytes of one basic element (pairs: both members)
    size_t basic_extent = 0;         // its bytes in memory (pairs: with their padding)
    std::vector<uint32_t> signature;   // Mixed only: the basics' data sizes, in type-map order
    std::string name;
    // How it was made, for MPI_Type_get_envelope / get_contents.
    int combiner = MPI_COMBINER_NAMED;
    std::vector<int> contents_ints;
    std::vector<MPI_Aint> contents_aints;
    std::vector<MPI_Datatype> contents_handles;                   // as the constructor got them
    std::vector<std::shared_ptr<const Datatype>> contents_types;  // copies of the derived ones (else null)

    // Set by seal() once the type is built, for the hot paths.
    bool single_block = false;       // one element's data is one byte range
    bool dense = false;              // ... and elements follow each other without gaps
    std::ptrdiff_t data_offset = 0;  // where that range starts

    std::ptrdiff_t extent() const { return ub - lb; }
    // count elements at buf occupy one byte range starting at buf + data_offset
    bool contiguous(int count) const { return dense || (single_block && count <= 1); }
    void seal()
    {
        single_block = blocks.size() <= 1;
        dense = single_block && static_cast<std::ptrdiff_t>(size) == extent();
        data_offset = blocks.empty() ? 0 : blocks[0].offset;
    }
};

// Predefined datatypes are their handle's slot (mpi.h numbers them below
// 64); derived ones live in a table. Null: not a datatype.
inline constexpr int kFirstDerivedType = 64;
extern Datatype g_predefined_types[kFirstDerivedType];
Datatype *derived_datatype(MPI_Datatype h);
inline Datatype *datatype(MPI_Datatype h)
{
    if (static_cast<unsigned>(h) < static_cast<unsigned>(kFirstDerivedType)) {
        Datatype &t = g_predefined_types[h];
        return t.handle ? &t : nullptr;
    }
    return derived_datatype(h);
}
// After a constructor returned rc and made *h: records how (combiner and
// arguments, the datatypes it was made of) on *h when rc is MPI_SUCCESS.
// Returns rc.
int record_contents(int rc, const MPI_Datatype *h, int combiner, std::vector<int> ints, std::vector<MPI_Aint> aints,
                    std::vector<MPI_Datatype> made_of);
// Copies count elements at buf into out (size*count bytes), or back.
void pack(const void *buf, int count, const Datatype &t, std::byte *out);
// Unpacks at most bytes (a partial last element too).
void unpack(const std::byte *in, size_t bytes, void *buf, int count, const Datatype &t);

// A message's bytes as the transport sees them: the user's buffer when the
// datatype is contiguous, else a packed copy owned here.
struct Wire {
    std::byte *ptr = nullptr;
    size_t bytes = 0;
    std::vector<std::byte> scratch;
    bool packed = false;
};
void wire_for_send(const void *buf, int count, const Datatype &t, Wire *w);
void wire_for_recv(void *buf, int count, const Datatype &t, Wire *w);
// After a receive into w: unpack when it was packed.
void wire_finish_recv(const Wire &w, size_t received, void *buf, int count, const Datatype &t);

// ---------------------------------------------------------------- info

// An info object's (key, value) pairs, in the order they were set.
using InfoPairs = std::vector<std::pair<std::string, std::string>>;
// The pairs of info h (MPI_INFO_ENV included), or null when h names none.
const InfoPairs *info_pairs(MPI_Info h);
// A new info object holding pairs; its handle.
MPI_Info make_info(InfoPairs pairs);

// ---------------------------------------------------------------- groups, communicators

struct Group {
    std::vector<uint32_t> world;   // group rank -> job rank
    int rank_of_world(uint32_t w) const;   // MPI_UNDEFINED when absent
    int my_rank() const;
};

struct Topology;   // topo.hpp
namespace coll {
class ScheduleCache;   // coll_sched.hpp
}

// Bytes that begin on a page. Buffers a collective receives into are
// page-aligned: a single copy (process_vm_readv, the kernel's rep movsb)
// into memory 1-31 bytes past its source modulo a page runs at a quarter
// of its speed (component_util.hpp), and malloc's large blocks start 16
// bytes into a page, so a page-aligned user buffer copied into malloc'd
// scratch hit it every time: a 1 MiB MPI_Reduce of page-aligned buffers at
// 2 ranks took 476 us, against 130 us from malloc'd ones.
struct PageRelease {
    static constexpr std::align_val_t kAlign{4096};
    void operator()(std::byte *p) const { ::operator delete[](p, kAlign); }
};
using PageBuffer = std::unique_ptr<std::byte[], PageRelease>;
// bytes of page-aligned memory, not initialised.
inline PageBuffer page_buffer(size_t bytes)
{
    return PageBuffer(static_cast<std::byte *>(::operator new[](bytes, PageRelease::kAlign)));
}

// Memory a communicator's blocking collectives reuse from call to call
// (coll.cc): a fresh buffer per call pays a page fault per 4 KiB page on
// first touch (and zero-filling), which at 2 ranks made a 1 MiB allreduce
// 1.6 ms. Not zeroed; grows to the largest call's need and lives as long as
// the communicator. Per communicator, because MPI lets threads run
// collectives on different communicators at once but never two on one.
class CollScratch {
public:
    CollScratch() = default;
    // A copied communicator starts without scratch of its own.
    CollScratch(const CollScratch &) {}
    CollScratch &operator=(const CollScratch &) { return *this; }
    // At least bytes of page-aligned memory; valid until the next get().
    std::byte *get(size_t bytes)
    {
        if (bytes > capacity_) {
            buf_.reset();   // the old block goes first: never both at once
            buf_ = page_buffer(bytes);
            capacity_ = bytes;
        }
        return buf_.get();
    }
    size_t capacity() const { return capacity_; }

private:
    PageBuffer buf_;
    size_t capacity_ = 0;
};

struct Comm {
    int handle = 0;
    uint32_t context = 0;          // point-to-point; context + 1 is for collectives
    int rank = 0, size = 0;
    std::vector<uint32_t> world;   // comm rank -> job rank
    std::vector<int> local;        // job rank -> comm rank (-1: not a member); empty: identity
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    std::string name;
    InfoPairs info;                // MPI_Comm_set_info's hints
    // A process topology (Cart, graph, distributed graph); null: none.
    std::shared_ptr<const Topology> topo;
    // An intercommunicator: world, size and local are the remote group's
    // (what point-to-point addresses); rank and local_world are the local
    // group's, and local_comm is an intracommunicator over the local group
    // (for agreeing on contexts).
    bool inter = false;
    std::vector<uint32_t> local_world;
    MPI_Comm local_comm = MPI_COMM_NULL;

    uint32_t to_world(int r) const { return world[r]; }
    int from_world(uint32_t w) const
    {
        if (local.empty())
            return static_cast<int>(w);
        return w < local.size() ? local[w] : -1;
    }
    uint32_t coll_context() const { return context + 1; }
    // Nonblocking and persistent collectives begun on it: their tags (coll_sched).
    uint32_t schedules_begun = 0;
    // The blocking collectives' working memory (coll.cc).
    CollScratch scratch;
    // MPI_Allgather's counts and displacements, and the blocks' byte
    // offsets, kept from call to call: three allocations a call cost small
    // allgathers about a tenth of their time.
    std::vector<int> coll_counts, coll_displs;
    std::vector<size_t> coll_offsets;
    // Its nonblocking collectives' schedules kept for the next call with the
    // same arguments (coll_sched); made on first use.
    std::shared_ptr<coll::ScheduleCache> schedule_cache;
};

Group *group(MPI_Group h);   // null: not a group (MPI_GROUP_EMPTY is one)
// The new context and communicator of MPI_Comm_dup on an intercommunicator
// (comm_inter.cc); a weft status.
int intercomm_dup(Comm &c, MPI_Comm *out);
// Frees a communicator's object (and an intercommunicator's local one), attributes already gone.
void free_comm(MPI_Comm *h);
// What weft does not do on an intercommunicator yet (the collectives,
// MPI_Comm_split, MPI_Comm_create): MPI_ERR_NOT_SUPPORTED raised on c.
int refuse_intercomm(Comm *c, const char *fn);
// The communicator h names when it is an intracommunicator (inter: an
// intercommunicator); else null, with the error raised and its class in *rc.
Comm *comm_of_kind(MPI_Comm h, bool inter, const char *fn, int *rc);
#define COMM_OF_KIND_OR_RETURN(fn, h, p, inter)                                                    \
    MPI_NEED_INIT(fn);                                                                             \
    int p##_rc = MPI_SUCCESS;                                                                      \
    Comm *p = ::weft::mpi::comm_of_kind(h, inter, fn, &p##_rc);                                    \
    if (!p)                                                                                        \
    return p##_rc

extern Table<Comm> g_comms;
inline Comm *comm(MPI_Comm h) { return g_comms.get(h); }
MPI_Group make_group(std::vector<uint32_t> world);
// A new communicator over these job ranks (ordered), with the context that
// its members agreed on. Returns the handle.
MPI_Comm make_comm(std::vector<uint32_t> world, uint32_t context, const Comm *parent, const std::string &name);
// Agrees on a fresh context pair with every member of c (collective over c).
int agree_context(Comm &c, uint32_t *context);
// The same with its messages under tag on c's collective context (c may be
// a temporary over a subgroup, as in MPI_Comm_create_group).
int agree_context_tagged(Comm &c, uint32_t *context, int tag);
// A context pair agreed some other way (intercommunicators): never handed out again here.
void reserve_context(uint32_t context);
// Allgather of n-byte records over c under tag (communicator creation).
int allgather_bytes(const Comm &c, const void *mine, size_t n, std::byte *all, int tag);

// ---------------------------------------------------------------- errors

// Reports an error of class cls on c (or MPI_COMM_WORLD's handler when c
// is null): MPI_ERRORS_ARE_FATAL prints where and why and ends the job;
// MPI_ERRORS_RETURN records the message for MPI_Error_string and returns
// cls; a user handler is called first.
int raise(Comm *c, int cls, const std::string &where, const std::string &why);
int raise_on_handler(MPI_Errhandler eh, void *object, bool is_win, int cls, const std::string &where,
                     const std::string &why);
bool errhandler_valid(MPI_Errhandler eh);
// The MPI class of a weft status.
int class_of(int weft_status);
// The class of a weft failure (never MPI_SUCCESS).
inline int fail_class(int weft_rc) { return class_of(weft_rc) == MPI_SUCCESS ? MPI_ERR_OTHER : class_of(weft_rc); }
// weft's message for the last failed call, for `why`.
std::string weft_why(int weft_status);

bool initialized();
// Every call that needs MPI_Init: returns MPI_ERR_OTHER (through world's
// handler, which then cannot abort a job that never started) otherwise.
#define MPI_NEED_INIT(fn)                                                                          \
    do {                                                                                           \
        if (!::weft::mpi::initialized())                                                           \
            return ::weft::mpi::raise(nullptr, MPI_ERR_OTHER, fn, "MPI is not initialized (call MPI_Init first)"); \
    } while (0)

// ---------------------------------------------------------------- threads

// MPI_THREAD_MULTIPLE (threads.cc): every MPI function starts with
// MPI_THREAD_GUARD, which holds the MPI layer's lock for the call when the
// program asked for MULTIPLE and is one predictable branch otherwise.
extern bool g_thread_multiple;
void big_lock();     // recursive per thread
void big_unlock();
// Called by MPI_Init_thread(MPI_THREAD_MULTIPLE): from then on the guard
// locks, and blocking waits hand the lock to queued threads (a service).
void enable_thread_multiple();
class ThreadGuard {
public:
    ThreadGuard() : held_(g_thread_multiple)
    {
        if (__builtin_expect(held_, 0))
            big_lock();
    }
    ~ThreadGuard()
    {
        if (__builtin_expect(held_, 0))
            big_unlock();
    }
    ThreadGuard(const ThreadGuard &) = delete;
    ThreadGuard &operator=(const ThreadGuard &) = delete;

private:
    bool held_;
};
#define MPI_THREAD_GUARD ::weft::mpi::ThreadGuard weft_mpi_thread_guard_

// ---------------------------------------------------------------- requests

// A request the MPI layer completes itself rather than the engine: a
// nonblocking or persistent collective's schedule, a generalized request,
// an Rput. progress() advances it without blocking and returns true once
// it is complete, with *status filled (MPI_ERROR holds its class, MPI_SUCCESS
// included). Every wait and test of the MPI layer advances the active
// operations (run_services), so one moves on while the program waits on
// something else; MPI_Request_free of an unfinished one leaves it running.
struct Operation {
    virtual ~Operation() = default;
    virtual bool progress(MPI_Status *status) = 0;
    // MPI_Cancel: true when it was cancelled (progress then completes it
    // with the status saying so); false when it cannot be.
    virtual bool cancel() { return false; }
};

struct Request;

// A persistent request's recipe (MPI_Send_init, MPI_Recv_init, a
// persistent collective): start() begins one round by making r what the
// matching nonblocking call would have made it (Send, Recv, Done, or an
// Op through run_operation_in). Returns an MPI class, raised already.
struct Persistent {
    virtual ~Persistent() = default;
    virtual int start(Request &r) = 0;
};

struct Request {
    int index = 0;                   // its slot; the handle is index + 1
    bool live = false;
    // Persistent: completion leaves it inactive (Done, empty status) with
    // its handle, for MPI_Start to begin the next round from `recipe`.
    bool persistent = false;
    bool active = false;
    int next_free = -1;
    // Op: driven by `op` until complete, then Done with done_status.
    enum class Kind { Send, Recv, Done, Op } kind = Kind::Send;
    weft_request_t req = WEFT_REQUEST_NULL;
    int comm = MPI_COMM_NULL;
    void *buf = nullptr;             // receive: where to unpack
    int count = 0;
    std::unique_ptr<Datatype> unpack_type;   // a packed receive's type (a copy)
    Wire wire;                       // a packed send/receive's bytes
    MPI_Status done_status{};        // Kind::Done: the status to report
    std::unique_ptr<Operation> op;   // Kind::Op
    std::unique_ptr<Persistent> recipe;   // persistent only
};

// Requests are pooled: a slot is reused through an intrusive free list,
// so the nonblocking calls allocate nothing once the pool is warm.
struct RequestPool {
    std::vector<std::unique_ptr<Request>> slots;
    int free_head = -1;
};
extern RequestPool g_requests;
MPI_Request grow_requests(Request **out);

inline Request *request(MPI_Request h)
{
    const size_t i = static_cast<size_t>(static_cast<unsigned>(h)) - 1;   // 0 (MPI_REQUEST_NULL) wraps
    if (i >= g_requests.slots.size())
        return nullptr;
    Request *r = g_requests.slots[i].get();
    return r->live ? r : nullptr;
}

// Inlined: GCC kept it a call, 42 instructions a nonblocking call with
// the call's own cost (callgrind, a window of MPI_Isend).
[[gnu::always_inline]] inline MPI_Request new_request(Request **out)
{
    if (g_requests.free_head < 0)
        return grow_requests(out);
    Request &r = *g_requests.slots[static_cast<size_t>(g_requests.free_head)];
    g_requests.free_head = r.next_free;
    r.live = true;
    r.kind = Request::Kind::Send;
    r.req = WEFT_REQUEST_NULL;
    r.comm = MPI_COMM_NULL;
    r.buf = nullptr;
    r.count = 0;
    if (r.unpack_type)
        r.unpack_type.reset();
    if (r.op)
        r.op.reset();
    r.wire.ptr = nullptr;
    r.wire.bytes = 0;
    if (r.wire.packed) {
        r.wire.packed = false;
        r.wire.scratch.clear();   // keeps its capacity for the next packed message
    }
    *out = &r;
    return r.index + 1;
}

// Returns a live request's slot to the pool (the caller has it already:
// no second lookup of its handle).
inline void release_request(Request &r)
{
    r.live = false;
    r.next_free = g_requests.free_head;
    g_requests.free_head = r.index;
}
inline void free_request(MPI_Request h)
{
    if (Request *r = request(h))
        release_request(*r);
}
// Completes r (which must be done in weft): fills status, unpacks, and
// returns the MPI error class of the operation (MPI_SUCCESS included).
int finish_request(Request &r, const weft_msg_status_t &ws, MPI_Status *status);

// Starts a receive (MPI_Irecv's checks and errors). type: the datatype th
// names, or a copy a persistent request keeps (th may be freed meanwhile).
int start_recv(const char *fn, void *buf, int count, MPI_Datatype th, int source, int tag, MPI_Comm h,
               MPI_Request *out, const Datatype *type = nullptr);
// Starts a send of any mode (flags: WEFT_SEND_SYNC); *out gets the request
// (nonblocking), or the send completes here (out null). type as above.
int start_send(const char *fn, const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h,
               unsigned flags, MPI_Request *out, const Datatype *type = nullptr);
// The checks of a send (recv false) or receive's arguments, MPI_SUCCESS or
// the error raised: c and t are what the handles h and th name (or null).
int check_p2p(const char *fn, MPI_Comm h, Comm *c, const void *buf, int count, const Datatype *t, MPI_Datatype th,
              int peer, int tag, bool recv);
// MPI_Iprobe's work (checks, services, the engine's probe): *flag, and *ws
// when a message is there. From MPI_PROC_NULL: *flag = 1 and ws untouched.
int probe_once(const char *fn, int source, int tag, MPI_Comm h, int *flag, weft_msg_status_t *ws);
// A buffered send (MPI_Bsend, MPI_Ibsend with out).
int bsend(const char *fn, const void *buf, int count, MPI_Datatype th, int dest, int tag, MPI_Comm h,
          MPI_Request *out, const Datatype *type = nullptr);
// A freed send whose bytes were packed keeps them until weft is done.
void keep_in_background(weft_request_t req, std::vector<std::byte> data);

// Starts a request driven by `op` (Kind::Op) on communicator c (whose error
// handler its failure goes to) and makes it active; the handle to return.
MPI_Request start_operation(std::unique_ptr<Operation> op, MPI_Comm c);
// Advances r once if it is an operation; true when r is complete (Done).
bool advance_operation(Request &r);
// Makes the existing request r (a persistent one being started) run op.
void run_operation_in(Request &r, std::unique_ptr<Operation> op);
// A new inactive persistent request on c that starts rounds from recipe.
MPI_Request make_persistent(std::unique_ptr<Persistent> recipe, MPI_Comm c);
// Null or an inactive persistent request: what MPI_Waitany and friends skip.
inline bool null_or_inactive(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return true;
    const Request *r = request(h);
    return r && r->persistent && !r->active;
}

// Work every blocking wait of the MPI layer does between progress passes:
// the one-sided layer's passive-target service while windows are open, the
// active operations while there are some. g_service is null when there is
// none (the fast paths test it), else it runs them all.
extern void (*g_service)();
void add_service(void (*fn)());
void remove_service(void (*fn)());

// One pass of a wait loop of the MPI layer's own (an operation, a
// schedule run to the end): progresses weft and the services; on passes
// that found nothing to do (*idle counts them, from 0) it spins, yields or
// hands the core over as weft's own waits do in the progress mode
// (weft_progress_wait): with more ranks than cores, spinning out the time
// slice would starve the very peer being waited for.
void wait_pass(int *idle);

// Fills an MPI status from a weft one (source translated to c's ranks).
void to_status(const weft_msg_status_t &ws, const Comm &c, MPI_Status *st);
void empty_status(MPI_Status *st);   // MPI_PROC_NULL's

// ---------------------------------------------------------------- collectives' transport

// Blocking and nonblocking byte messages on c's collective context,
// addressed by comm rank.
int coll_send(const Comm &c, const void *buf, size_t bytes, int to, int tag);
int coll_recv(const Comm &c, void *buf, size_t bytes, int from, int tag);
// flags: weft_isend_ctx's (WEFT_SEND_DONE_NULL: a send that went out whole
// leaves no request; wait_one and coll_waitall take that).
int coll_isend(const Comm &c, const void *buf, size_t bytes, int to, int tag, weft_request_t *r,
               uint32_t flags = 0);
int coll_irecv(const Comm &c, void *buf, size_t bytes, int from, int tag, weft_request_t *r);
// send_flags: weft_isend_ctx's for the send (WEFT_SEND_FORWARD).
int coll_sendrecv(const Comm &c, const void *sbuf, size_t sbytes, int to, void *rbuf, size_t rbytes, int from,
                  int tag, uint32_t send_flags = 0);
// Waits for every request; the first failure's weft status.
int coll_waitall(std::vector<weft_request_t> &reqs);
// Waits for a weft request; while windows are open, serving them meanwhile.
int wait_serving(weft_request_t *r, weft_msg_status_t *st);
// A null request is done at once, without a call into weft: MPI_Isend's
// sends that went out whole have none (WEFT_SEND_DONE_NULL).
inline int wait_one(weft_request_t *r, weft_msg_status_t *st)
{
    if (*r == WEFT_REQUEST_NULL) {
        if (st)
            *st = weft_msg_status_t{};
        return WEFT_SUCCESS;
    }
    return g_service ? wait_serving(r, st) : weft_wait(r, st);
}

// Reductions: inout[i] = op(in[i], inout[i]) for n basic elements.
bool op_valid_for(MPI_Op op, Basic b);
void reduce_apply(MPI_Op op, Basic b, const void *in, void *inout, size_t n);
// out = a op in, a holding the lower ranks' data; out is a, in, or memory
// overlapping neither.
void reduce_apply3(MPI_Op op, Basic b, const void *a, const void *in, void *out, size_t n);
const char *op_name(MPI_Op op);

// Tags on a communicator's collective context, one per kind of exchange.
enum CollTag : int {
    kTagContext = 1, kTagSplit, kTagBarrier, kTagBcast, kTagReduce, kTagAllreduce, kTagGather, kTagScatter,
    kTagAllgather, kTagAlltoall, kTagWin
};

// Dissemination barrier on c's collective context.
int barrier(const Comm &c);

// Called by MPI_Finalize for the one-sided layer (windows still open).
void windows_finalize();
void comms_finalize();

// ---------------------------------------------------------------- attributes (attr.cc)

// The objects attributes are cached on; a keyval belongs to one kind.
enum class AttrKind : uint8_t { Comm, Win, Type };
// MPI_Comm_dup / MPI_Type_dup: copies the attributes of from whose copy
// callback says so onto to. MPI_SUCCESS, or the class a callback returned
// (the copies made so far are deleted again).
int attrs_copy(AttrKind kind, int from, int to);
// Before an object is freed: deletes its attributes, calling their delete
// callbacks. MPI_SUCCESS, or the class a callback returned (the object
// must then stay).
int attrs_delete_all(AttrKind kind, int handle);
// MPI_Finalize's first step: MPI_COMM_SELF's and then MPI_COMM_WORLD's
// attributes are deleted while MPI still works (MPI-3.1 8.7.1).
void attrs_at_finalize();

} // namespace weft::mpi
