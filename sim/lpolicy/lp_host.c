/*
 * lp_host.c -- the host of policies written in Lua (lp_host.h); a script
 * makes one with flashspec.policy.lua(FILE [, params]).
 *
 * A policy file is an ordinary Lua chunk run in the script sandbox.  It gets
 * the params table as its argument (`local p = ...`) and returns a table of
 * hooks -- the same hooks as eng_policy_i:
 *
 *   name         string, what result rows call the policy (default: the
 *                file name without .lua)
 *   needs_draft  boolean, default true (false: the policy drafts nothing)
 *   build(tree, draft, lim)        required; lim = { max_nodes, max_depth,
 *                                  remaining }
 *   reset()                        a new prompt starts
 *   prune(tree, target) -> keep    keep[id] == false drops node id from the
 *                                  rows past the exit layer (nil: keep all)
 *   plan(tree, keep) -> plan       { rows, leaves, exit_layer, rows_after_exit,
 *                                  proj = "eager_npu" | "cpu_on_demand" |
 *                                  "npu_on_demand", overlap_gate } (nil: the
 *                                  default plan)
 *   observe(fb)                    fb = { accepted, emitted, last_node, bonus,
 *                                  draft_ms, verify_ms, draft_calls, rows,
 *                                  leaves, verified_nodes }
 *   calibrate(prof)                prof = { accept_pos = {...}, verify_ms =
 *                                  {...}, draft_cpu_ms = {...}, draft_npu_ms =
 *                                  {...}, exit_layers = {...} }
 *   provisional(tree, draft, lim)  drafting while the target verifies
 *
 * Objects (valid only during the hook call that received them; node ids are
 * the engine's, 0 = the root; candidates are numbered from 1):
 *   tree:size()  tree:token(id)  tree:parent(id) (nil for the root)
 *   tree:depth(id)  tree:logq(id)  tree:cum_logq(id)  tree:leaves()
 *   tree:ncands(id)  tree:cand(id, j) -> token, logp  tree:child(id, token)
 *   tree:add(parent, token, logq) -> id (nil when the tree is full)
 *   tree:remove(drop) -> map  drops the nodes with drop[id] == true and their
 *                subtrees; map[old id] = new id (nil for dropped nodes)
 *   draft:expand(ids, unit)  ids a node id or a list; unit "cpu" or "npu"
 *   draft:k()  target:exit_scores(exit_index) -> scores, scores[u * K + j]
 *   (j from 1) the predictor score of candidate j of node u, NaN if none
 *
 * Threads and determinism: every point creates its own Lua state from the
 * file (policies are created per point on the worker that runs it), so
 * workers share nothing and results are the same at any -j or rank count.
 * The point id holds the file's content hash and the params, so an edited
 * policy file is never resumed from an older record.
 *
 * Limits: each state runs in the script sandbox with the script's
 * instruction limit (per point) and memory limit.  A Lua error in a hook
 * fails that point with one line naming the file, line and hook.
 */
#include "sim/lpolicy/lp_host.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/eng_policy.h"
#include "sim/config/sandbox.h"
#include "sim/sweep/sim_sweep.h"

/* ------------------------------------------------------------ params */

#define LPO(f) offsetof(lp_params, f)
const eng_param_desc lp_table[] = {
    {"file", ENG_PARAM_STRING, LPO(file), 0, 0, NAN, NULL, 1024, 0, "", NULL, 0, "the policy file"},
    {"args", ENG_PARAM_STRING, LPO(args), 0, 0, NAN, NULL, 1024, 0, "{}", NULL, 0,
     "the params table handed to the file"},
    {"source_hash", ENG_PARAM_STRING, LPO(source_hash), 0, 0, NAN, NULL, 40, 0, "", NULL, 0,
     "hash of the file's contents"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};
#undef LPO

/* ------------------------------------------------------------- state */

const char *const hook_names[H_N] = {"reset",   "build",     "prune",      "plan",
                                     "observe", "calibrate", "provisional"};

/* Message handler: the error with the innermost Lua position it lacks. */
static int lp_msgh(lua_State *L)
{
    const char *m = lua_tostring(L, 1);
    if (m) return 1;
    lua_Debug ar;
    char where[256] = "";
    for (int level = 1; lua_getstack(L, level, &ar); level++)
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
            break;
        }
    lua_pushfstring(L, "%serror raised with a %s value", where, luaL_typename(L, 1));
    return 1;
}

