/*
 * lparams.h -- validate a Lua table against an eng_param_desc table.
 *
 * The Lua side of eng_param.h: one generic checker serves every params struct
 * (device and model profiles, policy parameters, run options).  It fills the
 * struct (after eng_params_defaults) and reports the first problem as a
 * one-line Lua error naming the chunk and the source line of the offending key:
 *
 *   CHUNK:LINE: unknown key 'x' in WHAT (did you mean 'y'?)
 *   CHUNK:LINE: WHAT: key 'x' must be a number (got string)
 *   CHUNK:LINE: WHAT: key 'x' = 9 is out of range [1, 8]
 *   CHUNK:LINE: WHAT: key 'x' must be an integer (got 2.5)
 *   CHUNK:LINE: WHAT: key 'x' must be one of 'a', 'b' (got 'c')
 *   CHUNK:LINE: WHAT: missing required key 'x'
 *
 * "First" is deterministic: among unknown keys and bad values the one written
 * on the earliest line wins (ties: the smaller key name); missing keys come
 * after them.  LINE is found by searching the chunk's source text, from
 * the line hint on, for the key followed by optional blanks and '=' (outside
 * '--' comments; ["key"] = also matches); when the text is unavailable or the
 * key is not found, LINE is the hint.  The hint is the line of the call that
 * passed the table (slp_caller) or 1 for a table a chunk returns.
 *
 * Error discipline: slp_check_table raises a Lua error (lua_error) and so must
 * run inside lua_pcall (e.g. from a lua_CFunction); it releases everything it
 * allocated before raising, so the longjmp only crosses Lua-managed frames.
 * On error the params struct may be partially filled.
 */
#ifndef SLP_LPARAMS_H
#define SLP_LPARAMS_H

#include "engine/eng_param.h"

#include <lua.h>

/* Where a Lua function on the stack is executing. */
typedef struct slp_where {
    char chunk[1024];   /* display name: the file path for file chunks */
    int line;           /* current line (1 when unknown) */
    const char *source; /* chunk text for chunks loaded from a string, else NULL;
                           borrowed from the Lua state, valid while that function lives */
} slp_where;

/* Fills *w for the function at stack level `level` (0 = the running function,
 * 1 = its caller, as lua_getstack).  Returns 1, or 0 when there is no such
 * level (w then holds chunk "?" and line 1). */
int slp_caller(lua_State *L, int level, slp_where *w);

/* Validates the table at idx against keys and writes params (see above).
 * chunk_path is the name used in messages and, when it names a readable file,
 * the text searched for key lines.  Raises a Lua error on failure. */
void slp_check_table(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                     const char *what, const char *chunk_path, int line_hint);

/* slp_check_table for the keys of `keys` alone, taken from the table at idx,
 * which may hold others (objects, keys checked elsewhere): a copy of those
 * fields is validated, so an unknown key of the table is not an error here. */
void slp_check_fields(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                      const char *what, const char *chunk_path, int line_hint);

/* Same, with the chunk's source text given (NULL: read chunk_path). */
void slp_check_table_text(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                          const char *what, const char *chunk_path, int line_hint,
                          const char *source_text);

/* Overlay form (profile inheritance, flashspec.device/model overrides): params
 * already hold a complete set; only the keys present in the table are validated
 * (unknown keys, types, ranges, with the same messages) and written.  No
 * defaults are applied and no key is required.  present, when not NULL, gets
 * one flag per row of keys (1: the table sets that key).  Raises a Lua error
 * on failure; params and present may then be partially written. */
void slp_apply_table_text(lua_State *L, int idx, const eng_param_desc *keys, void *params,
                          unsigned char *present, const char *what, const char *chunk_path,
                          int line_hint, const char *source_text);

/* Line (1-based) of the first "key =" at or after line_hint in the file
 * chunk_path, or line_hint when the file cannot be read or has no such line. */
int slp_key_line(const char *chunk_path, int line_hint, const char *key);

/* Same search in a chunk's source text (NULL text: line_hint). */
int slp_key_line_text(const char *text, const char *key, int line_hint);

/* Lists.  A Lua list holds its values at [1], [2], ... [n]; the length
 * operator of a table with a hole ({ [1] = 2, [3] = 4 }) is any border, so a
 * reader that trusted it would take some of the values and drop the rest
 * without a word.  slp_list_gap: 0 when the table at idx is a list -- its
 * numeric keys are exactly 1..n (*n; keys that are names are ignored) --,
 * else 1 with why ("no value at [2] of 3", "a value at [0], not a list
 * position").  slp_list_len: the length of the list at idx, or raises
 * "CHUNK:LINE: WHAT: key 'KEY' is a list with a hole (...)" (LINE: the key's
 * line from line_hint on); every reader of a list value calls one of them. */
int slp_list_gap(lua_State *L, int idx, lua_Integer *n, char *why, size_t whylen);
lua_Integer slp_list_len(lua_State *L, int idx, const char *what, const char *key,
                         const char *chunk_path, int line_hint);

#endif
