/*
 * lrows.c -- a result row as a Lua table (see lrows.h).
 */
#include "sim/lua/lrows.h"

#include <stdint.h>

/* Sets t[prefix .. name] = value, a number where the value reads as one (the
 * prefix on the stack top, the table below it). */
static int lua_set_pair(void *ctx, const char *name, const char *value)
{
    lua_State *L = ctx;
    const char *prefix = lua_tostring(L, -1);
    int64_t i;
    double d;
    switch (fs_row_value_kind(value, &i, &d)) {
    case 2:
        lua_pushinteger(L, (lua_Integer)i);
        break;
    case 1:
        lua_pushnumber(L, d);
        break;
    default:
        lua_pushstring(L, value);
    }
    lua_pushfstring(L, "%s%s", prefix, name);
    lua_insert(L, -2);
    lua_settable(L, -4);
    return 0;
}

void fs_row_push(lua_State *L, const fs_rows_meta *a, const fs_row *r)
{
    lua_createtable(L, 0, fs_row_columns() + 1);
    const char *name, *kind, *doc;
    for (int c = 0; fs_row_column_info(c, &name, &kind, &doc); c++) {
        const char *s;
        double d;
        int64_t i;
        char buf[FS_ROW_CELL_CAP];
        switch (fs_row_cell(a, r, c, &s, &i, &d, buf, sizeof buf)) {
        case FS_CELL_TEXT:
            lua_pushstring(L, s);
            break;
        case FS_CELL_INTEGER:
            lua_pushinteger(L, (lua_Integer)i);
            break;
        default:
            lua_pushnumber(L, d);
        }
        lua_setfield(L, -2, name);
    }
    lua_pushnumber(L, r->st.sim_wall_s);
    lua_setfield(L, -2, "sim_wall_s");
    lua_pushliteral(L, "param_");
    fs_row_each_pair(r->policy_params, 0, lua_set_pair, L);
    lua_pop(L, 1);
    lua_pushliteral(L, "tag_");
    fs_row_each_pair(r->tags, 1, lua_set_pair, L);
    lua_pop(L, 1);
}
