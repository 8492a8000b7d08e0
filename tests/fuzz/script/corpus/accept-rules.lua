local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
for _, acc in ipairs { "greedy", "top_p", "sampling" } do
  local ok, r = pcall(fs.run, { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                                draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr,
                                policy = fs.policy.eagle2 {}, accept = acc, top_p = 0.9,
                                temperature = 0.7, max_new_tokens = 5, seed = 3 })
  print(acc, ok, ok and r.tokens or r)
end
