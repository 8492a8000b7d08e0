/*
 * plugin.c -- loading native policy plug-ins (plugin.h).
 */
#define _GNU_SOURCE /* RTLD_NOW | RTLD_LOCAL, realpath */
#include "sim/lua/plugin.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLUGIN_MAX_PARAMS 256
#define PLUGIN_MAX_PARAMS_SIZE ((size_t)1 << 20)

static int digest_file(const char *path, char out[33])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return -1;
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x6a09e667f3bcc909ULL;
    unsigned char buf[65536];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
        for (ssize_t i = 0; i < r; i++) {
            h1 = (h1 ^ buf[i]) * 0x100000001b3ULL;
            h2 = (h2 ^ buf[i]) * 0x100000001b3ULL;
        }
    close(fd);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
    return 0;
}

/* A descriptor a runtime can use: a name that is a Lua identifier, a create
 * function, a terminated parameter table of known types. */
static const char *bad_desc(const eng_policy_desc *d)
{
    if (!d->name || !d->name[0] || strlen(d->name) > 63) return "a name of 1 to 63 characters";
    if (!(isalpha((unsigned char)d->name[0]) || d->name[0] == '_'))
        return "a name that starts with a letter or '_'";
    for (const char *c = d->name; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_')) return "a name of letters, digits and '_'";
    if (!d->create) return "a create function";
    if (!d->params) return "a parameter table (a single {NULL} row when it has none)";
    if (d->params_size > PLUGIN_MAX_PARAMS_SIZE) return "a params struct of at most 1 MiB";
    int i = 0;
    for (; i < PLUGIN_MAX_PARAMS && d->params[i].name; i++) {
        const eng_param_desc *p = &d->params[i];
        if (p->type < ENG_PARAM_INT || p->type > ENG_PARAM_INT_LIST)
            return "parameter rows of known types";
        if (p->offset >= d->params_size) return "parameter offsets inside the params struct";
        if (p->type == ENG_PARAM_ENUM && !p->choices) return "choices for every enum parameter";
    }
    if (i == PLUGIN_MAX_PARAMS) return "a parameter table ended by a {NULL} row";
    return NULL;
}

int fs_plugin_load(const char *path, fs_plugin *out, const fs_plugin *loaded, int n_loaded,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "--plugin %s: %s", path, strerror(errno));
        return 66;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--plugin %s: not a regular file", path);
        return 66;
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    snprintf(out->path, sizeof out->path, "%s", real);
    if (digest_file(real, out->digest) != 0) {
        snprintf(err, errlen, "--plugin %s: cannot read it: %s", path, strerror(errno));
        return 66;
    }
    /* a path with a slash: dlopen never searches the library path for it */
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "--plugin %s: cannot load it: %s", path, e ? e : "unknown error");
        return 78;
    }
    const int32_t *abi = dlsym(h, ENG_PLUGIN_ABI_SYMBOL);
    const eng_policy_desc *d = dlsym(h, ENG_PLUGIN_DESC_SYMBOL);
    if (!abi || !d) {
        snprintf(err, errlen, "--plugin %s: not a flashspec policy plug-in (no symbol %s)", path,
                 !abi ? ENG_PLUGIN_ABI_SYMBOL : ENG_PLUGIN_DESC_SYMBOL);
        dlclose(h);
        return 78;
    }
    if (*abi != ENG_POLICY_ABI) {
        snprintf(err, errlen, "--plugin %s: built for policy ABI %d, this flashspec has ABI %d; "
                 "rebuild it against this version's libflashspec-engine", path, (int)*abi,
                 ENG_POLICY_ABI);
        dlclose(h);
        return 78;
    }
    const char *why = bad_desc(d);
    if (why) {
        snprintf(err, errlen, "--plugin %s: its %s needs %s", path, ENG_PLUGIN_DESC_SYMBOL, why);
        dlclose(h);
        return 78;
    }
    if (eng_policy_lookup(d->name) || strcmp(d->name, "lua") == 0) {
        snprintf(err, errlen, "--plugin %s: policy '%s' is already built in", path, d->name);
        dlclose(h);
        return 78;
    }
    for (int i = 0; i < n_loaded; i++)
        if (strcmp(loaded[i].desc->name, d->name) == 0) {
            snprintf(err, errlen, "--plugin %s: policy '%s' is already given by --plugin %s", path,
                     d->name, loaded[i].path);
            dlclose(h);
            return 78;
        }
    out->desc = d; /* the object stays loaded: policies point into it */
    return 0;
}
