/*
 * sim_outdir.h -- a script run's output directory DIR (-o DIR): every output
 * path checked before the script runs a point, DIR locked while the run
 * writes into it (sim_lock.h) and the temporaries an interrupted run left
 * there removed, the run record (runrec.h: DIR/script.lua, DIR/run.json)
 * written before the results and dropped again when they cannot be, and DIR
 * released when the run ends (removed when this run made it and failed);
 * the results written into it (sim_out_results_write).
 * What returns a status returns SIM_OK, or SIM_CANTCREATE (SIM_INTERNAL: out
 * of memory) with one line in err that names the path.
 */
#ifndef SIM_OUT_OUTDIR_H
#define SIM_OUT_OUTDIR_H

#include <stddef.h>
#include <stdint.h>

#include "sim/out/rows.h"
#include "sim/out/runrec.h"
#include "sim/out/sim_lock.h"

/* Can results be written into dir?  It is a writable directory, or its
 * nearest existing ancestor is one (dir will be made).  The refusal says
 * why and asks for another directory ("cannot write output 'DIR': WHY (...;
 * choose another directory with -o DIR)"). */
int sim_out_dir_check(const char *dir, char *err, size_t errlen);

/* An output file's path (--timeline FILE): refused when something other
 * than a regular file is there. */
int sim_out_path_check(const char *path, char *err, size_t errlen);

/* Can a file be made next to path (its directory exists and is writable)? */
int sim_out_path_creatable(const char *path, char *err, size_t errlen);

/* Takes DIR's lock into lock (*made_dir: 1 when DIR was made for it), then
 * removes the temporaries a killed run left in DIR and in store_dir (its
 * resume store, "" for none), saying how many on stderr unless quiet. */
int sim_out_dir_lock(sim_out_lockh *lock, const char *dir, const char *store_dir, int quiet,
                     int *made_dir, char *err, size_t errlen);

/* SIM_OK when DIR is still the directory lock holds (or lock holds none):
 * asked before every write into it (sim_out_lock_keep). */
int sim_out_dir_held(sim_out_lockh *lock, char *err, size_t errlen);

/* DIR/script.lua (run->script_bytes) and DIR/run.json (fs_runrec_json of
 * rec, run and rows[0..n_rows)), each written atomically; rec NULL is out of
 * memory. */
int sim_out_record_write(const char *dir, const fs_runrec *rec, const fs_runrec_run *run,
                         const struct fs_row *rows, int32_t n_rows, char *err, size_t errlen);

/* Removes DIR's record (run.json, script.lua) when its results could not be
 * written -- only while DIR is still the directory lock holds: never another
 * run's record. */
void sim_out_record_drop(const sim_out_lockh *lock, const char *dir);

/* A file a script run writes into DIR when it succeeds (flashspec.calibrate's
 * report and profile). */
typedef struct sim_out_file {
    char name[128]; /* file name inside DIR */
    char *data;     /* owned by the caller */
    size_t len;
} sim_out_file;

/* What a script run writes into DIR once it has run. */
typedef struct sim_out_results {
    const char *dir;      /* DIR */
    sim_out_lockh *lock;  /* DIR's, held by the run */
    const fs_rows_meta *meta;
    const struct fs_row *rows; /* the recorded rows */
    int32_t n_rows;
    const fs_runrec *rec; /* what each row ran (NULL: out of memory) */
    fs_runrec_run run;    /* the run itself; its traces and profiles are listed here */
    const sim_trace_cache *traces;
    const sim_profile_cache *profiles;
    const char *home;     /* the project: paths inside it are recorded relative to it */
    const sim_out_file *files;
    int32_t n_files;
    int64_t computed, resumed; /* for the line that says what was written */
    int quiet;
} sim_out_results;

/* Writes a run's results into DIR, each write only while DIR is still the
 * directory the run locked: when there are rows, the record
 * (sim_out_record_write, with the traces the rows ran on and the profiles
 * read) and then results.{csv,h5} (fs_rows_write), the record dropped again
 * when the results cannot be written, and one line on stderr (unless quiet);
 * then each file.  SIM_OK, or the first failure's status with err. */
int sim_out_results_write(const sim_out_results *w, char *err, size_t errlen);

/* The end of a run: DIR removed when this run made it (made_dir), failed and
 * left it empty, and DIR is still the one it locked; a warning (unless quiet)
 * when DIR was removed and made again while the run wrote it; the lock
 * released (harmless when none was taken; dir may then be NULL). */
void sim_out_dir_release(sim_out_lockh *lock, const char *dir, int made_dir, int failed,
                         int quiet);

#endif
