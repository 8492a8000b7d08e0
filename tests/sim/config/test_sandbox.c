/*
 * test_sandbox.c -- the sandbox's limits (sim/config/sandbox.h, sandbox_lib.c).
 *
 *   granularity   --max-instructions is met within 1% for limits from 100 to
 *                 1e7 (the hook's interval follows the limit)
 *   escapes       every library call that loops without allocating (and the
 *                 comparisons of long strings inside one VM instruction) ends
 *                 under a small limit in well under a second, with the
 *                 instruction-limit error or a refusal naming the call
 *   patterns      the bound counts back-references (%1): a match that ran 27 s
 *                 is refused before it runs
 *   stop          a stop request ends a long library loop, a bounded table
 *                 function and a comparator-driven sort
 *   in_library    told around long calls, taken back after them, after an
 *                 error inside one and when the state closes
 *   differential  the charged and bounded functions give the library's own
 *                 results and errors: one script's output, sandboxed and in a
 *                 plain state, byte for byte
 *   gc            collectgarbage may not retune the collector
 */
#include "sim/config/sandbox.h"
#include "sim/config/sandbox_impl.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../check.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct outcome {
    int rc;
    char msg[600];
    double secs;
    long long steps;
    int every;
} outcome;

static int stop_after_calls;
static int stop_calls;

static int stop_counting(void)
{
    return stop_after_calls > 0 && ++stop_calls > stop_after_calls;
}

static int library_depth;
static int library_max;

static void library_tell(int on)
{
    library_depth += on ? 1 : -1;
    if (library_depth > library_max) library_max = library_depth;
}

/* Runs src in a fresh SCRIPT state under step_limit (and the stop and
 * in_library callbacks when asked). */
static outcome run_with(const char *src, long long step_limit, int stop, int tell)
{
    outcome o = {0, "", 0, 0, 0};
    /* a time limit far above every case: should a charge go missing, the
     * case fails with "time limit" instead of hanging the test */
    fs_lua_limits lim = {.mem_limit_bytes = (size_t)1 << 30, .step_limit = step_limit,
                         .max_seconds = 15};
    if (stop) lim.stop = stop_counting;
    if (tell) lim.in_library = library_tell;
    stop_calls = 0;
    lua_State *L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lim);
    CHECK(L != NULL);
    if (!L) return o;
    double t0 = now_s();
    o.rc = luaL_loadstring(L, src);
    if (o.rc == LUA_OK) o.rc = lua_pcall(L, 0, 0, 0);
    o.secs = now_s() - t0;
    if (o.rc != LUA_OK)
        snprintf(o.msg, sizeof o.msg, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    o.steps = lim.steps;
    o.every = lim.every;
    lua_close(L);
    return o;
}

static outcome run_limited(const char *src, long long step_limit)
{
    return run_with(src, step_limit, 0, 0);
}

/* The instruction limit is met within 1% (the hook runs every
 * min(100, limit / 100) instructions): an endless loop stops after more than
 * the limit and at most 1% more. */
static void test_granularity(void)
{
    static const long long limits[] = {1000, 12345, 100000, 1000000, 10000000};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        long long L = limits[i];
        outcome o = run_limited("local n = 0\nwhile true do n = n + 1 end\n", L);
        CHECK_EQ_INT(o.rc, LUA_ERRRUN);
        CHECK(strstr(o.msg, "instruction limit of") != NULL);
        CHECK(o.steps > L);
        CHECK(o.steps <= L + L / 100);
        CHECK(o.every >= 1 && o.every <= 100 && o.every <= (L / 100 > 0 ? L / 100 : 1));
        printf("granularity: limit %lld stopped at %lld (+%.2f%%)\n", L, o.steps,
               100.0 * (double)(o.steps - L) / (double)L);
    }
    /* a state that made a 16 MiB string looks 100 / 16 times as often */
    outcome big = run_limited("local s = string.rep('a', 16 << 20)\n", 100000000);
    CHECK_EQ_INT(big.rc, LUA_OK);
    CHECK_EQ_INT(big.every, 6);
    /* a limit that is not reached: the script runs to its end */
    outcome o = run_limited("local n = 0\nfor i = 1, 1000 do n = n + i end\nassert(n == 500500)\n",
                            100000);
    CHECK_EQ_INT(o.rc, LUA_OK);
}

/* One case of work the count hook does not see. */
typedef struct escape {
    const char *name, *src, *needle;
    long long limit;
} escape;

