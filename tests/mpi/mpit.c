/* SPDX-License-Identifier: BSD-3-Clause */
/* mpit: the tool information interface (MPI_T).
 *  - MPI_T_init_thread before MPI_Init; every cvar and pvar listed, each
 *    found again by name, each in exactly one category;
 *  - a cvar read and written before MPI_Init (weft: engine_base_eager_limit
 *    = 8192, which then decides the protocol of the messages below), and
 *    refused after it (MPI_T_ERR_CVAR_SET_NOT_NOW);
 *  - pvars bound to MPI_COMM_WORLD count exactly the bytes this rank sent
 *    to its right-hand neighbour: eager ones, and a rendezvous one just
 *    past the eager limit written above.
 * The weft-specific checks are skipped when the variables do not exist
 * (another MPI). */
#include "mtest.h"

#define NAME 256
#define kEagerLimit 8192
#define kSmall 100
#define kRounds 7

static int find_pvar(const char *name, int cls)
{
    int index = -1;
    return MPI_T_pvar_get_index(name, cls, &index) == MPI_SUCCESS ? index : -1;
}

static void list_cvars(void)
{
    int n = 0;
    MPI_OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 0, "MPI_T_cvar_get_num gave %d", n);
    for (int i = 0; i < n; ++i) {
        char name[NAME], desc[1024];
        int name_len = NAME, desc_len = sizeof desc, verbosity = 0, bind = -1, scope = -1;
        MPI_Datatype type;
        MPI_T_enum e;
        int rc = MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &e, desc, &desc_len, &bind, &scope);
        CHECK(rc == MPI_SUCCESS, "MPI_T_cvar_get_info(%d) gave %d", i, rc);
        if (rc != MPI_SUCCESS)
            continue;
        CHECK(name_len == (int)strlen(name) + 1, "cvar %d: name_len %d for '%s'", i, name_len, name);
        CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
              "cvar %s: verbosity %d", name, verbosity);
        int again = -1;
        CHECK(MPI_T_cvar_get_index(name, &again) == MPI_SUCCESS && again == i, "cvar %s: index %d, by name %d",
              name, i, again);
        if (mtest_rank == 0 && getenv("MPIT_LIST"))
            printf("cvar %d %s verbosity %d scope %d: %s\n", i, name, verbosity, scope, desc);
    }
    int bad = -1;
    CHECK(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX, "cvar index %d (one past the end) was accepted", n);
    CHECK(MPI_T_cvar_get_index("no_such_cvar_anywhere", &bad) == MPI_T_ERR_INVALID_NAME,
          "an unknown cvar name was found");
}

static void list_pvars(void)
{
    int n = 0;
    MPI_OK(MPI_T_pvar_get_num(&n));
    for (int i = 0; i < n; ++i) {
        char name[NAME], desc[1024];
        int name_len = NAME, desc_len = sizeof desc, verbosity = 0, cls = -1, bind = -1, ro = -1, cont = -1,
            atomic = -1;
        MPI_Datatype type;
        MPI_T_enum e;
        int rc = MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &type, &e, desc, &desc_len, &bind, &ro,
                                     &cont, &atomic);
        CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_get_info(%d) gave %d", i, rc);
        if (rc != MPI_SUCCESS)
            continue;
        CHECK(find_pvar(name, cls) == i, "pvar %s: index %d, by name %d", name, i, find_pvar(name, cls));
        if (mtest_rank == 0 && getenv("MPIT_LIST"))
            printf("pvar %d %s class %d bind %d: %s\n", i, name, cls, bind, desc);
    }
}

/* Every variable sits in exactly one category. */
static void check_categories(void)
{
    int ncat = 0, ncvar = 0, npvar = 0, in_cvars = 0, in_pvars = 0;
    MPI_OK(MPI_T_category_get_num(&ncat));
    MPI_OK(MPI_T_cvar_get_num(&ncvar));
    MPI_OK(MPI_T_pvar_get_num(&npvar));
    for (int c = 0; c < ncat; ++c) {
        char name[NAME];
        int len = NAME, nc = 0, np = 0, nsub = 0, again = -1;
        MPI_OK(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, &nsub));
        CHECK(MPI_T_category_get_index(name, &again) == MPI_SUCCESS && again == c, "category %s: %d by name",
              name, again);
        in_cvars += nc;
        in_pvars += np;
        if (nsub > 0) {
            int *sub = malloc(sizeof(int) * (size_t)nsub);
            MPI_OK(MPI_T_category_get_categories(c, nsub, sub));
            for (int k = 0; k < nsub; ++k)
                CHECK(sub[k] >= 0 && sub[k] < ncat, "category %s: subcategory %d", name, sub[k]);
            free(sub);
        }
    }
    CHECK(in_cvars == ncvar, "categories hold %d cvars of %d", in_cvars, ncvar);
    CHECK(in_pvars == npvar, "categories hold %d pvars of %d", in_pvars, npvar);
}

