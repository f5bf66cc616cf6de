/* SPDX-License-Identifier: BSD-3-Clause */
/* pmix_probe: a raw PMIx client for the weftrun tests. One mode per run:
 *
 *   ok                    put a card, fence with data collection, read every
 *                         other rank's card, print "rank R of N local_rank L"
 *   exit CODE [RANK]      RANK (default 1) exits with CODE after PMIx_Init
 *   exit-before-init [CODE [RANK]]   ... before PMIx_Init (CODE default 7)
 *   no-finalize [RANK]    RANK exits 0 after the fence, without PMIx_Finalize
 *   abort STATUS [RANK]   RANK calls PMIx_Abort(STATUS)
 *   segv [RANK]           RANK dies of SIGSEGV
 *   hang                  every rank blocks in pause() after PMIx_Init
 *   env VAR               print VAR as every rank sees it
 *   print-binding         print the CPUs each rank may run on
 *   stranger PORT FILE [N [BYTES]]   not a rank: opens N (default 3)
 *                         connections to 127.0.0.1:PORT, sends BYTES
 *                         (default 0, at most 8) zero bytes on each, prints
 *                         "stranger connected N" and holds them until FILE
 *                         exists (at most 30 s); a stand-in for any local
 *                         process poking the PMIx server's port
 *
 * Every rank prints "ready rank R pid P" once initialized, so tests can wait
 * for it instead of sleeping. In the fault modes the other ranks run the
 * "ok" path; if their fence fails they say so and exit 1 at once, as a real
 * program would: weftrun must still blame the faulty rank. Except in "exit"
 * mode: there the faulty rank's exit and a survivor's exit 1 are alike
 * (both plain non-zero exits), and when both land together on a loaded
 * machine nothing tells weftrun which came first (the kernel may finish the
 * survivor's exit before the faulty rank's, which had closed its PMIx
 * socket early in its own). weft ranks name the failed peer when they
 * abort, which settles it; a raw PMIx client cannot, so in "exit" mode the
 * survivors wait to be ended and the case checks one failure's report.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

static pmix_proc_t me;
static const char *mode;
static int fault_rank = -1;

static void die(const char *what, pmix_status_t st)
{
    fprintf(stderr, "probe rank %u: %s failed: %s\n", me.rank, what, PMIx_Error_string(st));
    exit(1);
}

static int arg_int(int argc, char **argv, int i, int dflt)
{
    return argc > i ? atoi(argv[i]) : dflt;
}

static uint32_t get_u32(const pmix_proc_t *who, const char *key)
{
    pmix_value_t *v = NULL;
    pmix_status_t st = PMIx_Get(who, key, NULL, 0, &v);
    if (st != PMIX_SUCCESS) die(key, st);
    uint32_t r = 0;
    if (v->type == PMIX_UINT32) r = v->data.uint32;
    else if (v->type == PMIX_UINT16) r = v->data.uint16;
    else { fprintf(stderr, "probe: %s has type %d\n", key, v->type); exit(1); }
    PMIX_VALUE_RELEASE(v);
    return r;
}

/* The "ok" path: exchange cards and check them; exits 1 if the fence fails. */
static void exchange(int finalize)
{
    char card[64];
    snprintf(card, sizeof card, "card-%u", me.rank);
    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, card, PMIX_STRING);
    pmix_status_t st = PMIx_Put(PMIX_GLOBAL, "weft.probe.card", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (st != PMIX_SUCCESS) die("PMIx_Put", st);
    if ((st = PMIx_Commit()) != PMIX_SUCCESS) die("PMIx_Commit", st);

    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    uint32_t size = get_u32(&wild, PMIX_JOB_SIZE);
    uint32_t local_rank = get_u32(&me, PMIX_LOCAL_RANK);

    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    st = PMIx_Fence(&wild, 1, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (st != PMIX_SUCCESS) {
        fprintf(stderr, "probe rank %u: fence failed: %s\n", me.rank, PMIx_Error_string(st));
        if (!strcmp(mode, "exit"))
            for (;;) pause();   /* weftrun ends the job for the faulty rank's exit */
        exit(1);
    }
    for (uint32_t r = 0; r < size; ++r) {
        if (r == me.rank) continue;
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        pmix_value_t *v = NULL;
        if ((st = PMIx_Get(&peer, "weft.probe.card", NULL, 0, &v)) != PMIX_SUCCESS) die("PMIx_Get(card)", st);
        char want[64];
        snprintf(want, sizeof want, "card-%u", r);
        if (v->type != PMIX_STRING || strcmp(v->data.string, want) != 0) {
            fprintf(stderr, "probe rank %u: card of rank %u is wrong\n", me.rank, r);
            exit(1);
        }
        PMIX_VALUE_RELEASE(v);
    }
    printf("rank %u of %u local_rank %u\n", me.rank, size, local_rank);
    fflush(stdout);
    if (finalize && (st = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) die("PMIx_Finalize", st);
}

static int stranger(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pmix_probe stranger PORT FILE [N [BYTES]]\n");
        return 2;
    }
    int n = arg_int(argc, argv, 4, 3);
    int bytes = arg_int(argc, argv, 5, 0);
    const char some[8] = {0};
    if (bytes < 0 || bytes > (int)sizeof some) bytes = (int)sizeof some;
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)atoi(argv[2]));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < n; ++i) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
            perror("pmix_probe stranger: connect");
            return 1;
        }
        if (bytes > 0 && send(fd, some, (size_t)bytes, 0) != bytes) {
            perror("pmix_probe stranger: send");
            return 1;
        }
    }
    printf("stranger connected %d\n", n);
    fflush(stdout);
    const struct timespec tick = {0, 100 * 1000 * 1000};
    for (int i = 0; i < 300 && access(argv[3], F_OK) != 0; ++i)
        nanosleep(&tick, NULL);
    printf("stranger done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pmix_probe ok|exit|exit-before-init|no-finalize|abort|segv|hang|env|print-binding ...\n");
        return 2;
    }
    mode = argv[1];
    if (!strcmp(mode, "stranger")) return stranger(argc, argv);
    if (!strcmp(mode, "exit")) fault_rank = arg_int(argc, argv, 3, 1);
    else if (!strcmp(mode, "exit-before-init")) fault_rank = arg_int(argc, argv, 3, 1);
    else if (!strcmp(mode, "no-finalize") || !strcmp(mode, "segv")) fault_rank = arg_int(argc, argv, 2, 1);
    else if (!strcmp(mode, "abort")) fault_rank = arg_int(argc, argv, 3, 1);

    if (!strcmp(mode, "exit-before-init")) {
        const char *r = getenv("PMIX_RANK");
        if (r && atoi(r) == fault_rank) {
            printf("ready rank %d pid %d\n", fault_rank, (int)getpid());
            fflush(stdout);
            return arg_int(argc, argv, 2, 7);
        }
    }
    pmix_status_t st = PMIx_Init(&me, NULL, 0);
    if (st != PMIX_SUCCESS) die("PMIx_Init", st);
    printf("ready rank %u pid %d\n", me.rank, (int)getpid());
    fflush(stdout);
    const int faulty = (int)me.rank == fault_rank;

    if (!strcmp(mode, "ok") || !strcmp(mode, "exit-before-init")) {
        exchange(1);
    } else if (!strcmp(mode, "exit")) {
        if (faulty) return arg_int(argc, argv, 2, 1);
        exchange(1);
    } else if (!strcmp(mode, "no-finalize")) {
        exchange(!faulty);
    } else if (!strcmp(mode, "abort")) {
        if (faulty) {
            PMIx_Abort(arg_int(argc, argv, 2, 1), "probe abort", NULL, 0);
            for (;;) pause();   /* the launcher ends the job */
        }
        exchange(1);
    } else if (!strcmp(mode, "segv")) {
        if (faulty) {
            signal(SIGSEGV, SIG_DFL);   /* no sanitizer or other handler in the way */
            raise(SIGSEGV);
        }
        exchange(1);
    } else if (!strcmp(mode, "hang")) {
        for (;;) pause();
    } else if (!strcmp(mode, "env")) {
        const char *var = argc > 2 ? argv[2] : "PATH";
        const char *v = getenv(var);
        printf("rank %u %s=%s\n", me.rank, var, v ? v : "(unset)");
        PMIx_Finalize(NULL, 0);
    } else if (!strcmp(mode, "print-binding")) {
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(0, sizeof set, &set);
        printf("rank %u cpus", me.rank);
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) printf(" %d", c);
        printf("\n");
        PMIx_Finalize(NULL, 0);
    } else {
        fprintf(stderr, "pmix_probe: unknown mode '%s'\n", mode);
        PMIx_Finalize(NULL, 0);
        return 2;
    }
    return 0;
}