/* 2 MiB: long enough for the hook's big-string interval, short enough that
 * every case stays well under a second */
#define BIG "local s = string.rep('a', 2 << 20)\n"
#define ZEROS "local z = string.rep('\\0', 2 << 20)\n"

static const escape escapes[] = {
    {"string.rep of an empty string", "local s = string.rep('', 1e15)\nassert(s == '')\n"
     "while true do local t = string.rep('', 1e15, '') end\n", "instruction limit", 1000000},
    {"string.rep, too long", "local s = string.rep('x', 1e12)\n",
     "string.rep: this call could take up to", 1000000},
    {"utf8.len in a loop", BIG "while true do local n = utf8.len(s) end\n", "instruction limit",
     5000000},
    {"utf8.codepoint in a loop", BIG "while true do utf8.codepoint(s, 1, 200000) end\n",
     "instruction limit", 5000000},
    {"utf8.offset in a loop", BIG "while true do utf8.offset(s, -1) end\n", "instruction limit",
     5000000},
    {"utf8.codes over continuation bytes",
     "local s = string.rep('\\x80', 2 << 20)\n"
     "while true do for p, c in utf8.codes(s) do end end\n", "instruction limit", 5000000},
    {"== on 16 MiB strings", BIG "local t = string.rep('a', 2 << 20)\n"
     "while true do local e = s == t end\n", "instruction limit", 5000000},
    {"< on 16 MiB strings", BIG "local t = string.rep('a', 2 << 20)\n"
     "while true do local e = s < t end\n", "instruction limit", 5000000},
    {"< on 16 MiB of zero bytes", ZEROS "local y = string.rep('\\0', 2 << 20)\n"
     "while true do local e = z < y end\n", "instruction limit", 5000000},
    {"arithmetic on a long numeric string", "local s = string.rep('1', 2 << 20)\n"
     "while true do pcall(function() return s + 0 end) end\n", "instruction limit", 5000000},
    {"tonumber of a long string", "local s = string.rep('7', 2 << 20)\n"
     "while true do local x = tonumber(s) end\n", "instruction limit", 5000000},
    {"rawequal on 16 MiB strings", BIG "local t = string.rep('a', 2 << 20)\n"
     "while true do local e = rawequal(s, t) end\n", "instruction limit", 5000000},
    {"string.byte slices", BIG "while true do string.byte(s, 1, 200000) end\n",
     "instruction limit", 5000000},
    {"string.upper", BIG "while true do local u = s:upper() end\n", "instruction limit",
     5000000},
    {"string.format of a long format", "local f = string.rep('%5.1f', 100000)\n"
     "local a = {} for i = 1, 100000 do a[i] = i end\n"
     "while true do local x = string.format(f, table.unpack(a, 1, 100000)) end\n",
     "instruction limit", 5000000},
    {"plain string.find (quadratic in the library)", BIG
     "local n = string.rep('a', 1 << 20) .. 'b'\n"
     "while true do local i = s:find(n, 1, true) end\n", "instruction limit", 5000000},
    {"table.concat of empty strings", "local t = {} for i = 1, 200000 do t[i] = '' end\n"
     "while true do local x = table.concat(t) end\n", "instruction limit", 5000000},
    {"table.insert at the front", "local t = {} for i = 1, 200000 do t[i] = i end\n"
     "while true do table.insert(t, 1, 0) table.remove(t, 1) end\n", "instruction limit",
     5000000},
    {"table.move of 1e15 elements", "table.move({}, 1, 1e15, 2)\n", "instruction limit",
     1000000},
    {"table.unpack", "local t = {} for i = 1, 200000 do t[i] = i end\n"
     "while true do local a = select('#', table.unpack(t)) end\n", "instruction limit",
     5000000},
    {"table.sort of strings", "local t = {} for i = 1, 20000 do t[i] = string.rep('q', 5000) end\n"
     "table.sort(t)\n", "instruction limit", 5000000},
    {"table.sort of numbers", "local t = {} for i = 1, 200000 do t[i] = -i end\n"
     "while true do table.sort(t) end\n", "instruction limit", 5000000},
    {"collectgarbage on a large heap", "local t = {} for i = 1, 300000 do t[i] = {i} end\n"
     "while true do collectgarbage() end\n", "instruction limit", 5000000},
    {"os.date of a long format", "local f = string.rep('%c', 100000)\n"
     "while true do local d = os.date(f, 0) end\n", "instruction limit", 5000000},
    {"load of a long chunk", "local c = 'return ' .. string.rep('1+', 1 << 20) .. '1'\n"
     "while true do load(c) end\n", "instruction limit", 5000000},
    {"string.pack of a long format", "local f = string.rep('b', 100000)\n"
     "while true do string.packsize(f) end\n", "instruction limit", 5000000},
};

