-- Lever verification-pruning ablation: none, threshold (theta on scores
-- normalised over the tree children only), shadow (normalised over the whole
-- draft candidate set) and full (shadow + ancestor closure, backbone,
-- near-root coverage, rejection).  rows_kept = rows continuing past the exit
-- layer; retention = accepted tokens relative to verifying the same trees
-- unpruned.  Qwen3-8B + EAGLE-3 on the OnePlus 12, 0% DRAM, greedy.
--
--   build/sim/cli/flashspec run scripts/lever_pruning.lua -o /tmp/lever_pruning
local fs = flashspec
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local variants = { "none", "threshold", "shadow", "full" }
local policies = {}
for i, v in ipairs(variants) do policies[i] = fs.policy.lever { pruning = v } end

local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, policy = policies,
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local function variant(r) return r.policy_params:match("pruning=([%w_]+)") end
local fmt = "%-10s %-18s %8s %9s %9s %9s %8s"
print(string.format(fmt, "pruning", "trace", "rows", "rows_kept", "verify", "retention", "tok/s"))
for _, r in ipairs(rows) do
  print(string.format("%-10s %-18s %8.1f %9.3f %9.1f %9.3f %8.3f", variant(r), r.trace,
                      r.verify_rows, r.rows_kept, r.verify_ms, r.retention, r.tokens_per_s))
end
