// SPDX-License-Identifier: BSD-3-Clause
// The collective schedule (coll_sched.hpp): building, advancing, running to
// the end, and the Operation that puts one behind an MPI_Request; the
// reductions' working arrays (predefined and user-defined operations), and
// the user-defined operations themselves (MPI_Op_create/free/commutative).
#include <cstring>
#include <string>

#include "mpi/coll_sched.hpp"

namespace weft::mpi::coll {

namespace {

// User-defined operations take the handles above the predefined ones.
Table<UserOp> g_user_ops(kFirstUserOp);

// Nonblocking and persistent collectives' tags: above every blocking one.
constexpr int kTagScheduleFirst = 1024;
constexpr uint32_t kScheduleTags = 1u << 24;

} // namespace

const UserOp *find_user_op(MPI_Op op)
{
    return g_user_ops.get(op);
}

int next_tag(Comm &c)
{
    return kTagScheduleFirst + static_cast<int>(c.schedules_begun++ % kScheduleTags);
}

// ---------------------------------------------------------------- Reducer

int Reducer::init(const Ctx &cx, const Datatype &t, MPI_Datatype th, int count, MPI_Op op)
{
    op_ = op;
    count_ = count;
    type_ = &t;
    type_handle_ = th;
    if (const UserOp *u = user_op(op)) {
        // The user's function sees the elements in the datatype's layout:
        // the working array is the span they occupy (holes included).
        if (t.extent() <= 0 && count > 1)
            return raise(cx.c, MPI_ERR_TYPE, cx.fn,
                         "user-defined operations need a datatype of positive extent (" +
                             std::to_string(t.extent()) + ")");
        user_ = *u;
        commutative_ = u->commutative;
        bytes_ = bytes_for(count);
        return MPI_SUCCESS;
    }
    size_t elem = 0;
    if (int rc = reduction_shape(cx, t, count, op, &n_, &elem))
        return rc;
    basic_ = t.basic;
    bytes_ = n_ * elem;
    commutative_ = true;
    return MPI_SUCCESS;
}

size_t Reducer::bytes_for(int elements) const
{
    if (elements <= 0)
        return 0;
    if (user_.fn)
        return static_cast<size_t>(elements - 1) * static_cast<size_t>(type_->extent()) +
               static_cast<size_t>(type_->true_ub - type_->true_lb);
    return count_ == 0 ? 0 : bytes_ / static_cast<size_t>(count_) * static_cast<size_t>(elements);
}

size_t Reducer::offset_of(int elements) const
{
    if (user_.fn)
        return static_cast<size_t>(elements) * static_cast<size_t>(type_->extent());
    return bytes_for(elements);
}

void Reducer::load(const void *buf, std::byte *out) const
{
    const Datatype &t = *type_;
    const auto *in = static_cast<const std::byte *>(buf);
    if (user_.fn)
        std::memcpy(out, in + t.true_lb, bytes_);
    else if (t.predefined || t.contiguous(count_))
        std::memcpy(out, in + t.data_offset, bytes_);
    else
        pack(buf, count_, t, out);
}

void Reducer::store(const std::byte *in, void *buf, int count) const
{
    if (count < 0)
        count = count_;
    const Datatype &t = *type_;
    auto *out = static_cast<std::byte *>(buf);
    const size_t bytes = bytes_for(count);
    if (user_.fn) {
        if (t.predefined || t.contiguous(count)) {
            std::memcpy(out + t.true_lb, in, bytes);
        } else {   // only the data: the holes of buf are the user's
            std::vector<std::byte> packed(t.size * static_cast<size_t>(count));
            pack(in - t.true_lb, count, t, packed.data());
            unpack(packed.data(), packed.size(), buf, count, t);
        }
    } else if (t.predefined || t.contiguous(count)) {
        std::memcpy(out + t.data_offset, in, bytes);
    } else {
        unpack(in, bytes, buf, count, t);
    }
}

void Reducer::apply(const std::byte *in, std::byte *inout) const
{
    if (user_.fn) {
        int len = count_;
        MPI_Datatype dt = type_handle_;
        user_.fn(const_cast<std::byte *>(in) - type_->true_lb, inout - type_->true_lb, &len, &dt);
        return;
    }
    reduce_apply(op_, basic_, in, inout, n_);
}

void Reducer::combine(std::byte *lower, std::byte *higher, std::byte *dst) const
{
    if (dst == higher) {
        apply(lower, higher);
    } else if (commutative_) {
        apply(higher, lower);
    } else {
        apply(lower, higher);
        std::memcpy(lower, higher, bytes_);
    }
}

// ---------------------------------------------------------------- Schedule

Schedule::Schedule(const Comm &c, int tag)
    : context_(c.coll_context()), tag_(tag), rank_(c.rank), size_(c.size), world_(c.world)
{
    steps_.reserve(16);   // a small collective's steps, without regrowing
    scratch_.reserve(4);
}

std::byte *Schedule::scratch(size_t bytes)
{
    scratch_bytes_ += bytes;
    scratch_.push_back(page_buffer(bytes));
    std::memset(scratch_.back().get(), 0, bytes);   // as the vectors it replaced were
    return scratch_.back().get();
}

const Datatype &Schedule::keep(const Datatype &t)
{
    if (t.predefined)
        return t;
    types_.push_back(std::make_unique<Datatype>(t));
    return *types_.back();
}

Reducer &Schedule::reducer()
{
    if (!reducer_)
        reducer_ = std::make_unique<Reducer>();
    return *reducer_;
}

void Schedule::send(const void *buf, size_t bytes, int peer)
{
    steps_.push_back({Step::Kind::Send, static_cast<std::byte *>(const_cast<void *>(buf)), bytes, peer, {}});
}

void Schedule::recv(void *buf, size_t bytes, int peer)
{
    steps_.push_back({Step::Kind::Recv, static_cast<std::byte *>(buf), bytes, peer, {}});
}

void Schedule::local(std::function<void()> fn)
{
    steps_.push_back({Step::Kind::Local, nullptr, 0, 0, std::move(fn)});
}

void Schedule::wait()
{
    steps_.push_back({Step::Kind::Wait, nullptr, 0, 0, {}});
    for (auto &fn : unpacks_)
        local(std::move(fn));
    unpacks_.clear();
}

void Schedule::send_typed(const void *buf, int count, const Datatype &t, int peer)
{
    const size_t bytes = t.size * static_cast<size_t>(count);
    if (t.contiguous(count)) {
        send(static_cast<const std::byte *>(buf) + t.data_offset, bytes, peer);
        return;
    }
    const Datatype *kt = &keep(t);
    std::byte *packed = scratch(bytes);
    local([=] { pack(buf, count, *kt, packed); });
    send(packed, bytes, peer);
}

void Schedule::recv_typed(void *buf, int count, const Datatype &t, int peer)
{
    const size_t bytes = t.size * static_cast<size_t>(count);
    if (t.contiguous(count)) {
        recv(static_cast<std::byte *>(buf) + t.data_offset, bytes, peer);
        return;
    }
    const Datatype *kt = &keep(t);
    std::byte *packed = scratch(bytes);
    recv(packed, bytes, peer);
    unpacks_.push_back([=] { unpack(packed, bytes, buf, count, *kt); });
}

void Schedule::copy_typed(const void *src, int scount, const Datatype &st, void *dst, int rcount,
                          const Datatype &rt)
{
    const Datatype *kst = &keep(st), *krt = &keep(rt);
    local([=] { coll::copy_typed(src, scount, *kst, dst, rcount, *krt); });
}

void Schedule::reset()
{
    abandon();
    pc_ = 0;
    waiting_ = false;
    error_ = WEFT_SUCCESS;
}

void Schedule::abandon()
{
    for (weft_request_t &r : pending_)
        if (r != WEFT_REQUEST_NULL)
            weft_request_free(&r);
    pending_.clear();
}

bool Schedule::test_pending()
{
    bool all = true;
    for (weft_request_t &r : pending_) {
        if (r == WEFT_REQUEST_NULL)
            continue;
        int done = 0;
        weft_msg_status_t st{};
        const int rc = weft_test(&r, &done, &st);
        if (!done && rc == WEFT_SUCCESS) {
            all = false;
            continue;
        }
        const int err = done ? st.error : rc;
        if (err != WEFT_SUCCESS && error_ == WEFT_SUCCESS)
            error_ = err;
    }
    if (all)
        pending_.clear();
    return all;
}

void Schedule::settle_send(weft_request_t *r)
{
    // An eager send is complete once posted: done with it now rather than
    // at the next wait's test. One that is not gets a progress pass here
    // (weft_test's), which may be what it needs to leave.
    int done = 0;
    weft_msg_status_t st{};
    const int rc = weft_test(r, &done, &st);
    if (rc != WEFT_SUCCESS || (done && st.error != WEFT_SUCCESS))
        error_ = rc != WEFT_SUCCESS ? rc : st.error;
    if (done || rc != WEFT_SUCCESS)
        *r = WEFT_REQUEST_NULL;
}

bool Schedule::advance(bool post_only)
{
    for (;;) {
        if (waiting_) {
            if (post_only)
                return false;
            if (!test_pending() && error_ == WEFT_SUCCESS)
                return false;
            waiting_ = false;
        }
        if (error_ != WEFT_SUCCESS) {   // a transfer failed: the rest cannot happen
            abandon();
            pc_ = steps_.size();
            return true;
        }
        if (pc_ == steps_.size()) {
            if (pending_.empty())
                return true;
            waiting_ = true;
            continue;
        }
        Step &st = steps_[pc_++];
        weft_request_t r = WEFT_REQUEST_NULL;
        switch (st.kind) {
        case Step::Kind::Send:
            error_ = weft_isend_ctx(st.buf, st.bytes, world_[static_cast<size_t>(st.peer)], tag_, context_, 0, &r);
            if (error_ == WEFT_SUCCESS)
                settle_send(&r);
            break;
        case Step::Kind::Recv:
            error_ = weft_irecv_ctx(st.buf, st.bytes, world_[static_cast<size_t>(st.peer)], tag_, context_, &r);
            break;
        case Step::Kind::Local:
            st.fn();
            break;
        case Step::Kind::Wait:
            waiting_ = !pending_.empty();
            break;
        }
        if (r != WEFT_REQUEST_NULL)
            pending_.push_back(r);
    }
}

int Schedule::run()
{
    wait();
    int idle = 0;
    while (!advance())
        wait_pass(&idle);
    return error_;
}

// ---------------------------------------------------------------- requests

namespace {

class ScheduleOp final : public Operation {
public:
    // Shared: a persistent collective's recipe keeps the schedule for the
    // next MPI_Start while a round freed by MPI_Request_free runs on.
    explicit ScheduleOp(std::shared_ptr<Schedule> s) : s_(std::move(s)) {}
    // Posts the first round (a send that did not go out at once got a
    // progress pass as it was posted). Testing the receives now would only
    // cost passes: nothing posted can be done yet, and every cost here is
    // the program's, before its computation starts.
    void post() { s_->advance(true); }
    bool progress(MPI_Status *status) override
    {
        if (!s_->advance())
            return false;
        status->MPI_ERROR = s_->error() == WEFT_SUCCESS ? MPI_SUCCESS : fail_class(s_->error());
        return true;
    }

private:
    std::shared_ptr<Schedule> s_;
};

// A persistent collective (MPI_*_init): the schedule is built once; each
// MPI_Start rewinds it and runs it as the request's operation, reading the
// buffers as they are then.
class ScheduleRecipe final : public Persistent {
public:
    explicit ScheduleRecipe(std::unique_ptr<Schedule> s) : s_(std::move(s)) {}
    int start(Request &r) override
    {
        s_->reset();
        auto op = std::make_unique<ScheduleOp>(s_);
        op->post();   // the first round goes out now
        run_operation_in(r, std::move(op));
        return MPI_SUCCESS;
    }

private:
    std::shared_ptr<Schedule> s_;
};

} // namespace

int launch_schedule(MPI_Comm h, std::shared_ptr<Schedule> s, MPI_Request *out)
{
    s->reset();
    auto op = std::make_unique<ScheduleOp>(std::move(s));
    op->post();   // the first round goes out now
    *out = start_operation(std::move(op), h);
    return MPI_SUCCESS;
}

int start_schedule(const Ctx &, MPI_Comm h, std::unique_ptr<Schedule> s, MPI_Request *out)
{
    s->wait();
    return launch_schedule(h, std::shared_ptr<Schedule>(std::move(s)), out);
}

// ---------------------------------------------------------------- kept schedules

ScheduleKey make_schedule_key(int collective, std::initializer_list<std::intptr_t> args,
                              std::initializer_list<MPI_Datatype> types, MPI_Op op)
{
    ScheduleKey k;
    k.words[0] = collective;
    size_t i = 1;
    for (std::intptr_t a : args)
        if (i < k.words.size())
            k.words[i++] = a;
    k.cacheable = args.size() < k.words.size() && op < kFirstUserOp;
    for (MPI_Datatype t : types)
        k.cacheable = k.cacheable && static_cast<unsigned>(t) < static_cast<unsigned>(kFirstDerivedType);
    return k;
}

std::shared_ptr<Schedule> ScheduleCache::find(uint32_t context, const ScheduleKey &key)
{
    for (Entry &e : entries_)
        // Only the cache holds an idle one: a running one's operation holds it too.
        if (e.s && e.key == key && e.s.use_count() == 1 && e.s->context() == context)
            return e.s;
    return nullptr;
}

void ScheduleCache::keep(const ScheduleKey &key, std::shared_ptr<Schedule> s)
{
    entries_[next_] = {key, std::move(s)};
    next_ = (next_ + 1) % kEntries;
}

int persist_schedule(const Ctx &, MPI_Comm h, std::unique_ptr<Schedule> s, MPI_Request *out)
{
    s->wait();
    *out = make_persistent(std::make_unique<ScheduleRecipe>(std::move(s)), h);
    return MPI_SUCCESS;
}

} // namespace weft::mpi::coll

