-- Tree drafting policies side by side (docs/policies.md): every policy on every
-- bundled trace, Qwen3-8B verified with its EAGLE-3 draft on the OnePlus 12,
-- whole target streamed from flash (0% DRAM), greedy acceptance.
--
--   build/sim/cli/flashspec run scripts/tree_policies.lua -o /tmp/tree_policies
--
-- The bundled synthetic traces record depth 8 and at most 16 nodes per tree
-- (synth-default) or depth 4 and 12 nodes (synth-small): deeper or wider
-- policies expand unrecorded nodes, served by off-path synthesis
-- (sim/replay/README.md), which the coverage column reports.
local fs = flashspec
local dev = fs.device "oneplus12"
local tgt = fs.model "qwen3-8b-q4_0"
local drf = fs.model "qwen3-8b-eagle3-q4_0"
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }

local policies = {
  fs.policy.flash_ar {},
  fs.policy.chain { k = 8 },
  fs.policy.adaptive_chain {},
  fs.policy.specinfer {},
  fs.policy.eagle2 {},
  fs.policy.opt_tree {},
  fs.policy.sequoia {},
}

local rows = fs.sweep {
  device = dev, target = tgt, draft = drf, trace = traces, policy = policies,
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local fmt = "%-15s %-18s %8s %8s %8s %8s %8s %6s %8s %8s %8s"
print(string.format(fmt, "policy", "trace", "tok/s", "accept", "rows", "verify", "waste",
                       "waste%", "draft", "cycle", "coverage"))
for _, r in ipairs(rows) do
  print(string.format("%-15s %-18s %8.3f %8.2f %8.1f %8.1f %8.1f %5.1f%% %8.1f %8.1f %8.3f",
                         r.policy, r.trace, r.tokens_per_s, r.mean_accepted, r.verify_rows,
                         r.verify_ms, r.waste_ms, 100 * r.waste_frac, r.draft_ms, r.cycle_ms,
                         r.coverage))
end
