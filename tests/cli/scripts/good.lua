-- A small two-point experiment used by the CLI tests.
local fs = flashspec
local rows = fs.sweep {
  device = fs.device "oneplus12",
  target = fs.model "qwen3-8b-q4_0",
  draft  = fs.model "qwen3-8b-eagle3-q4_0",
  trace  = fs.trace "traces/data/synth-small.h5",
  policy = { fs.policy.flash_ar{}, fs.policy.chain{ k = 4 } },
  dram_fraction = { 0.0, 0.5 },
  max_new_tokens = 32,
}
for _, r in ipairs(rows) do
  print(r.policy, r.dram_fraction, r.tokens_per_s, r.mean_accepted)
end
