/* A fixture for the engine/portable_detects test: check_portable.sh must reject
 * this directory because the file below includes stdio.h. */
#include <stdio.h>
