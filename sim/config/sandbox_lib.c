/*
 * sandbox_lib.c -- the sandbox's library, charged (see sandbox.h, "Limits").
 *
 * Lua's standard library does its work in C, where the count hook never
 * looks: `string.rep("", 1e15)` is one VM instruction that runs for days,
 * `utf8.len` over 16 MiB takes 50 ms, `table.move(t, 1, 1e15, 2)` loops
 * without allocating a byte.  Each library function whose work grows with
 * its arguments is replaced here by one of three things:
 *
 *   - a charged wrapper: the cost (in steps, sandbox_impl.h) is computed from
 *     the arguments before the library's own function runs; a cost above the
 *     instructions left is refused there and then (fs_sandbox_precharge), and
 *     a long call tells in_library around itself, so that SIGINT/SIGTERM
 *     during it can end the process;
 *   - a bounded version that charges as it goes (fs_sandbox_work every
 *     TAB_CHUNK elements): table.insert/remove/move/concat and the skip over
 *     continuation bytes in utf8.codes' iterator -- the same algorithm as
 *     Lua 5.4's ltablib.c/lutf8lib.c (MIT licence, Lua.org, PUC-Rio), the
 *     same results and errors;
 *   - the same result without the work: string.rep of an empty string, and
 *     a plain string.find, which uses memmem (linear) where the library's
 *     lmemfind may take time quadratic in the lengths.
 *
 * Argument errors come from the wrappers themselves (they check what they
 * read with luaL_check*), so they name the function as the library would.
 * Costs are upper bounds, never guesses from the data (the one exception,
 * sort's fast path, scans the table first).  What no argument predicts --
 * backtracking inside a pattern match, comparisons of long strings in VM
 * instructions -- is charged by the CPU-time backstop (sandbox.c).
 */
#define _GNU_SOURCE /* memmem */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/config/sandbox_impl.h"

/* ------------------------------------------------------------ calling */

/* Calls the library's function (upvalue 1) with the arguments on the stack,
 * in protected mode, and returns its results.  An error comes back as the
 * library would raise it when called from the caller's line: a message
 * without a position gets the caller's (the library's luaL_error sees this
 * wrapper, a C function, as its caller); a memory error stays one. */
static int call_lib(lua_State *L, fs_lua_limits *lim, int told)
{
    if (lim) lim->fail_next = 0; /* left over should Lua not have retried */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int rc = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    if (lim) fs_sandbox_call_done(lim, told);
    if (rc == LUA_OK) return lua_gettop(L);
    if (rc == LUA_ERRMEM && lim) fs_sandbox_raise_memory(L, lim);
    const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    const char *colon = m ? strchr(m, ':') : NULL;
    if (m && !(colon && colon != m && colon[1] >= '0' && colon[1] <= '9')) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

/* call_lib after charging est steps (raises when est is more than is left). */
static int call_original(lua_State *L, double est, const char *what)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int told = 0;
    if (lim) {
        fs_sandbox_precharge(L, lim, est, what);
        told = fs_sandbox_call_starts(lim, est);
    }
    return call_lib(L, lim, told);
}

static double str_len_at(lua_State *L, int i)
{
    return lua_type(L, i) == LUA_TSTRING ? (double)lua_rawlen(L, i) : 0.0;
}

/* The library's index arithmetic (lstrlib.c): a 1-based start position. */
static size_t posrelat_start(lua_Integer pos, size_t len)
{
    if (pos > 0) return (size_t)pos;
    if (pos == 0) return 1;
    if (pos < -(lua_Integer)len) return 1;
    return len + (size_t)pos + 1;
}

/* ... and an end position, clipped to [0, len]. */
static size_t posrelat_end(lua_Integer pos, size_t len)
{
    if (pos > (lua_Integer)len) return len;
    if (pos >= 0) return (size_t)pos;
    if (pos < -(lua_Integer)len) return 0;
    return len + (size_t)pos + 1;
}

/* ------------------------------------------------- costs from arguments */

typedef double (*cost_fn)(lua_State *L, const fs_lua_limits *lim);

/* Steps per byte of a format string (string.format, string.pack, os.date):
 * a conversion such as %99.99f takes up to ~1 us. */
#define FORMAT_STEPS_PER_BYTE 16

static double cost_chars(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    size_t n;
    luaL_checklstring(L, 1, &n);
    return 1 + (double)n / CHARS_PER_STEP;
}

