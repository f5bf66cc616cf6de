/* SPDX-License-Identifier: BSD-3-Clause */
/* comm: communicators and groups. Size/rank/dup/split/create/free/compare,
 * isolation of a dup's traffic, the group operations, MPI_COMM_SELF,
 * attributes and names. Any number of ranks. */
#include "mtest.h"

static const char *cmp_name(int r)
{
    switch (r) {
    case MPI_IDENT: return "MPI_IDENT";
    case MPI_CONGRUENT: return "MPI_CONGRUENT";
    case MPI_SIMILAR: return "MPI_SIMILAR";
    case MPI_UNEQUAL: return "MPI_UNEQUAL";
    default: return "(not a comparison result)";
    }
}

static void check_comm_cmp(MPI_Comm a, MPI_Comm b, int expected, const char *what)
{
    int r = -1;
    MPI_OK(MPI_Comm_compare(a, b, &r));
    CHECK(r == expected, "Comm_compare %s: %s, expected %s", what, cmp_name(r), cmp_name(expected));
}

static void check_group_cmp(MPI_Group a, MPI_Group b, int expected, const char *what)
{
    int r = -1;
    MPI_OK(MPI_Group_compare(a, b, &r));
    CHECK(r == expected, "Group_compare %s: %s, expected %s", what, cmp_name(r), cmp_name(expected));
}

static void basics(void)
{
    int size = -1, rank = -1, flag = 1;
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &size));
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &rank));
    CHECK(size == 1 && rank == 0, "MPI_COMM_SELF: size %d rank %d, expected 1 and 0", size, rank);
    mtest_ring(MPI_COMM_SELF, "MPI_COMM_SELF");
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(!flag, "Comm_test_inter(MPI_COMM_WORLD) true");

    check_comm_cmp(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "(world, world)");
    check_comm_cmp(MPI_COMM_WORLD, MPI_COMM_SELF, mtest_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "(world, self)");

    int *tag_ub = NULL;
    flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB: flag %d value %d, expected >= 32767", flag,
          tag_ub ? *tag_ub : -1);
    if (flag && tag_ub) {
        /* The largest tag works. */
        int s = 5, r = 0;
        MPI_OK(MPI_Sendrecv(&s, 1, MPI_INT, mtest_rank, *tag_ub, &r, 1, MPI_INT, mtest_rank, *tag_ub, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        CHECK(r == 5, "message with tag MPI_TAG_UB: got %d", r);
    }
    int *wg = NULL;
    flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wg, &flag));
    if (flag)
        CHECK(wg && (*wg == 0 || *wg == 1), "MPI_WTIME_IS_GLOBAL is %d, expected 0 or 1", wg ? *wg : -1);

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world's name \"%s\" (%d), expected \"MPI_COMM_WORLD\"",
          name, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self's name \"%s\", expected \"MPI_COMM_SELF\"", name);
}

