-- Study: draft quality.  The strong draft (Qwen3-8B's EAGLE-3 head,
-- qwen3-8b-eagle3-q4_0, on the *-strong traces) against a weak one (a separate
-- small model of the same family, qwen3-0.6b-q4_0, on the *-weak traces;
-- traces/data/WORKLOADS.md gives both acceptance levels) on the three
-- workloads, under Chain-SD (8-token chain), EdgeLLM and Lever, with Flash-AR
-- as the reference of every speedup.  Target Qwen3-8B (Q4_0) on the OnePlus
-- 12, whole target streamed from flash (dram_fraction = 0), greedy, 128 new
-- tokens.
--
-- Both drafts stay in DRAM next to the target's buffers and KV caches; the
-- dram_gb column is what the point needs.  A draft that does not fit the
-- phone's DRAM budget shows as "does not fit" (the sweep reports the point as
-- failed, exit code 78, and keeps every other point).
--
--   build/sim/cli/flashspec sweep scripts/study_draft_quality.lua -j 2 -o results/draft
--
-- Grid: flashspec.args.grid == "quick" runs the code workload only.
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local workloads = quick and { "code" } or { "code", "math", "dialogue" }
local drafts = { { "strong", fs.model "qwen3-8b-eagle3-q4_0" },
                 { "weak", fs.model "qwen3-0.6b-q4_0" } }
local policies = {
  { "Chain-SD", fs.policy.chain { k = 8 } },
  { "EdgeLLM", fs.policy.edgellm {} },
  { "Lever", fs.policy.lever {} },
}

local points, meta = {}, {}
local function add(m, pt)
  points[#points + 1] = pt
  meta[#points] = m
end
for _, w in ipairs(workloads) do
  -- Flash-AR does not draft: one reference point per workload
  add({ workload = w, draft = "-", policy = "Flash-AR" },
      { trace = fs.trace("traces/data/workload-" .. w .. "-strong.h5"),
        draft = drafts[1][2], policy = fs.policy.flash_ar {} })
  for _, d in ipairs(drafts) do
    local tr = fs.trace("traces/data/workload-" .. w .. "-" .. d[1] .. ".h5")
    for _, pol in ipairs(policies) do
      add({ workload = w, draft = d[1], policy = pol[1] },
          { trace = tr, draft = d[2], policy = pol[2] })
    end
  end
end
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                        dram_fraction = 0.0, max_new_tokens = 128, seed = 1, points = points }

local ar = {}
for i, r in ipairs(rows) do
  if meta[i].policy == "Flash-AR" and not r.error then ar[meta[i].workload] = r.tokens_per_s end
end

local fmt = "%-9s %-7s %-9s %27s %7s %8s %7s %8s"
print(string.format(fmt, "workload", "draft", "policy", "tok/s [lo, hi]", "accept", "speedup",
                    "dram_gb", "draft_ms"))
local logs = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  if r.error then
    local what = r.error:find("does not fit", 1, true) and "does not fit" or "failed"
    print(string.format("%-9s %-7s %-9s %27s", m.workload, m.draft, m.policy, what))
  else
    local sp = ar[m.workload] and r.tokens_per_s / ar[m.workload]
    if sp and m.policy ~= "Flash-AR" then
      local k = m.draft .. "|" .. m.policy
      local g = logs[k] or { 0, 0 }
      logs[k] = { g[1] + math.log(sp), g[2] + 1 }
    end
    print(string.format("%-9s %-7s %-9s %8.3f [%8.3f, %8.3f] %7.2f %8s %7.2f %8.1f", m.workload,
                        m.draft, m.policy, r.tokens_per_s, r.tokens_per_s_lo, r.tokens_per_s_hi,
                        r.mean_accepted, sp and string.format("%7.2fx", sp) or "-",
                        r.dram_bytes / 1e9, r.draft_ms))
  end
end

print("")
print(string.format("%-16s %9s %9s %12s", "geomean speedup", "strong", "weak", "weak/strong"))
for _, pol in ipairs(policies) do
  local s, w = logs["strong|" .. pol[1]], logs["weak|" .. pol[1]]
  local gs = s and math.exp(s[1] / s[2])
  local gw = w and math.exp(w[1] / w[2])
  print(string.format("%-16s %9s %9s %12s", pol[1], gs and string.format("%.2fx", gs) or "-",
                      gw and string.format("%.2fx", gw) or "-",
                      (gs and gw) and string.format("%.2f", gw / gs) or "-"))
end
