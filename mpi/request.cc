// SPDX-License-Identifier: BSD-3-Clause
// Requests and their completion: MPI_Wait/Test and the -all/-any/-some
// families, cancel, free, statuses. Request objects are pooled and reused
// (a handle is the slot's index + 1), so a nonblocking call allocates
// nothing once the pool is warm.
#include <algorithm>
#include <string>
#include <vector>


#include "mpi/internal.hpp"

namespace weft::mpi {

void (*g_service)() = nullptr;

namespace {

std::vector<void (*)()> g_services;
// Operations in flight: the handles of active Kind::Op requests, and the
// operations whose request was freed before they finished.
std::vector<MPI_Request> g_active_ops;
std::vector<std::unique_ptr<Operation>> g_detached_ops;

void run_services()
{
    // A service may wait, and a wait runs the services: once at a time
    // per thread (under MPI_THREAD_MULTIPLE a thread that handed the lock
    // over from inside a service is still in here when the next one runs them).
    thread_local bool running = false;
    if (running)
        return;
    running = true;
    for (size_t i = 0; i < g_services.size(); ++i)
        g_services[i]();
    running = false;
}

void progress_operations()
{
    // advance_operation may start or finish operations: walk a copy.
    const std::vector<MPI_Request> active = g_active_ops;
    for (MPI_Request h : active)
        if (Request *r = request(h); r && r->kind == Request::Kind::Op)
            advance_operation(*r);
    for (size_t i = 0; i < g_detached_ops.size();) {
        MPI_Status ignored{};
        if (g_detached_ops[i]->progress(&ignored)) {
            g_detached_ops.erase(g_detached_ops.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
            ++i;
        }
    }
    if (g_active_ops.empty() && g_detached_ops.empty())
        remove_service(progress_operations);
}

void forget_operation(MPI_Request h)
{
    std::erase(g_active_ops, h);
    if (g_active_ops.empty() && g_detached_ops.empty())
        remove_service(progress_operations);
}

// Blocks until the operation r is complete, progressing the engine and
// every service meanwhile.
void wait_operation(Request &r)
{
    int idle = 0;
    while (!advance_operation(r))
        wait_pass(&idle);
}


// Is r finished? Progresses once when it is not (weft_test does).
bool test_one(Request &r, weft_msg_status_t *ws, int *rc)
{
    if (r.kind == Request::Kind::Op && !advance_operation(r)) {
        weft_progress();
        if (!advance_operation(r))
            return false;
    }
    if (r.kind == Request::Kind::Done) {
        *rc = WEFT_SUCCESS;
        return true;
    }
    int done = 0;
    *rc = weft_test(&r.req, &done, ws);
    if (*rc != WEFT_SUCCESS && !done) {
        // weft refused the test itself (a broken request): treat as done with that error.
        ws->error = *rc;
        return true;
    }
    return done != 0;
}

// An inactive persistent request: MPI_Wait on it returns at once with an
// empty status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0).
void make_inactive(Request &r)
{
    r.active = false;
    r.kind = Request::Kind::Done;
    r.req = WEFT_REQUEST_NULL;
    empty_status(&r.done_status);
    r.done_status.MPI_SOURCE = MPI_ANY_SOURCE;
}

// Keeps the outcome of r, which weft has finished (and freed), in r itself
// for the call that completes it later: MPI_Testall's all-or-nothing,
// MPI_Request_get_status.
void settle(Request &r, const weft_msg_status_t &ws)
{
    if (r.kind == Request::Kind::Done)
        return;
    MPI_Status st;
    finish_request(r, ws, &st);
    r.kind = Request::Kind::Done;
    r.done_status = st;
}

// A send's status (st may be null): nothing but the error class.
void send_status(MPI_Status *st, int cls)
{
    if (!st)
        return;
    empty_status(st);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_ERROR = cls;
}

// to_status for a receive that went well (a message matched it, so its
// source is a rank), inline: the call and class_of's were 20 instructions
// of a window's receive (callgrind).
inline void received_status(const weft_msg_status_t &ws, const Comm &c, MPI_Status *st)
{
    st->MPI_SOURCE = c.from_world(ws.source);
    st->MPI_TAG = ws.tag;
    st->MPI_ERROR = MPI_SUCCESS;
    st->weft_cancelled_ = 0;
    st->weft_bytes_ = ws.count;
}

// The common completion of MPI_Wait and MPI_Waitall, inline: a contiguous
// send or receive (not persistent) that went well, its status as
// finish_request gives it, the request freed. false, with nothing done,
// for the rest (complete's work). A window of MPI_Isend with statuses took
// complete's two calls a request: 84 instructions of 850 (callgrind).
inline bool complete_plain(MPI_Request *h, Request &r, const weft_msg_status_t &ws, MPI_Status *st)
{
    if (ws.error != WEFT_SUCCESS || r.wire.packed || r.persistent)
        return false;
    if (r.kind == Request::Kind::Send) {
        send_status(st, MPI_SUCCESS);
    } else if (r.kind == Request::Kind::Recv) {
        if (st) {
            const Comm *c = comm(r.comm);
            if (!c)
                return false;
            received_status(ws, *c, st);
        }
    } else {
        return false;
    }
    release_request(r);
    *h = MPI_REQUEST_NULL;
    return true;
}

// Completes r and frees its handle (a persistent one stays, inactive); the MPI class, after calling the
// communicator's handler when it is an error (fn names the call).
int complete(MPI_Request *h, Request &r, const weft_msg_status_t &ws, MPI_Status *status, const char *fn,
             bool raise_errors)
{
    const int cls = finish_request(r, ws, status);
    const MPI_Comm ch = r.comm;
    const bool recv = r.kind == Request::Kind::Recv;
    const size_t posted = r.wire.bytes;
    if (r.persistent) {
        make_inactive(r);
    } else {
        free_request(*h);
        *h = MPI_REQUEST_NULL;
    }
    if (cls == MPI_SUCCESS || !raise_errors)
        return cls;
    std::string why = cls == MPI_ERR_TRUNCATE && recv
                          ? "the message is longer than the receive buffer (" + std::to_string(posted) + " bytes)"
                          : weft_why(ws.error);
    return raise(comm(ch), cls, fn, why);
}

} // namespace

RequestPool g_requests;

void wait_pass(int *idle)
{
    weft_progress_wait(idle);
    if (g_service)
        g_service();
}

void add_service(void (*fn)())
{
    if (std::find(g_services.begin(), g_services.end(), fn) == g_services.end())
        g_services.push_back(fn);
    g_service = run_services;
}

void remove_service(void (*fn)())
{
    std::erase(g_services, fn);
    if (g_services.empty())
        g_service = nullptr;
}

MPI_Request start_operation(std::unique_ptr<Operation> op, MPI_Comm c)
{
    Request *r;
    const MPI_Request h = new_request(&r);
    r->comm = c;
    run_operation_in(*r, std::move(op));
    return h;
}

void run_operation_in(Request &r, std::unique_ptr<Operation> op)
{
    r.kind = Request::Kind::Op;
    r.op = std::move(op);
    g_active_ops.push_back(r.index + 1);
    add_service(progress_operations);
}

MPI_Request make_persistent(std::unique_ptr<Persistent> recipe, MPI_Comm c)
{
    Request *r;
    const MPI_Request h = new_request(&r);
    r->comm = c;
    r->persistent = true;
    r->recipe = std::move(recipe);
    make_inactive(*r);
    return h;
}

bool advance_operation(Request &r)
{
    if (r.kind != Request::Kind::Op)
        return true;
    MPI_Status st{};
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    if (!r.op->progress(&st))
        return false;
    r.kind = Request::Kind::Done;
    r.done_status = st;
    r.op.reset();
    forget_operation(r.index + 1);
    return true;
}

MPI_Request grow_requests(Request **out)
{
    g_requests.slots.push_back(std::make_unique<Request>());
    Request &r = *g_requests.slots.back();
    r.index = static_cast<int>(g_requests.slots.size()) - 1;
    r.live = true;
    *out = &r;
    return r.index + 1;
}

void empty_status(MPI_Status *st)
{
    if (!st)
        return;
    st->MPI_SOURCE = MPI_PROC_NULL;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->weft_cancelled_ = 0;
    st->weft_bytes_ = 0;
}

void to_status(const weft_msg_status_t &ws, const Comm &c, MPI_Status *st)
{
    if (!st)
        return;
    st->MPI_SOURCE = ws.source == WEFT_ANY_SOURCE ? MPI_ANY_SOURCE : c.from_world(ws.source);
    st->MPI_TAG = ws.tag;
    st->MPI_ERROR = ws.error == WEFT_ERR_CANCELED ? MPI_SUCCESS : class_of(ws.error);
    if (ws.error != WEFT_SUCCESS && st->MPI_ERROR == MPI_SUCCESS && ws.error != WEFT_ERR_CANCELED)
        st->MPI_ERROR = MPI_ERR_OTHER;
    st->weft_cancelled_ = ws.error == WEFT_ERR_CANCELED;
    st->weft_bytes_ = ws.count;
}

int finish_request(Request &r, const weft_msg_status_t &ws, MPI_Status *status)
{
    switch (r.kind) {
    case Request::Kind::Done:
        if (status)
            *status = r.done_status;
        return r.done_status.MPI_ERROR;
    case Request::Kind::Recv: {
        if (r.wire.packed && r.unpack_type && ws.error != WEFT_ERR_CANCELED)
            wire_finish_recv(r.wire, ws.count, r.buf, r.count, *r.unpack_type);
        const Comm *c = comm(r.comm);
        if (status) {
            if (c) {
                to_status(ws, *c, status);
            } else {   // the communicator was freed meanwhile: job ranks
                Comm none;
                to_status(ws, none, status);
            }
        }
        if (ws.error == WEFT_SUCCESS || ws.error == WEFT_ERR_CANCELED)
            return MPI_SUCCESS;
        return fail_class(ws.error);
    }
    case Request::Kind::Send: {
        const int cls = ws.error == WEFT_SUCCESS ? MPI_SUCCESS : fail_class(ws.error);
        send_status(status, cls);
        return cls;
    }
    case Request::Kind::Op:   // advance_operation turns a finished one into Done first
        break;
    }
    return MPI_ERR_INTERN;
}

int wait_serving(weft_request_t *r, weft_msg_status_t *st)
{
    for (;;) {
        int done = 0;
        int rc = weft_test(r, &done, st);
        if (done || rc != WEFT_SUCCESS)
            return rc;
        // The last active operation removes its service when it completes.
        if (!g_service)
            return weft_wait(r, st);
        g_service();
    }
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Wait)
int PMPI_Wait(MPI_Request *h, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Wait", "request is NULL");
    if (*h == MPI_REQUEST_NULL) {
        empty_status(status);
        if (status)
            status->MPI_SOURCE = MPI_ANY_SOURCE;
        return MPI_SUCCESS;
    }
    Request *r = request(*h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Wait",
                     "request " + std::to_string(*h) + " is not valid (completed or freed already?)");
    weft_msg_status_t ws{};
    if (r->kind == Request::Kind::Op)
        wait_operation(*r);
    if (r->kind != Request::Kind::Done) {
        if (int rc = wait_one(&r->req, &ws); rc != WEFT_SUCCESS && ws.error == WEFT_SUCCESS)
            ws.error = rc;
        if (complete_plain(h, *r, ws, status))
            return MPI_SUCCESS;
    }
    return complete(h, *r, ws, status, "MPI_Wait", true);
}

WEFT_MPI_WEAK(Test)
int PMPI_Test(MPI_Request *h, int *flag, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (!h || !flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Test", "request and flag must not be NULL");
    *flag = 0;
    if (*h == MPI_REQUEST_NULL) {
        *flag = 1;
        empty_status(status);
        if (status)
            status->MPI_SOURCE = MPI_ANY_SOURCE;
        return MPI_SUCCESS;
    }
    Request *r = request(*h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Test", "request " + std::to_string(*h) + " is not valid");
    if (g_service)
        g_service();
    weft_msg_status_t ws{};
    int rc;
    if (!test_one(*r, &ws, &rc))
        return MPI_SUCCESS;
    *flag = 1;
    return complete(h, *r, ws, status, "MPI_Test", true);
}

namespace {

int check_array(const char *fn, int n, MPI_Request reqs[])
{
    if (n < 0 || (n > 0 && !reqs))
        return raise(nullptr, MPI_ERR_ARG, fn, "count is negative or the request array is NULL");
    for (int i = 0; i < n; ++i)
        if (reqs[i] != MPI_REQUEST_NULL && !request(reqs[i]))
            return raise(nullptr, MPI_ERR_REQUEST, fn,
                         "requests[" + std::to_string(i) + "] = " + std::to_string(reqs[i]) + " is not valid");
    return MPI_SUCCESS;
}

// The -all calls' error: MPI_ERR_IN_STATUS when statuses say which failed.
int all_error(const char *fn, MPI_Comm first_comm, int first_cls, bool have_statuses)
{
    if (first_cls == MPI_SUCCESS)
        return MPI_SUCCESS;
    return raise(comm(first_comm), have_statuses ? MPI_ERR_IN_STATUS : first_cls, fn,
                 std::string("a request failed: ") + "see the MPI_ERROR field of its status");
}

// One pass over the requests: completes those that are done (up to
// `limit`), recording their indices. Returns how many completed.
int sweep(int n, MPI_Request reqs[], int limit, int indices[], MPI_Status statuses[], bool compact,
          MPI_Comm *first_comm, int *first_cls)
{
    int k = 0;
    for (int i = 0; i < n && k < limit; ++i) {
        if (null_or_inactive(reqs[i]))
            continue;
        Request *r = request(reqs[i]);
        weft_msg_status_t ws{};
        int rc;
        if (!test_one(*r, &ws, &rc))
            continue;
        const MPI_Comm ch = r->comm;
        MPI_Status *st = statuses ? &statuses[compact ? k : i] : nullptr;
        const int cls = complete(&reqs[i], *r, ws, st, "", false);
        if (cls != MPI_SUCCESS && *first_cls == MPI_SUCCESS) {
            *first_cls = cls;
            *first_comm = ch;
        }
        if (indices)
            indices[k] = i;
        ++k;
    }
    return k;
}

bool all_null(int n, const MPI_Request reqs[])
{
    for (int i = 0; i < n; ++i)
        if (!null_or_inactive(reqs[i]))
            return false;
    return true;
}

} // namespace

WEFT_MPI_WEAK(Waitall)
int PMPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    MPI_THREAD_GUARD;
    if (n < 0 || (n > 0 && !reqs))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Waitall", "count is negative or the request array is NULL");
    MPI_Comm first_comm = MPI_COMM_NULL;
    int first_cls = MPI_SUCCESS;
    for (int i = 0; i < n; ++i) {
        MPI_Status *st = statuses ? &statuses[i] : nullptr;
        if (reqs[i] == MPI_REQUEST_NULL) {
            empty_status(st);
            if (st)
                st->MPI_SOURCE = MPI_ANY_SOURCE;
            continue;
        }
        Request *r = request(reqs[i]);
        if (!r)   // the ones before it are complete, as MPI_Wait would have left them
            return raise(nullptr, MPI_ERR_REQUEST, "MPI_Waitall",
                         "requests[" + std::to_string(i) + "] = " + std::to_string(reqs[i]) + " is not valid");
        weft_msg_status_t ws{};
        if (r->kind == Request::Kind::Op)
            wait_operation(*r);
        if (r->kind != Request::Kind::Done)
            if (int rc = wait_one(&r->req, &ws); rc != WEFT_SUCCESS && ws.error == WEFT_SUCCESS)
                ws.error = rc;
        if (complete_plain(&reqs[i], *r, ws, st))
            continue;
        const MPI_Comm ch = r->comm;
        const int cls = complete(&reqs[i], *r, ws, st, "MPI_Waitall", false);
        if (cls != MPI_SUCCESS && first_cls == MPI_SUCCESS) {
            first_cls = cls;
            first_comm = ch;
        }
    }
    return all_error("MPI_Waitall", first_comm, first_cls, statuses != MPI_STATUSES_IGNORE);
}

WEFT_MPI_WEAK(Testall)
int PMPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    MPI_THREAD_GUARD;
    if (int rc = check_array("MPI_Testall", n, reqs))
        return rc;
    if (!flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
    // All or nothing: a request weft finished is settled (its status kept
    // in it) and completed only when every one is done.
    if (g_service)
        g_service();
    *flag = 0;
    bool all = true;
    for (int i = 0; i < n; ++i) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        Request *r = request(reqs[i]);
        if (r->kind == Request::Kind::Done)
            continue;
        weft_msg_status_t ws{};
        int rc;
        if (!test_one(*r, &ws, &rc)) {
            all = false;
            continue;
        }
        settle(*r, ws);
    }
    if (!all)
        return MPI_SUCCESS;
    *flag = 1;
    return PMPI_Waitall(n, reqs, statuses);
}

WEFT_MPI_WEAK(Waitany)
int PMPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (int rc = check_array("MPI_Waitany", n, reqs))
        return rc;
    if (!index)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
    if (all_null(n, reqs)) {
        *index = MPI_UNDEFINED;
        empty_status(status);
        if (status)
            status->MPI_SOURCE = MPI_ANY_SOURCE;
        return MPI_SUCCESS;
    }
    MPI_Comm first_comm = MPI_COMM_NULL;
    int first_cls = MPI_SUCCESS;
    for (;;) {
        int idx;
        if (sweep(n, reqs, 1, &idx, status, true, &first_comm, &first_cls) == 1) {
            *index = idx;
            return first_cls == MPI_SUCCESS ? MPI_SUCCESS : raise(comm(first_comm), first_cls, "MPI_Waitany",
                                                                  "the completed request failed");
        }
        if (g_service)
            g_service();
    }
}

WEFT_MPI_WEAK(Testany)
int PMPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (int rc = check_array("MPI_Testany", n, reqs))
        return rc;
    if (!index || !flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Testany", "index and flag must not be NULL");
    *flag = 0;
    *index = MPI_UNDEFINED;
    if (all_null(n, reqs)) {
        *flag = 1;
        empty_status(status);
        if (status)
            status->MPI_SOURCE = MPI_ANY_SOURCE;
        return MPI_SUCCESS;
    }
    if (g_service)
        g_service();
    MPI_Comm first_comm = MPI_COMM_NULL;
    int first_cls = MPI_SUCCESS;
    int idx;
    if (sweep(n, reqs, 1, &idx, status, true, &first_comm, &first_cls) == 1) {
        *flag = 1;
        *index = idx;
    }
    return first_cls == MPI_SUCCESS ? MPI_SUCCESS
                                    : raise(comm(first_comm), first_cls, "MPI_Testany", "the completed request failed");
}

WEFT_MPI_WEAK(Waitsome)
int PMPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    MPI_THREAD_GUARD;
    if (int rc = check_array("MPI_Waitsome", n, reqs))
        return rc;
    if (!outcount || (n > 0 && !indices))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Waitsome", "outcount and indices must not be NULL");
    if (all_null(n, reqs)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    MPI_Comm first_comm = MPI_COMM_NULL;
    int first_cls = MPI_SUCCESS;
    int k;
    while ((k = sweep(n, reqs, n, indices, statuses, true, &first_comm, &first_cls)) == 0)
        if (g_service)
            g_service();
    *outcount = k;
    return all_error("MPI_Waitsome", first_comm, first_cls, statuses != MPI_STATUSES_IGNORE);
}

WEFT_MPI_WEAK(Testsome)
int PMPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
    MPI_THREAD_GUARD;
    if (int rc = check_array("MPI_Testsome", n, reqs))
        return rc;
    if (!outcount || (n > 0 && !indices))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Testsome", "outcount and indices must not be NULL");
    if (all_null(n, reqs)) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (g_service)
        g_service();
    MPI_Comm first_comm = MPI_COMM_NULL;
    int first_cls = MPI_SUCCESS;
    *outcount = sweep(n, reqs, n, indices, statuses, true, &first_comm, &first_cls);
    return all_error("MPI_Testsome", first_comm, first_cls, statuses != MPI_STATUSES_IGNORE);
}