static void dup_and_isolation(void)
{
    MPI_Comm d = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int size = -1, rank = -1;
    MPI_Comm_size(d, &size);
    MPI_Comm_rank(d, &rank);
    CHECK(size == mtest_size && rank == mtest_rank, "dup: size %d rank %d, expected %d %d", size, rank, mtest_size,
          mtest_rank);
    check_comm_cmp(MPI_COMM_WORLD, d, MPI_CONGRUENT, "(world, dup)");
    check_comm_cmp(d, d, MPI_IDENT, "(dup, dup)");
    MPI_OK(MPI_Comm_dup(d, &d2));
    check_comm_cmp(d, d2, MPI_CONGRUENT, "(dup, dup of dup)");

    /* Same tag, same peers, three communicators: each receive gets the
     * message of its own communicator, whatever order they are taken in. */
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    int sv[3] = {100 + mtest_rank, 200 + mtest_rank, 300 + mtest_rank}, rv[3] = {-1, -1, -1};
    MPI_Comm comms[3] = {MPI_COMM_WORLD, d, d2};
    MPI_Request req[3];
    for (int k = 0; k < 3; k++)
        MPI_OK(MPI_Isend(&sv[k], 1, MPI_INT, right, 7, comms[k], &req[k]));
    MPI_OK(MPI_Recv(&rv[2], 1, MPI_INT, left, 7, d2, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(&rv[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Recv(&rv[1], 1, MPI_INT, left, MPI_ANY_TAG, d, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++)
        CHECK(rv[k] == (k + 1) * 100 + left, "communicator %d received %d, expected %d (traffic crossed communicators)",
              k, rv[k], (k + 1) * 100 + left);
    /* A pending Iprobe on the dup does not see world's message. */
    int flag = 1;
    MPI_OK(MPI_Isend(&sv[0], 1, MPI_INT, mtest_rank, 8, MPI_COMM_WORLD, &req[0]));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 8, d, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Iprobe on a dup saw a message sent on the original");
    MPI_OK(MPI_Recv(&rv[0], 1, MPI_INT, mtest_rank, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));

    mtest_ring(d, "a dup of world");
    MPI_OK(MPI_Comm_set_name(d, "weft-dup"));
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "weft-dup") == 0 && len == 8, "Comm_get_name after set: \"%s\" (%d)", name, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "naming a dup renamed world to \"%s\"", name);

    MPI_OK(MPI_Comm_free(&d2));
    CHECK(d2 == MPI_COMM_NULL, "Comm_free did not set the handle to MPI_COMM_NULL");
    MPI_OK(MPI_Comm_free(&d));
}

static void splits(void)
{
    int p = mtest_size, r = mtest_rank;
    MPI_Comm parity, rev, same, none;

    /* By parity, key = rank. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &parity));
    int size = -1, rank = -1;
    MPI_Comm_size(parity, &size);
    MPI_Comm_rank(parity, &rank);
    int exp_size = r % 2 ? p / 2 : (p + 1) / 2;
    CHECK(size == exp_size && rank == r / 2, "split by parity: size %d rank %d, expected %d %d", size, rank, exp_size,
          r / 2);
    mtest_ring(parity, "the parity split");
    check_comm_cmp(MPI_COMM_WORLD, parity, p == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "(world, parity split)");

    /* One color, key reversing the order. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - r, &rev));
    MPI_Comm_rank(rev, &rank);
    CHECK(rank == p - 1 - r, "split with reversed keys: rank %d, expected %d", rank, p - 1 - r);
    check_comm_cmp(MPI_COMM_WORLD, rev, p == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "(world, reversed split)");
    mtest_ring(rev, "the reversed split");

    /* Equal keys keep the parent's order. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 7, 0, &same));
    MPI_Comm_rank(same, &rank);
    CHECK(rank == r, "split with equal keys: rank %d, expected %d", rank, r);
    check_comm_cmp(MPI_COMM_WORLD, same, MPI_CONGRUENT, "(world, split with one color)");

    /* MPI_UNDEFINED gives MPI_COMM_NULL; rank 0 is the only one left. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, r == 0 ? 0 : MPI_UNDEFINED, 0, &none));
    if (r == 0) {
        CHECK(none != MPI_COMM_NULL, "split: rank 0 with color 0 got MPI_COMM_NULL");
        if (none != MPI_COMM_NULL) {
            MPI_Comm_size(none, &size);
            CHECK(size == 1, "split: the color-0 communicator has size %d, expected 1", size);
            MPI_OK(MPI_Comm_free(&none));
        }
    } else {
        CHECK(none == MPI_COMM_NULL, "split with MPI_UNDEFINED color did not give MPI_COMM_NULL");
    }

    /* Split of a split. */
    MPI_Comm sub;
    MPI_Comm_rank(parity, &rank);
    MPI_OK(MPI_Comm_split(parity, rank % 2, -rank, &sub));
    mtest_ring(sub, "a split of the parity split");
    MPI_OK(MPI_Comm_free(&sub));

    MPI_OK(MPI_Comm_free(&parity));
    MPI_OK(MPI_Comm_free(&rev));
    MPI_OK(MPI_Comm_free(&same));
}

static void groups_and_create(void)
{
    int p = mtest_size, r = mtest_rank;
    MPI_Group world, even, odd, rev, un, inter, diff, g0;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int size = -1, rank = -1;
    MPI_OK(MPI_Group_size(world, &size));
    MPI_OK(MPI_Group_rank(world, &rank));
    CHECK(size == p && rank == r, "world group: size %d rank %d, expected %d %d", size, rank, p, r);

    int *ranks = malloc((size_t)p * sizeof(int)), *out = malloc((size_t)p * sizeof(int));
    int ne = 0;
    for (int i = 0; i < p; i += 2)
        ranks[ne++] = i;
    MPI_OK(MPI_Group_incl(world, ne, ranks, &even));
    MPI_OK(MPI_Group_excl(world, ne, ranks, &odd));
    MPI_OK(MPI_Group_size(even, &size));
    CHECK(size == ne, "even group size %d, expected %d", size, ne);
    MPI_OK(MPI_Group_size(odd, &size));
    CHECK(size == p - ne, "odd group (excl) size %d, expected %d", size, p - ne);
    MPI_OK(MPI_Group_rank(even, &rank));
    CHECK(rank == (r % 2 ? MPI_UNDEFINED : r / 2), "rank in the even group %d, expected %d", rank,
          r % 2 ? MPI_UNDEFINED : r / 2);
    MPI_OK(MPI_Group_rank(odd, &rank));
    CHECK(rank == (r % 2 ? r / 2 : MPI_UNDEFINED), "rank in the odd group %d, expected %d", rank,
          r % 2 ? r / 2 : MPI_UNDEFINED);

    for (int i = 0; i < p; i++)
        ranks[i] = p - 1 - i;
    MPI_OK(MPI_Group_incl(world, p, ranks, &rev));
    check_group_cmp(world, rev, p == 1 ? MPI_IDENT : MPI_SIMILAR, "(world, reversed)");
    check_group_cmp(world, world, MPI_IDENT, "(world, world)");
    check_group_cmp(even, odd, p == 1 ? MPI_UNEQUAL : MPI_UNEQUAL, "(even, odd)");

    /* translate_ranks world -> reversed, with MPI_PROC_NULL passing through. */
    for (int i = 0; i < p; i++)
        ranks[i] = i;
    MPI_OK(MPI_Group_translate_ranks(world, p, ranks, rev, out));
    for (int i = 0; i < p; i++)
        CHECK(out[i] == p - 1 - i, "translate world %d -> reversed: %d, expected %d", i, out[i], p - 1 - i);
    int pn = MPI_PROC_NULL, pn_out = 0;
    MPI_OK(MPI_Group_translate_ranks(world, 1, &pn, rev, &pn_out));
    CHECK(pn_out == MPI_PROC_NULL, "translate MPI_PROC_NULL: %d, expected MPI_PROC_NULL", pn_out);
    MPI_OK(MPI_Group_translate_ranks(world, p, ranks, even, out));
    for (int i = 0; i < p; i++)
        CHECK(out[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate world %d -> even: %d, expected %d", i, out[i],
              i % 2 ? MPI_UNDEFINED : i / 2);

    /* union(even, odd): evens in order, then odds. */
    MPI_OK(MPI_Group_union(even, odd, &un));
    MPI_OK(MPI_Group_size(un, &size));
    CHECK(size == p, "union(even, odd) size %d, expected %d", size, p);
    MPI_OK(MPI_Group_translate_ranks(world, p, ranks, un, out));
    for (int i = 0; i < p; i++) {
        int want = i % 2 ? ne + i / 2 : i / 2;
        CHECK(out[i] == want, "world %d in union(even, odd) is %d, expected %d", i, out[i], want);
    }
    check_group_cmp(world, un, p <= 2 ? MPI_IDENT : MPI_SIMILAR, "(world, union(even, odd))");
    /* intersection(rev, even): the evens in rev's (descending) order. */
    MPI_OK(MPI_Group_intersection(rev, even, &inter));
    MPI_OK(MPI_Group_size(inter, &size));
    CHECK(size == ne, "intersection(reversed, even) size %d, expected %d", size, ne);
    MPI_OK(MPI_Group_rank(inter, &rank));
    if (r % 2 == 0) {
        int want = 0; /* evens above r come first */
        for (int i = p - 1; i > r; i--)
            if (i % 2 == 0)
                want++;
        CHECK(rank == want, "rank in intersection(reversed, even) %d, expected %d", rank, want);
    } else {
        CHECK(rank == MPI_UNDEFINED, "odd rank in intersection(reversed, even): %d", rank);
    }
    /* difference(world, even) is odd, in world's order. */
    MPI_OK(MPI_Group_difference(world, even, &diff));
    check_group_cmp(diff, odd, MPI_IDENT, "(difference(world, even), odd)");
    /* difference(world, world) is empty. */
    MPI_OK(MPI_Group_difference(world, world, &g0));
    MPI_OK(MPI_Group_size(g0, &size));
    CHECK(size == 0, "difference(world, world) size %d, expected 0", size);
    MPI_OK(MPI_Group_rank(g0, &rank));
    CHECK(rank == MPI_UNDEFINED, "rank in an empty group %d, expected MPI_UNDEFINED", rank);
    MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &size));
    CHECK(size == 0, "MPI_GROUP_EMPTY size %d", size);
    MPI_OK(MPI_Group_free(&g0));
    CHECK(g0 == MPI_GROUP_NULL, "Group_free did not set the handle to MPI_GROUP_NULL");

    /* Comm_create from the even group: members get a communicator ranked
     * r/2, the others MPI_COMM_NULL. */
    MPI_Comm ce;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, even, &ce));
    if (r % 2 == 0) {
        CHECK(ce != MPI_COMM_NULL, "Comm_create: a member got MPI_COMM_NULL");
        if (ce != MPI_COMM_NULL) {
            MPI_Comm_size(ce, &size);
            MPI_Comm_rank(ce, &rank);
            CHECK(size == ne && rank == r / 2, "Comm_create(even): size %d rank %d, expected %d %d", size, rank, ne,
                  r / 2);
            mtest_ring(ce, "the communicator of the even group");
            MPI_Group cg;
            MPI_OK(MPI_Comm_group(ce, &cg));
            check_group_cmp(cg, even, MPI_IDENT, "(group of Comm_create(even), even)");
            MPI_OK(MPI_Group_free(&cg));
            MPI_OK(MPI_Comm_free(&ce));
        }
    } else {
        CHECK(ce == MPI_COMM_NULL, "Comm_create: a non-member got a communicator");
    }
    /* Comm_create from the reversed group: a reordered world. */
    MPI_Comm cr;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, rev, &cr));
    MPI_Comm_rank(cr, &rank);
    CHECK(rank == p - 1 - r, "Comm_create(reversed): rank %d, expected %d", rank, p - 1 - r);
    check_comm_cmp(MPI_COMM_WORLD, cr, p == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "(world, Comm_create(reversed))");
    mtest_ring(cr, "Comm_create(reversed)");
    MPI_OK(MPI_Comm_free(&cr));

    MPI_Group *all[] = {&world, &even, &odd, &rev, &un, &inter, &diff};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_OK(MPI_Group_free(all[i]));
    free(ranks);
    free(out);
}

