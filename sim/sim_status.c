/*
 * sim_status.c -- status codes to exit codes and names (sim_status.h).
 */
#include "sim/sim_status.h"

#include "traces/trc.h"

#include <stddef.h>

static const struct {
    int code;
    const char *name;
} names[] = {
    {SIM_OK, "ok"},
    {SIM_NOMEM, "nomem"},
    {SIM_INTERNAL, "internal"},
    {SIM_MISMATCH, "mismatch"},
    {SIM_USAGE, "usage"},
    {SIM_DATA, "data"},
    {SIM_MISSING, "missing"},
    {SIM_CANTCREATE, "cantcreate"},
    {SIM_CONFIG, "config"},
    {SIM_INTERRUPTED, "interrupted"},
    {SIM_INTERNAL_DES_FULL, "internal.des_full"},
    {SIM_INTERNAL_DES_PAST, "internal.des_past"},
    {SIM_INTERNAL_DES_STATE, "internal.des_state"},
    {SIM_INTERNAL_DES_EMPTY, "internal.des_empty"},
    {SIM_INTERNAL_DES_LIMIT, "internal.des_limit"},
    {SIM_INTERNAL_ARG, "internal.arg"},
    {SIM_CONFIG_NOFIT, "config.nofit"},
    {SIM_CONFIG_INVALID, "config.invalid"},
    {SIM_CONFIG_NAME, "config.name"},
    {SIM_CONFIG_RANKS, "config.ranks"},
    {SIM_CONFIG_ARG, "config.arg"},
    {SIM_DATA_FORMAT, "data.format"},
    {SIM_DATA_SCHEMA, "data.schema"},
    {SIM_DATA_NOCONV, "data.noconv"},
};

const char *sim_status_name(int status)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == status) return names[i].name;
    return "unknown";
}

int sim_status_exit(int status)
{
    if (status < 0 || status >> 8 > 0xff) return FS_EXIT_SOFTWARE;
    switch (sim_status_primary(status)) {
    case SIM_OK:
        return status == SIM_OK ? FS_EXIT_OK : FS_EXIT_SOFTWARE;
    case SIM_USAGE:
        return FS_EXIT_USAGE;
    case SIM_DATA:
        return FS_EXIT_DATA;
    case SIM_MISSING:
        return FS_EXIT_NOINPUT;
    case SIM_CANTCREATE:
        return FS_EXIT_CANTCREAT;
    case SIM_CONFIG:
        return FS_EXIT_CONFIG;
    case SIM_INTERRUPTED:
        return FS_EXIT_INTERRUPTED;
    default: /* NOMEM, INTERNAL, MISMATCH, and anything unknown */
        return FS_EXIT_SOFTWARE;
    }
}

int sim_status_from_trc(int trc_code)
{
    switch (trc_code) {
    case TRC_OK:
        return SIM_OK;
    case TRC_E_MISSING:
        return SIM_MISSING;
    case TRC_E_FORMAT:
        return SIM_DATA_FORMAT;
    case TRC_E_SCHEMA:
        return SIM_DATA_SCHEMA;
    case TRC_E_DATA:
        return SIM_DATA;
    case TRC_E_WRITE:
        return SIM_CANTCREATE;
    case TRC_E_ARG:
        return SIM_CONFIG_ARG;
    case TRC_E_NOMEM:
        return SIM_NOMEM;
    default:
        return SIM_INTERNAL;
    }
}
