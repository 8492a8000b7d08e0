-- EdgeLLM ablation (EdgeLLM §III; docs/policies.md "`edgellm`"): Flash-AR,
-- Chain-SD (k = 8), then EdgeLLM's techniques added one at a time -- branch
-- navigation (confidence pacer with forks, batched branch verification, a
-- fixed budget of 8 draft tokens), + the self-adaptive fallback threshold, +
-- provisional drafting during verification (under the memory upper bound, only
-- while the target loads weights).  Qwen3-8B + EAGLE-3 draft on the OnePlus 12,
-- 0% DRAM, greedy acceptance, every bundled trace; throughput with its 95%
-- bootstrap interval over prompts.
--
--   build/sim/cli/flashspec run scripts/edgellm_ablation.lua -o /tmp/edgellm_ablation
local fs = flashspec
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local variants = {
  { "flash_ar", fs.policy.flash_ar {} },
  { "chain_sd", fs.policy.chain { k = 8 } },
  { "+navigation", fs.policy.edgellm { navigation = true, fallback = false, provisional = false } },
  { "+fallback", fs.policy.edgellm { navigation = true, fallback = true, provisional = false } },
  { "+provisional", fs.policy.edgellm { navigation = true, fallback = true, provisional = true } },
}
local policies = {}
for i, v in ipairs(variants) do policies[i] = v[2] end

local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = traces, policy = policies,
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

-- rows come back in sweep order: trace-major over the policy list
local ar = {}
for _, r in ipairs(rows) do
  if r.policy == "flash_ar" then ar[r.trace] = r.tokens_per_s end
end
local fmt = "%-13s %-16s %7s %17s %8s %7s %6s %7s %7s %5s"
print(string.format(fmt, "variant", "trace", "tok/s", "95% CI", "speedup", "accept", "rows",
                    "draft", "verify", "kept"))
for i, r in ipairs(rows) do
  local name = variants[(i - 1) % #variants + 1][1]
  print(string.format("%-13s %-16s %7.3f [%7.3f,%7.3f] %7.2fx %7.2f %6.1f %7.1f %7.1f %5d",
                      name, r.trace, r.tokens_per_s, r.tokens_per_s_lo, r.tokens_per_s_hi,
                      r.tokens_per_s / ar[r.trace], r.mean_accepted, r.verify_rows, r.draft_ms,
                      r.verify_ms, r.provisional_kept))
end
