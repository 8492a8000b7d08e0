-- A mixed sweep for the determinism tests: a Cartesian product and an
-- explicit point list, two traces, three policies, two seeds.
local fs = flashspec
local dev, tgt = fs.device "oneplus12", fs.model "qwen3-8b-q4_0"
local drf = fs.model "qwen3-8b-eagle3-q4_0"
local small = fs.trace "traces/data/synth-small.h5"
local synth = fs.trace.synth { prompts = 3, output_len = 64, coverage = 0.6, seed = 4 }
local rows = fs.sweep {
  device = dev, target = tgt, draft = drf, trace = { small, synth },
  policy = { fs.policy.flash_ar {}, fs.policy.chain { k = 4 }, fs.policy.chain { k = 8 } },
  dram_fraction = { 0, 0.25, 0.5, 0.75 }, seed = { 1, 2 }, max_new_tokens = 48,
}
assert(#rows == 2 * 3 * 4 * 2)
local more = fs.sweep {
  device = dev, target = tgt, draft = drf, trace = synth, max_new_tokens = 32,
  points = {
    { policy = fs.policy.chain { k = 2 }, dram_fraction = 0.1 },
    { policy = fs.policy.flash_ar {}, dram_fraction = { 0.2, 0.4 } },
  },
}
assert(#more == 3)
for _, r in ipairs(rows) do print(r.policy, r.policy_params, r.trace, r.dram_fraction, r.seed,
                                  r.tokens_per_s) end
for _, r in ipairs(more) do print(r.policy, r.dram_fraction, r.tokens_per_s) end