/* Calls hook h with nargs arguments already pushed above the function;
 * nres results.  0, or -1 with s->err set ("hook: message"). */
static int call_hook(lp_state *s, int h, int nargs, int nres)
{
    lua_State *L = s->L;
    int base = lua_gettop(L) - nargs; /* the function's index */
    lua_pushcfunction(L, lp_msgh);
    lua_insert(L, base);
    int rc = lua_pcall(L, nargs, nres, base);
    lua_remove(L, base);
    if (rc == LUA_OK) return 0;
    const char *m = lua_tostring(L, -1);
    if (rc == LUA_ERRMEM && s->lim.mem_refused)
        snprintf(s->err, sizeof s->err, "%s: the run's memory limit of %zu MiB is reached (the "
                 "script and every point's policy state share it; see --max-memory-mb)",
                 hook_names[h], s->lim.mem_limit_bytes >> 20);
    else
        snprintf(s->err, sizeof s->err, "%s: %s", hook_names[h], m ? m : "error");
    for (char *c = s->err; *c; c++)
        if (*c == '\n') *c = ' ';
    lua_pop(L, 1);
    return -1;
}

static void push_hook(lp_state *s, int h)
{
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->ref[h]);
}

static void bind(lp_state *s, eng_tree *t, void *draft, void *target)
{
    s->obj.tree->p = t;
    s->obj.tree->writable = draft != NULL; /* build and provisional shape the tree */
    s->obj.draft->p = draft;
    s->obj.target->p = target;
}

static void push_lim(lua_State *L, const eng_build_limits *lim)
{
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, lim->max_nodes);
    lua_setfield(L, -2, "max_nodes");
    lua_pushinteger(L, lim->max_depth);
    lua_setfield(L, -2, "max_depth");
    lua_pushinteger(L, lim->remaining);
    lua_setfield(L, -2, "remaining");
}

static int draft_hook(lp_state *s, int h, eng_tree *t, eng_draft_oracle *draft,
                      const eng_build_limits *lim)
{
    if (s->err[0]) return ENG_E_ORACLE; /* an earlier hook (reset) failed: its error stands */
    push_hook(s, h);
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->obj.tree_ref);
    lua_rawgeti(s->L, LUA_REGISTRYINDEX, s->obj.draft_ref);
    push_lim(s->L, lim);
    bind(s, t, draft, NULL);
    int rc = call_hook(s, h, 3, 0);
    bind(s, NULL, NULL, NULL);
    return rc ? ENG_E_ORACLE : ENG_OK;
}

static int lp_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    return draft_hook(self, H_BUILD, t, draft, lim);
}

static int lp_provisional(void *self, eng_tree *t, eng_draft_oracle *draft,
                          const eng_build_limits *lim)
{
    return draft_hook(self, H_PROVISIONAL, t, draft, lim);
}

static void lp_reset(void *self)
{
    lp_state *s = self;
    if (s->err[0]) return; /* an earlier hook failed: the point is failing */
    push_hook(s, H_RESET);
    call_hook(s, H_RESET, 0, 0);
}

