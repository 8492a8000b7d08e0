-- tests/calibrate: a workload whose acceptance rate is known (accept = { 0.55 } on
-- two synthetic traces of different seeds); test_calibrate.py fits it back from
-- Chain-SD throughput and mean accepted tokens.
--   --arg mode=truth           print the reference rows the known value gives (CSV);
--                              rep=R draws the traces from other seeds (the phone's
--                              prompts are not the fit's)
--   --arg mode=fit ref=PATH    fit it back (s_a: start; starts, loo, name; boot=N:
--                              a parametric bootstrap of N replicates)
--   --arg prompts=N            prompts per trace (default 8)
local fs = flashspec
local A = fs.args
local TRUTH = { a = 0.55 }
local PROMPTS = tonumber(A.prompts or "8") -- fewer: a rougher response to a

-- replicate rep (0: the fit's own traces) draws from other seeds under the same
-- names, so that the reference rows match it
local function trace(a, seed, rep)
  return fs.trace.synth { name = "acc" .. seed, prompts = PROMPTS, prompt_len = 16, output_len = 64,
                          vocab = 32000, k = 4, depth = 8, nodes = 12, target_layers = 36,
                          exit_layers = { 18 }, accept = { a }, coverage = 0.9,
                          seed = seed + 1000 * (rep or 0), node_streams = true }
end

local function points(p, rep)
  local dev = fs.device("oneplus12", { name = "oneplus12", verify_setup_us = 200000 })
  local pts = {}
  for _, seed in ipairs { 11, 12 } do
    for _, k in ipairs { 4, 8 } do
      pts[#pts + 1] = { policy = fs.policy.chain { k = k }, trace = trace(p.a, seed, rep) }
    end
  end
  return { device = dev, target = fs.model "qwen3-8b-q4_0",
           draft = fs.model "qwen3-8b-eagle3-q4_0", max_new_tokens = 64, points = pts }
end

if A.mode == "truth" then
  print("trace,policy_params,metric,value,source")
  for _, r in ipairs(fs.sweep(points(TRUTH, tonumber(A.rep or "0")))) do
    for _, m in ipairs { "tokens_per_s", "mean_accepted" } do
      -- policy_params holds commas: a quoted field
      print(string.format("%s,\"%s\",%s,%.17g,truth", r.trace, r.policy_params, m, r[m]))
    end
  end
  return
end

local fit = fs.calibrate {
  name = A.name or "accept",
  reference = A.ref,
  params = { a = { tonumber(A.s_a or "0.3"), 0.05, 0.95 } },
  points = points,
  loo = A.loo or "approx",
  starts = tonumber(A.starts or "1"),
  fd_step = 0.2, -- coarser than the plateaus of a small trace's acceptance
  bootstrap = tonumber(A.boot or "0"),
}
for _, k in ipairs(fit.order) do
  local q = fit.params[k]
  print(string.format("param %s %.17g %.17g", k, q.value, q.se))
  print(string.format("interval %s %.17g %.17g %.17g", k, q.ci_lo, q.ci_hi, q.se_boot))
end
print(string.format("rms %.17g loo_rms %.17g n %d p %d", fit.rms, fit.loo_rms, fit.n, fit.p))