/* Many dup/free cycles: context ids are recycled correctly. */
static void churn(void)
{
    for (int i = 0; i < 200; i++) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 50 == 0)
            mtest_ring(c, "a recycled dup");
        MPI_OK(MPI_Comm_free(&c));
    }
}

/* MPI_Group_range_incl/excl: the triplets (first, last, stride) name the
 * same ranks as the explicit list MPI_Group_incl/excl takes. */
static void group_ranges(void)
{
    MPI_Group world, evens, odds, evens_by_list, empty;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ranges[1][3] = {{0, mtest_size - 1, 2}};
    MPI_OK(MPI_Group_range_incl(world, 1, ranges, &evens));
    MPI_OK(MPI_Group_range_excl(world, 1, ranges, &odds));
    int list[64], n = 0;
    for (int r = 0; r < mtest_size && n < 64; r += 2)
        list[n++] = r;
    MPI_OK(MPI_Group_incl(world, n, list, &evens_by_list));
    int cmp = -1, ne = -1, no = -1;
    MPI_OK(MPI_Group_compare(evens, evens_by_list, &cmp));
    MPI_OK(MPI_Group_size(evens, &ne));
    MPI_OK(MPI_Group_size(odds, &no));
    CHECK(cmp == MPI_IDENT, "range_incl (0, %d, 2) compares %d with the explicit list, expected MPI_IDENT",
          mtest_size - 1, cmp);
    CHECK(ne == (mtest_size + 1) / 2 && no == mtest_size / 2, "range groups of sizes %d and %d for %d ranks", ne,
          no, mtest_size);
    int backwards[1][3] = {{mtest_size - 1, 0, -1}}, bad[1][3] = {{0, mtest_size, 1}};
    MPI_Group reversed;
    MPI_OK(MPI_Group_range_incl(world, 1, backwards, &reversed));
    int first = -1, zero = 0;
    MPI_OK(MPI_Group_translate_ranks(reversed, 1, &zero, world, &first));
    CHECK(first == mtest_size - 1, "a negative stride's group starts with world rank %d, expected %d", first,
          mtest_size - 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls = MPI_SUCCESS;
    MPI_Error_class(MPI_Group_range_incl(world, 1, bad, &empty), &cls);
    CHECK(cls == MPI_ERR_RANK, "a triplet past the group's end: class %d, expected MPI_ERR_RANK", cls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_Group *all[] = {&world, &evens, &odds, &evens_by_list, &reversed};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        MPI_OK(MPI_Group_free(all[i]));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    basics();
    dup_and_isolation();
    splits();
    groups_and_create();
    churn();
    group_ranges();
    return mtest_finish();
}
