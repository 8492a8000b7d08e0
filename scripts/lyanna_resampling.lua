-- Lyanna re-sampling ablation (Lyanna §5.3 and §6.2; docs/policies.md
-- "`lyanna`"): the token-info tree alone, with re-sampling verified on its own
-- (an extra target invocation per re-sampled subtree) and with re-sampling
-- fused into the next cycle's verification.  Qwen3-8B + EAGLE-3 draft on the
-- OnePlus 12, 0% DRAM, greedy acceptance, synth-default trace; speedups over
-- Flash-AR on the same setup.  The re-sampled subtrees are modelled from the
-- recorded tree at the new root with the policy's resample_penalty
-- (sim/replay/README.md "Re-sampling").
--
--   build/sim/cli/flashspec run scripts/lyanna_resampling.lua -o /tmp/lyanna_resampling
local fs = flashspec
local variants = {
  { "flash_ar", fs.policy.flash_ar {} },
  { "no_resampling", fs.policy.lyanna { resampling = false } },
  { "resampling", fs.policy.lyanna { resampling = true, fusion = false } },
  { "resampling+fusion", fs.policy.lyanna { resampling = true, fusion = true } },
}
local policies = {}
for i, v in ipairs(variants) do policies[i] = v[2] end

local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = fs.trace "traces/data/synth-default.h5",
  policy = policies, dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local function label(r)
  if r.policy == "flash_ar" then return "flash_ar" end
  if r.policy_params:match("resampling=false") then return "no_resampling" end
  if r.policy_params:match("fusion=false") then return "resampling" end
  return "resampling+fusion"
end
local ar
for _, r in ipairs(rows) do
  if r.policy == "flash_ar" then ar = r.tokens_per_s end
end
local fmt = "%-18s %8s %8s %9s %8s %13s"
print(string.format(fmt, "variant", "tok/s", "speedup", "accepted", "rows", "verifications"))
for _, r in ipairs(rows) do
  print(string.format("%-18s %8.3f %7.2fx %9.2f %8.1f %13d", label(r), r.tokens_per_s,
                      r.tokens_per_s / ar, r.mean_accepted, r.verify_rows, r.cycles))
end
