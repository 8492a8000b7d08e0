-- Point values drawn with math.random: the same in every process (the seed is
-- fixed).  --arg seed=S reseeds with S and --arg n=N draws N values: ranks
-- started with different values (an MPMD mpirun) expand different point
-- lists, which the sweep must catch before any point runs.
local fs = flashspec
if fs.args.seed then math.randomseed(tonumber(fs.args.seed)) end
local n = tonumber(fs.args.n or "3")
local fr = {}
for i = 1, n do fr[i] = math.random() end
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "traces/data/synth-small.h5", policy = fs.policy.flash_ar {},
  dram_fraction = fr, max_new_tokens = 8,
}
print(#rows, rows[1].dram_fraction)
