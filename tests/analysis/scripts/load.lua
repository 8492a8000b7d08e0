-- Two sweeps for the load test: Flash-AR alone at 0% DRAM (whole-valued doubles,
-- a one-bin acceptance histogram, a policy without parameters), and a mixed one
-- on an in-memory trace whose name reads as a number.
local fs = flashspec
local which = fs.args.which or "ar"
local base = {
  device = fs.device "oneplus12",
  target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0",
  max_new_tokens = 8,
  seed = 1,
}
if which == "ar" then
  base.trace = fs.trace "traces/data/synth-small.h5"
  base.dram_fraction = 0.0
  base.policy = fs.policy.flash_ar {}
else
  base.trace = fs.trace.synth { name = "2024", prompts = 2, output_len = 16, accept = { 0.7 } }
  base.dram_fraction = { 0.0, 0.25 }
  base.policy = { fs.policy.flash_ar {}, fs.policy.chain { k = 4 }, fs.policy.lever {} }
end
local rows = fs.sweep(base)
for _, r in ipairs(rows) do assert(not r.error, r.error) end
