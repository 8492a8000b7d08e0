local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
local r = fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                   draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,
                   policy = fs.policy.chain { k = 4 }, max_new_tokens = 8, seed = 1 }
print(r.tokens_per_s, r.mean_accepted, r.verify_ms)
