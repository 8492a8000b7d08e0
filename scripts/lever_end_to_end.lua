-- Lever end to end: Flash-AR, Chain-SD (k = 8), EdgeLLM and
-- Lever on every bundled trace and each of the four target models
-- with its EAGLE-3 draft, OnePlus 12, fully flash-backed (0% DRAM), greedy,
-- 128 new tokens.  Speedups are over Flash-AR on the same model and trace;
-- the last rows are geometric means over models and traces.
--
--   build/sim/cli/flashspec run scripts/lever_end_to_end.lua -o /tmp/lever_e2e
local fs = flashspec
local dev = fs.device "oneplus12"
local traces = { fs.trace "traces/data/synth-default.h5", fs.trace "traces/data/synth-small.h5" }
local models = { "llama3.1-8b-q4_0", "qwen3-4b-q4_0", "qwen3-8b-q4_0", "qwen3-14b-q4_0" }

local policies = { { "flash_ar", fs.policy.flash_ar {} }, { "chain", fs.policy.chain { k = 8 } },
                   { "edgellm", fs.policy.edgellm {} }, { "lever", fs.policy.lever {} } }

local points = {}
for _, m in ipairs(models) do
  local base = m:gsub("%-q4_0$", "")
  for _, pol in ipairs(policies) do
    points[#points + 1] = { target = fs.model(m), draft = fs.model(base .. "-eagle3-q4_0"),
                            policy = pol[2] }
  end
end
local rows = fs.sweep { device = dev, trace = traces, dram_fraction = 0.0,
                        max_new_tokens = 128, seed = 1, points = points }

local ar, logsum, count = {}, {}, {}
for _, r in ipairs(rows) do
  if r.policy == "flash_ar" then ar[r.target .. "|" .. r.trace] = r.tokens_per_s end
end
local fmt = "%-18s %-18s %-9s %8s %8s %8s"
print(string.format(fmt, "target", "trace", "policy", "tok/s", "accept", "speedup"))
for _, r in ipairs(rows) do
  local sp = r.tokens_per_s / ar[r.target .. "|" .. r.trace]
  logsum[r.policy] = (logsum[r.policy] or 0) + math.log(r.tokens_per_s)
  count[r.policy] = (count[r.policy] or 0) + 1
  logsum[r.policy .. "/sp"] = (logsum[r.policy .. "/sp"] or 0) + math.log(sp)
  print(string.format("%-18s %-18s %-9s %8.3f %8.2f %7.2fx", r.target, r.trace, r.policy,
                      r.tokens_per_s, r.mean_accepted, sp))
end
print(string.format("%-18s %-18s %-9s %8s %8s %8s", "geomean", "", "policy", "tok/s", "", "speedup"))
for _, pol in ipairs(policies) do
  local n = pol[1]
  print(string.format("%-18s %-18s %-9s %8.3f %8s %7.2fx", "geomean", "all", n,
                      math.exp(logsum[n] / count[n]), "", math.exp(logsum[n .. "/sp"] / count[n])))
end