using namespace weft::mpi;
using namespace weft::mpi::coll;

extern "C" {

WEFT_MPI_WEAK(Op_create)
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Op_create");
    if (!user_fn || !op)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Op_create", "the function and the op pointer must not be NULL");
    *op = g_user_ops.add(std::make_unique<UserOp>(UserOp{user_fn, commute != 0}));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Op_free)
int PMPI_Op_free(MPI_Op *op)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Op_free");
    if (!op)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Op_free", "op is NULL");
    if (!user_op(*op))
        return raise(nullptr, MPI_ERR_OP, "MPI_Op_free",
                     std::string(op_name(*op)) + " (" + std::to_string(*op) +
                         ") is not a user-defined operation (only those made by MPI_Op_create can be freed)");
    // Collectives already started with it keep their own copy.
    g_user_ops.remove(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Op_commutative)
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Op_commutative");
    if (!commute)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
    if (const UserOp *u = user_op(op)) {
        *commute = u->commutative;
        return MPI_SUCCESS;
    }
    if (op < MPI_MAX || op > MPI_NO_OP)
        return raise(nullptr, MPI_ERR_OP, "MPI_Op_commutative",
                     "op " + std::to_string(op) + " is not a valid operation");
    *commute = 1;
    return MPI_SUCCESS;
}

} // extern "C"