/* Each escape ends with its error under its limit, fast. */
static void test_escapes(void)
{
    for (size_t i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
        const escape *e = &escapes[i];
        outcome o = run_limited(e->src, e->limit);
        /* the limit ran out, or the call alone would take more than is left */
        int ok = o.rc == LUA_ERRRUN && (strstr(o.msg, e->needle) != NULL ||
                                        strstr(o.msg, "this call could take up to") != NULL);
        CHECK(ok);
        /* generous: the machine may be loaded; each takes ~0.01-0.3 s alone */
        CHECK(o.secs < 10.0);
        printf("escape: %-46s %.3f s  %s\n", e->name, o.secs, o.msg);
    }
}

/* The steps one call adds, set-up run first (no limit: no hook, so the
 * steps are the charges alone). */
static long long charge_of(const char *setup, const char *call)
{
    fs_lua_limits lim = {.mem_limit_bytes = (size_t)1 << 30};
    lua_State *L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lim);
    CHECK(L != NULL);
    if (!L) return -1;
    int rc = luaL_dostring(L, setup);
    CHECK_EQ_INT(rc, LUA_OK);
    rc = luaL_loadstring(L, call);
    long long before = lim.steps;
    if (rc == LUA_OK) rc = lua_pcall(L, 0, 0, 0);
    if (rc != LUA_OK) fprintf(stderr, "charge_of(%s): %s\n", call, lua_tostring(L, -1));
    CHECK_EQ_INT(rc, LUA_OK);
    long long d = lim.steps - before;
    lua_close(L);
    return d;
}

/* Each charged call is charged at least its size-based cost before it runs
 * (sandbox.h): the deterministic charges, apart from the CPU backstop. */
