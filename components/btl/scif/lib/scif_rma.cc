// SPDX-License-Identifier: BSD-3-Clause
// Registered windows, RMA and fences of weft/scif.h.
//
// A window maps a range of the endpoint's registered address space to local
// pages; the peer learns of it by a win_reg control message sent before
// scif_register() returns, so any later message of ours (ring or socket)
// arrives after it. RMA resolves both ranges to addresses and copies once
// with process_vm_readv/writev; when the kernel refused those toward the
// peer at connect time, through the peer's bounce server instead
// (scif_bounce.hpp). Every RMA completes before its call returns
// (the CPU moves the data), so SYNC and ORDERED hold trivially and a fence on
// our own RMAs is already satisfied; a fence on the peer's RMAs waits on the
// peer's completion counter in the shared segment.
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include <weft/scif.h>

#include "scif_api_export.hpp"
#include "scif_ctrl.hpp"
#include "scif_endpoint.hpp"

using namespace weft::scif;

namespace {

constexpr uint64_t kPage = 4096;
constexpr int kRmaFlags = SCIF_RMA_USECPU | SCIF_RMA_USECACHE | SCIF_RMA_SYNC | SCIF_RMA_ORDERED;

int ret(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return rc;
}

bool aligned(uint64_t v) { return (v & (kPage - 1)) == 0; }

bool overlaps(const Window &w, uint64_t off, uint64_t len)
{
    return off < w.offset + w.length && w.offset < off + len;
}

// Is [addr, addr + len) mapped? msync answers ENOMEM for unmapped pages
// (addr rounded down to its page: msync wants it aligned).
bool mapped(void *addr, size_t len)
{
    const auto a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t start = a & ~uintptr_t{kPage - 1};
    return ::msync(reinterpret_cast<void *>(start), a + len - start, MS_ASYNC) == 0;
}

template <class Piece>
int resolve(std::vector<Window> &wins, uint64_t off, uint64_t len, int prot, Piece &&piece)
{
    return resolve_windows(wins, off, len, prot, std::forward<Piece>(piece));
}

// Checks a remote range first without copying, draining window notices once
// if it is not (yet) known.
int check_remote(Endpoint &ep, uint64_t roff, uint64_t len, int prot)
{
    auto probe = [](std::byte *, uint64_t) { return 0; };
    int rc = resolve(ep.remote_windows, roff, len, prot, probe);
    if (rc == -ENXIO) {
        if (int d = no_throw([&] { drain_control(ep); return 0; }); d < 0)
            return d;
        rc = resolve(ep.remote_windows, roff, len, prot, probe);
    }
    return rc;
}

int connected(Endpoint *ep)
{
    if (!ep)
        return -EBADF;
    if (ep->state != State::connected)
        return -ENOTCONN;
    if (int rc = no_throw([&] { drain_control(*ep); return 0; }); rc < 0)
        return rc;
    if (ep->peer_closed())
        return -ECONNRESET;
    return 0;
}

// Counts an RMA in the shared segment while it runs, so peer fences can wait.
class RmaScope {
public:
    explicit RmaScope(Endpoint &ep) : ep_(ep)
    {
        std::atomic_ref<uint64_t>(ep_.mine->rma_started)
            .store(ep_.mine->rma_started + 1, std::memory_order_release);
    }
    ~RmaScope()
    {
        std::atomic_ref<uint64_t>(ep_.mine->rma_done)
            .store(ep_.mine->rma_done + 1, std::memory_order_release);
    }
    RmaScope(const RmaScope &) = delete;
    RmaScope &operator=(const RmaScope &) = delete;

private:
    Endpoint &ep_;
};

// Moves len bytes between local memory (resolved pieces) and the peer's
// registered range at roff.
int move_remote(Endpoint &ep, bool read, std::byte *local, uint64_t roff, uint64_t len)
{
    if (!ep.single_copy) {
        // The kernel refused process_vm_* toward the peer: its server copies
        // through our bounce slots. No server (the peer did not offer one)
        // leaves no way to reach its memory.
        if (!ep.bounce)
            return -EOPNOTSUPP;
        return bounce_move(ep.bounce, read ? RmaOp::read : RmaOp::write, local, roff, len);
    }
    uint64_t done = 0;
    return resolve(ep.remote_windows, roff, len, read ? SCIF_PROT_READ : SCIF_PROT_WRITE,
                   [&](std::byte *remote, uint64_t n) {
                       int rc = copy_with_peer(ep, read, local + done,
                                               reinterpret_cast<uintptr_t>(remote), n);
                       done += n;
                       return rc;
                   });
}

int rma_registered(scif_epd_t epd, off_t loffset, size_t len, off_t roffset, int flags, bool read)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return -EBADF;
    if (flags & ~kRmaFlags)
        return -EINVAL;
    if (int rc = connected(ep); rc < 0)
        return rc;
    if (loffset < 0 || roffset < 0)
        return -ENXIO;
    if (len == 0)
        return 0;
    const int lprot = read ? SCIF_PROT_WRITE : SCIF_PROT_READ;
    const int rprot = read ? SCIF_PROT_READ : SCIF_PROT_WRITE;
    auto probe = [](std::byte *, uint64_t) { return 0; };
    if (int rc = resolve(ep->windows, loffset, len, lprot, probe); rc < 0)
        return rc;
    if (int rc = check_remote(*ep, roffset, len, rprot); rc < 0)
        return rc;
    RmaScope scope(*ep);
    uint64_t done = 0;
    return resolve(ep->windows, loffset, len, lprot, [&](std::byte *local, uint64_t n) {
        int rc = move_remote(*ep, read, local, roffset + done, n);
        done += n;
        return rc;
    });
}

