/*
 * test_lp_host.c -- the host of policies written in Lua without the script
 * API (sim/lpolicy/lp_host.h):
 *   - examples/policies/chain.lua builds, through the engine's policy
 *     interface, the very tree the built-in chain builds;
 *   - every hook's answer is read: build shapes the tree, prune's keep,
 *     plan's fields, observe's feedback, reset;
 *   - a hook's error is one line naming the hook, file and line; a wrong
 *     plan field, a prune that is not a table, a tree changed outside build;
 *   - a file that does not load: no hooks table, no build, a hook that is
 *     not a function; a policy that never returns stops at its instruction
 *     limit; the params against the file's declarations (unknown with the
 *     nearest name, out of range, not an integer, not a choice);
 *   - what a file declares: the knob rows flashspec.tune searches, the
 *     listing, the name's form at its boundaries, the source hash.
 * argv[1]: the project root.
 */
#include "sim/lpolicy/lp_host.h"

#include <fcntl.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../check.h"
#include "engine/eng_policy.h"
#include "engine/pol_chain.h"

enum { SEQ_LEN = 40, KCAND = 3, MAXN = 64 };

/* A draft that proposes seq[depth + 1] first, then tokens nobody accepts. */
typedef struct oracle {
    eng_token seq[SEQ_LEN];
    int32_t calls, rows, units[2];
} oracle;

static int expand(void *ctx, eng_tree *t, const int32_t *ids, int32_t count, eng_unit unit)
{
    oracle *o = ctx;
    o->calls++;
    o->rows += count;
    o->units[unit == ENG_UNIT_NPU]++;
    for (int32_t i = 0; i < count; i++) {
        int32_t d = t->nodes[ids[i]].depth;
        eng_cand *c = eng_tree_cands_alloc(t, ids[i], KCAND);
        if (!c) return ENG_E_FULL;
        for (int32_t j = 0; j < KCAND; j++) {
            c[j].tok = j == 0 ? o->seq[(d + 1) % SEQ_LEN] : 500 + 10 * j + d;
            c[j].logp = -0.2f - (float)j;
        }
    }
    return ENG_OK;
}

static int target_tokens(void *ctx, const eng_tree *t, const uint8_t *keep, eng_token *g)
{
    (void)ctx;
    for (int32_t u = 0; u < t->n_nodes; u++)
        g[u] = !keep || keep[u] ? t->nodes[u].tok : ENG_NO_TOKEN;
    return ENG_OK;
}

static _Alignas(8) unsigned char mem_a[MAXN * sizeof(eng_node) + MAXN * KCAND * sizeof(eng_cand)];
static _Alignas(8) unsigned char mem_b[sizeof mem_a];

static void oracle_init(oracle *o)
{
    memset(o, 0, sizeof *o);
    for (int32_t i = 0; i < SEQ_LEN; i++)
        o->seq[i] = (eng_token)(11 + (i * 29) % 97);
}

/* A build's surroundings: the draft, a tree in mem_a with its root, limits. */
typedef struct build_env {
    oracle o;
    eng_tree t;
    eng_draft_oracle d;
    eng_build_limits lim;
} build_env;

static void env_init(build_env *b)
{
    oracle_init(&b->o);
    eng_tree_init(&b->t, mem_a, sizeof mem_a, MAXN, MAXN * KCAND);
    eng_tree_reset(&b->t, b->o.seq[0]);
    b->d = (eng_draft_oracle){.expand = expand, .ctx = &b->o, .k = KCAND};
    b->lim = (eng_build_limits){.max_nodes = MAXN, .max_depth = 8, .remaining = 50};
}

/* Params for a policy file "t.lua" holding src[0..len) (the bytes are not
 * NUL-terminated: lp_read_source's are not), with the params table args. */
static lp_params params_n(const char *src, size_t len, const char *args)
{
    lp_params p;
    memset(&p, 0, sizeof p);
    snprintf(p.file, sizeof p.file, "t.lua");
    snprintf(p.args, sizeof p.args, "%s", args ? args : "{}");
    p.src = src;
    p.src_len = len;
    p.step_limit = 2000000;
    p.mem_limit = (size_t)64 << 20;
    return p;
}

static lp_params params_of(const char *src, const char *args)
{
    return params_n(src, strlen(src), args);
}

