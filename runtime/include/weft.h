/* SPDX-License-Identifier: BSD-3-Clause */
/* weft: the application interface.
 *
 * A process starts with weft_init() and ends with weft_finalize(). Under a
 * PMIx launcher (weftrun, Open MPI's mpirun, srun --mpi=pmix, prterun) it
 * learns its rank, the job size and where every rank lives; started on its
 * own it is a singleton of size 1.
 *
 * Every call returns a weft status (0 = success, negative = error; see
 * weft/status.h); weft_error_message() says what failed and what to do.
 * This first part holds the process runtime; messaging (match entries,
 * memory descriptors, event queues, tagged send/recv) builds on it. */
#ifndef WEFT_H
#define WEFT_H

#include <stddef.h>
#include <stdint.h>

#include <weft/btl.h>
#include <weft/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the runtime: parameters, PMIx, transports, the modex. argc/argv
 * may be NULL. Calling it twice is WEFT_ERR_EXISTS. */
int weft_init(int *argc, char ***argv);
/* Disconnects, leaves the job cleanly (the launcher counts this rank as
 * finished), releases everything. */
int weft_finalize(void);
int weft_initialized(void);

/* The job as this process sees it; size-first so it can grow. */
typedef struct weft_job_info {
    size_t size;               /* = sizeof(weft_job_info_t), set by the caller */
    uint32_t rank;
    uint32_t job_size;
    uint32_t local_rank;       /* among this job's processes on this node */
    uint32_t local_size;
    uint32_t node_id;          /* PMIx node id */
    uint32_t num_nodes;
    int singleton;             /* nonzero: started without a launcher */
    char nspace[256];          /* PMIx namespace */
    char hostname[256];
    char progress_mode[16];    /* "busy", "yield" or "block" */
} weft_job_info_t;
int weft_job_info(weft_job_info_t *info);
/* Shorthands; -1 before weft_init. */
int weft_rank(void);
int weft_size(void);

/* What the runtime knows about one peer; asking resolves the peer's
 * transport choice (from the modex) but does not connect. */
typedef struct weft_peer_info {
    size_t size;               /* = sizeof(weft_peer_info_t), set by the caller */
    uint32_t rank;
    uint32_t node_id;
    weft_peer_class_t peer_class;
    uint32_t cards_found;      /* business cards of this process's modules found for the peer */
    uint32_t modules;          /* modules in this process */
    int reachable;
    char hostname[256];
    char transports[256];      /* "self", "scif + tcp (large messages shared)", or "none" */
    char state[16];            /* "resolved", "connecting", "connected", "failed" */
    char explanation[2048];    /* per module: chosen / excluded / unreachable and why */
} weft_peer_info_t;
int weft_peer_info(uint32_t rank, weft_peer_info_t *info);

/* Connects to a peer now (connections are otherwise made on first use, or
 * all at init with rte_base_preconnect=true) and waits at most timeout_ms
 * (< 0: rte_base_connect_timeout). */
int weft_connect(uint32_t rank, int timeout_ms);

/* Makes progress on every transport once; the number of events handled. */
int weft_progress(void);

/* One pass of a caller's own wait loop: weft_progress() and, when it found
 * nothing, what weft's own waits do on an idle pass in the progress mode
 * (rte_base_progress): busy spins for a while (its length adapts to whether
 * waits end while spinning) and then yields the core on each pass, yield
 * yields, block yields (this call never sleeps: the caller has its own work
 * to check between passes). *idle_passes must start at 0 and is kept
 * between passes of one wait; it counts the idle passes in a row. Returns
 * the number of events handled. */
int weft_progress_wait(int *idle_passes);

/* ---- Observability: parameters and counters, by index (the MPI layer's
 * MPI_T is built on these; weft/counters.h is the page layout other
 * processes read). */

/* Parameters may be listed, read and set before weft_init:
 * weft_params_open() opens the framework (its parameters, its components'
 * parameters) if weft_init has not, and weft_init then uses it; each open
 * is matched by a weft_params_close(). Strings handed out stay valid until
 * the last close (or weft_finalize, when it came later). */
int weft_params_open(void);
int weft_params_close(void);
typedef struct weft_param_desc {
    size_t size;                /* = sizeof(weft_param_desc_t), set by the caller */
    const char *name;           /* full name: "btl_tcp_eager_limit" */
    const char *framework;      /* "btl", "engine", "mca" */
    const char *component;      /* "tcp", "base", "" for a framework's selection */
    const char *help;
    weft_param_type_t type;
    int level;                  /* 1..9 (WEFT_LEVEL_*) */
    int settable;               /* nonzero: weft_param_set may change it now */
} weft_param_desc_t;
/* The number of parameters (registration order is their index). */
int weft_param_count(void);
int weft_param_describe(int index, weft_param_desc_t *desc);
/* The value as text into value[0..len) (WEFT_ERR_TRUNCATED, cut, when it
 * does not fit) and, if source is not NULL, where it came from ("default",
 * "environment", "file (path:line)", "api", ...) as a static or
 * registry-owned string. */
