-- An invalid point in the list (Chain-SD without a draft model) and an
-- out-of-range value in three of twelve points: the whole list is validated
-- before any point runs, so each is one line and nothing runs.
local fs = flashspec
local which = flashspec.args.which
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               trace = fs.trace "traces/data/synth-small.h5", policy = fs.policy.flash_ar {},
               max_new_tokens = 8 }
if which == "combination" then
  base.points = { { dram_fraction = 0 }, { policy = fs.policy.chain {} }, { dram_fraction = 0.2 } }
else
  base.dram_fraction = { 0, 0.2, 1.5, 0.4 }
  base.seed = { 1, 2, 3 }
end
fs.sweep(base)
print("not reached")