int rma_virtual(scif_epd_t epd, void *addr, size_t len, off_t roffset, int flags, bool read)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return -EBADF;
    if (flags & ~kRmaFlags)
        return -EINVAL;
    if (int rc = connected(ep); rc < 0)
        return rc;
    if (roffset < 0)
        return -ENXIO;
    if (len == 0)
        return 0;
    // process_vm_readv/writev would say EFAULT for a bad local range, but the
    // bounce path copies with memcpy: look first, whichever path runs.
    if (!addr || reinterpret_cast<uintptr_t>(addr) + len < len || !mapped(addr, len))
        return -EFAULT;
    if (int rc = check_remote(*ep, roffset, len, read ? SCIF_PROT_READ : SCIF_PROT_WRITE); rc < 0)
        return rc;
    RmaScope scope(*ep);
    return move_remote(*ep, read, static_cast<std::byte *>(addr), roffset, len);
}

uint64_t load(const uint64_t &v)
{
    return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(v)).load(std::memory_order_acquire);
}

// Waits until the marked RMAs are done: ours are (synchronous); the peer's
// finish inside its own calls, or the peer dies (ECONNRESET).
int wait_mark(Endpoint &ep, int mark)
{
    // make_mark() never gives a negative mark, nor one above the count of
    // RMAs started (until that count wraps, 2^30 RMAs): waiting for such a
    // mark would spin forever, so it is refused.
    if (mark < 0)
        return -EINVAL;
    const bool peer = mark & 1;
    const uint64_t target = static_cast<uint64_t>(mark) >> 1;
    if (target > load(peer ? ep.theirs->rma_started : ep.mine->rma_started))
        return -EINVAL;
    if (!peer)
        return 0;
    for (unsigned spin = 0; load(ep.theirs->rma_done) < target; ++spin) {
        if (spin % 1024 == 1023) {
            if (int rc = no_throw([&] { drain_control(ep); return 0; }); rc < 0)
                return rc;
            if (ep.peer_gone)
                return -ECONNRESET;
            sched_yield();
        }
    }
    return 0;
}

