#!/usr/bin/python3
"""A new C policy in the tree is one new file and one registration line.

usage: test_new_policy.py SOURCE_DIR

Copies the source tree, adds engine/pol_first_k.c (its params struct, table,
create function and registry row, all private to the file) and the line
ENG_POLICY(first_k) to engine/policies.def -- no header, no build file --
builds flashspec, and checks that the policy is listed with its parameters
and runs in a script with the greedy exactness check.
"""
import os
import shutil
import subprocess
import sys
import tempfile

POLICY = r'''/* pol_first_k.c -- a chain of the draft's top-1 tokens, k of them. */
#include "eng_policy.h"
#include "pol_chain.h" /* eng_chain_draft */

#include <stddef.h>
#include <stdlib.h>

typedef struct fk_params {
    int32_t k;
} fk_params;

static const eng_param_desc fk_table[] = {
    {.name = "k", .type = ENG_PARAM_INT, .offset = offsetof(fk_params, k), .min = 1, .max = 16,
     .def = 3, .doc = "tokens per chain"},
    {.name = NULL},
};

static int fk_build(void *self, eng_tree *t, eng_draft_oracle *draft, const eng_build_limits *lim)
{
    const fk_params *p = self;
    return eng_chain_draft(t, draft, p->k, ENG_UNIT_CPU, lim);
}

static void fk_destroy(void *self)
{
    free(self);
}

static const eng_policy_i fk_i = {.name = "first_k", .build = fk_build, .destroy = fk_destroy};

static int fk_create(const void *params, eng_policy *out)
{
    fk_params *s = malloc(sizeof *s);
    if (!s) return ENG_E_NOMEM;
    *s = *(const fk_params *)params;
    out->i = &fk_i;
    out->self = s;
    return ENG_OK;
}

/* its tree: k drafted tokens plus the root, always that size */
const eng_policy_desc eng_policy_first_k = {.name = "first_k",
                                            .doc = "a chain of k draft top-1 tokens",
                                            .params_size = sizeof(fk_params),
                                            .params = fk_table,
                                            .create = fk_create,
                                            .needs_draft = 1,
                                            .tree = {.rule = ENG_TREE_PLUS_ROOT,
                                                     .fixed = 1,
                                                     .param = "k"}};
'''


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    home = sys.argv[1]
    with tempfile.TemporaryDirectory() as t:
        src = os.path.join(t, "src")
        shutil.copytree(home, src, symlinks=True,
                        ignore=lambda d, names: [n for n in names
                                                 if (d == home and (n.startswith("build")
                                                                    or n in ("results", "out")))
                                                 or n in (".git", "__pycache__")])
        before = {os.path.join(dp, f): os.path.getmtime(os.path.join(dp, f))
                  for dp, _, fs in os.walk(src) for f in fs}
        open(os.path.join(src, "engine", "pol_first_k.c"), "w").write(POLICY)
        with open(os.path.join(src, "engine", "policies.def"), "a") as f:
            f.write("ENG_POLICY(first_k)\n")
        changed = [p for p, m in before.items() if os.path.getmtime(p) != m]
        expect(changed == [os.path.join(src, "engine", "policies.def")],
               f"files changed besides the registration line: {changed}")
        b = os.path.join(t, "build")
        # -O0: this build is run briefly, and compiles in a third of the time
        for cmd in (["meson", "setup", b, src, "-Dmpi=disabled", "-Dfuzz=disabled",
                     "-Doptimization=0"],
                    ["ninja", "-C", b, "sim/cli/flashspec"]):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            expect(p.returncode == 0, f"{' '.join(cmd)}: {p.stdout[-3000:]}{p.stderr[-2000:]}")
        exe = os.path.join(b, "sim", "cli", "flashspec")
        p = subprocess.run([exe, "policies", "first_k"], capture_output=True, text=True)
        expect(p.returncode == 0 and "tokens per chain" in p.stdout, p.stdout + p.stderr)
        p = subprocess.run([exe, "policies"], capture_output=True, text=True)
        expect(p.stdout.splitlines()[-1].startswith("first_k"), "listed last (registration "
                                                                 "order)")
        script = os.path.join(t, "s.lua")
        open(script, "w").write(
            'local fs = flashspec\n'
            'local r = fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",'
            ' draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace '
            '"traces/data/synth-small.h5", policy = fs.policy.first_k { tree_nodes = 5 },'
            ' max_new_tokens = 16 }\n'
            'print(r.policy, r.policy_params, r.tree_nodes, r.tokens)\n')
        p = subprocess.run([exe, "run", script, "-q"], capture_output=True, text=True,
                           env=dict(os.environ, FLASHSPEC_HOME=src), timeout=120)
        # the descriptor's tree size: tree_nodes = 5 sets k = 4, and the
        # results' tree_nodes column reads it back
        expect(p.returncode == 0 and p.stdout.split()[:3] == ["first_k", "k=4", "5.0"],
               f"run: {p.returncode} {p.stdout!r} {p.stderr!r}")
    print("new_policy: one file and one line in engine/policies.def give a listed, runnable "
          "policy")


if __name__ == "__main__":
    main()
