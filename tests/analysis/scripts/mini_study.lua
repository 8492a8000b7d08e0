-- A reduced grid for the analysis tests: every figure of analysis/report.py
-- has its variation (DRAM budget, tree budget, pruning, drafting policies).
local fs = flashspec
local base = {
  device = fs.device "oneplus12",
  target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0",
  trace = fs.trace "traces/data/synth-small.h5",
  dram_fraction = { 0.0, 0.5 },
  max_new_tokens = 32,
  points = {
    { policy = fs.policy.flash_ar {} },
    { policy = fs.policy.chain { k = 4 } },
    { policy = { fs.policy.eagle2 { total_tokens = 7 }, fs.policy.eagle2 { total_tokens = 15 } } },
    { policy = { fs.policy.lever { pruning = "none" }, fs.policy.lever { pruning = "full" } } },
  },
}
local rows = fs.sweep(base)
for _, r in ipairs(rows) do
  assert(not r.error, r.error)
end
print(#rows .. " points")
