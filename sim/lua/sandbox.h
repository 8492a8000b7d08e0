/*
 * sandbox.h -- Lua states for experiment scripts.
 *
 * A sandboxed state (the default) opens only base, string, table, math, utf8 and
 * coroutine, plus os.clock/os.time/os.date/os.difftime.  It has no io, no
 * os.execute/remove/rename/exit/getenv, no package/require, no debug, no dofile or
 * loadfile, and `load` accepts text chunks only (never bytecode).  File access
 * happens solely through the flashspec API.  An unsafe state (--unsafe) opens the
 * full standard library.
 *
 * Limits: the state's allocator refuses to grow past mem_limit_bytes, so a
 * runaway script fails with "not enough memory" instead of exhausting the host.
 */
#ifndef FS_SANDBOX_H
#define FS_SANDBOX_H

#include <lua.h>
#include <stddef.h>

typedef struct fs_lua_limits {
    size_t mem_limit_bytes; /* 0 = unlimited */
    size_t mem_used;        /* maintained by the allocator */
} fs_lua_limits;

/* Creates a state; lim is borrowed and must outlive it.  NULL on failure. */
lua_State *fs_sandbox_new(int unsafe, fs_lua_limits *lim);

#endif