static void test_charges(void)
{
    static const struct {
        const char *setup, *call;
        long long least;
    } cases[] = {
        {"", "local x = string.rep('ab', 1 << 20)", (1 << 20) / CHARS_PER_STEP},
        {"S = string.rep('a', 1 << 20)", "local n = utf8.len(S)", (1 << 20) / CHARS_PER_STEP},
        {"S = string.rep('a', 1 << 20)", "utf8.codepoint(S, 1, 100000)", 100000},
        {"S = string.rep('a', 1 << 20)", "utf8.offset(S, -1)", (1 << 20) / CHARS_PER_STEP},
        {"C = string.rep('\x80', 1 << 20)", "for p in utf8.codes(C) do end",
         (1 << 20) / CHARS_PER_STEP},
        {"S = string.rep('a', 1 << 20)", "string.byte(S, 1, 100000)", 100000},
        {"S = string.rep('a', 1 << 20)", "local u = S:upper()", (1 << 20) / CHARS_PER_STEP},
        {"F = string.rep('%.99f', 10)", "local x = string.format(F, 1e300, 1e300, 1e300, 1e300, "
         "1e300, 1e300, 1e300, 1e300, 1e300, 1e300)", 10 * 15 * 399},
        {"D = string.rep('7', 1 << 20)", "local n = tonumber(D)", (1 << 20) / CHARS_PER_STEP},
        {"D = string.rep('7', 1 << 20)", "local n = D + 0", (1 << 20) / CHARS_PER_STEP},
        {"A, B = string.rep('a', 1 << 20), string.rep('a', 1 << 20)", "local e = rawequal(A, B)",
         (1 << 20) / BYTES_PER_STEP},
        {"S = string.rep('a', 1 << 20) N = string.rep('a', 1000) .. 'b'",
         "local i = S:find(N, 1, true)", (1 << 20) / CHARS_PER_STEP},
        {"S = string.rep('a', 1 << 20)", "local i = S:match('b')", 1 << 20},
        {"T = {} for i = 1, 100000 do T[i] = '' end", "local c = table.concat(T)", 399990},
        {"T = {} for i = 1, 100000 do T[i] = i end", "table.insert(T, 1, 0)", 400000},
        {"T = {} for i = 1, 100000 do T[i] = i end", "table.remove(T, 1)", 399990},
        {"T = {}", "table.move(T, 1, 100000, 2)", 400000},
        {"T = {} for i = 1, 100000 do T[i] = i end", "local n = select('#', table.unpack(T))",
         200000},
        {"T = {} for i = 1, 1000 do T[i] = string.rep('q', 1000) end", "table.sort(T)",
         1000 * 1000 / CHARS_PER_STEP},
        {"T = {} for i = 1, 100000 do T[i] = -i end", "table.sort(T)", 2 * 100000 * 16},
        {"H = {} for i = 1, 100000 do H[i] = {i} end", "collectgarbage()",
         (long long)(4e6 / (BYTES_PER_STEP / 4))},
        {"K = 'return ' .. string.rep('1+', 1 << 19) .. '1'", "load(K)", 1 << 20},
        {"F = string.rep('%c', 1000)", "local d = os.date(F, 0)", 2000 * 16},
        {"F = string.rep('b', 1000)", "local n = string.packsize(F)", 1000 * 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long long c = charge_of(cases[i].setup, cases[i].call);
        CHECK(c >= cases[i].least);
        if (c < cases[i].least)
            fprintf(stderr, "  %s: charged %lld, at least %lld wanted\n", cases[i].call, c,
                    cases[i].least);
    }
    /* an empty repetition is answered without the work, and charged nothing */
    CHECK_EQ_INT(charge_of("", "assert(string.rep('', 1e6) == '' and string.rep('', 1e6, '') "
                               "== '')"), 0);
}

/* The pattern bound counts %1..%9: the back-reference that ran 27 s in one
 * call is refused at once; without the back-reference the pattern fits. */
static void test_pattern_bound(void)
{
    double with = fs_sandbox_pattern_bound("(.-)%1c", 7, 31000);
    double without = fs_sandbox_pattern_bound("(.-)c", 5, 31000);
    CHECK(with > 100 * without);
    CHECK(fs_sandbox_pattern_bound("^abc", 4, 1000) < fs_sandbox_pattern_bound("abc", 3, 1000));
    CHECK(fs_sandbox_pattern_bound("a*b*", 4, 100) > fs_sandbox_pattern_bound("a*b", 3, 100));
    CHECK(fs_sandbox_pattern_bound("a?b", 3, 100) > fs_sandbox_pattern_bound("ab", 2, 100));
    outcome o = run_limited("print(string.find(string.rep('a', 31000), '(.-)%1c'))\n",
                            1000000000LL);
    CHECK_EQ_INT(o.rc, LUA_ERRRUN);
    CHECK(strstr(o.msg, "string.find: the pattern could take up to") != NULL);
    CHECK(strstr(o.msg, "back-references") != NULL);
    CHECK(o.secs < 5.0);
    printf("backreference: %.3f s  %s\n", o.secs, o.msg);
    o = run_limited("assert(string.find(string.rep('a', 3000) .. 'c', '(.-)c') == 1)\n",
                    1000000000LL);
    CHECK_EQ_INT(o.rc, LUA_OK);
}

/* A stop request ends library loops that charge as they go. */
static void test_stop(void)
{
    static const char *const srcs[] = {
        "table.move({}, 1, 1e15, 2)\n",
        "local t = {} for i = 1, 100000 do t[i] = 'x' .. (i % 97) end\n"
        "while true do table.sort(t) end\n",
        "local s = string.rep('\\x80', 2 << 20)\nfor p in utf8.codes(s) do end\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        stop_after_calls = 20;
        outcome o = run_with(srcs[i], 0, 1, 0);
        stop_after_calls = 0;
        CHECK_EQ_INT(o.rc, LUA_ERRRUN);
        CHECK(strstr(o.msg, "interrupted") != NULL);
        CHECK(o.secs < 10.0);
    }
}

/* in_library: told around a long call and taken back after it, after an
 * error inside it, and at the latest when the state closes. */
static void test_in_library(void)
{
    library_depth = library_max = 0;
    outcome o = run_with(BIG "local n = utf8.len(s)\nassert(n == 2 << 20)\n", 0, 0, 1);
    CHECK_EQ_INT(o.rc, LUA_OK);
    CHECK_EQ_INT(library_max, 1);
    CHECK_EQ_INT(library_depth, 0);
    library_depth = library_max = 0;
    o = run_with(BIG "local r = s:gsub('a', function() error('boom') end)\n", 0, 0, 1);
    CHECK_EQ_INT(o.rc, LUA_ERRRUN);
    CHECK(strstr(o.msg, "boom") != NULL);
    CHECK_EQ_INT(library_max, 1);
    CHECK_EQ_INT(library_depth, 0);
    library_depth = library_max = 0;
    o = run_with("local n = utf8.len('abc')\n", 0, 0, 1); /* short: not told */
    CHECK_EQ_INT(o.rc, LUA_OK);
    CHECK_EQ_INT(library_max, 0);
}

/* One script exercising the charged and bounded functions, whose output
 * (results and error messages) must be the library's own. */
static const char differential_src[] =
    "local out = {}\n"
    "local function put(...) local t = table.pack(...)\n"
    "  for i = 1, t.n do local v = t[i]\n"
    "    if type(v) == 'table' then local p = {} for j = 1, 12 do p[j] = tostring(v[j]) end\n"
    "      v = '{' .. table.concat(p, ' ') .. '}' end\n"
    "    out[#out + 1] = tostring(v) end\n"
    "  out[#out + 1] = '|' end\n"
    "local function try(f, ...) put(pcall(f, ...)) end\n"
    "local t = {1, 2, 3}\n"
    "try(table.insert, t, 4) put(t) try(table.insert, t, 1, 0) put(t)\n"
    "try(table.insert, t, 6, 9) put(t) try(table.insert, t, 9, 1) try(table.insert, t)\n"
    "try(table.insert, t, 1, 2, 3) try(table.insert, 5, 1) try(table.insert, t, 'x', 1)\n"
    "try(table.remove, t) put(t) try(table.remove, t, 1) put(t) try(table.remove, t, #t + 1)\n"
    "try(table.remove, t, 10) try(table.remove, {}) try(table.remove, {}, 0)\n"
    "try(table.move, t, 1, 3, 2) put(t) try(table.move, t, 2, 4, 1) put(t)\n"
    "try(table.move, t, 1, 3, 1, {}) try(table.move, t, 2, 1, 5) put(t)\n"
    "try(table.move, t, -1, math.maxinteger, 1)\n"
    "try(table.move, t, 1, 2, math.maxinteger)\n"
    "try(table.concat, t, ',') try(table.concat, t, ', ', 2, 3) try(table.concat, {}, 'x', 1, 0)\n"
    "try(table.concat, {1, {}, 3}) try(table.concat, {1, 2.5, 'z'}, '-')\n"
    "try(table.concat, t, ',', 1, 9)\n"
    "try(table.unpack, t, 2, 4) try(table.unpack, {}, 1, 3) try(table.unpack, t, 1, 1e8)\n"
    "try(table.unpack, t) try(table.unpack, t, 3)\n"
    "local u = {3, 1, 2} table.sort(u) put(u)\n"
    "local w = {'b', 'a', 'c', 'a'} table.sort(w) put(w)\n"
    "local v = {3, 1, 2} table.sort(v, function(a, b) return a > b end) put(v)\n"
    "try(table.sort, {3, 'a', 1}) try(table.sort, {1, nil, 3})\n"
    "local store = {5, 4, 3, 2, 1}\n"
    "local proxy = setmetatable({}, {__index = store, __newindex = store,\n"
    "  __len = function() return #store end})\n"
    "table.insert(proxy, 1, 9) table.remove(proxy, 3) put(store)\n"
    "table.sort(proxy) put(store) put(table.concat(proxy, ':'))\n"
    "table.move(proxy, 1, 3, 2) put(store) put(table.unpack(proxy))\n"
    "put(string.rep('ab', 3, ',')) put(string.rep('', 5)) put(string.rep('x', 0))\n"
    "put(string.rep('x', -2)) try(string.rep) try(string.rep, 'x', 'y')\n"
    "put(string.find('hello world', 'o w', 1, true)) put(string.find('hello', 'l'))\n"
    "put(string.find('hello', 'l', -2)) put(string.find('hello', '', 10))\n"
    "put(string.find('hello', '', 6)) put(string.find('a.b', '.', 1, true))\n"
    "put(string.find('a\\0b', '\\0b')) put(string.find('aaa', 'b', 1, true))\n"
    "put(string.find('x', 'x', -100)) try(string.find, 'x', '[')\n"
    "put(string.match('key=value', '(%w+)=(%w+)')) put(('abcabc'):gsub('b', 'B'))\n"
    "for a, b in ('k1=v1, k2=v2'):gmatch('(%w+)=(%w+)') do put(a, b) end\n"
    "put(string.byte('hello', 2, 4)) put(string.byte('hello', -1)) put(('Hi'):upper())\n"
    "put(string.format('%5.2f|%s|%q', 3.14159, 'x', 'a\\nb'))\n"
    "put(utf8.len('h\\xc3\\xa9llo')) put(utf8.len('\\xff')) put(utf8.codepoint('h\\xc3\\xa9', 1, -1))\n"
    "put(utf8.offset('h\\xc3\\xa9llo', 3)) put(utf8.offset('h\\xc3\\xa9llo', -1))\n"
    "for p, c in utf8.codes('a\\xc3\\xa9b') do put(p, c) end\n"
    "try(function() for p, c in utf8.codes('a\\xffb') do put(p, c) end end)\n"
    "local it = utf8.codes('\\x80\\x80a') put(it('\\x80\\x80a', 0))\n"
    "put(tonumber('  42  ')) put(tonumber('ff', 16)) put(rawequal('a', 'a'))\n"
    "put('10' + 1) put('3' * '4') put(-'2') try(function() return 'x' + 1 end)\n"
    "put(#string.pack('i4i8', 1, 2)) put(string.unpack('b', 'A'))\n"
    "put(collectgarbage('count') > 0) put(collectgarbage('step')) put(collectgarbage())\n"
    "put(type(os.date('%Y', 0)))\n"
    "RESULT = table.concat(out, ',')\n";

static void run_plain(char *out, size_t n)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    if (luaL_dostring(L, differential_src) != LUA_OK)
        snprintf(out, n, "error: %s", lua_tostring(L, -1));
    else {
        lua_getglobal(L, "RESULT");
        snprintf(out, n, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "nil");
    }
    lua_close(L);
}

