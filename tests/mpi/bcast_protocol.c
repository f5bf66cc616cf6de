/* SPDX-License-Identifier: BSD-3-Clause */
/* bcast_protocol: kCalls broadcasts of kBytes from rank 0, each checked on
 * every rank; `send` instead has rank 0 send the same kCalls vectors to
 * rank 1 with MPI_Send. bcast_protocol.sh reads which protocol carried
 * them from weftrun's --report: a broadcast's send to a rank that passes
 * the data on is a forwarded one (WEFT_SEND_FORWARD), a send to a leaf a
 * plain one, as `send` is. */
#include "mtest.h"

enum { kCalls = 8, kBytes = 64 * 1024 };

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int plain_send = argc > 1 && strcmp(argv[1], "send") == 0;
    unsigned char *buf = (unsigned char *)malloc(kBytes);
    CHECK(buf != NULL, "malloc of %d bytes failed", kBytes);
    for (int call = 0; buf && call < kCalls; call++) {
        for (int i = 0; i < kBytes; i++)
            buf[i] = mtest_rank == 0 ? mtest_pat(0, call, (size_t)i) : 0;
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
        int bad = -1;
        for (int i = 0; i < kBytes && bad < 0; i++)
            if (buf[i] != mtest_pat(0, call, (size_t)i))
                bad = i;
        CHECK(bad < 0, "call %d: byte %d is %d, expected %d", call, bad, bad < 0 ? 0 : buf[bad],
              bad < 0 ? 0 : mtest_pat(0, call, (size_t)bad));
    }
    free(buf);
    return mtest_finish();
}
