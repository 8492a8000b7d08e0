-- Lever replay rate (64-node trees, the default n_max; tests/bench/bench_lever.py):
-- speculative cycles and tokens per host second of single points, one thread, on a
-- synthetic trace recorded with 64-node trees.  Prints "replay NAME CYCLES TOKENS WALL_S"
-- lines (the replay's own wall time, sim_wall_s) for the full Lever (gain-cost
-- drafting, hybrid schedule, full pruning) and for Lever without pruning.
--
-- Steady state, as in any sweep: the replay fits the trace's off-path statistics
-- once per trace (sim/replay/README.md), when the trace's first point runs; a
-- short Flash-AR point pays that here before the timed points.  "lever-cold"
-- times one Lever point on a fresh trace, fit included.
local fs = flashspec
local function trace()
  return fs.trace.synth { prompts = 8, output_len = 2000, seed = 3, nodes = 65, depth = 10 }
end
local tr = trace()
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", max_new_tokens = 2000 }
local function point(policy, seed, t, max_new)
  local p = { policy = policy, seed = seed, trace = t }
  for k, v in pairs(base) do p[k] = v end
  if max_new then p.max_new_tokens = max_new end
  return fs.run(p)
end
point(fs.policy.flash_ar {}, 1, tr, 4) -- fits the per-trace statistics
for _, p in ipairs { { "lever", fs.policy.lever { n_max = 64 } },
                     { "lever-np", fs.policy.lever { n_max = 64, pruning = "none" } } } do
  local cycles, tokens, wall, rows, rmax = 0, 0, 0, 0, 0
  for seed = 1, 3 do
    local r = point(p[2], seed, tr)
    cycles, tokens, wall = cycles + r.cycles, tokens + r.tokens, wall + r.sim_wall_s
    rows = rows + r.verify_rows * r.cycles
    if r.verify_rows_max > rmax then rmax = r.verify_rows_max end
  end
  print(string.format("replay %s %d %d %.6f %.2f %d", p[1], cycles, tokens, wall,
                      rows / cycles, rmax))
end
local r = point(fs.policy.lever { n_max = 64 }, 1, trace())
print(string.format("replay lever-cold %d %d %.6f %.2f %d", r.cycles, r.tokens, r.sim_wall_s,
                    r.verify_rows, r.verify_rows_max))
