/* SPDX-License-Identifier: BSD-3-Clause */
/* btl/example: a complete weft transport in one C file, written against the
 * installed headers only (<weft/btl.h>, which brings component.h and
 * host.h). docs/writing-a-component.md walks through it.
 *
 * The transport: one Unix datagram socket per process, bound to a name the
 * kernel picks in the abstract namespace (nothing on disk; the name dies
 * with the process). Its business card is that name. A frame is one
 * datagram: an 8-byte header (active-message id, kind, sender's rank) and
 * the payload. Unix datagrams are reliable and keep their order between two
 * sockets, and a full receiver makes a non-blocking send fail with EAGAIN,
 * which is exactly the WEFT_ERR_AGAIN that btl.h asks for. So the module
 * needs no connection handshake, no acknowledgements and no send queue.
 *
 * Who sent a frame: the kernel reports the sender's socket name, and the
 * frame claims a rank. The frame is taken only when that name is the card
 * the claimed rank published (no other process can bind a name that is in
 * use), so a local stranger cannot inject frames as a rank of the job.
 *
 * What it leaves out, as a tutorial: RDMA (put/get), the inline sendi, and
 * reaching other nodes. The engine then sends large messages as a
 * rendezvous of max_send chunks, which is slower but correct. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <weft/btl.h>

enum {
    FRAME_HEADER = 8,      /* am_id, kind, 2 zero bytes, sender rank */
    MAX_SEND = 256 * 1024, /* payload of one datagram, if the send buffer allows */
    MAX_IOV = 15,          /* user pieces of one send (plus our header) */
    KIND_DATA = 0,         /* an active message */
    KIND_BYE = 1,          /* the sender disconnected this endpoint */
    RECV_BATCH = 64        /* frames one progress() call delivers at most */
};

/* An endpoint. The C struct the runtime sees comes first, so the pointer
 * we hand out converts back to ours. */
struct example_ep {
    weft_btl_endpoint_t c;
    struct sockaddr_un peer; /* the peer's socket: its card */
    socklen_t peer_len;
    int report;       /* a state progress() still owes the runtime, or -1 */
    char reason[128]; /* why, for FAILED */
    int closing;      /* disconnect() was called: takes nothing new */
    struct example_ep *next;
};

struct example_module {
    weft_btl_module_t c; /* first, as for endpoints */
    const weft_host_t *host;
    int fd;
    struct sockaddr_un self;
    socklen_t self_len;
    struct example_ep *eps; /* a list: a real btl would index by rank */
    int in_progress;        /* set while progress() makes upcalls */
    unsigned long dropped;  /* frames refused (bad sender, bad size) */
    size_t max_send;        /* MAX_SEND, or less where the send buffer is smaller */
    unsigned char frame[FRAME_HEADER + MAX_SEND];
};

static const weft_btl_module_ops_t example_ops;
extern WEFT_EXPORT const weft_btl_component_t weft_btl_example_component;
static struct example_module *the_module; /* the one module of this process */

static const weft_component_t *self(void) { return &weft_btl_example_component.base; }

/* ---- the component: parameters, query, init ------------------------- */

static int example_open(const weft_host_t *host)
{
    /* Parameters are registered by their short name; the framework makes
     * the full name btl_example_priority and reads every source for it. */
    weft_param_def_t def = {
        .size = sizeof def,
        .name = "priority",
        .type = WEFT_PARAM_INT,
        .default_value = "10",
        .level = WEFT_LEVEL_TUNER_DETAIL,
        .help = "Selection priority of btl/example among transports of equal exclusivity (higher wins).",
    };
    return host->param_register(self(), &def);
}

static int example_query(const weft_host_t *host, weft_query_result_t *result)
{
    int64_t priority = 10;
    host->param_get_int("btl_example_priority", &priority);
    result->available = 1;
    result->priority = (int)priority;
    snprintf(result->reason, sizeof result->reason, "Unix datagrams to processes of this node");
    return WEFT_SUCCESS;
}

