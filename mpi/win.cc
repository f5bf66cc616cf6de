// One-sided communication, part 1: windows (create, allocate, free, group,
// error handlers) and the RMA calls (Put, Get, Accumulate). The design is
// described in win.hpp; synchronization is in win_sync.cc.
#include <algorithm>
#include <cstring>
#include <string>

#include "mpi/win.hpp"

namespace weft::mpi {

Table<Win> g_wins(1);

Win *win(MPI_Win h) { return g_wins.get(h); }

int win_error(Win &w, int cls, const char *fn, const std::string &why)
{
    MPI_Win h = w.handle;
    return raise_on_handler(w.errhandler, &h, true, cls, fn, why);
}

namespace {

// Every member's record of n bytes, in window rank order (over w's collective context).
int allgather_records(const Comm &c, const void *mine, size_t n, std::byte *all)
{
    std::memcpy(all + static_cast<size_t>(c.rank) * n, mine, n);
    std::vector<weft_request_t> reqs;
    for (int r = 0; r < c.size; ++r) {
        if (r == c.rank)
            continue;
        weft_request_t q;
        if (int rc = coll_irecv(c, all + static_cast<size_t>(r) * n, n, r, kTagWin, &q)) {
            coll_waitall(reqs);
            return rc;
        }
        reqs.push_back(q);
    }
    int first = WEFT_SUCCESS;
    for (int r = 0; r < c.size; ++r)
        if (r != c.rank)
            if (int rc = coll_send(c, mine, n, r, kTagWin); rc && !first)
                first = rc;
    const int rc = coll_waitall(reqs);
    return first ? first : rc;
}

// The shared part of Win_create and Win_allocate (collective over c).
int create(const char *fn, Comm *c, void *base, size_t size, int disp_unit, std::unique_ptr<std::byte[]> owned,
           MPI_Win *out)
{
    uint32_t ctx;
    if (int rc = agree_context(*c, &ctx))
        return raise(c, fail_class(rc), fn, weft_why(rc));
    auto w = std::make_unique<Win>();
    w->ctx = ctx;
    w->comm.context = ctx;
    w->comm.rank = c->rank;
    w->comm.size = c->size;
    w->comm.world = c->world;
    w->comm.local = c->local;
    w->comm.errhandler = MPI_ERRORS_RETURN;
    w->base = static_cast<std::byte *>(base);
    w->size = size;
    w->disp_unit = disp_unit;
    w->owned = std::move(owned);
    const size_t p = static_cast<size_t>(c->size);
    w->parts_to.assign(p, 0);
    w->acc_since_fence.assign(p, 0);
    w->acc_since_flush.assign(p, 0);
    w->locked.assign(p, LockHeld::None);
    w->nocheck.assign(p, false);

    int rc = weft_eq_alloc(kWinEqSize, nullptr, &w->eq);
    // Expose the memory before the allgather: once a member has everyone's
    // record, every member's match entry is in place.
    if (rc == WEFT_SUCCESS && size > 0) {
        rc = weft_me_attach(kWinPortal, WEFT_RANK_ANY, ctx, 0, WEFT_RETAIN, WEFT_INS_AFTER, &w->me);
        if (rc == WEFT_SUCCESS) {
            weft_md_desc_t d{};
            d.start = base;
            d.length = size;
            d.threshold = WEFT_MD_THRESH_INF;
            d.options = WEFT_MD_OP_PUT | WEFT_MD_OP_GET | WEFT_MD_MANAGE_REMOTE;
            d.eq = WEFT_HANDLE_NONE;
            rc = weft_md_attach(w->me, &d, WEFT_RETAIN, &w->md);
        }
    }
    const std::string why = rc ? weft_why(rc) : std::string();
    // Everyone takes part in the exchange even after a local failure (a
    // size of UINT64_MAX says "failed"), so no member is left waiting.
    WinPeer mine{rc ? UINT64_MAX : size, disp_unit};
    w->peers.resize(p);
    const int grc = allgather_records(w->comm, &mine, sizeof mine, reinterpret_cast<std::byte *>(w->peers.data()));
    bool someone_failed = false;
    for (const WinPeer &q : w->peers)
        someone_failed = someone_failed || q.size == UINT64_MAX;
    if (rc || grc || someone_failed) {
        if (w->md.cookie)
            weft_md_unlink(w->md);
        if (w->me.cookie)
            weft_me_unlink(w->me);
        if (w->eq.cookie)
            weft_eq_free(w->eq);
        if (rc)
            return raise(c, fail_class(rc), fn, "exposing the window's memory failed: " + why);
        if (grc)
            return raise(c, fail_class(grc), fn, "exchanging the members' window sizes failed: " + weft_why(grc));
        return raise(c, MPI_ERR_OTHER, fn, "another member could not create its part of the window");
    }
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    const MPI_Win h = g_wins.add(std::move(w));
    g_wins.get(h)->handle = h;
    win_service_attach();
    *out = h;
    return MPI_SUCCESS;
}

// ---------------------------------------------------------------- RMA argument checks

struct Target {
    Win *w;
    int rank;
    uint32_t world;
    std::vector<Block> blocks;   // absolute byte offsets in the target's window, in type-map order
    size_t bytes = 0;
};

const Datatype *check_type(Win &w, const char *fn, MPI_Datatype h, int count, const char *which, int *rc)
{
    if (count < 0) {
        *rc = win_error(w, MPI_ERR_COUNT, fn, std::string(which) + " count " + std::to_string(count) + " is negative");
        return nullptr;
    }
    const Datatype *t = datatype(h);
    if (!t) {
        *rc = win_error(w, MPI_ERR_TYPE, fn, std::string(which) + " datatype is not a valid datatype");
        return nullptr;
    }
    if (!t->committed) {
        *rc = win_error(w, MPI_ERR_TYPE, fn, std::string(which) + " datatype is not committed (MPI_Type_commit)");
        return nullptr;
    }
    return t;
}

// Checks the target rank, displacement and type, and lays count elements
// of t at disp out as byte blocks of the target's window (neighbours merged).
int target_blocks(Win &w, const char *fn, int rank, MPI_Aint disp, int count, const Datatype &t, Target *out)
{
    if (rank < 0 || rank >= w.comm.size)
        return win_error(w, MPI_ERR_RANK, fn,
                         "target rank " + std::to_string(rank) + " is not a member of the window (size " +
                             std::to_string(w.comm.size) + ")");
    if (disp < 0)
        return win_error(w, MPI_ERR_DISP, fn, "target displacement " + std::to_string(disp) + " is negative");
    const WinPeer &peer = w.peers[static_cast<size_t>(rank)];
    const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(disp) * static_cast<std::ptrdiff_t>(peer.disp_unit);
    out->w = &w;
    out->rank = rank;
    out->world = w.comm.to_world(rank);
    out->bytes = t.size * static_cast<size_t>(count);
    out->blocks.clear();
    std::ptrdiff_t lo = 0, hi = 0;
    bool any = false;
    auto add = [&](std::ptrdiff_t off, size_t len) {
        if (len == 0)
            return;
        const std::ptrdiff_t end = off + static_cast<std::ptrdiff_t>(len);
        lo = any ? std::min(lo, off) : off;
        hi = any ? std::max(hi, end) : end;
        any = true;
        if (!out->blocks.empty()) {
            Block &b = out->blocks.back();
            if (b.offset + static_cast<std::ptrdiff_t>(b.length) == off) {
                b.length += len;
                return;
            }
        }
        out->blocks.push_back({off, len});
    };
    if (t.contiguous(count)) {
        add(start + t.data_offset, out->bytes);
    } else {
        for (int i = 0; i < count; ++i)
            for (const Block &b : t.blocks)
                add(start + static_cast<std::ptrdiff_t>(i) * t.extent() + b.offset, b.length);
    }
    if (any && (lo < 0 || static_cast<uint64_t>(hi) > peer.size))
        return win_error(w, MPI_ERR_DISP, fn,
                         "the access falls outside the target's window: rank " + std::to_string(rank) +
                             "'s window is " + std::to_string(peer.size) + " bytes (disp_unit " +
                             std::to_string(peer.disp_unit) + "), the displacement " + std::to_string(disp) +
                             " is byte " + std::to_string(start) + ", and the access spans bytes [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + ") (" + std::to_string(out->bytes) +
                             " bytes of data)");
    return MPI_SUCCESS;
}

// Room in the EQ for `events` more.
void make_room(Win &w, size_t events)
{
    while (w.events_due + events > kWinEqSize) {
        win_drain(w);
        if (w.events_due + events > kWinEqSize && g_service)
            g_service();
    }
}

// A bound MD over [p, p+len) reporting to w's EQ, naming op id.
int bind(Win &w, void *p, size_t len, uint64_t id, weft_md_t *md)
{
    weft_md_desc_t d{};
    d.start = p;
    d.length = len;
    d.threshold = 1;
    d.options = 0;
    d.user_ptr = reinterpret_cast<void *>(static_cast<uintptr_t>(id));
    d.eq = w.eq;
    return weft_md_bind(&d, WEFT_UNLINK, md);
}

// Issues one transfer per target block; put: from src (the packed origin
// bytes), get: into src. On a failure the transfers already issued stay
// in flight (the op completes with them) and the error is returned.
int issue(Win &w, const Target &t, std::byte *data, RmaOp op, bool put, const char *fn)
{
    const uint64_t id = w.next_op++;
    op.target = t.rank;
    op.parts = 0;
    auto &rec = w.ops[id] = std::move(op);
    if (rec.buf.size() && !data)
        data = rec.buf.data();
    size_t pos = 0;
    for (const Block &b : t.blocks) {
        make_room(w, put ? 2 : 1);
        weft_md_t md;
        int rc = bind(w, data + pos, b.length, id, &md);
        if (rc == WEFT_SUCCESS) {
            rc = put ? weft_put(md, WEFT_ACK_REQ, t.world, kWinPortal, w.ctx, static_cast<size_t>(b.offset), 0)
                     : weft_get(md, t.world, kWinPortal, w.ctx, static_cast<size_t>(b.offset));
            if (rc != WEFT_SUCCESS)
                weft_md_unlink(md);
        }
        if (rc != WEFT_SUCCESS) {
            const std::string why = weft_why(rc);
            if (w.ops[id].parts == 0)
                w.ops.erase(id);
            return win_error(w, fail_class(rc), fn, why);
        }
        ++w.ops[id].parts;
        ++w.parts_to[static_cast<size_t>(t.rank)];
        w.events_due += put ? 2 : 1;
        pos += b.length;
    }
    if (w.ops[id].parts == 0)
        w.ops.erase(id);
    return MPI_SUCCESS;
}

// One transfer ended (ACK or REPLY).
void part_done(Win &w, const weft_event_t &ev)
{
    const uint64_t id = reinterpret_cast<uintptr_t>(ev.md_user_ptr);
    auto it = w.ops.find(id);
    if (ev.status != WEFT_SUCCESS && w.error_class == MPI_SUCCESS) {
        w.error_class = fail_class(ev.status);
        w.error_why = std::string(ev.type == WEFT_EVENT_ACK ? "a put" : "a get") + " to rank " +
                      std::to_string(it == w.ops.end() ? -1 : it->second.target) + " failed: " +
                      weft_status_string(ev.status);
    }
    if (it == w.ops.end())
        return;
    RmaOp &op = it->second;
    --w.parts_to[static_cast<size_t>(op.target)];
    if (--op.parts > 0)
        return;
    if (op.type && op.dst)
        unpack(op.buf.data(), op.buf.size(), op.dst, op.count, *op.type);
    w.ops.erase(it);
}

} // namespace

void win_drain(Win &w)
{
    for (;;) {
        weft_event_t ev{};
        const int rc = weft_eq_poll(&w.eq, 1, 0, &ev, nullptr);
        if (rc == WEFT_ERR_TIMEOUT)
            return;
        if (rc != WEFT_SUCCESS && rc != WEFT_ERR_OVERFLOW) {
            if (w.error_class == MPI_SUCCESS) {
                w.error_class = fail_class(rc);
                w.error_why = "polling the window's event queue failed: " + weft_why(rc);
            }
            return;
        }
        if (rc == WEFT_ERR_OVERFLOW && w.error_class == MPI_SUCCESS) {   // cannot happen: make_room
            w.error_class = MPI_ERR_INTERN;
            w.error_why = "the window's event queue overflowed; completions were lost";
        }
        if (w.events_due > 0)
            --w.events_due;
        if (ev.type == WEFT_EVENT_ACK || ev.type == WEFT_EVENT_REPLY)
            part_done(w, ev);
        else if (ev.type == WEFT_EVENT_SEND && ev.status != WEFT_SUCCESS && w.error_class == MPI_SUCCESS) {
            w.error_class = fail_class(ev.status);
            w.error_why = "a put's data could not be sent: " + std::string(weft_status_string(ev.status));
        }
    }
}

void win_destroy(Win &w)
{
    if (w.md.cookie)
        weft_md_unlink(w.md);
    if (w.me.cookie)
        weft_me_unlink(w.me);
    if (w.eq.cookie)
        weft_eq_free(w.eq);
    g_wins.remove(w.handle);
    win_service_detach_if_idle();
}

void windows_finalize()
{
    // Collective frees in one order on every rank: by context (members
    // agreed on it, and one process's windows all have different ones).
    std::vector<std::pair<uint32_t, MPI_Win>> open;
    g_wins.for_each([&](Win &w) { open.emplace_back(w.ctx, w.handle); });
    std::sort(open.begin(), open.end());
    for (auto &[ctx, h] : open) {
        MPI_Win x = h;
        PMPI_Win_free(&x);
    }
}

} // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

