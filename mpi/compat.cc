// SPDX-License-Identifier: BSD-3-Clause
// The environment's remaining calls: memory (MPI_Alloc_mem / Free_mem),
// MPI_Pcontrol, the MPI-1 names that MPI-3 removed but old programs still
// call (each is its MPI-2 replacement under the old name and argument
// types), and the datatype helpers MPI_Type_match_size, MPI_Type_size_x,
// MPI_Type_get_(true_)extent_x, MPI_Type_create_subarray, MPI_Type_create_darray
// and MPI_Type_create_hindexed_block.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

using namespace weft::mpi;

namespace {

// Frees derived datatypes built on the way to another one.
struct Scratch {
    std::vector<MPI_Datatype> types;
    ~Scratch()
    {
        for (MPI_Datatype &t : types)
            PMPI_Type_free(&t);
    }
};

} // namespace

extern "C" {

WEFT_MPI_WEAK(Alloc_mem)
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Alloc_mem");
    if (size < 0 || !baseptr)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Alloc_mem", "size is negative or baseptr is NULL");
    if (info != MPI_INFO_NULL && !info_pairs(info))
        return raise(nullptr, MPI_ERR_INFO, "MPI_Alloc_mem", "info " + std::to_string(info) + " is not valid");
    // Cache-line aligned, as registered memory would be; never null for size 0.
    const size_t bytes = (static_cast<size_t>(size) + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, bytes ? bytes : 64);
    if (!p)
        return raise(nullptr, MPI_ERR_NO_MEM, "MPI_Alloc_mem",
                     "could not allocate " + std::to_string(size) + " bytes");
    *static_cast<void **>(baseptr) = p;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Free_mem)
int PMPI_Free_mem(void *base)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Free_mem");
    std::free(base);
    return MPI_SUCCESS;
}

// Profiling control: weft has no profiling levels of its own; tools that
// intercept MPI_Pcontrol see the call.
WEFT_MPI_WEAK(Pcontrol)
int PMPI_Pcontrol(const int, ...)
{
    MPI_THREAD_GUARD;
    return MPI_SUCCESS;
}

// ---- MPI-1 names removed in MPI-3.0 ----

WEFT_MPI_WEAK(Errhandler_create)
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    MPI_THREAD_GUARD;
    return PMPI_Comm_create_errhandler(function, errhandler);
}

WEFT_MPI_WEAK(Errhandler_set)
int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    MPI_THREAD_GUARD;
    return PMPI_Comm_set_errhandler(comm, errhandler);
}

WEFT_MPI_WEAK(Errhandler_get)
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    MPI_THREAD_GUARD;
    return PMPI_Comm_get_errhandler(comm, errhandler);
}

WEFT_MPI_WEAK(Address)
int PMPI_Address(void *location, MPI_Aint *address)
{
    MPI_THREAD_GUARD;
    return PMPI_Get_address(location, address);
}

WEFT_MPI_WEAK(Type_extent)
int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_THREAD_GUARD;
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

WEFT_MPI_WEAK(Type_lb)
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_THREAD_GUARD;
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

WEFT_MPI_WEAK(Type_ub)
int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_THREAD_GUARD;
    if (!displacement)
        return PMPI_Type_get_extent(datatype, nullptr, nullptr);
    MPI_Aint lb, extent;
    if (int rc = PMPI_Type_get_extent(datatype, &lb, &extent))
        return rc;
    *displacement = lb + extent;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_hvector)
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

WEFT_MPI_WEAK(Type_hindexed)
int PMPI_Type_hindexed(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype oldtype,
                       MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    return PMPI_Type_create_hindexed(count, blocklengths, displacements, oldtype, newtype);
}

WEFT_MPI_WEAK(Type_struct)
int PMPI_Type_struct(int count, int blocklengths[], MPI_Aint displacements[], MPI_Datatype types[],
                     MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    return PMPI_Type_create_struct(count, blocklengths, displacements, types, newtype);
}

// ---- datatype helpers ----

WEFT_MPI_WEAK(Type_match_size)
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    MPI_THREAD_GUARD;
    if (!datatype)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_match_size", "datatype is NULL");
    struct Match {
        int typeclass;
        size_t size;
        MPI_Datatype type;
    };
    static const Match matches[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INT8_T},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INT16_T},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT32_T},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INT64_T},
        {MPI_TYPECLASS_REAL, sizeof(float), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, sizeof(double), MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(float), MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(double), MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(long double), MPI_C_LONG_DOUBLE_COMPLEX},
    };
    for (const Match &m : matches)
        if (m.typeclass == typeclass && size >= 0 && m.size == static_cast<size_t>(size)) {
            *datatype = m.type;
            return MPI_SUCCESS;
        }
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_match_size",
                     "typeclass " + std::to_string(typeclass) +
                         " is not MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_REAL or MPI_TYPECLASS_COMPLEX");
    return raise(nullptr, MPI_ERR_ARG, "MPI_Type_match_size",
                 "no predefined type of that class has " + std::to_string(size) + " bytes");
}

