/*
 * test_point_id.c -- the identity of a script's point (sim/sweep/
 * sim_point_id.h): the same values give the same id; every part of the
 * point enters it (policy name and values, each plug-in digest, each
 * profile's name and values, the draft's values only with a draft, the trace
 * checksum, the point keys, a non-zero prompt offset); the variants, the
 * bracket and synth_tokens enter the id but not the seed id; and the id of
 * one fixed point, which every stored result's id depends on.
 */
#include "sim/sweep/sim_point_id.h"

#include <stddef.h>
#include <string.h>

#include "../../check.h"

typedef struct tparams {
    int32_t k;
} tparams;

static const eng_param_desc tkeys[] = {
    {"k", ENG_PARAM_INT, offsetof(tparams, k), 1, 64, 4, NULL, 0, 0, NULL, NULL, 0, "k"},
    {NULL, 0, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL}};

static const eng_policy_desc tpolicy = {.name = "tpol", .params = tkeys,
                                        .params_size = sizeof(tparams)};
static const eng_policy_desc tpolicy2 = {.name = "tpol2", .params = tkeys,
                                         .params_size = sizeof(tparams)};

typedef struct fixture {
    tparams pol, point;
    sim_device dev, variants[2];
    sim_model tgt, drf;
    const char *digests[1], *vnames[2];
    uint64_t bracket[2];
    sim_point_ident x;
} fixture;

/* Moves the first number of a key table off its default. */
static void bump(const eng_param_desc *keys, void *params)
{
    for (const eng_param_desc *d = keys; d->name; d++) {
        char *f = (char *)params + d->offset;
        if (d->type == ENG_PARAM_DOUBLE) {
            double v;
            memcpy(&v, f, sizeof v);
            v = v * 2 + 1;
            memcpy(f, &v, sizeof v);
            return;
        }
        if (d->type == ENG_PARAM_INT) {
            int32_t v;
            memcpy(&v, f, sizeof v);
            v += 1;
            memcpy(f, &v, sizeof v);
            return;
        }
    }
}

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->pol.k = 8;
    f->point.k = 2;
    eng_params_defaults(sim_device_keys(), &f->dev);
    eng_params_defaults(sim_device_keys(), &f->variants[0]);
    eng_params_defaults(sim_device_keys(), &f->variants[1]);
    bump(sim_device_keys(), &f->variants[1]);
    eng_params_defaults(sim_model_keys(), &f->tgt);
    eng_params_defaults(sim_model_keys(), &f->drf);
    f->digests[0] = "0123456789abcdef0123456789abcdef";
    f->vnames[0] = "slow";
    f->vnames[1] = "fast";
    f->bracket[0] = 11;
    f->bracket[1] = 12;
    f->x = (sim_point_ident){
        .policy = &tpolicy, .policy_params = &f->pol,
        .plugin_digests = f->digests, .n_plugin_digests = 0,
        .device = "phone", .dev = &f->dev, .target = "big", .tgt = &f->tgt,
        .draft = "small", .drf = &f->drf, .trace_checksum = 0x1234,
        .point_keys = tkeys, .point_values = &f->point, .prompt_offset = 0,
        .n_variants = 0, .variant_names = f->vnames, .variants = f->variants,
        .n_bracket = 0, .bracket_checksums = f->bracket, .synth_tokens = 0,
    };
}

static sim_id base_id, base_seed;

/* 1 when f's id differs from the base point's; *same_seed: whether its seed
 * id is the base's. */
static int differs(const fixture *f, int *same_seed)
{
    sim_id seed;
    sim_id id = sim_point_ident_hash(&f->x, &seed);
    if (same_seed) *same_seed = sim_id_equal(seed, base_seed);
    return !sim_id_equal(id, base_id);
}