static int lp_prune(void *self, const eng_tree *t, eng_target_oracle *target, uint8_t *keep)
{
    lp_state *s = self;
    lua_State *L = s->L;
    if (s->err[0]) return ENG_E_ORACLE;
    push_hook(s, H_PRUNE);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->obj.tree_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->obj.target_ref);
    bind(s, (eng_tree *)t, NULL, target);
    int rc = call_hook(s, H_PRUNE, 2, 1);
    bind(s, NULL, NULL, NULL);
    if (rc) return ENG_E_ORACLE;
    if (lua_istable(L, -1))
        for (int32_t u = 1; u < t->n_nodes; u++) { /* the root is always verified */
            lua_rawgeti(L, -1, u);
            if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) keep[u] = 0;
            lua_pop(L, 1);
        }
    else if (!lua_isnil(L, -1)) {
        snprintf(s->err, sizeof s->err, "prune: must return a table of node id -> false (or "
                 "nil), not a %s", luaL_typename(L, -1));
        lua_pop(L, 1);
        return ENG_E_ORACLE;
    }
    lua_pop(L, 1);
    return ENG_OK;
}

static int int_field(lua_State *L, int idx, const char *k, int32_t *out)
{
    lua_getfield(L, idx, k);
    int ok = 1;
    if (!lua_isnil(L, -1)) {
        int isnum;
        lua_Integer v = lua_tointegerx(L, -1, &isnum);
        if (isnum && v >= INT32_MIN && v <= INT32_MAX)
            *out = (int32_t)v;
        else
            ok = 0;
    }
    lua_pop(L, 1);
    return ok;
}

static void lp_plan(void *self, const eng_tree *t, const uint8_t *keep, eng_verify_plan *plan)
{
    lp_state *s = self;
    lua_State *L = s->L;
    eng_plan_default(t, keep, plan);
    if (s->err[0]) return;
    push_hook(s, H_PLAN);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->obj.tree_ref);
    lua_createtable(L, 0, 0);
    if (keep)
        for (int32_t u = 0; u < t->n_nodes; u++) {
            lua_pushboolean(L, keep[u] != 0);
            lua_rawseti(L, -2, u);
        }
    bind(s, (eng_tree *)t, NULL, NULL);
    int rc = call_hook(s, H_PLAN, 2, 1);
    bind(s, NULL, NULL, NULL);
    if (rc) return; /* the replay asks error() after the cycle's hooks */
    if (lua_istable(L, -1)) {
        int idx = lua_gettop(L);
        int ok = int_field(L, idx, "rows", &plan->rows) &&
                 int_field(L, idx, "leaves", &plan->leaves) &&
                 int_field(L, idx, "exit_layer", &plan->exit_layer) &&
                 int_field(L, idx, "rows_after_exit", &plan->rows_after_exit) &&
                 int_field(L, idx, "overlap_gate", &plan->overlap_gate);
        lua_getfield(L, idx, "proj");
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *p = lua_tostring(L, -1);
            if (!strcmp(p, "eager_npu")) plan->proj = ENG_PROJ_EAGER_NPU;
            else if (!strcmp(p, "cpu_on_demand")) plan->proj = ENG_PROJ_ONDEMAND_CPU;
            else if (!strcmp(p, "npu_on_demand")) plan->proj = ENG_PROJ_ONDEMAND_NPU;
            else ok = 0;
        } else if (!lua_isnil(L, -1)) {
            ok = 0;
        }
        lua_pop(L, 1);
        if (!ok)
            snprintf(s->err, sizeof s->err, "plan: a field has the wrong type or value (rows, "
                     "leaves, exit_layer, rows_after_exit, overlap_gate: integers; proj: "
                     "eager_npu, cpu_on_demand or npu_on_demand)");
    }
    lua_pop(L, 1);
}

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static void set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static void lp_observe(void *self, const eng_feedback *fb)
{
    lp_state *s = self;
    lua_State *L = s->L;
    if (s->err[0]) return;
    push_hook(s, H_OBSERVE);
    lua_createtable(L, 0, 10);
    set_int(L, "accepted", fb->outcome.accepted);
    set_int(L, "emitted", fb->outcome.emitted);
    set_int(L, "last_node", fb->outcome.last_node);
    set_int(L, "bonus", fb->outcome.bonus);
    set_num(L, "draft_ms", fb->draft_ms);
    set_num(L, "verify_ms", fb->verify_ms);
    set_int(L, "draft_calls", fb->draft_calls);
    set_int(L, "rows", fb->plan.rows);
    set_int(L, "leaves", fb->plan.leaves);
    set_int(L, "verified_nodes", fb->verified_nodes);
    call_hook(s, H_OBSERVE, 1, 0);
}