WEFT_MPI_WEAK(Win_create)
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm h, MPI_Win *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_create";
    MPI_NEED_INIT(fn);
    (void)info;
    Comm *c = comm(h);
    if (!c)
        return raise(nullptr, MPI_ERR_COMM, fn, "communicator " + std::to_string(h) + " is not valid");
    if (!out)
        return raise(c, MPI_ERR_ARG, fn, "win is NULL");
    if (size < 0)
        return raise(c, MPI_ERR_SIZE, fn, "size " + std::to_string(size) + " is negative");
    if (disp_unit <= 0)
        return raise(c, MPI_ERR_DISP, fn, "disp_unit " + std::to_string(disp_unit) + " is not positive");
    if (!base && size > 0)
        return raise(c, MPI_ERR_BASE, fn, "base is NULL with size " + std::to_string(size));
    return create(fn, c, base, static_cast<size_t>(size), disp_unit, nullptr, out);
}

WEFT_MPI_WEAK(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm h, void *baseptr, MPI_Win *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_allocate";
    MPI_NEED_INIT(fn);
    (void)info;
    Comm *c = comm(h);
    if (!c)
        return raise(nullptr, MPI_ERR_COMM, fn, "communicator " + std::to_string(h) + " is not valid");
    if (!out || !baseptr)
        return raise(c, MPI_ERR_ARG, fn, "baseptr or win is NULL");
    if (size < 0)
        return raise(c, MPI_ERR_SIZE, fn, "size " + std::to_string(size) + " is negative");
    if (disp_unit <= 0)
        return raise(c, MPI_ERR_DISP, fn, "disp_unit " + std::to_string(disp_unit) + " is not positive");
    std::unique_ptr<std::byte[]> mem;
    if (size > 0) {
        mem.reset(new (std::nothrow) std::byte[static_cast<size_t>(size)]);
        if (!mem)
            return raise(c, MPI_ERR_NO_MEM, fn, "cannot allocate " + std::to_string(size) + " bytes");
        std::memset(mem.get(), 0, static_cast<size_t>(size));
    }
    void *base = mem.get();
    const int rc = create(fn, c, base, static_cast<size_t>(size), disp_unit, std::move(mem), out);
    if (rc == MPI_SUCCESS)
        *static_cast<void **>(baseptr) = base;
    return rc;
}

