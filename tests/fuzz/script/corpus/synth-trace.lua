local fs = flashspec
local tr = fs.trace.synth { prompts = 2, output_len = 8, nodes = 12, depth = 4, seed = 7,
                            accept = { 0.9, 0.5 }, exit_layers = { 9, 18 } }
local r = fs.run { device = fs.device "sd8elite_ufs41", target = fs.model "qwen3-0.6b-q4_0",
                   draft = fs.model "qwen3-4b-eagle3-q4_0", trace = tr,
                   policy = fs.policy.lever { exit_index = 1, b_min = 2 }, max_new_tokens = 8 }
print(r.tokens, r.coverage)
