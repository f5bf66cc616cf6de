/* SPDX-License-Identifier: BSD-3-Clause */
/* The btl (byte transfer layer) framework: transport components.
 *
 * Objects and lifetimes (component -> modules -> endpoints):
 * - A component (weft_btl_component_t) is loaded once. query() says whether
 *   it can run here; init() creates its modules, one per usable device, NIC
 *   or port, and sets up asynchronous handling of incoming connections.
 * - A module (weft_btl_module_t) is one opened transport instance. It
 *   publishes a business card (card()) through the runtime's modex, answers
 *   reachability per peer with a reason, carries capability data the runtime
 *   scores, and is progressed by the runtime.
 * - An endpoint (weft_btl_endpoint_t) is a module's connection to one peer,
 *   created by start_connect() without blocking; the module reports through
 *   the state upcall when it is connected or has failed.
 *
 * Data arrives through the recv upcall with the active-message id the
 * sender used; the runtime owns the id space (handlers). A module never
 * calls an upcall from inside send()/sendi()/put()/get(): only from
 * progress(), so the runtime may send from a handler without recursion.
 *
 * Ordering: frames sent on one endpoint by send(), sendi() and sendx()
 * without WEFT_BTL_SEND_UNORDERED arrive in the order they were sent. A
 * frame sent with WEFT_BTL_SEND_UNORDERED (only to a module whose caps
 * carry WEFT_BTL_FLAG_UNORDERED) arrives exactly once, but in any order
 * relative to every other frame of the endpoint, ordered or not; so the
 * runtime uses it only for frames that say where their bytes go and are
 * counted by the receiver. An orderly close (disconnect, CLOSED) still
 * follows every frame sent before it, ordered or not.
 *
 * Callers drive a module through the weft_btl_*() wrappers of
 * <weft/btl_inline.h> (included below), never through m->ops->x: the
 * wrappers know which ops are optional and how to tell that one is absent.
 *
 * Growth rules (component ABI 1.0; every member declared below is part of
 * 1.0 except the ops appended after modex_ready: attach_counters,
 * weft_btl_endpoint_t's eager_limit, eager_if_room and single_copy_from,
 * and weft_btl_process_t's node_cores):
 * - Every struct begins with its size, set by whoever fills it in
 *   (weft_btl_module_t and its ops table: the component; weft_btl_process_t,
 *   weft_btl_peer_t and weft_btl_upcalls_t: the runtime; weft_btl_caps_t,
 *   weft_btl_reg_t, weft_btl_placement_t, weft_btl_endpoint_t: the
 *   component).
 * - New members are appended at the end, never inserted, reordered or
 *   removed; a member appended after 1.0 is optional, and its readers check
 *   WEFT_HAS_MEMBER (for ops: WEFT_BTL_HAS_OP, the wrappers) before use. A
 *   change that cannot follow these rules bumps WEFT_COMPONENT_ABI_MAJOR.
 * - weft_btl_module_t and weft_btl_caps_t are frozen: caps is embedded
 *   before the upcalls, and the upcalls are last (below), so neither can
 *   grow without a new ABI major.
 * - weft_btl_module_ops_t: reachable, send, progress and finalize are
 *   mandatory; every other op is optional and may be NULL (the wrappers then
 *   answer WEFT_ERR_NOT_SUPPORTED, wait_fd -1). A table may end after its
 *   last mandatory member (WEFT_BTL_MODULE_OPS_MIN_SIZE): prepare_wait,
 *   sendx, modex_ready and whatever is appended later are then absent.
 * - weft_btl_upcalls_t is the last member of weft_btl_module_t, so it can
 *   grow without moving any other member. The module's size says how much
 *   room it has for the upcalls; the runtime copies only that much
 *   (weft_btl_module_set_upcalls) and sets upcalls.size to what it copied,
 *   so a module reads an upcall only when WEFT_HAS_MEMBER says it got it.
 *   recv, state and accepted are always there; place/placed are optional
 *   (the module also checks them for NULL).
 * - What the runtime checks on each module init() returns, before using it
 *   (weft_btl_module_abi_problem): module size >= WEFT_BTL_MODULE_MIN_SIZE
 *   (everything up to and including upcalls.accepted), an ops table of at
 *   least WEFT_BTL_MODULE_OPS_MIN_SIZE, and the mandatory ops non-NULL.
 *   The component struct itself is checked by the loader (magic, ABI major,
 *   struct_size >= sizeof(weft_btl_component_t) of 1.0, names). A module
 *   that fails is skipped with the reason logged. */
