-- A small calibration problem for tests/cli/test_calibrate.py: a phone whose
-- verification throughput, set-up cost and a workload's acceptance are known.
--   --arg mode=truth   print the reference rows the known values give (CSV)
--   --arg mode=fit     fit them back from --arg ref=PATH (other args: starts,
--                      loo, max_iter, bad = which spec mistake to make)
local fs = flashspec
local A = fs.args
local truth = { npu_gflops = 700, verify_setup_us = 200000, a = 0.55 }

local function trace(a, seed)
  return fs.trace.synth { name = "w" .. seed, prompts = 8, prompt_len = 16, output_len = 64,
                          vocab = 32000, k = 4, depth = 8, nodes = 12, target_layers = 36,
                          exit_layers = { 18 }, accept = { a }, coverage = 0.9, seed = seed,
                          node_streams = true }
end

local function points(p)
  if A.bad == "raise" then error("points function failed on purpose") end
  local dev = fs.device("oneplus12", { name = "oneplus12", npu_gflops = p.npu_gflops,
                                       verify_setup_us = p.verify_setup_us })
  local pts = { { policy = fs.policy.flash_ar {}, trace = trace(0.5, 1) } }
  for _, seed in ipairs { 11, 12 } do
    for _, k in ipairs { 4, 8 } do
      pts[#pts + 1] = { policy = fs.policy.chain { k = k }, trace = trace(p.a, seed) }
    end
  end
  return { device = dev, target = fs.model "qwen3-8b-q4_0", draft = fs.model "qwen3-8b-eagle3-q4_0",
           max_new_tokens = 64, points = pts }
end

if A.mode == "truth" then
  local rows = fs.sweep(points(truth))
  print("target,policy,trace,tree_nodes,metric,value,source")
  for _, r in ipairs(rows) do
    if r.policy == "flash_ar" then
      print(string.format("%s,flash_ar,%s,1,ms_per_token,%.17g,truth", r.target, r.trace, r.ms_per_token))
    else
      local n = r.policy_params:match("k=(%d+)") + 1
      print(string.format("%s,chain,%s,%d,verify_ms-flash_ms,%.17g,truth", r.target, r.trace, n,
                          r.verify_ms - r.flash_ms))
      print(string.format("%s,chain,%s,%d,tokens_per_s,%.17g,truth", r.target, r.trace, n,
                          r.tokens_per_s))
    end
  end
  return
end

local params = {
  npu_gflops = { tonumber(A.s_gflops or "400"), 50, 5000 },
  verify_setup_us = { tonumber(A.s_setup or "50000"), 1, 3e6 },
  a = { tonumber(A.s_a or "0.35"), 0.01, 0.99 },
}
local spec = {
  name = "small", reference = A.ref, params = params, points = points,
  profile = { base = "oneplus12", name = "small-fit" },
  loo = A.loo or "approx", starts = tonumber(A.starts or "1"),
  max_iter = tonumber(A.max_iter or "100"),
  fd_step = 0.2, -- coarser than the plateaus of a small trace's acceptance
}
if A.bad == "bounds" then params.a = { 1.5, 0.01, 0.99 } end
if A.bad == "lohi" then params.a = { 0.5, 0.9, 0.1 } end
if A.bad == "key" then spec.refrence = spec.reference end
if A.bad == "nofn" then spec.points = {} end
if A.bad == "many" then
  for i = 1, 20 do params["extra" .. i] = { 0.5, 0, 1 } end
end
local fit = fs.calibrate(spec)
for _, k in ipairs(fit.order) do
  print(string.format("param %s %.17g %.17g", k, fit.params[k].value, fit.params[k].se))
end
print(string.format("rms %.17g loo %.17g", fit.rms, fit.loo_rms))
