// SPDX-License-Identifier: BSD-3-Clause
#include "scif_bounce.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include <weft/scif.h>

#include "scif_endpoint.hpp"

namespace weft::scif {

namespace {

int send_msg(int fd, const CtrlMsg &m)
{
    std::byte buf[kCtrlMax];
    const size_t n = encode_ctrl(m, std::span<std::byte, kCtrlMax>(buf, kCtrlMax));
    for (;;) {
        ssize_t r = ::send(fd, buf, n, MSG_NOSIGNAL);
        if (r == static_cast<ssize_t>(n))
            return 0;
        if (r < 0 && errno == EINTR)
            continue;
        return -ECONNRESET;
    }
}

// The next message of type want on fd, blocking: 0, or -ECONNRESET when the
// other side is gone (EOF, error) or speaks nonsense.
int recv_msg(int fd, CtrlType want, CtrlMsg *out)
{
    std::byte buf[kCtrlMax];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -ECONNRESET;
        if (parse_ctrl(std::span<const std::byte>(buf, static_cast<size_t>(n)), out) != 0 ||
            out->type != want)
            return -ECONNRESET;   // a peer that breaks the protocol is treated as gone
        return 0;
    }
}

} // namespace

int make_bounce(BounceRequester *out, UniqueFd *peer_sock, UniqueFd *peer_memfd)
{
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return errno == EMFILE || errno == ENFILE ? -ENOMEM : -errno;
    UniqueFd mine(sv[0]), theirs(sv[1]);
    UniqueFd mfd;
    if (int rc = make_sealed_memfd("weft-scif-bounce", kBounceBytes, &mfd); rc != 0)
        return rc;
    Mapping slots = Mapping::shared(mfd.get(), kBounceBytes);
    if (!slots)
        return -ENOMEM;
    out->sock = std::move(mine);
    out->slots = std::move(slots);
    *peer_sock = std::move(theirs);
    *peer_memfd = std::move(mfd);
    return 0;
}

int bounce_move(BounceRequester &b, RmaOp op, std::byte *local, uint64_t roff, uint64_t len)
{
    struct Inflight {
        uint64_t seq;
        uint16_t slot;
        uint64_t at;    // offset into local
        uint32_t len;
    };
    std::deque<Inflight> inflight;
    uint64_t next = 0;
    uint16_t next_slot = 0;
    int status = 0;
    while ((next < len && status == 0) || !inflight.empty()) {
        // Keep every slot busy: the server copies one while we fill another.
        while (next < len && status == 0 && inflight.size() < kBounceSlots) {
            const auto n = static_cast<uint32_t>(std::min<uint64_t>(kBounceSlotBytes, len - next));
            std::byte *slot = b.slots.data() + size_t{next_slot} * kBounceSlotBytes;
            if (op != RmaOp::read)
                std::memcpy(slot, local + next, n);
            CtrlMsg m{};
            m.type = CtrlType::rma_req;
            m.u.rma = {b.next_seq, roff + next, n, next_slot, static_cast<uint8_t>(op), 0};
            if (int rc = send_msg(b.sock.get(), m); rc != 0)
                return rc;
            inflight.push_back({b.next_seq++, next_slot, next, n});
            next_slot = static_cast<uint16_t>((next_slot + 1) % kBounceSlots);
            next += n;
        }
        CtrlMsg r;
        if (int rc = recv_msg(b.sock.get(), CtrlType::rma_reply, &r); rc != 0)
            return rc;
        const Inflight f = inflight.front();
        inflight.pop_front();
        if (r.u.reply.seq != f.seq)
            return -ECONNRESET;   // replies come in order; anything else is a broken peer
        if (r.u.reply.status != 0) {
            status = status ? status : -r.u.reply.status;
            continue;   // drain what is in flight, then report
        }
        if (op == RmaOp::read && status == 0)
            std::memcpy(local + f.at, b.slots.data() + size_t{f.slot} * kBounceSlotBytes, f.len);
    }
    return status;
}

int BounceServer::start(Endpoint &ep, UniqueFd sock, UniqueFd memfd)
{
    if (!sock || !memfd)
        return -EPROTO;
    // The requester's memfd, checked like a ring segment (sealed, exact size).
    if (int rc = map_peer_memfd(memfd.get(), kBounceBytes, &slots_); rc != 0)
        return rc;
    sock_ = std::move(sock);
    self_mem_ = UniqueFd(::open("/proc/self/mem", O_RDWR | O_CLOEXEC));
    try {
        thread_ = std::thread([this, e = &ep] { run(e); });
    } catch (...) {
        return -ENOMEM;
    }
    return 0;
}

void BounceServer::stop()
{
    if (thread_.joinable()) {
        ::shutdown(sock_.get(), SHUT_RDWR);   // its recv() returns 0
        thread_.join();
    }
    sock_.reset();
    slots_.reset();
    self_mem_.reset();
}

int BounceServer::copy_window(bool to_slot, std::byte *slot, std::byte *window, uint64_t n) const
{
    if (!self_mem_) {
        // No /proc: as the owner's own threads would, at its risk.
        if (to_slot)
            std::memcpy(slot, window, n);
        else
            std::memcpy(window, slot, n);
        return 0;
    }
    // Registered pages are not pinned: the owner may unmap a window it
    // registered. memcpy would then kill the whole process with SIGSEGV in
    // this thread; the kernel's copy through /proc/self/mem fails with EIO,
    // and the peer's RMA gets EFAULT (as process_vm_readv gives it).
    uint64_t done = 0;
    while (done < n) {
        const auto addr = static_cast<off_t>(reinterpret_cast<uintptr_t>(window + done));
        const ssize_t k = to_slot ? ::pread(self_mem_.get(), slot + done, n - done, addr)
                                  : ::pwrite(self_mem_.get(), slot + done, n - done, addr);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -EFAULT;
        done += static_cast<uint64_t>(k);
    }
    return 0;
}

void BounceServer::run(Endpoint *ep)
{
    for (;;) {
        CtrlMsg m;
        if (recv_msg(sock_.get(), CtrlType::rma_req, &m) != 0)
            return;   // the requester closed or died, or we are stopping
        const RmaReq &q = m.u.rma;
        const auto op = static_cast<RmaOp>(q.op);
        const int prot = op == RmaOp::read ? SCIF_PROT_READ : SCIF_PROT_WRITE;
        std::byte *slot = slots_.data() + size_t{q.slot} * kBounceSlotBytes;
        int rc;
        {
            std::lock_guard<std::mutex> lock(ep->win_lock);
            uint64_t at = 0;
            // Checked whole first, so a bad range changes nothing.
            rc = resolve_windows(ep->windows, q.offset, q.len, prot,
                                 [](std::byte *, uint64_t) { return 0; });
            if (rc == 0)
                rc = resolve_windows(ep->windows, q.offset, q.len, prot, [&](std::byte *p, uint64_t n) {
                    const int copied = copy_window(op == RmaOp::read, slot + at, p, n);
                    at += n;
                    return copied;
                });
        }
        CtrlMsg r{};
        r.type = CtrlType::rma_reply;
        r.u.reply = {q.seq, rc < 0 ? -rc : 0, 0};
        if (send_msg(sock_.get(), r) != 0)
            return;
    }
}

} // namespace weft::scif