/* lp_open's message for src and args ("" when it opens). */
static const char *open_error(const char *src, const char *args)
{
    static char err[LP_ERR_CAP];
    lp_params p = params_of(src, args);
    err[0] = 0;
    lp_state *s = lp_open(&p, err, sizeof err);
    if (s) lp_destroy(s);
    return err;
}

static int has(const char *text, const char *want)
{
    if (strstr(text, want) && !strchr(text, '\n')) return 1;
    fprintf(stderr, "  '%s' lacks '%s'\n", text, want);
    return 0;
}

static void test_chain_equal(const char *root)
{
    char path[1024], err[LP_ERR_CAP];
    snprintf(path, sizeof path, "%s/examples/policies/chain.lua", root);
    char *src;
    size_t len;
    CHECK_EQ_INT(lp_read_source(path, &src, &len, err, sizeof err), 0);
    if (!src) return;
    lp_params p = params_n(src, len, "{k=5,unit=\"npu\"}");
    eng_policy lua, c;
    CHECK_EQ_INT(lp_create(&p, &lua), ENG_OK);
    eng_chain_params cp = {5, ENG_UNIT_NPU};
    CHECK_EQ_INT(eng_chain_create(&cp, &c), ENG_OK);
    oracle oa, ob;
    oracle_init(&oa);
    oracle_init(&ob);
    eng_tree ta, tb;
    eng_tree_init(&ta, mem_a, sizeof mem_a, MAXN, MAXN * KCAND);
    eng_tree_init(&tb, mem_b, sizeof mem_b, MAXN, MAXN * KCAND);
    eng_build_limits lim = {.max_nodes = MAXN, .max_depth = 16, .remaining = 100};
    for (int cycle = 0; cycle < 3; cycle++) {
        eng_tree_reset(&ta, oa.seq[0]);
        eng_tree_reset(&tb, ob.seq[0]);
        eng_draft_oracle da = {.expand = expand, .ctx = &oa, .k = KCAND};
        eng_draft_oracle db = {.expand = expand, .ctx = &ob, .k = KCAND};
        CHECK_EQ_INT(lua.i->build(lua.self, &ta, &da, &lim), ENG_OK);
        CHECK_EQ_INT(c.i->build(c.self, &tb, &db, &lim), ENG_OK);
        CHECK_EQ_INT(ta.n_nodes, 6);
        CHECK_EQ_INT(ta.n_nodes, tb.n_nodes);
        for (int32_t u = 0; u < ta.n_nodes && u < tb.n_nodes; u++)
            CHECK(ta.nodes[u].tok == tb.nodes[u].tok && ta.nodes[u].parent == tb.nodes[u].parent);
    }
    CHECK(oa.calls == ob.calls && oa.rows == ob.rows && oa.units[1] == ob.units[1]);
    CHECK(oa.units[1] > 0 && oa.units[0] == 0); /* unit = "npu" read */
    CHECK(lua.i->error(lua.self) == NULL);
    eng_policy_destroy(&lua);
    eng_policy_destroy(&c);
    free(src);
}

/* A policy that answers every hook. */
static const char *const full_src =
    "local p = ...\n"
    "local seen = -1\n"
    "local resets = 0\n"
    "return {\n"
    "  name = 'full', needs_draft = true,\n"
    "  reset = function() resets = resets + 1 end,\n"
    "  build = function(tree, draft, lim)\n"
    "    draft:expand(0, 'cpu')\n"
    "    for j = 1, draft:k() do\n"
    "      local tok, lp = tree:cand(0, j)\n"
    "      tree:add(0, tok, lp)\n"
    "    end\n"
    "    if seen >= 0 then tree:add(1, 900 + seen + resets, -1.0) end\n"
    "  end,\n"
    "  prune = function(tree, target) return { [0] = false, [2] = false, [3] = 0 } end,\n"
    "  plan = function(tree, keep)\n"
    "    return { rows = 3, leaves = keep[2] and 3 or 2, proj = 'cpu_on_demand', exit_layer = 7 }\n"
    "  end,\n"
    "  observe = function(fb) seen = fb.accepted * 10 + fb.rows end,\n"
    "}\n";

