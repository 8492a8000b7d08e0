-- Study: EdgeLLM's own smartphone setting, predicted before any comparison.
-- llama.cpp on the CPU with the target memory-mapped from flash
-- (runtime/llamacpp-cpu; docs/experiments.md, "The CPU runtime") on the
-- Xiaomi 10 and the Xiaomi 11 as sold; 13B targets with the 7B draft of their
-- family (LLaMA-2-Chat-13B / 7B, Vicuna-13B / 7B, Q4_0); the workload presets
-- of these pairs (traces/data/WORKLOADS.md, "EdgeLLM's model pairs"):
-- CNN/DailyMail, SQuAD, TruthfulQA, and translation as its bracket (lo, hi);
-- Parrot, which has no figure, as a band only (1b);
-- greedy acceptance, 128 new tokens, the draft on the CPU.
--
--   build/sim/cli/flashspec sweep scripts/study_edgellm_phones.lua -j 2 -o results/edgellm
--
-- EdgeLLM and its paper's baselines, as flashspec runs them:
--   Std        the target alone, swapped in (flash_ar);
--   SPL        the target alone with a compute-load pipeline: the same
--              runtime with a loader that reads one layer ahead of the
--              compute (prefetch_layers = 1, one request per thread in flight);
--   SP         fixed-length speculative decoding (chain, k = 8);
--   SI         SpecInfer's static tree (specinfer, its default widths);
--   BLD        Big Little Decoder (bld: the draft runs until its confidence
--              falls below 0.6, then one target pass);
--   EdgeLLM    edgellm with its defaults.
--   STI        elastic pipelining (Guo et al., ASPLOS 2023): SPL's loader
--              reading the streamed layers at a lower bit width
--              (stream_bits; docs/policies.md, "Baselines that are
--              runtimes"): 3.4375 bits a weight (llama.cpp's Q3_K block), its
--              bracket 2.625 (Q2_K: every shard at the lowest width) to 4.5
--              (the model's Q4_0: STI is then SPL).  The text the lower widths
--              would change is not modelled: STI emits the trace's tokens.
--
-- Tables: (1) per-token generation time of every policy on every phone, pair
-- and dataset, with its model band (the phone's parts ranges: the standing
-- variants parts_slow and parts_fast), the time to the 256th token at that
-- rate and the energy per token; (2) EdgeLLM's speed-up over each baseline per
-- phone, the geometric mean over pairs and datasets, with its model band (the
-- same speed-up on each standing variant of the phone); (3) the memory-budget
-- sweep: on the Xiaomi 10, EdgeLLM and Std with 5 to 12 GB for the runtime,
-- the page cache keeping the largest share of the target's layers that fits
-- beside the resident draft.
--
-- Grid: flashspec.args.grid == "quick" runs the LLaMA-2 pair on SQuAD, the
-- Xiaomi 10, Std, SP and EdgeLLM, and a two-budget sweep.
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local datasets = { "cnndm", "squad", "truthfulqa", "translation-lo", "translation-hi" }
local pairs_ = {
  { "llama2-chat", "llama2-13b-chat-q4_0", "llama2-7b-chat-q4_0", "llama2-13b-chat" },
  { "vicuna", "vicuna-13b-q4_0", "vicuna-7b-q4_0", "vicuna-13b" },
}
local phones = { "xiaomi10", "xiaomi11" }
local policies = {
  { "Std", fs.policy.flash_ar {} },
  { "SPL", fs.policy.flash_ar {}, { prefetch_layers = 1 } },
  { "STI", fs.policy.flash_ar {}, { prefetch_layers = 1, stream_bits = 3.4375 } },
  { "SP", fs.policy.chain { k = 8, unit = "cpu" } },
  { "SI", fs.policy.specinfer { unit = "cpu" } },
  { "BLD", fs.policy.bld { unit = "cpu" } },
  { "EdgeLLM", fs.policy.edgellm { unit = "cpu" } },
}
local budgets = { 5, 6, 8, 10, 12 }
if quick then
  datasets, pairs_, phones = { "squad" }, { pairs_[1] }, { "xiaomi10" }
  policies = { policies[1], policies[4], policies[7] }
  budgets = { 6, 10 }
end
local NEW = 128

local function trace_of(pr, ds)
  return fs.trace("traces/data/workload-" .. ds .. "-weak-" .. pr[4] .. ".h5")
end

-- the device a policy runs on: the phone, its SPL loader, or a standing
-- variant of either
local devs = {}
local function device_of(phone, pol, variant)
  local k = phone .. "|" .. pol[1] .. "|" .. (variant or "")
  if not devs[k] then
    local d = fs.device(phone)
    if pol[3] then
      local over = { name = phone .. "-" .. pol[1]:lower() }
      for key, v in pairs(pol[3]) do over[key] = v end
      d = fs.device(phone, over)
    end
    devs[k] = variant and d:variant(variant) or d
  end
  return devs[k]
end

-- (1) every policy, phone, pair and dataset on the phone itself
local points, meta = {}, {}
for _, ph in ipairs(phones) do
  for _, pr in ipairs(pairs_) do
    local tgt, drf = fs.model(pr[2]), fs.model(pr[3])
    for _, ds in ipairs(datasets) do
      for _, pol in ipairs(policies) do
        points[#points + 1] = { device = device_of(ph, pol), target = tgt, draft = drf,
                                trace = trace_of(pr, ds), policy = pol[2],
                                tags = { baseline = pol[1], workload = ds } }
        meta[#points] = { phone = ph, pair = pr[1], data = ds, policy = pol[1] }
      end
    end
  end
end
local rows = fs.sweep { max_new_tokens = NEW, seed = 1, accept = "greedy", dram_fraction = 0,
                        points = points }

print("== per-token generation time (page cache keeping none of the target: strict LRU)")
local fmt = "%-8s %-11s %-14s %-8s %10s %21s %9s %9s %6s"
print(string.format(fmt, "phone", "pair", "dataset", "policy", "ms/token", "model band [lo, hi]",
                    "256th (s)", "J/token", "accept"))
local tps = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  if r.error then error(m.phone .. " " .. m.pair .. " " .. m.data .. " " .. m.policy .. ": " ..
                        r.error) end
  tps[table.concat({ m.phone, m.pair, m.data, m.policy }, "|")] = r.tokens_per_s
  local lo, hi = r.tokens_per_s_model_lo, r.tokens_per_s_model_hi
  print(string.format(fmt, m.phone, m.pair, m.data, m.policy,
                      string.format("%.1f", 1000 / r.tokens_per_s),
                      lo == lo and string.format("[%.1f, %.1f]", 1000 / hi, 1000 / lo) or "-",
                      string.format("%.1f", 256 / r.tokens_per_s),
                      string.format("%.2f", r.joules_per_token),
                      string.format("%.2f", r.mean_accepted)))
end

-- (1b) Parrot (paraphrase): no public acceptance figure for these pairs or any
-- near pair (traces/data/WORKLOADS.md, "EdgeLLM's model pairs", item 6), so
-- no point estimate: only the band between translation's low end and
-- CNN/DailyMail, each on the phone and its standing variants (the trace's
-- acceptance bracket, tr:bracket).
if not quick then
  print("")
  print("== Parrot: no point estimate; ms/token band between translation-lo and cnndm " ..
        "(each on the phone and its variants)")
  local ppts, pmeta = {}, {}
  for _, ph in ipairs(phones) do
    for _, pr in ipairs(pairs_) do
      local tgt, drf = fs.model(pr[2]), fs.model(pr[3])
      local tr = trace_of(pr, "cnndm"):bracket(trace_of(pr, "translation-lo"))
      for _, pol in ipairs(policies) do
        ppts[#ppts + 1] = { device = device_of(ph, pol), target = tgt, draft = drf, trace = tr,
                            policy = pol[2], tags = { baseline = pol[1], workload = "parrot" } }
        pmeta[#ppts] = { phone = ph, pair = pr[1], policy = pol[1] }
      end
    end
  end
  local prows = fs.sweep { max_new_tokens = NEW, seed = 1, accept = "greedy", dram_fraction = 0,
                           points = ppts }
  for i, r in ipairs(prows) do
    local m = pmeta[i]
    if r.error then error(r.error) end
    print(string.format("%-8s %-11s %-14s %-8s %10s %21s", m.phone, m.pair, "parrot", m.policy,
                        "-", string.format("[%.1f, %.1f]", 1000 / r.tokens_per_s_model_hi,
                                           1000 / r.tokens_per_s_model_lo)))
  end
end

-- (2) EdgeLLM over each baseline per phone, with the band over the variants
local function speedups(ph, variant)
  local pts, mt = {}, {}
  for _, pr in ipairs(pairs_) do
    local tgt, drf = fs.model(pr[2]), fs.model(pr[3])
    for _, ds in ipairs(datasets) do
      for _, pol in ipairs(policies) do
        pts[#pts + 1] = { device = device_of(ph, pol, variant), target = tgt, draft = drf,
                          trace = trace_of(pr, ds), policy = pol[2] }
        mt[#pts] = { pair = pr[1], data = ds, policy = pol[1] }
      end
    end
  end
  local rs = variant and fs.sweep { max_new_tokens = NEW, seed = 1, accept = "greedy",
                                    dram_fraction = 0, record = false, points = pts } or nil
  local by = {}
  for i, m in ipairs(mt) do
    local v = rs and rs[i].tokens_per_s or tps[table.concat({ ph, m.pair, m.data, m.policy }, "|")]
    by[m.pair .. "|" .. m.data] = by[m.pair .. "|" .. m.data] or {}
    by[m.pair .. "|" .. m.data][m.policy] = v
  end
  local out = {}
  for _, pol in ipairs(policies) do
    local s, n = 0, 0
    for _, b in pairs(by) do
      s, n = s + math.log(b.EdgeLLM / b[pol[1]]), n + 1
    end
    out[pol[1]] = math.exp(s / n)
  end
  return out
end

print("")
print("== EdgeLLM's speed-up over each baseline (geometric mean over pairs and datasets; " ..
      "band: the same on each standing variant of the phone)")
for _, ph in ipairs(phones) do
  local own = speedups(ph, nil)
  local each = {}
  for _, v in ipairs(fs.device(ph).variants) do each[v] = speedups(ph, v) end
  for _, pol in ipairs(policies) do
    if pol[1] ~= "EdgeLLM" then
      local lo, hi, parts = own[pol[1]], own[pol[1]], {}
      for _, v in ipairs(fs.device(ph).variants) do
        local g = each[v][pol[1]]
        lo, hi = math.min(lo, g), math.max(hi, g)
        parts[#parts + 1] = string.format("%s %.2fx", v, g)
      end
      print(string.format("%-8s EdgeLLM over %-4s %6.2fx  [%.2f, %.2f]  (%s)", ph, pol[1],
                          own[pol[1]], lo, hi, table.concat(parts, ", ")))
    end
  end
end

-- (2b) STI's bit-width bracket: EdgeLLM over STI with every streamed shard at
-- the lowest width and with none below the model's, on each phone itself
local STI_BRACKET = { 2.625, 4.5 }
local has_sti = false
for _, pol in ipairs(policies) do has_sti = has_sti or pol[1] == "STI" end
if has_sti then
  print("")
  print("== EdgeLLM over STI across STI's bit-width bracket (streamed shards at 2.625 and at " ..
        "4.5 bits a weight; geometric mean over pairs and datasets)")
  for _, ph in ipairs(phones) do
    local ends = {}
    for _, bits in ipairs(STI_BRACKET) do
      local d = fs.device(ph, { name = string.format("%s-sti-%g", ph, bits), prefetch_layers = 1,
                                stream_bits = bits })
      local pts, mt = {}, {}
      for _, pr in ipairs(pairs_) do
        for _, ds in ipairs(datasets) do
          pts[#pts + 1] = { device = d, target = fs.model(pr[2]), trace = trace_of(pr, ds),
                            policy = fs.policy.flash_ar {} }
          mt[#pts] = table.concat({ ph, pr[1], ds, "EdgeLLM" }, "|")
        end
      end
      local rs = fs.sweep { max_new_tokens = NEW, seed = 1, accept = "greedy", dram_fraction = 0,
                            record = false, points = pts }
      local sum = 0
      for i, r in ipairs(rs) do
        if r.error then error(r.error) end
        sum = sum + math.log(tps[mt[i]] / r.tokens_per_s)
      end
      ends[#ends + 1] = math.exp(sum / #rs)
    end
    print(string.format("%-8s EdgeLLM over STI %6.2fx at 2.625 bits, %6.2fx at 4.5 bits", ph,
                        ends[1], ends[2]))
  end
end

-- (3) the memory budget, under both readings of the page cache: strict LRU
-- (a pass over a target larger than the cache evicts what the next pass
-- needs first: nothing of the target survives, the budget only decides what
-- fits) and Linux's active list (the pages used twice stay: the largest share
-- of the target's layers that fits beside the draft and the KV caches,
-- tried from all down by 1/40)
print("")
print("== memory budget on the Xiaomi 10 (LLaMA-2-Chat pair, SQuAD): ms/token with nothing " ..
      "cached (strict LRU) and with the largest cached share that fits (active list)")
print(string.format("%-8s %-8s %14s %8s %14s %9s", "budget", "policy", "strict LRU", "cached",
                    "active list", "J/token"))
local pr = pairs_[1]
local tgt, drf = fs.model(pr[2]), fs.model(pr[3])
for _, gb in ipairs(budgets) do
  local d = fs.device("xiaomi10", { name = string.format("xiaomi10-%dgb", gb), dram_budget_gb = gb })
  for _, pol in ipairs { policies[1], policies[#policies] } do
    -- a share that does not fit is a configuration error (exit 78) raised
    -- before anything runs: caught here, the next share down is tried
    local best, none
    for k = 40, 0, -1 do
      local ok, r = pcall(fs.run, { device = d, target = tgt, draft = drf,
                                    trace = trace_of(pr, "squad"), policy = pol[2],
                                    dram_fraction = k / 40, max_new_tokens = NEW, seed = 1,
                                    accept = "greedy" })
      if ok then
        best = best or r
        if k == 0 then none = r end
      elseif not tostring(r):find("does not fit", 1, true) then
        error(r)
      end
      if best and k > 0 then
        -- the strict-LRU point: the same budget, nothing kept
        local ok0, r0 = pcall(fs.run, { device = d, target = tgt, draft = drf,
                                        trace = trace_of(pr, "squad"), policy = pol[2],
                                        dram_fraction = 0, max_new_tokens = NEW, seed = 1,
                                        accept = "greedy" })
        if ok0 then none = r0 end
        break
      end
    end
    if best then
      print(string.format("%-8s %-8s %14.1f %7.1f%% %14.1f %9.2f", gb .. " GB", pol[1],
                          1000 / none.tokens_per_s, 100 * best.dram_fraction,
                          1000 / best.tokens_per_s, best.joules_per_token))
    else
      print(string.format("%-8s %-8s %14s", gb .. " GB", pol[1], "does not fit"))
    end
  end
end
