/*
 * profile.c -- sandboxed loading of device/model profiles (contract in
 * profile.h).
 *
 * Each load owns a fresh FS_SANDBOX_PROFILE state (sandbox.h) capped at
 * PROFILE_MEM_CAP bytes and PROFILE_STEPS_CAP instructions.  Everything that can raise a Lua error runs inside one
 * lua_pcall of run_profile(), a lua_CFunction, so no longjmp ever leaves the
 * Lua-managed frames; the state is closed on every path.
 */
#include "profile.h"

#include "lparams.h"
#include "sandbox.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FS_CONFIG_DIR
#define FS_CONFIG_DIR "configs"
#endif

#define PROFILE_MEM_CAP ((size_t)64 << 20)
#define PROFILE_STEPS_CAP 50000000LL

/* Lua names a file chunk by its path shortened to LUA_IDSIZE ("...tail").
 * Rewrites such a "...tail:LINE: msg" into "path:LINE: msg" in out. */
static void full_path_prefix(const char *path, const char *msg, char *out, size_t n)
{
    size_t plen = strlen(path);
    if (strncmp(msg, path, plen) != 0 && strncmp(msg, "...", 3) == 0) {
        const char *colon = strchr(msg + 3, ':');
        while (colon && !(colon[1] >= '0' && colon[1] <= '9'))
            colon = strchr(colon + 1, ':');
        size_t tail = colon ? (size_t)(colon - (msg + 3)) : 0;
        if (colon && tail <= plen && strncmp(path + plen - tail, msg + 3, tail) == 0) {
            snprintf(out, n, "%s%s", path, colon);
            return;
        }
    }
    snprintf(out, n, "%s", msg);
}

/* The error message of a failed chunk as one line "PATH:LINE: ...": Lua's
 * shortened chunk name is expanded, a message without a position (error(x, 0),
 * errors raised from C) gets "PATH:1: ", and line breaks the profile put into
 * its own message become spaces. */
static void one_line_message(const char *path, const char *msg, char *out, size_t n)
{
    char tmp[1024];
    full_path_prefix(path, msg, tmp, sizeof tmp);
    size_t plen = strlen(path);
    if (strncmp(tmp, path, plen) == 0 && tmp[plen] == ':')
        snprintf(out, n, "%s", tmp);
    else
        snprintf(out, n, "%s:1: %s", path, tmp);
    for (char *c = out; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

typedef struct job {
    const char *path;
    const eng_param_desc *keys;
    void *out;
    const char *what;
} job;

/* lua_CFunction run under lua_pcall: [1] = job, [2] = the loaded chunk. */
static int run_profile(lua_State *L)
{
    job *j = lua_touserdata(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 0, 1);
    if (!lua_istable(L, -1)) {
        lua_pushfstring(L, "%s:1: %s must return a table (got %s)", j->path, j->what,
                        luaL_typename(L, -1));
        return lua_error(L);
    }
    slp_check_table(L, -1, j->keys, j->out, j->what, j->path, 1);
    return 0;
}

static void base_name(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t len = strlen(b);
    if (len > 4 && strcmp(b + len - 4, ".lua") == 0) len -= 4;
    if (len >= n) len = n - 1;
    memcpy(out, b, len);
    out[len] = '\0';
}

static int load_raw(const char *path, const eng_param_desc *keys, void *out, const char *what,
                    char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open %s: %s", path, what, strerror(errno));
        return SIM_PROFILE_E_MISSING;
    }
    fclose(f);

    fs_lua_limits lim = {.mem_limit_bytes = PROFILE_MEM_CAP, .step_limit = PROFILE_STEPS_CAP};
    lua_State *L = fs_sandbox_new(FS_SANDBOX_PROFILE, &lim);
    if (!L) {
        snprintf(err, errlen, "%s: out of memory", path);
        return SIM_PROFILE_E_NOMEM;
    }
    int rc = SIM_PROFILE_OK;
    job j = {path, keys, out, what};
    lua_pushcfunction(L, run_profile);
    lua_pushlightuserdata(L, &j);
    int st = luaL_loadfilex(L, path, "t");
    if (st == LUA_OK) st = lua_pcall(L, 2, 0, 0);
    if (st != LUA_OK) {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (st == LUA_ERRMEM)
            snprintf(err, errlen, "%s:1: %s exceeds the memory limit", path, what);
        else if (msg)
            one_line_message(path, msg, err, errlen);
        else
            snprintf(err, errlen, "%s:1: %s raised a non-string error", path, what);
        rc = SIM_PROFILE_E_CONFIG;
    }
    lua_close(L);
    return rc;
}

int sim_profile_load(const char *path, const eng_param_desc *keys, void *out, const char *what,
                     char *err, size_t errlen)
{
    return load_raw(path, keys, out, what, err, errlen);
}

int sim_profile_load_device(const char *path, sim_device *out, char *err, size_t errlen)
{
    int rc = load_raw(path, sim_device_keys(), out, "device profile", err, errlen);
    if (rc != SIM_PROFILE_OK) return rc;
    if (!out->name[0]) base_name(path, out->name, sizeof out->name);
    char msg[512];
    if (sim_device_check(out, msg, sizeof msg)) {
        snprintf(err, errlen, "%s:1: %s", path, msg);
        return SIM_PROFILE_E_CONFIG;
    }
    return SIM_PROFILE_OK;
}

int sim_profile_load_model(const char *path, sim_model *out, char *err, size_t errlen)
{
    int rc = load_raw(path, sim_model_keys(), out, "model profile", err, errlen);
    if (rc != SIM_PROFILE_OK) return rc;
    if (!out->name[0]) base_name(path, out->name, sizeof out->name);
    char msg[512];
    if (sim_model_check(out, msg, sizeof msg)) {
        snprintf(err, errlen, "%s:1: %s", path, msg);
        return SIM_PROFILE_E_CONFIG;
    }
    return SIM_PROFILE_OK;
}

static int name_ok(const char *name)
{
    if (!name || !name[0] || name[0] == '.' || strstr(name, "..")) return 0;
    for (const char *p = name; *p; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '.' || ch == '_' || ch == '-' || ch == '+';
        if (!ok) return 0; /* rejects '/', '\\', spaces, control characters */
    }
    return 1;
}

int sim_profile_path(const char *kind, const char *name, char *out, size_t n)
{
    if (n) out[0] = '\0';
    if (!kind || (strcmp(kind, "devices") != 0 && strcmp(kind, "models") != 0))
        return SIM_PROFILE_E_NAME;
    if (!name_ok(name)) return SIM_PROFILE_E_NAME;
    const char *dir = getenv("FLASHSPEC_CONFIG_DIR");
    if (!dir || !dir[0]) dir = FS_CONFIG_DIR;
    int len = snprintf(out, n, "%s/%s/%s.lua", dir, kind, name);
    if (len < 0 || (size_t)len >= n) {
        if (n) out[0] = '\0';
        return SIM_PROFILE_E_NAME;
    }
    return SIM_PROFILE_OK;
}

int sim_profile_exit_code(int status)
{
    switch (status) {
    case SIM_PROFILE_OK:
        return 0;
    case SIM_PROFILE_E_MISSING:
        return 66;
    case SIM_PROFILE_E_CONFIG:
    case SIM_PROFILE_E_NAME:
        return 78;
    default:
        return 70;
    }
}