WEFT_MPI_WEAK(Type_size_x)
int PMPI_Type_size_x(MPI_Datatype h, MPI_Count *size)
{
    MPI_THREAD_GUARD;
    const Datatype *t = datatype(h);
    if (!t)
        return raise(nullptr, MPI_ERR_TYPE, "MPI_Type_size_x", "datatype " + std::to_string(h) + " is not valid");
    if (!size)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_size_x", "size is NULL");
    *size = static_cast<MPI_Count>(t->size);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_extent_x)
int PMPI_Type_get_extent_x(MPI_Datatype h, MPI_Count *lb, MPI_Count *extent)
{
    MPI_THREAD_GUARD;
    MPI_Aint l = 0, e = 0;
    if (!lb || !extent)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_extent_x", "lb and extent must not be NULL");
    if (int rc = PMPI_Type_get_extent(h, &l, &e))
        return rc;
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Type_get_true_extent_x)
int PMPI_Type_get_true_extent_x(MPI_Datatype h, MPI_Count *lb, MPI_Count *extent)
{
    MPI_THREAD_GUARD;
    MPI_Aint l = 0, e = 0;
    if (!lb || !extent)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Type_get_true_extent_x", "lb and extent must not be NULL");
    if (int rc = PMPI_Type_get_true_extent(h, &l, &e))
        return rc;
    *lb = l;
    *extent = e;
    return MPI_SUCCESS;
}

// A subarray of an n-dimensional array of oldtype: the subsizes block at
// starts, with the whole array's extent (MPI-3.1 §4.1.3). Built from
// hvectors, one per dimension from the fastest-varying one out.
WEFT_MPI_WEAK(Type_create_subarray)
int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Type_create_subarray";
    MPI_NEED_INIT(fn);
    if (ndims <= 0 || !sizes || !subsizes || !starts || !newtype)
        return raise(nullptr, MPI_ERR_ARG, fn, "ndims must be positive and the arrays and newtype not NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return raise(nullptr, MPI_ERR_ARG, fn, "order " + std::to_string(order) + " is not MPI_ORDER_C or "
                                                                                  "MPI_ORDER_FORTRAN");
    for (int d = 0; d < ndims; ++d)
        if (sizes[d] <= 0 || subsizes[d] <= 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d])
            return raise(nullptr, MPI_ERR_ARG, fn,
                         "dimension " + std::to_string(d) + ": size " + std::to_string(sizes[d]) + ", subsize " +
                             std::to_string(subsizes[d]) + ", start " + std::to_string(starts[d]) +
                             " (need 0 < subsize <= size and 0 <= start <= size - subsize)");
    MPI_Aint lb, extent;
    if (int rc = PMPI_Type_get_extent(oldtype, &lb, &extent))
        return rc;
    // Dimension k of the walk, fastest first.
    auto dim = [&](int k) { return order == MPI_ORDER_C ? ndims - 1 - k : k; };
    Scratch scratch;
    MPI_Datatype t = oldtype;
    MPI_Aint stride = extent, disp = 0;
    for (int k = 0; k < ndims; ++k) {
        const int d = dim(k);
        MPI_Datatype next;
        if (int rc = PMPI_Type_create_hvector(subsizes[d], 1, stride, t, &next))
            return rc;
        scratch.types.push_back(next);
        t = next;
        disp += starts[d] * stride;
        stride *= sizes[d];
    }
    const int one = 1;
    MPI_Datatype placed;
    if (int rc = PMPI_Type_create_hindexed(1, &one, &disp, t, &placed))
        return rc;
    scratch.types.push_back(placed);
    // MPI-3.1: lb 0, the whole array's extent.
    const int rc = PMPI_Type_create_resized(placed, 0, stride, newtype);
    std::vector<int> ints{ndims};
    for (const int *a : {sizes, subsizes, starts})
        ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    return record_contents(rc, newtype, MPI_COMBINER_SUBARRAY, std::move(ints), {}, {oldtype});
}

} // extern "C"

namespace {

// The elements [start, start + length) of one dimension of a distributed
// array that a process holds.
struct Run {
    int start, length;
};

// Dimension d's runs for grid coordinate r, or an MPI_ERR_ARG raised.
int darray_runs(const char *fn, int d, int gsize, int distrib, int darg, int psize, int r, std::vector<Run> *runs)
{
    const std::string where = "dimension " + std::to_string(d) + ": ";
    switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
        if (psize != 1)
            return raise(nullptr, MPI_ERR_ARG, fn,
                         where + "MPI_DISTRIBUTE_NONE needs a process grid size of 1 there, not " + std::to_string(psize));
        runs->push_back({0, gsize});
        return MPI_SUCCESS;
    case MPI_DISTRIBUTE_BLOCK: {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG)
            darg = (gsize + psize - 1) / psize;
        if (darg <= 0 || static_cast<long>(darg) * psize < gsize)
            return raise(nullptr, MPI_ERR_ARG, fn,
                         where + "block size " + std::to_string(darg) + " times " + std::to_string(psize) +
                             " processes does not cover the " + std::to_string(gsize) + " elements");
        const long start = static_cast<long>(r) * darg;
        if (start < gsize)
            runs->push_back({static_cast<int>(start), static_cast<int>(std::min<long>(darg, gsize - start))});
        return MPI_SUCCESS;
    }
    case MPI_DISTRIBUTE_CYCLIC:
        if (darg == MPI_DISTRIBUTE_DFLT_DARG)
            darg = 1;
        if (darg <= 0)
            return raise(nullptr, MPI_ERR_ARG, fn, where + "cyclic block size " + std::to_string(darg) + " is not positive");
        for (long start = static_cast<long>(r) * darg; start < gsize; start += static_cast<long>(darg) * psize)
            runs->push_back({static_cast<int>(start), static_cast<int>(std::min<long>(darg, gsize - start))});
        return MPI_SUCCESS;
    default:
        return raise(nullptr, MPI_ERR_ARG, fn,
                     where + "distribution " + std::to_string(distrib) +
                         " is not MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC or MPI_DISTRIBUTE_NONE");
    }
}

} // namespace