/* Writes engine_base_eager_limit before MPI_Init; 1 when weft has it. */
static int write_eager_limit(void)
{
    int index = -1, count = 0;
    if (MPI_T_cvar_get_index("engine_base_eager_limit", &index) != MPI_SUCCESS)
        return 0;
    MPI_T_cvar_handle h;
    MPI_OK(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
    CHECK(count == 1, "engine_base_eager_limit: count %d", count);
    unsigned long long v = kEagerLimit, back = 0;
    MPI_OK(MPI_T_cvar_write(h, &v));
    MPI_OK(MPI_T_cvar_read(h, &back));
    CHECK(back == kEagerLimit, "engine_base_eager_limit read back %llu after writing %d", back, kEagerLimit);
    char desc[1024];
    int desc_len = sizeof desc;
    MPI_OK(MPI_T_cvar_get_info(index, NULL, NULL, NULL, NULL, NULL, desc, &desc_len, NULL, NULL));
    CHECK(strstr(desc, "[value from: api]") != NULL, "engine_base_eager_limit's description: '%s'", desc);
    MPI_OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "the freed cvar handle was not set to NULL");
    return 1;
}

static void check_set_after_init(void)
{
    int index = -1, count = 0;
    MPI_OK(MPI_T_cvar_get_index("engine_base_eager_limit", &index));
    MPI_T_cvar_handle h;
    MPI_OK(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
    unsigned long long v = 1234;
    CHECK(MPI_T_cvar_write(h, &v) == MPI_T_ERR_CVAR_SET_NOT_NOW, "a cvar write after MPI_Init was not refused");
    MPI_OK(MPI_T_cvar_handle_free(&h));
}

/* Reads pvar `name` for every rank of MPI_COMM_WORLD into out. */
static void read_pvar(MPI_T_pvar_session s, const char *name, unsigned long long *out)
{
    int index = find_pvar(name, MPI_T_PVAR_CLASS_COUNTER), count = 0;
    CHECK(index >= 0, "no counter pvar %s", name);
    if (index < 0)
        return;
    MPI_T_pvar_handle h;
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_OK(MPI_T_pvar_handle_alloc(s, index, &world, &h, &count));
    CHECK(count == mtest_size, "pvar %s bound to MPI_COMM_WORLD has count %d", name, count);
    MPI_OK(MPI_T_pvar_read(s, h, out));
    CHECK(MPI_T_pvar_write(s, h, out) == MPI_T_ERR_PVAR_NO_WRITE, "pvar %s took a write", name);
    MPI_OK(MPI_T_pvar_handle_free(s, &h));
}

static void check_bytes(void)
{
    const int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    static char out[kEagerLimit + 1], in[kEagerLimit + 1];
    unsigned long long eager0[64], eager1[64], rdma0[64], rdma1[64], chunks0[64], chunks1[64];
    if (mtest_size > 64)
        return;
    MPI_T_pvar_session s;
    MPI_OK(MPI_T_pvar_session_create(&s));
    read_pvar(s, "peer_eager_sent_bytes", eager0);
    read_pvar(s, "peer_rndv_rdma_sent_bytes", rdma0);
    read_pvar(s, "peer_rndv_chunks_sent_bytes", chunks0);
    for (int i = 0; i < kRounds; ++i)
        MPI_OK(MPI_Sendrecv(out, kSmall, MPI_CHAR, right, 5, in, kSmall, MPI_CHAR, left, 5, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
    /* One byte past the eager limit written before MPI_Init: rendezvous. */
    MPI_OK(MPI_Sendrecv(out, kEagerLimit + 1, MPI_CHAR, right, 6, in, kEagerLimit + 1, MPI_CHAR, left, 6,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    read_pvar(s, "peer_eager_sent_bytes", eager1);
    read_pvar(s, "peer_rndv_rdma_sent_bytes", rdma1);
    read_pvar(s, "peer_rndv_chunks_sent_bytes", chunks1);
    CHECK(eager1[right] - eager0[right] == (unsigned long long)kRounds * kSmall,
          "peer_eager_sent_bytes to rank %d grew by %llu, sent %d", right, eager1[right] - eager0[right],
          kRounds * kSmall);
    const unsigned long long rndv = rdma1[right] - rdma0[right] + chunks1[right] - chunks0[right];
    CHECK(rndv == kEagerLimit + 1, "rendezvous bytes sent to rank %d grew by %llu, sent %d", right, rndv,
          kEagerLimit + 1);
    MPI_OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "the freed session was not set to NULL");
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "MPI_T_init_thread provided %d", provided);
    list_cvars();
    const int weft = write_eager_limit();
    mtest_init(&argc, &argv);
    list_cvars();
    list_pvars();
    check_categories();
    if (weft) {
        check_set_after_init();
        check_bytes();
    }
    MPI_OK(MPI_T_finalize());
    int n;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "MPI_T answered after MPI_T_finalize");
    return mtest_finish();
}