#ifndef WEFT_BTL_H
#define WEFT_BTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <weft/component.h>
#include <weft/host.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_BTL_FRAMEWORK "btl"

struct weft_btl_module;
struct weft_btl_endpoint;
struct weft_btl_placement;

/* Peer classes, decided by the runtime from PMIx node ids. */
typedef enum weft_peer_class {
    WEFT_PEER_SELF = 0,
    WEFT_PEER_SAME_NODE = 1,
    WEFT_PEER_OTHER_NODE = 2
} weft_peer_class_t;

/* A peer as the runtime describes it to modules. */
typedef struct weft_btl_peer {
    size_t size;
    uint32_t rank;
    uint32_t node_id;           /* PMIx node id */
    weft_peer_class_t peer_class;
    const char *hostname;       /* for messages only; never for decisions */
    const void *card;           /* the peer's card from the module of the same component
                                   (same index), or NULL if it published none */
    size_t card_len;
} weft_btl_peer_t;

/* Capability flags. */
#define WEFT_BTL_FLAG_SEND   0x1u   /* active messages (send) */
#define WEFT_BTL_FLAG_INLINE 0x2u   /* sendi: small-message fast path */
#define WEFT_BTL_FLAG_PUT    0x4u   /* RDMA write */
#define WEFT_BTL_FLAG_GET    0x8u   /* RDMA read */
#define WEFT_BTL_FLAG_FD     0x10u  /* wait_fd() gives a descriptor to block on */
#define WEFT_BTL_FLAG_UNORDERED 0x20u  /* sendx() takes WEFT_BTL_SEND_UNORDERED and may
                                          spread such frames over several connections */
#define WEFT_BTL_FLAG_LOCAL_ONLY 0x40u /* all its work comes from this process's own calls
                                          (btl/self): a blocked runtime need not watch it */

/* Flags of sendx(). */
#define WEFT_BTL_SEND_UNORDERED 0x1u   /* this frame may overtake, or be overtaken by, other
                                          frames of the endpoint (see "Ordering" above) */
#define WEFT_BTL_SEND_NOW 0x2u         /* take the frame only if it goes out now, with nothing
                                          queued or copied aside; else WEFT_ERR_AGAIN and
                                          nothing taken. Only to an endpoint that sets
                                          eager_if_room (below) */

/* Exclusivity: a module that reaches a peer excludes modules of lower
 * exclusivity for that peer (self beats shared memory beats networks). */
#define WEFT_BTL_EXCLUSIVITY_SELF 65536u
#define WEFT_BTL_EXCLUSIVITY_SHM 32768u
#define WEFT_BTL_EXCLUSIVITY_HIGH 4096u
#define WEFT_BTL_EXCLUSIVITY_DEFAULT 1024u
#define WEFT_BTL_EXCLUSIVITY_LOW 0u

typedef struct weft_btl_caps {
    size_t size;
    double latency_us;          /* expected one-way small-message latency */
    double bandwidth_mbs;       /* expected bandwidth, MB/s (10^6 bytes) */
    size_t eager_limit;         /* largest message the runtime should send eagerly */
    size_t max_send;            /* largest payload of one send() */
    size_t inline_max;          /* largest header+payload of one sendi() */
    uint32_t exclusivity;
    uint32_t flags;             /* WEFT_BTL_FLAG_* */
    int priority;               /* breaks ties between equally exclusive modules */
} weft_btl_caps_t;

