local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
local lo = fs.trace.synth { prompts = 2, output_len = 8, accept = { 0.3 }, seed = 4 }
local br = tr:bracket(lo, tr)
print(#br.brackets, pcall(tr.bracket, tr), pcall(br.bracket, tr, br))
local rows = fs.sweep { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                        draft = fs.model "qwen3-8b-eagle3-q4_0", trace = br, record = false,
                        policy = { fs.policy.chain { k = 2 }, fs.policy.flash_ar {} },
                        max_new_tokens = 4, prompts = 1 }
print(rows[1].tokens_per_s_model_lo, rows[2].error, pcall(fs.run, { record = 1 }))