static double cost_byte(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    size_t len;
    luaL_checklstring(L, 1, &len);
    lua_Integer pi = luaL_optinteger(L, 2, 1);
    size_t i = posrelat_start(pi, len), j = posrelat_end(luaL_optinteger(L, 3, pi), len);
    return 1 + (i > j ? 0.0 : (double)(j - i + 1)); /* a value pushed per byte */
}

/* One conversion of string.format on argument arg: a float conversion writes
 * (and glibc computes exactly) every decimal digit of the value -- %99.99f
 * of 1e300 takes ~50 us --, about 150 ns a digit; other conversions are one
 * short snprintf; %s and %q copy or quote their string. */
static double format_item_cost(lua_State *L, int arg, char conv, int prec)
{
    switch (conv) {
    case 's':
        return 2 + str_len_at(L, arg) / BYTES_PER_STEP;
    case 'q':
        return 100 + str_len_at(L, arg) / CHARS_PER_STEP;
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
        double x = fabs(lua_tonumberx(L, arg, NULL));
        double digits = x > 0 && isfinite(x) ? fabs(floor(log10(x))) : 0;
        return 20 + 15 * (digits + (prec < 0 ? 6 : prec));
    }
    default:
        return 100;
    }
}

/* string.format: the conversions read as the library reads them (flags,
 * width, precision of at most two digits; it refuses anything else itself) */
static double cost_format(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    size_t n;
    const char *f = luaL_checklstring(L, 1, &n), *e = f + n;
    double c = 1 + (double)n / CHARS_PER_STEP;
    int arg = 1;
    while (f < e) {
        if (*f++ != '%') continue;
        if (f < e && *f == '%') {
            f++;
            continue;
        }
        arg++;
        while (f < e && strchr("-+ #0", *f) && *f) f++;
        while (f < e && *f >= '0' && *f <= '9') f++;
        int prec = -1;
        if (f < e && *f == '.') {
            f++;
            for (prec = 0; f < e && *f >= '0' && *f <= '9'; f++)
                prec = prec < 100 ? prec * 10 + (*f - '0') : prec;
        }
        if (f < e) c += format_item_cost(L, arg, *f++, prec);
    }
    return c;
}

static double cost_pack(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    size_t n;
    luaL_checklstring(L, 1, &n);
    double c = 1 + (double)n * FORMAT_STEPS_PER_BYTE;
    for (int i = 2; i <= lua_gettop(L); i++) c += str_len_at(L, i) / BYTES_PER_STEP;
    return c;
}

static double cost_date(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    return 1 + str_len_at(L, 1) * FORMAT_STEPS_PER_BYTE;
}

/* string arithmetic metamethods and tonumber: number parsing */
static double cost_numeric(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    return 1 + (str_len_at(L, 1) + str_len_at(L, 2)) / CHARS_PER_STEP;
}

static double cost_rawequal(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    double a = str_len_at(L, 1), b = str_len_at(L, 2);
    return 1 + (a < b ? a : b) / BYTES_PER_STEP;
}

static double cost_print(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    double c = 1;
    for (int i = 1; i <= lua_gettop(L); i++) c += 1 + str_len_at(L, i) / BYTES_PER_STEP;
    return c;
}

/* utf8.len(s, i, j) and utf8.codepoint(s, i, j): one decode per byte of the
 * range at most, and codepoint pushes a value per character (their own
 * bound checks come later, from the library) */
static double cost_utf8_range(lua_State *L, int len_fn)
{
    size_t len;
    luaL_checklstring(L, 1, &len);
    lua_Integer i = luaL_optinteger(L, 2, 1);
    lua_Integer j = luaL_optinteger(L, 3, len_fn ? -1 : i);
    lua_Integer n = (lua_Integer)len;
    i = i >= 0 ? i : (-i > n ? 0 : n + i + 1);
    j = j >= 0 ? j : (-j > n ? 0 : n + j + 1);
    if (j > n) j = n;
    if (i < 1) i = 1;
    return 1 + (i > j ? 0.0 : (double)(j - i + 1) / (len_fn ? CHARS_PER_STEP : 1));
}

static double cost_utf8_len(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    return cost_utf8_range(L, 1);
}

static double cost_utf8_codepoint(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    return cost_utf8_range(L, 0);
}

