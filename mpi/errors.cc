// SPDX-License-Identifier: BSD-3-Clause
// Errors: MPI error classes, their words, weft statuses mapped onto them,
// and the error handlers (fatal, return, user functions). A fatal error
// says which call failed, why and on which rank before the job ends;
// MPI_Error_string of the class just returned gives the same detail.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "mpi/internal.hpp"

namespace weft::mpi {

namespace {

struct UserErrhandler {
    MPI_Comm_errhandler_function *fn = nullptr;
};
// User handlers are numbered from 3 (after NULL, ARE_FATAL, RETURN).
Table<UserErrhandler> g_user_handlers(3);

int g_last_class = MPI_SUCCESS;   // the last error returned, and its detail
std::string g_last_detail;

const char *class_words(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer or buffer space";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated (the receive buffer is too small)";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in the status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_BASE: return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_DISP: return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT: invalid assert argument";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls";
    case MPI_ERR_INFO: return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_NOT_SUPPORTED: return "MPI_ERR_NOT_SUPPORTED: not supported by weft's MPI subset";
    case MPI_ERR_PROC_FAILED: return "MPI_ERR_PROC_FAILED: a peer process failed or cannot be reached";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY: info key too long or empty";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE: info value too long or empty";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY: the info key is not defined";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid attribute key";
    case MPI_T_ERR_MEMORY: return "MPI_T_ERR_MEMORY: out of memory";
    case MPI_T_ERR_NOT_INITIALIZED: return "MPI_T_ERR_NOT_INITIALIZED: call MPI_T_init_thread first";
    case MPI_T_ERR_CANNOT_INIT: return "MPI_T_ERR_CANNOT_INIT: the tool interface cannot start";
    case MPI_T_ERR_INVALID_INDEX: return "MPI_T_ERR_INVALID_INDEX: no variable or category has that index";
    case MPI_T_ERR_INVALID_ITEM: return "MPI_T_ERR_INVALID_ITEM: no enumeration item has that index";
    case MPI_T_ERR_INVALID_HANDLE: return "MPI_T_ERR_INVALID_HANDLE: invalid MPI_T handle";
    case MPI_T_ERR_OUT_OF_HANDLES: return "MPI_T_ERR_OUT_OF_HANDLES: no more MPI_T handles";
    case MPI_T_ERR_OUT_OF_SESSIONS: return "MPI_T_ERR_OUT_OF_SESSIONS: no more pvar sessions";
    case MPI_T_ERR_INVALID_SESSION: return "MPI_T_ERR_INVALID_SESSION: invalid pvar session";
    case MPI_T_ERR_CVAR_SET_NOT_NOW: return "MPI_T_ERR_CVAR_SET_NOT_NOW: weft reads its parameters at MPI_Init; set it before";
    case MPI_T_ERR_CVAR_SET_NEVER: return "MPI_T_ERR_CVAR_SET_NEVER: the control variable cannot be set";
    case MPI_T_ERR_PVAR_NO_STARTSTOP: return "MPI_T_ERR_PVAR_NO_STARTSTOP: the performance variable is continuous";
    case MPI_T_ERR_PVAR_NO_WRITE: return "MPI_T_ERR_PVAR_NO_WRITE: the performance variable is read-only";
    case MPI_T_ERR_PVAR_NO_ATOMIC: return "MPI_T_ERR_PVAR_NO_ATOMIC: the performance variable cannot be read and reset atomically";
    case MPI_T_ERR_INVALID_NAME: return "MPI_T_ERR_INVALID_NAME: no variable or category has that name";
    case MPI_T_ERR_INVALID: return "MPI_T_ERR_INVALID: invalid use of the tool interface";
    default: return nullptr;
    }
}

std::string describe(int cls, const std::string &where, const std::string &why)
{
    const char *w = class_words(cls);
    std::string s = where + ": " + why;
    s += std::string(" (") + (w ? std::string(w, std::strcspn(w, ":")) : "MPI error " + std::to_string(cls)) + ")";
    return s;
}

} // namespace

int class_of(int weft_status)
{
    switch (weft_status) {
    case WEFT_SUCCESS: return MPI_SUCCESS;
    case WEFT_ERR_TRUNCATED: return MPI_ERR_TRUNCATE;
    case WEFT_ERR_BAD_PARAM:
    case WEFT_ERR_BAD_VALUE: return MPI_ERR_ARG;
    case WEFT_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case WEFT_ERR_UNREACHABLE: return MPI_ERR_PROC_FAILED;
    case WEFT_ERR_NOT_SUPPORTED: return MPI_ERR_NOT_SUPPORTED;
    case WEFT_ERR_CANCELED: return MPI_SUCCESS;   // reported by MPI_Test_cancelled
    default: return MPI_ERR_OTHER;
    }
}

std::string weft_why(int weft_status)
{
    const char *m = weft_error_message();
    if (m && *m)
        return m;
    return weft_status_string(weft_status);
}

