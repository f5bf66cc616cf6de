// One-sided communication, part 2: synchronization and the target's
// service (see win.hpp for the design).
//
//  - Fence: the origin completes its puts and gets (every ACK / REPLY) and
//    its ACC sends; the members exchange how many ACC messages each sent to
//    each (one count per pair, on the window's collective context); each
//    applies ACCs until it has applied all it was told about; a barrier.
//  - Lock: LOCK(type) to the target's service, which grants (GRANT reply)
//    when compatible and queues the others in arrival order. Unlock: the
//    origin completes its puts and gets to the target, then UNLOCK, which
//    follows its ACCs on the same context so they are applied first; the
//    target releases and answers DONE. Flush: the same with FLUSH/FLUSHED
//    and no release (and no message at all when no ACC went out since).
//  - MPI_MODE_NOCHECK locks send no LOCK: unlock is then a flush.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "mpi/win.hpp"

namespace weft::mpi {

namespace {

bool g_in_service = false;
bool g_attached = false;

// One pass of the waits below: progress, this window's completions, every
// window's service.
void pass(Win &w)
{
    win_drain(w);   // polls the EQ, which progresses once
    win_service();
}

// The error a sync call reports: a failed transfer since the last one.
int take_error(Win &w, const char *fn)
{
    if (w.error_class == MPI_SUCCESS)
        return MPI_SUCCESS;
    const int cls = w.error_class;
    const std::string why = w.error_why;
    w.error_class = MPI_SUCCESS;
    w.error_why.clear();
    return win_error(w, cls, fn, why);
}

void reply(Win &w, uint32_t origin, int32_t tag)
{
    weft_request_t r;
    if (weft_isend_ctx(nullptr, 0, origin, tag, w.comm.coll_context(), 0, &r) == WEFT_SUCCESS)
        weft_request_free(&r);   // empty: completes in the background
}

// Grants queued locks from the front while they are compatible.
void grant_waiting(Win &w)
{
    while (!w.lock_queue.empty() && !w.exclusive_held) {
        const Win::Waiter x = w.lock_queue.front();
        if (x.type == MPI_LOCK_EXCLUSIVE) {
            if (w.shared_holders > 0)
                return;
            w.exclusive_held = true;
        } else {
            ++w.shared_holders;
        }
        w.lock_queue.pop_front();
        reply(w, x.origin, kWinGrant);
    }
}

void apply_acc(Win &w, const std::byte *msg, size_t len)
{
    WinHeader hd;
    if (len < sizeof hd)
        return;
    std::memcpy(&hd, msg, sizeof hd);
    ++w.acc_applied;
    // The origin checked the range; a malformed message (sizes that
    // overflow, run past the window or past the message) changes nothing.
    if (hd.elem == 0 || hd.elem > 64 || hd.n > w.size / hd.elem)
        return;
    const size_t bytes = static_cast<size_t>(hd.n * hd.elem);
    if (len - sizeof hd < bytes || hd.offset > w.size || bytes > w.size - hd.offset)
        return;
    std::byte *dst = w.base + hd.offset;
    const std::byte *src = msg + sizeof hd;
    if (hd.op == MPI_REPLACE) {
        std::memmove(dst, src, bytes);
        return;
    }
    // reduce_apply works on typed arrays: stage both sides when the window
    // location is not aligned for the type.
    const Basic b = static_cast<Basic>(hd.basic);
    if (reinterpret_cast<uintptr_t>(dst) % alignof(std::max_align_t) == 0 ||
        (hd.elem && reinterpret_cast<uintptr_t>(dst) % hd.elem == 0)) {
        std::vector<std::byte> in(src, src + bytes);   // src follows a 40-byte header: may be misaligned too
        reduce_apply(hd.op, b, in.data(), dst, hd.n);
    } else {
        std::vector<std::byte> in(src, src + bytes), io(dst, dst + bytes);
        reduce_apply(hd.op, b, in.data(), io.data(), hd.n);
        std::memcpy(dst, io.data(), bytes);
    }
}

void handle(Win &w, uint32_t origin, int32_t tag, const std::vector<std::byte> &msg)
{
    WinHeader hd;
    if (tag != kWinAcc && msg.size() >= sizeof hd)
        std::memcpy(&hd, msg.data(), sizeof hd);
    switch (tag) {
    case kWinAcc:
        apply_acc(w, msg.data(), msg.size());
        break;
    case kWinLock:
        w.lock_queue.push_back({origin, hd.basic});
        grant_waiting(w);
        break;
    case kWinUnlock:
        if (hd.basic == MPI_LOCK_EXCLUSIVE)
            w.exclusive_held = false;
        else if (w.shared_holders > 0)
            --w.shared_holders;
        reply(w, origin, kWinDone);
        grant_waiting(w);
        break;
    case kWinFlush:
        reply(w, origin, kWinFlushed);
        break;
    default:
        break;
    }
}

void serve(Win &w)
{
    for (;;) {
        int flag = 0;
        weft_msg_status_t st{};
        if (weft_iprobe_ctx(WEFT_ANY_SOURCE, WEFT_ANY_TAG, w.ctx, &flag, &st) != WEFT_SUCCESS || !flag)
            return;
        std::vector<std::byte> msg(st.count);
        weft_request_t r;
        if (weft_irecv_ctx(msg.data(), msg.size(), st.source, st.tag, w.ctx, &r) != WEFT_SUCCESS)
            return;
        weft_msg_status_t rs{};
        if (weft_wait(&r, &rs) != WEFT_SUCCESS)
            continue;
        msg.resize(rs.count);
        handle(w, st.source, st.tag, msg);
    }
}

// Sends a control message to window rank `to` and waits for the reply tag.
int request(Win &w, int to, int32_t tag, const WinHeader &hd, int32_t reply_tag)
{
    const uint32_t dest = w.comm.to_world(to);
    weft_request_t rr, sr;
    if (int rc = weft_irecv_ctx(nullptr, 0, dest, reply_tag, w.comm.coll_context(), &rr))
        return rc;
    if (int rc = weft_isend_ctx(&hd, sizeof hd, dest, tag, w.ctx, 0, &sr)) {
        weft_request_free(&rr);
        return rc;
    }
    weft_msg_status_t st{};
    int rc = wait_one(&sr, &st);
    const int rc2 = wait_one(&rr, &st);
    return rc ? rc : rc2;
}

} // namespace

void win_service()
{
    if (g_in_service)
        return;
    g_in_service = true;
    for_each_win([](Win &w) { serve(w); });
    g_in_service = false;
}

void win_service_attach()
{
    if (!g_attached) {
        add_service(win_service);
        g_attached = true;
    }
}

void win_service_detach_if_idle()
{
    bool any = false;
    for_each_win([&](Win &) { any = true; });
    if (!any && g_attached) {
        remove_service(win_service);
        g_attached = false;
    }
}

int win_complete(Win &w, int target)
{
    auto busy = [&] {
        if (target < 0)
            return !w.ops.empty();
        return w.parts_to[static_cast<size_t>(target)] > 0;
    };
    while (busy())
        pass(w);
    // ACC sends: wait the ones to target (or all), keep the others.
    for (auto it = w.acc_sends.begin(); it != w.acc_sends.end();) {
        if (target >= 0 && it->target != target) {
            ++it;
            continue;
        }
        weft_msg_status_t st{};
        const int rc = wait_one(&it->req, &st);
        if (rc != WEFT_SUCCESS && w.error_class == MPI_SUCCESS) {
            w.error_class = fail_class(rc);
            w.error_why = "an accumulate to rank " + std::to_string(it->target) + " failed: " + weft_why(rc);
        }
        it = w.acc_sends.erase(it);
    }
    return w.error_class;
}

int win_quiesce(Win &w, const char *fn)
{
    win_complete(w, -1);
    // How many ACC messages each member sent to each: every member learns
    // how many it must have applied.
    const Comm &c = w.comm;
    std::vector<uint64_t> incoming(static_cast<size_t>(c.size), 0);
    incoming[static_cast<size_t>(c.rank)] = w.acc_since_fence[static_cast<size_t>(c.rank)];
    std::vector<weft_request_t> reqs;
    int rc = WEFT_SUCCESS;
    for (int r = 0; r < c.size && !rc; ++r) {
        if (r == c.rank)
            continue;
        weft_request_t q;
        rc = coll_irecv(c, &incoming[static_cast<size_t>(r)], sizeof(uint64_t), r, kTagWin, &q);
        if (!rc)
            reqs.push_back(q);
    }
    for (int r = 0; r < c.size && !rc; ++r)
        if (r != c.rank)
            rc = coll_send(c, &w.acc_since_fence[static_cast<size_t>(r)], sizeof(uint64_t), r, kTagWin);
    const int wrc = coll_waitall(reqs);
    if (rc || wrc)
        return win_error(w, fail_class(rc ? rc : wrc), fn, "exchanging the accumulate counts failed: " +
                                                               weft_why(rc ? rc : wrc));
    std::fill(w.acc_since_fence.begin(), w.acc_since_fence.end(), 0);
    for (uint64_t n : incoming)
        w.acc_expected += n;
    while (w.acc_applied < w.acc_expected) {
        weft_progress();
        win_service();
    }
    if (int brc = barrier(c))
        return win_error(w, fail_class(brc), fn, "the closing barrier failed: " + weft_why(brc));
    return take_error(w, fn);
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Win_fence)
int PMPI_Win_fence(int assert, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_fence";
    WIN_OR_RETURN(fn, h, w);
    const int known = MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;
    if (assert & ~known)
        return win_error(*w, MPI_ERR_ASSERT, fn,
                         "assert " + std::to_string(assert) +
                             " has bits that are not fence assertions (MPI_MODE_NOSTORE, NOPUT, NOPRECEDE, "
                             "NOSUCCEED)");
    for (size_t r = 0; r < w->locked.size(); ++r)
        if (w->locked[r] != LockHeld::None)
            return win_error(*w, MPI_ERR_RMA_SYNC, fn,
                             "this process holds a lock on rank " + std::to_string(r) +
                                 " (a passive-target epoch is open; unlock it before fencing)");
    // The assertions are hints; every fence does the full work.
    return win_quiesce(*w, fn);
}

WEFT_MPI_WEAK(Win_lock)
int PMPI_Win_lock(int type, int rank, int assert, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_lock";
    WIN_OR_RETURN(fn, h, w);
    if (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED)
        return win_error(*w, MPI_ERR_LOCKTYPE, fn,
                         "lock type " + std::to_string(type) + " is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED");
    if (assert & ~MPI_MODE_NOCHECK)
        return win_error(*w, MPI_ERR_ASSERT, fn,
                         "assert " + std::to_string(assert) + " has bits other than MPI_MODE_NOCHECK");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->comm.size)
        return win_error(*w, MPI_ERR_RANK, fn,
                         "rank " + std::to_string(rank) + " is not a member of the window (size " +
                             std::to_string(w->comm.size) + ")");
    const size_t r = static_cast<size_t>(rank);
    if (w->locked[r] != LockHeld::None)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn,
                         "this process already holds a lock on rank " + std::to_string(rank) + " of this window");
    if (!(assert & MPI_MODE_NOCHECK)) {
        WinHeader hd;
        hd.basic = type;
        if (int rc = request(*w, rank, kWinLock, hd, kWinGrant))
            return win_error(*w, fail_class(rc), fn, "asking rank " + std::to_string(rank) + " for the lock failed: " +
                                                         weft_why(rc));
    }
    w->locked[r] = type == MPI_LOCK_EXCLUSIVE ? LockHeld::Exclusive : LockHeld::Shared;
    w->nocheck[r] = (assert & MPI_MODE_NOCHECK) != 0;
    return MPI_SUCCESS;
}

