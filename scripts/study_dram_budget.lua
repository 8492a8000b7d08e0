-- Study: DRAM budget.  The first 0, 20, 40, 60, 80 and 100% of the target's
-- layers are pinned in DRAM, the rest streamed from flash at every
-- verification (0% = fully flash-backed, the default setting elsewhere),
-- under Flash-AR, Chain-SD (8-token chain), EdgeLLM and Lever.  Targets
-- Qwen3-8B, Llama-3.1-8B and Qwen3-14B (Q4_0, each with its EAGLE-3 draft) on the OnePlus
-- 12, the three workloads (each target's own strong-draft presets), greedy,
-- 128 new tokens.
--
-- A point whose pinned layers, draft, KV caches and buffers exceed the phone's
-- DRAM budget shows as "does not fit" (the sweep reports it as a failed point,
-- exit code 78, and keeps every other point).  The summary pivots the
-- geometric-mean tokens/s over the workloads by pinned share and policy.
--
--   build/sim/cli/flashspec sweep scripts/study_dram_budget.lua -j 2 -o results/dram
--
-- Grid: flashspec.args.grid == "quick" runs Qwen3-8B, the code workload and
-- pinned shares 0 and 100% only (every point fits).
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local targets = quick and { "qwen3-8b" } or { "qwen3-8b", "llama3.1-8b", "qwen3-14b" }
local workloads = quick and { "code" } or { "code", "math", "dialogue" }
local fractions = quick and { 0.0, 1.0 } or { 0.0, 0.2, 0.4, 0.6, 0.8, 1.0 }
local policies = {
  { "Flash-AR", fs.policy.flash_ar {} },
  { "Chain-SD", fs.policy.chain { k = 8 } },
  { "EdgeLLM", fs.policy.edgellm {} },
  { "Lever", fs.policy.lever {} },
}

-- The strong-draft workload preset of a target: Qwen3-8B's are fitted to Lever
-- Table 5 (workload-W-strong.h5), the other targets' transferred from them
-- through public acceptance-length ratios (workload-W-strong-TARGET.h5;
-- traces/data/WORKLOADS.md).
local function workload_trace(w, t)
  local suffix = t == "qwen3-8b" and "" or "-" .. t
  return "traces/data/workload-" .. w .. "-strong" .. suffix .. ".h5"
end

local points, meta = {}, {}
for _, t in ipairs(targets) do
  local tgt, drf = fs.model(t .. "-q4_0"), fs.model(t .. "-eagle3-q4_0")
  for _, w in ipairs(workloads) do
    local tr = fs.trace(workload_trace(w, t))
    for _, f in ipairs(fractions) do
      for _, pol in ipairs(policies) do
        points[#points + 1] = { target = tgt, draft = drf, trace = tr, dram_fraction = f,
                                policy = pol[2] }
        meta[#points] = { target = t, workload = w, fraction = f, policy = pol[1] }
      end
    end
  end
end
local rows = fs.sweep { device = fs.device "oneplus12", max_new_tokens = 128, seed = 1,
                        points = points }

local fmt = "%-10s %-9s %6s %-9s %27s %7s %7s %8s"
print(string.format(fmt, "target", "workload", "pinned", "policy", "tok/s [lo, hi]", "accept",
                    "dram_gb", "flash_ms"))
local logs = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  local pinned = string.format("%d%%", math.floor(m.fraction * 100 + 0.5))
  local k = m.target .. "|" .. m.fraction .. "|" .. m.policy
  if r.error then
    local what = r.error:find("does not fit", 1, true) and "does not fit" or "failed"
    logs[k] = { what }
    print(string.format("%-10s %-9s %6s %-9s %27s", m.target, m.workload, pinned, m.policy, what))
  else
    local g = logs[k] or { 0, 0 }
    if type(g[1]) == "number" then logs[k] = { g[1] + math.log(r.tokens_per_s), g[2] + 1 } end
    print(string.format("%-10s %-9s %6s %-9s %8.3f [%8.3f, %8.3f] %7.2f %7.2f %8.1f", m.target,
                        m.workload, pinned, m.policy, r.tokens_per_s, r.tokens_per_s_lo,
                        r.tokens_per_s_hi, r.mean_accepted, r.dram_bytes / 1e9, r.flash_ms))
  end
end

print("")
local sfmt = "%-10s %6s" .. string.rep(" %12s", #policies)
local head = { "geomean", "pinned" }
for _, pol in ipairs(policies) do head[#head + 1] = pol[1] end
print(string.format(sfmt, table.unpack(head)))
for _, t in ipairs(targets) do
  for _, f in ipairs(fractions) do
    local cells = { t, string.format("%d%%", math.floor(f * 100 + 0.5)) }
    for _, pol in ipairs(policies) do
      local g = logs[t .. "|" .. f .. "|" .. pol[1]]
      cells[#cells + 1] = not g and "-" or type(g[1]) == "string" and g[1]
                          or string.format("%.3f", math.exp(g[1] / g[2]))
    end
    print(string.format(sfmt, table.unpack(cells)))
  end
end
