// SPDX-License-Identifier: BSD-3-Clause
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
#include <atomic>
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

// The target memory of [offset, offset+bytes), or null when it is not all
// inside the window (dynamic: inside one attached region).
std::byte *locate(const Win &w, uint64_t offset, uint64_t bytes)
{
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        if (offset > w.size || bytes > w.size - offset)
            return nullptr;
        return w.base + offset;
    }
    for (const Region &r : w.regions)
        if (offset >= r.base && offset - r.base <= r.size && bytes <= r.size - (offset - r.base))
            return reinterpret_cast<std::byte *>(static_cast<uintptr_t>(offset));
    return nullptr;
}

// One element-wise update of n elements at dst with src (which may be misaligned).
void apply_op(int32_t op, Basic b, size_t elem, std::byte *dst, const std::byte *src, size_t n)
{
    const size_t bytes = n * elem;
    if (op == MPI_REPLACE) {
        std::memmove(dst, src, bytes);
        return;
    }
    // reduce_apply works on typed arrays: stage both sides when the window
    // location is not aligned for the type.
    std::vector<std::byte> in(src, src + bytes);
    if (reinterpret_cast<uintptr_t>(dst) % elem == 0) {
        reduce_apply(op, b, in.data(), dst, n);
    } else {
        std::vector<std::byte> io(dst, dst + bytes);
        reduce_apply(op, b, in.data(), io.data(), n);
        std::memcpy(dst, io.data(), bytes);
    }
}

// An ACC or FETCH message: applies it block by block; a FETCH is answered
// with the blocks' contents from before. The origin checked the ranges
// (except a dynamic window's regions); a malformed message (sizes that
// overflow, run past the window or past the message, memory not attached)
// changes nothing, and false says so.
bool apply_msg(Win &w, int from, uint32_t origin, bool fetch, const std::byte *msg, size_t len)
{
    ++w.acc_applied_from[static_cast<size_t>(from)];
    WinHeader hd;
    if (len < sizeof hd)
        return false;
    std::memcpy(&hd, msg, sizeof hd);
    if (hd.elem == 0 || hd.elem > 64 || hd.blocks > (len - sizeof hd) / sizeof(WinBlock))
        return false;
    std::vector<WinBlock> blocks(hd.blocks);
    std::memcpy(blocks.data(), msg + sizeof hd, hd.blocks * sizeof(WinBlock));
    const std::byte *data = msg + sizeof hd + hd.blocks * sizeof(WinBlock);
    const size_t data_len = len - sizeof hd - hd.blocks * sizeof(WinBlock);
    uint64_t total = 0;
    std::vector<std::byte *> where(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
        where[i] = locate(w, blocks[i].offset, blocks[i].bytes);
        if (!where[i] || blocks[i].bytes % hd.elem)
            return false;
        total += blocks[i].bytes;
    }
    const uint64_t needed = hd.op == MPI_NO_OP ? 0 : hd.op == kWinCompareAndSwap ? 2 * total : total;
    if (data_len < needed)
        return false;
    std::vector<std::byte> old;
    if (fetch) {
        old.resize(total);
        size_t pos = 0;
        for (size_t i = 0; i < blocks.size(); ++i) {
            std::memcpy(old.data() + pos, where[i], blocks[i].bytes);
            pos += blocks[i].bytes;
        }
    }
    const Basic b = static_cast<Basic>(hd.basic);
    size_t pos = 0;
    for (size_t i = 0; i < blocks.size() && hd.op != MPI_NO_OP; ++i) {
        const size_t bytes = blocks[i].bytes;
        if (hd.op == kWinCompareAndSwap) {
            if (std::memcmp(where[i], data + total + pos, bytes) == 0)
                std::memcpy(where[i], data + pos, bytes);
        } else {
            apply_op(hd.op, b, hd.elem, where[i], data + pos, bytes / hd.elem);
        }
        pos += bytes;
    }
    if (fetch) {
        weft_request_t r;
        if (weft_isend_ctx(old.data(), old.size(), origin, kWinFetched, w.comm.coll_context(), 0, &r) ==
            WEFT_SUCCESS)
            keep_in_background(r, std::move(old));
    }
    return true;
}

