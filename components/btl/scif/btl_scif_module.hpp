// SPDX-License-Identifier: BSD-3-Clause
// The btl/scif module: one per process. It listens on a scif port (in its
// card), connects lazily to peers on the same node and user, and moves
// messages through the connection's rings:
// - a message up to stream_from (5 KiB) is one chunk (type am, tag = the
//   am id), written straight into the cells (sendi/send never allocate for
//   these) and delivered from the ring without a copy;
// - a longer one is written as fragments (2 KiB up to 16 KiB, 16 KiB past
//   it: stream_fragment()) straight from the caller's buffers, and the
//   receiver lands them in the runtime's buffer (upcalls.place) while the
//   next goes in; what the ring has no room for is copied into the queue.
//   sendx(WEFT_BTL_SEND_NOW) takes a message only when the ring has room
//   for all of it (the runtime's
//   eager_if_room range, toward peers the rendezvous serves better once
//   the ring is full);
// - a queued one goes from progress() as a
//   rendezvous when process_vm_readv reaches the peer (a chunk with the
//   copy's address and length; the receiver reads it in one call and
//   answers with rdv_done, which frees the copy), else as fragments
//   (frag_first carries the total length). Fragments need one ring handoff
//   per half ring, which on busy cores costs a scheduler slice each;
//   the rendezvous needs one;
// - put/get copy once with process_vm_writev/readv into the peer's memory,
//   checked against the rkey; completions are reported from progress().
// Blocking (wait_fd): the module's descriptor is an epoll set of the
// listening socket and every connection's control socket. prepare_wait()
// sets each ring's consumer_waiting flag (and producer_waiting where sends
// wait for room), fences and re-checks the rings; a peer that publishes
// after the flag is set sees it (it already fences and looks after every
// publish) and sends a wake-up message on the control socket, which makes
// the set readable. A hang-up (peer killed) and a new connection wake it
// too. The flags stay clear while the process polls, so a sender to an
// awake receiver makes no system call and no atomic read-modify-write.
// The connector's first message is a hello (rank, the acceptor's secret from
// its card, job id): the acceptor checks it (the secret, the job, a rank of
// the job other than its own whose card names the connecting pid, as
// SO_PEERCRED reports it) before the accepted upcall, and answers with a
// hello reply (accept, duplicate, refuse) before the connector sends anything
// else. Until then the connection is a stranger's: its receive ring is not
// committed (zero-filled), it counts toward btl_scif_max_pending, and it is
// closed at btl_scif_handshake_timeout. Refusals are counted and logged once
// per connection (the first as a warning, then at debug level; the count at
// finalize). One endpoint per peer: when both sides connect at once, the lower
// rank's connection wins (as in btl/tcp); the loser waits for the winner's
// connection and adopts it into the endpoint the runtime already holds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <unistd.h>

#include <weft/btl_base.hpp>

#include "btl_scif_wire.hpp"

namespace weft::scif {
class Endpoint;
struct Chunk;
} // namespace weft::scif

