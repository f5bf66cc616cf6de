#include "btl_tcp_link.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace weft::btl_tcp {

namespace {

// More pieces than this go through one contiguous copy instead of writev.
constexpr int kMaxDirectPieces = 63;
// recv() calls per receive(): one busy link must not starve the others.
constexpr int kMaxReadsPerCall = 16;

// sendmsg without SIGPIPE: a dead peer is an error code, not a signal.
ssize_t write_vec(int fd, struct iovec *iov, int n)
{
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t r;
    do {
        r = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (r < 0 && errno == EINTR);
    return r;
}

} // namespace

int Link::send(const FrameHeader &h, const struct iovec *iov, int iovcnt)
{
    std::byte hdr[kFrameHeaderBytes];
    encode_frame(h, hdr);
    size_t total = kFrameHeaderBytes + h.len;
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
    return 0;
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

int Link::deliver_buffered(const LinkSink &sink, std::string *error, bool *progressed)
{
    while (rend_ - rstart_ >= kFrameHeaderBytes) {
        FrameHeader h;
        std::string bad = decode_frame(std::span(rbuf_.data() + rstart_, kFrameHeaderBytes),
                                       max_payload_, &h);
        if (!bad.empty()) {
            *error = bad;
            return kBadFrame;
        }
        if (h.kind == kFrameClose) {
            rstart_ += kFrameHeaderBytes;
            sink.closed();
            return kClosed;
        }
        if (h.kind != kFrameMessage) {
            *error = "striped frame kind " + std::to_string(h.kind) + " on a single-link endpoint";
            return kBadFrame;
        }
        const size_t have = rend_ - rstart_ - kFrameHeaderBytes;
        if (have >= h.len) {
            std::span<const std::byte> data(rbuf_.data() + rstart_ + kFrameHeaderBytes, h.len);
            rstart_ += kFrameHeaderBytes + h.len;
            *progressed = true;
            sink.message(h.am_id, data);
            if (sink.stop())
                return kStopped;
            continue;
        }
        if (kFrameHeaderBytes + h.len <= rbuf_.size()) {
            // Fits the buffer once the rest arrives: move it to the front.
            if (rstart_ > 0) {
                std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
                rend_ -= rstart_;
                rstart_ = 0;
            }
            return 0;
        }
        // Large: the payload goes straight into a buffer of its own size.
        large_hdr_ = h;
        large_.resize(h.len);
        std::memcpy(large_.data(), rbuf_.data() + rstart_ + kFrameHeaderBytes, have);
        large_have_ = have;
        in_large_ = true;
        rstart_ = rend_ = 0;
        return 0;
    }
    if (rstart_ > 0) {
        std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
        rend_ -= rstart_;
        rstart_ = 0;
    }
    return 0;
}

int Link::receive(const LinkSink &sink, std::string *error)
{
    bool progressed = false;
    for (int reads = 0; reads < kMaxReadsPerCall; ++reads) {
        if (int rc = deliver_buffered(sink, error, &progressed); rc != 0)
            return rc;
        std::byte *dst;
        size_t room;
        if (in_large_) {
            dst = large_.data() + large_have_;
            room = large_.size() - large_have_;
        } else {
            dst = rbuf_.data() + rend_;
            room = rbuf_.size() - rend_;
        }
        ssize_t r = room == 0 ? 0 : ::recv(fd_.get(), dst, room, MSG_DONTWAIT);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return errno;
        }
        if (r == 0 && room > 0)
            return kEof;
        if (in_large_) {
            large_have_ += static_cast<size_t>(r);
            if (large_have_ == large_.size()) {
                in_large_ = false;
                sink.message(large_hdr_.am_id, large_);
                // Large buffers are not kept: an idle endpoint holds 64 KiB, not its peak.
                std::vector<std::byte>().swap(large_);
                if (sink.stop())
                    return kStopped;
            }
        } else {
            rend_ += static_cast<size_t>(r);
        }
    }
    return 0;
}

} // namespace weft::btl_tcp
