/*
 * lpolicy_impl.h -- internals shared by lpolicy.c (policy states, hooks,
 * the script side) and lpolicy_objects.c (the objects hooks receive).
 */
#ifndef FS_LUA_LPOLICY_IMPL_H
#define FS_LUA_LPOLICY_IMPL_H

#include <lua.h>

#include "engine/eng_policy.h"

typedef struct lp_obj {
    void *p; /* eng_tree *, eng_draft_oracle * or eng_target_oracle *; NULL outside a hook */
    int writable; /* tree: add/remove allowed (build and provisional only, as in C) */
    int no_draft;  /* draft: the policy declared needs_draft = false */
} lp_obj;

/* A policy state's three objects, each anchored in its registry. */
typedef struct lp_objects {
    lp_obj *tree, *draft, *target;
    int tree_ref, draft_ref, target_ref;
} lp_objects;

/* Creates the objects in L (they point at nothing until a hook binds them). */
void lp_make_objects(lua_State *L, lp_objects *o);

#endif
