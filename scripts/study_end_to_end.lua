-- Study: end-to-end decode throughput.  Four targets (Llama-3.1-8B, Qwen3-4B,
-- Qwen3-8B, Qwen3-14B; Q4_0, each with its EAGLE-3 draft) x four workloads
-- (HumanEval, code = MBPP, math = GSM8K, dialogue = MT-Bench; each target's own
-- strong-draft presets, traces/data/WORKLOADS.md) x
-- three phones (OnePlus 12, Snapdragon 8 Elite with UFS 3.1 and with UFS 4.1)
-- x four policies: Flash-AR, Chain-SD (8-token chain), EdgeLLM and Lever.
-- Setting: whole target streamed from flash (dram_fraction = 0), greedy
-- acceptance, 128 new tokens, every prompt of each trace.
--
-- Prints one row per point with tokens/s and its 95% bootstrap interval over
-- prompts, the speedup over Flash-AR on the same (target, workload, phone),
-- then the geometric-mean speedup of each policy overall and per phone.
--
--   build/sim/cli/flashspec sweep scripts/study_end_to_end.lua -j 2 -o results/e2e
--
-- Grid: flashspec.args.grid == "quick" runs a reduced grid (Qwen3-8B, code
-- workload, OnePlus 12, the four policies); anything else the full grid.
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local targets = { "llama3.1-8b", "qwen3-4b", "qwen3-8b", "qwen3-14b" }
local workloads = { "humaneval", "code", "math", "dialogue" }
local phones = { "oneplus12", "sd8elite_ufs31", "sd8elite_ufs41" }
if quick then targets, workloads, phones = { "qwen3-8b" }, { "code" }, { "oneplus12" } end
local policies = {
  { "Flash-AR", fs.policy.flash_ar {} },
  { "Chain-SD", fs.policy.chain { k = 8 } },
  { "EdgeLLM", fs.policy.edgellm {} },
  { "Lever", fs.policy.lever {} },
}

-- one explicit point per (target, workload, phone, policy): rows[i] is points[i]
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
    for _, ph in ipairs(phones) do
      local dev = fs.device(ph)
      for _, pol in ipairs(policies) do
        points[#points + 1] = { device = dev, target = tgt, draft = drf, trace = tr,
                                policy = pol[2] }
        meta[#points] = { target = t, workload = w, phone = ph, policy = pol[1] }
      end
    end
  end
end
local rows = fs.sweep { dram_fraction = 0.0, max_new_tokens = 128, seed = 1, points = points }

local function key(m) return m.target .. "|" .. m.workload .. "|" .. m.phone end
local ar = {}
for i, r in ipairs(rows) do
  if meta[i].policy == "Flash-AR" and not r.error then ar[key(meta[i])] = r.tokens_per_s end
end

local fmt = "%-12s %-9s %-15s %-9s %27s %7s %8s"
print(string.format(fmt, "target", "workload", "phone", "policy", "tok/s [lo, hi]", "accept",
                    "speedup"))
local logs = {} -- logs[policy][phone or "all"] = { sum, n }
local function add(pol, group, v)
  logs[pol] = logs[pol] or {}
  local g = logs[pol][group] or { 0, 0 }
  g[1], g[2] = g[1] + math.log(v), g[2] + 1
  logs[pol][group] = g
end
for i, r in ipairs(rows) do
  local m = meta[i]
  if r.error then
    local what = r.error:find("does not fit", 1, true) and "does not fit" or "failed"
    print(string.format("%-12s %-9s %-15s %-9s %27s", m.target, m.workload, m.phone, m.policy,
                        what))
  else
    local base = ar[key(m)]
    local sp = base and r.tokens_per_s / base
    if sp then
      add(m.policy, "all", sp)
      add(m.policy, m.phone, sp)
    end
    print(string.format("%-12s %-9s %-15s %-9s %8.3f [%8.3f, %8.3f] %7.2f %8s", m.target,
                        m.workload, m.phone, m.policy, r.tokens_per_s, r.tokens_per_s_lo,
                        r.tokens_per_s_hi, r.mean_accepted,
                        sp and string.format("%7.2fx", sp) or "-"))
  end
end

print("")
local head = { "geomean speedup", "all" }
for _, ph in ipairs(phones) do head[#head + 1] = ph end
local gfmt = "%-16s" .. string.rep(" %15s", #head - 1)
print(string.format(gfmt, table.unpack(head)))
for _, pol in ipairs(policies) do
  local cells = { pol[1] }
  for j = 2, #head do
    local g = logs[pol[1]] and logs[pol[1]][head[j]]
    cells[j] = g and string.format("%.2fx", math.exp(g[1] / g[2])) or "-"
  end
  print(string.format(gfmt, table.unpack(cells)))
end
