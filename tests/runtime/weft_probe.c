/* SPDX-License-Identifier: BSD-3-Clause */
/* weft_probe: a small weft program for the runtime's integration tests.
 * Written in C against weft.h only, as an application would be.
 *
 *   weft_probe ok                 init, job facts, every peer's transport
 *                                 choice and modex cards, barrier, finalize
 *   weft_probe exit CODE RANK     RANK exits with CODE after init
 *   weft_probe abort STATUS RANK  RANK calls weft_abort(STATUS)
 *   weft_probe no-finalize RANK   RANK exits 0 without weft_finalize
 *   weft_probe segv RANK          RANK dies of SIGSEGV
 *   weft_probe hang               prints "ready RANK pid PID", then waits
 *                                 forever in the progress loop
 *   weft_probe connect PEER       tries to connect to PEER, prints the result
 *   weft_probe info               prints job info only (no peers)
 *   weft_probe say-abort STATUS RANK   RANK prints "probe: rank R says why"
 *                                 and "partial" without a newline, then
 *                                 calls weft_abort; the others wait in a
 *                                 barrier
 *   weft_probe say-hang           prints "probe: rank R says hello", then
 *                                 "partial" without a newline, then hangs
 *
 * The say-* modes leave stdout's buffering as the runtime set it (the
 * others make it line-buffered themselves), to test what reaches the user
 * when a rank aborts or is killed.
 *
 * Output lines start with "probe:" so tests can grep them. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <weft.h>

static int check(int rc, const char *what)
{
    if (rc != WEFT_SUCCESS) {
        fprintf(stderr, "probe: %s failed: %s (%d): %s\n", what, weft_status_string(rc), rc,
                weft_error_message());
        /* When another rank died, the launcher must still blame that rank,
         * however soon this exit is seen (the tests check it). */
        exit(10);
    }
    return rc;
}

static void print_job(void)
{
    weft_job_info_t j;
    memset(&j, 0, sizeof j);
    j.size = sizeof j;
    check(weft_job_info(&j), "weft_job_info");
    printf("probe: rank %u of %u local %u/%u node %u nodes %u singleton %d progress %s host %s\n",
           j.rank, j.job_size, j.local_rank, j.local_size, j.node_id, j.num_nodes, j.singleton,
           j.progress_mode, j.hostname);
}

/* Every peer's card of every module must be in the modex: that is what the
 * collecting fence of weft_init promises. */
static int print_peers(void)
{
    int bad = 0;
    for (int p = 0; p < weft_size(); ++p) {
        weft_peer_info_t pi;
        memset(&pi, 0, sizeof pi);
        pi.size = sizeof pi;
        check(weft_peer_info((uint32_t)p, &pi), "weft_peer_info");
        printf("probe: rank %d peer %d class %d node %u cards %u/%u reachable %d transports %s\n",
               weft_rank(), p, (int)pi.peer_class, pi.node_id, pi.cards_found, pi.modules,
               pi.reachable, pi.transports);
        if (pi.cards_found != pi.modules) {
            fprintf(stderr, "probe: rank %d: peer %d published %u of %u cards\n", weft_rank(), p,
                    pi.cards_found, pi.modules);
            bad = 1;
        }
    }
    return bad;
}

static int target(int argc, char **argv, int idx)
{
    return argc > idx ? atoi(argv[idx]) : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    if (strncmp(mode, "say-", 4) != 0)
        setvbuf(stdout, NULL, _IOLBF, 0);
    /* WEFT_PROBE_LATE_RANK=R: rank R (as the launcher's PMIX_RANK says)
     * enters weft_init 300 ms after the others, so their first contact asks
     * for a card that is not published yet (the direct modex must wait for
     * it, not fail). */
    const char *late = getenv("WEFT_PROBE_LATE_RANK");
    const char *pmix_rank = getenv("PMIX_RANK");
    if (late && pmix_rank && !strcmp(late, pmix_rank))
        usleep(300 * 1000);
    check(weft_init(&argc, &argv), "weft_init");
    int me = weft_rank();

    if (!strcmp(mode, "info")) {
        print_job();
    } else if (!strcmp(mode, "ok")) {
        print_job();
        if (print_peers())
            return 3;
        check(weft_barrier(), "weft_barrier");
    } else if (!strcmp(mode, "exit")) {
        if (me == target(argc, argv, 3))
            exit(atoi(argv[2]));
        /* The target's exit and a survivor's exit 10 would be alike (plain
         * non-zero exits), and when both land together on a loaded machine
         * nothing tells the launcher which came first: the target closes
         * its ports in its exit handlers, before the kernel marks it dying.
         * So here a survivor whose barrier fails says so and waits to be
         * ended; the case checks the report of one failure. */
        const int rc = weft_barrier();
        if (rc != WEFT_SUCCESS) {
            fprintf(stderr, "probe: weft_barrier failed: %s (%d): %s; waiting to be ended\n",
                    weft_status_string(rc), rc, weft_error_message());
            for (;;)
                pause();
        }
    } else if (!strcmp(mode, "abort")) {
        if (me == target(argc, argv, 3))
            weft_abort(atoi(argv[2]), "probe asked to abort");
        check(weft_barrier(), "weft_barrier");
    } else if (!strcmp(mode, "no-finalize")) {
        if (me == target(argc, argv, 2))
            exit(0);
        check(weft_barrier(), "weft_barrier");
    } else if (!strcmp(mode, "segv")) {
        if (me == target(argc, argv, 2))
            raise(SIGSEGV);
        check(weft_barrier(), "weft_barrier");
    } else if (!strcmp(mode, "hang")) {
        printf("probe: ready %d pid %ld\n", me, (long)getpid());
        for (;;) {
            weft_progress();
            pause();
        }
    } else if (!strcmp(mode, "say-abort")) {
        if (me == target(argc, argv, 3)) {
            printf("probe: rank %d says why\n", me);
            printf("partial");
            weft_abort(atoi(argv[2]), "probe said why");
        }
        check(weft_barrier(), "weft_barrier");
    } else if (!strcmp(mode, "say-hang")) {
        printf("probe: rank %d says hello\n", me);
        printf("partial");
        for (;;) {
            weft_progress();
            pause();
        }
    } else if (!strcmp(mode, "connect")) {
        int peer = target(argc, argv, 2);
        int rc = weft_connect((uint32_t)peer, 5000);
        if (rc == WEFT_SUCCESS)
            printf("probe: rank %d connected to %d\n", me, peer);
        else
            printf("probe: rank %d cannot connect to %d: %s: %s\n", me, peer, weft_status_string(rc),
                   weft_error_message());
    } else {
        fprintf(stderr, "probe: unknown mode '%s'\n", mode);
        return 2;
    }
    check(weft_finalize(), "weft_finalize");
    printf("probe: done %d\n", me);
    return 0;
}