static void push_list(lua_State *L, const char *k, const double *v, int32_t n)
{
    lua_createtable(L, n > 0 ? n : 0, 0);
    for (int32_t i = 0; v && i < n; i++) {
        lua_pushnumber(L, v[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, k);
}

static int lp_calibrate(void *self, const eng_cost_profile *prof)
{
    lp_state *s = self;
    lua_State *L = s->L;
    push_hook(s, H_CALIBRATE);
    lua_createtable(L, 0, 5);
    push_list(L, "accept_pos", prof->accept_pos, prof->n_pos);
    push_list(L, "verify_ms", prof->verify_ms, prof->n_verify);
    push_list(L, "draft_cpu_ms", prof->draft_cpu_ms, prof->n_draft);
    push_list(L, "draft_npu_ms", prof->draft_npu_ms, prof->n_draft);
    lua_createtable(L, prof->n_exit > 0 ? prof->n_exit : 0, 0);
    for (int32_t i = 0; prof->exit_layers && i < prof->n_exit; i++) {
        lua_pushinteger(L, prof->exit_layers[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "exit_layers");
    return call_hook(s, H_CALIBRATE, 1, 0) ? ENG_E_ORACLE : ENG_OK;
}

static const char *lp_error(void *self)
{
    lp_state *s = self;
    return s->err[0] ? s->err : NULL;
}

void lp_destroy(void *self)
{
    lp_state *s = self;
    if (!s) return;
    if (s->L) lua_close(s->L);
    free(s);
}

/* lua_CFunction: [1] = lp_params *.  Loads the file with its params and
 * leaves the hooks table on the stack. */
/* Field k of the table at src into the plain table at dst: a scalar (nil,
 * number, string, boolean) or, with fn_ok, a function; anything else is an
 * error naming what.  The read may run the user's metamethods: callers run
 * inside a protected call of the sandboxed state, so an error or an endless
 * __index is charged and reported like any of the script's. */
static void copy_scalar(lua_State *L, int src, int dst, const char *k, int fn_ok, const char *what)
{
    lua_getfield(L, src, k);
    int ty = lua_type(L, -1);
    if (ty != LUA_TNIL && ty != LUA_TNUMBER && ty != LUA_TSTRING && ty != LUA_TBOOLEAN &&
        !(fn_ok && ty == LUA_TFUNCTION))
        luaL_error(L, "%s%s must be %s (got %s)", what, k,
                   fn_ok ? "a function" : "a number, string or boolean", luaL_typename(L, -1));
    lua_setfield(L, dst, k);
}

/* The params declaration at src as plain tables: per string key a spec of
 * scalars (default, min, max, integer, doc) and a choices list of scalars. */
static void copy_params(lua_State *L, int src, const char *file)
{
    lua_newtable(L);
    int dst = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, src)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "%s: the params declaration's keys must be names", file);
        const char *k = lua_tostring(L, -2);
        int spec = lua_gettop(L);
        if (!lua_istable(L, spec))
            luaL_error(L, "%s: param '%s' must be declared by a table", file, k);
        char what[160];
        snprintf(what, sizeof what, "%.80s: param '%.40s': ", file, k);
        lua_newtable(L);
        int out = lua_gettop(L);
        static const char *const fields[] = {"default", "min", "max", "integer", "doc"};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            copy_scalar(L, spec, out, fields[i], 0, what);
        lua_getfield(L, spec, "choices");
        if (lua_istable(L, -1)) {
            int ch = lua_gettop(L);
            lua_Integer n = (lua_Integer)lua_rawlen(L, ch);
            lua_createtable(L, n > 64 ? 64 : (int)n, 0);
            for (lua_Integer i = 1; i <= n; i++) {
                lua_rawgeti(L, ch, i);
                int ty = lua_type(L, -1);
                if (ty != LUA_TNUMBER && ty != LUA_TSTRING && ty != LUA_TBOOLEAN)
                    luaL_error(L, "%schoices must be numbers, strings or booleans", what);
                lua_rawseti(L, -2, i);
            }
            lua_setfield(L, out, "choices");
        } else if (!lua_isnil(L, -1)) {
            luaL_error(L, "%schoices must be a list", what);
        }
        lua_pop(L, 1);
        lua_pushvalue(L, spec - 1);
        lua_insert(L, out);
        lua_rawset(L, dst); /* dst[k] = out */
        lua_settop(L, spec - 1);
    }
}

/* The hooks table at idx as a plain table (no metatable): every hook, name,
 * needs_draft and the params declaration, each read once here, so that what
 * reads it later -- outside any protected call -- runs none of the user's
 * code.  Leaves the copy on the stack. */
static void plain_hooks(lua_State *L, int idx, const char *file)
{
    char what[160];
    snprintf(what, sizeof what, "%.120s: hook ", file);
    lua_newtable(L);
    int dst = lua_gettop(L);
    for (int h = 0; h < H_N; h++)
        copy_scalar(L, idx, dst, hook_names[h], 1, what);
    snprintf(what, sizeof what, "%.120s: ", file);
    copy_scalar(L, idx, dst, "name", 0, what);
    copy_scalar(L, idx, dst, "needs_draft", 0, what);
    lua_getfield(L, idx, "params");
    if (lua_istable(L, -1)) {
        copy_params(L, lua_gettop(L), file);
        lua_setfield(L, dst, "params");
        lua_pop(L, 1);
    } else {
        lua_setfield(L, dst, "params"); /* nil, or a wrong type check_declared names */
    }
}

/* Reads the whole policy file at path (a regular file of at most
 * LP_MAX_SOURCE bytes; a FIFO does not block): 0 with *out (malloc'd) and
 * *len, or -1 with err. */
int lp_read_source(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read '%.900s': %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > LP_MAX_SOURCE) {
        snprintf(err, errlen, "'%.900s' is %s", path,
                 !S_ISREG(st.st_mode) ? "not a regular file" : "larger than 16 MiB");
        close(fd);
        return -1;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0; /* one more: a file that grows is seen */
    char *buf = malloc(cap);
    while (buf && n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    if (!buf || n == cap) {
        snprintf(err, errlen, "'%.900s' %s", path, buf ? "changed while it was read" : "out of memory");
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}

int lp_load_policy(lua_State *L)
{
    const lp_params *p = lua_touserdata(L, 1);
    char name[1100];
    snprintf(name, sizeof name, "@%s", p->file);
    if (luaL_loadbufferx(L, p->src ? p->src : "", p->src_len, name, "t") != LUA_OK)
        return lua_error(L);
    int fn = lua_gettop(L);
    char src[1100];
    snprintf(src, sizeof src, "return %s", p->args);
    if (luaL_loadbufferx(L, src, strlen(src), "=params", "t") != LUA_OK) return lua_error(L);
    lua_call(L, 0, 1);
    lua_call(L, 1, 1);
    if (!lua_istable(L, fn))
        return luaL_error(L, "%s: must return a table of hooks (got %s)", p->file,
                          luaL_typename(L, fn));
    plain_hooks(L, fn, p->file);
    lua_getfield(L, -1, "build");
    if (!lua_isfunction(L, -1))
        return luaL_error(L, "%s: the hooks table has no build function", p->file);
    lua_pop(L, 1);
    return 1;
}

/* lua_CFunction in a policy's state: [1] = the hooks table, [2] = the
 * params table.  When the hooks table declares `params = { NAME = { default,
 * min, max, integer, choices, doc }, ... }`, every given param must be
 * declared and within its declaration. */
static int check_declared(lua_State *L)
{
    lua_getfield(L, 1, "params");
    if (lua_isnil(L, -1)) return 0;
    if (!lua_istable(L, -1)) return luaL_error(L, "the hooks table's params must be a table");
    int decl = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        const char *k = lua_tostring(L, -2);
        lua_getfield(L, decl, k);
        if (!lua_istable(L, -1)) {
            const char *best = NULL;
            int32_t bd = 0;
            lua_pushnil(L);
            while (lua_next(L, decl)) {
                lua_pop(L, 1);
                if (lua_type(L, -1) != LUA_TSTRING) continue;
                int32_t dd = eng_params_distance(k, lua_tostring(L, -1));
                if (!best || dd < bd) best = lua_tostring(L, -1), bd = dd;
            }
            int32_t near = (int32_t)strlen(k) / 2 > 2 ? (int32_t)strlen(k) / 2 : 2;
            if (best && bd <= near)
                return luaL_error(L, "unknown param '%s' (did you mean '%s'?)", k, best);
            return luaL_error(L, "unknown param '%s'", k);
        }
        int spec = lua_gettop(L), val = spec - 1;
        lua_getfield(L, spec, "choices");
        if (lua_istable(L, -1)) {
            int found = 0;
            for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1) && !found; i++) {
                lua_rawgeti(L, -1, i);
                found = lua_rawequal(L, -1, val);
                lua_pop(L, 1);
            }
            if (!found) return luaL_error(L, "param '%s' is not one of its choices", k);
        }
        lua_pop(L, 1);
        if (lua_type(L, val) == LUA_TNUMBER) {
            lua_Number v = lua_tonumber(L, val);
            lua_getfield(L, spec, "min");
            lua_getfield(L, spec, "max");
            lua_Number lo = lua_isnumber(L, -2) ? lua_tonumber(L, -2) : -HUGE_VAL;
            lua_Number hi = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : HUGE_VAL;
            if (v < lo || v > hi)
                return luaL_error(L, "param '%s' = %f is out of range [%f, %f]", k, v, lo, hi);
            lua_pop(L, 2);
            lua_getfield(L, spec, "integer");
            if (lua_toboolean(L, -1) && !lua_isinteger(L, val))
                return luaL_error(L, "param '%s' must be an integer", k);
            lua_pop(L, 1);
        }
        lua_settop(L, spec - 2); /* the key stays for lua_next */
    }
    return 0;
}

