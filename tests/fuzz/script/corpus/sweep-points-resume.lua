--@ resume
local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = 4,
  points = {
    { policy = fs.policy.flash_ar {}, dram_fraction = 0 },
    { policy = fs.policy.chain { k = 8 }, dram_fraction = { 0.2, 0.4 } },
    { policy = fs.policy.lever { pruning = "shadow", draft_schedule = "npu" } },
  },
}
print(#rows)