static void test_parts(void)
{
    fixture f;
    fixture_init(&f);
    base_id = sim_point_ident_hash(&f.x, &base_seed);
    CHECK(sim_id_equal(base_id, base_seed)); /* nothing past the seed id */
    CHECK(!differs(&f, NULL));               /* the same values: the same id */
    int same;
#define CHANGES(stmt)                                                                              \
    do {                                                                                           \
        fixture_init(&f);                                                                          \
        stmt;                                                                                      \
        CHECK(differs(&f, &same));                                                                 \
        CHECK(!same);                                                                              \
    } while (0)
    CHANGES(f.x.policy = &tpolicy2);
    CHANGES(f.pol.k = 9);
    CHANGES(f.x.n_plugin_digests = 1);
    CHANGES(f.x.device = "phone2");
    CHANGES(bump(sim_device_keys(), &f.dev));
    CHANGES(f.x.target = "big2");
    CHANGES(bump(sim_model_keys(), &f.tgt));
    CHANGES(f.x.draft = "small2");
    CHANGES(bump(sim_model_keys(), &f.drf));
    CHANGES(f.x.trace_checksum = 0x1235);
    CHANGES(f.point.k = 3);
    CHANGES(f.x.prompt_offset = 1);
#undef CHANGES
    /* without a draft its values do not count (nor does a NULL draft) */
    fixture_init(&f);
    f.x.draft = "none";
    sim_id none_seed, none_id = sim_point_ident_hash(&f.x, &none_seed);
    bump(sim_model_keys(), &f.drf);
    sim_id s2, i2 = sim_point_ident_hash(&f.x, &s2);
    CHECK(sim_id_equal(none_id, i2) && sim_id_equal(none_seed, s2));
    f.x.drf = NULL;
    i2 = sim_point_ident_hash(&f.x, &s2);
    CHECK(sim_id_equal(none_id, i2));
    fixture_init(&f);
    f.x.drf = NULL; /* a name with no values: the name alone */
    CHECK(differs(&f, NULL));
    /* the variants (each name and its values), the bracket, synth_tokens:
     * the id, never the seed id */
#define NAMES(stmt)                                                                                \
    do {                                                                                           \
        fixture_init(&f);                                                                          \
        stmt;                                                                                      \
        CHECK(differs(&f, &same));                                                                 \
        CHECK(same);                                                                               \
    } while (0)
    NAMES(f.x.n_variants = 1);
    NAMES(f.x.n_bracket = 1);
    NAMES(f.x.synth_tokens = 1);
    sim_id two_var, one_var, seed;
    fixture_init(&f);
    f.x.n_variants = 1;
    one_var = sim_point_ident_hash(&f.x, &seed);
    f.x.n_variants = 2;
    two_var = sim_point_ident_hash(&f.x, &seed);
    CHECK(!sim_id_equal(one_var, two_var));
    f.vnames[0] = "slower";
    CHECK(!sim_id_equal(sim_point_ident_hash(&f.x, &seed), two_var));
    f.vnames[0] = "slow";
    bump(sim_device_keys(), &f.variants[0]);
    CHECK(!sim_id_equal(sim_point_ident_hash(&f.x, &seed), two_var));
    fixture_init(&f);
    f.x.n_bracket = 2;
    sim_id b2 = sim_point_ident_hash(&f.x, &seed);
    f.bracket[1] = 13;
    CHECK(!sim_id_equal(sim_point_ident_hash(&f.x, &seed), b2));
#undef NAMES
}

/* The id of one fixed point: every stored result's id is made this way, so
 * a change here changes the id of every point a results file holds. */
static void test_fixed(void)
{
    fixture f;
    fixture_init(&f);
    f.x.n_plugin_digests = 1;
    f.x.prompt_offset = 3;
    f.x.n_variants = 2;
    f.x.n_bracket = 2;
    f.x.synth_tokens = 1;
    sim_id seed, id = sim_point_ident_hash(&f.x, &seed);
    char hex[33], shex[33];
    sim_id_hex(id, hex);
    sim_id_hex(seed, shex);
    CHECK(strcmp(hex, "068ada87078d2597cbffa37af5f0f341") == 0);
    CHECK(strcmp(shex, "554637fa71ad8a3cfa2df5879bd2906e") == 0);
}

/* The point's options: their names in order, defaults and ranges, as the
 * script surface documents them (a key's default or range changed moves
 * which points a script may ask for and what an absent key means). */
static void test_point_keys(void)
{
    static const char *const names[] = {"dram_fraction", "max_new_tokens", "seed", "prompts",
                                        "accept", "top_p", "temperature", "runtime", NULL};
    static const double defs[] = {0, 128, 1, 0, 0, 0.9, 1.0, 0};
    const eng_param_desc *k = sim_point_keys();
    int i = 0;
    for (; k[i].name && names[i]; i++) {
        CHECK(strcmp(k[i].name, names[i]) == 0);
        CHECK(k[i].def == defs[i]);
    }
    CHECK(k[i].name == NULL && names[i] == NULL);
    CHECK(k[0].min == 0 && k[0].max == 1);
    CHECK(k[1].min == 1 && k[2].min == 0 && k[5].min > 0 && k[5].max == 1);
    CHECK(strcmp(k[4].choices[2], "sampling") == 0 && k[4].choices[3] == NULL);
    CHECK(strcmp(k[7].choices[2], "speculative") == 0);
    const eng_param_desc *x = sim_point_keys_ext();
    CHECK(strcmp(x[0].name, "prompt_offset") == 0 && x[0].def == 0);
    CHECK(strcmp(x[1].name, "synth_tokens") == 0 && strcmp(x[1].choices[1], "drawn") == 0);
    CHECK(x[2].name == NULL);
}

int main(void)
{
    test_point_keys();
    test_parts();
    test_fixed();
    return check_done("test_point_id");
}