int weft_param_get(int index, char *value, size_t len, const char **source);
/* Sets it from the API source (the highest precedence). Parameters are read
 * when weft_init runs: once it has, every set is refused with
 * WEFT_ERR_NOT_AVAILABLE (settable says so). A bad value: WEFT_ERR_BAD_PARAM
 * and the message of weft_error_message(). */
int weft_param_set(int index, const char *value);

/* Counters (weft/counters.h) by name; describing works at any time,
 * reading between weft_init and weft_finalize (WEFT_ERR_NOT_AVAILABLE
 * otherwise). */
typedef enum weft_counter_scope {
    WEFT_COUNTER_PROCESS = 0,   /* one value per process */
    WEFT_COUNTER_PEER = 1,      /* one value per peer rank */
    WEFT_COUNTER_MODULE = 2     /* one value per btl module (weft_counter_modules) */
} weft_counter_scope_t;
typedef enum weft_counter_kind {
    WEFT_COUNTER_COUNT = 0,     /* only grows */
    WEFT_COUNTER_LEVEL = 1,     /* goes up and down (a depth, a duration) */
    WEFT_COUNTER_HIGHWATER = 2  /* the most a level ever was */
} weft_counter_kind_t;
typedef struct weft_counter_desc {
    size_t size;                /* = sizeof(weft_counter_desc_t), set by the caller */
    const char *name;           /* "peer_eager_sent_bytes" */
    const char *description;
    const char *unit;           /* "messages", "bytes", "events", "ns" */
    weft_counter_scope_t scope;
    weft_counter_kind_t kind;
} weft_counter_desc_t;
int weft_counter_count(void);
int weft_counter_describe(int index, weft_counter_desc_t *desc);
/* The value now; which: the peer rank (PEER), the module index (MODULE),
 * ignored (PROCESS). */
int weft_counter_read(int index, uint32_t which, uint64_t *value);
/* The btl modules with counters, and the name of each ("tcp/eth0"). */
int weft_counter_modules(void);
int weft_counter_module_name(uint32_t module, char *name, size_t len);

/* Waits until every rank of the job has called it (a dissemination
 * barrier over the transports). */
int weft_barrier(void);

/* ---------------------------------------------------------------------
 * Portals: match entries, memory descriptors, event queues, put and get.
 *
 * Each process has a table of WEFT_MAX_PORTALS portals. A portal holds a
 * list of match entries (ME); an incoming put or get is matched against
 * them in list order: the initiator must be the ME's match id (or it is
 * WEFT_RANK_ANY) and (incoming bits ^ match bits) & ~ignore bits must be 0.
 * The memory descriptor (MD) attached to the first ME that matches and
 * accepts the operation receives the data (put) or provides it (get).
 * Operations on MDs are reported as events in the MD's event queue (EQ).
 *
 * An incoming put that matches nothing is dropped (counted, and the
 * initiator's ACK says WEFT_ERR_NO_MATCH), unless the portal is "lazy":
 * then it waits (in a bounded unexpected queue) for an ME to be attached.
 *
 * All calls of one process must come from one thread at a time.
 * --------------------------------------------------------------------- */

#define WEFT_MAX_PORTALS 64
/* Portal used by the tagged send/recv calls below; lazy. Its receives are
 * the tagged ones, so weft_me_attach refuses it. */
#define WEFT_PT_TAGGED 63
#define WEFT_RANK_ANY UINT32_MAX

/* Handles name engine objects; a stale or forged handle is an error
 * (WEFT_ERR_BAD_PARAM), never a crash. The zero handle is "none". */
typedef struct weft_handle { uint64_t cookie; } weft_handle_t;
typedef weft_handle_t weft_me_t;
typedef weft_handle_t weft_md_t;
typedef weft_handle_t weft_eq_t;
#ifdef __cplusplus
#define WEFT_HANDLE_NONE (weft_handle_t{0})
#else
#define WEFT_HANDLE_NONE ((weft_handle_t){0})
#endif

typedef enum weft_unlink { WEFT_RETAIN = 0, WEFT_UNLINK = 1 } weft_unlink_t;
typedef enum weft_ins_pos { WEFT_INS_BEFORE = 0, WEFT_INS_AFTER = 1 } weft_ins_pos_t;
typedef enum weft_ack_req { WEFT_NOACK_REQ = 0, WEFT_ACK_REQ = 1 } weft_ack_req_t;