static void test_hooks(void)
{
    lp_params p = params_of(full_src, NULL);
    char err[LP_ERR_CAP] = "";
    lp_state *s = lp_open(&p, err, sizeof err);
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(!strcmp(s->name, "full") && s->named == 1 && s->needs_draft == 1);
    for (int h = 0; h < H_N; h++)
        CHECK((s->ref[h] != LUA_NOREF) == (h != H_CALIBRATE && h != H_PROVISIONAL));
    eng_policy_i *i = &s->iface;
    CHECK(i->calibrate == NULL && i->provisional == NULL && i->prune && i->observe);
    build_env b;
    env_init(&b);
    CHECK_EQ_INT(i->build(s, &b.t, &b.d, &b.lim), ENG_OK);
    CHECK_EQ_INT(b.t.n_nodes, 1 + KCAND);
    CHECK(b.t.nodes[1].tok == b.o.seq[1] && b.t.nodes[2].tok == 510 && b.t.nodes[1].parent == 0);
    CHECK(fabsf(b.t.nodes[2].logq - (-1.2f)) < 1e-6f);
    uint8_t keep[MAXN];
    memset(keep, 1, sizeof keep);
    eng_target_oracle g = {.verify = target_tokens};
    CHECK_EQ_INT(i->prune(s, &b.t, &g, keep), ENG_OK);
    CHECK(keep[0] == 1 && keep[1] == 1 && keep[2] == 0 && keep[3] == 1);
    eng_verify_plan plan;
    i->plan(s, &b.t, keep, &plan);
    CHECK(plan.rows == 3 && plan.leaves == 2 && plan.exit_layer == 7);
    CHECK(plan.proj == ENG_PROJ_ONDEMAND_CPU);
    CHECK(i->error(s) == NULL);
    eng_feedback fb;
    memset(&fb, 0, sizeof fb);
    fb.outcome.accepted = 2;
    fb.plan.rows = 3;
    i->observe(s, &fb);
    i->reset(s);
    eng_tree_reset(&b.t, b.o.seq[0]);
    CHECK_EQ_INT(i->build(s, &b.t, &b.d, &b.lim), ENG_OK);
    CHECK_EQ_INT(b.t.n_nodes, 2 + KCAND); /* observe's 23 and one reset: token 924 */
    CHECK(b.t.nodes[b.t.n_nodes - 1].tok == 924 && b.t.nodes[b.t.n_nodes - 1].parent == 1);
    lp_destroy(s);
}

/* The error of one policy's first build (after prune and plan when
 * stage is 1 or 2). */
static const char *hook_error(const char *src, int stage)
{
    static char msg[LP_ERR_CAP];
    lp_params p = params_of(src, NULL);
    char err[LP_ERR_CAP] = "";
    lp_state *s = lp_open(&p, err, sizeof err);
    if (!s) {
        snprintf(msg, sizeof msg, "open: %.480s", err);
        return msg;
    }
    build_env b;
    env_init(&b);
    int rc = s->iface.build(s, &b.t, &b.d, &b.lim);
    uint8_t keep[MAXN];
    memset(keep, 1, sizeof keep);
    eng_target_oracle g = {.verify = target_tokens};
    if (rc == ENG_OK && stage >= 1 && s->iface.prune) rc = s->iface.prune(s, &b.t, &g, keep);
    eng_verify_plan plan;
    if (rc == ENG_OK && stage >= 2 && s->iface.plan) s->iface.plan(s, &b.t, keep, &plan);
    const char *e = s->iface.error(s);
    snprintf(msg, sizeof msg, "%s", e ? e : "(none)");
    lp_destroy(s);
    return msg;
}

