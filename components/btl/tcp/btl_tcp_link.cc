// SPDX-License-Identifier: BSD-3-Clause
#include "btl_tcp_link.hpp"

#include <weft/btl_base.hpp>

#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace weft::btl_tcp {

namespace {

// More pieces than this go through one contiguous copy instead of writev.
constexpr int kMaxDirectPieces = 63;
// recv() calls per receive(): one busy link must not starve the others.
constexpr int kMaxReadsPerCall = 16;

// The socket calls as bare system calls. glibc makes send, recv, sendmsg
// and recvmsg cancellation points: in a process with more than one thread
// (every rank: the PMIx client has one) each call enables and then
// disables asynchronous cancellation around the system call, 36 of the
// 1305 instructions (callgrind) of an 8-byte busy-polled round trip per
// recv or send, and the busy-polling receiver calls recv on every pass.
// weft cancels no thread, and an application's deferred cancellation
// still takes effect at its next cancellation point. Same results and
// errno as the library calls.
ssize_t sock_send(int fd, const void *buf, size_t len, int flags)
{
    return ::syscall(SYS_sendto, fd, buf, len, flags, nullptr, 0);
}
ssize_t sock_recv(int fd, void *buf, size_t len, int flags)
{
    return ::syscall(SYS_recvfrom, fd, buf, len, flags, nullptr, nullptr);
}
ssize_t sock_sendmsg(int fd, const msghdr *msg, int flags) { return ::syscall(SYS_sendmsg, fd, msg, flags); }
ssize_t sock_recvmsg(int fd, msghdr *msg, int flags) { return ::syscall(SYS_recvmsg, fd, msg, flags); }

// sendmsg without SIGPIPE: a dead peer is an error code, not a signal.
ssize_t write_vec(int fd, struct iovec *iov, int n)
{
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t r;
    do {
        r = sock_sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (r < 0 && errno == EINTR);
    return r;
}

} // namespace

int Link::send_flat(const std::byte *flat, size_t total)
{
    ssize_t r;
    do {
        r = sock_send(fd_.get(), flat, total, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (r < 0 && errno == EINTR);
    if (static_cast<size_t>(r) == total)
        return 0;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        return errno;
    const size_t written = r > 0 ? static_cast<size_t>(r) : 0;
    Pending p;
    p.bytes.assign(flat + written, flat + total);
    queue_.push_back(std::move(p));
    return 0;
}

int Link::send(const FrameHeader &h, const struct iovec *iov, int iovcnt)
{
    const size_t total = kFrameHeaderBytes + h.len;
    if (queue_.empty() && total <= kContiguousMax) {
        std::byte flat[kContiguousMax];
        encode_frame(h, flat);
        size_t at = kFrameHeaderBytes;
        for (int i = 0; i < iovcnt; ++i) {
            if (iov[i].iov_len > 0)
                std::memcpy(flat + at, iov[i].iov_base, iov[i].iov_len);
            at += iov[i].iov_len;
        }
        return send_flat(flat, total);
    }
    std::byte hdr[kFrameHeaderBytes];
    encode_frame(h, hdr);
    size_t written = 0;
    if (queue_.empty() && iovcnt <= kMaxDirectPieces) {
        struct iovec vec[kMaxDirectPieces + 1];
        vec[0] = {hdr, kFrameHeaderBytes};
        for (int i = 0; i < iovcnt; ++i)
            vec[i + 1] = iov[i];
        ssize_t r = write_vec(fd_.get(), vec, iovcnt + 1);
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return errno;
        written = r > 0 ? static_cast<size_t>(r) : 0;
        if (written == total)
            return 0;
    }
    queue_rest(hdr, iov, iovcnt, total, written);
    return 0;
}

void Link::queue_rest(const std::byte *hdr, const struct iovec *iov, int iovcnt, size_t total, size_t written)
{
    // Copy semantics: keep what the kernel has not taken yet.
    Pending p;
    p.bytes.resize(total - written);
    size_t at = 0, pos = 0;   // pos: offset in the whole frame
    auto take = [&](const void *src, size_t len) {
        if (pos + len > written) {
            size_t skip = written > pos ? written - pos : 0;
            std::memcpy(p.bytes.data() + at, static_cast<const std::byte *>(src) + skip, len - skip);
            at += len - skip;
        }
        pos += len;
    };
    take(hdr, kFrameHeaderBytes);
    for (int i = 0; i < iovcnt; ++i)
        if (iov[i].iov_len > 0)
            take(iov[i].iov_base, iov[i].iov_len);
    queue_.push_back(std::move(p));
}

int Link::flush(bool *drained)
{
    while (!queue_.empty()) {
        // Several queued frames per system call.
        struct iovec vec[kMaxDirectPieces + 1];
        int n = 0;
        for (auto it = queue_.begin(); it != queue_.end() && n <= kMaxDirectPieces; ++it, ++n)
            vec[n] = {it->bytes.data() + it->off, it->bytes.size() - it->off};
        ssize_t r = write_vec(fd_.get(), vec, n);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return errno;
        }
        auto left = static_cast<size_t>(r);
        while (left > 0) {
            Pending &p = queue_.front();
            size_t rest = p.bytes.size() - p.off;
            if (left >= rest) {
                left -= rest;
                queue_.pop_front();
            } else {
                p.off += left;
                left = 0;
            }
        }
    }
    *drained = queue_.empty();
    return 0;
}

void Link::compact()
{
    if (rstart_ == rend_) {   // all delivered (a ping-pong's every frame): nothing to move
        rstart_ = rend_ = 0;
        return;
    }
    if (rstart_ > 0) {
        std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
        rend_ -= rstart_;
        rstart_ = 0;
    }
}

bool Link::start_placement(LinkSink &sink, const FrameHeader &h, size_t have)
{
    const std::byte *payload = rbuf_.data() + rstart_ + kFrameHeaderBytes;
    weft_btl_placement_t p{};
    p.size = sizeof p;
    if (!sink.place(h.am_id, std::span(payload, have), h.len, &p))
        return false;
    if (!weft::btl::placement_fits(p, have, h.len)) {
        // The runtime broke the placement rules: take the message back.
        sink.placed(h.am_id, p.token, WEFT_ERR_BAD_VALUE);
        return false;
    }
    place_ = p;
    place_am_ = h.am_id;
    place_left_ = h.len - p.skip;
    in_place_ = true;
    // Only after one larger than rbuf_: smaller ones come several per
    // bulk read, cheaper than two system calls each. rbuf_ is empty now
    // (everything in it was this message's), so the limit is above rend_.
    if (kFrameHeaderBytes + h.len > kReadBufferBytes)
        read_limit_ = kPeekBytes;
    rstart_ += kFrameHeaderBytes + have;
    // What the buffer holds beyond the runtime's header is copied in;
    // the rest is received straight into place_.iov.
    size_t at = p.skip;
    int i = 0;
    while (at < have) {
        const size_t n = std::min(have - at, place_.iov[i].iov_len);
        std::memcpy(place_.iov[i].iov_base, payload + at, n);
        place_.iov[i].iov_base = static_cast<std::byte *>(place_.iov[i].iov_base) + n;
        place_.iov[i].iov_len -= n;
        place_left_ -= n;
        at += n;
        if (place_.iov[i].iov_len == 0)
            ++i;
    }
    return true;
}

std::optional<Unlanded> Link::abandon_placement()
{
    if (!in_place_)
        return std::nullopt;
    in_place_ = false;
    return Unlanded{place_am_, place_.token};
}

int Link::deliver_buffered(LinkSink &sink, std::string *error)
{
    // Whole message frames, every frame of a busy link, in a loop kept
    // small; anything else at the front goes to frame_at_front().
    while (!in_place_ && rend_ - rstart_ >= kFrameHeaderBytes) {
        FrameHeader h;
        const std::byte *at = rbuf_.data() + rstart_;
        if (!frame_valid(std::span(at, kFrameHeaderBytes), max_payload_, &h) || h.kind != kFrameMessage ||
            rend_ - rstart_ - kFrameHeaderBytes < h.len)
            return frame_at_front(sink, error);
        rstart_ += kFrameHeaderBytes + h.len;
        sink.message(h.am_id, std::span(at + kFrameHeaderBytes, h.len));
        if (sink.stop())
            return kStopped;
    }
    compact();
    return 0;
}

int Link::frame_at_front(LinkSink &sink, std::string *error)
{
    FrameHeader h;
    const std::span header(rbuf_.data() + rstart_, kFrameHeaderBytes);
    if (!frame_valid(header, max_payload_, &h)) {
        *error = decode_frame(header, max_payload_, &h);
        return kBadFrame;
    }
    if (h.kind == kFrameClose) {
        rstart_ += kFrameHeaderBytes;
        return kClosed;
    }
    // A message not all here yet.
    const size_t have = rend_ - rstart_ - kFrameHeaderBytes;
    if (h.len >= kPlaceMin) {
        if (have < WEFT_BTL_PLACE_HEAD || start_placement(sink, h, have)) {
            // Wait for the runtime's minimum head, or receive into its place.
            compact();
            return 0;
        }
    }
    if (kFrameHeaderBytes + h.len > kReadBufferBytes) {
        // Large: the payload goes straight into a buffer of its own size.
        large_hdr_ = h;
        large_ = std::make_unique_for_overwrite<std::byte[]>(h.len);
        std::memcpy(large_.get(), rbuf_.data() + rstart_ + kFrameHeaderBytes, have);
        large_have_ = have;
        in_large_ = true;
        rstart_ = rend_ = 0;
        return 0;
    }
    compact();   // fits the buffer once the rest arrives
    return 0;
}

int Link::receive(LinkSink &sink, std::string *error)
{
    for (int reads = 0; reads < kMaxReadsPerCall; ++reads) {
        if (!in_large_)
            if (int rc = deliver_buffered(sink, error); rc != 0)
                return rc;
        ssize_t r;
        size_t room;
        if (in_place_) {
            // Straight into the runtime's buffers: exactly the message's bytes.
            int first = 0;
            while (place_.iov[first].iov_len == 0)
                ++first;
            msghdr msg{};
            msg.msg_iov = place_.iov + first;
            msg.msg_iovlen = static_cast<size_t>(place_.iovcnt - first);
            room = place_left_;
            r = sock_recvmsg(fd_.get(), &msg, MSG_DONTWAIT);
        } else if (in_large_) {
            room = large_hdr_.len - large_have_;
            r = sock_recv(fd_.get(), large_.get() + large_have_, room, MSG_DONTWAIT);
        } else {
            room = read_limit_ - rend_;
            r = room == 0 ? 0 : sock_recv(fd_.get(), rbuf_.data() + rend_, room, MSG_DONTWAIT);
        }
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return errno;
        }
        if (r == 0 && room > 0)
            return kEof;
        auto got = static_cast<size_t>(r);
        if (in_place_) {
            place_left_ -= got;
            for (int i = 0; got > 0; ++i) {
                const size_t n = std::min(got, place_.iov[i].iov_len);
                place_.iov[i].iov_base = static_cast<std::byte *>(place_.iov[i].iov_base) + n;
                place_.iov[i].iov_len -= n;
                got -= n;
            }
            if (place_left_ == 0) {
                in_place_ = false;
                sink.placed(place_am_, place_.token, WEFT_SUCCESS);
                if (sink.stop())
                    return kStopped;
                continue;   // keeps read_limit_ (start_placement's) for the next read
            }
        } else if (in_large_) {
            large_have_ += got;
            if (large_have_ == large_hdr_.len) {
                in_large_ = false;
                sink.message(large_hdr_.am_id, std::span(large_.get(), large_hdr_.len));
                // Large buffers are not kept: an idle endpoint holds 64 KiB, not its peak.
                large_.reset();
                if (sink.stop())
                    return kStopped;
            }
        } else {
            rend_ += got;
        }
        // A short read emptied the socket: another recv would only say
        // EAGAIN, one system call late on a ping-pong's critical path.
        if (static_cast<size_t>(r) < room) {
            if (!in_large_ && !in_place_)
                return deliver_buffered(sink, error);
            return 0;
        }
        // The socket had at least what was asked: bulk reads again, unless
        // what came is the head of another message larger than rbuf_
        // (start_placement). Not on a short read: it took what there was,
        // whatever the limit, and a ping-pong's reads are all short.
        read_limit_ = kReadBufferBytes;
    }
    return 0;
}

} // namespace weft::btl_tcp