static void run_sandboxed(char *out, size_t n)
{
    fs_lua_limits lim = {.mem_limit_bytes = (size_t)1 << 28, .step_limit = 100000000};
    lua_State *L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lim);
    if (luaL_dostring(L, differential_src) != LUA_OK)
        snprintf(out, n, "error: %s", lua_tostring(L, -1));
    else {
        lua_getglobal(L, "RESULT");
        snprintf(out, n, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "nil");
    }
    lua_close(L);
}

static void test_differential(void)
{
    static char plain[16384], boxed[16384];
    run_plain(plain, sizeof plain);
    run_sandboxed(boxed, sizeof boxed);
    CHECK(strncmp(plain, "error", 5) != 0);
    int same = strcmp(plain, boxed) == 0;
    CHECK(same);
    if (!same) {
        size_t i = 0;
        while (plain[i] && plain[i] == boxed[i]) i++;
        fprintf(stderr, "differential: first difference at byte %zu\n  plain: %.300s\n  boxed: "
                        "%.300s\n", i, plain + (i > 40 ? i - 40 : 0), boxed + (i > 40 ? i - 40 : 0));
    }
}

/* collectgarbage: collections are fine, retuning the collector is not */
static void test_gc(void)
{
    outcome o = run_limited("collectgarbage() collectgarbage('step', 10)\n"
                            "assert(collectgarbage('isrunning'))\n"
                            "collectgarbage('incremental') collectgarbage('generational')\n"
                            "collectgarbage('incremental', 0, 0)\n", 1000000);
    CHECK_EQ_INT(o.rc, LUA_OK);
    static const char *const refused[] = {"collectgarbage('setpause', 0)\n",
                                          "collectgarbage('setstepmul', 1000000)\n",
                                          "collectgarbage('incremental', 0, 1000000)\n",
                                          "collectgarbage('generational', 5)\n"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        o = run_limited(refused[i], 1000000);
        CHECK_EQ_INT(o.rc, LUA_ERRRUN);
        CHECK(strstr(o.msg, "is not allowed in the sandbox") != NULL);
    }
    /* argument errors name the wrapped function as the library would */
    o = run_limited("string.rep({}, 2)\n", 1000000);
    CHECK(strstr(o.msg, "bad argument #1 to 'rep'") != NULL);
    o = run_limited("utf8.len(nil)\n", 1000000);
    CHECK(strstr(o.msg, "bad argument #1 to 'len'") != NULL);
}

