// SPDX-License-Identifier: BSD-3-Clause
// The collectives' shared checks and typed-buffer helpers (coll.cc, the
// schedules of coll_sched.cc and the collectives built on them).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/internal.hpp"

namespace weft::mpi::coll {

// ---------------------------------------------------------------- checks

struct Ctx {
    const char *fn;
    Comm *c;
};

// A collective's first step: MPI is up and h names a communicator (c, and
// cx for the checks). COLL_COMM refuses an intercommunicator;
// COLL_COMM_ANY takes one too (a collective built on another that
// dispatches), COLL_COMM_OR_INTER returns inter_call for one (coll_inter.cc).
#define COLL_COMM_ANY(fn, h)                                                                       \
    MPI_NEED_INIT(fn);                                                                             \
    Comm *c = comm(h);                                                                             \
    if (!c)                                                                                        \
        return raise(nullptr, MPI_ERR_COMM, fn,                                                    \
                     h == MPI_COMM_NULL ? std::string("the communicator is MPI_COMM_NULL")         \
                                        : "communicator " + std::to_string(h) + " is not valid");  \
    [[maybe_unused]] const Ctx cx{fn, c}
#define COLL_COMM(fn, h)                                                                           \
    COLL_COMM_ANY(fn, h);                                                                          \
    if (c->inter)                                                                                  \
    return refuse_intercomm(c, fn)
#define COLL_COMM_OR_INTER(fn, h, inter_call)                                                      \
    COLL_COMM_ANY(fn, h);                                                                          \
    if (c->inter)                                                                                  \
    return inter_call

inline int fail(const Ctx &cx, int weft_rc)
{
    return raise(cx.c, fail_class(weft_rc), cx.fn,
                 weft_why(weft_rc));
}

inline const Datatype *check_type(const Ctx &cx, MPI_Datatype h, int count, int *rc, const char *which = "datatype")
{
    if (count < 0) {
        *rc = raise(cx.c, MPI_ERR_COUNT, cx.fn, std::string("count ") + std::to_string(count) + " is negative");
        return nullptr;
    }
    const Datatype *t = datatype(h);
    if (!t) {
        *rc = raise(cx.c, MPI_ERR_TYPE, cx.fn, std::string(which) + " is not a valid datatype");
        return nullptr;
    }
    if (!t->committed) {
        *rc = raise(cx.c, MPI_ERR_TYPE, cx.fn, std::string(which) + " is not committed (MPI_Type_commit)");
        return nullptr;
    }
    return t;
}

inline int check_root(const Ctx &cx, int root)
{
    if (root < 0 || root >= cx.c->size)
        return raise(cx.c, MPI_ERR_ROOT, cx.fn,
                     "root " + std::to_string(root) + " is not a rank of the communicator (size " +
                         std::to_string(cx.c->size) + ")");
    return MPI_SUCCESS;
}

inline int check_counts(const Ctx &cx, const int counts[], const int displs[], const char *what)
{
    if (!counts || (displs == nullptr))
        return raise(cx.c, MPI_ERR_ARG, cx.fn, std::string(what) + " counts or displacements are NULL");
    for (int i = 0; i < cx.c->size; ++i)
        if (counts[i] < 0)
            return raise(cx.c, MPI_ERR_COUNT, cx.fn,
                         std::string(what) + "counts[" + std::to_string(i) + "] = " + std::to_string(counts[i]) +
                             " is negative");
    return MPI_SUCCESS;
}

// ---------------------------------------------------------------- typed blocks

inline std::byte *at(void *buf, std::ptrdiff_t elements, const Datatype &t)
{
    return static_cast<std::byte *>(buf) + elements * t.extent();
}
inline const std::byte *at(const void *buf, std::ptrdiff_t elements, const Datatype &t)
{
    return static_cast<const std::byte *>(buf) + elements * t.extent();
}

// Copies scount of st at src into rcount of rt at dst (same type signature).
inline void copy_typed(const void *src, int scount, const Datatype &st, void *dst, int rcount, const Datatype &rt)
{
    const size_t bytes = std::min(st.size * static_cast<size_t>(scount), rt.size * static_cast<size_t>(rcount));
    if (bytes == 0)
        return;   // a count of 0 may come with a null buffer
    if (st.contiguous(scount) && rt.contiguous(rcount)) {
        std::memmove(static_cast<std::byte *>(dst) + rt.data_offset,
                     static_cast<const std::byte *>(src) + st.data_offset, bytes);
        return;
    }
    std::vector<std::byte> tmp(st.size * static_cast<size_t>(scount));
    pack(src, scount, st, tmp.data());
    unpack(tmp.data(), bytes, dst, rcount, rt);
}

// A block to send or receive, packed when the datatype is not contiguous.
struct Xfer {
    Wire w;
    void *buf = nullptr;
    int count = 0;
    const Datatype *t = nullptr;
    bool recv = false;
    void for_send(const void *b, int n, const Datatype &dt)
    {
        wire_for_send(b, n, dt, &w);
    }
    void for_recv(void *b, int n, const Datatype &dt)
    {
        buf = b;
        count = n;
        t = &dt;
        recv = true;
        wire_for_recv(b, n, dt, &w);
    }
    void done()
    {
        if (recv)
            wire_finish_recv(w, w.bytes, buf, count, *t);
    }
};

// ---------------------------------------------------------------- reductions

// A reduction's working array: n basic elements of the type, in memory
// layout, either the user's buffer itself or a dense copy.
inline int reduction_shape(const Ctx &cx, const Datatype &t, int count, MPI_Op op, size_t *n, size_t *elem)
{
    if (op < MPI_MAX || op > MPI_MAXLOC)
        return raise(cx.c, MPI_ERR_OP, cx.fn, std::string(op_name(op)) + " (" + std::to_string(op) +
                                                  ") is not a reduction operation of the subset");
    if (t.basic == Basic::None || t.basic == Basic::Mixed || t.basic_size == 0 || !op_valid_for(op, t.basic))
        return raise(cx.c, MPI_ERR_OP, cx.fn,
                     std::string(op_name(op)) + " is not defined for " +
                         (t.name.empty() ? std::string("this datatype") : t.name) +
                         (t.basic == Basic::Mixed ? " (a struct of different basic types)" : ""));
    const size_t per = t.size / t.basic_size;
    const bool dense = t.predefined || (t.contiguous(count) && t.basic_size == t.basic_extent);
    if (!dense && t.basic_size != t.basic_extent)
        return raise(cx.c, MPI_ERR_TYPE, cx.fn,
                     "reductions on non-contiguous datatypes of padded pairs are not supported; use the "
                     "predefined pair type with a contiguous buffer");
    *n = per * static_cast<size_t>(count);
    *elem = t.basic_extent;
    return MPI_SUCCESS;
}

// Whether count elements of t at buf + t.data_offset already are the dense
// array a reduction works on (then it works on the user's buffer itself).
inline bool dense_as_is(const Datatype &t, int count)
{
    return t.predefined || t.contiguous(count);
}

// In: the dense bytes of count elements of t at buf, into out.
inline void load(const void *buf, int count, const Datatype &t, std::byte *out, size_t bytes)
{
    if (dense_as_is(t, count))
        std::memcpy(out, static_cast<const std::byte *>(buf) + t.data_offset, bytes);
    else
        pack(buf, count, t, out);
}

// Out: bytes of a dense array at in, into count elements of t at buf.
inline void store(const std::byte *in, size_t bytes, void *buf, int count, const Datatype &t)
{
    if (dense_as_is(t, count))
        std::memcpy(static_cast<std::byte *>(buf) + t.data_offset, in, bytes);
    else
        unpack(in, bytes, buf, count, t);
}

} // namespace weft::mpi::coll
