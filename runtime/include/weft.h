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

/* Waits until every rank of the job has called it. */
int weft_barrier(void);

/* Ends the whole job with status: the launcher kills every rank and exits
 * with it. Does not return. */
void weft_abort(int status, const char *message);

/* The message of the last failed call in this thread ("" if none). */
const char *weft_error_message(void);

#ifdef __cplusplus
}
#endif
#endif
