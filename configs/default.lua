-- The default experiment (`flashspec demo`): the headline comparison of the
-- Lever evaluation on its default phone.  Qwen3-8B (Q4_0) on the OnePlus 12
-- profile, fully flash-backed (0% of the target's layers pinned in DRAM), greedy,
-- 128 new tokens, the code workload (MBPP) with the EAGLE-3 draft: Flash-AR,
-- Chain-SD (k = 8), EdgeLLM and Lever.  Prints throughput, the speedup over
-- Flash-AR, Lever Table 5's measurement of the same cell, and where a cycle's
-- time goes (ms per cycle; resource columns are busy time, so with overlap
-- they can add up to more than the cycle).
local fs    = flashspec
local dev   = fs.device "oneplus12"
local tgt   = fs.model  "qwen3-8b-q4_0"
local draft = fs.model  "qwen3-8b-eagle3-q4_0"
local tr    = fs.trace  "traces/data/workload-code-strong.h5"

local rows = fs.sweep {
  device = dev, target = tgt, draft = draft, trace = tr,
  policy = { fs.policy.flash_ar{}, fs.policy.chain{ k = 8 }, fs.policy.edgellm{},
             fs.policy.lever{} },
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}
-- Lever Table 5 (MBPP, EAGLE-3 draft) and Table 1 (Flash-AR: 1050.0 ms/token)
local published = { flash_ar = 1000 / 1050.0, chain = 1.296, edgellm = 1.434, lever = 1.753 }

local base = rows[1].tokens_per_s
print(string.format("flashspec %s -- %s on %s, DRAM fraction %.0f%%, trace %s (%d prompts x %d tokens)",
  fs.version, rows[1].target, rows[1].device, 100 * rows[1].dram_fraction, rows[1].trace,
  rows[1].prompts, rows[1].max_new_tokens))
print()
print(string.format("%-9s %8s %8s %9s %9s %8s | %9s %8s %8s %8s %8s %8s %6s",
  "policy", "tok/s", "speedup", "published", "accepted", "rows",
  "cycle_ms", "draft", "flash", "npu", "cpu", "kv", "proj"))
for _, r in ipairs(rows) do
  print(string.format("%-9s %8.3f %7.2fx %9.3f %9.2f %8.1f | %9.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6.1f",
    r.policy, r.tokens_per_s, r.tokens_per_s / base, published[r.policy], r.mean_accepted,
    r.verify_rows, r.cycle_ms, r.draft_ms, r.flash_ms, r.npu_ms, r.cpu_ms, r.kv_ms, r.proj_ms))
end
print()
print("Every verification streams the whole target from flash (flash column) and, beyond")
print("one row, pays the phone's fixed verification set-up (kv column) and one NPU pass")
print("per compiled row shape: a tree must earn that with accepted tokens.")
print()
print("Next steps:")
print("  scripts/reproduce                                 Lever's tables and ablations, with reports")
print("  build/sim/cli/flashspec sweep STUDY.lua -o DIR   your own sweep (docs/experiments.md)")
print("  build/sim/cli/flashspec calibrate configs/calibration/oneplus12.lua -o DIR")
print("                                                    refit the phone to measurements")
