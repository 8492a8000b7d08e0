-- Flash-AR decode rate: one point at a time, then a sweep of 16 points on the
-- worker threads the command line gives (-j).  Prints
-- "single TOKENS WALL_S" and "sweep POINTS TOKENS" lines.
local fs = flashspec
local tr = fs.trace.synth { prompts = 8, output_len = 4000, seed = 3 }
local base = { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0", trace = tr,
               policy = fs.policy.flash_ar {}, max_new_tokens = 4000 }
local tokens, wall = 0, 0
for seed = 1, 3 do
  local t = { seed = seed }
  for k, v in pairs(base) do t[k] = v end
  local r = fs.run(t)
  tokens, wall = tokens + r.tokens, wall + r.sim_wall_s
end
print(string.format("single %d %.6f", tokens, wall))
local seeds = {}
for s = 11, 26 do seeds[#seeds + 1] = s end -- not the single points' seeds: no resume
local t = { seed = seeds }
for k, v in pairs(base) do t[k] = v end
local rows = fs.sweep(t)
local swept = 0
for _, r in ipairs(rows) do swept = swept + r.tokens end
print(string.format("sweep %d %d", #rows, swept))
