-- tests/calibrate: a workload whose acceptance rate is known (accept = { 0.55 } on
-- two synthetic traces of different seeds); test_calibrate.py fits it back from
-- Chain-SD throughput and mean accepted tokens.
--   --arg mode=truth           print the reference rows the known value gives (CSV);
--                              rep=R draws the traces from other seeds (the phone's
--                              prompts are not the fit's)
--   --arg mode=fit ref=PATH    fit it back (s_a: start; starts, loo, name; boot=N:
--                              a parametric bootstrap of N replicates)
--   --arg prompts=N            prompts per trace (default 8)
--   --arg two=1                fit one acceptance per trace (a11, a12): a difference
--                              step moves one trace's points only, and the fit
--                              reuses the other's (fit.points_reused); then print
--                              "exact N of M": fit.rows' predictions against a
--                              fresh fs.sweep of the fitted values, after a line
--                              "row METRIC PREDICTED tokens_per_s FRESH" per row
--   --arg peek=1               points also runs a point on its first trace before
--                              returning (fs.run): the trace is generated then, not
--                              with the others
--   --arg badsynth=1           points asks for a trace whose parameters are wrong
--                              (nodes < depth + 1): exit 78 naming its line
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
  local dev = fs.device("oneplus12", { name = "oneplus12", verify_setup_us = 200000,
                                        verify_graph_us = 0 }) -- one constant set-up
  local pts = {}
  for _, seed in ipairs { 11, 12 } do
    for _, k in ipairs { 4, 8 } do
      pts[#pts + 1] = { policy = fs.policy.chain { k = k },
                        trace = trace(p.a or p["a" .. seed], seed, rep) }
    end
    if A.peek == "1" and seed == 11 then
      fs.run { device = dev, target = fs.model "qwen3-8b-q4_0", draft = fs.model "qwen3-8b-eagle3-q4_0",
               max_new_tokens = 8, prompts = 1, policy = fs.policy.chain { k = 4 },
               trace = pts[1].trace }
    end
  end
  if A.badsynth == "1" then
    fs.trace.synth { name = "bad", depth = 8, nodes = 4, node_streams = true } -- BADSYNTH
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

local params = { a = { tonumber(A.s_a or "0.3"), 0.05, 0.95 } }
if A.two == "1" then
  params = { a11 = { tonumber(A.s_a or "0.3"), 0.05, 0.95 },
             a12 = { tonumber(A.s_a or "0.3") + 0.1, 0.05, 0.95 } }
end
local fit = fs.calibrate {
  name = A.name or "accept",
  reference = A.ref,
  params = params,
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
  local b = {}
  for i, v in ipairs(q.boot) do b[i] = string.format("%.17g", v) end
  print(string.format("boot %s %s", k, table.concat(b, " ")))
end
print(string.format("rms %.17g loo_rms %.17g n %d p %d", fit.rms, fit.loo_rms, fit.n, fit.p))
print(string.format("points run %d reused %d evaluations %d", fit.points_run, fit.points_reused,
                    fit.evaluations))
if A.two == "1" then
  local p = {}
  for k, q in pairs(fit.params) do p[k] = q.value end
  local rows, exact = fs.sweep(points(p)), 0
  for _, r in ipairs(fit.rows) do
    for _, s in ipairs(rows) do
      if s.trace == r.trace and s.policy_params == r.policy_params then
        print(string.format("row %s %.17g tokens_per_s %.17g", r.metric, r.predicted, s.tokens_per_s))
      end
      if s.trace == r.trace and s.policy_params == r.policy_params and s[r.metric] == r.predicted then
        exact = exact + 1
        break
      end
    end
  end
  print(string.format("exact %d of %d", exact, #fit.rows))
end