namespace weft::btl_scif {

struct ScifConfig {
    int priority = 50;
    size_t eager_limit = 4096;
    size_t max_send = size_t{16} << 20;
    size_t ring_size = 64 * 1024;    // bytes per direction per peer
    // Parameters left at 0: sized for the job once its local size is known
    // (see ScifModule::size_for_job); the values above until then.
    bool auto_ring = false, auto_eager = false;
    // The auto eager limit of a connection whose peer process_vm_readv
    // reaches (see ScifModule::choose_eager_limit).
    size_t single_copy_eager = 32 * 1024;
    // Toward those peers, messages past single_copy_eager up to the ring's
    // eager limit stream when the ring has room for all of them at once
    // (weft_btl_endpoint_t.eager_if_room, sendx with WEFT_BTL_SEND_NOW):
    // a streamed 64 KiB beats the rendezvous one way (4.5-6 us against
    // 8-10 on the 2-vCPU VM) but, once the ring is full, its queued copy
    // halves both-ways bandwidth (docs/transports.md).
    bool eager_if_room = true;
    // Where one process_vm_readv call costs less than cheap_single_copy_us
    // (its fixed part: 64 bytes, the least of 16 calls, timed at init;
    // btl_scif_single_copy_call_us sets it instead), the rendezvous takes
    // over past cheap_single_copy_eager and nothing past it streams. The
    // two measured hosts sit on either side: the 2-vCPU EPYC VM (Firecracker)
    // pays 1.6-2.1 us a call, and there streamed 32-64 KiB beat the
    // rendezvous; the 16-core Xeon (KVM) pays 0.6-0.8 us, and there, one way
    // (osu_latency, 3-4 jobs each), the rendezvous beat the ring at 32 KiB
    // (3.6-4.3 against 5.2-6.3 us) and 64 KiB (4.6-5.9 against 8.3-9.0),
    // and 8 pairs at 64 KiB moved 120-144 against 69-89 GB/s (osu_mbw_mr).
    // At 16 KiB it won the ping-pong too (2.7-3.2 against 3.9-4.4 us) but
    // lost windows of 64 (osu_bw 2.9 against 11.8 GB/s, 8 pairs 40 against
    // 81 GB/s: each message waits for its handshake), so 16 KiB stays eager
    // in a window and goes by single copy on its own: past
    // cheap_single_copy_from a message the runtime sends while no other
    // rendezvous to the peer is in flight takes the single copy
    // (weft_btl_endpoint_t.single_copy_from). On its own at 16 KiB the
    // single copy also halved a 16-rank alltoall (67 against 131 us). It
    // starts past 8 KiB: on a second EPYC VM whose call costs 0.45 us, an
    // 8 KiB osu_latency took 1.95-2.07 us through the ring in one chunk and
    // 1.56-1.59 by single copy (Open MPI vader, which single-copies past
    // 4 KiB, 1.53-1.82), with osu_bw and osu_bibw at 4-32 KiB within 5%;
    // streamed in 2 KiB fragments (stream_from) the ring is as fast at
    // 8 KiB and faster below: on a 2-vCPU Xeon VM (0.41-0.51 us a call;
    // weft_bench, 5 alternated jobs, paired) 6 KiB took 0.89 of the
    // single copy's time and 8 KiB 0.99.
    double cheap_single_copy_us = 1.25;
    size_t cheap_single_copy_eager = 16 * 1024;
    size_t cheap_single_copy_from = 8 * 1024;
    double single_copy_call_us = 0;   // measured (or set); 0: no single copy
    // Messages longer than stream_from go through the ring as fragments of
    // stream_fragment bytes, each published as soon as it is written, so the
    // receiver copies one out while the sender writes the next (two copies
    // that overlap instead of following each other); the receiver lands
    // them straight in the runtime's buffer (upcalls.place). Up to 32 KiB
    // this beats the rendezvous's single copy, whose process_vm_readv costs
    // 2-5 us before it copies anything (measured: docs/transports.md).
    // sendi() takes messages up to stream_from only (past stream_reply_from
    // it hands an answer to send(): sendi_rare).
    //
    // A message no longer than one stream_fragment goes as fragments of
    // kStreamSmallFragment bytes. A 5-16 KiB chunk was copied in whole
    // before the receiver saw any of it, and from 4 KiB glibc copies with
    // `rep movsb`, past the ring's claims (scif_ring.hpp); 2 KiB fragments
    // are claimed and let the two copies overlap. Measured on a 2-vCPU
    // Xeon VM (weft_bench, 5-7 alternated jobs, paired ratios against one
    // chunk): one way 6 KiB 0.84, 8 KiB 0.81, 16 KiB 0.74; windows of 64:
    // 8 KiB 1.04, 16 KiB 1.02 the rate. Past 16 KiB, 2 KiB fragments cost
    // 11% of the rate (32 and 64 KiB) for a ping-pong within 1-2%, so
    // larger messages keep 16 KiB fragments. A 4 KiB message (and the
    // runtime's header) stays one chunk: streamed it won the ping-pong
    // (0.91-0.95) but lost the 2-rank OSU collectives at 4 KiB by 8-18%
    // (3 alternated jobs; each fragment is a handoff, and past the ring's
    // first 64 KiB the producer's look at the consumer met a second
    // fragment, so the ping-pong walked the whole 2 MiB ring).
    size_t stream_from = 5 * 1024;
    size_t stream_fragment = 16 * 1024;
    static constexpr size_t kStreamSmallFragment = 2 * 1024;
    // A message that answers the peer (nothing sent on the connection since
    // the peer's last message came) streams from stream_reply_from on, in
    // two fragments up to 2 x kStreamSmallFragment: its receiver most likely
    // waits for it and copies the first half out while the second goes in.
    // A message that follows our own send stays one chunk up to stream_from:
    // its receiver is most likely still busy with the one before, and each
    // fragment is a handoff. Measured on a 2-vCPU Xeon VM (weft_bench, 6
    // alternated jobs, against one chunk): streamed always, ping-pong 3 KiB
    // 0.95, 3.5 KiB 0.94, 4 KiB 0.87, but windows of 64 at 3-3.5 KiB 0.85-
    // 0.87 the rate; 2.5 KiB in two fragments was 1.03-1.06 the time.
    size_t stream_reply_from = 3 * 1024;
    size_t max_ring_size = 0;        // largest ring accepted; 0: ring_size
    double handshake_timeout = 10;   // seconds to the hello
    size_t max_pending = 64;         // unauthenticated connections at once
};

// Ring message types (weft::scif::kFirstUserType and up).
enum MsgType : uint8_t {
    kAm = 2,          // whole message; tag = am id
    kFragFirst = 3,   // first fragment; tag = am id; payload: u64 total, data
    kFrag = 4,        // next fragment: data
    kHello = 5,       // connector -> acceptor: HelloHead, job id bytes
    kHelloReply = 6,  // acceptor -> connector: tag = HelloAnswer; u32 rank
    kRdv = 7,         // tag = am id; payload: RdvDesc (read it from the sender)
    kRdvDone = 8,     // payload: u64 cookie of an RdvDesc read: its copy may go
};

// A byte view of n bytes at p (the rings take spans).
inline std::span<const std::byte> bytes(const void *p, size_t n)
{
    return {static_cast<const std::byte *>(p), n};
}

struct RdvDesc {
    uint64_t addr;
    uint64_t len;
    uint64_t cookie;
};

enum HelloAnswer : uint8_t { kAccept = 0, kDuplicate = 1, kRefuse = 2 };

// What a side tells the other in its hello (the chunk's tag) and in its
// hello reply (a byte after the rank): bit 0, process_vm_readv from this
// side reaches the other (its probe word read back), so the other's large
// data may wait in place for this side to read it. Absent: it may not.
inline constexpr uint8_t kHelloReadsPeer = 1;

enum class EpPhase {
    connecting,      // ours: the scif connect is not acked yet
    awaiting_reply,  // ours: hello sent, the acceptor's answer not yet seen
    waiting_peer,    // ours lost the tie-break: the peer's connection comes
    awaiting_hello,  // accepted: the connector's hello not yet seen
    connected,
    dead,
};

struct ScifEndpoint : weft::btl::EndpointBase {
    int epd = -1;
    EpPhase phase = EpPhase::connecting;
    bool reported = false;               // the final CLOSED/FAILED upcall ran
    bool close_requested = false;        // disconnect() of a FAILED endpoint
    bool closing = false;                // disconnect(): CLOSED once pending is sent
    // The progress() round that ran the CONNECTED upcall. Nothing is
    // delivered on the endpoint in that round: the runtime acts on the state
    // change (sets up its handlers) before the first recv upcall.
    unsigned long connected_round = 0;
    // Accepted: when an unauthenticated connection is dropped.
    std::chrono::steady_clock::time_point hello_deadline{};
    // The peer said (hello or reply) that it reads our memory with
    // process_vm_readv: a rendezvous it reads, not fragments, carries our
    // large data, and the runtime's rendezvous may ask it to get.
    bool peer_reads_us = false;
    // Ours: the peer's card (its secret goes in the hello; the acceptor
    // must be its pid).
    Card card{};
    // Large sends waiting for ring room, in order; front may be partly sent.
    struct Pending {
        uint8_t am_id;
        std::vector<std::byte> data;
        size_t sent = 0;
        bool started = false;
    };
    std::deque<Pending> pending;
    size_t pending_bytes = 0;            // queued plus in flight
    // Rendezvous copies the peer has not read yet, by cookie.
    std::vector<std::pair<uint64_t, std::vector<std::byte>>> inflight;
    uint64_t next_cookie = 1;
    std::vector<uint64_t> acks_owed;     // rdv_done the ring had no room for
    // A fragmented message landing straight in the runtime's buffers
    // (upcalls.place accepted it): where its next bytes go.
    struct Landing {
        weft_btl_placement_t place{};
        int iov = 0;          // current piece of place.iov
        size_t at = 0;        // bytes of it already written
        size_t left = 0;      // bytes of the message still to come
        uint8_t am_id = 0;
        bool active = false;
    } landing;
    // Reassembly of a fragmented message the runtime did not place.
    std::vector<std::byte> reasm;
    size_t reasm_total = 0;
    uint8_t reasm_am = 0;
    bool reasm_active = false;
    // weft::scif::received_mark at our last send past stream_reply_from: a
    // mark that moved since means the peer spoke since, and the next such
    // send answers it (ScifConfig::stream_reply_from).
    uint64_t answer_mark = ~uint64_t{0};
};

struct Completion {
    weft_btl_endpoint_t *ep;
    weft_btl_rdma_cb_t cb;
    void *ctx;
    int status;
};

class ScifModule : public weft::btl::ModuleBase<ScifModule> {
public:
    using Endpoint = ScifEndpoint;
    static constexpr const char *kName = "scif";
    // A closed endpoint waits in endpoints_ for reap(); the runtime's
    // operations on it fail.
    static bool usable(const ScifEndpoint &ep)
    {
        return !(ep.phase == EpPhase::dead && ep.c.state == WEFT_BTL_EP_CLOSED);
    }