static void test_errors(void)
{
    CHECK(has(hook_error("return { build = function() error('boom') end }", 0),
              "build: t.lua:1: boom"));
    CHECK(has(hook_error("return { build = function() end,\n"
                         "  plan = function() return { proj = 'gpu' } end }", 2),
              "plan: a field has the wrong type or value"));
    CHECK(has(hook_error("return { build = function() end,\n"
                         "  plan = function() return { rows = 2.5 } end }", 2),
              "plan: a field has the wrong type or value"));
    CHECK(has(hook_error("return { build = function() end,\n"
                         "  prune = function() return 3 end }", 1),
              "prune: must return a table of node id -> false (or nil), not a number"));
    CHECK(has(hook_error("return { build = function() end,\n"
                         "  prune = function(t) t:add(0, 5, -1) end }", 1), "prune: "));
    CHECK(has(hook_error("return { build = function() while true do end end }", 0),
              "instruction limit of 2000000 exceeded"));
    CHECK(has(hook_error("return { build = function() error('two\\nlines') end }", 0),
              "build: t.lua:1: two lines"));
    CHECK(has(hook_error("return { build = function() error({}) end }", 0),
              "build: t.lua:1: error raised with a table value"));
    CHECK(!strcmp(hook_error("return { build = function() end }", 2), "(none)"));
    CHECK(has(open_error("return 3", NULL), "t.lua: must return a table of hooks (got number)"));
    CHECK(has(open_error("return {}", NULL), "t.lua: the hooks table has no build function"));
    CHECK(has(open_error("return { build = function() end, prune = 3 }", NULL),
              "t.lua: hook 'prune' must be a function"));
    CHECK(has(open_error("return { build = function() end, plan = {} }", NULL),
              "t.lua: hook plan must be a function (got table)"));
    CHECK(has(open_error("return { build = ", NULL), "t.lua:1:"));
    CHECK(!strcmp(open_error("return { build = function() end }", NULL), ""));
}

static const char *const decl_src =
    "return { build = function() end,\n"
    "  params = { k = { default = 4, min = 1, max = 8, integer = true, doc = 'chain length' },\n"
    "             mode = { default = 'a', choices = { 'a', 'b' } },\n"
    "             greedy = { default = true },\n"
    "             label = { default = 'x' },\n"
    "             rate = { default = 0.5, min = 0, max = 1 } } }\n";

static void test_declared(void)
{
    CHECK(!strcmp(open_error(decl_src, "{k=8,mode=\"b\"}"), ""));
    CHECK(!strcmp(open_error(decl_src, "{k=1}"), ""));
    CHECK(has(open_error(decl_src, "{k=9}"), "param 'k' = 9.0 is out of range [1.0, 8.0]"));
    CHECK(has(open_error(decl_src, "{k=0}"), "param 'k' = 0.0 is out of range [1.0, 8.0]"));
    CHECK(has(open_error(decl_src, "{k=2.5}"), "param 'k' must be an integer"));
    CHECK(has(open_error(decl_src, "{kk=3}"), "unknown param 'kk' (did you mean 'k'?)"));
    CHECK(has(open_error(decl_src, "{zzzzzz=3}"), "unknown param 'zzzzzz'"));
    CHECK(!strstr(open_error(decl_src, "{zzzzzz=3}"), "did you mean"));
    CHECK(has(open_error(decl_src, "{mode=\"c\"}"), "param 'mode' is not one of its choices"));
    /* the knobs flashspec.tune searches */
    lp_params p = params_of(decl_src, "{k=6}");
    lp_knob kn;
    char err[LP_ERR_CAP];
    CHECK_EQ_INT(lp_knob_read(&p, "k", &kn, err, sizeof err), 0);
    CHECK(kn.d.type == ENG_PARAM_INT && kn.d.min == 1 && kn.d.max == 8 && kn.current == 6);
    CHECK_EQ_INT(lp_knob_read(&p, "rate", &kn, err, sizeof err), 0);
    CHECK(kn.d.type == ENG_PARAM_DOUBLE && kn.d.min == 0 && kn.d.max == 1 && kn.current == 0.5);
    CHECK_EQ_INT(lp_knob_read(&p, "mode", &kn, err, sizeof err), 0);
    CHECK(kn.d.type == ENG_PARAM_ENUM && !strcmp(kn.choices[1], "b") && !kn.choices[2]);
    CHECK(kn.current == 0);
    CHECK_EQ_INT(lp_knob_read(&p, "greedy", &kn, err, sizeof err), 0);
    CHECK(kn.d.type == ENG_PARAM_BOOL && kn.current == 1);
    CHECK_EQ_INT(lp_knob_read(&p, "label", &kn, err, sizeof err), -1);
    CHECK(has(err, "knob 'label' of policy lua is a string param without choices"));
    CHECK_EQ_INT(lp_knob_read(&p, "rat", &kn, err, sizeof err), -1);
    CHECK(has(err, "has no knob 'rat' (did you mean 'rate'?)"));
    lp_params q = params_of("return { build = function() end }", NULL);
    CHECK_EQ_INT(lp_knob_read(&q, "k", &kn, err, sizeof err), -1);
    CHECK(has(err, "declares no params"));
    /* lp_is: a Lua policy's descriptor, not a built-in's */
    eng_policy_desc lua = {.create = lp_create};
    CHECK(lp_is(&lua) == 1 && lp_is(eng_policy_lookup("chain")) == 0 && lp_is(NULL) == 0);
}