namespace {

// Flush or unlock of window rank r (held).
int finish_epoch(Win &w, int rank, bool release, const char *fn)
{
    const size_t r = static_cast<size_t>(rank);
    win_complete(w, rank);
    int rc = WEFT_SUCCESS;
    WinHeader hd;
    hd.basic = w.locked[r] == LockHeld::Exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
    if (release && !w.nocheck[r])
        rc = request(w, rank, kWinUnlock, hd, kWinDone);
    else if (w.acc_since_flush[r] > 0)
        rc = request(w, rank, kWinFlush, hd, kWinFlushed);
    if (rc == WEFT_SUCCESS)
        w.acc_since_flush[r] = 0;
    if (release) {
        w.locked[r] = LockHeld::None;
        w.nocheck[r] = false;
    }
    if (rc)
        return win_error(w, fail_class(rc), fn, "completing the epoch at rank " + std::to_string(rank) +
                                                    " failed: " + weft_why(rc));
    return take_error(w, fn);
}

int check_held(Win &w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w.comm.size)
        return win_error(w, MPI_ERR_RANK, fn,
                         "rank " + std::to_string(rank) + " is not a member of the window (size " +
                             std::to_string(w.comm.size) + ")");
    if (w.locked[static_cast<size_t>(rank)] == LockHeld::None)
        return win_error(w, MPI_ERR_RMA_SYNC, fn,
                         "this process holds no lock on rank " + std::to_string(rank) +
                             " (MPI_Win_lock must come first)");
    return MPI_SUCCESS;
}

} // namespace

WEFT_MPI_WEAK(Win_unlock)
int PMPI_Win_unlock(int rank, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_unlock";
    WIN_OR_RETURN(fn, h, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (int rc = check_held(*w, rank, fn))
        return rc;
    return finish_epoch(*w, rank, true, fn);
}

WEFT_MPI_WEAK(Win_flush)
int PMPI_Win_flush(int rank, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_flush";
    WIN_OR_RETURN(fn, h, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (int rc = check_held(*w, rank, fn))
        return rc;
    return finish_epoch(*w, rank, false, fn);
}

WEFT_MPI_WEAK(Win_flush_all)
int PMPI_Win_flush_all(MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_flush_all";
    WIN_OR_RETURN(fn, h, w);
    int first = MPI_SUCCESS;
    for (int r = 0; r < w->comm.size; ++r)
        if (w->locked[static_cast<size_t>(r)] != LockHeld::None)
            if (int rc = finish_epoch(*w, r, false, fn); rc && !first)
                first = rc;
    return first;
}

} // extern "C"
