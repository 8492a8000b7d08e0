/*
 * sim_thermal.c -- thermal throttling (semantics in sim_hw.h, "Thermal"):
 * once the virtual clock has run thermal_onset_s past the start of the
 * current generation, every NPU and CPU service of the next cycle takes 1 /
 * (1 - thermal_throttle) times as long.  Decided per cycle, at its start, on
 * the phone's own clock (a priced cycle decides by the same clock).
 */
#include "sim_hw_impl.h"

#include "sim/des/sim_des.h"

void sim_hw_generation_start(sim_hw *hw)
{
    hw->gen_t0_ns = sim_des_now(hw->main.des);
}

/* Throttled for the whole next cycle when the generation has run past the
 * onset on the main clock. */
static int throttled(const sim_hw *hw)
{
    if (!hw->dev.thermal || !(hw->dev.thermal_throttle > 0)) return 0;
    int64_t ran = sim_des_now(hw->main.des) - hw->gen_t0_ns;
    return (double)ran >= hw->dev.thermal_onset_s * 1e9;
}

double sim_hwi_cycle_slow(const sim_hw *hw)
{
    return throttled(hw) ? 1.0 / (1.0 - hw->dev.thermal_throttle) : 1.0;
}