    ScifModule(const weft_host_t *host, const weft_btl_component_t *component,
               const ScifConfig &config);
    ~ScifModule();

    // Opens the listening endpoint; WEFT_SUCCESS or what failed (logged).
    int start();

    int reachable(const weft_btl_peer_t *peer, char *why, size_t why_len) const;
    // Rings and eager limit for this job's number of local peers.
    void size_for_job();
    int card(void *buf, size_t *len);
    int connect(const weft_btl_peer_t *peer, weft_btl_endpoint_t **out);
    int send(ScifEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt);
    // send(), or with WEFT_BTL_SEND_NOW only what the ring has room for at
    // once (else WEFT_ERR_AGAIN, nothing taken). WEFT_BTL_SEND_UNORDERED is
    // accepted and kept in order (that satisfies it).
    int sendx(ScifEndpoint &ep, uint8_t am_id, const struct iovec *iov, int iovcnt, uint32_t flags);
    // Inline, in btl_scif_sendi.hpp (every file of the module includes it).
    [[gnu::always_inline]] inline int sendi(ScifEndpoint &ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                                            const void *payload, size_t payload_len);
    int rdma(ScifEndpoint &ep, bool is_put, void *local, size_t len, uint64_t remote_addr,
             const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx);
    int mem_register(void *addr, size_t len, weft_btl_reg_t *reg);
    int mem_deregister(weft_btl_reg_t *reg);
    int progress();
    int wait_fd() const { return epoll_fd_; }
    int prepare_wait();
    int disconnect(ScifEndpoint &ep);
    bool in_progress() const { return in_progress_; }
    unsigned long refused() const { return refused_; }

private:
    void accept_new(int *events);
    // ep's connection when ep is connected with nothing to send or
    // acknowledge, its peer there and no socket check due this round: then
    // polling its ring is all there is to do. Else null (advance()).
    [[gnu::always_inline]] inline weft::scif::Endpoint *plain(const ScifEndpoint &ep) const;
    // A plain endpoint's messages, to the recv upcall; the events.
    [[gnu::always_inline]] inline int receive(ScifEndpoint &ep, weft::scif::Endpoint &s);
    [[gnu::noinline]] void advance(ScifEndpoint &ep, int *events);
    void flush_pending(ScifEndpoint &ep);
    void flush_acks(ScifEndpoint &ep);
    void read_rdv(ScifEndpoint &ep, uint8_t am_id, std::span<const std::byte> payload);
    void rdv_done(ScifEndpoint &ep, std::span<const std::byte> payload);
    int deliver(ScifEndpoint &ep, int budget);
    int deliver_connected(ScifEndpoint &ep, weft::scif::Endpoint &s, int budget);
    int deliver_handshake(ScifEndpoint &ep, weft::scif::Endpoint &s, int budget);
    [[gnu::noinline]] void deliver_other(ScifEndpoint &ep, const weft::scif::Chunk &c);
    bool handle_hello(ScifEndpoint &ep, const std::byte *p, size_t len);
    void handle_reply(ScifEndpoint &ep, uint8_t answer);
    void connected(ScifEndpoint &ep, int *events, bool announce);
    int stream(ScifEndpoint &ep, weft::scif::Endpoint &s, uint8_t am_id, const struct iovec *iov, int iovcnt,
               size_t total);
    // Does a message of total bytes go as fragments (stream()) on ep, whose
    // connection is s, now?
    bool streams(const ScifEndpoint &ep, const weft::scif::Endpoint &s, size_t total) const;
    // Sets sendi's limits from the config: caps.inline_max, and
    // sendi_plain_max_, the largest message it sends without sendi_rare()
    // (the lower of that limit and stream_reply_from).
    void set_sendi_limits()
    {
        c_.caps.inline_max = std::min(config_.eager_limit, config_.stream_from);
        sendi_plain_max_ = std::min(c_.caps.inline_max, config_.stream_reply_from);
    }
    // sendi's rare cases: bad arguments (WEFT_ERR_BAD_PARAM), and a message
    // past stream_reply_from: an answer through send(), which streams it,
    // else whole, as sendi sends (send_whole). Its arguments in one struct:
    // passed one by one, the seventh went on the stack, and GCC then gave
    // sendi a frame pointer and spills that cost every small send 10-13
    // instructions (callgrind).
    struct SendiArgs {
        const void *hdr;
        size_t hdr_len;
        const void *payload;
        size_t payload_len;
        uint8_t am_id;
    };
    [[gnu::noinline]] int sendi_rare(ScifEndpoint &ep, const SendiArgs &a);
    // sendi's state test in one: WEFT_SUCCESS when ep takes a message now
    // (connected, not closing, nothing queued), else why not.
    static int sendi_refusal(const ScifEndpoint &ep)
    {
        if (ep.phase != EpPhase::connected || ep.closing || !ep.pending.empty()) [[unlikely]]
            return ep.closing || ep.phase == EpPhase::dead ? WEFT_ERR_UNREACHABLE : WEFT_ERR_AGAIN;
        return WEFT_SUCCESS;
    }
    // One chunk (or the duplex line, or a cell) on a connected endpoint with
    // nothing queued: sendi's send. Inline, in btl_scif_sendi.hpp.
    [[gnu::always_inline]] inline int send_whole(weft::scif::Endpoint &s, uint8_t am_id, const void *hdr,
                                                 size_t hdr_len, const void *payload, size_t payload_len);
    // Data bytes per fragment stream() writes on s (the first fragment also
    // carries the message's 8-byte total); sendx() sizes its room check by it.
    size_t stream_fragment(const weft::scif::Endpoint &s, size_t total) const;
    bool start_landing(ScifEndpoint &ep, uint8_t am_id, std::span<const std::byte> head, size_t total);
    void land(ScifEndpoint &ep, std::span<const std::byte> data);
    void end_landing(ScifEndpoint &ep, int status);
    // Sets ep's own eager limit (weft_btl_endpoint_t.eager_limit) from how
    // large data reaches its peer; before the runtime learns of it connected.
    void choose_eager_limit(ScifEndpoint &ep) const;
    static double time_single_copy_call();
    ScifEndpoint *find_peer(uint32_t rank, const ScifEndpoint *except);
    uint32_t my_rank() const;
    void finish(ScifEndpoint &ep, weft_btl_ep_state_t state, int status, const char *reason);
    void reap();
    void watch(int epd);
    void set_waiting(bool on);
    bool has_work();
    void disarm(int *events);
    void log_error(const char *fmt, const std::string &arg) const;
    // Counts and logs one refused incoming connection (pid 0: not known).
    void refuse(pid_t pid, const std::string &why);
    // Refuses an accepted connection before its hello was accepted, quietly
    // for the runtime (it never learned of it).
    void refuse_endpoint(ScifEndpoint &ep, const std::string &why);
    std::string check_hello(const ScifEndpoint &ep, const std::byte *p, size_t len) const;
    void apply_accept_policy();
    std::chrono::milliseconds handshake_timeout() const
    {
        return std::chrono::milliseconds(static_cast<long long>(config_.handshake_timeout * 1000));
    }

