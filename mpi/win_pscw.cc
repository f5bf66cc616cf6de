// SPDX-License-Identifier: BSD-3-Clause
// One-sided communication, part 5: general active-target synchronization
// (post / start / complete / wait / test). See win.hpp:
//  - Win_post(group): POSTED to each origin, and a receive posted for each
//    origin's COMPLETED (so that Win_test can look without blocking).
//  - Win_start(group): one POSTED from each target before returning, so
//    no transfer reaches a target that has not exposed its memory.
//  - Win_complete: the origin's transfers completed, then COMPLETED to each
//    target carrying the number of ACC/FETCH messages sent to it so far.
//  - Win_wait / Win_test: every COMPLETED arrived and that many accumulates
//    of each origin applied.
// POSTED and COMPLETED travel on the window's second context, in order per
// pair, so epochs that follow each other match up one to one.
#include <string>
#include <vector>

#include "mpi/win.hpp"

namespace weft::mpi {

namespace {

// The window ranks of group's members (MPI_ERR_GROUP when one is not a member).
int group_ranks(Win &w, MPI_Group g, const char *fn, std::vector<int> *out)
{
    int n = 0;
    if (PMPI_Group_size(g, &n) != MPI_SUCCESS)
        return win_error(w, MPI_ERR_GROUP, fn, "the group is not valid");
    std::vector<int> in(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
        in[static_cast<size_t>(i)] = i;
    out->assign(static_cast<size_t>(n), MPI_UNDEFINED);
    MPI_Group wg;
    if (PMPI_Win_get_group(w.handle, &wg) != MPI_SUCCESS)
        return win_error(w, MPI_ERR_INTERN, fn, "the window's group is not available");
    const int rc = n ? PMPI_Group_translate_ranks(g, n, in.data(), wg, out->data()) : MPI_SUCCESS;
    PMPI_Group_free(&wg);
    if (rc != MPI_SUCCESS)
        return win_error(w, MPI_ERR_GROUP, fn, "translating the group's ranks failed");
    for (int i = 0; i < n; ++i)
        if ((*out)[static_cast<size_t>(i)] == MPI_UNDEFINED)
            return win_error(w, MPI_ERR_GROUP, fn,
                             "rank " + std::to_string(i) + " of the group is not a member of the window");
    return MPI_SUCCESS;
}

// Has every origin of the exposure epoch completed (without blocking when
// block is false)? Then the epoch is closed.
bool exposure_done(Win &w, bool block, int *rc)
{
    std::vector<uint64_t> counts(static_cast<size_t>(w.comm.size), 0);
    for (Win::Exposure &e : w.exposure) {
        if (!e.completed) {
            weft_msg_status_t st{};
            int x = WEFT_SUCCESS;
            if (block) {
                x = wait_one(&e.req, &st);
                e.completed = true;
            } else {
                int done = 0;
                x = weft_test(&e.req, &done, &st);
                e.completed = done || x;
            }
            if (x && !*rc)
                *rc = x;
            if (!e.completed)
                return false;
        }
        counts[static_cast<size_t>(e.origin)] = e.count;
    }
    if (block) {
        win_wait_applied(w, counts);
    } else {
        weft_progress();
        win_service();
        for (size_t r = 0; r < counts.size(); ++r)
            if (w.acc_applied_from[r] < counts[r])
                return false;
    }
    w.exposure.clear();
    w.exposure_open = false;
    return true;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Win_post)
int PMPI_Win_post(MPI_Group g, int assert, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_post";
    WIN_OR_RETURN(fn, h, w);
    const int known = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT;
    if (assert & ~known)
        return win_error(*w, MPI_ERR_ASSERT, fn,
                         "assert " + std::to_string(assert) +
                             " has bits that are not post assertions (MPI_MODE_NOCHECK, NOSTORE, NOPUT)");
    if (w->exposure_open)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open (MPI_Win_wait closes it)");
    std::vector<int> origins;
    if (int rc = group_ranks(*w, g, fn, &origins))
        return rc;
    w->exposure.assign(origins.size(), {});
    int rc = WEFT_SUCCESS;
    for (size_t i = 0; i < origins.size() && !rc; ++i) {
        Win::Exposure &e = w->exposure[i];
        e.origin = origins[i];
        rc = weft_irecv_ctx(&e.count, sizeof e.count, w->comm.to_world(e.origin), kWinCompleted,
                            w->comm.coll_context(), &e.req);
        if (rc) {
            e.completed = true;
            break;
        }
        weft_request_t r;
        rc = weft_isend_ctx(nullptr, 0, w->comm.to_world(e.origin), kWinPosted, w->comm.coll_context(), 0, &r);
        if (!rc)
            weft_request_free(&r);   // empty: completes in the background
    }
    w->exposure_open = true;
    if (rc)
        return win_error(*w, fail_class(rc), fn, "telling the origins failed: " + weft_why(rc));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_start)
int PMPI_Win_start(MPI_Group g, int assert, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_start";
    WIN_OR_RETURN(fn, h, w);
    if (assert & ~MPI_MODE_NOCHECK)
        return win_error(*w, MPI_ERR_ASSERT, fn,
                         "assert " + std::to_string(assert) + " has bits other than MPI_MODE_NOCHECK");
    if (w->access_open)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open (MPI_Win_complete closes it)");
    std::vector<int> targets;
    if (int rc = group_ranks(*w, g, fn, &targets))
        return rc;
    // Even with MPI_MODE_NOCHECK the target's POSTED is consumed, so that
    // the next epoch does not match this one's (this layer always sends it).
    int first = WEFT_SUCCESS;
    for (int t : targets) {
        weft_request_t r;
        weft_msg_status_t st{};
        int rc = weft_irecv_ctx(nullptr, 0, w->comm.to_world(t), kWinPosted, w->comm.coll_context(), &r);
        if (!rc)
            rc = wait_one(&r, &st);
        if (rc && !first)
            first = rc;
    }
    w->access = std::move(targets);
    w->access_open = true;
    if (first)
        return win_error(*w, fail_class(first), fn, "waiting for the targets' post failed: " + weft_why(first));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_complete)
int PMPI_Win_complete(MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_complete";
    WIN_OR_RETURN(fn, h, w);
    if (!w->access_open)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn, "no access epoch is open (MPI_Win_start must come first)");
    win_complete(*w, -1);
    int first = WEFT_SUCCESS;
    for (int t : w->access) {
        weft_request_t r;
        weft_msg_status_t st{};
        int rc = weft_isend_ctx(&w->acc_sent_to[static_cast<size_t>(t)], sizeof(uint64_t), w->comm.to_world(t),
                                kWinCompleted, w->comm.coll_context(), 0, &r);
        if (!rc)
            rc = wait_one(&r, &st);
        if (rc && !first)
            first = rc;
    }
    w->access.clear();
    w->access_open = false;
    if (first)
        return win_error(*w, fail_class(first), fn, "telling the targets failed: " + weft_why(first));
    return win_take_error(*w, fn);
}

WEFT_MPI_WEAK(Win_wait)
int PMPI_Win_wait(MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_wait";
    WIN_OR_RETURN(fn, h, w);
    if (!w->exposure_open)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post must come first)");
    int rc = WEFT_SUCCESS;
    exposure_done(*w, true, &rc);
    if (rc)
        return win_error(*w, fail_class(rc), fn, "waiting for the origins' completion failed: " + weft_why(rc));
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_test)
int PMPI_Win_test(MPI_Win h, int *flag)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_test";
    WIN_OR_RETURN(fn, h, w);
    if (!flag)
        return win_error(*w, MPI_ERR_ARG, fn, "flag is NULL");
    if (!w->exposure_open)
        return win_error(*w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post must come first)");
    int rc = WEFT_SUCCESS;
    *flag = exposure_done(*w, false, &rc) ? 1 : 0;
    if (rc)
        return win_error(*w, fail_class(rc), fn, "testing the origins' completion failed: " + weft_why(rc));
    return MPI_SUCCESS;
}

} // extern "C"
