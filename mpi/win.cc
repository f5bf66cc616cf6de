// SPDX-License-Identifier: BSD-3-Clause
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

} // namespace

int win_make(const char *fn, Comm *c, std::unique_ptr<Win> w, MPI_Info info, MPI_Win *out)
{
    uint32_t ctx;
    if (int rc = agree_context(*c, &ctx))
        return raise(c, fail_class(rc), fn, weft_why(rc));
    w->ctx = ctx;
    w->comm.context = ctx;
    w->comm.rank = c->rank;
    w->comm.size = c->size;
    w->comm.world = c->world;
    w->comm.local = c->local;
    w->comm.errhandler = MPI_ERRORS_RETURN;
    w->attr_size = static_cast<MPI_Aint>(w->size);
    w->attr_disp_unit = w->disp_unit;
    win_info_defaults(*w);
    win_info_apply(*w, info);
    const void *base = w->base;
    const size_t size = w->size;
    const int disp_unit = w->disp_unit;
    const size_t p = static_cast<size_t>(c->size);
    w->parts_to.assign(p, 0);
    w->acc_sent_to.assign(p, 0);
    w->acc_since_flush.assign(p, 0);
    w->acc_applied_from.assign(p, 0);
    w->locked.assign(p, LockHeld::None);
    w->nocheck.assign(p, false);

    int rc = weft_eq_alloc(kWinEqSize, nullptr, &w->eq);
    // Expose the memory before the allgather: once a member has everyone's
    // record, every member's match entry is in place.
    if (rc == WEFT_SUCCESS && size > 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        rc = weft_me_attach(kWinPortal, WEFT_RANK_ANY, ctx, 0, WEFT_RETAIN, WEFT_INS_AFTER, &w->me);
        if (rc == WEFT_SUCCESS) {
            weft_md_desc_t d{};
            d.start = const_cast<void *>(base);
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
    // A dynamic window's target checks its attached regions itself.
    if (any && w.flavor != MPI_WIN_FLAVOR_DYNAMIC && (lo < 0 || static_cast<uint64_t>(hi) > peer.size))
        return win_error(w, MPI_ERR_DISP, fn,
                         "the access falls outside the target's window: rank " + std::to_string(rank) +
                             "'s window is " + std::to_string(peer.size) + " bytes (disp_unit " +
                             std::to_string(peer.disp_unit) + "), the displacement " + std::to_string(disp) +
                             " is byte " + std::to_string(start) + ", and the access spans bytes [" +
                             std::to_string(lo) + ", " + std::to_string(hi) + ") (" + std::to_string(out->bytes) +
                             " bytes of data)");
    return MPI_SUCCESS;
}

namespace {

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

namespace {

// The message to a target's service: header, blocks, then data bytes of data.
std::vector<std::byte> make_msg(const WinHeader &hd, const std::vector<WinBlock> &blocks, size_t data)
{
    std::vector<std::byte> m(sizeof hd + blocks.size() * sizeof(WinBlock) + data);
    std::memcpy(m.data(), &hd, sizeof hd);
    if (!blocks.empty())
        std::memcpy(m.data() + sizeof hd, blocks.data(), blocks.size() * sizeof(WinBlock));
    return m;
}
std::byte *msg_data(std::vector<std::byte> &m, size_t data) { return m.data() + m.size() - data; }

std::vector<WinBlock> wire_blocks(const Target &t)
{
    std::vector<WinBlock> v;
    v.reserve(t.blocks.size());
    for (const Block &b : t.blocks)
        v.push_back({static_cast<uint64_t>(b.offset), b.length});
    return v;
}

// Posts the receive of a FETCH's answer (bytes) into count elements of rt
// at result: directly when the caller says the answer has result's layout
// there (direct), else staged and unpacked.
int post_fetch(Win &w, int rank, uint64_t id, void *result, int count, const Datatype &rt, size_t bytes, bool direct)
{
    Fetch f;
    f.id = id;
    f.target = rank;
    f.bytes = bytes;
    std::byte *into;
    if (direct) {
        into = static_cast<std::byte *>(result) + rt.data_offset;
    } else {
        f.staging.resize(bytes);
        f.dst = result;
        f.count = count;
        f.type = std::make_unique<Datatype>(rt);
        into = f.staging.data();
    }
    if (int rc = weft_irecv_ctx(into, bytes, w.comm.to_world(rank), kWinFetched, w.comm.coll_context(), &f.req))
        return rc;
    w.fetches.push_back(std::move(f));
    return WEFT_SUCCESS;
}

// Checks the origin side of a transfer of t.bytes.
int matching_size(Win &w, const char *fn, const Datatype &ot, int ocount, const Target &t, const char *which)
{
    const size_t obytes = ot.size * static_cast<size_t>(ocount);
    if (obytes == t.bytes)
        return MPI_SUCCESS;
    return win_error(w, MPI_ERR_TYPE, fn,
                     std::string("the ") + which + " describes " + std::to_string(obytes) +
                         " bytes of data and the target " + std::to_string(t.bytes) +
                         " (the type signatures must match)");
}

// Put's and Get's checks: the types, the target's blocks (*t), matching sizes.
int check_transfer(Win &w, const char *fn, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                   MPI_Datatype ttype, const Datatype **ot, Target *t)
{
    int rc = MPI_SUCCESS;
    if (!(*ot = check_type(w, fn, otype, ocount, "origin", &rc)))
        return rc;
    const Datatype *tt = check_type(w, fn, ttype, tcount, "target", &rc);
    if (!tt)
        return rc;
    if ((rc = target_blocks(w, fn, rank, disp, tcount, *tt, t)))
        return rc;
    return matching_size(w, fn, **ot, ocount, *t, "origin");
}

} // namespace

int rma_put(Win &w, const char *fn, const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
            int tcount, MPI_Datatype ttype)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const Datatype *ot;
    Target t;
    if (int rc = check_transfer(w, fn, ocount, otype, rank, disp, tcount, ttype, &ot, &t))
        return rc;
    if (t.bytes == 0)
        return MPI_SUCCESS;
    Wire wire;
    wire_for_send(origin, ocount, *ot, &wire);
    if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {   // a replacing accumulate of bytes
        WinHeader hd;
        hd.blocks = t.blocks.size();
        hd.elem = 1;
        hd.op = MPI_REPLACE;
        hd.basic = static_cast<int32_t>(Basic::Byte);
        std::vector<std::byte> m = make_msg(hd, wire_blocks(t), t.bytes);
        std::memcpy(msg_data(m, t.bytes), wire.ptr, t.bytes);
        if (int wrc = win_send_msg(w, rank, kWinAcc, std::move(m), w.next_op++))
            return win_error(w, fail_class(wrc), fn, weft_why(wrc));
        return MPI_SUCCESS;
    }
    RmaOp op;
    std::byte *data = wire.ptr;
    if (wire.packed) {
        op.buf = std::move(wire.scratch);   // the op owns the packed bytes until done
        data = nullptr;
    }
    return issue(w, t, data, std::move(op), true, fn);
}

int rma_get(Win &w, const char *fn, void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
            int tcount, MPI_Datatype ttype)
{
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const Datatype *ot;
    Target t;
    if (int rc = check_transfer(w, fn, ocount, otype, rank, disp, tcount, ttype, &ot, &t))
        return rc;
    if (t.bytes == 0)
        return MPI_SUCCESS;
    if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {   // a fetching no-op of bytes
        WinHeader hd;
        hd.blocks = t.blocks.size();
        hd.elem = 1;
        hd.op = MPI_NO_OP;
        hd.basic = static_cast<int32_t>(Basic::Byte);
        const uint64_t id = w.next_op++;
        int wrc = post_fetch(w, rank, id, origin, ocount, *ot, t.bytes, ot->contiguous(ocount));
        if (!wrc)
            wrc = win_send_msg(w, rank, kWinFetch, make_msg(hd, wire_blocks(t), 0), id);
        return wrc ? win_error(w, fail_class(wrc), fn, weft_why(wrc)) : MPI_SUCCESS;
    }
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
    return issue(w, t, data, std::move(op), false, fn);
}

int rma_accumulate(Win &w, const char *fn, const void *origin, int ocount, MPI_Datatype otype, void *result,
                   int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, int op,
                   bool fetch, const void *compare)
{
    int rc = MPI_SUCCESS;
    const bool data_sent = op != MPI_NO_OP;
    const Datatype *ot = nullptr;
    if (data_sent && !(ot = check_type(w, fn, otype, ocount, "origin", &rc)))
        return rc;
    const Datatype *rt = nullptr;
    if (fetch && !(rt = check_type(w, fn, rtype, rcount, "result", &rc)))
        return rc;
    const Datatype *tt = check_type(w, fn, ttype, tcount, "target", &rc);
    if (!tt)
        return rc;
    const bool compare_and_swap = op == kWinCompareAndSwap;
    if (!compare_and_swap && (op < MPI_MAX || op > MPI_NO_OP))
        return win_error(w, MPI_ERR_OP, fn,
                         std::string(op_name(op)) + " (" + std::to_string(op) + ") is not an operation " + fn +
                             " takes (a predefined reduction, MPI_REPLACE or MPI_NO_OP)");
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    // The target applies whole basic elements in place: its datatype must
    // be one basic type laid out densely.
    const bool dense_target =
        tt->basic != Basic::None && tt->basic != Basic::Mixed && tt->basic_size > 0 &&
        (tt->predefined || (tt->contiguous(tcount) && tt->basic_size == tt->basic_extent));
    if (!dense_target)
        return win_error(w, MPI_ERR_TYPE, fn,
                         "the target datatype " + (tt->name.empty() ? std::string() : tt->name + " ") +
                             "must be predefined or a contiguous run of one basic type (this subset applies "
                             "accumulates to dense arrays only)");
    // Nothing is combined when nothing moves (mpi4py's zero-count MPI_BYTE
    // accumulates with the default MPI_SUM pass on other MPIs too).
    if (!compare_and_swap && tcount > 0 && !op_valid_for(op, tt->basic))
        return win_error(w, MPI_ERR_OP, fn,
                         std::string(op_name(op)) + " is not defined for " +
                             (tt->name.empty() ? std::string("the target datatype") : tt->name));
    if ((ot && ot->basic != tt->basic) || (rt && rt->basic != tt->basic))
        return win_error(w, MPI_ERR_TYPE, fn,
                         std::string("the ") + (ot && ot->basic != tt->basic ? "origin" : "result") +
                             " and target datatypes are made of different basic types");
    Target t;
    if ((rc = target_blocks(w, fn, rank, disp, tcount, *tt, &t)))
        return rc;
    if ((ot && (rc = matching_size(w, fn, *ot, ocount, t, "origin"))) ||
        (rt && (rc = matching_size(w, fn, *rt, rcount, t, "result"))))
        return rc;
    if (t.bytes == 0 || (op == MPI_NO_OP && !fetch))
        return MPI_SUCCESS;
    // In memory layout (pairs keep their padding), as the target holds it.
    const size_t n = (tt->size / tt->basic_size) * static_cast<size_t>(tcount);
    const size_t elem = tt->basic_extent;
    const size_t mem_bytes = n * elem;
    auto dense = [&](const Datatype &x, int count) {
        return x.predefined || (x.contiguous(count) && x.basic_size == x.basic_extent);
    };
    if ((ot && !dense(*ot, ocount) && ot->basic_size != ot->basic_extent) ||
        (rt && !dense(*rt, rcount) && rt->basic_size != rt->basic_extent))
        return win_error(w, MPI_ERR_TYPE, fn,
                         "accumulates from or into non-contiguous datatypes of padded pairs are not supported; "
                         "use the predefined pair type with a contiguous buffer");
    WinHeader hd;
    hd.blocks = 1;
    hd.elem = elem;
    hd.op = op;
    hd.basic = static_cast<int32_t>(tt->basic);
    const WinBlock where{static_cast<uint64_t>(t.blocks.empty() ? 0 : t.blocks.front().offset), mem_bytes};
    const size_t data = !data_sent ? 0 : compare_and_swap ? 2 * mem_bytes : mem_bytes;
    std::vector<std::byte> m = make_msg(hd, {where}, data);
    if (data_sent) {
        std::byte *d = msg_data(m, data);
        if (dense(*ot, ocount))
            std::memcpy(d, static_cast<const std::byte *>(origin) + ot->data_offset, mem_bytes);
        else
            pack(origin, ocount, *ot, d);
        if (compare_and_swap)
            std::memcpy(d + mem_bytes, compare, mem_bytes);
    }
    const uint64_t id = w.next_op++;
    // The answer is in the target's memory layout (pairs padded), which is
    // a dense result type's.
    int wrc = fetch ? post_fetch(w, rank, id, result, rcount, *rt, mem_bytes, dense(*rt, rcount)) : WEFT_SUCCESS;
    if (!wrc)
        wrc = win_send_msg(w, rank, fetch ? kWinFetch : kWinAcc, std::move(m), id);
    if (!wrc && fetch && rank == w.comm.rank) {
        // To itself the answer comes as soon as this rank serves its own
        // message, so the fetch completes here, as other MPIs' do, not at
        // the epoch's end: programs reuse or free the result buffer early
        // (mpi4py's tests free it before the closing fence). win_complete
        // waits out what is in flight to this rank, serving the window
        // meanwhile, and retires the answer into the result buffer.
        win_complete(w, rank);
    }
    return wrc ? win_error(w, fail_class(wrc), fn, weft_why(wrc)) : MPI_SUCCESS;
}

int win_check_args(const char *fn, MPI_Comm h, const char *null_pointer, MPI_Aint size, int disp_unit, Comm **c)
{
    *c = comm(h);
    if (!*c)
        return raise(nullptr, MPI_ERR_COMM, fn, "communicator " + std::to_string(h) + " is not valid");
    if (null_pointer)
        return raise(*c, MPI_ERR_ARG, fn, std::string(null_pointer) + " is NULL");
    if (size < 0)
        return raise(*c, MPI_ERR_SIZE, fn, "size " + std::to_string(size) + " is negative");
    if (disp_unit <= 0)
        return raise(*c, MPI_ERR_DISP, fn, "disp_unit " + std::to_string(disp_unit) + " is not positive");
    return MPI_SUCCESS;
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
    Comm *c;
    if (int rc = win_check_args(fn, h, out ? nullptr : "win", size, disp_unit, &c))
        return rc;
    if (!base && size > 0)
        return raise(c, MPI_ERR_BASE, fn, "base is NULL with size " + std::to_string(size));
    auto w = std::make_unique<Win>();
    w->base = static_cast<std::byte *>(base);
    w->size = static_cast<size_t>(size);
    w->disp_unit = disp_unit;
    w->flavor = MPI_WIN_FLAVOR_CREATE;
    return win_make(fn, c, std::move(w), info, out);
}

WEFT_MPI_WEAK(Win_allocate)
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm h, void *baseptr, MPI_Win *out)
{
    MPI_THREAD_GUARD;
    const char *fn = "MPI_Win_allocate";
    MPI_NEED_INIT(fn);
    Comm *c;
    if (int rc = win_check_args(fn, h, !baseptr ? "baseptr" : !out ? "win" : nullptr, size, disp_unit, &c))
        return rc;
    std::unique_ptr<std::byte[]> mem;
    if (size > 0) {
        mem.reset(new (std::nothrow) std::byte[static_cast<size_t>(size)]);
        if (!mem)
            return raise(c, MPI_ERR_NO_MEM, fn, "cannot allocate " + std::to_string(size) + " bytes");
        std::memset(mem.get(), 0, static_cast<size_t>(size));
    }
    void *base = mem.get();
    auto w = std::make_unique<Win>();
    w->base = static_cast<std::byte *>(base);
    w->size = static_cast<size_t>(size);
    w->disp_unit = disp_unit;
    w->owned = std::move(mem);
    w->flavor = MPI_WIN_FLAVOR_ALLOCATE;
    const int rc = win_make(fn, c, std::move(w), info, out);
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

WEFT_MPI_WEAK(Win_call_errhandler)
int PMPI_Win_call_errhandler(MPI_Win h, int errorcode)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Win_call_errhandler", h, w);
    // The handler's own return is the program's business (MPI-3.1 8.3.4):
    // the call itself succeeded.
    win_error(*w, errorcode, "MPI_Win_call_errhandler", "called by the application");
    return MPI_SUCCESS;
}

WEFT_MPI_WEAK(Put)
int PMPI_Put(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
             MPI_Datatype ttype, MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Put", h, w);
    return rma_put(*w, "MPI_Put", origin, ocount, otype, rank, disp, tcount, ttype);
}

WEFT_MPI_WEAK(Get)
int PMPI_Get(void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype,
             MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Get", h, w);
    return rma_get(*w, "MPI_Get", origin, ocount, otype, rank, disp, tcount, ttype);
}

WEFT_MPI_WEAK(Accumulate)
int PMPI_Accumulate(const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp, int tcount,
                    MPI_Datatype ttype, MPI_Op op, MPI_Win h)
{
    MPI_THREAD_GUARD;
    WIN_OR_RETURN("MPI_Accumulate", h, w);
    return rma_accumulate(*w, "MPI_Accumulate", origin, ocount, otype, nullptr, 0, MPI_DATATYPE_NULL, rank, disp,
                          tcount, ttype, op, false, nullptr);
}

} // extern "C"
