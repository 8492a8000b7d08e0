/*
 * lp_host.h -- the host of policies written in Lua: a policy file's hooks run
 * in a sandboxed Lua state of their own behind the engine's policy interface
 * (eng_policy_i), one state per point, so workers share nothing.  The file
 * format, the objects a hook receives and the guarantees: lp_host.c.  The
 * script surface that makes such a policy (flashspec.policy.lua) is
 * sim/lua/api_lpolicy.h; this folder knows nothing of scripts.
 */
#ifndef SIM_LPOLICY_LP_HOST_H
#define SIM_LPOLICY_LP_HOST_H

#include <lua.h>
#include <stddef.h>

#include "engine/eng_param.h"
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

/* 1 when name is 1 to 63 of [A-Za-z0-9_.-] starting with a letter or '_'
 * (a policy's name goes into every result row). */
int lp_name_ok(const char *name);

/* The hash of a policy file's bytes that enters the point id: two 64-bit
 * FNV-1a lanes as 32 hex digits, into out[0..n). */
void lp_source_hash(const char *src, size_t len, char *out, size_t n);

/* `flashspec policies FILE.lua`: prints the file's policy name, hooks and
 * declared params on stdout.  0, or -1 with one line in err. */
int lp_describe(const char *path, int markdown, char *err, size_t errlen);

/* A Lua policy's declared param as a knob flashspec.tune may search. */
#define LP_KNOB_CHOICES 32
typedef struct lp_knob {
    eng_param_desc d; /* INT, DOUBLE, BOOL or ENUM, from the declaration */
    char name[64];
    char choice_text[LP_KNOB_CHOICES][64];
    const char *choices[LP_KNOB_CHOICES + 1];
    double current; /* the value the policy object has (given, else the default;
                       an ENUM's index, a BOOL's 0 or 1) */
} lp_knob;

/* 1 when desc is a Lua policy's (its create is lp_create). */
int lp_is(const eng_policy_desc *desc);

/* The declared param `name` of the Lua policy whose params are `params`, as a
 * searchable row: its type (choices: ENUM; integer = true: INT; a boolean
 * default: BOOL; else DOUBLE), range and current value.  0, or -1 with one
 * line in err (no declaration, an unknown param with the nearest name, a
 * string param without choices). */
int lp_knob_read(const void *params, const char *name, lp_knob *out, char *err, size_t errlen);

#endif
