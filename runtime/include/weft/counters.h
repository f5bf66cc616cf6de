/* SPDX-License-Identifier: BSD-3-Clause */
/* The counter page of a weft process: what it sent and received, to whom,
 * by which protocol, and what went wrong, kept always (no build or
 * parameter turns it on) in one shared memory region other processes on
 * the node may map read-only (weftrun --report, weft_top, a debugger).
 *
 * Where it lives: a memfd named "weft-counters" (see /proc/<pid>/fd of the
 * rank), so nothing of it is left on disk after any exit, SIGKILL
 * included; a reader maps it read-only through /proc/<pid>/fd/<n>.
 *
 * Writers and readers:
 * - each counter has one writer (the rank's engine, its runtime, or one
 *   btl module), which updates it with plain stores: no atomic
 *   read-modify-write on the message path;
 * - a reader in another process loads the 64-bit counters (aligned, so a
 *   load is never torn on the platforms weft runs on) and may see one
 *   counter a message ahead of another; strings may be read torn while
 *   written (a reader copies and terminates them).
 *
 * Layout (all offsets from the start of the page, every section 8-byte
 * aligned):
 *   weft_counters_header_t     at 0
 *   weft_process_counters_t    at header.process_offset
 *   weft_peer_counters_t[n]    at header.peer_offset, header.peer_stride apart,
 *                              n = header.peer_count (= the job size)
 *   weft_module_counters_t[m]  at header.module_offset, header.module_stride
 *                              apart, m = header.module_count
 * Growth: the version changes only if a member moves; new members are
 * appended to a struct, whose size (the stride or the *_size of the
 * header) tells a reader whether it has them. A reader checks magic,
 * version and that each section lies within header.page_size. */
#ifndef WEFT_COUNTERS_H
#define WEFT_COUNTERS_H

#include <stdint.h>

#include <weft/btl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_COUNTERS_MAGIC 0x5745465443544e31ull   /* "WEFTCTN1" */
#define WEFT_COUNTERS_VERSION 1u
#define WEFT_COUNTERS_MEMFD_NAME "weft-counters"

/* Protocols of a message (index of msgs[] and bytes[]). */
enum weft_counters_protocol {
    WEFT_PROTO_EAGER = 0,      /* one frame: inline (sendi) or eager send */
    WEFT_PROTO_RNDV_RDMA = 1,  /* rendezvous, the data read by RDMA get */
    WEFT_PROTO_RNDV_CHUNKS = 2,/* rendezvous, the data sent in chunks (Cts/Data) */
    WEFT_PROTO_COUNT = 3
};

/* The page's state (header.state). */
#define WEFT_COUNTERS_RUNNING 1u
#define WEFT_COUNTERS_FINALIZED 2u

/* Rails of one peer whose share of striped rendezvous data is kept. */
#define WEFT_COUNTERS_RAILS 8

typedef struct weft_counters_header {
    uint64_t magic;            /* WEFT_COUNTERS_MAGIC */
    uint32_t version;          /* WEFT_COUNTERS_VERSION */
    uint32_t header_size;      /* sizeof this struct as the writer knew it */
    uint64_t page_size;        /* bytes of the whole page */
    uint32_t rank, job_size;
    int64_t pid;
    uint64_t start_realtime_ns;/* CLOCK_REALTIME when the page was made */
    uint32_t state;            /* WEFT_COUNTERS_RUNNING, then _FINALIZED */
    uint32_t reserved;
    char job_id[64];           /* the PMIx namespace */
    uint64_t process_offset, process_size;
    uint64_t peer_offset, peer_stride, peer_count;
    uint64_t module_offset, module_stride, module_count;
} weft_counters_header_t;

/* One direction's traffic by protocol. Messages and bytes in two arrays,
 * not pairs: a count and its bytes are then not adjacent, which keeps the
 * compiler from fusing the two additions of the message path into vector
 * instructions (8 instructions instead of 2, measured). */
typedef struct weft_counters_traffic {
    uint64_t msgs[WEFT_PROTO_COUNT];
    uint64_t bytes[WEFT_PROTO_COUNT];
} weft_counters_traffic_t;

/* This process as a whole (the engine writes them). */
typedef struct weft_process_counters {
    uint64_t unexpected_msgs;  /* messages that arrived before their receive */
    uint64_t unexpected_depth; /* messages in the unexpected queues now */
    uint64_t unexpected_hwm;   /* the most there ever were at once */
    uint64_t dropped;          /* puts no match entry accepted */
    uint64_t rejected;         /* malformed or unexpected frames from peers */
} weft_process_counters_t;

/* One peer (rank) of the job. */
typedef struct weft_peer_counters {
    /* Messages and their bytes by protocol (the engine): counted when the
     * message is handed to the transport (eager) or when the rendezvous
     * completed (Fin at the sender, the data in at the receiver). */
    weft_counters_traffic_t sent;
    weft_counters_traffic_t recv;
    uint64_t unexpected_msgs;  /* of its messages, those that arrived before their receive */
    uint64_t credit_stalls;    /* sends past the eager window: they went by rendezvous */
    uint64_t again;            /* frames a transport answered WEFT_ERR_AGAIN (queued, retried) */
    uint64_t rndv_ns;          /* time its rendezvous messages took to land here, from the match
                                  to the last byte (their bandwidth: recv bytes / rndv_ns) */
    uint64_t rdma_fallbacks;   /* rendezvous receives whose RDMA read could not start (chunks instead) */
    /* Connection (the runtime). */
    uint64_t connects;         /* times it became connected */
    uint64_t connect_ns;       /* the last connection's time from first use to connected */
    uint64_t failures;         /* times it failed */
    int64_t primary_module;    /* index into the module section of its primary module, -1 none */
    uint32_t peer_class;       /* weft_peer_class_t + 1 once connected; 0: not yet */
    uint32_t reserved;
    uint64_t rail_bytes[WEFT_COUNTERS_RAILS];  /* striped rendezvous data per endpoint */
    char failure[128];         /* why it failed, when it did */
    uint64_t eager_limit;      /* largest message sent to it eagerly (the runtime, once connected;
                                  0: not yet) */
    uint64_t eager_if_room;    /* past eager_limit, messages up to this go eagerly when the
                                  transport takes them at once, else by rendezvous (0: none) */
} weft_peer_counters_t;

/* One btl module: its name and the counters the module itself keeps
 * (weft_btl_counters_t, btl.h). */
typedef struct weft_module_counters {
    char name[64];             /* "tcp/eth0", "scif" */
    weft_btl_counters_t btl;   /* btl.size: how much of it the module knows */
} weft_module_counters_t;

#ifdef __cplusplus
}
#endif

#endif
