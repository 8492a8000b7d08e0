-- Lever projection-placement ablation: output projection on demand on the CPU
-- (accepted path + 1 rows), eagerly on the NPU for every row, or on demand on
-- the NPU (one call per visited row).  The placement changes only time: the
-- accepted tokens are identical.  The script checks it where the trees stay
-- inside recorded trace data (coverage 1): each point draws its synthesised
-- nodes from its own seed (derived from the point id), so beyond the recorded
-- depth the trees themselves differ between points (tests/sim/replay checks
-- the identity at one seed on every trace).  Qwen3-8B + EAGLE-3
-- on the OnePlus 12, 0% DRAM, greedy.
--
--   build/sim/cli/flashspec run scripts/lever_projection.lua -o /tmp/lever_proj
local fs = flashspec
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local variants = { "cpu_on_demand", "npu_eager", "npu_on_demand" }

local fmt = "%-14s %-18s %8s %9s %8s %8s %8s"
print(string.format(fmt, "projection", "trace", "proj_ms", "verify", "accept", "tokens", "coverage"))
for _, tr in ipairs(traces) do
  local base
  for _, v in ipairs(variants) do
    -- the tree construction is held fixed (cpu schedule, no pruning, a
    -- specinfer tree) so that only the projection placement differs
    local r = fs.run {
      device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
      draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,
      policy = fs.policy.lever { projection = v, drafting = "specinfer", pruning = "none" },
      dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
    }
    base = base or r
    if r.coverage == 1 and base.coverage == 1 then
      assert(r.tokens == base.tokens and r.cycles == base.cycles and
             r.mean_accepted == base.mean_accepted, "projection changed the accepted tokens")
    end
    print(string.format("%-14s %-18s %8.2f %9.1f %8.2f %8d %8.3f", v, r.trace, r.proj_ms,
                        r.verify_ms, r.mean_accepted, r.tokens, r.coverage))
  end
end
