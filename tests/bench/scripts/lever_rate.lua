-- Lever replay rate (64-node trees, the default n_max; tests/bench/bench_lever.py):
-- speculative cycles and tokens per host second of single points, one thread, on a
-- synthetic trace recorded with 64-node trees.  Prints "replay NAME CYCLES TOKENS WALL_S"
-- lines (the replay's own wall time, sim_wall_s) for the full Lever (gain-cost
-- drafting, hybrid schedule, full pruning) and for Lever without pruning.
local fs = flashspec
local tr = fs.trace.synth { prompts = 8, output_len = 2000, seed = 3, nodes = 65, depth = 10 }
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = 2000 }
for _, p in ipairs { { "lever", fs.policy.lever { n_max = 64 } },
                     { "lever-np", fs.policy.lever { n_max = 64, pruning = "none" } } } do
  local cycles, tokens, wall = 0, 0, 0
  for seed = 1, 3 do
    local t = { policy = p[2], seed = seed }
    for k, v in pairs(base) do t[k] = v end
    local r = fs.run(t)
    cycles, tokens, wall = cycles + r.cycles, tokens + r.tokens, wall + r.sim_wall_s
  end
  print(string.format("replay %s %d %d %.6f", p[1], cycles, tokens, wall))
end
