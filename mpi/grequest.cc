// SPDX-License-Identifier: BSD-3-Clause
// Generalized requests (MPI_Grequest_start / MPI_Grequest_complete): a
// request whose work the program does itself, completed by the MPI layer
// as an Operation once the program says it is done; and the status
// setters the program's query function fills the status with.
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

struct Generalized final : Operation {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra;
    bool completed = false;

    Generalized(MPI_Grequest_query_function *q, MPI_Grequest_free_function *f, MPI_Grequest_cancel_function *c,
                void *e)
        : query(q), free_fn(f), cancel_fn(c), extra(e)
    {
    }
    // The request is gone (completed by a wait or test, or freed and then
    // completed): the program's free function, once.
    ~Generalized() override
    {
        if (free_fn)
            free_fn(extra);
    }
    bool progress(MPI_Status *status) override
    {
        if (!completed)
            return false;
        status->MPI_ERROR = MPI_SUCCESS;
        status->weft_cancelled_ = 0;
        status->weft_bytes_ = 0;
        if (query) {
            const int rc = query(extra, status);
            status->MPI_ERROR = rc;   // what the query function returns is the request's error
        }
        return true;
    }
    bool cancel() override
    {
        if (cancel_fn)
            cancel_fn(extra, completed ? 1 : 0);
        return true;   // whether it was is the query function's to say (MPI_Status_set_cancelled)
    }
};

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Grequest_start)
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *req)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Grequest_start");
    if (!req)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Grequest_start", "request is NULL");
    *req = start_operation(std::make_unique<Generalized>(query_fn, free_fn, cancel_fn, extra_state), MPI_COMM_WORLD);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Grequest_complete)
int PMPI_Grequest_complete(MPI_Request h)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Grequest_complete");
    Request *r = request(h);
    Generalized *g = r && r->kind == Request::Kind::Op ? dynamic_cast<Generalized *>(r->op.get()) : nullptr;
    if (!g)
        return raise(nullptr, MPI_ERR_REQUEST, "MPI_Grequest_complete",
                     "request " + std::to_string(h) +
                         " is not an incomplete generalized request (made by MPI_Grequest_start, "
                         "not completed or freed yet)");
    g->completed = true;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Status_set_cancelled)
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    MPI_THREAD_GUARD;
    if (!status)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL");
    status->weft_cancelled_ = flag ? 1 : 0;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Status_set_elements_x)
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype th, MPI_Count count)
{
    MPI_THREAD_GUARD;
    const Datatype *t = datatype(th);
    if (!status || count < 0)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Status_set_elements", "status is NULL or count is negative");
    if (!t)
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Status_set_elements",
                     "datatype " + std::to_string(th) + " is not valid");
    // count basic elements of t, in type-map order (MPI_Get_elements' inverse).
    const auto n = static_cast<size_t>(count);
    if (t->basic != Basic::Mixed) {
        status->weft_bytes_ = n * t->basic_size;
        return MPI_SUCCESS;
    }
    const size_t per = t->signature.size();
    size_t bytes = per ? n / per * t->size : 0;
    for (size_t k = 0; per && k < n % per; ++k)
        bytes += t->signature[k];
    status->weft_bytes_ = bytes;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Status_set_elements)
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype th, int count)
{
    MPI_THREAD_GUARD;
    return PMPI_Status_set_elements_x(status, th, count);
}

WEFT_MPI_WEAK(Get_elements_x)
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype th, MPI_Count *count)
{
    MPI_THREAD_GUARD;
    if (!count)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Get_elements_x", "count is NULL");
    int n = 0;
    if (int rc = PMPI_Get_elements(status, th, &n))
        return rc;
    *count = n;
    return MPI_SUCCESS;
}

} // extern "C"
