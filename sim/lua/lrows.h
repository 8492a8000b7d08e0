/*
 * lrows.h -- a result row as the Lua table flashspec.run/sweep return: the
 * thin binding of the column table (sim/out/rows.h), whose every fixed
 * column, param_<name> and tag_<name> column it carries under the same name,
 * plus the host time the point took (sim_wall_s, kept out of the files).
 */
#ifndef FS_LUA_LROWS_H
#define FS_LUA_LROWS_H

#include <lua.h>

#include "sim/out/rows.h"

/* Pushes row r as a Lua table (all columns + sim_wall_s). */
void fs_row_push(lua_State *L, const fs_rows_meta *m, const fs_row *r);

#endif
