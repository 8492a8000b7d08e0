-- Lever drafting ablation (Lever §4.2; docs/policies.md "`lever`"): only the
-- tree construction changes -- gain-cost greedy vs SpecInfer, OPT-Tree,
-- EAGLE-2 and Sequoia construction (each at its own defaults) -- with Lever's
-- pruning, schedule and projection kept.  Qwen3-8B + EAGLE-3 draft on the
-- OnePlus 12, 0% DRAM, greedy acceptance, every bundled trace.
--
--   build/sim/cli/flashspec run scripts/lever_drafting.lua -o /tmp/lever_drafting
local fs = flashspec
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local variants = { "gain_cost", "specinfer", "opt_tree", "eagle2", "sequoia" }
local policies = {}
for i, v in ipairs(variants) do policies[i] = fs.policy.lever { drafting = v } end

local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, policy = policies,
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local function variant(r) return r.policy_params:match("drafting=([%w_]+)") end
local fmt = "%-10s %-18s %8s %8s %8s %8s %8s"
print(string.format(fmt, "drafting", "trace", "tok/s", "accept", "rows", "draft", "verify"))
for _, r in ipairs(rows) do
  print(string.format("%-10s %-18s %8.3f %8.2f %8.1f %8.1f %8.1f", variant(r), r.trace,
                      r.tokens_per_s, r.mean_accepted, r.verify_rows, r.draft_ms, r.verify_ms))
end