/* What lp_describe printed for src (a file written under dir). */
static int describe(const char *dir, const char *src, char *out, size_t n, char *err)
{
    char path[256], outp[256];
    snprintf(path, sizeof path, "%s/p.lua", dir);
    snprintf(outp, sizeof outp, "%s/out", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return -2;
    fputs(src, f);
    fclose(f);
    fflush(stdout);
    int saved = dup(1), fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    close(fd);
    int rc = lp_describe(path, 0, err, LP_ERR_CAP);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    f = fopen(outp, "rb");
    size_t got = f ? fread(out, 1, n - 1, f) : 0;
    out[got] = 0;
    if (f) fclose(f);
    return rc;
}

static void test_describe(void)
{
    char dir[] = "/tmp/fs-lp-host-XXXXXX", out[4096], err[LP_ERR_CAP];
    if (!mkdtemp(dir)) return;
    CHECK_EQ_INT(describe(dir, decl_src, out, sizeof out, err), 0);
    CHECK(strstr(out, "(unnamed): Lua policy ") && strstr(out, "  hooks: build\n"));
    const char *g = strstr(out, "greedy"), *k = strstr(out, "\n  k "), *l = strstr(out, "label");
    const char *m = strstr(out, "mode"), *r = strstr(out, "rate");
    CHECK(g && k && l && m && r && g < k && k < l && l < m && m < r); /* sorted */
    CHECK(strstr(out, "integer 1..8") && strstr(out, "chain length") && strstr(out, "a, b"));
    CHECK_EQ_INT(describe(dir, "return { name = 'chain', build = function() end }", out,
                          sizeof out, err), -1);
    CHECK(has(err, "policy name 'chain' is already a built-in policy's name"));
    CHECK_EQ_INT(describe(dir, "return { name = 'a b', build = function() end }", out,
                          sizeof out, err), -1);
    CHECK(has(err, "its policy name must be 1 to 63 letters"));
    CHECK_EQ_INT(describe(dir, "return { name = 'mine', needs_draft = false, build = "
                               "function() end }", out, sizeof out, err), 0);
    CHECK(strstr(out, "mine: Lua policy ") && strstr(out, "(drafts nothing)"));
    CHECK(strstr(out, "(no params declared"));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", dir);
}

static void test_name_and_hash(void)
{
    char n63[64], n64[65];
    memset(n63, 'a', 63);
    n63[63] = 0;
    memset(n64, 'a', 64);
    n64[64] = 0;
    CHECK(lp_name_ok("a") && lp_name_ok("_a") && lp_name_ok("Ab.c-d_9") && lp_name_ok(n63));
    CHECK(!lp_name_ok("") && !lp_name_ok(n64) && !lp_name_ok("1a") && !lp_name_ok(".a"));
    CHECK(!lp_name_ok("a b") && !lp_name_ok("a/b") && !lp_name_ok("a\"b"));
    char h[40], h2[40];
    lp_source_hash("", 0, h, sizeof h);
    CHECK(!strcmp(h, "cbf29ce4842223256a09e667f3bcc909")); /* the two lanes' offsets */
    lp_source_hash("return 1", 8, h, sizeof h);
    lp_source_hash("return 2", 8, h2, sizeof h2);
    CHECK(strlen(h) == 32 && strcmp(h, h2) != 0);
    lp_source_hash("a\0b", 3, h, sizeof h);
    lp_source_hash("a\0c", 3, h2, sizeof h2);
    CHECK(strcmp(h, h2) != 0); /* every byte, a NUL's successors too */
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_lp_host PROJECT_ROOT\n");
        return 2;
    }
    test_chain_equal(argv[1]);
    test_hooks();
    test_errors();
    test_declared();
    test_describe();
    test_name_and_hash();
    return check_done("lpolicy/host");
}
