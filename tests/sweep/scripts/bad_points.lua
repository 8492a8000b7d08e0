-- Four points, one of which does not fit the DRAM budget: found only when it
-- runs, so the others still run and the sweep returns its error in place.
local fs = flashspec
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-14b-q4_0",
  trace = fs.trace "traces/data/synth-small.h5",
  policy = fs.policy.flash_ar {}, max_new_tokens = 8,
  points = {
    { dram_fraction = 0 },
    { dram_fraction = 1 },
    { dram_fraction = { 0.1, 0.2 } },
  },
}
assert(#rows == 4)
assert(rows[1].tokens_per_s > 0 and rows[3].tokens_per_s > 0 and rows[4].tokens_per_s > 0)
assert(rows[2].error:find("does not fit") and rows[2].code == 78 and rows[2].point == 2)
print("bad points ok")
