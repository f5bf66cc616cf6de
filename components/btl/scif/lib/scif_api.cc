// SPDX-License-Identifier: BSD-3-Clause
// The C API of weft/scif.h: argument checks in the order and with the errno
// values the SCIF contract documents, then the work in scif_endpoint.cc /
// scif_rma.cc. No exception leaves these functions.
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

#include <weft/scif.h>

#include "scif_api_export.hpp"
#include "scif_endpoint.hpp"

using namespace weft::scif;

namespace {

// -errno or a result >= 0 -> the C convention.
int ret(int rc)
{
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return rc;
}

template <class F>
int guarded(F &&f) noexcept
{
    return no_throw(std::forward<F>(f));
}

// Is every page of [p, p + len) mapped? (msync answers ENOMEM for a hole.)
// The SCIF driver copies with copy_from/to_user and fails with EFAULT; we
// copy with memcpy, so look first: one system call, on send/recv only.
bool mapped(const void *p, size_t len)
{
    const auto a = reinterpret_cast<uintptr_t>(p);
    static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t start = a & ~(page - 1);
    return ::msync(reinterpret_cast<void *>(start), a + len - start, MS_ASYNC) == 0;
}

} // namespace

extern "C" {

WEFT_SCIF_API scif_epd_t scif_open(void)
{
    int rc = guarded([] { return open_endpoint(); });
    return rc < 0 ? (errno = -rc, SCIF_OPEN_FAILED) : rc;
}

WEFT_SCIF_API int scif_close(scif_epd_t epd)
{
    return ret(guarded([&] { return close_endpoint(epd); }));
}

WEFT_SCIF_API int scif_bind(scif_epd_t epd, uint16_t pn)
{
    Endpoint *ep = lookup(epd);
    return ret(ep ? guarded([&] { return bind_port(*ep, pn); }) : -EBADF);
}

WEFT_SCIF_API int scif_listen(scif_epd_t epd, int backlog)
{
    Endpoint *ep = lookup(epd);
    return ret(ep ? guarded([&] { return listen_on(*ep, backlog); }) : -EBADF);
}

WEFT_SCIF_API int scif_connect(scif_epd_t epd, struct scif_port_id *dst)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    const int fl = fcntl(epd, F_GETFL);
    const bool block = fl < 0 || !(fl & O_NONBLOCK);
    if (ep->state == State::connecting) {
        // The second call of an asynchronous connect: done, or still going.
        int rc = guarded([&] { return finish_connect(*ep, block); });
        if (rc == -EINPROGRESS)
            return ret(-EALREADY);
        ep->async_connect = false;
        ep->connect_error = 0;
        return ret(rc < 0 ? rc : ep->port);
    }
    if (ep->async_connect) {
        // scif_poll() saw the asynchronous connect end; this call reports
        // how, once: the port, or why it failed (the endpoint is bound
        // again and may connect anew).
        ep->async_connect = false;
        const int err = ep->connect_error;
        ep->connect_error = 0;
        if (ep->state == State::connected)
            return ep->port;
        if (err != 0)
            return ret(-err);
    }
    ep->connect_error = 0;
    if (ep->state == State::listening)
        return ret(-EOPNOTSUPP);
    if (ep->state == State::connected)
        return ret(-EISCONN);
    if (!dst || dst->port == 0)
        return ret(-EINVAL);
    if (dst->node != 0)
        return ret(-ENODEV);   // one node: this one
    int rc = guarded([&] { return connect_to(*ep, dst->port, block); });
    ep->async_connect = rc == -EINPROGRESS;
    ep->connect_error = 0;
    return ret(rc < 0 ? rc : ep->port);
}

WEFT_SCIF_API int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd,
                              int flags)
{
    Endpoint *ep = lookup(epd);
    if (!ep)
        return ret(-EBADF);
    if (ep->state != State::listening || (flags & ~SCIF_ACCEPT_SYNC) || !peer || !newepd)
        return ret(-EINVAL);
    return ret(guarded([&] {
        std::unique_ptr<Endpoint> conn;
        int rc = accept_one(*ep, flags & SCIF_ACCEPT_SYNC, &conn);
        if (rc < 0)
            return rc;
        const scif_port_id who = conn->peer;
        int fd = adopt(std::move(conn));
        if (fd < 0)
            return fd;
        *peer = who;
        *newepd = fd;
        return 0;
    }));
}

// Shared checks of send/recv: 0 or -errno.
static int check_io(Endpoint *ep, void *msg, int len, int flags, int block_flag)
{
    if (!ep)
        return -EBADF;
    if ((flags & ~block_flag) || len < 0)
        return -EINVAL;
    if (ep->state != State::connected)
        return -ENOTCONN;
    if (len > 0 && (!msg || !mapped(msg, static_cast<size_t>(len))))
        return -EFAULT;
    return 0;
}