    const weft_host_t *host_;
    ScifConfig config_;
    size_t sendi_plain_max_ = 0;   // set_sendi_limits()
    int listen_epd_ = -1;
    uint16_t port_ = 0;
    // Our pid, read once: every rendezvous registers its buffer with it in
    // the rkey, and getpid() is a system call (glibc keeps no copy). On the
    // 2-vCPU VM that call was 15% of a 2-rank osu_bcast of 16 KiB (2.12
    // against 1.82 us) and 13% at 64 KiB.
    const uint32_t pid_ = static_cast<uint32_t>(getpid());
    std::vector<std::unique_ptr<ScifEndpoint>> endpoints_;
    std::vector<Completion> completions_;
    std::vector<Completion> completions_running_;   // progress()'s, while it calls them
    bool in_progress_ = false;
    // Some connection's rings still have pages to fault in
    // (sc::populate_rings_step), done in rounds that found nothing.
    bool populating_ = false;
    void populate_some();
    bool sized_ = false;                // size_for_job() ran
    unsigned long rounds_ = 0;
    uint8_t secret_[kSecretBytes] = {};   // in our card; connectors present it
    unsigned long refused_ = 0;
    int epoll_fd_ = -1;      // wait_fd(): the sockets that wake a sleeper
    bool armed_ = false;     // prepare_wait() set the waiting flags
};

} // namespace weft::btl_scif
