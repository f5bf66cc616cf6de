// SPDX-License-Identifier: BSD-3-Clause
// A SCIF endpoint and the connection machinery under the C API (scif_api.cc)
// and btl/scif: ports as abstract UNIX socket names, the connect handshake
// that hands the ring segment over as a memfd, the control-socket reader,
// and bounded sleeping. Functions return 0 or a negative errno; the C API
// turns that into -1 with errno.
//
// Threads: the endpoint table is safe from any thread. One endpoint may be
// used by one sending and one receiving thread at a time (the rings are
// single-producer/single-consumer); other calls on one endpoint must not run
// concurrently.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <weft/component_util.hpp>
#include <weft/scif.h>

#include "scif_bounce.hpp"
#include "scif_ring.hpp"
#include "scif_sys.hpp"

namespace weft::scif {

enum class State { unbound, bound, listening, connecting, connected };

struct Window {
    uint64_t offset;
    uint64_t length;
    std::byte *addr;   // local windows: our address; remote: the peer's
    int prot;
};

// Resolves [off, off + len) through windows that are contiguous in the
// registered address space, calling piece(address, length) for each part.
// -ENXIO if a byte is not covered, -EACCES if a window lacks prot.
template <class Piece>
int resolve_windows(const std::vector<Window> &wins, uint64_t off, uint64_t len, int prot,
                    Piece &&piece)
{
    while (len > 0) {
        auto it = std::find_if(wins.begin(), wins.end(), [&](const Window &w) {
            return off >= w.offset && off < w.offset + w.length;
        });
        if (it == wins.end())
            return -ENXIO;
        if ((it->prot & prot) != prot)
            return -EACCES;
        const uint64_t n = std::min(len, it->offset + it->length - off);
        if (int rc = piece(it->addr + (off - it->offset), n); rc != 0)
            return rc;
        off += n;
        len -= n;
    }
    return 0;
}

// Per side of a connection, in the segment: RMA progress counters the peer's
// fences read. Each side writes only its own.
struct alignas(kCell) SideShared {
    uint64_t rma_started;
    uint64_t rma_done;
};

class Endpoint;

// What a listening endpoint accepts. A connection is half-open from its
// socket's accept until its connect_req arrives; half-open connections never
// block the listener (each is read when it has something), are dropped after
// handshake_timeout, and at most max_pending wait at once (a new one past
// that evicts the oldest: a real connector sends its request at once, so the
// newest is the likeliest to be real).
struct AcceptPolicy {
    std::chrono::milliseconds handshake_timeout{5000};
    size_t max_pending = 64;
    // Largest ring a connector may ask for (cells per direction): the
    // acceptor maps two of them and zero-fills the one it receives on.
    uint32_t max_ring_cells = 1u << 20;
    // Zero-fill (first touch) the receive ring at accept. Off: the memory is
    // committed by commit_receive_ring(), once the owner trusts the peer.
    bool commit_on_accept = true;
    // Called once per refused or dropped connection (pid 0: not known),
    // with what was wrong; never for one accepted.
    std::function<void(pid_t pid, const char *why)> on_refuse;
    // Called instead of on_refuse (when set) for a connector that sent its
    // request and closed before the ack went out: nothing was refused, it
    // left (a process does that when its connect loses to one the other way).
    std::function<void(pid_t pid, const char *why)> on_gone;
};

class Endpoint {
public:
    explicit Endpoint(UniqueFd sock) : sock_(std::move(sock)) {}
    int fd() const { return sock_.get(); }