/* MD options. */
#define WEFT_MD_OP_PUT        0x01u  /* accepts incoming puts */
#define WEFT_MD_OP_GET        0x02u  /* answers incoming gets */
#define WEFT_MD_MANAGE_REMOTE 0x04u  /* the initiator's offset is used; else a local
                                        offset advances with each operation */
#define WEFT_MD_TRUNCATE      0x08u  /* accept operations longer than the space
                                        left, truncating them */
#define WEFT_MD_ACK_DISABLE   0x10u  /* never send ACKs for puts into this MD */
#define WEFT_MD_MAX_SIZE      0x20u  /* an operation may use at most max_size bytes */
#define WEFT_MD_THRESH_INF (-1)

typedef struct weft_md_desc {
    void *start;
    size_t length;
    int threshold;          /* operations before the MD is used up; WEFT_MD_THRESH_INF */
    size_t max_size;        /* with WEFT_MD_MAX_SIZE */
    unsigned options;       /* WEFT_MD_* */
    void *user_ptr;         /* returned in events */
    weft_eq_t eq;           /* WEFT_HANDLE_NONE: no events */
} weft_md_desc_t;

typedef enum weft_event_kind {
    WEFT_EVENT_SEND = 1,    /* initiator: the put's data left the MD (it may be reused) */
    WEFT_EVENT_ACK = 2,     /* initiator: the target acknowledged a put */
    WEFT_EVENT_REPLY = 3,   /* initiator: a get's data arrived in the MD */
    WEFT_EVENT_PUT = 4,     /* target: a put landed in the MD */
    WEFT_EVENT_GET = 5,     /* target: a get read from the MD */
    WEFT_EVENT_UNLINK = 6   /* the MD was unlinked by weft_md_unlink */
} weft_event_kind_t;

typedef struct weft_event {
    weft_event_kind_t type;
    uint32_t initiator;     /* rank that started the operation */
    uint32_t target;        /* rank it was aimed at */
    unsigned portal;
    uint64_t match_bits;
    size_t rlength;         /* bytes requested */
    size_t mlength;         /* bytes actually moved */
    size_t offset;          /* where in the MD */
    weft_md_t md;
    void *md_start;
    void *md_user_ptr;
    uint64_t hdr_data;      /* from the initiator's put */
    int status;             /* WEFT_SUCCESS or the error of the operation */
    int unlinked;           /* the MD was unlinked with this event */
    uint64_t sequence;      /* per-EQ, increasing */
} weft_event_t;

typedef void (*weft_eq_handler_t)(const weft_event_t *event);

/* The id of this process (its rank) in the job. */
int weft_get_id(uint32_t *rank);

int weft_eq_alloc(unsigned count, weft_eq_handler_t handler, weft_eq_t *eq);
int weft_eq_free(weft_eq_t eq);
/* Waits at most timeout_ms (0: just test; < 0: without limit) for an
 * event in any of eqs; WEFT_ERR_TIMEOUT when none came, WEFT_ERR_OVERFLOW
 * (with the event) when that EQ had to drop events. */
int weft_eq_poll(const weft_eq_t *eqs, int neq, int timeout_ms, weft_event_t *event, int *which);

int weft_me_attach(unsigned portal, uint32_t match_rank, uint64_t match_bits, uint64_t ignore_bits,
                   weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *me);
/* Inserts relative to an existing ME of the same portal. */
int weft_me_insert(weft_me_t current, uint32_t match_rank, uint64_t match_bits,
                   uint64_t ignore_bits, weft_unlink_t unlink, weft_ins_pos_t pos, weft_me_t *me);
int weft_me_unlink(weft_me_t me);
/* Marks a portal lazy: unmatched puts wait for an ME instead of being dropped. */
int weft_portal_set_lazy(unsigned portal, int lazy);

int weft_md_attach(weft_me_t me, const weft_md_desc_t *desc, weft_unlink_t unlink, weft_md_t *md);
int weft_md_bind(const weft_md_desc_t *desc, weft_unlink_t unlink, weft_md_t *md);
int weft_md_unlink(weft_md_t md);

int weft_put(weft_md_t md, weft_ack_req_t ack, uint32_t target, unsigned portal, uint64_t match_bits,
             size_t offset, uint64_t hdr_data);
int weft_get(weft_md_t md, uint32_t target, unsigned portal, uint64_t match_bits, size_t offset);

/* ---------------------------------------------------------------------
 * Tagged messages, MPI style (on portal WEFT_PT_TAGGED).
 * --------------------------------------------------------------------- */
#define WEFT_ANY_SOURCE WEFT_RANK_ANY
#define WEFT_ANY_TAG (-1)

typedef struct weft_request *weft_request_t;
#define WEFT_REQUEST_NULL ((weft_request_t)0)

