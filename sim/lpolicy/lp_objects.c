/*
 * lp_objects.c -- the objects a Lua policy's hooks receive: the tree, the
 * draft oracle and the target oracle (the methods are listed in lp_host.c).  Each wraps a pointer that is valid only during the hook call
 * that received it; outside one, every method raises.
 */
#include "sim/lpolicy/lp_host.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#define LP_TREE "flashspec.lua_tree"
#define LP_DRAFT "flashspec.lua_draft"
#define LP_TARGET "flashspec.lua_target"
#define LP_MAX_IDS 4096

static lp_obj *check_obj(lua_State *L, int idx, const char *mt)
{
    lp_obj *o = luaL_checkudata(L, idx, mt);
    if (!o->p) luaL_error(L, "%s used outside the hook that received it", mt + 10);
    return o;
}

static eng_tree *tree_of(lua_State *L)
{
    return check_obj(L, 1, LP_TREE)->p;
}

static int32_t node_arg(lua_State *L, const eng_tree *t, int idx)
{
    lua_Integer id = luaL_checkinteger(L, idx);
    if (id < 0 || id >= t->n_nodes)
        luaL_error(L, "node %I is not in the tree (size %d)", id, (int)t->n_nodes);
    return (int32_t)id;
}

static int t_size(lua_State *L)
{
    lua_pushinteger(L, tree_of(L)->n_nodes);
    return 1;
}

static int t_token(lua_State *L)
{
    eng_tree *t = tree_of(L);
    lua_pushinteger(L, t->nodes[node_arg(L, t, 2)].tok);
    return 1;
}

static int t_parent(lua_State *L)
{
    eng_tree *t = tree_of(L);
    int32_t p = t->nodes[node_arg(L, t, 2)].parent;
    if (p < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, p);
    return 1;
}

static int t_depth(lua_State *L)
{
    eng_tree *t = tree_of(L);
    lua_pushinteger(L, t->nodes[node_arg(L, t, 2)].depth);
    return 1;
}

static int t_logq(lua_State *L)
{
    eng_tree *t = tree_of(L);
    lua_pushnumber(L, t->nodes[node_arg(L, t, 2)].logq);
    return 1;
}

static int t_cum_logq(lua_State *L)
{
    eng_tree *t = tree_of(L);
    lua_pushnumber(L, t->nodes[node_arg(L, t, 2)].cum_logq);
    return 1;
}

static int t_leaves(lua_State *L)
{
    lua_pushinteger(L, eng_tree_leaves(tree_of(L)));
    return 1;
}

static int t_ncands(lua_State *L)
{
    eng_tree *t = tree_of(L);
    int32_t n = 0;
    eng_tree_cands(t, node_arg(L, t, 2), &n);
    lua_pushinteger(L, n);
    return 1;
}

static int t_cand(lua_State *L)
{
    eng_tree *t = tree_of(L);
    int32_t n = 0;
    const eng_cand *c = eng_tree_cands(t, node_arg(L, t, 2), &n);
    lua_Integer j = luaL_checkinteger(L, 3);
    if (j < 1 || j > n) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushinteger(L, c[j - 1].tok);
    lua_pushnumber(L, c[j - 1].logp);
    return 2;
}

static int t_child(lua_State *L)
{
    eng_tree *t = tree_of(L);
    int32_t id = eng_tree_child(t, node_arg(L, t, 2), (eng_token)luaL_checkinteger(L, 3));
    if (id < 0)
        lua_pushnil(L);
    else
        lua_pushinteger(L, id);
    return 1;
}

/* The tree of a hook that may change it (build, provisional). */
static eng_tree *tree_to_change(lua_State *L, const char *what)
{
    lp_obj *o = check_obj(L, 1, LP_TREE);
    if (!o->writable)
        luaL_error(L, "tree:%s: the tree is read-only outside build and provisional (a node "
                   "added in prune or plan would be verified but not priced)", what);
    return o->p;
}

static int t_add(lua_State *L)
{
    eng_tree *t = tree_to_change(L, "add");
    int32_t parent = node_arg(L, t, 2);
    eng_token tok = (eng_token)luaL_checkinteger(L, 3);
    float logq = (float)luaL_checknumber(L, 4);
    int32_t id = eng_tree_add(t, parent, tok, logq);
    if (id == ENG_E_FULL) {
        lua_pushnil(L);
        return 1;
    }
    if (id < 0) return luaL_error(L, "tree:add failed (code %d)", (int)id);
    lua_pushinteger(L, id);
    return 1;
}

/* tree:remove(drop): drops every node id with drop[id] == true and the
 * subtrees under them (never the root); ids are renumbered in order, and the
 * returned table maps each old id to its new one (nil for dropped nodes). */
