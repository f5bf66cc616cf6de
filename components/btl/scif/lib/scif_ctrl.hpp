// SPDX-License-Identifier: BSD-3-Clause
// Control messages on a connection's sockets (AF_UNIX SOCK_SEQPACKET, so each
// send is one message): the connect handshake that hands over the ring
// segment, window (un)registration notices and wake-ups on the control
// socket; RMA requests and replies of the bounce-buffer fallback on a
// connection's service socket (scif_bounce.hpp). Everything read from a
// socket goes through parse_ctrl() before use: magic, version, type, exact
// length per type and field ranges. tests/fuzz/scif_ctrl_fuzz.cc fuzzes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace weft::scif {

inline constexpr uint32_t kCtrlMagic = 0x46435357;   // "WSCF"
inline constexpr uint16_t kCtrlVersion = 1;

enum class CtrlType : uint16_t {
    connect_req = 1,  // connector -> acceptor, with the ring segment's memfd
    connect_ack = 2,  // acceptor -> connector: rings attached
    wake = 3,         // the ring the receiver sleeps on has news
    win_reg = 4,      // a window was registered (offset, length, address, prot)
    win_unreg = 5,    // windows inside [offset, offset + length) are gone
    rma_req = 6,      // service socket: copy between a bounce slot and a window
    rma_reply = 7,    // service socket: that request is done (status)
};

// ConnectReq/ConnectAck flags.
// The sender's process_vm_readv/writev toward the receiver was refused (a
// real attempt failed): the message carries, after the segment memfd if any,
// a service socket and a bounce-buffer memfd, and the receiver serves the
// sender's RMA through them.
inline constexpr uint16_t kCtrlNeedBounce = 1;
inline constexpr uint16_t kCtrlKnownFlags = kCtrlNeedBounce;

struct CtrlHeader {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
};

struct ConnectReq {
    uint16_t src_port;
    uint16_t flags;         // kCtrl* flags
    uint32_t ring_cells;    // cells per direction; power of two
    uint64_t probe_addr;    // a word in the connector's memory ...
    uint64_t probe_value;   // ... holding this value: process_vm_readv is tried on it
};

struct ConnectAck {
    uint16_t port;          // the acceptor's port
    uint16_t flags;         // kCtrl* flags
    uint32_t pad2;
    uint64_t probe_addr;
    uint64_t probe_value;
};

struct WinReg {
    uint64_t offset;
    uint64_t length;
    uint64_t addr;
    uint32_t prot;
    uint32_t pad;
};

struct WinUnreg {
    uint64_t offset;
    uint64_t length;
};

// Bounce-buffer geometry: slots of the requester's bounce memfd.
inline constexpr uint32_t kBounceSlots = 4;
inline constexpr uint32_t kBounceSlotBytes = 64 * 1024;
inline constexpr size_t kBounceBytes = size_t{kBounceSlots} * kBounceSlotBytes;

enum class RmaOp : uint8_t { read = 1, write = 2 };

// Requester -> server: move len bytes between bounce slot `slot` and the
// server's registered range at offset (read: window -> slot; write: slot ->
// window), checked against the server's windows and their protection.
struct RmaReq {
    uint64_t seq;
    uint64_t offset;
    uint32_t len;
    uint16_t slot;
    uint8_t op;             // RmaOp
    uint8_t pad;
};

// Server -> requester: request seq is done; status 0 or a positive errno
// (ENXIO: not registered, EACCES: window lacks the protection).
struct RmaReply {
    uint64_t seq;
    int32_t status;
    uint32_t pad;
};

// The smallest and largest ring a connect_req may ask for.
inline constexpr uint32_t kMinRingCells = 64;
inline constexpr uint32_t kMaxRingCells = 1u << 20;
// Largest control message (buffer size of readers).
inline constexpr size_t kCtrlMax = 64;

struct CtrlMsg {
    CtrlType type;
    union {
        ConnectReq req;
        ConnectAck ack;
        WinReg reg;
        WinUnreg unreg;
        RmaReq rma;
        RmaReply reply;
    } u;
};

// Encodes a message into buf (kCtrlMax bytes); returns its length.
size_t encode_ctrl(const CtrlMsg &msg, std::span<std::byte, kCtrlMax> buf);
// Decodes and validates bytes; 0, or an errno value saying why not (EPROTO:
// wrong magic/version/type/length; EINVAL: a field out of range).
int parse_ctrl(std::span<const std::byte> bytes, CtrlMsg *out);

// Descriptors that travel with a control message (SCM_RIGHTS): the ring
// segment, then the bounce server's socket and slots.
constexpr size_t kMaxPassedFds = 3;

// Sends one control message on a SOCK_SEQPACKET socket, with pass_fds (at
// most kMaxPassedFds) as SCM_RIGHTS. 0, -EAGAIN when the peer has not made
// room within a second, or -errno.
int send_ctrl(int fd, const CtrlMsg &msg, std::span<const int> pass_fds = {});

} // namespace weft::scif
