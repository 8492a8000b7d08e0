-- Replay rate of every policy with trees of up to 64 rows
-- (tests/bench/bench_policies.py): one thread, a synthetic trace recorded
-- with 65-node trees, each policy at its largest setting that verifies up
-- to 64 rows.  Prints "rate NAME CYCLES WALL_S ROWS_MEAN ROWS_MAX" per
-- policy (wall: the replay's own sim_wall_s summed over the points; rows:
-- rows actually verified per cycle, mean and largest).
--   --arg only=NAME    times one policy
--   --arg trace=PATH   replays that trace instead of synthesising it here
--   --arg min_s=S      runs seeds until the policy's points took S seconds
--                      of replay (default 0.25; at least 2 seeds, at most 64)
--   --arg device=D     the phone (a profile name or file; default oneplus12,
--                      whose two standing variants every point also pays for)
local fs = flashspec
local tr = fs.args.trace and fs.trace(fs.args.trace)
  or fs.trace.synth { prompts = 4, output_len = 1000, seed = 3, nodes = 65, depth = 10 }
local min_s = tonumber(fs.args.min_s or "0.25")
local base = { device = fs.device(fs.args.device or "oneplus12"), target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", max_new_tokens = 1000, trace = tr }
local function point(policy, seed, max_new)
  local p = { policy = policy, seed = seed }
  for k, v in pairs(base) do p[k] = v end
  if max_new then p.max_new_tokens = max_new end
  return fs.run(p)
end
point(fs.policy.flash_ar {}, 1, 4) -- reads every prompt and fits the trace statistics first
local policies = {
  { "flash_ar", fs.policy.flash_ar {} },
  { "chain", fs.policy.chain { k = 8 } },
  { "specinfer", fs.policy.specinfer { widths = { 4, 2, 2, 1, 1 } } },
  { "sequoia", fs.policy.sequoia {} },
  { "eagle2", fs.policy.eagle2 { total_tokens = 63 } },
  { "opt_tree", fs.policy.opt_tree { nodes = 63 } },
  { "edgellm", fs.policy.edgellm {} },
  { "lyanna", fs.policy.lyanna { b = 31, k = 4 } }, -- b = 32 verifies up to 65 rows (fused re-samples)
  { "lever", fs.policy.lever { n_max = 64 } },
}
for _, p in ipairs(policies) do
  if not fs.args.only or fs.args.only == p[1] then
    local cycles, wall, rows, rmax, seed = 0, 0, 0, 0, 0
    while seed < 2 or (wall < min_s and seed < 64) do
      seed = seed + 1
      local r = point(p[2], seed)
      cycles, wall = cycles + r.cycles, wall + r.sim_wall_s
      rows = rows + r.verify_rows * r.cycles
      if r.verify_rows_max > rmax then rmax = r.verify_rows_max end
    end
    print(string.format("rate %s %d %.6f %.2f %d", p[1], cycles, wall, rows / cycles, rmax))
  end
end
