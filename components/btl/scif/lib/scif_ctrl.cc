// SPDX-License-Identifier: BSD-3-Clause
#include "scif_ctrl.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace weft::scif {

namespace {

size_t body_size(CtrlType t)
{
    switch (t) {
    case CtrlType::connect_req: return sizeof(ConnectReq);
    case CtrlType::connect_ack: return sizeof(ConnectAck);
    case CtrlType::wake: return 0;
    case CtrlType::win_reg: return sizeof(WinReg);
    case CtrlType::win_unreg: return sizeof(WinUnreg);
    case CtrlType::rma_req: return sizeof(RmaReq);
    case CtrlType::rma_reply: return sizeof(RmaReply);
    }
    return SIZE_MAX;
}

bool page_aligned(uint64_t v) { return (v & 4095u) == 0; }

} // namespace

size_t encode_ctrl(const CtrlMsg &msg, std::span<std::byte, kCtrlMax> buf)
{
    CtrlHeader h{kCtrlMagic, kCtrlVersion, static_cast<uint16_t>(msg.type)};
    std::memcpy(buf.data(), &h, sizeof h);
    const size_t body = body_size(msg.type);
    std::memcpy(buf.data() + sizeof h, &msg.u, body);
    return sizeof h + body;
}

int parse_ctrl(std::span<const std::byte> bytes, CtrlMsg *out)
{
    CtrlHeader h;
    if (bytes.size() < sizeof h)
        return EPROTO;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (h.magic != kCtrlMagic || h.version != kCtrlVersion)
        return EPROTO;
    const auto type = static_cast<CtrlType>(h.type);
    const size_t body = body_size(type);
    if (body == SIZE_MAX || bytes.size() != sizeof h + body)
        return EPROTO;
    out->type = type;
    std::memset(&out->u, 0, sizeof out->u);
    std::memcpy(&out->u, bytes.data() + sizeof h, body);
    switch (type) {
    case CtrlType::connect_req: {
        const uint32_t c = out->u.req.ring_cells;
        if (c < kMinRingCells || c > kMaxRingCells || (c & (c - 1)) != 0 ||
            out->u.req.src_port == 0 || (out->u.req.flags & ~kCtrlKnownFlags) != 0)
            return EINVAL;
        break;
    }
    case CtrlType::connect_ack:
        if (out->u.ack.port == 0 || (out->u.ack.flags & ~kCtrlKnownFlags) != 0)
            return EINVAL;
        break;
    case CtrlType::wake:
        break;
    case CtrlType::win_reg: {
        const WinReg &r = out->u.reg;
        if (r.length == 0 || !page_aligned(r.offset) || !page_aligned(r.length) ||
            !page_aligned(r.addr) || r.offset > (uint64_t{1} << 62) ||
            r.length > (uint64_t{1} << 62) || (r.prot & ~3u) != 0 || r.prot == 0 ||
            r.addr + r.length < r.addr)
            return EINVAL;
        break;
    }
    case CtrlType::win_unreg: {
        const WinUnreg &r = out->u.unreg;
        if (r.length == 0 || r.offset > (uint64_t{1} << 62) || r.length > (uint64_t{1} << 62))
            return EINVAL;
        break;
    }
    case CtrlType::rma_req: {
        const RmaReq &r = out->u.rma;
        const bool op_ok = r.op == static_cast<uint8_t>(RmaOp::read) ||
                           r.op == static_cast<uint8_t>(RmaOp::write);
        if (!op_ok || r.len == 0 || r.len > kBounceSlotBytes || r.slot >= kBounceSlots ||
            r.offset > (uint64_t{1} << 62) || r.pad != 0)
            return EINVAL;
        break;
    }
    case CtrlType::rma_reply:
        if (out->u.reply.status < 0 || out->u.reply.status > 4095)
            return EINVAL;
        break;
    }
    return 0;
}

int send_ctrl(int fd, const CtrlMsg &msg, std::span<const int> pass_fds)
{
    std::byte buf[kCtrlMax];
    const size_t len = encode_ctrl(msg, std::span<std::byte, kCtrlMax>(buf, kCtrlMax));
    iovec iov{buf, len};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
    if (!pass_fds.empty() && pass_fds.size() <= kMaxPassedFds) {
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * pass_fds.size());
        cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * pass_fds.size());
        std::memcpy(CMSG_DATA(c), pass_fds.data(), sizeof(int) * pass_fds.size());
    }
    for (;;) {
        ssize_t n = ::sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) {
            // Control messages are rare and tiny; a full socket means the
            // peer stopped reading. Wait a little for room, bounded.
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, 1000) > 0 && !(p.revents & (POLLHUP | POLLERR)))
                continue;
            return -EAGAIN;
        }
        return -errno;
    }
}

} // namespace weft::scif