/* Creates the state of one policy instance.  NULL with err set on failure. */
/* The params table (p->args) against the hooks table's declarations (at
 * index hooks).  0, or -1 with err. */
static int lp_check_args(lua_State *L, const lp_params *p, int hooks, char *err, size_t errlen)
{
    char src[1100];
    snprintf(src, sizeof src, "return %s", p->args);
    lua_pushcfunction(L, lp_msgh);
    lua_pushcfunction(L, check_declared);
    lua_pushvalue(L, hooks);
    if (luaL_loadbufferx(L, src, strlen(src), "=params", "t") != LUA_OK ||
        lua_pcall(L, 0, 1, 0) != LUA_OK || lua_pcall(L, 2, 0, hooks + 1) != LUA_OK) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
        return -1;
    }
    lua_settop(L, hooks);
    return 0;
}

/* A registry reference for each hook function of the hooks table (at index
 * hooks); a hook that is neither a function nor absent is an error. */
static int lp_take_hooks(lp_state *s, const lp_params *p, int hooks, char *err, size_t errlen)
{
    lua_State *L = s->L;
    for (int h = 0; h < H_N; h++) {
        lua_getfield(L, hooks, hook_names[h]);
        if (lua_isfunction(L, -1)) {
            s->ref[h] = luaL_ref(L, LUA_REGISTRYINDEX);
            continue;
        }
        int bad = !lua_isnil(L, -1);
        lua_pop(L, 1);
        s->ref[h] = LUA_NOREF;
        if (bad) {
            snprintf(err, errlen, "%.300s: hook '%s' must be a function", p->file, hook_names[h]);
            return -1;
        }
    }
    return 0;
}