/* Endpoint states reported through the state upcall. */
typedef enum weft_btl_ep_state {
    WEFT_BTL_EP_CONNECTING = 0,
    WEFT_BTL_EP_CONNECTED = 1,
    WEFT_BTL_EP_FAILED = 2,     /* status and reason say why; pending sends are failed */
    WEFT_BTL_EP_CLOSED = 3      /* orderly disconnect by either side */
} weft_btl_ep_state_t;

/* An endpoint: the module allocates it and sets size to sizeof
 * weft_btl_endpoint_t as its btl.h declares it; members appended after 1.0
 * (eager_limit) are read by the runtime only when WEFT_HAS_MEMBER says the
 * module's struct has them. */
typedef struct weft_btl_endpoint {
    size_t size;
    struct weft_btl_module *module;
    uint32_t peer_rank;
    weft_btl_ep_state_t state;  /* written by the module */
    void *runtime_ctx;          /* the runtime's, untouched by the module */

    /* Appended after 1.0 (optional). The largest message the runtime should
     * send eagerly on this connection, when it differs from the module's
     * caps.eager_limit: a module that learns per connection which protocol
     * is faster (btl/scif: whether the kernel lets it copy straight from the
     * peer) sets it before it reports the endpoint CONNECTED (or, for an
     * accepted endpoint, before the accepted upcall). 0: caps.eager_limit.
     * The runtime takes the smaller of this and caps.eager_limit, and
     * ignores it when the user set engine_base_eager_limit. */
    size_t eager_limit;
    /* Appended after 1.0 (optional). Messages longer than the eager limit
     * and up to this size may still go eagerly when the connection has room
     * for them at once: the runtime offers such a message through sendx()
     * with WEFT_BTL_SEND_NOW and sends it by rendezvous when the module
     * answers WEFT_ERR_AGAIN. For a module whose eager copy is faster than
     * its rendezvous while its buffers have room, but costs extra copies
     * once they are full (btl/scif toward a peer it reads with
     * process_vm_readv: a streamed message that finds the ring full is
     * queued by copy). 0: no such range. The runtime takes the smaller of
     * this and caps.eager_limit, and ignores it without sendx or when the
     * user set engine_base_eager_limit. */
    size_t eager_if_room;
    /* Appended after 1.0 (optional). Messages longer than this and up to
     * the eager limit go by rendezvous while no other rendezvous send to
     * the peer is in flight, and eagerly while one is: for a module whose
     * single copy beats its eager copies for a message on its own (a
     * ping-pong, one message to each of several peers) but whose
     * rendezvous handshake, one per message, would stall a window of them
     * (btl/scif where process_vm_readv is cheap). 0: none. The runtime
     * ignores it when the user set engine_base_eager_limit and when it is
     * not below the eager limit. */
    size_t single_copy_from;
} weft_btl_endpoint_t;

/* Registered memory: an opaque handle plus a key the peer needs. */
typedef struct weft_btl_reg {
    size_t size;
    void *addr;
    size_t length;
    uint8_t rkey[64];           /* what a peer passes to put/get to reach this memory */
    size_t rkey_len;
    void *module_ctx;
} weft_btl_reg_t;

typedef void (*weft_btl_rdma_cb_t)(struct weft_btl_endpoint *ep, void *cb_ctx, int status);

/* Who this process is, as the runtime learned it from PMIx. Modules put
 * what they need of it in their card and connection handshakes (a module
 * is created before the job is known, so it learns it here). */
