-- Point values drawn with math.random: deterministic in every process unless
-- the script reseeds from the clock (--arg reseed=1), which MPI ranks must
-- then catch as different point lists.
local fs = flashspec
if fs.args.reseed then math.randomseed() end
local n = fs.args.random_len and math.random(2, 40) or 3
local fr = {}
for i = 1, n do fr[i] = math.random() end
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "traces/data/synth-small.h5", policy = fs.policy.flash_ar {},
  dram_fraction = fr, max_new_tokens = 8,
}
print(#rows, rows[1].dram_fraction)
