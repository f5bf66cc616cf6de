/* SPDX-License-Identifier: BSD-3-Clause */
/* scif_target: a 2-rank job that lets a hostile local process (scif_stranger)
 * attack its btl/scif ports while both ranks keep progressing, then checks
 * that the job still works and that no stranger's message reached it.
 *
 *   weftrun -np 2 --mca btl self,scif scif_target STRANGER_PROGRAM
 *
 * Rank 1 sends its pid to rank 0 (which also connects the two ranks over
 * scif first); rank 0 runs STRANGER_PROGRAM JOB_ID PID0 PID1, progressing
 * until it exits, while rank 1 waits in a blocking receive for the verdict.
 * Then both exchange 1000 checked messages each way (small and large) and
 * make sure nothing else arrived. Prints "scif_target: rank R ok" or why not;
 * exits non-zero on any failure (the stranger's included). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <weft.h>

#define ROUNDS 1000
#define LARGE (300 * 1024)

static void die(const char *what, int rc)
{
    fprintf(stderr, "scif_target: rank %d: %s: %s: %s\n", weft_rank(), what, weft_status_string(rc),
            weft_error_message());
    exit(1);
}

static void fill(unsigned char *buf, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; ++i)
        buf[i] = (unsigned char)((seed * 2654435761u + i * 40503u) >> 7);
}

/* Rank 0: runs the stranger and progresses until it exits; its status. */
static int run_stranger(char *program, const char *job, int pid1)
{
    char pid0s[32], pid1s[32];
    snprintf(pid0s, sizeof pid0s, "%d", (int)getpid());
    snprintf(pid1s, sizeof pid1s, "%d", pid1);
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 127;
    if (child == 0) {
        char *args[] = {program, (char *)job, pid0s, pid1s, NULL};
        execv(program, args);
        perror("scif_target: exec of the stranger");
        _exit(127);
    }
    for (;;) {
        int status;
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        int rc = weft_progress();
        if (rc < 0)
            die("weft_progress while the stranger runs", rc);
    }
}

int main(int argc, char **argv)
{
    int rc = weft_init(&argc, &argv);
    if (rc != WEFT_SUCCESS)
        die("weft_init", rc);
    if (argc != 2 || weft_size() != 2) {
        fprintf(stderr, "usage: weftrun -np 2 %s STRANGER_PROGRAM\n", argv[0]);
        return 2;
    }
    const int rank = weft_rank(), peer = 1 - rank;
    weft_job_info_t info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    if ((rc = weft_job_info(&info)) != WEFT_SUCCESS)
        die("weft_job_info", rc);

    int32_t verdict = 0;
    if (rank == 1) {
        int32_t pid = (int32_t)getpid();
        if ((rc = weft_send(&pid, sizeof pid, 0, 1)) != WEFT_SUCCESS)
            die("send pid", rc);
        if ((rc = weft_recv(&verdict, sizeof verdict, 0, 2, NULL)) != WEFT_SUCCESS)
            die("receive the verdict", rc);
    } else {
        int32_t pid1 = 0;
        if ((rc = weft_recv(&pid1, sizeof pid1, 1, 1, NULL)) != WEFT_SUCCESS)
            die("receive pid", rc);
        verdict = run_stranger(argv[1], info.nspace, pid1);
        if ((rc = weft_send(&verdict, sizeof verdict, 1, 2)) != WEFT_SUCCESS)
            die("send the verdict", rc);
    }

    /* The job after the attack: checked traffic both ways. */
    static unsigned char out[LARGE], in[LARGE], want[LARGE];
    for (uint32_t i = 0; i < ROUNDS; ++i) {
        const size_t n = i % 100 == 99 ? LARGE : 8 + i % 200;
        fill(out, n, i * 2 + (uint32_t)rank);
        fill(want, n, i * 2 + (uint32_t)peer);
        weft_request_t sreq;
        weft_msg_status_t st;
        if ((rc = weft_isend(out, n, (uint32_t)peer, 3, &sreq)) != WEFT_SUCCESS)
            die("isend", rc);
        if ((rc = weft_recv(in, sizeof in, (uint32_t)peer, 3, &st)) != WEFT_SUCCESS)
            die("recv", rc);
        if ((rc = weft_wait(&sreq, NULL)) != WEFT_SUCCESS)
            die("wait", rc);
        if (memcmp(in, want, n) != 0) {
            fprintf(stderr, "scif_target: rank %d: message %u from rank %d corrupted\n", rank, i, peer);
            return 1;
        }
    }
    if ((rc = weft_barrier()) != WEFT_SUCCESS)
        die("barrier", rc);
    int stray = 0;
    weft_msg_status_t st;
    if ((rc = weft_iprobe(WEFT_ANY_SOURCE, WEFT_ANY_TAG, &stray, &st)) != WEFT_SUCCESS)
        die("iprobe", rc);
    if (stray) {
        fprintf(stderr, "scif_target: rank %d: a message nobody of the job sent arrived\n", rank);
        return 1;
    }
    if (verdict != 0) {
        fprintf(stderr, "scif_target: rank %d: the stranger says status %d\n", rank, verdict);
        return 1;
    }
    if ((rc = weft_finalize()) != WEFT_SUCCESS)
        die("weft_finalize", rc);
    printf("scif_target: rank %d ok\n", rank);
    return 0;
}