/* utf8.offset(s, n, i): scans from i towards the end (n > 0) or the start */
static double cost_utf8_offset(lua_State *L, const fs_lua_limits *lim)
{
    (void)lim;
    size_t len;
    luaL_checklstring(L, 1, &len);
    lua_Integer n = luaL_checkinteger(L, 2);
    lua_Integer i = luaL_optinteger(L, 3, n >= 0 ? 1 : (lua_Integer)len + 1);
    lua_Integer l = (lua_Integer)len;
    i = i >= 0 ? i : (-i > l ? 0 : l + i + 1);
    if (i < 1 || i > l + 1) return 1; /* the library refuses it */
    double span = n > 0 ? (double)(l - i + 1) : (double)i;
    return 1 + span / CHARS_PER_STEP;
}

typedef struct charged_fn {
    const char *lib, *name, *what;
    cost_fn cost;
} charged_fn;

static const charged_fn charged_fns[] = {
    {"string", "byte", "string.byte", cost_byte},
    {"string", "lower", "string.lower", cost_chars},
    {"string", "upper", "string.upper", cost_chars},
    {"string", "reverse", "string.reverse", cost_chars},
    {"string", "format", "string.format", cost_format},
    {"string", "pack", "string.pack", cost_pack},
    {"string", "packsize", "string.packsize", cost_pack},
    {"string", "unpack", "string.unpack", cost_pack},
    {"utf8", "len", "utf8.len", cost_utf8_len},
    {"utf8", "codepoint", "utf8.codepoint", cost_utf8_codepoint},
    {"utf8", "offset", "utf8.offset", cost_utf8_offset},
    {"os", "date", "os.date", cost_date},
    {NULL, "tonumber", "tonumber", cost_numeric},
    {NULL, "rawequal", "rawequal", cost_rawequal},
    {NULL, "print", "print", cost_print},
};
#define N_CHARGED (sizeof charged_fns / sizeof charged_fns[0])

/* The string metatable's arithmetic (`"10" + 1` converts in C) */
static const char *const string_arith[] = {"__add", "__sub", "__mul", "__mod", "__pow",
                                           "__div", "__idiv", "__unm", NULL};

/* upvalues: the library's function, the index in charged_fns (or -1: string
 * arithmetic) */
static int charged_call(lua_State *L)
{
    lua_Integer k = lua_tointeger(L, lua_upvalueindex(2));
    const fs_lua_limits *lim = fs_sandbox_limits(L);
    if (k < 0) return call_original(L, cost_numeric(L, lim), "string arithmetic");
    const charged_fn *c = &charged_fns[k];
    return call_original(L, c->cost(L, lim), c->what);
}

/* ------------------------------------------------------------- strings */

/* string.rep(s, n [, sep]): an empty result is answered without the n empty
 * copies the library would make; otherwise one step per CHARS_PER_STEP
 * copies and per BYTES_PER_STEP bytes of the result. */
static int charged_rep(lua_State *L)
{
    size_t l, lsep;
    luaL_checklstring(L, 1, &l);
    lua_Integer n = luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || l + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    double bytes = (double)n * (double)l + (double)(n - 1) * (double)lsep;
    return call_original(L, 1 + (double)n / CHARS_PER_STEP + bytes / BYTES_PER_STEP, "string.rep");
}

/* The library's test for a pattern without special characters (a plain
 * search for string.find). */
static int no_specials(const char *p, size_t l)
{
    size_t upto = 0;
    do {
        if (strpbrk(p + upto, "^$*+?.([%-")) return 0;
        upto += strlen(p + upto) + 1; /* may have more after \0 */
    } while (upto <= l);
    return 1;
}

/* A pattern match on n bytes of subject: charged one step per byte of subject
 * and pattern (every start position is tried), and refused before it runs
 * when its backtracking bound is more than the instructions left -- what
 * happens inside the match is C code no hook sees.  Returns the bound. */
static double match_precharge(lua_State *L, const char *p, size_t lp, size_t n, const char *what)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    double bound = fs_sandbox_pattern_bound(p, lp, n);
    if (!lim) return bound;
    fs_sandbox_charge(lim, (long long)(n + lp));
    double left = (double)(lim->step_limit - lim->steps);
    if (lim->step_limit && bound > left && bound <= (double)lim->step_limit)
        fs_sandbox_work(L, lim, (left > 0 ? left : 0) + 1); /* the limit has simply run out */
    if (lim->step_limit && bound > left) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: the pattern could take up to %.3g match steps on this "
                 "%zu-byte subject (backtracking no limit can stop), more than the %.0f "
                 "instructions left; simplify it (fewer items with *, + or -, fewer "
                 "back-references %%1-%%9; anchor it with ^) or raise --max-instructions",
                 what, bound, n, left > 0 ? left : 0);
        luaL_error(L, "%s", msg);
    }
    return bound;
}

