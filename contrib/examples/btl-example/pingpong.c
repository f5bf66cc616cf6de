/* SPDX-License-Identifier: BSD-3-Clause */
/* A 2-rank ping-pong that checks every byte, for btl/example's test:
 *   weftrun -np 2 --mca btl self,example ./pingpong
 * Sizes run from empty to past the eager limit (a rendezvous in chunks of
 * the transport's max_send). Rank 0 prints which transport carried the
 * peer's messages, then "pingpong: ok" when every round trip matched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <weft.h>

static int fail(const char *what, int rc)
{
    fprintf(stderr, "pingpong: rank %d: %s failed (%d): %s\n", weft_rank(), what, rc, weft_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {0, 1, 8, 4096, 16 * 1024, 100 * 1000, 1024 * 1024};
    enum { ROUNDS = 20, MAX = 1024 * 1024 };
    int rc = weft_init(&argc, &argv);
    if (rc != WEFT_SUCCESS)
        return fail("weft_init", rc);
    if (weft_size() != 2) {
        fprintf(stderr, "pingpong: run it with 2 ranks, not %d\n", weft_size());
        weft_finalize();
        return 1;
    }
    const int me = weft_rank(), peer = 1 - me;
    unsigned char *out = malloc(MAX), *in = malloc(MAX);
    if (!out || !in)
        return fail("malloc", WEFT_ERR_NO_MEMORY);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (int round = 0; round < ROUNDS; ++round) {
            const size_t len = sizes[s];
            for (size_t i = 0; i < len; ++i)
                out[i] = (unsigned char)(i * 7 + round + s);
            weft_msg_status_t st;
            if (me == 0) {
                if ((rc = weft_send(out, len, peer, round)) != WEFT_SUCCESS)
                    return fail("weft_send", rc);
                if ((rc = weft_recv(in, MAX, peer, round, &st)) != WEFT_SUCCESS)
                    return fail("weft_recv", rc);
            } else {
                if ((rc = weft_recv(in, MAX, peer, round, &st)) != WEFT_SUCCESS)
                    return fail("weft_recv", rc);
                if ((rc = weft_send(out, len, peer, round)) != WEFT_SUCCESS)
                    return fail("weft_send", rc);
            }
            /* Both ranks fill `out` alike, so each must get back its own bytes. */
            if (st.count != len || memcmp(in, out, len) != 0) {
                fprintf(stderr, "pingpong: rank %d: %zu-byte message %d came back as %zu different bytes\n",
                        me, len, round, st.count);
                return 1;
            }
        }
    if (me == 0) {
        weft_peer_info_t info = {.size = sizeof info};
        if ((rc = weft_peer_info((uint32_t)peer, &info)) != WEFT_SUCCESS)
            return fail("weft_peer_info", rc);
        printf("pingpong: rank 1 reached through %s\n", info.transports);
        printf("pingpong: ok (%d round trips of %zu sizes, 0 to %zu bytes)\n",
               ROUNDS * (int)(sizeof sizes / sizeof sizes[0]), sizeof sizes / sizeof sizes[0],
               sizes[sizeof sizes / sizeof sizes[0] - 1]);
    }
    free(out);
    free(in);
    return weft_finalize() == WEFT_SUCCESS ? 0 : 1;
}