static int t_remove(lua_State *L)
{
    eng_tree *t = tree_to_change(L, "remove");
    luaL_checktype(L, 2, LUA_TTABLE);
    int32_t n = t->n_nodes;
    uint8_t *keep = lua_newuserdatauv(L, (size_t)n, 0);
    int32_t *map = lua_newuserdatauv(L, sizeof *map * (size_t)n, 0);
    for (int32_t u = 0; u < n; u++) {
        lua_rawgeti(L, 2, u);
        keep[u] = u == 0 || !lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    eng_tree_compact(t, keep, map);
    lua_createtable(L, n, 1);
    for (int32_t u = 0; u < n; u++) {
        if (map[u] == ENG_NO_NODE) continue;
        lua_pushinteger(L, map[u]);
        lua_rawseti(L, -2, u);
    }
    return 1;
}

static eng_unit unit_arg(lua_State *L, int idx)
{
    static const char *const units[] = {"cpu", "npu", NULL};
    return (eng_unit)luaL_checkoption(L, idx, "cpu", units);
}

static int d_expand(lua_State *L)
{
    lp_obj *dob = luaL_checkudata(L, 1, LP_DRAFT);
    if (dob->no_draft)
        return luaL_error(L, "draft:expand: this policy declares needs_draft = false, so its "
                          "points have no draft model; drop needs_draft = false to draft");
    eng_draft_oracle *d = check_obj(L, 1, LP_DRAFT)->p;
    lp_obj *to = lua_touserdata(L, lua_upvalueindex(1));
    eng_tree *t = to->p;
    if (!t) return luaL_error(L, "draft:expand used outside a hook");
    int32_t ids[LP_MAX_IDS], n = 0;
    if (lua_istable(L, 2)) {
        lua_Integer len = (lua_Integer)lua_rawlen(L, 2);
        if (len > LP_MAX_IDS) return luaL_error(L, "draft:expand: more than %d nodes", LP_MAX_IDS);
        for (lua_Integer i = 1; i <= len; i++) {
            lua_rawgeti(L, 2, i);
            ids[n++] = node_arg(L, t, -1);
            lua_pop(L, 1);
        }
    } else {
        ids[n++] = node_arg(L, t, 2);
    }
    eng_unit unit = unit_arg(L, 3);
    if (n == 0) return 0;
    uint8_t *seen = lua_newuserdatauv(L, (size_t)t->n_nodes, 0);
    memset(seen, 0, (size_t)t->n_nodes);
    for (int32_t i = 0; i < n; i++) {
        if (seen[ids[i]])
            return luaL_error(L, "draft:expand: node %d is given more than once", (int)ids[i]);
        seen[ids[i]] = 1;
    }
    lua_pop(L, 1);
    int rc = d->expand(d->ctx, t, ids, n, unit);
    if (rc != ENG_OK) return luaL_error(L, "draft:expand failed (code %d)", rc);
    return 0;
}

static int d_k(lua_State *L)
{
    eng_draft_oracle *d = check_obj(L, 1, LP_DRAFT)->p;
    lua_pushinteger(L, d->k);
    return 1;
}

static int g_exit_scores(lua_State *L)
{
    eng_target_oracle *g = check_obj(L, 1, LP_TARGET)->p;
    lp_obj *to = lua_touserdata(L, lua_upvalueindex(1));
    eng_tree *t = to->p;
    lua_Integer e = luaL_checkinteger(L, 2);
    if (!g->exit_scores) return luaL_error(L, "target:exit_scores: this trace has no exit scores");
    int32_t k = g->k > 0 ? g->k : 1;
    size_t n = (size_t)t->n_nodes * (size_t)k;
    float *s = malloc(sizeof *s * (n ? n : 1));
    if (!s) return luaL_error(L, "out of memory");
    int rc = g->exit_scores(g->ctx, t, (int32_t)e, s);
    if (rc != ENG_OK) {
        free(s);
        return luaL_error(L, "target:exit_scores(%d) failed (code %d)", (int)e, rc);
    }
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushnumber(L, s[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(s);
    return 1;
}

static int g_k(lua_State *L)
{
    eng_target_oracle *g = check_obj(L, 1, LP_TARGET)->p;
    lua_pushinteger(L, g->k);
    return 1;
}

/* One object of metatable mt with the given methods, anchored in the
 * registry (*ref); methods get the tree object as their upvalue. */
static lp_obj *new_obj(lua_State *L, const char *mt, const luaL_Reg *fns, lp_obj *tree, int *ref)
{
    lp_obj *o = lua_newuserdatauv(L, sizeof *o, 0);
    o->p = NULL;
    luaL_newmetatable(L, mt);
    lua_newtable(L);
    for (; fns->name; fns++) {
        lua_pushlightuserdata(L, tree);
        lua_pushcclosure(L, fns->func, 1);
        lua_setfield(L, -2, fns->name);
    }
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    *ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return o;
}

void lp_make_objects(lua_State *L, lp_objects *o)
{
    static const luaL_Reg tree_fns[] = {
        {"size", t_size},   {"token", t_token},   {"parent", t_parent}, {"depth", t_depth},
        {"logq", t_logq},   {"cum_logq", t_cum_logq}, {"leaves", t_leaves},
        {"ncands", t_ncands}, {"cand", t_cand},   {"child", t_child},   {"add", t_add},
        {"remove", t_remove}, {NULL, NULL}};
    static const luaL_Reg draft_fns[] = {{"expand", d_expand}, {"k", d_k}, {NULL, NULL}};
    static const luaL_Reg target_fns[] = {{"exit_scores", g_exit_scores}, {"k", g_k},
                                          {NULL, NULL}};
    o->tree = new_obj(L, LP_TREE, tree_fns, NULL, &o->tree_ref);
    o->draft = new_obj(L, LP_DRAFT, draft_fns, o->tree, &o->draft_ref);
    o->target = new_obj(L, LP_TARGET, target_fns, o->tree, &o->target_ref);
}