WEFT_SCIF_API int scif_send(scif_epd_t epd, void *msg, int len, int flags)
{
    Endpoint *ep = lookup(epd);
    if (int rc = check_io(ep, msg, len, flags, SCIF_SEND_BLOCK); rc < 0)
        return ret(rc);
    if (len == 0)
        return 0;
    auto bytes = std::span(static_cast<const std::byte *>(msg), static_cast<size_t>(len));
    return ret(guarded([&] { return stream_send(*ep, bytes, flags & SCIF_SEND_BLOCK); }));
}

WEFT_SCIF_API int scif_recv(scif_epd_t epd, void *msg, int len, int flags)
{
    Endpoint *ep = lookup(epd);
    if (int rc = check_io(ep, msg, len, flags, SCIF_RECV_BLOCK); rc < 0)
        return ret(rc);
    if (len == 0)
        return 0;
    auto bytes = std::span(static_cast<std::byte *>(msg), static_cast<size_t>(len));
    return ret(guarded([&] { return stream_recv(*ep, bytes, flags & SCIF_RECV_BLOCK); }));
}

WEFT_SCIF_API int scif_get_node_ids(uint16_t *nodes, int len, uint16_t *self)
{
    if (!self || (len > 0 && !nodes) || len < 0)
        return ret(-EFAULT);
    if (len > 0)
        nodes[0] = 0;
    *self = 0;
    return 1;
}

} // extern "C"

namespace {

// What one endpoint reports now (no waiting).
short poll_events(Endpoint &ep, short want)
{
    short got = 0;
    switch (ep.state) {
    case State::listening: {
        // A new connection, or one accept took off the queue whose connect
        // request (or hang-up) has come since: accept has work either way.
        pollfd p{ep.fd(), POLLIN, 0};
        if (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
            got |= POLLIN;
        for (size_t i = 0; i < ep.half_open.size() && !(got & POLLIN); ++i) {
            pollfd h{ep.half_open[i].ep->fd(), POLLIN, 0};
            if (::poll(&h, 1, 0) > 0)
                got |= POLLIN;
        }
        break;
    }
    case State::connecting:
        finish_connect(ep, false);
        if (ep.state == State::connected)
            got |= POLLOUT;
        else if (ep.state != State::connecting)
            got |= POLLERR;
        break;
    case State::connected: {
        drain_control(ep);
        Chunk c;
        if (ep.rx.peek(&c))
            got |= POLLIN;
        if (ep.peer_closed())
            got |= POLLHUP;
        else if (ep.tx.has_room(1))
            got |= POLLOUT;
        break;
    }
    default:
        break;
    }
    return static_cast<short>(got & (want | POLLHUP | POLLERR));
}

} // namespace

extern "C" WEFT_SCIF_API int scif_poll(struct scif_pollepd *epds, unsigned int nepds,
                                       long timeout)
{
    if (!epds && nepds > 0)
        return ret(-EFAULT);
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout < 0 ? 0 : timeout);
    return ret(guarded([&] {
        for (;;) {
            int ready = 0;
            for (unsigned i = 0; i < nepds; ++i) {
                Endpoint *ep = lookup(epds[i].epd);
                epds[i].revents = ep ? poll_events(*ep, epds[i].events) : POLLNVAL;
                ready += epds[i].revents ? 1 : 0;
            }
            if (ready > 0 || timeout == 0)
                return ready;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (timeout > 0 && left.count() <= 0)
                return 0;
            // Announce the sleep on every ring, re-check, then sleep on the
            // sockets (bounded; see kMaxSleepMs).
            std::vector<pollfd> pfds;
            bool now_ready = false;
            for (unsigned i = 0; i < nepds; ++i) {
                Endpoint *ep = lookup(epds[i].epd);
                pfds.push_back({epds[i].epd, POLLIN, 0});
                if (ep && ep->state == State::connected) {
                    if (epds[i].events & POLLIN)
                        ep->rx.set_waiting(true);
                    if (epds[i].events & POLLOUT)
                        ep->tx.set_waiting(true);
                    if (poll_events(*ep, epds[i].events))
                        now_ready = true;
                }
            }
            int t = kMaxSleepMs;
            if (timeout > 0 && left.count() < t)
                t = static_cast<int>(left.count());
            if (!now_ready)
                ::poll(pfds.data(), pfds.size(), t);
            for (unsigned i = 0; i < nepds; ++i) {
                Endpoint *ep = lookup(epds[i].epd);
                if (ep && ep->state == State::connected) {
                    ep->rx.set_waiting(false);
                    ep->tx.set_waiting(false);
                }
            }
        }
    }));
}
