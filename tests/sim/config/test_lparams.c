/*
 * test_lparams.c -- generic table validation: unknown key with suggestion and
 * the right line, type, range, integrality, enum, list and missing-key errors,
 * values written into the struct, and the key-line search itself.
 *
 * argv[1]: tests/sim/config/data.
 */
#include "sim/config/lparams.h"

#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../check.h"

typedef struct tparams {
    char name[16];
    int32_t level; /* required, [1, 8] */
    double ratio;  /* [0, 1], default 0.25 */
    int32_t flag;  /* bool */
    int32_t mode;  /* enum */
    int32_t shapes[4];
    int32_t n_shapes;
} tparams;

static const char *const modes[] = {"eager", "lazy", NULL};
static const double def_shapes[] = {1, 2};

static const eng_param_desc keys[] = {
    {"name", ENG_PARAM_STRING, offsetof(tparams, name), 0, 0, 0, NULL, 16, 0, "none", NULL, 0,
     "name"},
    {"level", ENG_PARAM_INT, offsetof(tparams, level), 1, 8, NAN, NULL, 0, 0, NULL, NULL, 0,
     "level"},
    {"ratio", ENG_PARAM_DOUBLE, offsetof(tparams, ratio), 0, 1, 0.25, NULL, 0, 0, NULL, NULL, 0,
     "ratio"},
    {"flag", ENG_PARAM_BOOL, offsetof(tparams, flag), 0, 1, 0, NULL, 0, 0, NULL, NULL, 0, "flag"},
    {"mode", ENG_PARAM_ENUM, offsetof(tparams, mode), 0, 1, 1, modes, 0, 0, NULL, NULL, 0, "mode"},
    {"shapes", ENG_PARAM_INT_LIST, offsetof(tparams, shapes), 1, 64, 0, NULL, 4,
     offsetof(tparams, n_shapes), NULL, def_shapes, 2, "shapes"},
    {NULL, ENG_PARAM_INT, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL},
};

typedef struct results {
    char msg[16][512];
    int n;
    tparams last;
} results;

typedef struct call {
    slp_where w;
    tparams *p;
} call;

static int validate(lua_State *L)
{
    call *c = lua_touserdata(L, 2);
    slp_check_table_text(L, 1, keys, c->p, "test params", c->w.chunk, c->w.line, c->w.source);
    return 0;
}

/* check(t): validates t, records "ok" or the error message; never raises. */
static int l_check(lua_State *L)
{
    results *r = lua_touserdata(L, lua_upvalueindex(1));
    call c;
    CHECK(slp_caller(L, 1, &c.w) == 1);
    c.p = &r->last;
    lua_pushcfunction(L, validate);
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, &c);
    int st = lua_pcall(L, 2, 0, 0);
    CHECK(r->n < 16);
    snprintf(r->msg[r->n++], 512, "%s", st == LUA_OK ? "ok" : lua_tostring(L, -1));
    return 0;
}

static lua_State *state(results *r)
{
    lua_State *L = luaL_newstate();
    CHECK(L);
    luaL_openlibs(L);
    lua_pushlightuserdata(L, r);
    lua_pushcclosure(L, l_check, 1);
    lua_setglobal(L, "check");
    return L;
}

static void run_file(const char *path, results *r)
{
    lua_State *L = state(r);
    CHECK(luaL_loadfilex(L, path, "t") == LUA_OK);
    CHECK(lua_pcall(L, 0, 0, 0) == LUA_OK);
    lua_close(L);
}

static void expect(const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
        CHECK(0);
    }
}

static void test_unknown_key(const char *dir)
{
    char path[1024], want[1200];
    snprintf(path, sizeof path, "%s/lp_unknown.lua", dir);
    results r = {0};
    run_file(path, &r);
    CHECK(r.n == 1);
    snprintf(want, sizeof want, "%s:4: unknown key 'levl' in test params (did you mean 'level'?)",
             path);
    expect(r.msg[0], want);
}

