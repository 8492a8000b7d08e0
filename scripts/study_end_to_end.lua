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
-- then the geometric-mean speedup of each policy overall and per phone, each
-- phone's speed-ups with their band over its standing variants, and
-- Llama-3.1-8B's acceptance-transfer bracket (the same speed-ups on its low
-- and high presets).
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

-- Llama-3.1-8B's presets come from a cross-source acceptance transfer whose
-- low and high ends are presets of their own (workload-W-lo-strong-llama3.1-8b.h5,
-- -hi-; traces/data/WORKLOADS.md): its points carry them as the trace's
-- acceptance bracket, so their model band (tokens_per_s_model_lo / _hi) spans
-- what the transfer cannot decide as well as the phone's standing variants.
local function trace_of(w, t)
  local tr = fs.trace(workload_trace(w, t))
  if t ~= "llama3.1-8b" then return tr end
  local function end_(e) return fs.trace("traces/data/workload-" .. w .. "-" .. e .. "-strong-llama3.1-8b.h5") end
  return tr:bracket(end_ "lo", end_ "hi")
end

local points, meta = {}, {}
for _, t in ipairs(targets) do
  local tgt, drf = fs.model(t .. "-q4_0"), fs.model(t .. "-eagle3-q4_0")
  for _, w in ipairs(workloads) do
    local tr = trace_of(w, t)
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

-- Each phone's speed-ups on its standing variants (the 8 Elite phones' parts
-- ranges, the OnePlus 12's model variants): the same points with the
-- phone's variant as the device, each over Flash-AR on that variant, run
-- for the script only (record = false); the band is the least and the most
-- geometric mean over the phone and its variants.
print("")
print("geomean speedup per phone with its model band (the same on each standing variant)")
print(string.format("%-16s %-15s %8s %17s  %s", "policy", "phone", "speedup", "band", "variants"))
for _, ph in ipairs(phones) do
  local per, names = {}, fs.device(ph).variants
  for _, v in ipairs(names) do
    local dv = fs.device(ph):variant(v)
    local vpts, vmeta = {}, {}
    for i, p in ipairs(points) do
      if meta[i].phone == ph then
        vpts[#vpts + 1] = { device = dv, target = p.target, draft = p.draft, trace = p.trace,
                            policy = p.policy }
        vmeta[#vpts] = meta[i]
      end
    end
    local vrows = fs.sweep { dram_fraction = 0.0, max_new_tokens = 128, seed = 1, record = false,
                             points = vpts }
    local var_ar = {}
    for i, r in ipairs(vrows) do
      if vmeta[i].policy == "Flash-AR" and not r.error then var_ar[key(vmeta[i])] = r.tokens_per_s end
    end
    per[v] = {}
    for i, r in ipairs(vrows) do
      local m = vmeta[i]
      if not r.error and var_ar[key(m)] then
        local g = per[v][m.policy] or { 0, 0 }
        g[1], g[2] = g[1] + math.log(r.tokens_per_s / var_ar[key(m)]), g[2] + 1
        per[v][m.policy] = g
      end
    end
  end
  for _, pol in ipairs(policies) do
    local g = logs[pol[1]] and logs[pol[1]][ph]
    if g then
      local own = math.exp(g[1] / g[2])
      local lo, hi, parts = own, own, {}
      for _, v in ipairs(names) do
        local gv = per[v][pol[1]]
        if gv then
          local x = math.exp(gv[1] / gv[2])
          lo, hi = math.min(lo, x), math.max(hi, x)
          parts[#parts + 1] = string.format("%s %.2fx", v, x)
        end
      end
      print(string.format("%-16s %-15s %7.2fx %17s  %s", pol[1], ph, own,
                          string.format("[%.2f, %.2f]", lo, hi), table.concat(parts, ", ")))
    end
  end
end

-- Llama-3.1-8B's presets come from the like-for-like transfer through a
-- cross-source ratio; its low and high ends are presets of their own
-- (workload-W-lo-strong-llama3.1-8b.h5, -hi-; traces/data/WORKLOADS.md): the
-- same points replayed on them bracket what the transfer cannot decide.
local has_llama = false
for _, t in ipairs(targets) do has_llama = has_llama or t == "llama3.1-8b" end
if has_llama then
  local tgt, drf = fs.model "llama3.1-8b-q4_0", fs.model "llama3.1-8b-eagle3-q4_0"
  local bpts, bmeta = {}, {}
  for _, end_ in ipairs { "lo", "hi" } do
    for _, w in ipairs(workloads) do
      local tr = fs.trace("traces/data/workload-" .. w .. "-" .. end_ .. "-strong-llama3.1-8b.h5")
      for _, ph in ipairs(phones) do
        for _, pol in ipairs(policies) do
          bpts[#bpts + 1] = { device = fs.device(ph), target = tgt, draft = drf, trace = tr,
                              policy = pol[2] }
          bmeta[#bpts] = { at = end_, w = w, phone = ph, policy = pol[1] }
        end
      end
    end
  end
  local brows = fs.sweep { dram_fraction = 0.0, max_new_tokens = 128, seed = 1, record = false,
                           points = bpts }
  local base, sums = {}, {}
  for i, r in ipairs(brows) do
    local m = bmeta[i]
    if r.error then error(r.error) end
    if m.policy == "Flash-AR" then base[m.at .. "|" .. m.w .. "|" .. m.phone] = r.tokens_per_s end
  end
  for i, r in ipairs(brows) do
    local m = bmeta[i]
    local k = m.policy .. "|" .. m.at
    local g = sums[k] or { 0, 0 }
    g[1], g[2] = g[1] + math.log(r.tokens_per_s / base[m.at .. "|" .. m.w .. "|" .. m.phone]),
                 g[2] + 1
    sums[k] = g
  end
  local central = {}
  for i, r in ipairs(rows) do
    local m = meta[i]
    if m.target == "llama3.1-8b" and not r.error then
      local g = central[m.policy] or { 0, 0 }
      g[1], g[2] = g[1] + math.log(r.tokens_per_s / ar[key(m)]), g[2] + 1
      central[m.policy] = g
    end
  end
  print("")
  print("Llama-3.1-8B's acceptance-transfer bracket (its lo / hi presets): geomean speedup over " ..
        "Flash-AR, every workload and phone")
  print(string.format("%-16s %9s %9s %9s", "policy", "lo", "presets", "hi"))
  for _, pol in ipairs(policies) do
    local function gm(g) return g and string.format("%.2fx", math.exp(g[1] / g[2])) or "-" end
    print(string.format("%-16s %9s %9s %9s", pol[1], gm(sums[pol[1] .. "|lo"]),
                        gm(central[pol[1]]), gm(sums[pol[1] .. "|hi"])))
  end
end
