-- The default experiment (`flashspec demo`): Flash-AR against Chain-SD for
-- Qwen3-8B (Q4_0) with its EAGLE-3 draft on the OnePlus 12 profile, fully
-- flash-backed (0% of the target's layers pinned in DRAM), replaying the bundled
-- synthetic trace.  Prints throughput, speedup, mean accepted length and the
-- per-cycle latency breakdown (ms; resource columns are busy time).
local fs    = flashspec
local dev   = fs.device "oneplus12"
local tgt   = fs.model  "qwen3-8b-q4_0"
local draft = fs.model  "qwen3-8b-eagle3-q4_0"
local tr    = fs.trace  "traces/data/synth-default.h5"

local rows = fs.sweep {
  device = dev, target = tgt, draft = draft, trace = tr,
  policy = { fs.policy.flash_ar{}, fs.policy.chain{ k = 8 } },
  dram_fraction = 0.0, max_new_tokens = 128, seed = 1,
}

local base = rows[1].tokens_per_s
print(string.format("flashspec %s -- %s on %s, DRAM fraction %.0f%%, trace %s (%d prompts x %d tokens)",
  fs.version, rows[1].target, rows[1].device, 100 * rows[1].dram_fraction, rows[1].trace,
  rows[1].prompts, rows[1].max_new_tokens))
print()
print(string.format("%-9s %8s %8s %9s %8s | %9s %8s %8s %8s %8s %8s %9s",
  "policy", "tok/s", "speedup", "accepted", "tok/cyc",
  "cycle_ms", "draft", "flash", "npu", "cpu", "kv", "verify"))
for _, r in ipairs(rows) do
  print(string.format("%-9s %8.3f %7.2fx %9.2f %8.2f | %9.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f",
    r.policy, r.tokens_per_s, r.tokens_per_s / base, r.mean_accepted, r.tokens_per_cycle,
    r.cycle_ms, r.draft_ms, r.flash_ms, r.npu_ms, r.cpu_ms, r.kv_ms, r.verify_ms))
end
