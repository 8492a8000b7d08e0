-- Study: tuned knobs per DRAM budget.  On the default phone (OnePlus 12,
-- Qwen3-8B Q4_0 with its EAGLE-3 draft, code workload, greedy, 128 new
-- tokens), flashspec.tune chooses, for each pinned share of the target's
-- layers, the knobs of Chain-SD (k), Lever (n_max, theta, b_min, b_max) and
-- EdgeLLM (alpha0, budget) that maximise tokens/s on the first half of the
-- trace's prompts, and reports them on the other half -- next to each
-- policy's default knobs on that same held-out half, so the gain is not an
-- in-sample one.
--
--   build/sim/cli/flashspec tune scripts/study_tuned.lua -j 2 -o results/tuned
--
-- Grid: flashspec.args.grid == "quick" runs pinned shares 0 and 50% with a
-- smaller search budget.
local fs = flashspec
local args = fs.args or {}
local quick = args.grid == "quick"

local fractions = quick and { 0.0, 0.5 } or { 0.0, 0.2, 0.4, 0.6 }
local evals = quick and 90 or 240
local base = {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0",
  trace = fs.trace "traces/data/workload-code-strong.h5",
  max_new_tokens = 128, seed = 1,
}
local function with(extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

local studies = {
  { "Chain-SD", fs.policy.chain { k = 8 }, { k = { 1, 16 } }, { "k" } },
  { "Lever", fs.policy.lever {},
    { n_max = { 8, 64 }, theta = { 0.0, 0.5 }, b_min = { values = { 2, 4, 8 } },
      b_max = { values = { 8, 16 } } },
    { "n_max", "theta", "b_min", "b_max" } },
  { "EdgeLLM", fs.policy.edgellm {}, { alpha0 = { 1e-4, 0.5 }, budget = { 2, 16 } },
    { "alpha0", "budget" } },
}

local fmt = "%-9s %6s %27s %9s %9s %7s %6s  %s"
print(string.format(fmt, "policy", "pinned", "tok/s [lo, hi]", "default", "gain", "evals",
                    "train", "knobs"))
local gains = {}
for _, s in ipairs(studies) do
  local tuned = fs.tune(with { dram_fraction = fractions, policy = s[2], knobs = s[3],
                               holdout = 0.5, max_evals = evals })
  for i, r in ipairs(tuned) do
    -- the default knobs on the same held-out prompts
    local d = fs.run(with { dram_fraction = r.dram_fraction, policy = s[2],
                            prompt_offset = r.prompt_offset, prompts = r.prompts })
    local knobs = {}
    for _, k in ipairs(s[4]) do
      local v = r.tuned[k]
      knobs[#knobs + 1] = k .. "=" .. (math.type(v) == "float" and string.format("%.3g", v)
                                       or tostring(v))
    end
    local gain = r.tokens_per_s / d.tokens_per_s
    gains[s[1]] = (gains[s[1]] or 0) + math.log(gain)
    print(string.format("%-9s %5d%% %8.3f [%8.3f, %8.3f] %9.3f %8.2fx %7d %6.3f  %s", s[1],
                        math.floor(r.dram_fraction * 100 + 0.5), r.tokens_per_s,
                        r.tokens_per_s_lo, r.tokens_per_s_hi, d.tokens_per_s, gain,
                        r.tune_evals, r.tune_train, table.concat(knobs, " ")))
    assert(i <= #fractions)
  end
end
print("")
print("geomean gain of tuned over default knobs (held-out prompts)")
for _, s in ipairs(studies) do
  print(string.format("  %-9s %6.3fx", s[1], math.exp(gains[s[1]] / #fractions)))
end
