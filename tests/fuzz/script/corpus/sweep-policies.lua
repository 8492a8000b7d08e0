--@ j=2 out
local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-4b-q4_0",
  draft = fs.model "qwen3-4b-eagle3-q4_0", trace = tr,
  policy = { fs.policy.flash_ar {}, fs.policy.lever {}, fs.policy.specinfer {},
             fs.policy.eagle2 {}, fs.policy.opt_tree {}, fs.policy.sequoia {},
             fs.policy.adaptive_chain {} },
  dram_fraction = { 0, 0.5 }, max_new_tokens = 6, seed = { 1, 2 },
}
for _, r in ipairs(rows) do print(r.policy, r.dram_fraction, r.tokens_per_s) end
