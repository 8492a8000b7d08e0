-- Five points, two of them bad: one does not fit the DRAM budget, one is an
-- invalid combination (Chain-SD needs a draft model).
local fs = flashspec
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-14b-q4_0",
  trace = fs.trace "traces/data/synth-small.h5",
  policy = fs.policy.flash_ar {}, max_new_tokens = 8,
  points = {
    { dram_fraction = 0 },
    { dram_fraction = 1 },
    { policy = fs.policy.chain {} },
    { dram_fraction = { 0.1, 0.2 } },
  },
}
assert(#rows == 5)
assert(rows[1].tokens_per_s > 0 and rows[4].tokens_per_s > 0 and rows[5].tokens_per_s > 0)
assert(rows[2].error:find("does not fit") and rows[2].code == 78 and rows[2].point == 2)
assert(rows[3].error:find("needs a draft model") and rows[3].code == 78)
print("bad points ok")
