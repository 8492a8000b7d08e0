-- Replay rate of single points: speculative cycles and tokens per host second.
local fs = flashspec
local tr = fs.trace.synth { prompts = 8, output_len = 4000, seed = 3 }
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
               draft = fs.model "qwen3-8b-eagle3-q4_0", trace = tr, max_new_tokens = 4000 }
for _, p in ipairs { fs.policy.flash_ar {}, fs.policy.chain { k = 8 } } do
  local cycles, tokens, wall = 0, 0, 0
  for seed = 1, 3 do
    local t = { policy = p, seed = seed }
    for k, v in pairs(base) do t[k] = v end
    local r = fs.run(t)
    cycles, tokens, wall = cycles + r.cycles, tokens + r.tokens, wall + r.sim_wall_s
  end
  print(string.format("replay %s %d %d %.6f", p.name, cycles, tokens, wall))
end