/* Calls the library's pattern function (upvalue 1) after match_precharge. */
static int call_matcher(lua_State *L, double bound)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    return call_lib(L, lim, lim ? fs_sandbox_call_starts(lim, bound) : 0);
}

/* string.find: a plain search (fourth argument true, or a pattern without
 * special characters) by memmem, charged per byte; else a pattern match. */
static int charged_find(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = posrelat_start(luaL_optinteger(L, 3, 1), ls) - 1;
    if (init > ls) {
        luaL_pushfail(L);
        return 1;
    }
    if (!lua_toboolean(L, 4) && !no_specials(p, lp))
        return call_matcher(L, match_precharge(L, p, lp, ls - init, "string.find"));
    fs_lua_limits *lim = fs_sandbox_limits(L);
    double est = 1 + (double)(ls - init + lp) / CHARS_PER_STEP;
    int told = 0;
    if (lim) {
        fs_sandbox_precharge(L, lim, est, "string.find");
        told = fs_sandbox_call_starts(lim, est);
    }
    const char *hit = memmem(s + init, ls - init, p, lp);
    if (lim) fs_sandbox_call_done(lim, told);
    if (!hit) {
        luaL_pushfail(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
    lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
    return 2;
}

/* string.match(s, p [, init]) */
static int charged_match(lua_State *L)
{
    size_t ls, lp;
    luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = posrelat_start(luaL_optinteger(L, 3, 1), ls) - 1;
    size_t n = init > ls ? 0 : ls - init;
    return call_matcher(L, match_precharge(L, p, lp, n, "string.match"));
}

/* string.gsub(s, p, repl [, n]) */
static int charged_gsub(lua_State *L)
{
    size_t ls, lp;
    luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    return call_matcher(L, match_precharge(L, p, lp, ls, "string.gsub"));
}

/* gmatch's iterator: upvalues the library's iterator and the match bound
 * (every call goes on matching where the last one stopped). */
static int gmatch_step(lua_State *L)
{
    return call_matcher(L, lua_tonumber(L, lua_upvalueindex(2)));
}

/* string.gmatch(s, p [, init]): the library's iterator, wrapped */
static int charged_gmatch(lua_State *L)
{
    size_t ls, lp;
    luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = posrelat_start(luaL_optinteger(L, 3, 1), ls) - 1;
    double bound = match_precharge(L, p, lp, init > ls ? 0 : ls - init, "string.gmatch");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    lua_pushnumber(L, bound);
    lua_pushcclosure(L, gmatch_step, 2);
    return 1;
}

/* --------------------------------------------------- the pattern bound */

/* Skips a set [...] starting at p[i] == '[': the index after its ']'. */
static size_t skip_set(const char *p, size_t i, size_t n)
{
    i++;
    if (i < n && p[i] == '^') i++;
    if (i < n && p[i] == ']') i++; /* a first ']' is a member */
    while (i < n && p[i] != ']') i += p[i] == '%' ? 2 : 1;
    return i < n ? i + 1 : n;
}

/* What a pattern holds, for the bound. */
typedef struct pattern_items {
    double variable; /* single-character items with *, + or -, and %bxy */
    double optional; /* items with ? */
    double items;    /* every item, the ones above included */
    double backrefs; /* %1..%9 */
} pattern_items;

static pattern_items count_items(const char *p, size_t plen)
{
    pattern_items it = {0, 0, 0, 0};
    size_t i = plen > 0 && p[0] == '^' ? 1 : 0;
    while (i < plen) {
        char c = p[i];
        if (c == '(' || c == ')') {
            i++;
            continue;
        }
        it.items++;
        if (c == '%' && i + 1 < plen && p[i + 1] == 'b') { /* %bxy: a balanced run */
            it.variable++;
            i += 4;
        } else if (c == '%' && i + 1 < plen && p[i + 1] == 'f') { /* %f[set]: a frontier */
            i += 2;
            if (i < plen && p[i] == '[') i = skip_set(p, i, plen);
        } else if (c == '%' && i + 1 < plen && p[i + 1] >= '0' && p[i + 1] <= '9') {
            it.backrefs++; /* %1: compares as many bytes as its capture holds */
            i += 2;
        } else {
            i = c == '[' ? skip_set(p, i, plen) : c == '%' ? i + 2 : i + 1;
            if (i < plen && (p[i] == '*' || p[i] == '+' || p[i] == '-')) {
                it.variable++;
                i++;
            } else if (i < plen && p[i] == '?') {
                it.optional++;
                i++;
            }
        }
    }
    return it;
}

/* Only items of variable length backtrack: with q of them, the subject's n
 * bytes can be split among them in at most C(n + q, q) ways, each tried once
 * per start position (n + 1 of them unless the pattern starts with ^);
 * every optional item (?) doubles it.  Each try walks the pattern's items,
 * and a back-reference compares up to n bytes (memcmp, BYTES_PER_STEP per
 * step).  Floating point: it may be astronomical ("(.-)(.-)(.-)(.-)(.-)b" on
 * 3000 bytes: ~4e19). */
double fs_sandbox_pattern_bound(const char *p, size_t plen, size_t n)
{
    pattern_items it = count_items(p, plen);
    int anchored = plen > 0 && p[0] == '^';
    double ways = 1.0;
    for (double k = 1; k <= it.variable && ways < 1e300; k++) ways *= ((double)n + k) / k;
    for (double k = 0; k < it.optional && ways < 1e300; k++) ways *= 2.0;
    double per_try = 1 + it.items + it.backrefs * (double)n / BYTES_PER_STEP;
    return ways * per_try * (anchored ? 1.0 : (double)n + 1.0);
}

/* ----------------------------------------------------------------- utf8 */

#define IS_CONT(p) ((*(const unsigned char *)(p) & 0xC0) == 0x80)

/* utf8.codes' iterator: upvalue the library's.  The library skips every
 * continuation byte from the control position in one loop (16 MiB of them
 * in one call); here that skip charges as it goes, then the library's
 * iterator runs from the first byte that is not one. */
static int codes_step(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    lua_Unsigned n = (lua_Unsigned)lua_tointeger(L, 2), k = n;
    fs_lua_limits *lim = fs_sandbox_limits(L);
    if (n < len) {
        while (IS_CONT(s + k)) { /* s[len] is '\0': the loop ends there */
            k++;
            if (lim && (k - n) % 65536 == 0) fs_sandbox_work(L, lim, 65536.0 / CHARS_PER_STEP);
        }
        if (lim) fs_sandbox_charge(lim, (long long)(((k - n) % 65536) / CHARS_PER_STEP));
        if (k != n) {
            lua_pushinteger(L, (lua_Integer)k);
            lua_replace(L, 2);
        }
    }
    return call_lib(L, lim, 0);
}

/* utf8.codes(s [, lax]): the library's triple with its iterator wrapped */
static int charged_codes(lua_State *L)
{
    luaL_checkstring(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 3);
    lua_pushvalue(L, -3);
    lua_pushcclosure(L, codes_step, 1);
    lua_replace(L, -4);
    return 3;
}

/* ----------------------------------------------------------- base, gc */

/* collectgarbage: a collection or a step is charged by the heap it walks
 * (BYTES_PER_STEP / 4 bytes per step); retuning the collector is refused --
 * a collector with a huge step multiplier does a whole cycle per
 * allocation, work that no charge would see. */
static int charged_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");
    int tuned = 0;
    for (int i = 2; i <= lua_gettop(L); i++) tuned |= !lua_isnil(L, i) && lua_tonumber(L, i) != 0;
    if (!strcmp(opt, "setpause") || !strcmp(opt, "setstepmul") ||
        ((!strcmp(opt, "incremental") || !strcmp(opt, "generational")) && tuned))
        return luaL_error(L, "collectgarbage: \"%s\" with parameters is not allowed in the sandbox "
                          "(a retuned collector could work outside every limit)", opt);
    const fs_lua_limits *lim = fs_sandbox_limits(L);
    double est = 1;
    if (lim && (!strcmp(opt, "collect") || !strcmp(opt, "step")))
        est += (double)lim->mem_used / (BYTES_PER_STEP / 4);
    return call_original(L, est, "collectgarbage");
}

/* --------------------------------------------------------------- tables */

/* The library's table access rules (ltablib.c): a table, or a value whose
 * metatable has the metamethods the operation needs. */
#define TAB_R 1
#define TAB_W 2
#define TAB_L 4
#define TAB_RW (TAB_R | TAB_W)
/* Steps per element a table function moves, charged every TAB_CHUNK. */
#define TAB_STEPS 4
#define TAB_CHUNK 1024

static int check_field(lua_State *L, const char *key, int n)
{
    lua_pushstring(L, key);
    return lua_rawget(L, -n) != LUA_TNIL;
}

static void check_tab(lua_State *L, int arg, int what)
{
    if (lua_type(L, arg) == LUA_TTABLE) return;
    int n = 1;
    if (lua_getmetatable(L, arg) && (!(what & TAB_R) || check_field(L, "__index", ++n)) &&
        (!(what & TAB_W) || check_field(L, "__newindex", ++n)) &&
        (!(what & TAB_L) || check_field(L, "__len", ++n)))
        lua_pop(L, n);
    else
        luaL_checktype(L, arg, LUA_TTABLE); /* raises */
}

static lua_Integer tab_len(lua_State *L, int arg, int what)
{
    check_tab(L, arg, what | TAB_L);
    return luaL_len(L, arg);
}

/* One more element moved: every TAB_CHUNK, the charge and the limits. */
static void tab_step(lua_State *L, fs_lua_limits *lim, int *k)
{
    if (++*k < TAB_CHUNK) return;
    *k = 0;
    if (lim) fs_sandbox_work(L, lim, TAB_CHUNK * TAB_STEPS);
}

static void tab_done(fs_lua_limits *lim, int k)
{
    if (lim) fs_sandbox_charge(lim, (long long)k * TAB_STEPS);
}

/* table.insert(t, [pos,] v) */
static int bounded_insert(lua_State *L)
{
    lua_Integer e = luaL_intop(+, tab_len(L, 1, TAB_RW), 1), pos;
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int k = 0;
    switch (lua_gettop(L)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        for (lua_Integer i = e; i > pos; i--) {
            lua_geti(L, 1, i - 1);
            lua_seti(L, 1, i);
            tab_step(L, lim, &k);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    tab_done(lim, k);
    lua_seti(L, 1, pos);
    return 0;
}

/* table.remove(t [, pos]) */
static int bounded_remove(lua_State *L)
{
    lua_Integer size = tab_len(L, 1, TAB_RW);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int k = 0;
    if (pos != size)
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, "position out of bounds");
    lua_geti(L, 1, pos);
    for (; pos < size; pos++) {
        lua_geti(L, 1, pos + 1);
        lua_seti(L, 1, pos);
        tab_step(L, lim, &k);
    }
    tab_done(lim, k);
    lua_pushnil(L);
    lua_seti(L, 1, pos);
    return 1;
}

/* table.move(a1, f, e, t [, a2]) */
static int bounded_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
    lua_Integer t = luaL_checkinteger(L, 4);
    int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int k = 0;
    check_tab(L, 1, TAB_R);
    check_tab(L, tt, TAB_W);
    if (e >= f) {
        luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
        lua_Integer n = e - f + 1;
        luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
        int up = t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ));
        for (lua_Integer i = 0; i < n; i++) {
            lua_Integer at = up ? i : n - 1 - i;
            lua_geti(L, 1, f + at);
            lua_seti(L, tt, t + at);
            tab_step(L, lim, &k);
        }
    }
    tab_done(lim, k);
    lua_pushvalue(L, tt);
    return 1;
}