int make_mark(Endpoint &ep, int flags, int *mark)
{
    const bool peer = flags == SCIF_FENCE_INIT_PEER;
    const uint64_t count = peer ? load(ep.theirs->rma_started) : load(ep.mine->rma_started);
    // The mark encodes whose RMAs and how many had started; it wraps after
    // 2^30 RMAs per endpoint side.
    *mark = static_cast<int>(((count & ((uint64_t{1} << 30) - 1)) << 1) | (peer ? 1 : 0));
    return 0;
}

} // namespace

extern "C" {

WEFT_SCIF_API off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset,
                                  int prot_flags, int map_flags)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    const bool fixed = map_flags & SCIF_MAP_FIXED;
    if ((map_flags & ~SCIF_MAP_FIXED) || (prot_flags & ~(SCIF_PROT_READ | SCIF_PROT_WRITE)) ||
        (fixed && !aligned(static_cast<uint64_t>(offset))) ||
        !aligned(reinterpret_cast<uintptr_t>(addr)) || !aligned(len) || len == 0 || offset < 0)
        return ret(-EINVAL);
    if (int rc = connected(ep); rc < 0)
        return ret(rc);
    if (!mapped(addr, len))
        return ret(-EFAULT);
    uint64_t po = static_cast<uint64_t>(offset);
    auto taken = [&](uint64_t at) {
        return std::any_of(ep->windows.begin(), ep->windows.end(),
                           [&](const Window &w) { return overlaps(w, at, len); });
    };
    if (fixed) {
        if (taken(po))
            return ret(-EADDRINUSE);
    } else if (po == 0 || !aligned(po) || taken(po)) {
        // The hint is not usable: after the highest window (or at one page,
        // so 0 never names a window by accident).
        po = kPage;
        for (const Window &w : ep->windows)
            po = std::max(po, w.offset + w.length);
    }
    if (po > static_cast<uint64_t>(LLONG_MAX) - len)
        return ret(-ENOMEM);
    try {
        std::lock_guard<std::mutex> lock(ep->win_lock);
        ep->windows.push_back({po, len, static_cast<std::byte *>(addr), prot_flags});
    } catch (...) {
        return ret(-ENOMEM);
    }
    CtrlMsg m{};
    m.type = CtrlType::win_reg;
    m.u.reg = {po, len, reinterpret_cast<uintptr_t>(addr), static_cast<uint32_t>(prot_flags), 0};
    std::byte buf[kCtrlMax];
    const size_t n = encode_ctrl(m, std::span<std::byte, kCtrlMax>(buf, kCtrlMax));
    if (::send(ep->fd(), buf, n, MSG_NOSIGNAL) != static_cast<ssize_t>(n)) {
        std::lock_guard<std::mutex> lock(ep->win_lock);
        ep->windows.pop_back();
        return ret(-ECONNRESET);
    }
    return static_cast<off_t>(po);
}

WEFT_SCIF_API int scif_unregister(scif_epd_t epd, off_t offset, size_t len)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    if (offset < 0)
        return ret(-EINVAL);
    if (ep->state != State::connected)
        return ret(-ENOTCONN);
    // The peer closed: its side of every window went with it; the SCIF
    // driver answers ECONNRESET here as for every call on such an endpoint.
    // (Our windows are forgotten when the endpoint closes.)
    if (int rc = no_throw([&] { drain_control(*ep); return 0; }); rc < 0)
        return ret(rc);
    if (ep->peer_closed())
        return ret(-ECONNRESET);
    const uint64_t off = static_cast<uint64_t>(offset);
    bool any = false;
    for (const Window &w : ep->windows) {
        if (!overlaps(w, off, len))
            continue;
        if (w.offset < off || w.offset + w.length > off + len)
            return ret(-EINVAL);   // only part of a window: nothing is unregistered
        any = true;
    }
    if (!any)
        return ret(-ENXIO);
    {
        std::lock_guard<std::mutex> lock(ep->win_lock);
        std::erase_if(ep->windows, [&](const Window &w) { return overlaps(w, off, len); });
    }
    CtrlMsg m{};
    m.type = CtrlType::win_unreg;
    m.u.unreg = {off, len};
    std::byte buf[kCtrlMax];
    const size_t n = encode_ctrl(m, std::span<std::byte, kCtrlMax>(buf, kCtrlMax));
    ::send(ep->fd(), buf, n, MSG_NOSIGNAL);   // a gone peer has no windows to forget
    return 0;
}

