/*
 * home.h -- where flashspec finds its data: the profiles (configs/) and the
 * files scripts name relative to the project (traces/data/..., scripts/...).
 *
 * The home directory is, in order: $FLASHSPEC_HOME when set and non-empty;
 * for an installed binary, the data directory installed beside it
 * (<bindir>/FS_SHARE_REL, e.g. /usr/local/bin/../share/flashspec), found
 * from the running executable so that a relocated or DESTDIR-staged install
 * works too, and recognised by its configs/ folder; else the source tree the
 * binary was built from (a binary run from its build tree).  The configs
 * directory is $FLASHSPEC_CONFIG_DIR when set and non-empty, else
 * <home>/configs.  Both are resolved once per process.
 */
#ifndef FS_CONFIG_HOME_H
#define FS_CONFIG_HOME_H

const char *fs_home_dir(void);
const char *fs_config_dir(void);

#endif