static void concat_field(lua_State *L, luaL_Buffer *b, lua_Integer i)
{
    lua_geti(L, 1, i);
    if (!lua_isstring(L, -1))
        luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1),
                   (lua_Integer)i);
    luaL_addvalue(b);
}

/* table.concat(t [, sep [, i [, j]]]) */
static int bounded_concat(lua_State *L)
{
    luaL_Buffer b;
    lua_Integer last = tab_len(L, 1, TAB_R);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    last = luaL_optinteger(L, 4, last);
    fs_lua_limits *lim = fs_sandbox_limits(L);
    int k = 0;
    luaL_buffinit(L, &b);
    for (; i < last; i++) {
        concat_field(L, &b, i);
        luaL_addlstring(&b, sep, lsep);
        tab_step(L, lim, &k);
    }
    if (i == last) concat_field(L, &b, i);
    tab_done(lim, k);
    luaL_pushresult(&b);
    return 1;
}

/* table.unpack(t [, i [, j]]): the length taken once here and handed on,
 * two steps per value (at most the ~1e6 a stack holds: the library refuses
 * more) */
static int charged_unpack(lua_State *L)
{
    lua_Integer i = luaL_optinteger(L, 2, 1);
    lua_Integer e = luaL_opt(L, luaL_checkinteger, 3, luaL_len(L, 1));
    lua_settop(L, 1);
    lua_pushinteger(L, i);
    lua_pushinteger(L, e);
    double n = i > e ? 0 : (double)e - (double)i + 1;
    return call_original(L, 1 + 2 * (n < 1e6 ? n : 1e6), "table.unpack");
}

