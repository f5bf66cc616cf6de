// SPDX-License-Identifier: BSD-3-Clause
// Collective schedules: a collective written once as a list of steps
// (post a send, post a receive, run a local computation, wait for what was
// posted), then either run to the end at once (the blocking calls built on
// it) or advanced a little from every MPI wait and test (the nonblocking
// MPI_I* calls and MPI-4's persistent MPI_*_init ones, as an Operation).
//
// A schedule moves no data when it is built: copying the user's send
// buffer, packing and unpacking are steps too, so a persistent request
// runs the same schedule again at each MPI_Start and sees the buffers'
// contents of that moment.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "mpi/coll.hpp"
#include "mpi/internal.hpp"

namespace weft::mpi::coll {

// A user-defined operation (MPI_Op_create); null when op is not one (the
// predefined ones, below kFirstUserOp, cost one comparison).
struct UserOp {
    MPI_User_function *fn = nullptr;
    bool commutative = true;
};
inline constexpr int kFirstUserOp = 32;
const UserOp *find_user_op(MPI_Op op);
inline const UserOp *user_op(MPI_Op op)
{
    return op >= kFirstUserOp ? find_user_op(op) : nullptr;
}

// A reduction's working arrays: for a predefined operation the datatype's
// basic elements in memory layout (as the blocking collectives keep them),
// for a user-defined one the packed elements, handed to the user's function
// in the datatype's own layout.
class Reducer {
public:
    // MPI's checks of (datatype, count, op); an MPI error class.
    int init(const Ctx &cx, const Datatype &t, MPI_Datatype th, int count, MPI_Op op);
    size_t bytes() const { return bytes_; }
    // The working bytes of the first `elements` elements, and where
    // element `elements` starts in the working array.
    size_t bytes_for(int elements) const;
    size_t offset_of(int elements) const;
    bool commutative() const { return commutative_; }
    void load(const void *buf, std::byte *out) const;
    // count elements (all of them by default) of a working array into buf.
    void store(const std::byte *in, void *buf, int count = -1) const;
    // inout = in op inout (MPI's order: in holds the lower ranks' data).
    void apply(const std::byte *in, std::byte *inout) const;
    // dst = lower op higher, dst being one of the two; the other may be
    // overwritten.
    void combine(std::byte *lower, std::byte *higher, std::byte *dst) const;

private:
    MPI_Op op_ = MPI_OP_NULL;
    Basic basic_ = Basic::None;
    size_t n_ = 0;                     // basic elements (predefined operations)
    size_t bytes_ = 0;
    int count_ = 0;
    const Datatype *type_ = nullptr;   // the schedule's own copy
    MPI_Datatype type_handle_ = MPI_DATATYPE_NULL;
    UserOp user_{};
    bool commutative_ = true;
};

class Schedule {
public:
    // Messages go on c's collective context with this tag (see next_tag).
    Schedule(const Comm &c, int tag);
    int rank() const { return rank_; }
    int size() const { return size_; }

    // ---- building
    // Memory owned by the schedule (stable for its life).
    std::byte *scratch(size_t bytes);
    // A datatype that outlives the user's handle (derived ones are copied).
    const Datatype &keep(const Datatype &t);
    Reducer &reducer();
    void send(const void *buf, size_t bytes, int peer);
    void recv(void *buf, size_t bytes, int peer);
    // count elements of t: straight from/into the user's memory when
    // contiguous, else packed before the send / unpacked at the next wait.
    void send_typed(const void *buf, int count, const Datatype &t, int peer);
    void recv_typed(void *buf, int count, const Datatype &t, int peer);
    void copy_typed(const void *src, int scount, const Datatype &st, void *dst, int rcount, const Datatype &rt);
    void local(std::function<void()> fn);
    // Later steps start once everything posted before is complete.
    void wait();

    // Bytes of scratch() memory it holds.
    size_t scratch_bytes() const { return scratch_bytes_; }
    // The communicator's collective context it runs on.
    uint32_t context() const { return context_; }

    // ---- running
    void reset();
    // The tag of the next run (a kept schedule started again).
    void retag(int tag) { tag_ = tag; }
    // Posts and tests without blocking; true once every step is done (or
    // a transfer failed: error() then says how). post_only: stop at the
    // first wait without testing (a collective's start: what it posted
    // cannot be done yet, and testing would only cost a progress pass).
    bool advance(bool post_only = false);
    int error() const { return error_; }
    // Runs it to the end, progressing weft and the MPI layer's services.
    int run();

private:
    struct Step {
        enum class Kind { Send, Recv, Local, Wait } kind;
        std::byte *buf = nullptr;
        size_t bytes = 0;
        int peer = 0;
        std::function<void()> fn;
    };
    bool test_pending();
    void settle_send(weft_request_t *r);
    void abandon();