static int example_init(const weft_host_t *host, weft_btl_module_t **modules, int max_modules,
                        int *num_modules)
{
    if (!num_modules || !modules || max_modules < 1)
        return WEFT_ERR_BAD_PARAM;
    *num_modules = 0;
    if (the_module)
        return WEFT_ERR_EXISTS;
    struct example_module *m = calloc(1, sizeof *m);
    if (!m)
        return WEFT_ERR_NO_MEMORY;
    m->host = host;
    m->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* Binding only the address family asks the kernel for a fresh name. */
    struct sockaddr_un any = {.sun_family = AF_UNIX};
    m->self_len = sizeof m->self;
    if (m->fd < 0 || bind(m->fd, (struct sockaddr *)&any, sizeof(sa_family_t)) != 0 ||
        getsockname(m->fd, (struct sockaddr *)&m->self, &m->self_len) != 0) {
        host->log(self(), WEFT_LOG_ERROR, "cannot make its Unix datagram socket: %s", strerror(errno));
        if (m->fd >= 0)
            close(m->fd);
        free(m);
        return WEFT_ERR_NOT_AVAILABLE;
    }
    /* The kernel refuses a datagram longer than the send buffer (less 32
     * bytes), so ask for a large buffer and take what it grants. */
    int sndbuf = 1 << 20;
    socklen_t optlen = sizeof sndbuf;
    setsockopt(m->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (getsockopt(m->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &optlen) != 0 || sndbuf < 4096)
        sndbuf = 4096;
    m->max_send = (size_t)sndbuf - 64 - FRAME_HEADER;
    if (m->max_send > MAX_SEND)
        m->max_send = MAX_SEND;
    int64_t priority = 10;
    host->param_get_int("btl_example_priority", &priority);
    m->c.size = sizeof m->c;
    m->c.component = &weft_btl_example_component;
    m->c.ops = &example_ops;
    m->c.caps = (weft_btl_caps_t){
        .size = sizeof(weft_btl_caps_t),
        .latency_us = 5.0,
        .bandwidth_mbs = 2000.0,
        .eager_limit = m->max_send < 16 * 1024 ? m->max_send : 16 * 1024,
        .max_send = m->max_send,
        .exclusivity = WEFT_BTL_EXCLUSIVITY_LOW, /* never displaces a real transport */
        .flags = WEFT_BTL_FLAG_SEND | WEFT_BTL_FLAG_FD,
        .priority = (int)priority,
    };
    snprintf(m->c.name, sizeof m->c.name, "example");
    the_module = m;
    modules[0] = &m->c;
    *num_modules = 1;
    return WEFT_SUCCESS;
}

/* ---- checked conversions from the runtime's pointers ----------------- */

/* Ours when its ops table is ours: no handle map needed. */
static struct example_module *module_of(weft_btl_module_t *m)
{
    return m && m->ops == &example_ops ? (struct example_module *)m : NULL;
}

static struct example_ep *ep_of(weft_btl_endpoint_t *ep)
{
    return ep && module_of(ep->module) ? (struct example_ep *)ep : NULL;
}

static void write_why(char *why, size_t why_len, const char *text)
{
    if (why && why_len > 0)
        snprintf(why, why_len, "%s", text);
}

/* A card is a socket name: at least one byte, at most sun_path. */
static int card_to_address(const void *card, size_t len, struct sockaddr_un *addr, socklen_t *addr_len)
{
    if (!card || len == 0 || len > sizeof addr->sun_path)
        return WEFT_ERR_BAD_PARAM;
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    memcpy(addr->sun_path, card, len);
    *addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    return WEFT_SUCCESS;
}

static struct example_ep *new_endpoint(struct example_module *m, uint32_t rank,
                                       const struct sockaddr_un *peer, socklen_t peer_len,
                                       weft_btl_ep_state_t state)
{
    struct example_ep *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->c = (weft_btl_endpoint_t){.size = sizeof e->c, .module = &m->c, .peer_rank = rank, .state = state};
    e->peer = *peer;
    e->peer_len = peer_len;
    e->report = -1;
    e->next = m->eps;
    m->eps = e;
    return e;
}

/* The endpoint to rank, preferring a live one to one being closed. */
static struct example_ep *find_endpoint(struct example_module *m, uint32_t rank)
{
    struct example_ep *closing = NULL;
    for (struct example_ep *e = m->eps; e; e = e->next)
        if (e->c.peer_rank == rank) {
            if (!e->closing)
                return e;
            closing = e;
        }
    return closing;
}

static void forget_endpoint(struct example_module *m, struct example_ep *gone)
{
    for (struct example_ep **link = &m->eps; *link; link = &(*link)->next)
        if (*link == gone) {
            *link = gone->next;
            free(gone);
            return;
        }
}

/* Upcalls are made from progress() only: other calls leave a report. */
static void owe_state(struct example_ep *e, weft_btl_ep_state_t state, const char *reason)
{
    e->report = (int)state;
    snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
}

/* ---- module ops -------------------------------------------------------- */

static int op_reachable(weft_btl_module_t *mod, const weft_btl_peer_t *peer, char *why, size_t why_len)
{
    struct sockaddr_un addr;
    socklen_t len;
    if (!module_of(mod) || !peer) {
        write_why(why, why_len, "btl/example: reachable() needs a btl/example module and a peer");
        return 0;
    }
    if (peer->peer_class == WEFT_PEER_OTHER_NODE) {
        write_why(why, why_len, "btl/example reaches only processes of this node");
        return 0;
    }
    if (card_to_address(peer->card, peer->card_len, &addr, &len) != WEFT_SUCCESS) {
        write_why(why, why_len, "the peer published no btl/example card");
        return 0;
    }
    return 1;
}

static int op_card(weft_btl_module_t *mod, void *buf, size_t *len)
{
    struct example_module *m = module_of(mod);
    if (!m || !len)
        return WEFT_ERR_BAD_PARAM;
    const size_t need = m->self_len - offsetof(struct sockaddr_un, sun_path);
    const size_t room = *len;
    *len = need;
    if (room < need || !buf)
        return WEFT_ERR_TRUNCATED;
    memcpy(buf, m->self.sun_path, need);
    return WEFT_SUCCESS;
}

static int send_frame(struct example_ep *e, uint8_t am_id, uint8_t kind, const struct iovec *iov, int iovcnt)
{
    struct example_module *m = (struct example_module *)e->c.module;
    unsigned char header[FRAME_HEADER] = {am_id, kind, 0, 0};
    const uint32_t me = m->c.process ? m->c.process->rank : 0;
    memcpy(header + 4, &me, sizeof me); /* same node: host byte order */
    struct iovec pieces[MAX_IOV + 1] = {{header, sizeof header}};
    for (int i = 0; i < iovcnt; ++i)
        pieces[i + 1] = iov[i];
    struct msghdr msg = {.msg_name = &e->peer,
                         .msg_namelen = e->peer_len,
                         .msg_iov = pieces,
                         .msg_iovlen = (size_t)iovcnt + 1};
    if (sendmsg(m->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
        return WEFT_SUCCESS;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return WEFT_ERR_AGAIN; /* the peer's queue is full: it frees up as the peer progresses */
    /* ECONNREFUSED, ENOENT: nobody has the name any more, the peer is gone. */
    char reason[96];
    snprintf(reason, sizeof reason, "sending to rank %u failed: %s", e->c.peer_rank, strerror(errno));
    owe_state(e, WEFT_BTL_EP_FAILED, reason);
    e->closing = 1;
    return WEFT_ERR_UNREACHABLE;
}

static int op_send(weft_btl_endpoint_t *ep, uint8_t am_id, const struct iovec *iov, int iovcnt)
{
    struct example_ep *e = ep_of(ep);
    if (!e || iovcnt < 0 || iovcnt > MAX_IOV || (iovcnt > 0 && !iov))
        return WEFT_ERR_BAD_PARAM;
    if (e->closing)
        return WEFT_ERR_BAD_PARAM; /* disconnected or failed: never AGAIN */
    size_t total = 0;
    for (int i = 0; i < iovcnt; ++i) {
        if (!iov[i].iov_base && iov[i].iov_len > 0)
            return WEFT_ERR_BAD_PARAM;
        total += iov[i].iov_len;
    }
    if (total > ((struct example_module *)ep->module)->max_send)
        return WEFT_ERR_BAD_PARAM; /* caps.max_send says so; checked before anything is sent */
    return send_frame(e, am_id, KIND_DATA, iov, iovcnt);
}

/* The peer learns of an orderly close from a BYE frame, which follows every
 * frame sent before it. */
static int op_disconnect(weft_btl_endpoint_t *ep)
{
    struct example_ep *e = ep_of(ep);
    if (!e || e->closing)
        return WEFT_ERR_BAD_PARAM;
    send_frame(e, 0, KIND_BYE, NULL, 0); /* best effort: a peer that is gone needs no BYE */
    e->closing = 1;
    owe_state(e, WEFT_BTL_EP_CLOSED, NULL);
    return WEFT_SUCCESS;
}

static int op_wait_fd(weft_btl_module_t *mod)
{
    struct example_module *m = module_of(mod);
    return m ? m->fd : -1;
}

/* The socket wakes a sleeper for frames, not for the reports progress()
 * owes: with one owed, the caller must not block. */
static int op_prepare_wait(weft_btl_module_t *mod)
{
    struct example_module *m = module_of(mod);
    if (!m)
        return WEFT_ERR_BAD_PARAM;
    for (struct example_ep *e = m->eps; e; e = e->next)
        if (e->report >= 0)
            return 1;
    return 0;
}

/* Makes the state upcalls owed; frees endpoints that are done. */
static int deliver_reports(struct example_module *m)
{
    int events = 0;
    struct example_ep *next;
    /* Only progress() frees endpoints, so `next` survives the upcall; one
     * the upcall creates is reported on the next pass. */
    for (struct example_ep *e = m->eps; e; e = next) {
        next = e->next;
        if (e->report < 0)
            continue;
        const weft_btl_ep_state_t state = (weft_btl_ep_state_t)e->report;
        e->report = -1;
        e->c.state = state;
        ++events;
        m->c.upcalls.state(m->c.upcalls.ctx, &e->c, state,
                           state == WEFT_BTL_EP_FAILED ? WEFT_ERR_UNREACHABLE : WEFT_SUCCESS, e->reason);
        if (state == WEFT_BTL_EP_FAILED || state == WEFT_BTL_EP_CLOSED)
            forget_endpoint(m, e); /* after the upcall, as btl.h promises */
    }
    return events;
}

enum frame_verdict { FRAME_TAKE, FRAME_IGNORE, FRAME_DROP };

/* What to do with a frame from `from` claiming `rank`: take it on *out,
 * ignore it (it is for an endpoint this side closed), or drop it (the
 * sender is not who it claims to be, or the runtime refused it). */
static enum frame_verdict sender_endpoint(struct example_module *m, uint32_t rank, uint8_t kind,
                                          const struct sockaddr_un *from, socklen_t from_len,
                                          struct example_ep **out)
{
    struct example_ep *e = find_endpoint(m, rank);
    if (e) {
        if (e->peer_len != from_len || memcmp(&e->peer, from, from_len) != 0)
            return FRAME_DROP;
        *out = e;
        return e->closing ? FRAME_IGNORE : FRAME_TAKE;
    }
    if (kind == KIND_BYE)
        return FRAME_IGNORE; /* for an endpoint this side closed and freed already */
    if (kind != KIND_DATA || !m->c.process)
        return FRAME_DROP; /* without a job there is nobody to check a stranger against */
    /* A rank we have no endpoint for yet: its card, from the modex, must be
     * the name the frame came from. */
    unsigned char card[sizeof from->sun_path];
    size_t len = sizeof card;
    struct sockaddr_un addr;
    socklen_t addr_len;
    const weft_btl_process_t *p = m->c.process;
    if (p->peer_card(p->card_ctx, &m->c, rank, card, &len) != WEFT_SUCCESS ||
        card_to_address(card, len, &addr, &addr_len) != WEFT_SUCCESS || addr_len != from_len ||
        memcmp(&addr, from, from_len) != 0)
        return FRAME_DROP;
    e = new_endpoint(m, rank, &addr, addr_len, WEFT_BTL_EP_CONNECTED);
    if (!e)
        return FRAME_DROP;
    e->c.runtime_ctx = m->c.upcalls.accepted(m->c.upcalls.ctx, &e->c);
    if (!e->c.runtime_ctx) {
        forget_endpoint(m, e);
        return FRAME_DROP;
    }
    *out = e;
    return FRAME_TAKE;
}

static int op_progress(weft_btl_module_t *mod)
{
    struct example_module *m = module_of(mod);
    if (!m)
        return WEFT_ERR_BAD_PARAM;
    if (m->in_progress)
        return 0; /* called from inside an upcall: upcalls are never re-entered */
    m->in_progress = 1;
    int events = deliver_reports(m);
    for (int n = 0; n < RECV_BATCH; ++n) {
        struct sockaddr_un from;
        socklen_t from_len = sizeof from;
        ssize_t got = recvfrom(m->fd, m->frame, sizeof m->frame, MSG_DONTWAIT | MSG_TRUNC,
                               (struct sockaddr *)&from, &from_len);
        if (got < 0)
            break; /* EAGAIN: nothing more now */
        uint32_t rank;
        memcpy(&rank, m->frame + 4, sizeof rank);
        struct example_ep *e = NULL;
        enum frame_verdict verdict = FRAME_DROP;
        if (got >= FRAME_HEADER && (size_t)got <= sizeof m->frame)
            verdict = sender_endpoint(m, rank, m->frame[1], &from, from_len, &e);
        if (verdict == FRAME_IGNORE)
            continue;
        if (verdict == FRAME_DROP) {
            if (m->dropped++ == 0)
                m->host->log(self(), WEFT_LOG_WARN,
                             "dropped a frame of %zd bytes claiming rank %u: not from that rank's socket, "
                             "or malformed (further drops are counted, not logged)",
                             got, rank);
            continue;
        }
        ++events;
        if (m->frame[1] == KIND_BYE) {
            e->closing = 1;
            owe_state(e, WEFT_BTL_EP_CLOSED, "the peer disconnected");
        } else {
            m->c.upcalls.recv(m->c.upcalls.ctx, &e->c, m->frame[0], m->frame + FRAME_HEADER,
                              (size_t)got - FRAME_HEADER);
        }
    }
    events += deliver_reports(m); /* CLOSED after the frames before the BYE */
    m->in_progress = 0;
    return events;
}

static int op_finalize(weft_btl_module_t *mod)
{
    struct example_module *m = module_of(mod);
    if (!m || m->in_progress)
        return WEFT_ERR_BAD_PARAM;
    while (m->eps) {
        struct example_ep *e = m->eps;
        m->eps = e->next;
        free(e); /* no upcalls: the runtime is done with the module */
    }
    if (m->dropped > 0)
        m->host->log(self(), WEFT_LOG_INFO, "%lu frames dropped", m->dropped);
    close(m->fd);
    if (the_module == m)
        the_module = NULL;
    free(m);
    return WEFT_SUCCESS;
}

static const weft_btl_module_ops_t example_ops = {
    .size = sizeof(weft_btl_module_ops_t),
    .reachable = op_reachable,
    .card = op_card,
    .send = op_send,
    .progress = op_progress,
    .wait_fd = op_wait_fd,
    .disconnect = op_disconnect,
    .finalize = op_finalize,
    .prepare_wait = op_prepare_wait,
    /* sendi, put, get, mem_register, sendx, modex_ready: optional, absent. */
};

/* ---- the component's remaining entry points ---------------------------- */

static int example_start_connect(weft_btl_module_t *mod, const weft_btl_peer_t *peer,
                                 weft_btl_endpoint_t **endpoint)
{
    struct example_module *m = module_of(mod);
    struct sockaddr_un addr;
    socklen_t len;
    if (!endpoint)
        return WEFT_ERR_BAD_PARAM;
    *endpoint = NULL;
    if (!m || !peer)
        return WEFT_ERR_BAD_PARAM;
    if (peer->peer_class == WEFT_PEER_OTHER_NODE ||
        card_to_address(peer->card, peer->card_len, &addr, &len) != WEFT_SUCCESS)
        return WEFT_ERR_UNREACHABLE; /* what reachable() said no to */
    /* Datagrams need no connection, but the runtime learns of CONNECTED
     * from progress(), like any other transport's. */
    struct example_ep *e = new_endpoint(m, peer->rank, &addr, len, WEFT_BTL_EP_CONNECTING);
    if (!e)
        return WEFT_ERR_NO_MEMORY;
    owe_state(e, WEFT_BTL_EP_CONNECTED, NULL);
    *endpoint = &e->c;
    return WEFT_SUCCESS;
}

static int example_component_finalize(const weft_host_t *host)
{
    (void)host;
    return the_module ? op_finalize(&the_module->c) : WEFT_SUCCESS;
}

/* The one exported symbol: weft_<framework>_<name>_component, in a file
 * named weft_<framework>_<name>.so. The loader checks the header (magic,
 * ABI, size, names) before calling anything. */
WEFT_EXPORT const weft_btl_component_t weft_btl_example_component = {
    .base = {WEFT_COMPONENT_HEADER(weft_btl_component_t, "btl", "example", 1, 0, 0), .open = example_open,
             .query = example_query, .finalize = example_component_finalize},
    .init = example_init,
    .start_connect = example_start_connect,
};
