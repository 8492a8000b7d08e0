/*
 * lpolicy.h -- policies written in Lua (flashspec.policy.lua; see lpolicy.c
 * for the file format, the objects a hook gets and the guarantees).
 */
#ifndef FS_LUA_LPOLICY_H
#define FS_LUA_LPOLICY_H

#include <lua.h>

/* flashspec.policy.lua(FILE [, params]): a policy object running FILE's hooks. */
int fs_l_policy_lua(lua_State *L);

/* `flashspec policies FILE.lua`: prints the file's policy name, hooks and
 * declared params on stdout.  0, or -1 with one line in err. */
int fs_lua_policy_describe(const char *path, int markdown, char *err, size_t errlen);

#include "engine/eng_param.h"
#include "engine/eng_policy.h"

/* flashspec.tune over a Lua policy's declared params. */
#define FS_LUA_KNOB_CHOICES 32
typedef struct fs_lua_knob {
    eng_param_desc d; /* INT, DOUBLE, BOOL or ENUM, from the declaration */
    char name[64];
    char choice_text[FS_LUA_KNOB_CHOICES][64];
    const char *choices[FS_LUA_KNOB_CHOICES + 1];
    double current; /* the value the policy object has (given, else the default;
                       an ENUM's index, a BOOL's 0 or 1) */
} fs_lua_knob;

/* 1 when desc is a Lua policy's (flashspec.policy.lua). */
int fs_lua_policy_is(const eng_policy_desc *desc);

/* The declared param `name` of the Lua policy whose params are `params`, as a
 * searchable row: its type (choices: ENUM; integer = true: INT; a boolean
 * default: BOOL; else DOUBLE), range and current value.  0, or -1 with one
 * line in err (no declaration, an unknown param with the nearest name, a
 * string param without choices). */
int fs_lua_policy_knob(const void *params, const char *name, fs_lua_knob *out, char *err,
                       size_t errlen);

/* Pushes a policy object: the Lua policy u (a ud_policy) with knobs[i] set to
 * vals[i] (an ENUM's index, a BOOL's 0 or 1) -- the same file bytes, the
 * declaration checking the values.  Raises (exit 78, "CHUNK:LINE: what:
 * ...") when the declaration refuses them. */
void fs_lua_policy_with(lua_State *L, const void *u, int n, const fs_lua_knob *const *knobs,
                        const double *vals, const char *what, const char *chunk, int line);

#endif
