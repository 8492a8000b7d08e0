-- Study: tree budget.  Node caps of 16, 32, 64 and 128 for the tree policies,
-- each through its own cap parameter: Lever n_max (draft nodes), Sequoia
-- max_nodes (tree size, root included), EAGLE-2 total_tokens (draft nodes
-- kept for verification) and EdgeLLM max_tokens (draft tokens per tree with
-- the fallback).  Chain-SD (8-token chain) and Flash-AR are the fixed
-- references.  Qwen3-8B (Q4_0) with its EAGLE-3 draft on the OnePlus 12,
-- fully flash-backed, greedy, 128 new tokens, the three workloads
-- (strong-draft traces).
--
-- The bundled traces record up to 12 draft nodes per tree; larger trees get
-- the rest of their candidates synthesised by the replay, and the coverage
-- column shows the share of draft expansions served from recorded data.
-- Speedups are over Flash-AR on the same workload.
--
--   build/sim/cli/flashspec sweep scripts/study_tree_budget.lua -j 2 -o results/tree
--
-- Grid: flashspec.args.grid == "quick" runs the code workload, caps 16 and
-- 128, Lever and EAGLE-2 (plus the Flash-AR reference).
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local workloads = { "code", "math", "dialogue" }
local caps = { 16, 32, 64, 128 }
local tree = {
  { "Lever", function(n) return fs.policy.lever { n_max = n } end },
  { "Sequoia", function(n) return fs.policy.sequoia { max_nodes = n } end },
  { "EAGLE-2", function(n) return fs.policy.eagle2 { total_tokens = n } end },
  { "EdgeLLM", function(n) return fs.policy.edgellm { max_tokens = n } end },
}
local fixed = { { "Flash-AR", fs.policy.flash_ar {} }, { "Chain-SD", fs.policy.chain { k = 8 } } }
if quick then
  workloads, caps, tree, fixed = { "code" }, { 16, 128 }, { tree[1], tree[3] }, { fixed[1] }
end

local points, meta = {}, {}
for _, w in ipairs(workloads) do
  local tr = fs.trace("traces/data/workload-" .. w .. "-strong.h5")
  for _, f in ipairs(fixed) do
    points[#points + 1] = { trace = tr, policy = f[2] }
    meta[#points] = { workload = w, policy = f[1], cap = "-" }
  end
  for _, t in ipairs(tree) do
    for _, n in ipairs(caps) do
      points[#points + 1] = { trace = tr, policy = t[2](n) }
      meta[#points] = { workload = w, policy = t[1], cap = n }
    end
  end
end
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                        draft = fs.model "qwen3-8b-eagle3-q4_0", dram_fraction = 0.0,
                        max_new_tokens = 128, seed = 1, points = points }

local ar = {}
for i, r in ipairs(rows) do
  if meta[i].policy == "Flash-AR" and not r.error then ar[meta[i].workload] = r.tokens_per_s end
end
local fmt = "%-9s %-9s %5s %27s %7s %8s %6s %8s %8s"
print(string.format(fmt, "workload", "policy", "cap", "tok/s [lo, hi]", "accept", "speedup",
                    "rows", "verify", "coverage"))
local logs = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  if r.error then
    local what = r.error:find("does not fit", 1, true) and "does not fit" or "failed"
    print(string.format("%-9s %-9s %5s %27s", m.workload, m.policy, tostring(m.cap), what))
  else
    local sp = ar[m.workload] and r.tokens_per_s / ar[m.workload]
    if sp then
      local k = m.policy .. "|" .. tostring(m.cap)
      local g = logs[k] or { 0, 0 }
      logs[k] = { g[1] + math.log(sp), g[2] + 1 }
    end
    print(string.format("%-9s %-9s %5s %8.3f [%8.3f, %8.3f] %7.2f %8s %6.1f %8.1f %8.3f",
                        m.workload, m.policy, tostring(m.cap), r.tokens_per_s, r.tokens_per_s_lo,
                        r.tokens_per_s_hi, r.mean_accepted,
                        sp and string.format("%7.2fx", sp) or "-", r.verify_rows, r.verify_ms,
                        r.coverage))
  end
end

print("")
local sfmt = "%-16s" .. string.rep(" %8s", #caps)
local head = { "geomean speedup" }
for _, n in ipairs(caps) do head[#head + 1] = "cap " .. n end
print(string.format(sfmt, table.unpack(head)))
for _, f in ipairs(fixed) do
  local g = logs[f[1] .. "|-"]
  local cells = { f[1] }
  for j = 1, #caps do cells[j + 1] = g and string.format("%.2fx", math.exp(g[1] / g[2])) or "-" end
  print(string.format(sfmt, table.unpack(cells)))
end
for _, t in ipairs(tree) do
  local cells = { t[1] }
  for _, n in ipairs(caps) do
    local g = logs[t[1] .. "|" .. n]
    cells[#cells + 1] = g and string.format("%.2fx", math.exp(g[1] / g[2])) or "-"
  end
  print(string.format(sfmt, table.unpack(cells)))
end