typedef struct weft_msg_status {
    uint32_t source;
    int32_t tag;
    size_t count;           /* bytes received (after truncation) */
    int error;              /* WEFT_SUCCESS, WEFT_ERR_TRUNCATED, or a transport error */
} weft_msg_status_t;

/* Tags are >= 0. A receive buffer shorter than the message completes with
 * error WEFT_ERR_TRUNCATED and count = len. */
int weft_isend(const void *buf, size_t len, uint32_t dest, int32_t tag, weft_request_t *req);
int weft_irecv(void *buf, size_t len, uint32_t source, int32_t tag, weft_request_t *req);
int weft_send(const void *buf, size_t len, uint32_t dest, int32_t tag);
int weft_recv(void *buf, size_t len, uint32_t source, int32_t tag, weft_msg_status_t *status);
/* Completion: the request is freed and set to WEFT_REQUEST_NULL. The
 * return value is the operation's error (also in status->error). */
int weft_wait(weft_request_t *req, weft_msg_status_t *status);
int weft_test(weft_request_t *req, int *done, weft_msg_status_t *status);
int weft_waitall(int n, weft_request_t *reqs, weft_msg_status_t *statuses);
int weft_waitany(int n, weft_request_t *reqs, int *index, weft_msg_status_t *status);
/* Cancels a receive no message has matched yet: it completes (wait/test)
 * with WEFT_ERR_CANCELED and count 0. A matched receive or a send is not
 * canceled; it completes as usual. */
int weft_cancel(weft_request_t *req);
/* Gives up the handle: a send still completes in the background, a receive
 * not yet matched is withdrawn (no message goes to it). */
int weft_request_free(weft_request_t *req);
/* Is a message that matches (source, tag) waiting to be received? Without
 * receiving it: *flag and, when set, status (source, tag, full count).
 * weft_probe waits for one. */
int weft_iprobe(uint32_t source, int32_t tag, int *flag, weft_msg_status_t *status);
int weft_probe(uint32_t source, int32_t tag, weft_msg_status_t *status);

/* Contexts: tagged messages sent in one context only match receives and
 * probes of the same context, so libraries on top of weft keep their
 * traffic apart (the MPI layer gives each communicator two). The calls
 * above use WEFT_CONTEXT_DEFAULT; 1 .. WEFT_CONTEXT_FIRST_FREE-1 are the
 * engine's own and refused. Completion as above (weft_wait, weft_test...). */
#define WEFT_CONTEXT_DEFAULT 0u
#define WEFT_CONTEXT_FIRST_FREE 16u
/* weft_isend_ctx flag: the send completes only once the receiver has
 * matched the message (MPI_Ssend), whatever its size. */
#define WEFT_SEND_SYNC 0x1u
/* weft_isend_ctx flag: when the send is complete on return (a small
 * message that went out whole), *req is WEFT_REQUEST_NULL instead of a
 * completed request: nothing to wait on or free. A send that is still on
 * its way, or that failed, gets a request as without the flag. */
#define WEFT_SEND_DONE_NULL 0x2u
/* weft_isend_ctx flag: the receiver waits for this message and passes it
 * on (a broadcast's inner hop): it goes eagerly when the transport can
 * take it now, even past the size from which a message on its own would
 * go by single copy, and up to the transport's own eager limit where the
 * connection's is lower. The handshake of a single copy would put a round
 * trip on every hop of the chain. */
#define WEFT_SEND_FORWARD 0x4u
int weft_isend_ctx(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context, unsigned flags,
                   weft_request_t *req);
int weft_send_ctx(const void *buf, size_t len, uint32_t dest, int32_t tag, uint32_t context);
int weft_irecv_ctx(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_request_t *req);
/* weft_irecv_flags flag: the caller reads the data as soon as the receive
 * completes (a reduction combines it at once). This process's core then
 * copies all of a large message itself, so the data lands in its cache,
 * instead of having the sender's core write part of it (engine_base_rndv_split),
 * which is faster for data nobody reads soon. */
#define WEFT_RECV_READ_AT_ONCE 0x1u
int weft_irecv_flags(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, unsigned flags,
                     weft_request_t *req);
int weft_recv_ctx(void *buf, size_t len, uint32_t source, int32_t tag, uint32_t context, weft_msg_status_t *status);
int weft_iprobe_ctx(uint32_t source, int32_t tag, uint32_t context, int *flag, weft_msg_status_t *status);

/* Ends the whole job with status: the launcher kills every rank and exits
 * with it. Does not return. */
void weft_abort(int status, const char *message);

/* The message of the last failed call in this thread ("" if none). */
const char *weft_error_message(void);

#ifdef __cplusplus
}
#endif
#endif
