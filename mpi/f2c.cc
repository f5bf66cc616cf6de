// SPDX-License-Identifier: BSD-3-Clause
// Handle conversion between C and Fortran integers (MPI-3.1 section 17.2.4):
// MPI_X_c2f / MPI_X_f2c for every handle kind, and MPI_Status_c2f / f2c.
// weft has no Fortran bindings, but C libraries that hand handles to
// Fortran code, or keep them as integers (mpi4py, PETSc, HDF5), call these.
// weft's handles are already C ints, so a conversion is the identity: a
// Fortran integer names the same object, and an invalid one stays invalid
// (the standard asks for no check here; the call that uses it checks).
// A status is copied word for word: MPI_F_STATUS_SIZE integers.
#include <cstring>

#include "mpi/internal.hpp"

using namespace weft::mpi;

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
              "MPI_F_STATUS_SIZE must cover MPI_Status exactly");

// One pair per handle kind: both directions are the identity.
#define WEFT_HANDLE_F2C(Kind, CType)                                 \
    WEFT_MPI_WEAK(Kind##_c2f)                                        \
    MPI_Fint PMPI_##Kind##_c2f(CType h) { return static_cast<MPI_Fint>(h); } \
    WEFT_MPI_WEAK(Kind##_f2c)                                        \
    CType PMPI_##Kind##_f2c(MPI_Fint f) { return static_cast<CType>(f); }

extern "C" {

WEFT_HANDLE_F2C(Comm, MPI_Comm)
WEFT_HANDLE_F2C(Type, MPI_Datatype)
WEFT_HANDLE_F2C(Group, MPI_Group)
WEFT_HANDLE_F2C(Request, MPI_Request)
WEFT_HANDLE_F2C(Op, MPI_Op)
WEFT_HANDLE_F2C(Info, MPI_Info)
WEFT_HANDLE_F2C(Win, MPI_Win)
WEFT_HANDLE_F2C(Errhandler, MPI_Errhandler)
WEFT_HANDLE_F2C(Message, MPI_Message)

WEFT_MPI_WEAK(Status_c2f)
int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    MPI_THREAD_GUARD;
    if (c_status == MPI_STATUS_IGNORE || c_status == MPI_STATUSES_IGNORE || !f_status)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Status_c2f",
                     "the C status is MPI_STATUS_IGNORE or NULL, or the Fortran array is NULL (there is nothing "
                     "to convert: pass a real MPI_Status and an array of MPI_F_STATUS_SIZE integers)");
    std::memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Status_f2c)
int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    MPI_THREAD_GUARD;
    if (!f_status || c_status == MPI_STATUS_IGNORE || c_status == MPI_STATUSES_IGNORE)
        return raise(nullptr, MPI_ERR_ARG, "MPI_Status_f2c",
                     "the Fortran status is MPI_F_STATUS_IGNORE or NULL, or the C status is MPI_STATUS_IGNORE "
                     "(there is nothing to convert: pass MPI_F_STATUS_SIZE integers and a real MPI_Status)");
    std::memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}

} // extern "C"
