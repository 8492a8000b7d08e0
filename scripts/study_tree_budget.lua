-- Study: tree budget.  Tree-size caps of 16, 32, 64 and 128 nodes for the tree
-- policies.  Every size in this study counts the tree's nodes *including the
-- root* -- the rows one verification sends through the target's layers, the
-- convention of Lever Table 2 and of the verify_rows / verify_rows_max columns
-- -- and each policy gets the cap through its own parameter: Lever n_max and
-- EAGLE-2 total_tokens count draft nodes (cap - 1), Sequoia max_nodes counts
-- the tree (cap), EdgeLLM max_tokens counts draft tokens (cap - 1).
-- Chain-SD (8-token chain, 9 rows) and Flash-AR are the fixed references.
-- Qwen3-8B (Q4_0) with its EAGLE-3 draft on the OnePlus 12, fully
-- flash-backed, greedy, 128 new tokens, the three workloads (strong-draft
-- traces).
--
-- Whether a cap changes anything: `max` is the most rows any verification of
-- the point used; when it stays below the cap, the cap never bound and the
-- `binds` column says "no" -- the policy sized its trees by its own rule (Lever
-- stops when a node's reach per marginal latency no longer beats the tree's
-- gain/cost; Sequoia's DP picks the size that minimises latency per accepted
-- token), so every larger cap gives the same row.
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
-- n: tree nodes, root included (see above)
local tree = {
  { "Lever", function(n) return fs.policy.lever { n_max = n - 1 } end },
  { "Sequoia", function(n) return fs.policy.sequoia { max_nodes = n } end },
  { "EAGLE-2", function(n) return fs.policy.eagle2 { total_tokens = n - 1 } end },
  { "EdgeLLM", function(n) return fs.policy.edgellm { max_tokens = n - 1 } end },
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
local fmt = "%-9s %-9s %5s %27s %7s %8s %6s %5s %5s %8s %8s"
print(string.format(fmt, "workload", "policy", "cap", "tok/s [lo, hi]", "accept", "speedup",
                    "rows", "max", "binds", "verify", "coverage"))
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
    local binds = m.cap == "-" and "-" or (r.verify_rows_max >= m.cap and "yes" or "no")
    print(string.format("%-9s %-9s %5s %8.3f [%8.3f, %8.3f] %7.2f %8s %6.1f %5d %5s %8.1f %8.3f",
                        m.workload, m.policy, tostring(m.cap), r.tokens_per_s, r.tokens_per_s_lo,
                        r.tokens_per_s_hi, r.mean_accepted,
                        sp and string.format("%7.2fx", sp) or "-", r.verify_rows,
                        r.verify_rows_max, binds, r.verify_ms, r.coverage))
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
