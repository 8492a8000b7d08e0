/*
 * plugin.c -- loading native policy plug-ins (plugin.h).
 */
#define _GNU_SOURCE /* RTLD_NOW | RTLD_LOCAL, realpath */
#include "sim/cli/plugin.h"

#include "sim/sim_status.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#define PLUGIN_MAX_PARAMS 256
#define PLUGIN_MAX_PARAMS_SIZE ((size_t)1 << 20)

/* The file's two digests in one read: out, two 64-bit FNV-1a lanes (what
 * enters the point ids, as before), and sha256, its SHA-256 (OpenSSL's; what
 * run.json records, so that a rebuilt plug-in is told apart by a digest
 * anyone can recompute: sha256sum FILE).  0, or -1 with errno. */
static int digest_file(const char *path, char out[33], char sha256[65])
{
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(ctx);
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x6a09e667f3bcc909ULL;
    unsigned char buf[65536];
    ssize_t r;
    int bad = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR)) {
        if (r < 0) continue;
        bad |= EVP_DigestUpdate(ctx, buf, (size_t)r) != 1;
        for (ssize_t i = 0; i < r; i++) {
            h1 = (h1 ^ buf[i]) * 0x100000001b3ULL;
            h2 = (h2 ^ buf[i]) * 0x100000001b3ULL;
        }
    }
    int e = r < 0 ? errno : 0;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    bad |= EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32;
    EVP_MD_CTX_free(ctx);
    close(fd);
    if (e || bad) {
        errno = e ? e : EIO;
        return -1;
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
    for (unsigned int i = 0; i < mdlen; i++)
        snprintf(sha256 + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* The built-in policy (or `lua`) that name is without regard to case, or NULL. */
static const char *builtin_name(const char *name)
{
    int32_t n = 0;
    const eng_policy_desc *const *reg = eng_policy_registry(&n);
    for (int32_t i = 0; i < n; i++)
        if (strcasecmp(reg[i]->name, name) == 0) return reg[i]->name;
    return strcasecmp(name, "lua") == 0 ? "lua" : NULL;
}

/* 1 when s is a name of letters, digits and '_' that starts with a letter or
 * '_', of 1 to 63 characters. */
static int identifier(const char *s)
{
    if (!s || !s[0] || strlen(s) > 63 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (const char *c = s; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_')) return 0;
    return 1;
}

/* 1 when s holds a control character (below 0x20, or DEL): such a value would
 * break the one-line labels and listings it is printed in. */
static int has_control(const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f) return 1;
    return 0;
}

/* 1 when [off, off + size) lies inside a struct of n bytes and off is a
 * multiple of align. */
static int inside(size_t off, size_t size, size_t align, size_t n)
{
    return size <= n && off <= n - size && off % align == 0;
}

/* What row p (of a params struct of n bytes) needs and lacks, written into
 * why; 0 when it is usable.  Every field the runtime will write or read is
 * checked: the field and a list's count inside the struct, a string's and a
 * list's capacity, the range and the default against it, an enum's choices. */
static int bad_row(const eng_param_desc *p, size_t n, char *why, size_t len)
{
#define BAD(...) return snprintf(why, len, __VA_ARGS__), 1
    if (p->type < ENG_PARAM_INT || p->type > ENG_PARAM_INT_LIST)
        BAD("a known type for parameter '%s'", p->name);
    int list = p->type == ENG_PARAM_DOUBLE_LIST || p->type == ENG_PARAM_INT_LIST;
    size_t elem = p->type == ENG_PARAM_DOUBLE || p->type == ENG_PARAM_DOUBLE_LIST ? sizeof(double)
                  : p->type == ENG_PARAM_STRING                                   ? 1
                                                                                  : sizeof(int32_t);
    size_t count = 1;
    if (p->type == ENG_PARAM_STRING || list) {
        if (p->cap < (p->type == ENG_PARAM_STRING ? 2 : 1))
            BAD("a capacity (cap) of %s for parameter '%s' (it has %d)",
                p->type == ENG_PARAM_STRING ? "at least 2 bytes" : "at least 1 element", p->name,
                (int)p->cap);
        count = (size_t)p->cap;
    }
    if (count > n / elem || !inside(p->offset, count * elem, elem, n))
        BAD("parameter '%s' inside the params struct (offset %zu, %zu bytes, struct %zu bytes)",
            p->name, p->offset, count * elem, n);
    if (list && !inside(p->count_offset, sizeof(int32_t), sizeof(int32_t), n))
        BAD("the element count of parameter '%s' inside the params struct (count_offset %zu)",
            p->name, p->count_offset);
    if (p->type == ENG_PARAM_STRING) {
        if (p->def_str && strlen(p->def_str) >= (size_t)p->cap)
            BAD("a default of parameter '%s' shorter than its capacity %d", p->name, (int)p->cap);
        if (p->def_str && has_control(p->def_str))
            BAD("a default of parameter '%s' without control characters (newline, ESC, ...)",
                p->name);
        return 0;
    }
    if (p->min != p->min || p->max != p->max || p->min > p->max)
        BAD("a range with min <= max for parameter '%s' (got %g..%g)", p->name, p->min, p->max);
    /* integers are stored as int32_t: the range, hence every accepted value and
     * default, must fit one, and defaults must be whole */
    int whole =
        p->type == ENG_PARAM_INT || p->type == ENG_PARAM_BOOL || p->type == ENG_PARAM_INT_LIST;
    if (whole && (p->min < INT32_MIN || p->max > INT32_MAX))
        BAD("a range inside the 32-bit integers for integer parameter '%s' (got %g..%g)", p->name,
            p->min, p->max);
    if (whole && p->type != ENG_PARAM_INT_LIST && p->def == p->def && p->def != floor(p->def))
        BAD("a whole default for integer parameter '%s' (got %g)", p->name, p->def);
    if (p->type == ENG_PARAM_INT_LIST)
        for (int32_t i = 0; i < p->def_count && i < p->cap && p->def_list; i++)
            if (p->def_list[i] != floor(p->def_list[i]))
                BAD("whole default values of integer list parameter '%s'", p->name);
    if (p->type == ENG_PARAM_ENUM) {
        int nc = 0;
        while (p->choices && nc < 64 && p->choices[nc]) {
            if (!p->choices[nc][0]) BAD("non-empty choices for parameter '%s'", p->name);
            if (has_control(p->choices[nc]))
                BAD("choices without control characters (newline, ESC, ...) for parameter '%s' "
                    "(choice %d)", p->name, nc + 1);
            nc++;
        }
        if (!p->choices || nc == 0 || nc == 64)
            BAD("1 to 63 choices ended by NULL for enum parameter '%s'", p->name);
        if (p->def == p->def && !(p->def >= 0 && p->def < nc && p->def == (int)p->def))
            BAD("a default of parameter '%s' that is one of its %d choices (got %g)", p->name, nc,
                p->def);
        return 0;
    }
    if (list) {
        if (p->def_count < 0 || p->def_count > p->cap || (p->def_count > 0 && !p->def_list))
            BAD("0 to cap default values of list parameter '%s' (def_count %d, cap %d)", p->name,
                (int)p->def_count, (int)p->cap);
        for (int32_t i = 0; i < p->def_count; i++)
            if (!(p->def_list[i] >= p->min && p->def_list[i] <= p->max))
                BAD("default values of list parameter '%s' inside its range %g..%g", p->name,
                    p->min, p->max);
        return 0;
    }
    if (p->def == p->def && !(p->def >= p->min && p->def <= p->max))
        BAD("a default of parameter '%s' inside its range %g..%g (got %g)", p->name, p->min, p->max,
            p->def);
    return 0;
#undef BAD
}

/* The bytes row p occupies in the params struct (its value; a list's count
 * is a second span). */
static void row_span(const eng_param_desc *p, size_t *off, size_t *len)
{
    int list = p->type == ENG_PARAM_DOUBLE_LIST || p->type == ENG_PARAM_INT_LIST;
    size_t elem = p->type == ENG_PARAM_DOUBLE || p->type == ENG_PARAM_DOUBLE_LIST ? sizeof(double)
                  : p->type == ENG_PARAM_STRING                                   ? 1
                                                                                  : sizeof(int32_t);
    *off = p->offset;
    *len = elem * (p->type == ENG_PARAM_STRING || list ? (size_t)p->cap : 1);
}

static int spans_overlap(size_t a, size_t an, size_t b, size_t bn)
{
    return a < b + bn && b < a + an;
}

/* 1 when two rows (or a row and a list count) share bytes: a default written
 * for one would change another -- a list's count among them, which then
 * overstates the list. */
static int rows_overlap(const eng_param_desc *rows, int n, char *why, size_t len)
{
    for (int i = 0; i < n; i++) {
        size_t ai, an;
        row_span(&rows[i], &ai, &an);
        int il = rows[i].type == ENG_PARAM_DOUBLE_LIST || rows[i].type == ENG_PARAM_INT_LIST;
        if (il && spans_overlap(ai, an, rows[i].count_offset, sizeof(int32_t)))
            return snprintf(why, len,
                            "the element count of parameter '%s' apart from its "
                            "elements",
                            rows[i].name),
                   1;
        for (int j = 0; j < i; j++) {
            size_t bj, bn;
            row_span(&rows[j], &bj, &bn);
            int jl = rows[j].type == ENG_PARAM_DOUBLE_LIST || rows[j].type == ENG_PARAM_INT_LIST;
            int clash = spans_overlap(ai, an, bj, bn) ||
                        (il && spans_overlap(rows[i].count_offset, sizeof(int32_t), bj, bn)) ||
                        (jl && spans_overlap(ai, an, rows[j].count_offset, sizeof(int32_t))) ||
                        (il && jl && rows[i].count_offset == rows[j].count_offset);
            if (clash)
                return snprintf(why, len,
                                "parameters '%s' and '%s' in separate bytes of the "
                                "params struct",
                                rows[j].name, rows[i].name),
                       1;
        }
    }
    return 0;
}

/* What the ABI 2 fields of d need and lack, written into why; 0 when they
 * are usable: observes_outcome 0 or 1, a known tree rule, and for a rule
 * with a parameter that parameter (and the flag's alternative) a row of the
 * type the rule reads, the flag a bool row. */
static int bad_tree(const eng_policy_desc *d, char *why, size_t len)
{
    if (d->observes_outcome != 0 && d->observes_outcome != 1)
        return snprintf(why, len, "observes_outcome 0 or 1 (got %d)", (int)d->observes_outcome), 1;
    const eng_tree_knob *t = &d->tree;
    if (t->rule < ENG_TREE_UNSTATED || t->rule > ENG_TREE_WIDTHS)
        return snprintf(why, len, "a known tree rule (got %d)", (int)t->rule), 1;
    if (t->fixed != 0 && t->fixed != 1)
        return snprintf(why, len, "tree.fixed 0 or 1 (got %d)", (int)t->fixed), 1;
    if (t->rule == ENG_TREE_UNSTATED || t->rule == ENG_TREE_ONE_ROW) return 0;
    const char *type = t->rule == ENG_TREE_WIDTHS ? "an integer-list" : "an integer";
    if (!t->param || !eng_tree_param_flag(d, 1))
        return snprintf(why, len, "a tree parameter (tree.param) that names %s parameter",
                        type),
               1;
    if (!t->unless_off) return 0;
    const eng_param_desc *f = eng_params_find(d->params, t->unless_off);
    if (!f || f->type != ENG_PARAM_BOOL)
        return snprintf(why, len, "a tree flag (tree.unless_off) that names a bool parameter"),
               1;
    if (!t->off_param || !eng_tree_param_flag(d, 0))
        return snprintf(why, len, "a tree parameter (tree.off_param) that names %s parameter",
                        type),
               1;
    return 0;
}

/* A descriptor a runtime can use: a name that is a Lua identifier, a create
 * function, a terminated parameter table of known types whose every row is
 * usable (bad_row) and whose names are distinct identifiers.  0 when it is;
 * otherwise why holds what it needs. */
int fs_plugin_check_desc(const eng_policy_desc *d, char *why, size_t len)
{
    if (!d->name || !d->name[0] || strlen(d->name) > 63)
        return snprintf(why, len, "a name of 1 to 63 characters"), 1;
    if (!(isalpha((unsigned char)d->name[0]) || d->name[0] == '_'))
        return snprintf(why, len, "a name that starts with a letter or '_'"), 1;
    if (!identifier(d->name)) return snprintf(why, len, "a name of letters, digits and '_'"), 1;
    if (!d->create) return snprintf(why, len, "a create function"), 1;
    if (!d->params)
        return snprintf(why, len, "a parameter table (a single {NULL} row when it has none)"), 1;
    if (d->params_size > PLUGIN_MAX_PARAMS_SIZE)
        return snprintf(why, len, "a params struct of at most 1 MiB"), 1;
    int i = 0;
    for (; i < PLUGIN_MAX_PARAMS && d->params[i].name; i++) {
        const eng_param_desc *p = &d->params[i];
        if (!identifier(p->name))
            return snprintf(why, len,
                            "parameter names of letters, digits and '_' (row %d: '%.40s')", i,
                            p->name),
                   1;
        for (int j = 0; j < i; j++)
            if (!strcmp(d->params[j].name, p->name))
                return snprintf(why, len, "distinct parameter names ('%s' twice)", p->name), 1;
        if (bad_row(p, d->params_size, why, len)) return 1;
    }
    if (i == PLUGIN_MAX_PARAMS)
        return snprintf(why, len, "a parameter table ended by a {NULL} row"), 1;
    if (rows_overlap(d->params, i, why, len)) return 1;
    return bad_tree(d, why, len);
}

const eng_policy_desc *fs_plugin_adopt(int32_t abi, const void *sym)
{
    if (!sym || abi < ENG_POLICY_ABI_MIN || abi > ENG_POLICY_ABI) return NULL;
    if (abi == ENG_POLICY_ABI) return sym;
    /* ABI 1: this layout up to needs_draft, the fields after it zero */
    eng_policy_desc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    memcpy(d, sym, offsetof(eng_policy_desc, needs_draft) + sizeof d->needs_draft);
    return d; /* lives as long as the loaded object: until exit */
}

int fs_plugin_load(const char *path, fs_plugin *out, const fs_plugin *loaded, int n_loaded,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "--plugin %s: %s", path, strerror(errno));
        return SIM_MISSING;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "--plugin %s: not a regular file", path);
        return SIM_MISSING;
    }
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    snprintf(out->path, sizeof out->path, "%s", real);
    if (digest_file(real, out->digest, out->sha256) != 0) {
        snprintf(err, errlen, "--plugin %s: cannot read it: %s", path, strerror(errno));
        return SIM_MISSING;
    }
    /* a path with a slash: dlopen never searches the library path for it */
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errlen, "--plugin %s: cannot load it: %s", path, e ? e : "unknown error");
        return SIM_CONFIG;
    }
    const int32_t *abi = dlsym(h, ENG_PLUGIN_ABI_SYMBOL);
    const eng_policy_desc *d = dlsym(h, ENG_PLUGIN_DESC_SYMBOL);
    if (!abi || !d) {
        snprintf(err, errlen, "--plugin %s: not a flashspec policy plug-in (no symbol %s)", path,
                 !abi ? ENG_PLUGIN_ABI_SYMBOL : ENG_PLUGIN_DESC_SYMBOL);
        dlclose(h);
        return SIM_CONFIG;
    }
    if (*abi < ENG_POLICY_ABI_MIN || *abi > ENG_POLICY_ABI) {
        snprintf(err, errlen,
                 "--plugin %s: built for policy ABI %d, this flashspec has ABI %d (and loads "
                 "%d to %d); rebuild it against this version's libflashspec-engine",
                 path, (int)*abi, ENG_POLICY_ABI, ENG_POLICY_ABI_MIN, ENG_POLICY_ABI);
        dlclose(h);
        return SIM_CONFIG;
    }
    const eng_policy_desc *sym = d;
    d = fs_plugin_adopt(*abi, d);
    if (!d) {
        snprintf(err, errlen, "--plugin %s: out of memory", path);
        dlclose(h);
        return SIM_NOMEM;
    }
    /* an ABI 1 descriptor's copy (fs_plugin_adopt), freed when refused */
    eng_policy_desc *copy = d != sym ? (eng_policy_desc *)d : NULL;
    char why[256];
    if (fs_plugin_check_desc(d, why, sizeof why)) {
        snprintf(err, errlen, "--plugin %s: its %s needs %s", path, ENG_PLUGIN_DESC_SYMBOL, why);
        free(copy);
        dlclose(h);
        return SIM_CONFIG;
    }
    /* rows name their policy: names compared without regard to case, as a
     * reader does (Flash_AR would pass for flash_ar) */
    const char *built_in = builtin_name(d->name);
    if (built_in) {
        snprintf(err, errlen, "--plugin %s: policy '%s' is already built in%s%s%s", path, d->name,
                 strcmp(built_in, d->name) ? " (as '" : "",
                 strcmp(built_in, d->name) ? built_in : "",
                 strcmp(built_in, d->name) ? "'; names are compared without regard to case)" : "");
        free(copy);
        dlclose(h);
        return SIM_CONFIG;
    }
    for (int i = 0; i < n_loaded; i++)
        if (strcasecmp(loaded[i].desc->name, d->name) == 0) {
            snprintf(err, errlen, "--plugin %s: policy '%s' is already given by --plugin %s", path,
                     d->name, loaded[i].path);
            free(copy);
            dlclose(h);
            return SIM_CONFIG;
        }
    out->desc = d; /* the object stays loaded: policies point into it */
    return 0;
}