/* Stands for a flashspec call's C work: 20 ms of CPU, no Lua instruction. */
static int burn(lua_State *L)
{
    double t0 = now_s();
    volatile double x = 0;
    while (now_s() - t0 < 0.02)
        for (int i = 0; i < 1000; i++) x += i;
    (void)L;
    return 0;
}

/* An API call that calls back into Lua between stretches of C work, as a
 * calibration calls its points function: burn(), then the function in
 * argument 1, ten times. */
static int burn_calls(lua_State *L)
{
    for (int k = 0; k < 10; k++) {
        burn(L);
        lua_pushvalue(L, 1);
        lua_call(L, 0, 0);
    }
    return 0;
}

static int raiser(lua_State *L)
{
    return luaL_error(L, "raised");
}


/* The CPU-time backstop charges C work the counts do not explain -- but not
 * the work of a flashspec API call (fs_sandbox_api_call), whose own limits
 * bound it: the same script with the burn as a plain C function is charged
 * its CPU time, as an API call only its instructions.  An API call that
 * raised an error does not leave the backstop off. */
static void test_api_calls(void)
{
    static const char src[] =
        "local n = 0\n"
        "for k = 1, 10 do burn(); for i = 1, 300 do n = n + i % 2 end end\n";
    long long steps[2];
    for (int api = 0; api <= 1; api++) {
        fs_lua_limits lim = {.mem_limit_bytes = (size_t)1 << 30, .step_limit = 1LL << 40,
                             .max_seconds = 15};
        lua_State *L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lim);
        CHECK(L != NULL);
        if (!L) return;
        lua_pushcfunction(L, burn);
        if (api) lua_pushcclosure(L, fs_sandbox_api_call, 1);
        lua_setglobal(L, "burn");
        CHECK(luaL_loadstring(L, src) == LUA_OK && lua_pcall(L, 0, 0, 0) == LUA_OK);
        steps[api] = lim.steps;
        CHECK(lim.api_depth == 0);
        lua_close(L);
    }
    /* ~10 x 20 ms at STEP_NS: millions of steps when charged, the loop's
     * ~15,000 instructions as an API call */
    fprintf(stderr, "api_calls: steps %lld plain, %lld as an API call\n", steps[0], steps[1]);
    CHECK(steps[0] > 1000000);
    CHECK(steps[1] < 100000);
    /* the callbacks of an API call are not charged its C work between them */
    {
        fs_lua_limits lc = {.mem_limit_bytes = (size_t)1 << 30, .step_limit = 1LL << 40,
                            .max_seconds = 15};
        lua_State *Lc = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lc);
        CHECK(Lc != NULL);
        if (!Lc) return;
        lua_pushcfunction(Lc, burn_calls);
        lua_pushcclosure(Lc, fs_sandbox_api_call, 1);
        lua_setglobal(Lc, "burn_calls");
        static const char cb[] =
            "local n = 0\n"
            "burn_calls(function() for i = 1, 300 do n = n + i % 2 end end)\n";
        CHECK(luaL_loadstring(Lc, cb) == LUA_OK && lua_pcall(Lc, 0, 0, 0) == LUA_OK);
        fprintf(stderr, "api_calls: steps %lld with callbacks\n", lc.steps);
        CHECK(lc.steps < 100000 && lc.api_depth == 0);
        lua_close(Lc);
    }
    /* an API call that raises: the depth is taken back at the next look */
    fs_lua_limits lim = {.mem_limit_bytes = (size_t)1 << 30, .step_limit = 1LL << 40,
                         .max_seconds = 15};
    lua_State *L = fs_sandbox_new(FS_SANDBOX_SCRIPT, &lim);
    CHECK(L != NULL);
    if (!L) return;
    lua_pushcfunction(L, raiser);
    lua_pushcclosure(L, fs_sandbox_api_call, 1);
    lua_setglobal(L, "raiser");
    lua_pushcfunction(L, burn);
    lua_setglobal(L, "burn");
    static const char again[] =
        "pcall(raiser)\n"
        "local n = 0\n"
        "for k = 1, 10 do burn(); for i = 1, 300 do n = n + i % 2 end end\n";
    CHECK(luaL_loadstring(L, again) == LUA_OK && lua_pcall(L, 0, 0, 0) == LUA_OK);
    CHECK(lim.api_depth == 0 && lim.steps > 1000000); /* charged again */
    lua_close(L);
}

int main(void)
{
    test_granularity();
    test_pattern_bound();
    test_charges();
    test_escapes();
    test_stop();
    test_in_library();
    test_differential();
    test_gc();
    test_api_calls();
    return check_done("test_sandbox");
}