/* The comparator table.sort gets when it is given none: `<`, charged per
 * comparison by the shorter string (a comparison of long strings is one C
 * call), with the limits looked at every time. */
static int sort_less(lua_State *L)
{
    fs_lua_limits *lim = fs_sandbox_limits(L);
    if (lim) {
        double a = str_len_at(L, 1), b = str_len_at(L, 2);
        fs_sandbox_work(L, lim, 1 + (a < b ? a : b) / CHARS_PER_STEP);
    }
    lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
    return 1;
}

/* table.sort(t [, comp]).  A comparator given is Lua code (counted) or a
 * charged function; without one, a plain table of numbers is sorted by the
 * library at once, charged 2 n log2 n, and anything else through sort_less. */
static int charged_sort(lua_State *L)
{
    if (!lua_isnoneornil(L, 2)) return call_original(L, 1, "table.sort");
    lua_settop(L, 1);
    int plain = lua_type(L, 1) == LUA_TTABLE && !lua_getmetatable(L, 1);
    lua_settop(L, 1);
    if (plain) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, 1), i = 1;
        for (; i <= n; i++) {
            int t = lua_rawgeti(L, 1, i);
            lua_pop(L, 1);
            if (t != LUA_TNUMBER) break;
        }
        if (i > n)
            return call_original(L, 1 + (double)n + 2.0 * (double)n * log2((double)n + 2), "table.sort");
    }
    lua_pushcfunction(L, sort_less);
    return call_original(L, 1, "table.sort");
}

