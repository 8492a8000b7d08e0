/*
 * test_memo.c -- the memo of point statistics flashspec.calibrate keeps
 * (sim/lua/sweep_exec.h, fs_memo): an entry is found by its whole id only --
 * ids differing in one bit of either half, in any byte, miss --, entries
 * unused for FS_MEMO_KEEP evaluations are dropped and the rest stay found
 * after the index is rebuilt, and many entries (index growth) stay exact.
 */
#include "sim/lua/sweep_exec.h"

#include <string.h>

#include "../../check.h"

static sim_point_stats stats_of(int64_t v)
{
    sim_point_stats st;
    memset(&st, 0, sizeof st);
    st.tokens = v;
    return st;
}

static void test_whole_id(void)
{
    fs_memo m = {0};
    sim_sweep_id id = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    sim_point_stats st = stats_of(42);
    CHECK(fs_memo_find(&m, id) == NULL); /* empty */
    CHECK(fs_memo_put(&m, id, &st) == 0);
    fs_memo_entry *e = fs_memo_find(&m, id);
    CHECK(e && e->st.tokens == 42);
    for (int half = 0; half < 2; half++)
        for (int bit = 0; bit < 64; bit++) {
            sim_sweep_id near = id;
            if (half)
                near.hi ^= 1ull << bit;
            else
                near.lo ^= 1ull << bit;
            CHECK(fs_memo_find(&m, near) == NULL);
        }
    fs_memo_free(&m);
}

static void test_prune_and_growth(void)
{
    fs_memo m = {0};
    enum { N = 3000 };
    for (int64_t i = 0; i < N; i++) {
        m.now = i / 1000; /* three evaluations of 1000 points */
        sim_sweep_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        sim_point_stats st = stats_of(i);
        CHECK(fs_memo_put(&m, id, &st) == 0);
    }
    for (int64_t i = 0; i < N; i++) {
        sim_sweep_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        fs_memo_entry *e = fs_memo_find(&m, id);
        CHECK(e && e->st.tokens == i);
    }
    /* FS_MEMO_KEEP evaluations later only the last one's entries stay */
    m.now = 2 + FS_MEMO_KEEP - 1;
    fs_memo_prune(&m);
    for (int64_t i = 0; i < N; i++) {
        sim_sweep_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        fs_memo_entry *e = fs_memo_find(&m, id);
        if (i >= 2000)
            CHECK(e && e->st.tokens == i);
        else
            CHECK(e == NULL);
    }
    fs_memo_free(&m);
}

int main(void)
{
    test_whole_id();
    test_prune_and_growth();
    return check_done("test_memo");
}