WEFT_MPI_WEAK(Request_free)
int PMPI_Request_free(MPI_Request *h)
{
    MPI_THREAD_GUARD;
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Request_free", "request is NULL");
    Request *r = request(*h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Request_free", "request is not valid");
    if (r->persistent) {   // an active round goes on unseen, as a freed nonblocking one
        r->persistent = r->active = false;
        r->recipe.reset();
    }
    if (r->kind == Request::Kind::Send && r->wire.packed) {
        keep_in_background(r->req, std::move(r->wire.scratch));   // its bytes stay until sent
    } else if (r->kind == Request::Kind::Op) {                     // it runs on, unseen
        forget_operation(*h);
        g_detached_ops.push_back(std::move(r->op));
        add_service(progress_operations);
    } else if (r->kind != Request::Kind::Done) {
        weft_request_free(&r->req);
    }
    free_request(*h);
    *h = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Cancel)
int PMPI_Cancel(MPI_Request *h)
{
    MPI_THREAD_GUARD;
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Cancel", "request is NULL");
    Request *r = request(*h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Cancel", "request is not valid");
    // Receives not yet matched are canceled; sends complete as usual (MPI
    // lets a cancel of a send fail; MPI_Test_cancelled then says false).
    if (r->kind == Request::Kind::Recv)
        weft_cancel(&r->req);
    else if (r->kind == Request::Kind::Op)
        r->op->cancel();
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Request_get_status)
int PMPI_Request_get_status(MPI_Request h, int *flag, MPI_Status *status)
{
    MPI_THREAD_GUARD;
    if (!flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
    if (null_or_inactive(h)) {
        *flag = 1;
        empty_status(status);
        if (status)
            status->MPI_SOURCE = MPI_ANY_SOURCE;
        return MPI_SUCCESS;
    }
    Request *r = request(h);
    if (!r)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Request_get_status",
                     "request " + std::to_string(h) + " is not valid (completed or freed already?)");
    if (g_service)
        g_service();
    // As MPI_Test, but the request stays: its outcome is kept for the
    // wait or test that completes it.
    weft_msg_status_t ws{};
    int rc;
    *flag = test_one(*r, &ws, &rc);
    if (!*flag)
        return MPI_SUCCESS;
    settle(*r, ws);
    if (status)
        *status = r->done_status;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Test_cancelled)
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    MPI_THREAD_GUARD;
    if (!status || !flag)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Test_cancelled", "status and flag must not be NULL");
    *flag = status->weft_cancelled_;
    return MPI_SUCCESS;
}

} // extern "C"