typedef struct weft_btl_process {
    size_t size;
    uint32_t rank;
    uint32_t job_size;
    uint32_t node_id;           /* PMIx node id */
    uint32_t local_rank;        /* among the job's processes on this node */
    uint32_t local_size;
    const char *job_id;         /* the PMIx namespace: unique per job */
    const char *hostname;       /* for messages only */

    /* The card that rank published for the module of m's component with
     * the same index (what weft_btl_peer_t.card would carry), read from the
     * modex. Valid
     * only once the modex is complete: from modex_ready() on. *len is the
     * buffer size on entry, the card size on return. Returns WEFT_SUCCESS,
     * WEFT_ERR_TRUNCATED (buf too small; *len says how much is needed),
     * WEFT_ERR_NOT_FOUND (that rank published no card for this module), or
     * WEFT_ERR_BAD_PARAM (no such rank, or the modex is not complete). Makes
     * no upcall; may be called from modex_ready(). Always set by the
     * runtime (part of ABI 1.0). */
    void *card_ctx;
    int (*peer_card)(void *card_ctx, struct weft_btl_module *m, uint32_t rank, void *buf, size_t *len);

    /* Appended after 1.0 (check WEFT_HAS_MEMBER): the cores of this node the
     * job may use, as the runtime counts them to choose its progress mode
     * (weftrun's count, else hwloc's); 0: not counted (a process alone on
     * its node). local_size > node_cores: the node is oversubscribed, and a
     * peer that waits for a message may not be running when it is sent. */
    uint32_t node_cores;
} weft_btl_process_t;

/* How many leading bytes of a message a module shows the place upcall
 * (fewer only when the message is shorter). */
#define WEFT_BTL_PLACE_HEAD 64u
#define WEFT_BTL_PLACE_IOV 4

/* Where a message being received should land (see upcalls.place). */
typedef struct weft_btl_placement {
    size_t size;                /* set by the module before the call */
    size_t skip;                /* leading bytes the runtime took from head */
    struct iovec iov[WEFT_BTL_PLACE_IOV];
    int iovcnt;
    uint64_t token;             /* the runtime's, passed back to placed() */
} weft_btl_placement_t;

/* What the runtime gives a module: copied into module->upcalls after
 * init(), before the first start_connect or progress, as far as the
 * module has room (see "Growth rules" above). */
typedef struct weft_btl_upcalls {
    size_t size;                /* how much of this struct the module got */
    void *ctx;
    /* A message arrived on ep with active-message id am_id; data is valid
     * only during the call. */
    void (*recv)(void *ctx, struct weft_btl_endpoint *ep, uint8_t am_id, const void *data,
                 size_t len);
    /* ep changed state; status/reason explain failures. */
    void (*state)(void *ctx, struct weft_btl_endpoint *ep, weft_btl_ep_state_t state, int status,
                  const char *reason);
    /* A peer connected to this module on its own initiative; the runtime
     * returns its runtime_ctx for the new endpoint (or NULL to refuse). */
    void *(*accepted)(void *ctx, struct weft_btl_endpoint *ep);

    /* Optional direct placement of large messages (check WEFT_HAS_MEMBER and
     * NULL: a runtime may not offer it). A module that has read the first
     * bytes of a message (head: at least min(len, WEFT_BTL_PLACE_HEAD) of
     * them, or all it has if more) but not the rest may ask where the message
     * should land instead of delivering it through recv. The runtime answers 0
     * to decline (the module then delivers it through recv as usual) or 1 with
     * place filled in: the message's bytes [place->skip, len) go, in order,
     * into place->iov[0..place->iovcnt) (whose lengths add up to len - skip);
     * the first skip bytes are the runtime's and were read by it from head.
     * The module copies what it already holds and receives the rest straight
     * into those buffers, then calls placed(am_id, place->token, WEFT_SUCCESS)
     * from progress(). If the endpoint fails or closes first, it calls
     * placed(am_id, token, error) instead, before the state upcall. Every
     * accepted placement gets exactly one placed() call, and the module writes
     * nothing into the buffers after it. */
    int (*place)(void *ctx, struct weft_btl_endpoint *ep, uint8_t am_id, const void *head,
                 size_t head_len, size_t len, struct weft_btl_placement *place);
    void (*placed)(void *ctx, struct weft_btl_endpoint *ep, uint8_t am_id, uint64_t token, int status);
} weft_btl_upcalls_t;

