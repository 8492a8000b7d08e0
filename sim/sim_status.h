/*
 * sim_status.h -- the one status space of the simulator, and its one mapping
 * to the documented exit codes.
 *
 * Every sim/ module returns an int status: 0 for success, else a code whose
 * low byte is one of the primary codes below, which say what went wrong and
 * who must act.  A module may refine a primary code with an extended code
 * (the primary in the low byte, a detail above it, as SQLite's extended
 * result codes do), so a caller that only needs the class tests
 * sim_status_primary(rc) and one that needs the detail compares the whole
 * code.  Modules use these names directly (no module aliases); each header
 * documents which of them its functions return.  Codes are positive; a
 * status is never an errno or a count.
 *
 * sim_status_exit() is the only place a status becomes an exit code.  The
 * engine (ENG_*) and the trace library (TRC_*) stay below sim/ with their own
 * codes; sim_status_from_trc() brings a TRC_* code into this space.
 */
#ifndef SIM_STATUS_H
#define SIM_STATUS_H

/* Exit codes of the flashspec program (the sysexits.h values, and 130 as a
 * shell reports SIGINT); the README documents them. */
enum {
    FS_EXIT_OK = 0,
    FS_EXIT_USAGE = 64,       /* the command line is wrong */
    FS_EXIT_DATA = 65,        /* an input file's contents are damaged */
    FS_EXIT_NOINPUT = 66,     /* an input file is missing or unreadable */
    FS_EXIT_SOFTWARE = 70,    /* out of memory, or a fault of flashspec or a policy */
    FS_EXIT_CANTCREAT = 73,   /* an output cannot be created */
    FS_EXIT_CONFIG = 78,      /* the script, a profile or a setting is wrong */
    FS_EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM: finished points saved for resuming */
};

/* Primary codes. */
enum {
    SIM_OK = 0,
    SIM_NOMEM = 1,       /* allocation failed                      -> 70 */
    SIM_INTERNAL = 2,    /* a broken invariant or engine failure    -> 70 */
    SIM_MISMATCH = 3,    /* an emitted token differs from the trace's
                            reference (the policy's fault)          -> 70 */
    SIM_USAGE = 4,       /* the command line is wrong               -> 64 */
    SIM_DATA = 5,        /* an input file's contents are damaged    -> 65 */
    SIM_MISSING = 6,     /* an input file is absent or unreadable   -> 66 */
    SIM_CANTCREATE = 7,  /* an output file cannot be created        -> 73 */
    SIM_CONFIG = 8,      /* the request cannot run as configured    -> 78 */
    SIM_INTERRUPTED = 9, /* SIGINT/SIGTERM                          -> 130 */
    SIM_N_PRIMARY = 10
};

#define SIM_STATUS_EXT(primary, n) ((primary) | ((n) << 8))

/* Extended codes, by module. */
enum {
    /* des: the event queue and its resources (faults of the phone model) */
    SIM_INTERNAL_DES_FULL = SIM_STATUS_EXT(SIM_INTERNAL, 1),  /* arena full */
    SIM_INTERNAL_DES_PAST = SIM_STATUS_EXT(SIM_INTERNAL, 2),  /* event before the clock */
    SIM_INTERNAL_DES_STATE = SIM_STATUS_EXT(SIM_INTERNAL, 3), /* release of a free resource */
    SIM_INTERNAL_DES_EMPTY = SIM_STATUS_EXT(SIM_INTERNAL, 4), /* pop on an empty queue */
    SIM_INTERNAL_DES_LIMIT = SIM_STATUS_EXT(SIM_INTERNAL, 5), /* too many resources */
    /* out, fit: a caller passed a bad column, type, name or size (a fault of the caller) */
    SIM_INTERNAL_ARG = SIM_STATUS_EXT(SIM_INTERNAL, 6),
    /* hw, replay: the point's memory plan exceeds the DRAM budget */
    SIM_CONFIG_NOFIT = SIM_STATUS_EXT(SIM_CONFIG, 1),
    /* hw: a bad argument or an inconsistent profile */
    SIM_CONFIG_INVALID = SIM_STATUS_EXT(SIM_CONFIG, 2),
    /* config: a bad profile kind or name */
    SIM_CONFIG_NAME = SIM_STATUS_EXT(SIM_CONFIG, 3),
    /* sweep: MPI ranks expanded different point lists */
    SIM_CONFIG_RANKS = SIM_STATUS_EXT(SIM_CONFIG, 4),
    /* traces (TRC_E_ARG): a trace generator parameter is out of range */
    SIM_CONFIG_ARG = SIM_STATUS_EXT(SIM_CONFIG, 5),
    /* traces (TRC_E_FORMAT): not HDF5, truncated or corrupt */
    SIM_DATA_FORMAT = SIM_STATUS_EXT(SIM_DATA, 1),
    /* traces (TRC_E_SCHEMA): wrong format name or version, missing dataset */
    SIM_DATA_SCHEMA = SIM_STATUS_EXT(SIM_DATA, 2),
    /* fit: the reference data do not pin the fit down (no convergence) */
    SIM_DATA_NOCONV = SIM_STATUS_EXT(SIM_DATA, 3)
};

static inline int sim_status_primary(int status)
{
    return status & 0xff;
}

/* The exit code of a status: FS_EXIT_OK for SIM_OK; FS_EXIT_SOFTWARE for a
 * code outside this space. */
int sim_status_exit(int status);

/* A short name of the code ("nomem", "config.nofit", ...), for messages and
 * tests; "unknown" for a code outside this space. */
const char *sim_status_name(int status);

/* A trace library code (TRC_OK, TRC_E_* of traces/trc.h) in this space. */
int sim_status_from_trc(int trc_code);

#endif