    uint32_t context_;
    int tag_;
    int rank_, size_;
    std::vector<uint32_t> world_;
    std::vector<Step> steps_;
    std::vector<std::function<void()>> unpacks_;   // for the next wait
    std::vector<PageBuffer> scratch_;   // zeroed when made
    size_t scratch_bytes_ = 0;
    std::vector<std::unique_ptr<Datatype>> types_;
    std::unique_ptr<Reducer> reducer_;
    // running state
    size_t pc_ = 0;
    bool waiting_ = false;
    std::vector<weft_request_t> pending_;
    int error_ = WEFT_SUCCESS;
};

// Tags of the blocking collectives that run a schedule.
enum ScheduleTag : int {
    kTagReduceScatter = 32, kTagScan, kTagExscan, kTagAlltoallw, kTagUserReduce, kTagUserAllreduce,
    kTagInter   // every blocking collective on an intercommunicator (coll_inter.cc)
};
// A fresh tag for a nonblocking or persistent collective on c: every member
// starts c's collectives in the same order, so the n-th one gets the same
// tag everywhere, and no two outstanding ones share it.
int next_tag(Comm &c);

// A reduction's checks (datatype, count, op) and s's reducer for them, in *red.
int check_reduction(const Ctx &cx, Schedule &s, int count, MPI_Datatype th, MPI_Op op, Reducer **red);

// Builders: the MPI checks of each collective (an MPI error class, raised
// on cx), then its steps into s. They read the count and displacement
// arrays now; the buffers when the schedule runs.
int build_barrier(Schedule &s);
int build_bcast(const Ctx &cx, Schedule &s, void *buf, int count, MPI_Datatype th, int root);
int build_reduce(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op,
                 int root);
int build_allreduce(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th,
                    MPI_Op op);
int build_reduce_scatter(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype th, MPI_Op op);
int build_scan(const Ctx &cx, Schedule &s, const void *sendbuf, void *recvbuf, int count, MPI_Datatype th, MPI_Op op,
               bool exclusive);
int build_gatherv(const Ctx &cx, Schedule &s, const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root);
int build_scatterv(const Ctx &cx, Schedule &s, const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root);
int build_allgatherv(const Ctx &cx, Schedule &s, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype);
// Alltoall(v/w): per peer a count, a displacement in bytes and a datatype
// (send side ignored when sendbuf is MPI_IN_PLACE).
struct Blocks {
    std::vector<int> counts;
    std::vector<std::ptrdiff_t> displs;
    std::vector<MPI_Datatype> types;
};
int build_alltoallw(const Ctx &cx, Schedule &s, const void *sendbuf, const Blocks &out, void *recvbuf,
                    const Blocks &in);

// A blocking collective: builds its schedule and runs it to the end.
template <class Build>
int run_schedule(const Ctx &cx, int tag, Build build)
{
    Schedule s(*cx.c, tag);
    if (int rc = build(s))
        return rc;
    if (int wrc = s.run())
        return fail(cx, wrc);
    return MPI_SUCCESS;
}

// s (built, ending in a wait) becomes an active request on h, its first
// round posted now.
int launch_schedule(MPI_Comm h, std::shared_ptr<Schedule> s, MPI_Request *out);
// A nonblocking collective: s becomes an active request (its first round
// posted now).
int start_schedule(const Ctx &cx, MPI_Comm h, std::unique_ptr<Schedule> s, MPI_Request *out);

// What a regular nonblocking collective's schedule was built from: which
// collective, and every argument (buffers, counts, datatypes, op, root).
// Only schedules of predefined datatypes and operations are kept: a
// derived datatype's or user operation's handle may name another one later.
struct ScheduleKey {
    std::array<std::intptr_t, 10> words{};
    bool cacheable = false;
    bool operator==(const ScheduleKey &o) const { return words == o.words; }
};
ScheduleKey make_schedule_key(int collective, std::initializer_list<std::intptr_t> args,
                              std::initializer_list<MPI_Datatype> types, MPI_Op op);
template <class T>
std::intptr_t key_word(T *p)
{
    return reinterpret_cast<std::intptr_t>(p);
}
inline std::intptr_t key_word(int v) { return v; }
// The key of `collective` called with args, whose datatypes are types and
// operation op (MPI_OP_NULL: none).
template <class... Args>
ScheduleKey schedule_key(int collective, std::initializer_list<MPI_Datatype> types, MPI_Op op, Args... args)
{
    return make_schedule_key(collective, {key_word(args)...}, types, op);
}

// A communicator's kept schedules: the start of a nonblocking collective
// called again with the same arguments (a loop's usual case) rewinds the
// schedule it built last time instead of building it again.
class ScheduleCache {
public:
    // The kept schedule for key on context, if one is and it is not running.
    std::shared_ptr<Schedule> find(uint32_t context, const ScheduleKey &key);
    void keep(const ScheduleKey &key, std::shared_ptr<Schedule> s);

private:
    static constexpr size_t kEntries = 16;
    struct Entry {
        ScheduleKey key;
        std::shared_ptr<Schedule> s;
    };
    std::array<Entry, kEntries> entries_;
    size_t next_ = 0;   // the entry the next keep() replaces
};
// Schedules holding more scratch memory than this are not kept.
inline constexpr size_t kMaxKeptScratch = 256 * 1024;

// A nonblocking collective whose schedule may be kept: the kept one for key
// when there is one, else build(s)'s, kept for next time.
template <class Build>
int start_keyed(const Ctx &cx, MPI_Comm h, const ScheduleKey &key, MPI_Request *out, Build build)
{
    if (!out)
        return raise(cx.c, MPI_ERR_ARG, cx.fn, "request is NULL");
    const int tag = next_tag(*cx.c);
    if (key.cacheable && cx.c->schedule_cache)
        if (std::shared_ptr<Schedule> s = cx.c->schedule_cache->find(cx.c->coll_context(), key)) {
            s->retag(tag);
            return launch_schedule(h, std::move(s), out);
        }
    auto s = std::make_shared<Schedule>(*cx.c, tag);
    if (int rc = build(*s))
        return rc;
    s->wait();
    if (key.cacheable && s->scratch_bytes() <= kMaxKeptScratch) {
        if (!cx.c->schedule_cache)
            cx.c->schedule_cache = std::make_shared<ScheduleCache>();
        cx.c->schedule_cache->keep(key, s);
    }
    return launch_schedule(h, std::move(s), out);
}
// A persistent collective: an inactive request that MPI_Start runs.
int persist_schedule(const Ctx &cx, MPI_Comm h, std::unique_ptr<Schedule> s, MPI_Request *out);

} // namespace weft::mpi::coll