WEFT_MPI_WEAK(Win_free)
int PMPI_Win_free(MPI_Win *h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_free";
    MPI_NEED_INIT(fn);
    if (!h)
        return raise(nullptr, MPI_ERR_ARG, fn, "win is NULL");
    WIN_OR_RETURN(fn, *h, w);
    for (size_t r = 0; r < w->locked.size(); ++r)
        if (w->locked[r] != LockHeld::None)
            return win_error(*w, MPI_ERR_RMA_SYNC, fn,
                             "this process still holds a lock on rank " + std::to_string(r) +
                                 " (call MPI_Win_unlock first)");
    if (int arc = attrs_delete_all(AttrKind::Win, *h))
        return win_error(*w, arc, fn, "an attribute's delete callback returned error " + std::to_string(arc));
    const int rc = win_quiesce(*w, fn);
    win_destroy(*w);
    *h = MPI_WIN_NULL;
    return rc;
}

WEFT_MPI_WEAK(Win_get_group)
int PMPI_Win_get_group(MPI_Win h, MPI_Group *group)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_get_group", h, w);
    if (!group)
        return win_error(*w, MPI_ERR_ARG, "MPI_Win_get_group", "group is NULL");
    *group = make_group(w->comm.world);
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_set_errhandler)
int PMPI_Win_set_errhandler(MPI_Win h, MPI_Errhandler eh)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_set_errhandler", h, w);
    if (!errhandler_valid(eh))
        return win_error(*w, MPI_ERR_ARG, "MPI_Win_set_errhandler", "not an error handler");
    w->errhandler = eh;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Win_get_errhandler)
