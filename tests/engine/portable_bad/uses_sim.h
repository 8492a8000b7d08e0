/* A fixture for the engine/portable_detects test: a simulator header include. */
#include "sim/des/sim_evq.h"
