-- Lever Tables 1 and 2 as simulated points, the inputs of the fidelity report
-- (analysis/fidelity.py with analysis/reference/lever_table1_2.csv).
--
--   build/sim/cli/flashspec run scripts/study_tables.lua -o /tmp/study_tables
--   /usr/bin/python3 analysis/fidelity.py /tmp/study_tables \
--       analysis/reference/lever_table1_2.csv
--
-- Setting of both tables: OnePlus 12 profile, whole target streamed from flash
-- (dram_fraction = 0), greedy, 128 new tokens, every prompt of the bundled
-- trace.
--
-- Table 1 (per-token Flash-AR latency): flash_ar on each of the four targets;
-- it verifies on the serial baseline runtime (runtime = "auto").  Compute is
-- npu_ms + cpu_ms, I/O is flash_ms, total is ms_per_token.
--
-- Table 2 (one verification with a tree budget of 16 / 32 nodes): the budget
-- counts the root, so a B-node tree is B rows through the target.  A tree of
-- exactly B nodes comes from eagle2 with total_tokens = B - 1: it keeps the
-- global best B - 1 draft nodes by joint draft probability, which is the shape
-- a confidence-ordered tree with a hard node budget takes (Lever's own
-- gain-cost tree stops on cost and has no fixed size; specinfer's fixed widths
-- would give exactly B nodes too, but in a shape that ignores the draft's
-- confidence).  Only the last cycles of a prompt, whose depth is capped by the
-- tokens left, verify fewer rows (verify_rows reports the mean).  The drafting
-- policies verify on the speculative runtime (runtime = "auto"), as the table
-- was measured.  The points cover all four targets; the table publishes two.
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

local rows = fs.sweep { device = dev, trace = tr, dram_fraction = 0.0, max_new_tokens = 128,
                        seed = 1, points = points }

local fmt = "%-18s %-9s %6s %10s %10s %10s %10s %8s"
print(string.format(fmt, "target", "policy", "rows", "compute", "I/O", "per-token", "verify",
                    "waste"))
for _, r in ipairs(rows) do
  if r.error then
    print(string.format("%-18s point %d failed: %s", "", r.point, r.error))
  else
    print(string.format("%-18s %-9s %6.1f %10.1f %10.1f %10.1f %10.1f %8.1f", r.target, r.policy,
                        r.verify_rows, r.npu_ms + r.cpu_ms, r.flash_ms, r.ms_per_token,
                        r.verify_ms, r.waste_ms))
  end
end