void handle(Win &w, uint32_t origin, int32_t tag, const std::vector<std::byte> &msg)
{
    WinHeader hd;
    if (tag != kWinAcc && tag != kWinFetch && msg.size() >= sizeof hd)
        std::memcpy(&hd, msg.data(), sizeof hd);
    switch (tag) {
    case kWinAcc:
    case kWinFetch:
        if (const int from = w.comm.from_world(origin); from >= 0)
            if (!apply_msg(w, from, origin, tag == kWinFetch, msg.data(), msg.size()) && tag == kWinFetch)
                reply(w, origin, kWinFetched);   // empty: the origin reports the refusal
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

// The error a sync call reports: a failed transfer since the last one.
int win_take_error(Win &w, const char *fn)
{
    if (w.error_class == MPI_SUCCESS)
        return MPI_SUCCESS;
    const int cls = w.error_class;
    const std::string why = w.error_why;
    w.error_class = MPI_SUCCESS;
    w.error_why.clear();
    return win_error(w, cls, fn, why);
}

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

namespace {

void note_failure(Win &w, int rc, const std::string &what)
{
    if (rc != WEFT_SUCCESS && w.error_class == MPI_SUCCESS) {
        w.error_class = fail_class(rc);
        w.error_why = what + ": " + weft_why(rc);
    }
}

// A FETCH answered: a staged answer is unpacked into the result buffer.
void finish_fetch(Win &w, Fetch &f, int rc, size_t received)
{
    note_failure(w, rc, "the answer of an atomic or get from rank " + std::to_string(f.target) + " failed");
    if (rc == WEFT_SUCCESS && received != f.bytes && w.error_class == MPI_SUCCESS) {
        w.error_class = MPI_ERR_DISP;
        w.error_why = "rank " + std::to_string(f.target) +
                      " refused an atomic or get: the target memory is not (or no longer) attached to its "
                      "dynamic window, or not inside its window";
        return;
    }
    if (rc == WEFT_SUCCESS && f.type && f.dst)
        unpack(f.staging.data(), f.staging.size(), f.dst, f.count, *f.type);
}

bool targets(int target, int rank) { return target < 0 || target == rank; }

} // namespace

int win_complete(Win &w, int target)
{
    auto busy = [&] {
        if (target < 0)
            return !w.ops.empty();
        return w.parts_to[static_cast<size_t>(target)] > 0;
    };
    while (busy())
        pass(w);
    // ACC sends and fetches: wait the ones to target (or all), keep the others.
    for (auto it = w.acc_sends.begin(); it != w.acc_sends.end();) {
        if (!targets(target, it->target)) {
            ++it;
            continue;
        }
        weft_msg_status_t st{};
        note_failure(w, wait_one(&it->req, &st), "an accumulate to rank " + std::to_string(it->target) + " failed");
        it = w.acc_sends.erase(it);
    }
    for (auto it = w.fetches.begin(); it != w.fetches.end();) {
        if (!targets(target, it->target)) {
            ++it;
            continue;
        }
        weft_msg_status_t st{};
        const int rc = wait_one(&it->req, &st);
        finish_fetch(w, *it, rc, st.count);
        it = w.fetches.erase(it);
    }
    return w.error_class;
}

void win_poll(Win &w)
{
    win_drain(w);
    for (auto it = w.acc_sends.begin(); it != w.acc_sends.end();) {
        int done = 0;
        weft_msg_status_t st{};
        const int rc = weft_test(&it->req, &done, &st);
        if (!done && rc == WEFT_SUCCESS) {
            ++it;
            continue;
        }
        note_failure(w, rc ? rc : st.error, "an accumulate to rank " + std::to_string(it->target) + " failed");
        it = w.acc_sends.erase(it);
    }
    for (auto it = w.fetches.begin(); it != w.fetches.end();) {
        int done = 0;
        weft_msg_status_t st{};
        const int rc = weft_test(&it->req, &done, &st);
        if (!done && rc == WEFT_SUCCESS) {
            ++it;
            continue;
        }
        finish_fetch(w, *it, rc ? rc : st.error, st.count);
        it = w.fetches.erase(it);
    }
}

bool win_pending(const Win &w, uint64_t lo, uint64_t hi)
{
    auto in = [&](uint64_t id) { return id >= lo && id < hi; };
    if (auto it = w.ops.lower_bound(lo); it != w.ops.end() && it->first < hi)
        return true;
    for (const AccSend &s : w.acc_sends)
        if (in(s.id))
            return true;
    for (const Fetch &f : w.fetches)
        if (in(f.id))
            return true;
    return false;
}

int win_send_msg(Win &w, int target, int32_t tag, std::vector<std::byte> msg, uint64_t id)
{
    AccSend s;
    s.id = id;
    s.target = target;
    s.msg = std::move(msg);
    if (int rc = weft_isend_ctx(s.msg.data(), s.msg.size(), w.comm.to_world(target), tag, w.ctx, 0, &s.req))
        return rc;
    w.acc_sends.push_back(std::move(s));
    ++w.acc_sent_to[static_cast<size_t>(target)];
    ++w.acc_since_flush[static_cast<size_t>(target)];
    return WEFT_SUCCESS;
}

void win_wait_applied(Win &w, const std::vector<uint64_t> &counts)
{
    auto behind = [&] {
        for (size_t r = 0; r < counts.size(); ++r)
            if (w.acc_applied_from[r] < counts[r])
                return true;
        return false;
    };
    while (behind()) {
        weft_progress();
        win_service();
    }
}

int win_quiesce(Win &w, const char *fn)
{
    win_complete(w, -1);
    // How many ACC messages each member sent to each since the window was
    // made: every member learns how many it must have applied.
    const Comm &c = w.comm;
    std::vector<uint64_t> incoming(static_cast<size_t>(c.size), 0);
    incoming[static_cast<size_t>(c.rank)] = w.acc_sent_to[static_cast<size_t>(c.rank)];
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
            rc = coll_send(c, &w.acc_sent_to[static_cast<size_t>(r)], sizeof(uint64_t), r, kTagWin);
    const int wrc = coll_waitall(reqs);
    if (rc || wrc)
        return win_error(w, fail_class(rc ? rc : wrc), fn, "exchanging the accumulate counts failed: " +
                                                               weft_why(rc ? rc : wrc));
    win_wait_applied(w, incoming);
    if (int brc = barrier(c))
        return win_error(w, fail_class(brc), fn, "the closing barrier failed: " + weft_why(brc));
    return win_take_error(w, fn);
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
    return win_take_error(w, fn);
}

// Flush or unlock of every rank held; the first error.
int finish_all(Win &w, bool release, const char *fn)
{
    int first = MPI_SUCCESS;
    for (int r = 0; r < w.comm.size; ++r)
        if (w.locked[static_cast<size_t>(r)] != LockHeld::None)
            if (int rc = finish_epoch(w, r, release, fn); rc && !first)
                first = rc;
    return first;
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
    return finish_all(*w, false, fn);
}

WEFT_MPI_WEAK(Win_lock_all)
int PMPI_Win_lock_all(int assert, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_lock_all";
    WIN_OR_RETURN(fn, h, w);
    if (assert & ~MPI_MODE_NOCHECK)
        return win_error(*w, MPI_ERR_ASSERT, fn,
                         "assert " + std::to_string(assert) + " has bits other than MPI_MODE_NOCHECK");
    for (size_t r = 0; r < w->locked.size(); ++r)
        if (w->locked[r] != LockHeld::None)
            return win_error(*w, MPI_ERR_RMA_SYNC, fn,
                             "this process already holds a lock on rank " + std::to_string(r) +
                                 " of this window (unlock it first)");
    // A shared lock on every member; the requests go out together.
    const bool nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (!nocheck) {
        std::vector<weft_request_t> grants, sends;
        WinHeader hd;
        hd.basic = MPI_LOCK_SHARED;
        int rc = WEFT_SUCCESS;
        for (int r = 0; r < w->comm.size && !rc; ++r) {
            weft_request_t rr, sr;
            const uint32_t dest = w->comm.to_world(r);
            rc = weft_irecv_ctx(nullptr, 0, dest, kWinGrant, w->comm.coll_context(), &rr);
            if (rc)
                break;
            grants.push_back(rr);
            rc = weft_isend_ctx(&hd, sizeof hd, dest, kWinLock, w->ctx, 0, &sr);
            if (!rc)
                sends.push_back(sr);
        }
        int wrc = WEFT_SUCCESS;
        for (auto *v : {&sends, &grants})
            for (weft_request_t &q : *v) {
                weft_msg_status_t st{};
                if (int x = wait_one(&q, &st); x && !wrc)
                    wrc = x;
            }
        if (rc || wrc)
            return win_error(*w, fail_class(rc ? rc : wrc), fn,
                             "asking every member for a shared lock failed: " + weft_why(rc ? rc : wrc));
    }
    std::fill(w->locked.begin(), w->locked.end(), LockHeld::Shared);
    std::fill(w->nocheck.begin(), w->nocheck.end(), nocheck);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_unlock_all)
int PMPI_Win_unlock_all(MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_unlock_all";
    WIN_OR_RETURN(fn, h, w);
    for (size_t r = 0; r < w->locked.size(); ++r)
        if (w->locked[r] != LockHeld::Shared)
            return win_error(*w, MPI_ERR_RMA_SYNC, fn,
                             "this process holds no shared lock on rank " + std::to_string(r) +
                                 " (MPI_Win_lock_all must come first)");
    return finish_all(*w, true, fn);
}

WEFT_MPI_WEAK(Win_flush_local)
int PMPI_Win_flush_local(int rank, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_flush_local";
    WIN_OR_RETURN(fn, h, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (int rc = check_held(*w, rank, fn))
        return rc;
    // Local completion: the origin buffers may be reused. Puts complete
    // when acknowledged, which is also remote completion.
    win_complete(*w, rank);
    return win_take_error(*w, fn);
}

WEFT_MPI_WEAK(Win_flush_local_all)
int PMPI_Win_flush_local_all(MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_flush_local_all";
    WIN_OR_RETURN(fn, h, w);
    win_complete(*w, -1);
    return win_take_error(*w, fn);
}

WEFT_MPI_WEAK(Win_sync)
int PMPI_Win_sync(MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_sync", h, w);
    // The unified model has one copy of the memory: a full memory barrier
    // orders this process's loads and stores against the others', and a
    // service pass applies what has arrived.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    weft_progress();
    win_service();
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return MPI_SUCCESS;
}

} // extern "C"