/* What a module counts about itself (see the op attach_counters): events
 * only it sees. Messages and bytes per peer and protocol are the engine's
 * (weft/counters.h); a module adds nothing to its send fast path.
 * Growth: members are appended; the runtime sets size to what it gave,
 * and the module writes a member only when WEFT_HAS_MEMBER says it is
 * there. Each member has one writer (the module, from its calls and its
 * progress), updated with plain stores; other processes read it. */
typedef struct weft_btl_counters {
    uint64_t size;
    uint64_t connects;          /* endpoints that became CONNECTED (either side began) */
    uint64_t failures;          /* endpoints that FAILED */
    uint64_t again;             /* WEFT_ERR_AGAIN answers: a full ring, socket or queue */
    uint64_t registrations;     /* memory registrations made (mem_register, caches) */
    uint64_t reg_cache_hits;    /* registrations answered from a cache */
    uint64_t rdma_ops;          /* put/get started */
    uint64_t rdma_bytes;
    char last_failure[128];     /* why the last endpoint failed (NUL-terminated) */
} weft_btl_counters_t;

typedef struct weft_btl_module_ops {
    size_t size;
    /* Can this module reach peer? Returns 1 or 0; when 0, writes why. */
    int (*reachable)(struct weft_btl_module *m, const weft_btl_peer_t *peer, char *why,
                     size_t why_len);
    /* The business card published for peers (addresses, ids). *len is the
     * buffer size on entry, the card size on return; WEFT_ERR_TRUNCATED if
     * the buffer is too small. */
    int (*card)(struct weft_btl_module *m, void *buf, size_t *len);
    /* Active message, copy semantics: the data is copied or on the wire when
     * it returns. WEFT_ERR_AGAIN: out of resources now, retry after progress. */
    int (*send)(struct weft_btl_endpoint *ep, uint8_t am_id, const struct iovec *iov, int iovcnt);
    /* Inline fast path for header + payload <= caps.inline_max: no
     * allocation, no lock. WEFT_ERR_AGAIN as above. */
    int (*sendi)(struct weft_btl_endpoint *ep, uint8_t am_id, const void *hdr, size_t hdr_len,
                 const void *payload, size_t payload_len);
    int (*put)(struct weft_btl_endpoint *ep, const void *local, size_t len, uint64_t remote_addr,
               const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx);
    int (*get)(struct weft_btl_endpoint *ep, void *local, size_t len, uint64_t remote_addr,
               const void *rkey, size_t rkey_len, weft_btl_rdma_cb_t cb, void *cb_ctx);
    int (*mem_register)(struct weft_btl_module *m, void *addr, size_t len, weft_btl_reg_t *reg);
    int (*mem_deregister)(struct weft_btl_module *m, weft_btl_reg_t *reg);
    /* Makes progress; returns the number of events handled (>= 0) or an error.
     * Called from inside an upcall it delivers nothing and returns 0, so an
     * upcall is never re-entered (the conformance suite checks this). */
    int (*progress)(struct weft_btl_module *m);
    /* A descriptor that becomes readable when progress() has work, or -1. */
    int (*wait_fd)(struct weft_btl_module *m);
    /* Orderly close of one endpoint; the module frees it after the CLOSED upcall.
     * Operations already accepted are delivered before CLOSED; from the
     * return of disconnect() on, send/sendi/put/get/disconnect on the
     * endpoint fail with an error (never WEFT_ERR_AGAIN). */
    int (*disconnect)(struct weft_btl_endpoint *ep);
    /* Releases the module and all its endpoints. */
    int (*finalize)(struct weft_btl_module *m);
    /* Optional. Called right before the caller blocks on wait_fd(): the module
     * arms its wake-ups (whatever arrives from now on makes wait_fd()
     * readable) and re-checks for work. Returns > 0 when progress() has work
     * already (do not block), 0 when blocking is safe, or an error. The next
     * progress() disarms. It makes no upcall. A module without it keeps
     * wait_fd() readable-on-work unasked. Lets a module keep its fast path
     * free of system calls while the receiver polls. */
    int (*prepare_wait)(struct weft_btl_module *m);

    /* Optional: send() with flags (WEFT_BTL_SEND_*). Without
     * WEFT_BTL_SEND_UNORDERED it is send(). With it (the module's caps have
     * WEFT_BTL_FLAG_UNORDERED) the frame may be reordered as described under
     * "Ordering"; a module may answer WEFT_ERR_AGAIN while its connections are
     * busy rather than copy. */
    int (*sendx)(struct weft_btl_endpoint *ep, uint8_t am_id, const struct iovec *iov, int iovcnt,
                 uint32_t flags);

    /* Optional: called by the runtime once, inside weft_init, after the fence
     * that completes the modex (every rank's card is readable through
     * process->peer_card) and before weft_init returns. A module that wires
     * peers at init (openib's oob cpc) finishes its connections here; it may
     * create endpoints and call the accepted upcall (the runtime is in no
     * handler), but reports states only from progress() as usual. Returns
     * WEFT_SUCCESS or an error (the runtime logs it; the module fails or falls
     * back per peer itself). A module without it connects lazily through
     * start_connect only. */
    int (*modex_ready)(struct weft_btl_module *m);

    /* Optional (appended after 1.0: check WEFT_BTL_HAS_OP, as the wrapper
     * does). The runtime hands the module a zeroed block, block->size set,
     * in its counter page (shared memory other processes read), before the
     * first start_connect; the module keeps its counters there from then
     * on (what it counted before goes in too) until finalize, writing only
     * members within block->size. A module without it keeps no counters
     * anyone can read. */
    int (*attach_counters)(struct weft_btl_module *m, weft_btl_counters_t *block);
} weft_btl_module_ops_t;

