/*
 * fuzz_plugin.c -- fuzz target: any bytes as a native plug-in's policy
 * descriptor (eng_policy_desc and its parameter table), through the check
 * `--plugin` makes before anything uses a descriptor (fs_plugin_check_desc).
 *
 * Decoding (every byte string is some descriptor): byte 0 picks the policy
 * name (a valid one, or up to 8 raw bytes); bytes 1-2 the params struct size
 * (0..4095); byte 3 the row count (0..15, or 300 rows without the NULL end
 * when it is 255); then 32 bytes per row: type (any byte, so unknown types
 * too), offset, capacity (signed), count offset, min, max and default (raw
 * doubles: NaN, infinities and subnormals included), a name (4 raw bytes or
 * one of a few fixed names, duplicates included), 0..4 choices from a pool
 * (an empty one included), a string default of 0..40 bytes, 0..8 list
 * defaults.  Every pointer a row holds points at memory of the size it
 * claims, as a compiled descriptor's would.  Then 6 bytes for the ABI 2
 * fields: observes_outcome, tree.rule (-1..6), tree.fixed, and the three
 * tree names (NULL, a row's name, or one no row has); an input that ends
 * before them leaves them zero, as an ABI 1 plug-in's are.
 *
 * Contract under test: a descriptor the check accepts is used as the runtime
 * uses it -- defaults written into a params struct of exactly params_size
 * bytes (heap, so ASan sees any write past it), the struct hashed into a
 * point id and rendered as the policy_params label, every name looked up,
 * its tree size read (the parameter the rule names, of the type it reads) --
 * without touching memory outside what it declared; a descriptor it refuses
 * gets a non-empty reason.  Never a crash.
 */
#include "sim/lua/api_impl.h"
#include "sim/cli/plugin.h"
#include "sim/sweep/sim_sweep_exec.h"
#include "sim/sweep/sim_sweep_store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_ROWS_MAX 300
#define FZ_ROW_BYTES 32

typedef struct rd {
    const uint8_t *p;
    size_t n, at;
} rd;

static uint64_t take(rd *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v |= (uint64_t)(r->at < r->n ? r->p[r->at++] : 0) << (8 * i);
    return v;
}

static double take_double(rd *r)
{
    uint64_t b = take(r, 8);
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static int dummy_create(const void *params, eng_policy *out)
{
    (void)params, (void)out;
    return ENG_E_ARG;
}

static const char *const fixed_names[] = {"k", "unit", "theta", "k", "", "9x", "a_b", "n_max"};
static const char *const choice_pool[] = {"cpu", "npu", "", "x", "long_choice_name"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r = {data, size, 0};
    static char name[16], row_names[FZ_ROWS_MAX][8], strs[FZ_ROWS_MAX][48];
    static const char *choices[FZ_ROWS_MAX][6];
    static double lists[FZ_ROWS_MAX][8];
    static eng_param_desc rows[FZ_ROWS_MAX + 1];
    memset(rows, 0, sizeof rows);
    int pick = (int)take(&r, 1);
    if (pick < 128) {
        strcpy(name, "fuzzed");
    } else {
        for (int i = 0; i < 8; i++) name[i] = (char)take(&r, 1);
        name[8] = 0;
    }
    size_t params_size = (size_t)take(&r, 2) % 4096;
    int nr = (int)take(&r, 1);
    int unterminated = nr == 255;
    nr = unterminated ? FZ_ROWS_MAX : nr % 16;
    for (int i = 0; i < nr; i++) {
        eng_param_desc *d = &rows[i];
        d->type = (eng_param_type)(int8_t)take(&r, 1);
        d->offset = (size_t)take(&r, 2);
        d->cap = (int32_t)(int16_t)take(&r, 2);
        d->count_offset = (size_t)take(&r, 2);
        d->min = take_double(&r);
        d->max = take_double(&r);
        d->def = take_double(&r);
        int nm = (int)take(&r, 1);
        if (nm < 200) {
            snprintf(row_names[i], sizeof row_names[i], "%s", fixed_names[nm % 8]);
        } else {
            for (int j = 0; j < 4; j++) row_names[i][j] = (char)take(&r, 1);
            row_names[i][4] = 0;
        }
        d->name = row_names[i];
        int nc = (int)take(&r, 1);
        if (nc % 6 != 5) { /* 5: no choices array at all */
            for (int j = 0; j < nc % 5; j++) choices[i][j] = choice_pool[(nc / 5 + j) % 5];
            choices[i][nc % 5] = NULL;
            d->choices = choices[i];
        }
        int sl = (int)take(&r, 1);
        if (sl < 200) {
            memset(strs[i], 'a', (size_t)(sl % 41));
            strs[i][sl % 41] = 0;
            d->def_str = strs[i];
        }
        int dc = (int)take(&r, 1);
        d->def_count = (int32_t)(dc % 9) - (dc >= 250); /* -1 now and then */
        for (int j = 0; j < 8; j++) lists[i][j] = (double)(int8_t)take(&r, 1);
        d->def_list = dc % 2 ? lists[i] : NULL;
    }
    if (unterminated) /* every row named: no NULL end within the limit */
        for (int i = 0; i < FZ_ROWS_MAX; i++)
            if (!rows[i].name) rows[i].name = "z";
    rows[nr].name = unterminated ? "z" : NULL;
    eng_policy_desc desc = {.name = name, .doc = "fuzzed descriptor", .params_size = params_size,
                            .params = rows, .create = dummy_create};
    /* the ABI 2 fields (zero past the input's end) */
    desc.observes_outcome = (int32_t)(take(&r, 1) % 3);
    desc.tree.rule = (int32_t)(take(&r, 1) % 8) - 1;
    desc.tree.fixed = (int32_t)(take(&r, 1) % 3);
    const char **tree_names[3] = {&desc.tree.param, &desc.tree.unless_off, &desc.tree.off_param};
    for (int i = 0; i < 3; i++) {
        int b = (int)take(&r, 1);
        *tree_names[i] = b == 0 ? NULL : b == 1 ? "no_row" : rows[(b - 2) % (nr + 1)].name;
    }
    char why[512] = "";
    if (fs_plugin_check_desc(&desc, why, sizeof why)) {
        if (!why[0]) abort();
        return 0;
    }
    /* accepted: used as the runtime uses it */
    unsigned char *params = malloc(params_size ? params_size : 1);
    if (!params) return 0;
    eng_params_defaults(desc.params, params);
    sim_id_hasher h;
    sim_id_hasher_init(&h);
    sim_id_hasher_params(&h, "policy", desc.params, params);
    (void)sim_id_hasher_final(&h);
    char label[256];
    sim_out_params_label(desc.params, params, label, sizeof label);
    for (const eng_param_desc *d = desc.params; d->name; d++)
        if (eng_params_find(desc.params, d->name) == NULL) abort();
    const eng_param_desc *tp = eng_tree_param(&desc, params);
    if (tp && tp->type != (desc.tree.rule == ENG_TREE_WIDTHS ? ENG_PARAM_INT_LIST : ENG_PARAM_INT))
        abort();
    (void)eng_tree_nodes(&desc, params);
    (void)sim_sweep_tree_cap(&desc, params);
    free(params);
    return 0;
}
