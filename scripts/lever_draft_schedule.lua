-- Lever draft-schedule ablation: hybrid (single-node CPU expansions while the
-- tree is small, one NPU batch once b_min frontier nodes are ready), all
-- single-node CPU, all single-node NPU.  Draft-stage latency per cycle.
-- Qwen3-8B + EAGLE-3 on the OnePlus 12, 0% DRAM, greedy.
--
--   build/sim/cli/flashspec run scripts/lever_draft_schedule.lua -o /tmp/lever_sched
local fs = flashspec
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local variants = { "hybrid", "cpu", "npu" }
local policies = {}
for i, v in ipairs(variants) do policies[i] = fs.policy.lever { draft_schedule = v } end

local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, policy = policies,
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local function variant(r) return r.policy_params:match("draft_schedule=([%w_]+)") end
local fmt = "%-8s %-18s %9s %8s %8s %8s"
print(string.format(fmt, "schedule", "trace", "draft_ms", "rows", "accept", "tok/s"))
for _, r in ipairs(rows) do
  print(string.format("%-8s %-18s %9.2f %8.1f %8.2f %8.3f", variant(r), r.trace, r.draft_ms,
                      r.verify_rows, r.mean_accepted, r.tokens_per_s))
end