lp_state *lp_open(const lp_params *p, char *err, size_t errlen)
{
    lp_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->lim.mem_limit_bytes = p->mem_limit;
    s->lim.pool = p->pool;
    s->lim.step_limit = p->step_limit;
    s->lim.stop = sim_sweep_interrupted;
    s->lim.in_library = sim_sweep_library_call;
    s->L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &s->lim);
    if (!s->L) {
        free(s);
        snprintf(err, errlen, "cannot create a Lua state");
        return NULL;
    }
    lua_State *L = s->L;
    lua_pushcfunction(L, lp_msgh);
    lua_pushcfunction(L, lp_load_policy);
    lua_pushlightuserdata(L, (void *)p);
    if (lua_pcall(L, 1, 1, 1) != LUA_OK) {
        if (s->lim.mem_refused)
            snprintf(err, errlen, "%.300s: loading it reached the run's memory limit of %zu MiB "
                     "(the script and every point's policy state share it; see "
                     "--max-memory-mb)", p->file, s->lim.mem_limit_bytes >> 20);
        else
            snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
        lp_destroy(s);
        return NULL;
    }
    int hooks = lua_gettop(L);
    if (lp_check_args(L, p, hooks, err, errlen) != 0 ||
        lp_take_hooks(s, p, hooks, err, errlen) != 0) {
        lp_destroy(s);
        return NULL;
    }
    lua_getfield(L, hooks, "name");
    const char *nm = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    snprintf(s->name, sizeof s->name, "%s", nm ? nm : "lua");
    s->named = nm != NULL;
    lua_getfield(L, hooks, "needs_draft");
    s->needs_draft = lua_isnil(L, -1) || lua_toboolean(L, -1);
    lua_settop(L, 0);
    lp_make_objects(L, &s->obj);
    s->obj.draft->no_draft = !s->needs_draft;
    s->iface = (eng_policy_i){
        .name = s->name,
        .reset = s->ref[H_RESET] != LUA_NOREF ? lp_reset : NULL,
        .build = lp_build,
        .prune = s->ref[H_PRUNE] != LUA_NOREF ? lp_prune : NULL,
        .plan = s->ref[H_PLAN] != LUA_NOREF ? lp_plan : NULL,
        .observe = s->ref[H_OBSERVE] != LUA_NOREF ? lp_observe : NULL,
        .destroy = lp_destroy,
        .calibrate = s->ref[H_CALIBRATE] != LUA_NOREF ? lp_calibrate : NULL,
        .provisional = s->ref[H_PROVISIONAL] != LUA_NOREF ? lp_provisional : NULL,
        .error = lp_error,
    };
    return s;
}

/* A point's policy whose file would not load in its own state (it loaded
 * when the script made it, from the same bytes; a point's state can still run
 * out of memory): its first build fails with lp_open's reason. */
static int lp_dead_build(void *self, eng_tree *t, eng_draft_oracle *draft,
                         const eng_build_limits *lim)
{
    (void)self, (void)t, (void)draft, (void)lim;
    return ENG_E_ARG;
}

int lp_create(const void *params, eng_policy *out)
{
    char err[LP_ERR_CAP];
    lp_state *s = lp_open(params, err, sizeof err);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) return ENG_E_NOMEM;
        snprintf(s->err, sizeof s->err, "the policy did not load: %.480s", err);
        s->iface = (eng_policy_i){.name = "lua", .build = lp_dead_build, .destroy = lp_destroy,
                                  .error = lp_error};
    }
    out->i = &s->iface;
    out->self = s;
    return ENG_OK;
}
