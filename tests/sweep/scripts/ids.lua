-- Point ids and seeds: fs.run and fs.sweep agree point by point; the id
-- follows every parameter, and the same point gets the same id and result.
local fs = flashspec
local dev, tgt = fs.device "oneplus12", fs.model "qwen3-8b-q4_0"
local drf = fs.model "qwen3-8b-eagle3-q4_0"
local tr = fs.trace.synth { prompts = 2, output_len = 40, coverage = 0.3, seed = 9 }
local base = { device = dev, target = tgt, draft = drf, trace = tr, max_new_tokens = 40 }
local function with(extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end
local a = fs.run(with { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3 })
local b = fs.run(with { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3 })
assert(#a.point_id == 32 and a.point_id == b.point_id)
assert(a.tokens_per_s == b.tokens_per_s and a.cycles == b.cycles)
local s = fs.sweep(with { policy = fs.policy.chain { k = 8 }, dram_fraction = { 0.25, 0.5 },
                          seed = 3 })
assert(s[2].point_id == a.point_id and s[2].tokens_per_s == a.tokens_per_s)
assert(s[1].point_id ~= a.point_id)
local ids = { [a.point_id] = true }
for _, extra in ipairs {
  { policy = fs.policy.chain { k = 7 }, dram_fraction = 0.5, seed = 3 },
  { policy = fs.policy.chain { k = 8, unit = "npu" }, dram_fraction = 0.5, seed = 3 },
  { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 4 },
  { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3, max_new_tokens = 39 },
  { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3, prompts = 1 },
  { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3,
    trace = fs.trace.synth { prompts = 2, output_len = 40, coverage = 0.3, seed = 10 } },
  { policy = fs.policy.chain { k = 8 }, dram_fraction = 0.5, seed = 3,
    target = fs.model "qwen3-4b-q4_0", draft = fs.model "qwen3-4b-eagle3-q4_0" },
} do
  local r = fs.run(with(extra))
  assert(not ids[r.point_id], "two different points share an id")
  ids[r.point_id] = true
end
-- Flash-AR ignores the draft: with or without one it is the same point
local f1 = fs.run(with { policy = fs.policy.flash_ar {} })
local f2 = fs.run { device = dev, target = tgt, trace = tr, max_new_tokens = 40,
                    policy = fs.policy.flash_ar {} }
assert(f1.point_id == f2.point_id and f1.draft == "none")
-- explicit points: merged over the shared keys, in order, lists expanded
local p = fs.sweep(with { policy = fs.policy.flash_ar {}, dram_fraction = 0.1,
  points = { { seed = 5 }, { policy = fs.policy.chain { k = 2 }, dram_fraction = { 0.3, 0.6 } } } })
assert(#p == 3 and p[1].policy == "flash_ar" and p[1].seed == 5 and p[1].dram_fraction == 0.1)
assert(p[2].policy == "chain" and p[2].dram_fraction == 0.3 and p[3].dram_fraction == 0.6)
print("ids ok")