extern "C" {

// The part of an ndims-dimensional global array of oldtype that process
// `rank` of a row-major process grid psizes holds (MPI-3.1 4.1.4): per
// dimension, from the fastest-varying one out, the runs it holds as an
// hindexed type of the dimensions below, each resized to its whole span;
// lb 0 and the whole array's extent.
WEFT_MPI_WEAK(Type_create_darray)
int PMPI_Type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[], const int dargs[],
                            const int psizes[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Type_create_darray";
    MPI_NEED_INIT(fn);
    if (ndims <= 0 || !gsizes || !distribs || !dargs || !psizes || !newtype)
        return raise(nullptr, MPI_ERR_ARG, fn, "ndims must be positive and the arrays and newtype not NULL");
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return raise(nullptr, MPI_ERR_ARG, fn, "order " + std::to_string(order) + " is not MPI_ORDER_C or "
                                                                                  "MPI_ORDER_FORTRAN");
    long grid = 1;
    for (int d = 0; d < ndims; ++d) {
        if (gsizes[d] <= 0 || psizes[d] <= 0)
            return raise(nullptr, MPI_ERR_ARG, fn,
                         "dimension " + std::to_string(d) + ": global size " + std::to_string(gsizes[d]) +
                             " and process grid size " + std::to_string(psizes[d]) + " must be positive");
        grid *= psizes[d];
    }
    if (size <= 0 || grid != size || rank < 0 || rank >= size)
        return raise(nullptr, MPI_ERR_ARG, fn,
                     "the process grid holds " + std::to_string(grid) + " processes: size is " + std::to_string(size) +
                         " and rank " + std::to_string(rank) + " (need size = the grid's and 0 <= rank < size)");
    // The grid is row-major whatever the array's order.
    std::vector<int> coord(static_cast<size_t>(ndims));
    for (int d = ndims - 1, rest = rank; d >= 0; --d) {
        coord[d] = rest % psizes[d];
        rest /= psizes[d];
    }
    MPI_Aint lb, extent;
    if (int rc = PMPI_Type_get_extent(oldtype, &lb, &extent))
        return rc;
    Scratch scratch;
    MPI_Datatype t = oldtype;
    MPI_Aint stride = extent;   // one element of the current dimension
    for (int k = 0; k < ndims; ++k) {
        const int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        std::vector<Run> runs;
        if (int rc = darray_runs(fn, d, gsizes[d], distribs[d], dargs[d], psizes[d], coord[d], &runs))
            return rc;
        std::vector<int> lengths;
        std::vector<MPI_Aint> displs;
        for (const Run &run : runs) {
            lengths.push_back(run.length);
            displs.push_back(run.start * stride);
        }
        MPI_Datatype held, spanned;
        if (int rc = PMPI_Type_create_hindexed(static_cast<int>(runs.size()), lengths.data(), displs.data(), t, &held))
            return rc;
        scratch.types.push_back(held);
        stride *= gsizes[d];
        if (int rc = PMPI_Type_create_resized(held, 0, stride, &spanned))
            return rc;
        scratch.types.push_back(spanned);
        t = spanned;
    }
    const int rc = PMPI_Type_dup(t, newtype);
    std::vector<int> ints{size, rank, ndims};
    for (const int *a : {gsizes, distribs, dargs, psizes})
        ints.insert(ints.end(), a, a + ndims);
    ints.push_back(order);
    return record_contents(rc, newtype, MPI_COMBINER_DARRAY, std::move(ints), {}, {oldtype});
}

WEFT_MPI_WEAK(Type_create_hindexed_block)
int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Type_create_hindexed_block");
    std::vector<int> lengths(static_cast<size_t>(std::max(count, 0)), blocklength);
    std::vector<MPI_Aint> aints;
    if (count > 0 && displacements)
        aints.assign(displacements, displacements + count);
    return record_contents(PMPI_Type_create_hindexed(count, lengths.data(), displacements, oldtype, newtype), newtype,
                           MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength}, std::move(aints), {oldtype});
}

} // extern "C"
