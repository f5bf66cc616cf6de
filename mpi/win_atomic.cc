// SPDX-License-Identifier: BSD-3-Clause
// One-sided communication, part 4: the atomics (Get_accumulate,
// Fetch_and_op, Compare_and_swap) and the request-based calls (Rput, Rget,
// Raccumulate, Rget_accumulate). The atomics are fetching accumulates,
// applied by the target's service one message at a time (win.hpp); a
// request-based call is the plain call plus an operation that completes
// when every transfer the call issued has finished.
#include <string>

#include "mpi/win.hpp"

namespace weft::mpi {

namespace {

// The request of an Rput/Rget/Raccumulate/Rget_accumulate: the window's
// operations with ids in [first, end) (those the call issued).
class RmaRequest final : public Operation {
public:
    RmaRequest(MPI_Win win, uint64_t first, uint64_t end) : win_(win), first_(first), end_(end) {}
    bool progress(MPI_Status *status) override
    {
        Win *w = win(win_);
        if (w) {
            win_poll(*w);
            if (win_pending(*w, first_, end_))
                return false;
        }
        empty_status(status);
        status->MPI_ERROR = w ? w->error_class : MPI_SUCCESS;
        return true;
    }

private:
    MPI_Win win_;
    uint64_t first_, end_;
};

// Runs call (one of the RMA calls on w) and makes its request.
template <class Call>
int with_request(Win &w, const char *fn, MPI_Request *request, Call call)
{
    if (!request)
        return win_error(w, MPI_ERR_ARG, fn, "request is NULL");
    const uint64_t first = w.next_op;
    if (int rc = call())
        return rc;
    *request = start_operation(std::make_unique<RmaRequest>(w.handle, first, w.next_op), MPI_COMM_WORLD);
    return MPI_SUCCESS;
}

} // namespace

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Get_accumulate)
int PMPI_Get_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
                        MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                        MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Get_accumulate", h, w);
    return rma_accumulate(*w, "MPI_Get_accumulate", origin, ocount, otype, result, rcount, rtype, rank, disp, tcount,
                          ttype, op, true, nullptr);
}

WEFT_MPI_WEAK(Fetch_and_op)
int PMPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int rank, MPI_Aint disp, MPI_Op op,
                      MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Fetch_and_op", h, w);
    return rma_accumulate(*w, "MPI_Fetch_and_op", origin, 1, type, result, 1, type, rank, disp, 1, type, op, true,
                          nullptr);
}

WEFT_MPI_WEAK(Compare_and_swap)
int PMPI_Compare_and_swap(const void *origin, const void *compare, void *result, MPI_Datatype type, int rank,
                          MPI_Aint disp, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Compare_and_swap";
    WIN_OR_RETURN(fn, h, w);
    const Datatype *t = datatype(type);
    if (!t || !t->predefined || t->basic == Basic::None || t->basic_size != t->basic_extent)
        return win_error(*w, MPI_ERR_TYPE, fn, "the datatype must be a predefined integer, logical or byte type");
    if (!compare)
        return win_error(*w, MPI_ERR_ARG, fn, "compare_addr is NULL");
    return rma_accumulate(*w, fn, origin, 1, type, result, 1, type, rank, disp, 1, type, kWinCompareAndSwap, true,
                          compare);
}

WEFT_MPI_WEAK(Rput)
int PMPI_Rput(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
              MPI_Datatype ttype, MPI_Win h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Rput";
    WIN_OR_RETURN(fn, h, w);
    return with_request(*w, fn, request,
                        [&] { return rma_put(*w, fn, origin, ocount, otype, rank, disp, tcount, ttype); });
}

WEFT_MPI_WEAK(Rget)
int PMPI_Rget(void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype,
              MPI_Win h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Rget";
    WIN_OR_RETURN(fn, h, w);
    return with_request(*w, fn, request,
                        [&] { return rma_get(*w, fn, origin, ocount, otype, rank, disp, tcount, ttype); });
}

WEFT_MPI_WEAK(Raccumulate)
int PMPI_Raccumulate(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                     MPI_Datatype ttype, MPI_Op op, MPI_Win h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Raccumulate";
    WIN_OR_RETURN(fn, h, w);
    return with_request(*w, fn, request, [&] {
        return rma_accumulate(*w, fn, origin, ocount, otype, nullptr, 0, MPI_DATATYPE_NULL, rank, disp, tcount,
                              ttype, op, false, nullptr);
    });
}

WEFT_MPI_WEAK(Rget_accumulate)
int PMPI_Rget_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
                         MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                         MPI_Win h, MPI_Request *request)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Rget_accumulate";
    WIN_OR_RETURN(fn, h, w);
    return with_request(*w, fn, request, [&] {
        return rma_accumulate(*w, fn, origin, ocount, otype, result, rcount, rtype, rank, disp, tcount, ttype, op,
                              true, nullptr);
    });
}

} // extern "C"
