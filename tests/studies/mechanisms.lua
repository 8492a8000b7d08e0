-- Every mechanism of Lever §4 and EdgeLLM §III can win or lose for a physical
-- reason (meson test studies/mechanisms): each one's gain, replayed on the
-- calibrated OnePlus 12 (Qwen3-8B, its EAGLE-3 draft, the three workload
-- presets, whole target streamed), moves the right way with the physical
-- parameter that drives it, and where the parameter's public range spans
-- both outcomes, the gain crosses 1.0 inside that range.  No shortcut of the
-- model (a padded graph, a head priced like another, a gate) may pin a gain.
--
--   CPU on-demand head against the eager NPU head, against the CPU's GEMV
--     bandwidth cpu_gbps over its public range 17.2-68.8 GB/s (a 3B model's
--     CPU runtime on this SoC class; 90% of LPDDR5X-9600's peak): the head's
--     rows cost less as the CPU reads faster, so the gain rises, below 1.0 at
--     17.2 and above at 68.8;
--   the same head against per-row NPU calls, against the cost of one
--     stand-alone NPU call npu_call_us, 0-5 ms (a FastRPC round trip is a few
--     hundred microseconds to several milliseconds): rises with the call's
--     cost, below 1.0 at 0 and above at 5 ms;
--   batch-aware drafting against one NPU launch per node: rises with the
--     call's cost (above 1.0 over the whole range);
--   predictor pruning against the compiled shapes: pruning pays only when the
--     kept rows fit a smaller graph, so its gain with every row count compiled
--     is above its gain with powers of two, and above 1.0;
--   EdgeLLM's provisional drafting against the draft's fall of acceptance per
--     tree level r, 0.452 (the EAGLE-3 fit) to 1 (a standalone draft as right
--     deep in a tree as at its root): the kept token was drafted deep in the
--     old tree, so the gain rises with r, below 1.0 at 0.452 and above at 1;
--   EdgeLLM's fallback against the share of the target pinned (0-100%): an
--     early verification costs a whole load while the target streams, so the
--     gain rises with the share, below 1.0 at 0 and above at 100%;
--   Lever's gain-cost trees against SpecInfer's static tree, against the
--     per-row verification rate npu_gflops (half to twice the fit): falls as
--     rows get cheaper, above 1.0 throughout; EdgeLLM's paced branches
--     against one branch: above 1.0 streamed and pinned.
-- Errors name the mechanism, the parameter value and the gains.
local fs = flashspec
local tgt, draft = fs.model "qwen3-8b-q4_0", fs.model "qwen3-8b-eagle3-q4_0"
local traces = {}
for i, t in ipairs { "code", "math", "dialogue" } do
  traces[i] = fs.trace("traces/data/workload-" .. t .. "-strong.h5")
end
local L, E = fs.policy.lever, fs.policy.edgellm
local NEW = 128

-- geometric mean over the traces of tokens/s of a against b, each on device d
local function gain(d, a, b, trs, frac)
  trs = trs or traces
  local points = {}
  for _, tr in ipairs(trs) do
    points[#points + 1] = { policy = a, trace = tr, device = d }
    points[#points + 1] = { policy = b, trace = tr, device = d }
  end
  local rows = fs.sweep { target = tgt, draft = draft, dram_fraction = frac or 0,
                          max_new_tokens = NEW, seed = 1, points = points }
  local s = 0
  for i = 1, #rows, 2 do
    for j = i, i + 1 do
      if rows[j].error then error(rows[j].error) end
    end
    s = s + math.log(rows[i].tokens_per_s / rows[i + 1].tokens_per_s)
  end
  return math.exp(s / (#rows // 2))
end

-- gains over a parameter's values: monotone in the direction dir ("rises":
-- non-decreasing, "falls": non-increasing) and moved (the last beyond the
-- first in that direction), and then, by cross: true, below
-- 1.0 at the first value and above at the last; false, above 1.0 at every
-- value; nil, no claim on 1.0
local function check(what, param, values, gains, dir, cross)
  local parts = {}
  for i, v in ipairs(values) do parts[i] = string.format("%s=%s: %.4fx", param, v, gains[i]) end
  print(what .. " -- " .. table.concat(parts, ", "))
  for i = 2, #gains do
    local wrong = (dir == "rises" and gains[i] < gains[i - 1]) or
                  (dir == "falls" and gains[i] > gains[i - 1])
    if wrong then
      error(string.format("%s: the gain should %s with %s but goes from %.4fx at %s to %.4fx at %s",
                          what, dir == "rises" and "rise" or "fall", param, gains[i - 1],
                          values[i - 1], gains[i], values[i]))
    end
  end
  if (dir == "rises" and not (gains[#gains] > gains[1])) or
     (dir == "falls" and not (gains[#gains] < gains[1])) then
    error(string.format("%s: the gain does not move with %s (%.4fx at %s, %.4fx at %s)", what,
                        param, gains[1], values[1], gains[#gains], values[#values]))
  end
  if cross and not (gains[1] < 1 and gains[#gains] > 1) then
    error(string.format("%s: the gain does not cross 1.0 within %s = %s..%s (%.4fx, %.4fx)",
                        what, param, values[1], values[#values], gains[1], gains[#gains]))
  end
  if cross == false then
    for i, g in ipairs(gains) do
      if not (g > 1) then
        error(string.format("%s: the gain is %.4fx at %s = %s, not above 1.0", what, g, param,
                            values[i]))
      end
    end
  end
end

local function device(over)
  return fs.device("oneplus12", over)
end

-- the CPU head against the eager NPU head, over the CPU's GEMV bandwidth
do
  local values, gains = { 17.2, 38.6, 68.8 }, {}
  for i, g in ipairs(values) do
    gains[i] = gain(device { name = "mech-cpu" .. i, cpu_gbps = g }, L {},
                    L { projection = "npu_eager" })
  end
  check("on-demand CPU head vs eager NPU head", "cpu_gbps", values, gains, "rises", true)
end

-- the CPU head against per-row NPU calls, and batch-aware drafting against
-- one NPU launch per node, over the cost of a stand-alone NPU call
do
  local values, head, sched = { 0, 2500, 5000 }, {}, {}
  for i, us in ipairs(values) do
    local d = device { name = "mech-call" .. i, npu_call_us = us }
    head[i] = gain(d, L {}, L { projection = "npu_on_demand" })
    sched[i] = gain(d, L {}, L { draft_schedule = "npu" })
  end
  check("on-demand CPU head vs per-row NPU calls", "npu_call_us", values, head, "rises", true)
  check("batch-aware drafting vs one NPU launch per node", "npu_call_us", values, sched, "rises",
        false)
end

-- pruning against the compiled shapes
do
  local every = {}
  for i = 1, 64 do every[i] = i end
  every[65], every[66] = 128, 256
  local pow2 = gain(device { name = "mech-pow2" }, L {}, L { pruning = "none" })
  local all = gain(device { name = "mech-every", npu_shapes = every }, L {}, L { pruning = "none" })
  check("predictor pruning vs none", "shapes", { "powers of two", "every row count" },
        { pow2, all }, "rises", nil)
  if not (all > 1) then
    error(string.format("predictor pruning with every row count compiled: %.4fx, not above 1.0",
                        all))
  end
end

-- provisional drafting against the draft's fall per level
do
  local values, gains = { 0.452, 0.913, 1.0 }, {}
  for i, r in ipairs(values) do
    local accept = {}
    for d = 1, 8 do accept[d] = 0.940294 * r ^ (d - 1) end
    local tr = fs.trace.synth {
      prompts = 16, prompt_len = 64, output_len = NEW, vocab = 151936, k = 4, depth = 8,
      nodes = 12, target_layers = 36, exit_layers = { 18 }, calibration = 0.7,
      predictor_accuracy = 0.85, accept = accept, coverage = 0.976118, seed = 1102,
      node_streams = true, target = "qwen3-8b-q4_0", draft = "qwen3-8b-eagle3-q4_0",
    }
    gains[i] = gain(device { name = "mech-prov" .. i }, E {}, E { provisional = false }, { tr })
  end
  check("EdgeLLM provisional drafting vs none", "r", values, gains, "rises", true)
end

-- EdgeLLM's fallback against the share of the target pinned in DRAM: an early
-- verification pays a whole load while most of the target streams, and
-- little once it is pinned
do
  local values, gains = { 0, 0.5, 1.0 }, {}
  for i, f in ipairs(values) do
    gains[i] = gain(device { name = "mech-fb" .. i }, E { provisional = false },
                    E { fallback = false, provisional = false }, nil, f)
  end
  check("EdgeLLM fallback vs none", "dram_fraction", values, gains, "rises", true)
end

-- Lever's gain-cost trees against SpecInfer's static tree, against the
-- verification's per-row rate npu_gflops (half to twice the fit): the
-- static tree's extra rows cost less as rows get cheaper, so the gain falls,
-- and stays above 1.0; EdgeLLM's paced branches against one branch, whole
-- target streamed and pinned: above 1.0
do
  local values, gains = { 346.751, 693.502, 1387.004 }, {}
  for i, g in ipairs(values) do
    gains[i] = gain(device { name = "mech-gf" .. i, npu_gflops = g }, L {},
                    L { drafting = "specinfer" })
  end
  check("Lever gain-cost trees vs SpecInfer's tree", "npu_gflops", values, gains, "falls", false)
  local fr, pace = { 0, 1.0 }, {}
  for i, f in ipairs(fr) do
    pace[i] = gain(device { name = "mech-pace" .. i }, E { fallback = false, provisional = false },
                   E { navigation = false, fallback = false, provisional = false }, nil, f)
  end
  check("EdgeLLM paced branches vs one branch", "dram_fraction", fr, pace, nil, false)
end
print("mechanisms: every gain moves with its parameter")
