/*
 * lpolicy.h -- policies written in Lua (flashspec.policy.lua; see lpolicy.c
 * for the file format, the objects a hook gets and the guarantees).
 */
#ifndef FS_LUA_LPOLICY_H
#define FS_LUA_LPOLICY_H

#include <lua.h>

/* flashspec.policy.lua(FILE [, params]): a policy object running FILE's hooks. */
int fs_l_policy_lua(lua_State *L);

#endif