static void test_errors(const char *dir)
{
    char path[1024], want[1200];
    snprintf(path, sizeof path, "%s/lp_errors.lua", dir);
    results r = {0};
    run_file(path, &r);
    CHECK(r.n == 9);
    static const char *const tails[] = {
        "2: test params: key 'ratio' must be a number (got string)",
        "4: test params: key 'level' = 9 is out of range [1, 8]",
        "9: test params: key 'level' must be an integer (got 2.5)",
        "11: test params: key 'mode' must be one of 'eager', 'lazy' (got 'fast')",
        "12: unknown key 'zzzzzzzzzz' in test params",
        "13: test params: missing required key 'level'",
        "15: test params: key 'shapes'[3] = 0 is out of range [1, 64]",
        "17: test params: key 'flag' must be a boolean (got number)",
    };
    for (int i = 0; i < 8; i++) {
        snprintf(want, sizeof want, "%s:%s", path, tails[i]);
        expect(r.msg[i], want);
    }
    expect(r.msg[8], "ok"); /* the final script statement is a valid call */
}

static void test_values(void)
{
    results r = {0};
    lua_State *L = state(&r);
    const char *src = "check { level = 3, ratio = 1, flag = true, mode = 'eager',\n"
                      "        shapes = { 4, 8, 16 }, name = 'abc' }\n"
                      "check { level = 8.0 }\n"
                      "check { level = 1, [1] = 2 }\n"
                      "check { level = 1, name = 'this name is far too long' }\n"
                      "check(7)\n";
    CHECK(luaL_loadstring(L, src) == LUA_OK);
    CHECK(lua_pcall(L, 0, 0, 0) == LUA_OK);
    CHECK(r.n == 5);
    expect(r.msg[0], "ok");
    expect(r.msg[1], "ok");
    CHECK(strstr(r.msg[2], ":4: test params: keys must be names (found a number key)"));
    CHECK(strstr(r.msg[3], ":5: test params: key 'name' must be a string of at most 15 bytes"));
    CHECK(strstr(r.msg[4], ":6: test params must be a table (got number)"));
    CHECK(strncmp(r.msg[2], "[string", 7) == 0); /* string chunks keep Lua's name */
    lua_close(L);

    /* the first call filled every field */
    r.n = 0;
    L = state(&r);
    CHECK(luaL_dostring(L, "check { level = 3, ratio = 1, flag = true, mode = 'eager', "
                           "shapes = { 4, 8, 16 }, name = 'abc' }") == LUA_OK);
    expect(r.msg[0], "ok");
    CHECK(r.last.level == 3 && r.last.ratio == 1.0 && r.last.flag == 1 && r.last.mode == 0);
    CHECK(r.last.n_shapes == 3 && r.last.shapes[2] == 16 && strcmp(r.last.name, "abc") == 0);
    lua_close(L);

    /* an integral float is an integer; absent keys take their defaults */
    r.n = 0;
    L = state(&r);
    CHECK(luaL_dostring(L, "check { level = 8.0 }") == LUA_OK);
    expect(r.msg[0], "ok");
    CHECK(r.last.level == 8 && r.last.ratio == 0.25 && r.last.flag == 0 && r.last.mode == 1);
    CHECK(r.last.n_shapes == 2 && r.last.shapes[1] == 2 && strcmp(r.last.name, "none") == 0);
    lua_close(L);
}

static void test_key_line(const char *dir)
{
    const char *t = "x = 1\n"
                    "-- level = 2\n"
                    "levels = 3\n"
                    "if level == 4 then end\n"
                    "t = { sublevel = 1, level= 5 }\n"
                    "u = { [\"level\"] = 6 }\n";
    CHECK(slp_key_line_text(t, "level", 1) == 5);
    CHECK(slp_key_line_text(t, "level", 6) == 6);
    CHECK(slp_key_line_text(t, "level", 7) == 7); /* not found: the hint */
    CHECK(slp_key_line_text(t, "x", 1) == 1);
    CHECK(slp_key_line_text(NULL, "x", 3) == 3);
    char path[1024];
    snprintf(path, sizeof path, "%s/lp_unknown.lua", dir);
    CHECK(slp_key_line(path, 1, "levl") == 4);
    CHECK(slp_key_line(path, 1, "name") == 3);
    CHECK(slp_key_line("/nonexistent/file.lua", 7, "name") == 7);
    slp_where w;
    lua_State *L = luaL_newstate();
    CHECK(slp_caller(L, 5, &w) == 0 && w.line == 1 && strcmp(w.chunk, "?") == 0);
    lua_close(L);
}

int main(int argc, char **argv)
{
    CHECK(argc > 1);
    test_unknown_key(argv[1]);
    test_errors(argv[1]);
    test_values();
    test_key_line(argv[1]);
    printf("lparams: ok\n");
    return check_done("config/lparams");
}
