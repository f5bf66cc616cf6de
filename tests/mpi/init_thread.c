/* SPDX-License-Identifier: BSD-3-Clause */
/* init_thread: the environment calls. Initialized/Finalized before, during
 * and after; Get_version / Get_library_version before MPI_Init_thread (both
 * may be called at any time); Init_thread(FUNNELED), Query_thread,
 * Is_thread_main; Wtime monotone and Wtick; Get_processor_name. Any number
 * of ranks. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int flag = -1, pre_errs = 0;
    char pre_msg[4][160];
    MPI_Initialized(&flag);
    if (flag != 0)
        snprintf(pre_msg[pre_errs++], 160, "MPI_Initialized before init gave %d, expected 0", flag);
    flag = -1;
    MPI_Finalized(&flag);
    if (flag != 0)
        snprintf(pre_msg[pre_errs++], 160, "MPI_Finalized before init gave %d, expected 0", flag);
    int pre_v = -1, pre_sv = -1;
    MPI_Get_version(&pre_v, &pre_sv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = -1;
    lib[0] = '\0';
    MPI_Get_library_version(lib, &liblen);

    int provided = -1;
    int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
    for (int i = 0; i < pre_errs; i++)
        CHECK(0, "%s", pre_msg[i]);
    CHECK(rc == MPI_SUCCESS, "MPI_Init_thread returned %d", rc);
    CHECK(provided >= MPI_THREAD_FUNNELED && provided <= MPI_THREAD_MULTIPLE,
          "Init_thread(FUNNELED) provided %d, expected FUNNELED (%d) or more", provided, MPI_THREAD_FUNNELED);
    int q = -1;
    MPI_OK(MPI_Query_thread(&q));
    CHECK(q == provided, "Query_thread %d, Init_thread provided %d", q, provided);
    flag = 0;
    MPI_OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "Is_thread_main false on the thread that called Init_thread");
    flag = 0;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized false after init");
    flag = 1;
    MPI_OK(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized true before finalize");

    int v = -1, sv = -1;
    MPI_OK(MPI_Get_version(&v, &sv));
    CHECK(v >= 3 && sv >= 0, "Get_version %d.%d, expected 3.x or later", v, sv);
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "Get_version %d.%d but the header says %d.%d", v, sv, MPI_VERSION,
          MPI_SUBVERSION);
    CHECK(pre_v == v && pre_sv == sv, "Get_version before init gave %d.%d, after %d.%d", pre_v, pre_sv, v, sv);
    /* Whether resultlen counts the terminating NUL is read differently by
     * implementations (Open MPI counts it): accept both. */
    CHECK(liblen > 0 && liblen <= MPI_MAX_LIBRARY_VERSION_STRING && strlen(lib) > 0 &&
              ((size_t)liblen == strlen(lib) || (size_t)liblen == strlen(lib) + 1),
          "Get_library_version before init: length %d, strlen %zu", liblen, strlen(lib));
    MPI_OK(MPI_Get_library_version(lib, &liblen));
    CHECK(strlen(lib) > 0 && ((size_t)liblen == strlen(lib) || (size_t)liblen == strlen(lib) + 1),
          "Get_library_version: length %d, strlen %zu", liblen,
          strlen(lib));

    char name[MPI_MAX_PROCESSOR_NAME];
    int nlen = -1;
    name[0] = '\0';
    MPI_OK(MPI_Get_processor_name(name, &nlen));
    CHECK(nlen > 0 && nlen < MPI_MAX_PROCESSOR_NAME && (size_t)nlen == strlen(name),
          "Get_processor_name: length %d, strlen %zu", nlen, strlen(name));

    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick < 1.0, "Wtick %g, expected in (0, 1)", tick);
    double prev = MPI_Wtime(), first = prev;
    int back = 0;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (t < prev)
            back++;
        prev = t;
    }
    CHECK(back == 0, "Wtime went backwards %d times in 100000 calls", back);
    CHECK(prev >= first, "Wtime: last %f before first %f", prev, first);
    /* Time passes across a collective too (no threshold, just order). */
    double t0 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(MPI_Wtime() >= t0, "Wtime after a barrier is earlier than before it");

    int total = mtest_verdict();
    MPI_Finalize();
    flag = 0;
    MPI_Finalized(&flag);
    int after = 0;
    if (!flag) {
        printf("[rank %d] MPI_Finalized false after MPI_Finalize\n", mtest_rank);
        after++;
    }
    flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        printf("[rank %d] MPI_Initialized false after MPI_Finalize (it must stay true)\n", mtest_rank);
        after++;
    }
    int av = -1, asv = -1;
    MPI_Get_version(&av, &asv);
    if (av != v || asv != sv) {
        printf("[rank %d] Get_version after finalize gave %d.%d\n", mtest_rank, av, asv);
        after++;
    }
    fflush(stdout);
    return total == 0 && after == 0 ? 0 : 1;
}
