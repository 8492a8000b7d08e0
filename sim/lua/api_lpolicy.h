/*
 * api_lpolicy.h -- flashspec.policy.lua: a policy written in Lua made by a
 * script (the host that runs its hooks: sim/lpolicy/lp_host.h, which holds
 * the file format, the objects a hook gets and the guarantees).
 */
#ifndef FS_LUA_API_LPOLICY_H
#define FS_LUA_API_LPOLICY_H

#include <lua.h>

/* flashspec.policy.lua(FILE [, params]): a policy object running FILE's hooks. */
int fs_l_policy_lua(lua_State *L);

#include "sim/lpolicy/lp_host.h"

/* Pushes a policy object: the Lua policy u (a ud_policy) with knobs[i] set to
 * vals[i] (an ENUM's index, a BOOL's 0 or 1) -- the same file bytes, the
 * declaration checking the values.  Raises (exit 78, "CHUNK:LINE: what:
 * ...") when the declaration refuses them. */
void fs_lua_policy_with(lua_State *L, const void *u, int n, const lp_knob *const *knobs,
                        const double *vals, const char *what, const char *chunk, int line);

#endif
