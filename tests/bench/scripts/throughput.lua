-- Sweep throughput: 400 small points (a few ms each) over one shared trace.
local fs = flashspec
local tr = fs.trace.synth { prompts = 4, output_len = 1500, seed = 11 }
local d = {}
for i = 0, 99 do d[#d + 1] = i / 100 end
local rows = fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,
  policy = { fs.policy.chain { k = 4 }, fs.policy.chain { k = 6 } },
  dram_fraction = d, seed = { 1, 2 }, max_new_tokens = 1500,
}
print(#rows)