    State state = State::unbound;
    uint16_t port = 0;
    scif_port_id peer{};
    pid_t peer_pid = 0;
    bool single_copy = false;      // process_vm_readv/writev reach the peer
    // Offer and accept the bounce fallback of RMA on this endpoint's
    // connections (an accepted endpoint inherits its listener's choice).
    // btl/scif, which uses no windows, turns it off.
    bool rma_service = true;
    bool peer_gone = false;        // hang-up seen on the control socket
    int connect_error = 0;         // an asynchronous connect that failed
    bool ack_pending = false;      // connect_req sent, ack not yet seen
    bool async_connect = false;    // EINPROGRESS given; a later scif_connect reports the end
    Mapping segment;
    RingProducer tx;
    RingConsumer rx;
    SideShared *mine = nullptr;
    SideShared *theirs = nullptr;
    Duplex duplex;   // small messages of the internal users (see scif_ring.hpp)
    size_t rx_offset = 0;          // bytes of the head stream chunk already received
    std::vector<Window> windows;         // registered here
    std::vector<Window> remote_windows;  // registered by the peer, as it told us
    uint64_t fence_marks = 0;
    uint32_t ring_cells = 0;             // per direction, once connected
    bool receive_ring_cold = false;      // accepted without commit_on_accept
    // Pages of this side's mappings not yet faulted in, on a host of one
    // NUMA node (populate_rings_step() does them a chunk at a time): the
    // receive ring (allocated by that first touch) and the send ring, the
    // peer's receive ring, whose pages this process must map too: each
    // first store to one of them faults in the middle of a message.
    struct PopulateRange {
        std::byte *at = nullptr, *end = nullptr;
    };
    std::array<PopulateRange, 2> populate{};
    bool populate_pending() const
    {
        return populate[0].at < populate[0].end || populate[1].at < populate[1].end;
    }
    // Listening endpoints: what they accept, and the connections whose
    // connect_req has not arrived yet (see AcceptPolicy).
    AcceptPolicy accept_policy;
    struct HalfOpen {
        std::unique_ptr<Endpoint> ep;
        std::chrono::steady_clock::time_point deadline;
    };
    std::vector<HalfOpen> half_open;
    // The bounce fallback (scif_bounce.hpp): ours when single_copy is false,
    // the server when the peer's is. windows changes under win_lock once a
    // server may read it.
    BounceRequester bounce;
    std::mutex win_lock;

    // The peer closed its endpoint (orderly) or is gone (exit, SIGKILL).
    bool peer_closed() { return peer_gone || rx.producer_closed(); }

