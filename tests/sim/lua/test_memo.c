/*
 * test_memo.c -- the memo of point statistics flashspec.calibrate keeps
 * (sim/lua/sweep_exec.h, fs_memo): an entry is found by its whole id only --
 * ids differing in one bit of either half, in any byte, miss --, entries
 * unused for FS_MEMO_KEEP evaluations are dropped and the rest stay found
 * after the index is rebuilt, and many entries (index growth) stay exact;
 * and fs_exec_run runs only the points the memo did not give (memo 0):
 * one marked memo keeps its statistics, and every other point gets its own.
 */
#include "sim/lua/sweep_exec.h"

#include <lauxlib.h>
#include <string.h>

#include "../../check.h"
#include "../hw/hw_fixtures.h"
#include "engine/pol_flash_ar.h"
#include "sim/sweep/sim_sweep.h"

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
    sim_id id = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    sim_point_stats st = stats_of(42);
    CHECK(fs_memo_find(&m, id) == NULL); /* empty */
    CHECK(fs_memo_put(&m, id, &st) == 0);
    fs_memo_entry *e = fs_memo_find(&m, id);
    CHECK(e && e->st.tokens == 42);
    for (int half = 0; half < 2; half++)
        for (int bit = 0; bit < 64; bit++) {
            sim_id near = id;
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
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        sim_point_stats st = stats_of(i);
        CHECK(fs_memo_put(&m, id, &st) == 0);
    }
    for (int64_t i = 0; i < N; i++) {
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        fs_memo_entry *e = fs_memo_find(&m, id);
        CHECK(e && e->st.tokens == i);
    }
    /* FS_MEMO_KEEP evaluations later only the last one's entries stay */
    m.now = 2 + FS_MEMO_KEEP - 1;
    fs_memo_prune(&m);
    for (int64_t i = 0; i < N; i++) {
        sim_id id = {(uint64_t)i * 0x9e3779b97f4a7c15ull, (uint64_t)i};
        fs_memo_entry *e = fs_memo_find(&m, id);
        if (i >= 2000)
            CHECK(e && e->st.tokens == i);
        else
            CHECK(e == NULL);
    }
    fs_memo_free(&m);
}

typedef struct exec_args {
    fs_exec *ex;
    fs_staged *sp;
    int64_t n;
} exec_args;

static int exec_lua(lua_State *L)
{
    exec_args *a = lua_touserdata(L, 1);
    fs_exec_run(L, a->ex, a->sp, a->n, 0, "test", 1);
    return 0;
}

/* Points a memo gave (memo 1 and 2) are not run and keep their statistics;
 * the others run, each its own point, at any position among them. */
static void test_exec_skips_memo(void)
{
    sim_device dev = phone();
    dev.dram_budget_gb = 64.0;
    sim_model tgt = q8();
    trc_synth_params sp;
    trc_synth_default_params(&sp);
    sp.prompts = 1;
    sp.output_len = 16;
    trc_trace *tr = NULL;
    trc_err terr;
    CHECK_EQ_INT(trc_synth(&sp, &tr, &terr), TRC_OK);
    if (!tr) return;
    eng_flash_ar_params fp;
    eng_params_defaults(eng_flash_ar_param_table, &fp);
    const double dram[4] = {0.0, 0.25, 0.5, 1.0};
    const int32_t memo[4] = {0, 1, 0, 2};
    fs_staged s[4];
    for (int i = 0; i < 4; i++) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].pt = (sim_point){.device = &dev, .target = &tgt, .trace = tr,
                              .policy = eng_policy_lookup("flash_ar"), .policy_params = &fp,
                              .dram_fraction = dram[i], .max_new_tokens = 8, .seed = 1};
        s[i].id = (sim_id){0x1234u + (uint64_t)i, 7};
        s[i].memo = memo[i];
        s[i].row.st.tokens = memo[i] ? -100 - i : 0; /* what the memo gave */
    }
    fs_exec ex;
    memset(&ex, 0, sizeof ex);
    ex.workers = 2;
    ex.quiet = 1;
    lua_State *L = luaL_newstate();
    exec_args a = {&ex, s, 4};
    lua_pushcfunction(L, exec_lua);
    lua_pushlightuserdata(L, &a);
    CHECK(lua_pcall(L, 1, 0, 0) == LUA_OK);
    lua_close(L);
    CHECK_EQ_INT(ex.computed, 2);
    CHECK(s[1].row.st.tokens == -101 && s[3].row.st.tokens == -103); /* not run */
    CHECK(s[0].code == 0 && s[2].code == 0);
    CHECK(s[0].state == SIM_SWEEP_COMPUTED && s[2].state == SIM_SWEEP_COMPUTED);
    CHECK(s[0].row.st.tokens == 8 && s[2].row.st.tokens == 8);
    /* each its own: half the layers pinned reads less than none */
    CHECK(s[2].row.st.tokens_per_s > s[0].row.st.tokens_per_s);
    trc_free(tr);
}

int main(void)
{
    test_exec_skips_memo();
    test_whole_id();
    test_prune_and_growth();
    return check_done("test_memo");
}
