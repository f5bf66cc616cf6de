// SPDX-License-Identifier: BSD-3-Clause
// The bounce-buffer fallback of SCIF RMA, for a kernel that refuses
// process_vm_readv/writev toward the peer (a seccomp profile such as
// docker's default, Yama ptrace restrictions). The refusal is found by real
// attempts at connect time (scif_endpoint.cc), never assumed.
//
// The side that is refused (the requester) creates a socketpair and a memfd
// of kBounceSlots slots and hands the server end and the memfd to the peer
// in its connect message. The peer (the server) runs one thread per such
// connection that reads rma_req messages, checks each against its own
// registered windows (offset, length, protection) under the endpoint's
// window lock, copies between the window and the slot, and answers with
// rma_reply. The requester pipelines: it keeps every slot busy, filling the
// next while the server copies the previous one, and consumes the replies in
// order. Nothing is named on disk: the memfd and the sockets die with the
// last process holding them, SIGKILL included.
#pragma once

#include <cstdint>
#include <mutex>
#include <thread>

#include "scif_ctrl.hpp"
#include "scif_sys.hpp"

namespace weft::scif {

class Endpoint;

// The requester's side: our request socket and our bounce slots.
struct BounceRequester {
    UniqueFd sock;
    Mapping slots;
    uint64_t next_seq = 1;
    explicit operator bool() const { return static_cast<bool>(sock) && static_cast<bool>(slots); }
};

// Creates a requester (socketpair + memfd). *peer_sock and *peer_memfd get
// the descriptors to hand to the peer. 0 or -errno.
int make_bounce(BounceRequester *out, UniqueFd *peer_sock, UniqueFd *peer_memfd);

// Moves len bytes between local memory and the peer's registered range at
// roff through the peer's server: 0, or -errno (ENXIO/EACCES from the peer's
// window check, ECONNRESET when the peer is gone).
int bounce_move(BounceRequester &b, RmaOp op, std::byte *local, uint64_t roff, uint64_t len);

// The server's side: a thread serving the peer's requests on ep's windows.
class BounceServer {
public:
    BounceServer() = default;
    ~BounceServer() { stop(); }
    BounceServer(const BounceServer &) = delete;
    BounceServer &operator=(const BounceServer &) = delete;
    // Takes the peer's socket and memfd (checked: a memfd of kBounceBytes)
    // and starts serving ep. 0 or -errno.
    int start(Endpoint &ep, UniqueFd sock, UniqueFd memfd);
    // Wakes and joins the thread (idempotent).
    void stop();
    bool running() const { return thread_.joinable(); }

private:
    void run(Endpoint *ep);
    // Copies between a slot and our registered memory: 0, or -EFAULT when
    // a page of the window was unmapped after registering.
    int copy_window(bool to_slot, std::byte *slot, std::byte *window, uint64_t n) const;
    UniqueFd sock_;
    // /proc/self/mem, or none (memcpy then): see copy_window.
    UniqueFd self_mem_;
    Mapping slots_;
    std::thread thread_;
};

} // namespace weft::scif
