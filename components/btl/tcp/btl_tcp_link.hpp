// SPDX-License-Identifier: BSD-3-Clause
// One TCP connection of an endpoint: the framing on a non-blocking socket.
// Sends try the socket directly (writev of header + payload) and queue only
// what the kernel did not take; receives read many small frames per recv()
// into a buffer, and large payloads either straight into the place the
// runtime names (btl.h upcalls.place) or into a buffer of their size.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <weft/btl.h>
#include <weft/unique_fd.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "btl_tcp_wire.hpp"

namespace weft::btl_tcp {

// What a link's reader hands up: a message (data valid during the call),
// and where a large one should land. An interface, not std::functions: a
// busy-polled ping-pong calls message() and stop() for every frame, and
// a std::function call is a double indirection the compiler cannot see
// through.
class LinkSink {
public:
    virtual void message(uint8_t am_id, std::span<const std::byte> data) = 0;
    // Stop delivering (e.g. the endpoint was disconnected from an upcall).
    virtual bool stop() const = 0;
    // Where a large message should land (the runtime's place upcall): true
    // with *place filled in, or false to deliver it through message().
    virtual bool place(uint8_t am_id, std::span<const std::byte> head, size_t len, weft_btl_placement_t *place) = 0;
    // That a placed message has landed (or never will: status != 0).
    virtual void placed(uint8_t am_id, uint64_t token, int status) = 0;

protected:
    ~LinkSink() = default;
};

// A placement a link was receiving into when it stopped.
struct Unlanded {
    uint8_t am_id;
    uint64_t token;
};

class Link {
public:
    // receive() results besides 0 (would block) and positive errno values.
    static constexpr int kBadFrame = -1;   // *error says why
    static constexpr int kEof = -2;        // the peer closed without a close frame
    static constexpr int kClosed = -3;     // the peer's close frame arrived
    static constexpr int kStopped = -4;    // sink.stop() asked to stop

    explicit Link(UniqueFd fd, size_t max_payload) : fd_(std::move(fd)), max_payload_(max_payload) {}

    int fd() const { return fd_.get(); }
    bool has_queue() const { return !queue_.empty(); }
    size_t queued_frames() const { return queue_.size(); }

    // Sends header + pieces: directly when nothing waits, else queued.
    // Returns 0, or an errno when the connection is broken.
    int send(const FrameHeader &h, const struct iovec *iov, int iovcnt);
    // Writes queued bytes; 0 or an errno. *drained says the queue is empty.
    int flush(bool *drained);
    // Reads what the socket has and delivers complete frames through sink.
    // Returns 0 (would block, or a read budget used up), an errno, or k*.
    int receive(LinkSink &sink, std::string *error);
    void drop_queue() { queue_.clear(); }
    UniqueFd release() { return std::move(fd_); }
    // The placement under way, if any; the link writes nothing into it after this.
    std::optional<Unlanded> abandon_placement();

    // Messages at least this large are offered to sink.place.
    static constexpr size_t kPlaceMin = 8 * 1024;
    // After placing a message larger than rbuf_ the next read takes only
    // this much: the next frame's header and the head the runtime needs to
    // place it, so that a stream of large messages goes from the socket
    // straight into the runtime's buffers instead of through rbuf_ and a copy.
    static constexpr size_t kPeekBytes = kFrameHeaderBytes + WEFT_BTL_PLACE_HEAD;
    // Frames up to this size go out as one flat buffer with send(): the
    // kernel's iovec import is a measurable part of a small message's cost.
    static constexpr size_t kContiguousMax = 256;
    static constexpr size_t kSmallMax = kContiguousMax - kFrameHeaderBytes;

private:
    struct Pending {
        std::vector<std::byte> bytes;
        size_t off = 0;
    };
    // Delivers the whole frames at the front of rbuf_.
    // Sends a whole frame in flat[0..total) and queues what the kernel did not take.
    int send_flat(const std::byte *flat, size_t total);
    // Queues frame bytes [written, end) of header + pieces.
    void queue_rest(const std::byte *hdr, const struct iovec *iov, int iovcnt, size_t total, size_t written);
    int deliver_buffered(LinkSink &sink, std::string *error);
    // The front frame is not a whole message: a bad or close frame, or one
    // still arriving (to be placed, received whole, or waited for).
    [[gnu::noinline]] int frame_at_front(LinkSink &sink, std::string *error);
    // Offers the frame at rstart_ to sink.place; true when it is being placed.
    bool start_placement(LinkSink &sink, const FrameHeader &h, size_t have);
    // Moves the unread bytes to the front of rbuf_.
    void compact();

    UniqueFd fd_;
    size_t max_payload_;
    std::deque<Pending> queue_;
    // Small frames: read in bulk, parsed in place.
    static constexpr size_t kReadBufferBytes = 64 * 1024;
    std::vector<std::byte> rbuf_ = std::vector<std::byte>(kReadBufferBytes);
    // The next read into rbuf_ fills it up to here: kReadBufferBytes, or
    // kPeekBytes after a placement of a message larger than rbuf_ (which
    // leaves rbuf_ empty) until a read fills the room it had. A limit
    // rather than a flag: the read path tests nothing more than before.
    size_t read_limit_ = kReadBufferBytes;
    size_t rstart_ = 0, rend_ = 0;
    // A payload larger than rbuf_: received straight into its own buffer.
    bool in_large_ = false;
    FrameHeader large_hdr_;
    std::unique_ptr<std::byte[]> large_;
    size_t large_have_ = 0;
    // A payload received into the runtime's buffers (iov advanced as it fills).
    bool in_place_ = false;
    uint8_t place_am_ = 0;
    weft_btl_placement_t place_{};
    size_t place_left_ = 0;
};

} // namespace weft::btl_tcp
