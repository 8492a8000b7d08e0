/*
 * lpolicy_impl.h -- internals shared by lpolicy.c (policy states, hooks),
 * lpolicy_script.c (the script side) and lpolicy_objects.c (the objects
 * hooks receive).
 */
#ifndef FS_LUA_LPOLICY_IMPL_H
#define FS_LUA_LPOLICY_IMPL_H

#include <lua.h>
#include <stddef.h>

#include "engine/eng_policy.h"
#include "sim/config/sandbox.h"

typedef struct lp_obj {
    void *p; /* eng_tree *, eng_draft_oracle * or eng_target_oracle *; NULL outside a hook */
    int writable; /* tree: add/remove allowed (build and provisional only, as in C) */
    int no_draft;  /* draft: the policy declared needs_draft = false */
} lp_obj;

/* A policy state's three objects, each anchored in its registry. */
typedef struct lp_objects {
    lp_obj *tree, *draft, *target;
    int tree_ref, draft_ref, target_ref;
} lp_objects;

/* Creates the objects in L (they point at nothing until a hook binds them). */
void lp_make_objects(lua_State *L, lp_objects *o);

#define LP_ERR_CAP 512

typedef struct lp_params {
    char file[1024];      /* resolved path */
    char args[1024];      /* the params table as a Lua constructor, keys sorted */
    char source_hash[40]; /* of the file's bytes */
    /* not in the table (so not in the point id): the sandbox limits, and the
     * file's bytes as read once and hashed into source_hash -- every point
     * runs these, never the file again (the script's run anchors them) */
    long long step_limit;
    size_t mem_limit;
    const char *src;
    size_t src_len;
    fs_mem_pool *pool; /* the run's memory, shared with the script (sandbox.h) */
} lp_params;

/* Largest policy file read (a policy is code, not data). */
#define LP_MAX_SOURCE ((size_t)16 << 20)

enum { H_RESET, H_BUILD, H_PRUNE, H_PLAN, H_OBSERVE, H_CALIBRATE, H_PROVISIONAL, H_N };
extern const char *const hook_names[H_N];

typedef struct lp_state {
    lua_State *L;
    fs_lua_limits lim;
    int ref[H_N];   /* LUA_NOREF when the file does not define the hook */
    lp_objects obj; /* the tree, draft and target handed to hooks */
    char name[64];
    int named, needs_draft;
    char err[LP_ERR_CAP];
    eng_policy_i iface;
} lp_state;

/* The params table of a Lua policy object (file, args, source_hash). */
extern const eng_param_desc lp_table[];

/* A state with the file loaded from p's bytes, its hooks taken and the
 * params checked against its declarations; NULL with err. */
lp_state *lp_open(const lp_params *p, char *err, size_t errlen);
void lp_destroy(void *self);

/* eng_policy_desc.create of a Lua policy (a point's own state). */
int lp_create(const void *params, eng_policy *out);

/* Reads a policy file whole (a regular file of at most LP_MAX_SOURCE bytes)
 * into *out (malloc'd).  0, or -1 with err. */
int lp_read_source(const char *path, char **out, size_t *len, char *err, size_t errlen);

/* lua_CFunction (p): runs the file's bytes with p's params table, returns
 * its hooks table. */
int lp_load_policy(lua_State *L);

#endif
