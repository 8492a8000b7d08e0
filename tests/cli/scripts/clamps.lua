-- Nothing goes silent: asking for more tokens than the trace holds, and a
-- tree cap the policy never reaches, each give one warning and the effective
-- value in the row.
local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5" -- 32 reference tokens per prompt
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                        draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,
                        policy = { fs.policy.lever { n_max = 127 }, fs.policy.eagle2 { total_tokens = 15 } },
                        max_new_tokens = 1024, seed = { 1, 2 } }
for _, r in ipairs(rows) do
  assert(r.max_new_tokens == 1024 and r.effective_new_tokens == 32, r.effective_new_tokens)
end
assert(rows[1].verify_rows_max < 128 and rows[3].verify_rows_max == 16)
local r = fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0", trace = tr,
                   policy = fs.policy.flash_ar {}, max_new_tokens = 16 }
assert(r.effective_new_tokens == 16)
print("clamps ok")