int raise_on_handler(MPI_Errhandler eh, void *object, bool is_win, int cls, const std::string &where,
                     const std::string &why)
{
    const std::string text = describe(cls, where, why);
    g_last_class = cls;
    g_last_detail = text;
    if (eh == MPI_ERRORS_RETURN)
        return cls;
    if (UserErrhandler *u = g_user_handlers.get(eh)) {
        int code = cls;
        if (u->fn && !is_win)
            u->fn(static_cast<MPI_Comm *>(object), &code);
        else if (u->fn)
            reinterpret_cast<MPI_Win_errhandler_function *>(u->fn)(static_cast<MPI_Win *>(object), &code);
        return cls;
    }
    // MPI_ERRORS_ARE_FATAL (or a handler that no longer exists).
    const int rank = weft_rank();
    std::string line = "weft MPI: rank " + std::to_string(rank < 0 ? 0 : rank) + ": " + text +
                       "; the error handler is MPI_ERRORS_ARE_FATAL, so the job ends (set MPI_ERRORS_RETURN "
                       "with " + (is_win ? "MPI_Win_set_errhandler" : "MPI_Comm_set_errhandler") +
                       " to handle errors yourself)\n";
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    weft_abort(cls ? cls : 1, text.c_str());
    return cls;   // not reached
}

int raise(Comm *c, int cls, const std::string &where, const std::string &why)
{
    if (!c)
        c = comm(MPI_COMM_WORLD);
    if (!c) {   // before MPI_Init or after MPI_Finalize: nothing to abort
        g_last_class = cls;
        g_last_detail = describe(cls, where, why);
        std::fprintf(stderr, "weft MPI: %s\n", g_last_detail.c_str());
        return cls;
    }
    MPI_Comm h = c->handle;
    return raise_on_handler(c->errhandler, &h, false, cls, where, why);
}

bool errhandler_valid(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || g_user_handlers.get(eh);
}

} // namespace weft::mpi

using namespace weft::mpi;

namespace {

// MPI_Comm_create_errhandler's and MPI_Win_create_errhandler's work.
int create_errhandler(const char *fn, MPI_Comm_errhandler_function *function, MPI_Errhandler *eh)
{
    MPI_NEED_INIT(fn);
    if (!function || !eh)
        return raise(nullptr, MPI_ERR_ARG, fn, "function and errhandler must not be NULL");
    auto u = std::make_unique<UserErrhandler>();
    u->fn = function;
    *eh = g_user_handlers.add(std::move(u));
    return MPI_SUCCESS;
}

} // namespace

extern "C" {

WEFT_MPI_WEAK(Error_string)
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    MPI_THREAD_GUARD;
    if (!string || !resultlen)
        return MPI_ERR_ARG;
    std::string s;
    if (errorcode == g_last_class && errorcode != MPI_SUCCESS && !g_last_detail.empty())
        s = g_last_detail;
    else if (const char *w = class_words(errorcode))
        s = w;
    else
        return raise(nullptr, MPI_ERR_ARG, "MPI_Error_string", "error code " + std::to_string(errorcode) +
                                                                   " is not an MPI error code");
    if (s.size() >= MPI_MAX_ERROR_STRING)
        s.resize(MPI_MAX_ERROR_STRING - 1);
    std::memcpy(string, s.c_str(), s.size() + 1);
    *resultlen = static_cast<int>(s.size());
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Error_class)
int PMPI_Error_class(int errorcode, int *errorclass)
{
    MPI_THREAD_GUARD;
    if (!errorclass)
        return MPI_ERR_ARG;
    if (!class_words(errorcode))
        return raise(nullptr, MPI_ERR_ARG, "MPI_Error_class",
                     "error code " + std::to_string(errorcode) + " is not an MPI error code");
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_set_errhandler)
int PMPI_Comm_set_errhandler(MPI_Comm c, MPI_Errhandler eh)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Comm_set_errhandler");
    Comm *p = comm(c);
    if (!p)
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_set_errhandler", "not a communicator");
    if (!errhandler_valid(eh))
        return raise(p, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "not an error handler");
    p->errhandler = eh;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_get_errhandler)
int PMPI_Comm_get_errhandler(MPI_Comm c, MPI_Errhandler *eh)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Comm_get_errhandler");
    Comm *p = comm(c);
    if (!p)
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_get_errhandler", "not a communicator");
    if (!eh)
        return raise(p, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    *eh = p->errhandler;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Comm_create_errhandler)
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *function, MPI_Errhandler *eh)
{
    MPI_THREAD_GUARD;
    return create_errhandler("MPI_Comm_create_errhandler", function, eh);
}

// A window's handler: the same table; raise_on_handler calls it with the
// window (is_win) in the Win function's signature.
WEFT_MPI_WEAK(Win_create_errhandler)
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *function, MPI_Errhandler *eh)
{
    MPI_THREAD_GUARD;
    return create_errhandler("MPI_Win_create_errhandler", reinterpret_cast<MPI_Comm_errhandler_function *>(function),
                             eh);
}

WEFT_MPI_WEAK(Comm_call_errhandler)
int PMPI_Comm_call_errhandler(MPI_Comm c, int errorcode)
{
    MPI_THREAD_GUARD;
    MPI_NEED_INIT("MPI_Comm_call_errhandler");
    Comm *p = comm(c);
    if (!p)
        return raise(nullptr, MPI_ERR_COMM, "MPI_Comm_call_errhandler", "not a communicator");
    raise(p, errorcode, "MPI_Comm_call_errhandler", "called by the application");
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Errhandler_free)
int PMPI_Errhandler_free(MPI_Errhandler *eh)
{
    MPI_THREAD_GUARD;
    if (!eh)
        return MPI_ERR_ARG;
    // Predefined handlers are not freed; a communicator still using a user
    // handler keeps working (it falls back to fatal only if called after).
    if (*eh != MPI_ERRORS_ARE_FATAL && *eh != MPI_ERRORS_RETURN) {
        if (!g_user_handlers.get(*eh))
            return raise(nullptr, MPI_ERR_ARG, "MPI_Errhandler_free", "not an error handler");
    }
    *eh = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

} // extern "C"
