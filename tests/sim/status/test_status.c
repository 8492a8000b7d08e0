/*
 * test_status.c -- the one status space (sim/sim_status.h): every extended
 * code is a named code of the space, distinct from the others and of the
 * documented primary class; the single mapping gives each class its
 * documented exit code; trace library codes come in as documented.
 */
#include "sim/sim_status.h"

#include "traces/trc.h"

#include <string.h>

#include "../../check.h"

typedef struct {
    int code;
    int exit; /* the documented exit code */
} want;

/* The codes of one module: each a named code of the space, pairwise distinct,
 * and mapped to the exit code its header documents. */
static void module(const char *name, const want *w, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(sim_status_name(w[i].code), "unknown") == 0)
            fprintf(stderr, "%s: code %d has no name\n", name, w[i].code);
        CHECK(strcmp(sim_status_name(w[i].code), "unknown") != 0);
        CHECK_EQ_INT(sim_status_exit(w[i].code), w[i].exit);
        for (int j = 0; j < i; j++)
            CHECK(w[i].code != w[j].code);
    }
}

/* The extended codes the modules return (the hw, replay, des, out, fit,
 * config and sweep headers document which), each with its primary's exit code. */
static void test_modules(void)
{
    const want ext[] = {{SIM_INTERNAL_DES_FULL, 70},  {SIM_INTERNAL_DES_PAST, 70},
                        {SIM_INTERNAL_DES_STATE, 70}, {SIM_INTERNAL_DES_EMPTY, 70},
                        {SIM_INTERNAL_DES_LIMIT, 70}, {SIM_INTERNAL_ARG, 70},
                        {SIM_CONFIG_NOFIT, 78},       {SIM_CONFIG_INVALID, 78},
                        {SIM_CONFIG_NAME, 78},        {SIM_CONFIG_RANKS, 78},
                        {SIM_CONFIG_ARG, 78},         {SIM_DATA_FORMAT, 65},
                        {SIM_DATA_SCHEMA, 65},        {SIM_DATA_NOCONV, 65}};
    module("extended", ext, (int)(sizeof ext / sizeof ext[0]));
}

static void test_primary(void)
{
    const want p[] = {{SIM_OK, 0},           {SIM_NOMEM, 70},      {SIM_INTERNAL, 70},
                      {SIM_MISMATCH, 70},    {SIM_USAGE, 64},      {SIM_DATA, 65},
                      {SIM_MISSING, 66},     {SIM_CANTCREATE, 73}, {SIM_CONFIG, 78},
                      {SIM_INTERRUPTED, 130}};
    CHECK_EQ_INT((int)(sizeof p / sizeof p[0]), SIM_N_PRIMARY);
    for (int i = 0; i < SIM_N_PRIMARY; i++) {
        CHECK_EQ_INT(p[i].code, i);
        CHECK_EQ_INT(sim_status_exit(p[i].code), p[i].exit);
        CHECK_EQ_INT(sim_status_primary(p[i].code), p[i].code);
    }
    /* an extended code takes its primary's exit code and keeps its own name */
    const int ext[] = {SIM_INTERNAL_DES_FULL, SIM_INTERNAL_ARG, SIM_CONFIG_NOFIT,
                       SIM_CONFIG_INVALID,    SIM_CONFIG_NAME,  SIM_CONFIG_RANKS,
                       SIM_CONFIG_ARG,        SIM_DATA_FORMAT,  SIM_DATA_SCHEMA,
                       SIM_DATA_NOCONV};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        CHECK(ext[i] > 0xff);
        CHECK_EQ_INT(sim_status_exit(ext[i]), sim_status_exit(sim_status_primary(ext[i])));
        CHECK(strcmp(sim_status_name(ext[i]), sim_status_name(sim_status_primary(ext[i]))) != 0);
        CHECK(strncmp(sim_status_name(ext[i]), sim_status_name(sim_status_primary(ext[i])),
                      strlen(sim_status_name(sim_status_primary(ext[i])))) == 0);
    }
    /* outside the space: a fault, never success */
    CHECK_EQ_INT(sim_status_exit(-1), 70);
    CHECK_EQ_INT(sim_status_exit(0x100), 70);
    CHECK_EQ_INT(sim_status_exit(SIM_N_PRIMARY), 70);
    CHECK_EQ_INT(sim_status_exit(1 << 20), 70);
    CHECK(strcmp(sim_status_name(12345), "unknown") == 0);
}

static void test_trc(void)
{
    const want t[] = {{TRC_OK, 0},      {TRC_E_MISSING, 66}, {TRC_E_FORMAT, 65}, {TRC_E_SCHEMA, 65},
                      {TRC_E_DATA, 65}, {TRC_E_WRITE, 73},   {TRC_E_ARG, 78},    {TRC_E_NOMEM, 70}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK_EQ_INT(sim_status_exit(sim_status_from_trc(t[i].code)), t[i].exit);
        for (size_t j = 0; j < i; j++)
            CHECK(sim_status_from_trc(t[i].code) != sim_status_from_trc(t[j].code));
    }
    CHECK_EQ_INT(sim_status_from_trc(99), SIM_INTERNAL);
}

int main(void)
{
    test_primary();
    test_modules();
    test_trc();
    return check_done("status");
}
