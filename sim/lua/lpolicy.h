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

#endif