    BounceServer server;   // last: stopped before the windows it reads go

private:
    UniqueFd sock_;
};

// ---- the descriptor table ------------------------------------------------
// Indexed by descriptor; a lookup on the data path is one acquire load
// (inline: btl/scif does one per message sent and per endpoint polled).
inline constexpr int kMaxEndpoints = 1 << 16;
extern std::atomic<Endpoint *> g_table[kMaxEndpoints];
// Endpoint of a descriptor, or nullptr (EBADF).
inline Endpoint *lookup(int epd)
{
    if (epd < 0 || epd >= kMaxEndpoints)
        return nullptr;
    return g_table[epd].load(std::memory_order_acquire);
}
// Creates an unbound endpoint; its descriptor, or -errno.
int open_endpoint();
// Takes the endpoint out of the table and closes it (the peer sees the close).
int close_endpoint(int epd);
// Adds an endpoint made by accept; its descriptor, or -errno.
int adopt(std::unique_ptr<Endpoint> ep);

// ---- connection setup -------------------------------------------------------
int bind_port(Endpoint &ep, uint16_t pn);
int listen_on(Endpoint &ep, int backlog);
// Starts (and with block, finishes) a connection. -EINPROGRESS: poll for
// POLLOUT or call again; -EALREADY: still in progress.
int connect_to(Endpoint &ep, uint16_t dst_port, bool block);
// Completes a pending asynchronous connect if its ack arrived.
int finish_connect(Endpoint &ep, bool block);
// Takes new connections off lis's queue, reads the connect_req of those
// that sent one and returns the first that completes its handshake. With
// block, waits for one (-EINTR if a signal interrupts the wait); else
// -EAGAIN when none completed. Never waits for one connector: a silent one
// stays half-open until its request or its deadline (lis.accept_policy).
// on_half_open, when set, learns each new half-open socket (to watch it).
int accept_one(Endpoint &lis, bool block, std::unique_ptr<Endpoint> *out,
               const std::function<void(int fd)> &on_half_open = {});
// Zero-fills (first touch) the ring an accepted endpoint receives on, if
// accept left it cold (AcceptPolicy::commit_on_accept off). Call it before
// the connector may send more than its first message.
void commit_receive_ring(Endpoint &ep);
// Faults in the next max_bytes of the rings' pages in this process
// (without changing them: the peer may be writing); true while some remain.
bool populate_rings_step(Endpoint &ep, size_t max_bytes);

// ---- descriptors from a peer ------------------------------------------------
// A memfd of exactly len bytes, sealed against shrinking, growing and more
// seals, so a peer that maps it never loses the pages (SIGBUS). 0 or -errno.
int make_sealed_memfd(const char *name, size_t len, UniqueFd *out);
// Maps a memfd a peer handed over, shared, only if it cannot change size
// under the mapping: seals F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL and
// exactly len bytes. 0, -EPROTO (not such a memfd) or -ENOMEM.
int map_peer_memfd(int fd, size_t len, Mapping *out);

// ---- the control socket -------------------------------------------------------
// Reads every control message waiting (never blocks): wake-ups, window
// notices, the connect ack, a hang-up.
void drain_control(Endpoint &ep);
// Sends a wake-up: the other side sleeps on its ring.
void notify(Endpoint &ep);
// Sleeps until the control socket has news, at most timeout_ms (and never
// longer than kMaxSleepMs: a wake-up lost to the fence-free fast path costs
// that much, never a hang). Drains what arrived.
void sleep_on_socket(Endpoint &ep, int timeout_ms);
inline constexpr int kMaxSleepMs = 10;

// Runs f (which returns 0, a result >= 0 or -errno) so that no exception
// leaves a C entry point: an allocation that fails is ENOMEM.
template <class F>
int no_throw(F &&f) noexcept
{
    try {
        return f();
    } catch (...) {
        return -ENOMEM;
    }
}

// ---- data ---------------------------------------------------------------------
// Stream send/recv of scif_send/scif_recv: bytes moved, or -errno.
int stream_send(Endpoint &ep, std::span<const std::byte> data, bool block);
int stream_recv(Endpoint &ep, std::span<std::byte> data, bool block);
// A ring chunk of len bytes that fill(dst) writes, published: 0, -EAGAIN
// when the ring is full, -ECONNRESET when the peer is gone, -EMSGSIZE.
template <class Fill>
[[gnu::always_inline]] inline int send_chunk(Endpoint &ep, ChunkType type, uint8_t tag, size_t len, Fill fill,
                                             bool continues = false)
{
    if (len > ep.tx.max_chunk())
        return -EMSGSIZE;
    if (!ep.tx.has_room(len))
        return ep.peer_closed() ? -ECONNRESET : -EAGAIN;
    fill(ep.tx.reserve(len, continues).data());
    ep.tx.publish(type, tag);
    return 0;
}

// Framed message of an internal user (type >= kFirstUserType), in pieces
// copied one after the other: as send_chunk (continues: a fragment after
// a message's first, see RingProducer::reserve).
inline int try_send_message(Endpoint &ep, uint8_t type, uint8_t tag,
                            std::span<const std::span<const std::byte>> pieces, bool continues = false)
{
    size_t len = 0;
    for (auto p : pieces)
        len += p.size();
    return send_chunk(
        ep, static_cast<ChunkType>(type), tag, len,
        [pieces](std::byte *dst) {
            for (auto p : pieces) {
                weft::cutil::copy_bytes(dst, p.data(), p.size());
                dst += p.size();
            }
        },
        continues);
}

// The same for a message in two pieces (a header and its payload): one that
// fits goes through the duplex line when our half is free, else one that
// fits a cell takes the ring's one-cell path. Read with peek_message().
// Always inlined, so the small message's paths stay in the caller; the
// pieces' loops are unrolled for two (callgrind, 64 B: 16 instructions).
[[gnu::always_inline]] inline int try_send_message(Endpoint &ep, uint8_t type, uint8_t tag,
                                                   std::span<const std::byte> a, std::span<const std::byte> b)
{
    const auto t = static_cast<ChunkType>(type);
    if (ep.duplex.put(t, tag, a, b, ep.tx.position()) ||
        (a.size() + b.size() <= kCellPayload && ep.tx.put_cell(t, tag, a, b)))
        return 0;
    return send_chunk(ep, t, tag, a.size() + b.size(), [a, b](std::byte *dst) {
        weft::cutil::copy_bytes(dst, a.data(), a.size());
        weft::cutil::copy_bytes(dst + a.size(), b.data(), b.size());
    });
}

// The next message of an internal user's connection in the order sent, from
// the ring or the duplex line: see peek_message in scif_ring.hpp.
inline bool peek_message(Endpoint &ep, Chunk *out, bool *from_duplex)
{
    return peek_message(ep.rx, ep.duplex, out, from_duplex);
}

// Grows whenever a message of the peer is consumed, from the ring or the
// duplex line; private counters only, no shared line.
inline uint64_t received_mark(const Endpoint &ep) { return ep.rx.position() + ep.duplex.taken(); }

// Largest message try_send_message() takes on ep.
size_t max_message(const Endpoint &ep);

// ---- single copy ----------------------------------------------------------------
// Copies between local memory and the peer's address space with
// process_vm_readv (read) or process_vm_writev; 0 or -errno (ECONNRESET if
// the peer is gone, EFAULT for a bad address).
int copy_with_peer(Endpoint &ep, bool read, std::byte *local, uint64_t remote, size_t len);

// Segment geometry (also used by tests): cells per ring direction.
uint32_t ring_cells_default();
// Cells per direction for connections this process starts from now on (a
// power of two within the protocol's bounds; others are ignored).
void set_ring_cells(uint32_t cells);

} // namespace weft::scif
