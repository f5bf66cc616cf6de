// SPDX-License-Identifier: BSD-3-Clause
// Raw scif wire for tests that play a hostile local process: dials a scif
// port's abstract socket and sends a connect request with a ring segment
// made and sealed as the caller asks, without the library's own checks.
// Used by tests/runtime/scif_stranger.cc and tests/unit/scif_api_test.cc.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "scif_ctrl.hpp"
#include "scif_ring.hpp"

namespace weft::test::scif_raw {

using namespace weft::scif;

// A connected socket to port of user uid, or -1.
inline int dial(unsigned port, unsigned uid = static_cast<unsigned>(geteuid()))
{
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    const int n = std::snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "weft-scif.%u.%u", uid, port);
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&sa), len) != 0) {
        if (fd >= 0)
            ::close(fd);
        return -1;
    }
    return fd;
}

// Bytes of the segment of two rings of `cells`, the two sides' counters and
// the duplex line.
inline size_t segment_bytes(uint32_t cells)
{
    const size_t total = 2 * ring_bytes(cells) + 2 * kCell + sizeof(DuplexShared);
    return (total + 4095) & ~size_t{4095};
}

enum class Seal { all, grow_only, none };

// A connection with its segment, as btl/scif's connector makes it.
struct Conn {
    int fd = -1;
    int memfd = -1;
    std::byte *seg = nullptr;
    size_t seg_len = 0;
    uint32_t cells = 0;
    Conn() = default;
    Conn(const Conn &) = delete;
    Conn &operator=(const Conn &) = delete;
    ~Conn()
    {
        if (seg)
            ::munmap(seg, seg_len);
        if (memfd >= 0)
            ::close(memfd);
        if (fd >= 0)
            ::close(fd);
    }
    RingShared *ring(int which) { return reinterpret_cast<RingShared *>(seg + which * ring_bytes(cells)); }
};

// Dials port and sends a connect request with a segment of `cells` cells
// (and segment_bytes(cells) + extra bytes), sealed as asked, its rings
// marked with magic. 0 or -1.
inline int send_request(Conn &c, unsigned port, uint32_t cells, Seal seal, size_t extra = 0,
                        uint32_t magic = kRingMagic)
{
    c.fd = dial(port);
    if (c.fd < 0)
        return -1;
    c.cells = cells;
    c.seg_len = segment_bytes(cells);
    c.memfd = ::memfd_create("stranger", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (c.memfd < 0 || ::ftruncate(c.memfd, static_cast<off_t>(c.seg_len + extra)) != 0)
        return -1;
    if (seal == Seal::all)
        ::fcntl(c.memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    else if (seal == Seal::grow_only)
        ::fcntl(c.memfd, F_ADD_SEALS, F_SEAL_GROW);
    void *p = ::mmap(nullptr, c.seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, c.memfd, 0);
    if (p == MAP_FAILED)
        return -1;
    c.seg = static_cast<std::byte *>(p);
    ring_init(c.ring(0), cells);
    ring_init(c.ring(1), cells);
    c.ring(0)->magic = c.ring(1)->magic = magic;
    CtrlMsg req{};
    req.type = CtrlType::connect_req;
    req.u.req.src_port = 4242;
    req.u.req.ring_cells = cells;
    return send_ctrl(c.fd, req, std::span<const int>(&c.memfd, 1)) == 0 ? 0 : -1;
}

// The acceptor's answer to a connect request so far, never waiting: 1 an
// ack, 0 a hang-up (or anything else), -1 nothing yet.
inline int ack_answer(int fd)
{
    std::byte buf[kCtrlMax];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    CtrlMsg m;
    return n > 0 && parse_ctrl(std::span(buf, static_cast<size_t>(n)), &m) == 0 &&
                   m.type == CtrlType::connect_ack
               ? 1
               : 0;
}

// btl/scif's ring message types and hello answers (btl_scif_module.hpp).
inline constexpr uint8_t kHello = 5, kHelloReply = 6;
inline constexpr uint8_t kAccept = 0;

// Writes a btl/scif hello (rank, secret, job id) into an acked connection's
// ring and wakes the acceptor. false if the ring has no room.
inline bool write_hello(Conn &c, uint32_t rank, const uint8_t (&secret)[16], std::string_view job)
{
    RingProducer tx(c.ring(0));
    std::vector<std::byte> body(4 + 16 + job.size());
    std::memcpy(body.data(), &rank, 4);
    std::memcpy(body.data() + 4, secret, 16);
    std::memcpy(body.data() + 20, job.data(), job.size());
    if (!tx.has_room(body.size()))
        return false;
    std::memcpy(tx.reserve(body.size()).data(), body.data(), body.size());
    tx.publish(static_cast<ChunkType>(kHello), 0);
    CtrlMsg wake{};
    wake.type = CtrlType::wake;
    send_ctrl(c.fd, wake);
    return true;
}

// The acceptor's answer to the hello so far, never waiting: the reply's tag
// (kAccept, 1 duplicate, 2 refuse), -1 a hang-up without a reply, -2
// nothing yet.
inline int hello_answer(Conn &c)
{
    RingConsumer rx(c.ring(1));
    Chunk ch;
    if (rx.peek(&ch))
        return static_cast<uint8_t>(ch.type) == kHelloReply ? ch.tag : -1;
    std::byte buf[kCtrlMax];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return rx.peek(&ch) && static_cast<uint8_t>(ch.type) == kHelloReply ? ch.tag : -1;
    return -2;
}

// Has the other side closed fd (a hang-up is readable now)? Never waits.
inline bool hung_up(int fd)
{
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0)
        return false;
    std::byte buf[kCtrlMax];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT | MSG_PEEK);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

} // namespace weft::test::scif_raw
