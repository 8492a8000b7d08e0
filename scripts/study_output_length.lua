-- Study: output length.  max_new_tokens = 32, 64, 128, 256 and 512 under
-- Flash-AR, Chain-SD (8-token chain), EdgeLLM and Lever; Qwen3-8B (Q4_0) with
-- its EAGLE-3 draft on the OnePlus 12, fully flash-backed, greedy, the three
-- workloads.
--
-- The bundled workload traces hold 128 reference tokens per prompt, so this
-- study makes its own traces in memory with flashspec.trace.synth: the same
-- generator knobs and base seeds as traces/data/workload-*-strong.h5
-- (traces/data/WORKLOADS.md) but 512 reference tokens per prompt.  Every
-- length replays the first max_new_tokens tokens of the same trace, so the
-- lengths differ only in how far decoding goes (and in the KV cache it
-- needs).  The traces are deterministic (fixed seeds) and never written to
-- disk; they are not byte-identical to the bundled files in their first 128
-- tokens (the generator draws per trace), only statistically alike.
--
--   build/sim/cli/flashspec sweep scripts/study_output_length.lua -j 2 -o results/len
--
-- Grid: flashspec.args.grid == "quick" runs the code workload, lengths 32
-- and 512, Flash-AR and Lever.
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

-- generator knobs of traces/data/WORKLOADS.md (strong draft), 512 tokens out
local presets = {
  { "code", 0.760, 0.904, 1102 },
  { "math", 0.745, 0.898, 1201 },
  { "dialogue", 0.675, 0.870, 1301 },
}
local lengths = { 32, 64, 128, 256, 512 }
local policies = {
  { "Flash-AR", fs.policy.flash_ar {} },
  { "Chain-SD", fs.policy.chain { k = 8 } },
  { "EdgeLLM", fs.policy.edgellm {} },
  { "Lever", fs.policy.lever {} },
}
if quick then
  presets = { presets[1] }
  lengths = { 32, 512 }
  policies = { policies[1], policies[4] }
end

local points, meta = {}, {}
for _, p in ipairs(presets) do
  local tr = fs.trace.synth {
    prompts = 4, prompt_len = 64, output_len = 512, vocab = 151936, k = 4, depth = 8,
    nodes = 12, target_layers = 36, exit_layers = { 18 }, calibration = 0.7,
    predictor_accuracy = 0.85, accept = { p[2] }, coverage = p[3], seed = p[4],
    target = "qwen3-8b-q4_0", draft = "qwen3-8b-eagle3-q4_0",
  }
  for _, n in ipairs(lengths) do
    for _, pol in ipairs(policies) do
      -- the tag names the in-memory trace's workload in the results and reports
      points[#points + 1] = { trace = tr, max_new_tokens = n, policy = pol[2],
                              tags = { workload = p[1] } }
      meta[#points] = { workload = p[1], len = n, policy = pol[1] }
    end
  end
end
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                        draft = fs.model "qwen3-8b-eagle3-q4_0", dram_fraction = 0.0, seed = 1,
                        points = points }

local ar = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  if m.policy == "Flash-AR" and not r.error then ar[m.workload .. "|" .. m.len] = r.tokens_per_s end
end
local fmt = "%-9s %6s %-9s %27s %7s %8s %7s"
print(string.format(fmt, "workload", "tokens", "policy", "tok/s [lo, hi]", "accept", "speedup",
                    "dram_gb"))
local logs = {}
for i, r in ipairs(rows) do
  local m = meta[i]
  if r.error then
    local what = r.error:find("does not fit", 1, true) and "does not fit" or "failed"
    print(string.format("%-9s %6d %-9s %27s", m.workload, m.len, m.policy, what))
  else
    local base = ar[m.workload .. "|" .. m.len]
    local sp = base and r.tokens_per_s / base
    if sp then
      local k = m.len .. "|" .. m.policy
      local g = logs[k] or { 0, 0 }
      logs[k] = { g[1] + math.log(sp), g[2] + 1 }
    end
    print(string.format("%-9s %6d %-9s %8.3f [%8.3f, %8.3f] %7.2f %8s %7.2f", m.workload, m.len,
                        m.policy, r.tokens_per_s, r.tokens_per_s_lo, r.tokens_per_s_hi,
                        r.mean_accepted, sp and string.format("%7.2fx", sp) or "-",
                        r.dram_bytes / 1e9))
  end
end

print("")
local sfmt = "%-16s" .. string.rep(" %9s", #lengths)
local head = { "geomean speedup" }
for _, n in ipairs(lengths) do head[#head + 1] = n .. " tok" end
print(string.format(sfmt, table.unpack(head)))
for _, pol in ipairs(policies) do
  local cells = { pol[1] }
  for _, n in ipairs(lengths) do
    local g = logs[n .. "|" .. pol[1]]
    cells[#cells + 1] = g and string.format("%.2fx", math.exp(g[1] / g[2])) or "-"
  end
  print(string.format(sfmt, table.unpack(cells)))
end