/* --------------------------------------------------------------- install */

/* t[name] = closure of f over (t[name], upvalue2) when t[name] is a function. */
static void wrap(lua_State *L, int t, const char *name, lua_CFunction f, lua_Integer up2)
{
    lua_getfield(L, t, name);
    if (!lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return;
    }
    lua_pushinteger(L, up2);
    lua_pushcclosure(L, f, 2);
    lua_setfield(L, t, name);
}

static void wrap_table_fns(lua_State *L)
{
    lua_getglobal(L, "table");
    int t = lua_gettop(L);
    static const struct {
        const char *name;
        lua_CFunction f;
    } fns[] = {{"insert", bounded_insert}, {"remove", bounded_remove}, {"move", bounded_move},
               {"concat", bounded_concat}, {"unpack", charged_unpack}, {"sort", charged_sort}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) wrap(L, t, fns[i].name, fns[i].f, 0);
    lua_pop(L, 1);
}

static void wrap_string_fns(lua_State *L, int patterns)
{
    lua_getglobal(L, "string");
    int t = lua_gettop(L);
    wrap(L, t, "rep", charged_rep, 0);
    if (patterns) {
        wrap(L, t, "find", charged_find, 0);
        wrap(L, t, "match", charged_match, 0);
        wrap(L, t, "gmatch", charged_gmatch, 0);
        wrap(L, t, "gsub", charged_gsub, 0);
    }
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        for (int i = 0; string_arith[i]; i++) wrap(L, lua_gettop(L), string_arith[i], charged_call, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_getglobal(L, "utf8");
    if (lua_istable(L, -1)) wrap(L, lua_gettop(L), "codes", charged_codes, 0);
    lua_pop(L, 1);
}

void fs_sandbox_wrap_libs(lua_State *L, int patterns)
{
    for (size_t i = 0; i < N_CHARGED; i++) {
        const charged_fn *c = &charged_fns[i];
        if (c->lib)
            lua_getglobal(L, c->lib);
        else
            lua_pushglobaltable(L);
        if (lua_istable(L, -1)) wrap(L, lua_gettop(L), c->name, charged_call, (lua_Integer)i);
        lua_pop(L, 1);
    }
    wrap_string_fns(L, patterns);
    wrap_table_fns(L);
    lua_pushglobaltable(L);
    wrap(L, lua_gettop(L), "collectgarbage", charged_collectgarbage, 0);
    lua_pop(L, 1);
}
