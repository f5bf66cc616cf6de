/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_counters: the counter page (weft/counters.h) against a scripted
 * exchange whose every message and byte is known. Written against weft.h
 * only, as a tool would be.
 *
 *   weft_counters exact       ranks 0 and 1 of a 2-rank job: rank 0 sends
 *                             the messages of kSizes to rank 1 (receives
 *                             posted first), then kUnexpected small ones
 *                             before rank 1 posts any; each side checks
 *                             the change of its counters (weft_counter_read)
 *                             message by message and byte by byte, then
 *                             prints "counters: rank R ok"
 *   weft_counters hold        the exchange, then prints "counters: rank R
 *                             pid PID" and waits in a receive nobody
 *                             answers (the test kills it)
 *   weft_counters ifroom      rank 1 posts a receive of 64 KiB and says so;
 *                             rank 0, whose connection to rank 1 is then
 *                             empty, sends it and prints "ifroom: eager_limit
 *                             L, eager_if_room R, 65536 bytes by
 *                             eager|rendezvous" (its counters: the limits it
 *                             got, the protocol that carried the message);
 *                             rank 1 checks the data
 *   weft_counters read FILE   not a rank: maps FILE (/proc/PID/fd/N of a
 *                             rank's page) read-only, checks its header and
 *                             prints "page: rank R of N sent-to-1 BYTES"
 *
 * The eager limit is pinned by the test (engine_base_eager_limit) so that
 * which message takes which protocol is known: a message of at most
 * kEager bytes goes eagerly, a larger one by rendezvous (RDMA or chunks,
 * as the transport can). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <weft.h>
#include <weft/counters.h>

#define kEager 4096u
static const size_t kSizes[] = {0, 1, 8, 100, 4096, 4097, 65536, 300000, 8, 1 << 20};
#define kMessages (sizeof kSizes / sizeof kSizes[0])
#define kUnexpected 5u
#define kUnexpectedSize 24u
static int failures;

static void check(int rc, const char *what)
{
    if (rc != WEFT_SUCCESS) {
        fprintf(stderr, "counters: %s failed: %s: %s\n", what, weft_status_string(rc), weft_error_message());
        exit(10);
    }
}

static int counter(const char *name)
{
    for (int i = 0; i < weft_counter_count(); ++i) {
        weft_counter_desc_t d;
        memset(&d, 0, sizeof d);
        d.size = sizeof d;
        if (weft_counter_describe(i, &d) == WEFT_SUCCESS && strcmp(d.name, name) == 0)
            return i;
    }
    fprintf(stderr, "counters: no counter named %s\n", name);
    exit(11);
}

static uint64_t read_counter(const char *name, uint32_t which)
{
    uint64_t v = 0;
    check(weft_counter_read(counter(name), which, &v), name);
    return v;
}

/* The traffic counters of one direction with one peer, by protocol. */
struct traffic {
    uint64_t msgs[3], bytes[3];
};
static void read_traffic(const char *dir, uint32_t peer, struct traffic *t)
{
    static const char *const protos[] = {"eager", "rndv_rdma", "rndv_chunks"};
    char name[64];
    for (int p = 0; p < 3; ++p) {
        snprintf(name, sizeof name, "peer_%s_%s_msgs", protos[p], dir);
        t->msgs[p] = read_counter(name, peer);
        snprintf(name, sizeof name, "peer_%s_%s_bytes", protos[p], dir);
        t->bytes[p] = read_counter(name, peer);
    }
}

static void expect(const char *what, uint64_t got, uint64_t want)
{
    if (got != want) {
        fprintf(stderr, "counters: rank %d: %s is %llu, expected %llu\n", weft_rank(), what,
                (unsigned long long)got, (unsigned long long)want);
        ++failures;
    }
}

/* What the exchange should have counted on either side of it. */
static void expect_exchange(const char *dir, const struct traffic *before, const struct traffic *after)
{
    uint64_t eager_msgs = 0, eager_bytes = 0, rndv_msgs = 0, rndv_bytes = 0;
    for (size_t i = 0; i < kMessages; ++i) {
        if (kSizes[i] <= kEager) {
            ++eager_msgs;
            eager_bytes += kSizes[i];
        } else {
            ++rndv_msgs;
            rndv_bytes += kSizes[i];
        }
    }
    char what[96];
    snprintf(what, sizeof what, "eager %s messages", dir);
    expect(what, after->msgs[0] - before->msgs[0], eager_msgs);
    snprintf(what, sizeof what, "eager %s bytes", dir);
    expect(what, after->bytes[0] - before->bytes[0], eager_bytes);
    snprintf(what, sizeof what, "rendezvous (RDMA + chunks) %s messages", dir);
    expect(what, after->msgs[1] - before->msgs[1] + after->msgs[2] - before->msgs[2], rndv_msgs);
    snprintf(what, sizeof what, "rendezvous (RDMA + chunks) %s bytes", dir);
    expect(what, after->bytes[1] - before->bytes[1] + after->bytes[2] - before->bytes[2], rndv_bytes);
    printf("counters: rank %d %s eager %llu/%llu rdma %llu/%llu chunks %llu/%llu\n", weft_rank(), dir,
           (unsigned long long)(after->msgs[0] - before->msgs[0]),
           (unsigned long long)(after->bytes[0] - before->bytes[0]),
           (unsigned long long)(after->msgs[1] - before->msgs[1]),
           (unsigned long long)(after->bytes[1] - before->bytes[1]),
           (unsigned long long)(after->msgs[2] - before->msgs[2]),
           (unsigned long long)(after->bytes[2] - before->bytes[2]));
}

static void exchange(void)
{
    const int rank = weft_rank();
    static char buf[kMessages][1 << 20];
    char token = 0;
    struct traffic before, after;
    if (rank == 1) {
        /* Every receive posted, then rank 0 is told to send. */
        weft_request_t reqs[kMessages];
        for (size_t i = 0; i < kMessages; ++i)
            check(weft_irecv(buf[i], kSizes[i], 0, (int32_t)i, &reqs[i]), "weft_irecv");
        read_traffic("recv", 0, &before);
        check(weft_send(&token, 1, 0, 100), "weft_send ready");
        check(weft_waitall((int)kMessages, reqs, NULL), "weft_waitall");
        read_traffic("recv", 0, &after);
        expect_exchange("recv", &before, &after);

        /* Unexpected: the go message's receive is posted before rank 0 is
         * told to send, so only the kUnexpected messages wait unmatched. */
        const uint64_t unexpected = read_counter("peer_unexpected_msgs", 0);
        weft_request_t go;
        check(weft_irecv(&token, 1, 0, 102, &go), "weft_irecv go");
        check(weft_send(&token, 1, 0, 101), "weft_send ready 2");
        check(weft_wait(&go, NULL), "weft_wait go");
        expect("unexpected messages from rank 0", read_counter("peer_unexpected_msgs", 0) - unexpected,
               kUnexpected);
        expect("unexpected queue depth with them queued", read_counter("process_unexpected_depth", 0),
               kUnexpected);
        expect("unexpected queue high-water mark", read_counter("process_unexpected_hwm", 0), kUnexpected);
        for (unsigned i = 0; i < kUnexpected; ++i)
            check(weft_recv(buf[0], kUnexpectedSize, 0, 200, NULL), "weft_recv unexpected");
        expect("unexpected queue depth once they are received", read_counter("process_unexpected_depth", 0), 0);
    } else if (rank == 0) {
        check(weft_recv(&token, 1, 1, 100, NULL), "weft_recv ready");
        read_traffic("sent", 1, &before);
        for (size_t i = 0; i < kMessages; ++i)
            check(weft_send(buf[i], kSizes[i], 1, (int32_t)i), "weft_send");
        read_traffic("sent", 1, &after);
        expect_exchange("sent", &before, &after);
        check(weft_recv(&token, 1, 1, 101, NULL), "weft_recv ready 2");
        for (unsigned i = 0; i < kUnexpected; ++i)
            check(weft_send(buf[0], kUnexpectedSize, 1, 200), "weft_send unexpected");
        check(weft_send(&token, 1, 1, 102), "weft_send go");
    }
    /* The module counters name the modules in use: one connection each way
     * at least, somewhere. */
    uint64_t connects = 0;
    for (int m = 0; m < weft_counter_modules(); ++m)
        connects += read_counter("module_connects", (uint32_t)m);
    if (rank < 2 && connects == 0) {
        fprintf(stderr, "counters: rank %d: no module counted a connection\n", rank);
        ++failures;
    }
    if (rank < 2)
        expect("connections to the peer", read_counter("peer_connects", rank == 0 ? 1 : 0) > 0, 1);
}

/* One 64 KiB message to a peer that waits for it with nothing else in
 * flight: which protocol carried it (the test knows which one should). */
static void if_room(void)
{
    enum { kSize = 65536 };
    static unsigned char data[kSize];
    char token = 0;
    const int rank = weft_rank();
    if (rank == 1) {
        weft_request_t req;
        check(weft_irecv(data, kSize, 0, 7, &req), "weft_irecv");
        check(weft_send(&token, 1, 0, 100), "weft_send ready");
        check(weft_wait(&req, NULL), "weft_wait");
        for (size_t i = 0; i < kSize; ++i)
            if (data[i] != (unsigned char)(i * 7 + 3)) {
                fprintf(stderr, "counters: rank 1: byte %zu of the 64 KiB message is wrong\n", i);
                ++failures;
                break;
            }
    } else if (rank == 0) {
        for (size_t i = 0; i < kSize; ++i)
            data[i] = (unsigned char)(i * 7 + 3);
        struct traffic before, after;
        check(weft_recv(&token, 1, 1, 100, NULL), "weft_recv ready");
        read_traffic("sent", 1, &before);
        check(weft_send(data, kSize, 1, 7), "weft_send");
        read_traffic("sent", 1, &after);
        const uint64_t eager = after.bytes[0] - before.bytes[0];
        const uint64_t rndv = after.bytes[1] - before.bytes[1] + after.bytes[2] - before.bytes[2];
        if (eager + rndv != kSize) {
            fprintf(stderr, "counters: rank 0: the 64 KiB message counted %llu eager + %llu rendezvous bytes\n",
                    (unsigned long long)eager, (unsigned long long)rndv);
            ++failures;
        }
        printf("ifroom: eager_limit %llu, eager_if_room %llu, 65536 bytes by %s\n",
               (unsigned long long)read_counter("peer_eager_limit", 1),
               (unsigned long long)read_counter("peer_eager_if_room", 1), eager == kSize ? "eager" : "rendezvous");
    }
}

static int read_page(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(weft_counters_header_t)) {
        fprintf(stderr, "page: cannot open %s or it is too small\n", path);
        return 1;
    }
    const void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror("page: mmap");
        return 1;
    }
    const weft_counters_header_t *h = p;
    if (h->magic != WEFT_COUNTERS_MAGIC || h->version != WEFT_COUNTERS_VERSION ||
        h->page_size > (uint64_t)st.st_size || h->peer_offset + h->peer_stride * h->peer_count > h->page_size ||
        h->peer_stride < sizeof(weft_peer_counters_t)) {
        fprintf(stderr, "page: %s is not a weft counter page of this version\n", path);
        return 1;
    }
    uint64_t sent = 0;
    if (h->peer_count > 1) {
        const weft_peer_counters_t *c = (const void *)((const char *)p + h->peer_offset + h->peer_stride);
        for (int k = 0; k < WEFT_PROTO_COUNT; ++k)
            sent += c->sent.bytes[k];
    }
    printf("page: rank %u of %u sent-to-1 %llu\n", h->rank, h->job_size, (unsigned long long)sent);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_page(argv[2]);
    if (argc != 2 ||
        (strcmp(argv[1], "exact") != 0 && strcmp(argv[1], "hold") != 0 && strcmp(argv[1], "ifroom") != 0)) {
        fprintf(stderr, "usage: weft_counters exact|hold|ifroom|read FILE\n");
        return 2;
    }
    check(weft_init(&argc, &argv), "weft_init");
    if (weft_size() < 2) {
        fprintf(stderr, "counters: run with at least 2 ranks\n");
        return 2;
    }
    if (strcmp(argv[1], "ifroom") == 0)
        if_room();
    else
        exchange();
    if (strcmp(argv[1], "hold") == 0) {
        printf("counters: rank %d pid %d\n", weft_rank(), (int)getpid());
        char never;
        check(weft_recv(&never, 1, WEFT_ANY_SOURCE, 999, NULL), "weft_recv (held)");
    }
    if (failures == 0)
        printf("counters: rank %d ok\n", weft_rank());
    check(weft_finalize(), "weft_finalize");
    return failures ? 1 : 0;
}
