/* SPDX-License-Identifier: BSD-3-Clause */
/* coll_protocol: kCalls collectives of kBytes vectors, each checked on
 * every rank, for coll_protocol.sh to read which protocol carried their
 * sends from weftrun's --report. The first argument picks them:
 *  - bcast (the default): MPI_Bcast from rank 0. A send to a rank that
 *    passes the data on is a forwarded one (WEFT_SEND_FORWARD), a send to
 *    a leaf a plain one;
 *  - allgather: MPI_Allgather of one kBytes block per rank;
 *  - send: rank 0 sends the same vectors to rank 1 with MPI_Send, the
 *    plain send the others are compared with. */
#include "mtest.h"

enum { kCalls = 8, kBytes = 64 * 1024 };

/* MPI_Allgather of rank r's block (pattern r, call) into all, from a
 * send buffer on odd calls and in place on even ones (two paths of
 * mpi/coll_allgather.cc); checks every block. */
static void allgather_call(unsigned char *all, unsigned char *own, int call)
{
    const int in_place = call % 2 == 0;
    unsigned char *mine = in_place ? all + (size_t)mtest_rank * kBytes : own;
    mtest_fill(mine, kBytes, mtest_rank, call);
    const void *send = in_place ? MPI_IN_PLACE : own;
    MPI_OK(MPI_Allgather(send, in_place ? 0 : kBytes, MPI_BYTE, all, kBytes, MPI_BYTE, MPI_COMM_WORLD));
    for (int r = 0; r < mtest_size; r++) {
        const long bad = mtest_verify(all + (size_t)r * kBytes, kBytes, r, call);
        CHECK(bad < 0, "call %d (%s): rank %d's block differs from byte %ld on", call,
              in_place ? "in place" : "from a send buffer", r, bad);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "bcast";
    const int plain_send = strcmp(mode, "send") == 0;
    if (strcmp(mode, "allgather") == 0) {
        unsigned char *all = (unsigned char *)malloc((size_t)mtest_size * kBytes);
        unsigned char *own = (unsigned char *)malloc(kBytes);
        CHECK(all != NULL && own != NULL, "malloc of %d blocks of %d bytes failed", mtest_size + 1, kBytes);
        for (int call = 0; all && own && call < kCalls; call++)
            allgather_call(all, own, call);
        free(all);
        free(own);
        return mtest_finish();
    }
    unsigned char *buf = (unsigned char *)malloc(kBytes);
    CHECK(buf != NULL, "malloc of %d bytes failed", kBytes);
    for (int call = 0; buf && call < kCalls; call++) {
        if (mtest_rank == 0)
            mtest_fill(buf, kBytes, 0, call);
        else
            memset(buf, 0, kBytes);
        if (plain_send) {
            if (mtest_rank == 0)
                MPI_OK(MPI_Send(buf, kBytes, MPI_BYTE, 1, call, MPI_COMM_WORLD));
            else if (mtest_rank == 1)
                MPI_OK(MPI_Recv(buf, kBytes, MPI_BYTE, 0, call, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Bcast(buf, kBytes, MPI_BYTE, 0, MPI_COMM_WORLD));
        }
        if (plain_send && mtest_rank > 1)
            continue;
        const long bad = mtest_verify(buf, kBytes, 0, call);
        CHECK(bad < 0, "call %d: byte %ld is %d, expected %d", call, bad, bad < 0 ? 0 : buf[bad],
              bad < 0 ? 0 : mtest_pat(0, call, (size_t)bad));
    }
    free(buf);
    return mtest_finish();
}