typedef struct weft_btl_module {
    size_t size;
    const struct weft_btl_component *component;
    const weft_btl_module_ops_t *ops;
    weft_btl_caps_t caps;
    char name[64];              /* "tcp/eth0", "self" */
    void *module_ctx;           /* the component's */
    /* This process in its job, set by the runtime with the upcalls (before
     * card() is asked); valid until the module is finalized. NULL when no
     * runtime is around (weft_info --explain, a test harness). */
    const weft_btl_process_t *process;
    /* Set by the runtime (weft_btl_module_set_upcalls). Last, so that it
     * grows without moving the members above it. The price: the module
     * struct and its embedded caps gain no members after 1.0 without a new
     * ABI major (members after them would move); what modules must say
     * later goes into new ops, as the ops table grows on its own. */
    weft_btl_upcalls_t upcalls;
} weft_btl_module_t;

/* The smallest module and ops table ABI 1.0 accepts (see "Growth rules"). */
#define WEFT_BTL_MODULE_MIN_SIZE                                                                   \
    (offsetof(weft_btl_module_t, upcalls) + offsetof(weft_btl_upcalls_t, accepted) +             \
     sizeof(((weft_btl_upcalls_t *)0)->accepted))
#define WEFT_BTL_MODULE_OPS_MIN_SIZE                                                               \
    (offsetof(weft_btl_module_ops_t, finalize) + sizeof(((weft_btl_module_ops_t *)0)->finalize))

typedef struct weft_btl_component {
    weft_component_t base;

    /* init: create up to max_modules modules for the devices query() found,
     * storing them in modules[] and their count in *num_modules. */
    int (*init)(const weft_host_t *host, struct weft_btl_module **modules, int max_modules,
                int *num_modules);
    /* start_connect: begin a non-blocking connection from module to peer.
     * *endpoint is valid at once; sends are accepted once it is CONNECTED
     * (a module may also queue them while CONNECTING). */
    int (*start_connect)(struct weft_btl_module *module, const weft_btl_peer_t *peer,
                         struct weft_btl_endpoint **endpoint);
} weft_btl_component_t;

#ifdef __cplusplus
}
#endif

#include <weft/btl_inline.h>

#endif