int PMPI_Win_get_errhandler(MPI_Win h, MPI_Errhandler *eh)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_get_errhandler", h, w);
    if (!eh)
        return win_error(*w, MPI_ERR_ARG, "MPI_Win_get_errhandler", "errhandler is NULL");
    *eh = w->errhandler;
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Put)
int PMPI_Put(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
            MPI_Datatype ttype, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Put";
    WIN_OR_RETURN(fn, h, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    const Datatype *ot = check_type(*w, fn, otype, ocount, "origin", &rc);
    if (!ot)
        return rc;
    const Datatype *tt = check_type(*w, fn, ttype, tcount, "target", &rc);
    if (!tt)
        return rc;
    Target t;
    if ((rc = target_blocks(*w, fn, rank, disp, tcount, *tt, &t)))
        return rc;
    const size_t obytes = ot->size * static_cast<size_t>(ocount);
    if (obytes != t.bytes)
        return win_error(*w, MPI_ERR_TYPE, fn,
                         "the origin describes " + std::to_string(obytes) + " bytes of data and the target " +
                             std::to_string(t.bytes) + " (the type signatures must match)");
    if (t.bytes == 0)
        return MPI_SUCCESS;
    Wire wire;
    wire_for_send(origin, ocount, *ot, &wire);
    RmaOp op;
    std::byte *data = wire.ptr;
    if (wire.packed) {
        op.buf = std::move(wire.scratch);   // the op owns the packed bytes until done
        data = nullptr;
    }
    return issue(*w, t, data, std::move(op), true, fn);
}

WEFT_MPI_WEAK(Get)
int PMPI_Get(void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype,
            MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Get";
    WIN_OR_RETURN(fn, h, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    const Datatype *ot = check_type(*w, fn, otype, ocount, "origin", &rc);
    if (!ot)
        return rc;
    const Datatype *tt = check_type(*w, fn, ttype, tcount, "target", &rc);
    if (!tt)
        return rc;
    Target t;
    if ((rc = target_blocks(*w, fn, rank, disp, tcount, *tt, &t)))
        return rc;
    const size_t obytes = ot->size * static_cast<size_t>(ocount);
    if (obytes != t.bytes)
        return win_error(*w, MPI_ERR_TYPE, fn,
                         "the origin describes " + std::to_string(obytes) + " bytes of data and the target " +
                             std::to_string(t.bytes) + " (the type signatures must match)");
    if (t.bytes == 0)
        return MPI_SUCCESS;
    RmaOp op;
    std::byte *data = nullptr;
    if (ot->contiguous(ocount)) {
        data = static_cast<std::byte *>(origin) + ot->data_offset;
    } else {   // staged, unpacked when every part has arrived
        op.buf.resize(t.bytes);
        op.dst = origin;
        op.count = ocount;
        op.type = std::make_unique<Datatype>(*ot);
    }
    return issue(*w, t, data, std::move(op), false, fn);
}

WEFT_MPI_WEAK(Accumulate)
int PMPI_Accumulate(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                   MPI_Datatype ttype, MPI_Op op, MPI_Win h)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Accumulate";
    WIN_OR_RETURN(fn, h, w);
    int rc = MPI_SUCCESS;
    const Datatype *ot = check_type(*w, fn, otype, ocount, "origin", &rc);
    if (!ot)
        return rc;
    const Datatype *tt = check_type(*w, fn, ttype, tcount, "target", &rc);
    if (!tt)
        return rc;
    if (op < MPI_MAX || op > MPI_NO_OP)
        return win_error(*w, MPI_ERR_OP, fn,
                         std::string(op_name(op)) + " (" + std::to_string(op) +
                             ") is not an operation MPI_Accumulate takes (a predefined reduction, MPI_REPLACE "
                             "or MPI_NO_OP)");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    // The target applies whole basic elements in place: its datatype must
    // be one basic type laid out densely.
    const bool dense_target =
        tt->basic != Basic::None && tt->basic != Basic::Mixed && tt->basic_size > 0 &&
        (tt->predefined || (tt->contiguous(tcount) && tt->basic_size == tt->basic_extent));
    if (!dense_target)
        return win_error(*w, MPI_ERR_TYPE, fn,
                         "the target datatype " + (tt->name.empty() ? std::string() : tt->name + " ") +
                             "must be predefined or a contiguous run of one basic type (this subset applies "
                             "accumulates to dense arrays only)");
    if (!op_valid_for(op, tt->basic))
        return win_error(*w, MPI_ERR_OP, fn,
                         std::string(op_name(op)) + " is not defined for " +
                             (tt->name.empty() ? std::string("the target datatype") : tt->name));
    if (ot->basic != tt->basic)
        return win_error(*w, MPI_ERR_TYPE, fn, "the origin and target datatypes are made of different basic types");
    Target t;
    if ((rc = target_blocks(*w, fn, rank, disp, tcount, *tt, &t)))
        return rc;
    const size_t obytes = ot->size * static_cast<size_t>(ocount);
    if (obytes != t.bytes)
        return win_error(*w, MPI_ERR_TYPE, fn,
                         "the origin describes " + std::to_string(obytes) + " bytes of data and the target " +
                             std::to_string(t.bytes) + " (the type signatures must match)");
    if (t.bytes == 0 || op == MPI_NO_OP)
        return MPI_SUCCESS;
    // In memory layout (pairs keep their padding), as the target holds it.
    const size_t n = (tt->size / tt->basic_size) * static_cast<size_t>(tcount);
    const size_t elem = tt->basic_extent;
    const size_t mem_bytes = n * elem;
    const bool origin_dense = ot->predefined || (ot->contiguous(ocount) && ot->basic_size == ot->basic_extent);
    if (!origin_dense && ot->basic_size != ot->basic_extent)
        return win_error(*w, MPI_ERR_TYPE, fn,
                         "accumulates from non-contiguous datatypes of padded pairs are not supported; use the "
                         "predefined pair type with a contiguous buffer");
    WinHeader hd;
    hd.offset = static_cast<uint64_t>(t.blocks.empty() ? 0 : t.blocks.front().offset);
    hd.n = n;
    hd.elem = elem;
    hd.op = op;
    hd.basic = static_cast<int32_t>(tt->basic);
    AccSend s;
    s.target = rank;
    s.msg.resize(sizeof hd + mem_bytes);
    std::memcpy(s.msg.data(), &hd, sizeof hd);
    if (origin_dense)
        std::memcpy(s.msg.data() + sizeof hd,
                    static_cast<const std::byte *>(origin) + ot->data_offset,
                    mem_bytes);
    else
        pack(origin, ocount, *ot, s.msg.data() + sizeof hd);
    if (int wrc = weft_isend_ctx(s.msg.data(), s.msg.size(), t.world, kWinAcc, w->ctx, 0, &s.req))
        return win_error(*w, fail_class(wrc), fn, weft_why(wrc));
    w->acc_sends.push_back(std::move(s));
    ++w->acc_since_fence[static_cast<size_t>(rank)];
    ++w->acc_since_flush[static_cast<size_t>(rank)];
    return MPI_SUCCESS;
}

} // extern "C"
