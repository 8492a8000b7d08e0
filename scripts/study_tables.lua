-- Lever Tables 1, 2, 5 and 6's released curve as simulated points, the inputs of the fidelity
-- report (analysis/fidelity.py with configs/calibration/lever-oneplus12.csv,
-- the measurements the OnePlus 12 profile is fitted to, and with
-- analysis/reference/lever_table1_2.csv, which adds Table 2's waste).
--
--   build/sim/cli/flashspec run scripts/study_tables.lua -o /tmp/study_tables
--   /usr/bin/python3 analysis/fidelity.py /tmp/study_tables \
--       configs/calibration/lever-oneplus12.csv
--
-- Setting of Tables 1, 2 and 5: OnePlus 12 profile, whole target streamed from
-- flash (dram_fraction = 0), greedy, 128 new tokens, every prompt of the trace;
-- Table 6 pins 20-100% of the layers.
-- Every policy verifies on the phone's one runtime (sim/hw/sim_hw.h "The
-- runtime").
--
-- Table 1 (per-token Flash-AR latency): flash_ar on each of the four targets.
-- Compute is npu_ms + cpu_ms, I/O is flash_ms, total is ms_per_token.
--
-- Table 2 (one verification with a tree budget of 16 / 32 nodes): the budget
-- counts the root, so a B-node tree is B rows through the target.  A tree of
-- exactly B nodes comes from eagle2 with total_tokens = B - 1: it keeps the
-- global best B - 1 draft nodes by joint draft probability, which is the shape
-- a confidence-ordered tree with a hard node budget takes (Lever's own
-- gain-cost tree stops on cost and has no fixed size; specinfer's fixed widths
-- would give exactly B nodes too, but in a shape that ignores the draft's
-- confidence).  Only the last cycles of a prompt, whose depth is capped by the
-- tokens left, verify fewer rows (verify_rows reports the mean).  The table is
-- read as the tree-dependent part on top of the streamed I/O, verify_ms -
-- flash_ms (configs/calibration/README.md).  The points cover all four
-- targets; the table publishes two.
--
-- Table 5 (decode throughput): Qwen3-8B, Flash-AR, Chain-SD (k = 8), EdgeLLM
-- and Lever on the six workload presets (traces/data/WORKLOADS.md).
local fs = flashspec
local dev = fs.device "oneplus12"
local tr = fs.trace "traces/data/synth-default.h5"
local models = { "llama3.1-8b-q4_0", "qwen3-4b-q4_0", "qwen3-8b-q4_0", "qwen3-14b-q4_0" }
local budgets = { 16, 32 }

local points = {}
for _, m in ipairs(models) do
  local base = m:gsub("%-q4_0$", "")
  local tgt, drf = fs.model(m), fs.model(base .. "-eagle3-q4_0")
  points[#points + 1] = { target = tgt, draft = drf, policy = fs.policy.flash_ar {} }
  for _, b in ipairs(budgets) do
    points[#points + 1] = { target = tgt, draft = drf,
                            policy = fs.policy.eagle2 { top_k = 8, depth = 8,
                                                        total_tokens = b - 1 } }
  end
end

for _, w in ipairs { "code-strong", "math-strong", "dialogue-strong", "code-weak", "math-weak",
                    "dialogue-weak" } do
  local wt = fs.trace("traces/data/workload-" .. w .. ".h5")
  local drf = fs.model(w:find("strong") and "qwen3-8b-eagle3-q4_0" or "qwen3-0.6b-q4_0")
  for _, pol in ipairs { fs.policy.chain { k = 8 }, fs.policy.edgellm {}, fs.policy.lever {} } do
    points[#points + 1] = { target = fs.model "qwen3-8b-q4_0", draft = drf, trace = wt,
                            policy = pol }
  end
end

-- Table 6 (one released curve): Lever with the EAGLE-3 draft on MBPP as the
-- DRAM budget pins 20-100% of Qwen3-8B's layers (its 0% point is Table 5's)
local code = fs.trace "traces/data/workload-code-strong.h5"
for _, f in ipairs { 0.2, 0.4, 0.6, 0.8, 1.0 } do
  points[#points + 1] = { target = fs.model "qwen3-8b-q4_0",
                          draft = fs.model "qwen3-8b-eagle3-q4_0", trace = code,
                          policy = fs.policy.lever {}, dram_fraction = f }
end

local rows = fs.sweep { device = dev, trace = tr, dram_fraction = 0.0, max_new_tokens = 128,
                        seed = 1, points = points }

local fmt = "%-18s %-9s %-22s %5s %6s %10s %10s %10s %10s %8s %7s"
print(string.format(fmt, "target", "policy", "trace", "dram", "rows", "compute", "I/O",
                    "per-token", "verify", "waste", "tok/s"))
for _, r in ipairs(rows) do
  if r.error then
    print(string.format("%-18s point %d failed: %s", "", r.point, r.error))
  else
    print(string.format("%-18s %-9s %-22s %4.0f%% %6.1f %10.1f %10.1f %10.1f %10.1f %8.1f %7.3f",
                        r.target, r.policy, r.trace, 100 * r.dram_fraction, r.verify_rows,
                        r.npu_ms + r.cpu_ms,
                        r.flash_ms, r.ms_per_token, r.verify_ms, r.waste_ms, r.tokens_per_s))
  end
end
