/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_stress: every rank streams messages of random sizes to every other
 * rank, with windows of non-blocking sends and receives, and checks each
 * one: its sequence number (no loss, duplication or reordering within a
 * stream), its size and its content (a checksum over a pattern both sides
 * derive from the stream and the sequence number).
 *
 *   weft_stress TOTAL [any]   TOTAL messages over the whole job; "any":
 *                             receive with WEFT_ANY_SOURCE and sort by status
 *
 * Sizes: mostly small (eager, inline), some medium, a few large
 * (rendezvous). Prints "stress: rank R ok N messages" or an error; exits
 * non-zero on the first bad message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft.h>

#define WINDOW 16
#define MAX_SIZE (256 * 1024)

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* The size of message `seq` of the stream src -> dst. */
static size_t size_of(int src, int dst, uint64_t seq)
{
    uint64_t r = mix(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq);
    unsigned pick = (unsigned)(r % 100);
    if (pick < 80)
        return 8 + (size_t)((r >> 8) % 249);          /* 8..256 */
    if (pick < 98)
        return 257 + (size_t)((r >> 8) % 65280);      /* .. 64 KiB */
    return 65537 + (size_t)((r >> 8) % (MAX_SIZE - 65537));
}

static void fill(unsigned char *buf, size_t n, int src, int dst, uint64_t seq)
{
    memcpy(buf, &seq, sizeof seq);
    uint64_t x = mix(seq * 31 + (uint64_t)src * 7 + (uint64_t)dst);
    for (size_t i = sizeof seq; i < n; ++i) {
        if ((i & 7) == 0)
            x = mix(x + i);
        buf[i] = (unsigned char)(x >> ((i & 7) * 8));
    }
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "stress: rank %d: %s: %s: %s\n", weft_rank(), what, weft_status_string(rc),
            weft_error_message());
    exit(1);
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 100000;
    int any = argc > 2 && !strcmp(argv[2], "any");
    int rc = weft_init(&argc, &argv);
    if (rc)
        die("weft_init", rc);
    int me = weft_rank(), np = weft_size();
    if (np < 2) {
        fprintf(stderr, "stress: needs 2 or more ranks\n");
        return 2;
    }
    /* Each rank sends per_peer messages to every other rank. */
    long per_peer = total / ((long)np * (np - 1));
    if (per_peer < 1)
        per_peer = 1;
    unsigned char *sbuf[WINDOW], *rbuf[WINDOW], *expect = malloc(MAX_SIZE);
    for (int w = 0; w < WINDOW; ++w) {
        sbuf[w] = malloc(MAX_SIZE);
        rbuf[w] = malloc(MAX_SIZE);
    }
    uint64_t *next_from = calloc((size_t)np, sizeof *next_from);
    long received = 0, sent = 0;
    const long to_receive = per_peer * (np - 1), to_send = per_peer * (np - 1);
    /* Round-robin over peers: message k goes to peer (me + 1 + k % (np-1)). */
    weft_request_t sreq[WINDOW], rreq[WINDOW];
    int rsrc[WINDOW];
    long rpost[WINDOW];   /* which posted receive a slot holds */
    /* What each posted receive got, checked in posting order at the end:
     * receives complete out of order (a rendezvous finishes after a later
     * eager message), but they must match in the order they were posted. */
    struct got { int src; uint64_t seq; } *got = calloc((size_t)to_receive, sizeof *got);
    for (int w = 0; w < WINDOW; ++w)
        sreq[w] = rreq[w] = WEFT_REQUEST_NULL;
    long posted = 0;
    uint64_t *sseq = calloc((size_t)np, sizeof *sseq);
    /* Receives: with "any", WINDOW receives from any source; else one
     * stream at a time per slot, round-robin over sources. */
    while (received < to_receive || sent < to_send) {
        for (int w = 0; w < WINDOW; ++w) {
            if (rreq[w] == WEFT_REQUEST_NULL && posted < to_receive) {
                rsrc[w] = any ? -1 : (int)((me + 1 + posted % (np - 1)) % np);
                rc = weft_irecv(rbuf[w], MAX_SIZE, any ? WEFT_ANY_SOURCE : (uint32_t)rsrc[w], 7, &rreq[w]);
                if (rc)
                    die("irecv", rc);
                rpost[w] = posted++;
            }
            if (sreq[w] == WEFT_REQUEST_NULL && sent < to_send) {
                int dst = (int)((me + 1 + sent % (np - 1)) % np);
                uint64_t seq = sseq[dst]++;
                size_t n = size_of(me, dst, seq);
                fill(sbuf[w], n, me, dst, seq);
                rc = weft_isend(sbuf[w], n, (uint32_t)dst, 7, &sreq[w]);
                if (rc)
                    die("isend", rc);
                ++sent;
            }
        }
        for (int w = 0; w < WINDOW; ++w) {
            int done = 0;
            weft_msg_status_t st;
            if (sreq[w] != WEFT_REQUEST_NULL) {
                rc = weft_test(&sreq[w], &done, &st);
                if (rc)
                    die("send completion", rc);
            }
            if (rreq[w] == WEFT_REQUEST_NULL)
                continue;
            rc = weft_test(&rreq[w], &done, &st);
            if (rc)
                die("receive completion", rc);
            if (!done)
                continue;
            int src = (int)st.source;
            if (src < 0 || src >= np || src == me || (!any && src != rsrc[w])) {
                fprintf(stderr, "stress: rank %d: message from unexpected source %d\n", me, src);
                return 1;
            }
            uint64_t seq;
            memcpy(&seq, rbuf[w], sizeof seq);
            size_t n = size_of(src, me, seq);
            fill(expect, n, src, me, seq);
            if (st.count != n || memcmp(expect, rbuf[w], n) != 0) {
                fprintf(stderr, "stress: rank %d: message %llu from %d: %zu bytes, expected %zu, content %s\n",
                        me, (unsigned long long)seq, src, st.count, n,
                        memcmp(expect, rbuf[w], st.count < n ? st.count : n) ? "differs" : "ok");
                return 1;
            }
            got[rpost[w]].src = src;
            got[rpost[w]].seq = seq;
            ++received;
        }
    }
    /* Per source, the receives posted in order got sequences 0, 1, 2, ...:
     * no loss, no duplicate, no reordering within a stream. */
    for (long k = 0; k < to_receive; ++k) {
        int src = got[k].src;
        if (got[k].seq != next_from[src]) {
            fprintf(stderr, "stress: rank %d: receive %ld got message %llu from %d, expected %llu\n", me, k,
                    (unsigned long long)got[k].seq, src, (unsigned long long)next_from[src]);
            return 1;
        }
        ++next_from[src];
    }
    rc = weft_barrier();
    if (rc)
        die("barrier", rc);
    printf("stress: rank %d ok %ld messages received, %ld sent\n", me, received, sent);
    rc = weft_finalize();
    if (rc)
        die("weft_finalize", rc);
    for (int w = 0; w < WINDOW; ++w) {
        free(sbuf[w]);
        free(rbuf[w]);
    }
    free(expect);
    free(got);
    free(next_from);
    free(sseq);
    return 0;
}
