-- tests/calibrate: a phone whose NPU verification throughput (npu_gflops), fixed
-- cost of a multi-row verification (verify_setup_us) and per-graph launch cost
-- (launch_us) are known; test_calibrate.py fits them back.
--   --arg mode=truth           print the reference rows the known values give (CSV)
--   --arg mode=fit ref=PATH    fit them back (s_gflops, s_setup, s_launch: starts;
--                              loo, max_iter, name, profile: spec options)
--   --arg mode=check profile=NAME
--                              print the same rows for fs.device(NAME) (the set-up
--                              the constant alone, as the fits)
local fs = flashspec
local A = fs.args
local TRUTH = { npu_gflops = 700, verify_setup_us = 200000, launch_us = 600 }

local function trace(seed)
  return fs.trace.synth { name = "dev" .. seed, prompts = 2, prompt_len = 16, output_len = 64,
                          vocab = 32000, k = 4, depth = 8, nodes = 12, target_layers = 36,
                          exit_layers = { 18 }, accept = { 0.55 }, coverage = 0.9, seed = seed,
                          node_streams = true }
end

local function sweep(dev)
  local tr = trace(3)
  local pts = {}
  for _, m in ipairs { "qwen3-4b", "qwen3-8b" } do
    pts[#pts + 1] = { target = fs.model(m .. "-q4_0"), policy = fs.policy.flash_ar {} }
  end
  for _, b in ipairs { 16, 32 } do
    pts[#pts + 1] = { policy = fs.policy.eagle2 { top_k = 8, depth = 8, total_tokens = b - 1 } }
  end
  pts[#pts + 1] = { policy = fs.policy.chain { k = 8 } }
  return { device = dev, trace = tr, target = fs.model "qwen3-8b-q4_0",
           draft = fs.model "qwen3-8b-eagle3-q4_0", max_new_tokens = 64, points = pts }
end

local function overrides(p)
  -- the set-up is the constant alone: the shipped cost per tree graph is off
  return fs.device("oneplus12", { name = "oneplus12", npu_gflops = p.npu_gflops,
                                  verify_setup_us = p.verify_setup_us, launch_us = p.launch_us,
                                  verify_graph_us = 0 })
end

-- the reference rows: key columns target, policy, tree_nodes (+ device for check)
local function print_rows(rows)
  print("target,policy,tree_nodes,device,metric,value,source")
  for _, r in ipairs(rows) do
    local n = r.policy == "flash_ar" and 1 or r.policy == "chain" and 9
              or tonumber(r.policy_params:match("total_tokens=(%d+)")) + 1
    local function row(metric, v)
      print(string.format("%s,%s,%d,%s,%s,%.17g,truth", r.target, r.policy, n, r.device, metric, v))
    end
    if r.policy == "flash_ar" then
      row("ms_per_token", r.ms_per_token)
      row("npu_ms+cpu_ms", r.npu_ms + r.cpu_ms)
    elseif r.policy == "eagle2" then
      row("verify_ms-flash_ms", r.verify_ms - r.flash_ms)
    else
      row("tokens_per_s", r.tokens_per_s)
      row("verify_ms-flash_ms", r.verify_ms - r.flash_ms)
    end
  end
end

if A.mode == "truth" then
  print_rows(fs.sweep(sweep(overrides(TRUTH))))
  return
elseif A.mode == "check" then
  -- the written profile derives from the shipped one; the test phone's
  -- set-up is the constant alone, as in overrides()
  print_rows(fs.sweep(sweep(fs.device(A.profile, { name = A.profile, verify_graph_us = 0 }))))
  return
end

local fit = fs.calibrate {
  name = A.name or "device",
  reference = A.ref,
  params = {
    npu_gflops = { tonumber(A.s_gflops or "300"), 50, 5000 },
    verify_setup_us = { tonumber(A.s_setup or "50000"), 1, 3e6 },
    launch_us = { tonumber(A.s_launch or "200"), 1, 1e4 },
  },
  points = function(p) return sweep(overrides(p)) end,
  profile = { base = "oneplus12", name = A.profile or "cal-device-fit" },
  loo = A.loo or "approx",
  max_iter = tonumber(A.max_iter or "100"),
  holdout = A.holdout,
}
for _, k in ipairs(fit.order) do
  print(string.format("param %s %.17g %.17g", k, fit.params[k].value, fit.params[k].se))
end
print(string.format("rms %.17g loo_rms %.17g n %d p %d", fit.rms, fit.loo_rms, fit.n, fit.p))
print(string.format("holdout %d %.17g", fit.n_holdout, fit.holdout_rms))