WEFT_SCIF_API int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
                                int rma_flags)
{
    return ret(no_throw([&] { return rma_registered(epd, loffset, len, roffset, rma_flags, true); }));
}

WEFT_SCIF_API int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset,
                               int rma_flags)
{
    return ret(no_throw([&] { return rma_registered(epd, loffset, len, roffset, rma_flags, false); }));
}

WEFT_SCIF_API int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset,
                                 int rma_flags)
{
    return ret(no_throw([&] { return rma_virtual(epd, addr, len, roffset, rma_flags, true); }));
}

WEFT_SCIF_API int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset,
                                int rma_flags)
{
    return ret(no_throw([&] { return rma_virtual(epd, addr, len, roffset, rma_flags, false); }));
}

WEFT_SCIF_API int scif_fence_mark(scif_epd_t epd, int flags, int *mark)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    if ((flags != SCIF_FENCE_INIT_SELF && flags != SCIF_FENCE_INIT_PEER) || !mark)
        return ret(-EINVAL);
    if (int rc = connected(ep); rc < 0)
        return ret(rc);
    return ret(make_mark(*ep, flags, mark));
}

WEFT_SCIF_API int scif_fence_wait(scif_epd_t epd, int mark)
{
    Endpoint *ep = lookup(epd);
    if (int rc = connected(ep); rc < 0)
        return ret(rc);
    return ret(wait_mark(*ep, mark));
}

WEFT_SCIF_API int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff,
                                    uint64_t rval, int flags)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    const int init = flags & (SCIF_FENCE_INIT_SELF | SCIF_FENCE_INIT_PEER);
    const int sig = flags & (SCIF_SIGNAL_LOCAL | SCIF_SIGNAL_REMOTE);
    if ((flags & ~(init | sig)) || (init != SCIF_FENCE_INIT_SELF && init != SCIF_FENCE_INIT_PEER) ||
        sig == 0 || ((sig & SCIF_SIGNAL_LOCAL) && loff % 4) ||
        ((sig & SCIF_SIGNAL_REMOTE) && roff % 4))
        return ret(-EINVAL);
    // A negative (aligned) offset is "invalid for the registered address
    // space": ENXIO below, as for the RMA calls.
    if (int rc = connected(ep); rc < 0)
        return ret(rc);
    // Check the targets before waiting, so a bad offset fails at once.
    auto probe = [](std::byte *, uint64_t) { return 0; };
    if ((sig & SCIF_SIGNAL_LOCAL) &&
        (loff < 0 || resolve(ep->windows, loff, sizeof lval, 0, probe) != 0))
        return ret(-ENXIO);
    if ((sig & SCIF_SIGNAL_REMOTE) && (roff < 0 || check_remote(*ep, roff, sizeof rval, 0) != 0))
        return ret(-ENXIO);
    int mark;
    make_mark(*ep, init, &mark);
    if (int rc = wait_mark(*ep, mark); rc < 0)
        return ret(rc);
    if (sig & SCIF_SIGNAL_LOCAL) {
        size_t at = 0;
        resolve(ep->windows, loff, sizeof lval, 0, [&](std::byte *p, uint64_t n) {
            std::memcpy(p, reinterpret_cast<std::byte *>(&lval) + at, n);
            at += n;
            return 0;
        });
    }
    if (sig & SCIF_SIGNAL_REMOTE) {
        RmaScope scope(*ep);
        if (int rc = no_throw([&] {
                return move_remote(*ep, false, reinterpret_cast<std::byte *>(&rval), roff,
                                   sizeof rval);
            });
            rc < 0)
            return ret(rc);
    }
    return 0;
}

} // extern "C"
