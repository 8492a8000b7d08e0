/*
 * rp_profile.h -- private to sim/replay: the offline profile of a policy
 * with a calibrate hook (rp_profile.c), for replay.c.
 */
#ifndef RP_PROFILE_H
#define RP_PROFILE_H

#include "replay.h"
#include "rp_oracle.h"

/* Builds pt's eng_cost_profile -- st's positional acceptance, the latency
 * tables priced on hw at the mean context of the point's n_prompts prompts
 * under runtime, and the trace's exit layers on hw's target -- and hands it
 * to pol's calibrate hook.  The tables come from pt's profile cache when a
 * phone model of the same inputs asked at the same context and runtime
 * before.  0, or -1 when pricing fails, memory runs out or the hook fails. */
int rp_profile_calibrate(const sim_point *pt, sim_hw *hw, const rp_synth_stats *st, eng_policy *pol,
                         int32_t n_prompts, int32_t runtime);

#endif
