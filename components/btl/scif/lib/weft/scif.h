/* SPDX-License-Identifier: BSD-3-Clause */
/* weft/scif.h: a SCIF-like API for processes on one node, in user space.
 *
 * The functions, flags and errno values follow the SCIF contract (Intel MPSS
 * scif.h, see README "btl/scif"); the transport underneath is ours:
 * - an endpoint descriptor is a file descriptor (an AF_UNIX SOCK_SEQPACKET
 *   socket), so fcntl(epd, F_SETFL, O_NONBLOCK) selects the asynchronous
 *   scif_connect() and a listening epd can be given to poll() directly;
 * - ports live in the abstract UNIX namespace per user
 *   ("\0weft-scif.<uid>.<port>"): nothing on disk, nothing left after a crash;
 * - messages travel through shared-memory rings (a memfd passed with
 *   SCM_RIGHTS, never a name in /dev/shm); the socket stays as the control
 *   channel, so a peer that exits or is killed is seen as a hang-up;
 * - RMA copies once with process_vm_readv/writev when the kernel allows it
 *   (tried on every connection), else through the peer's library.
 * There is one node, id 0. Use scif_poll() to wait for data: the ring is not
 * a descriptor, plain poll() on a connected epd only reports hang-ups. */
#ifndef WEFT_SCIF_H
#define WEFT_SCIF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCIF_ACCEPT_SYNC 1
#define SCIF_SEND_BLOCK 1
#define SCIF_RECV_BLOCK 1

enum { SCIF_PROT_READ = (1 << 0), SCIF_PROT_WRITE = (1 << 1) };
enum { SCIF_MAP_FIXED = 0x10, SCIF_MAP_KERNEL = 0x20 };
enum {
    SCIF_FENCE_INIT_SELF = (1 << 0),
    SCIF_FENCE_INIT_PEER = (1 << 1),
    SCIF_SIGNAL_LOCAL = (1 << 4),
    SCIF_SIGNAL_REMOTE = (1 << 5)
};
enum {
    SCIF_RMA_USECPU = (1 << 0),
    SCIF_RMA_USECACHE = (1 << 1),
    SCIF_RMA_SYNC = (1 << 2),
    SCIF_RMA_ORDERED = (1 << 3)
};

/* End of the ports only privileged users may bind. */
#define SCIF_ADMIN_PORT_END 1024
/* scif_bind(epd, 0) picks a port at or above this. */
#define SCIF_PORT_RSVD 1088

typedef int scif_epd_t;

#define SCIF_OPEN_FAILED ((scif_epd_t)-1)
#define SCIF_REGISTER_FAILED ((off_t)-1)

struct scif_port_id {
    uint16_t node;
    uint16_t port;
};

/* scif_poll(): events are POLLIN (data, or a connection request on a
 * listening endpoint), POLLOUT (room to send; an asynchronous connect that
 * finished); revents may add POLLHUP (peer gone) and POLLERR/POLLNVAL. */
struct scif_pollepd {
    scif_epd_t epd;
    short events;
    short revents;
};

scif_epd_t scif_open(void);
int scif_close(scif_epd_t epd);
int scif_bind(scif_epd_t epd, uint16_t pn);
int scif_listen(scif_epd_t epd, int backlog);
int scif_connect(scif_epd_t epd, struct scif_port_id *dst);
int scif_accept(scif_epd_t epd, struct scif_port_id *peer, scif_epd_t *newepd, int flags);
int scif_send(scif_epd_t epd, void *msg, int len, int flags);
int scif_recv(scif_epd_t epd, void *msg, int len, int flags);
off_t scif_register(scif_epd_t epd, void *addr, size_t len, off_t offset, int prot_flags,
                    int map_flags);
int scif_unregister(scif_epd_t epd, off_t offset, size_t len);
int scif_readfrom(scif_epd_t epd, off_t loffset, size_t len, off_t roffset, int rma_flags);
int scif_writeto(scif_epd_t epd, off_t loffset, size_t len, off_t roffset, int rma_flags);
int scif_vreadfrom(scif_epd_t epd, void *addr, size_t len, off_t roffset, int rma_flags);
int scif_vwriteto(scif_epd_t epd, void *addr, size_t len, off_t roffset, int rma_flags);
int scif_fence_mark(scif_epd_t epd, int flags, int *mark);
int scif_fence_wait(scif_epd_t epd, int mark);
int scif_fence_signal(scif_epd_t epd, off_t loff, uint64_t lval, off_t roff, uint64_t rval,
                      int flags);
int scif_get_node_ids(uint16_t *nodes, int len, uint16_t *self);
/* Waits up to timeout milliseconds (-1: no limit) for events on nepds
 * endpoints; returns how many have revents, 0 on timeout, -1 with errno. */
int scif_poll(struct scif_pollepd *epds, unsigned int nepds, long timeout);

#ifdef __cplusplus
}
#endif
#endif
