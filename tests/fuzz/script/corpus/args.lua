--@ tokens=5 policy=lever dram=0.25 seed=3 grid=quick empty= weird=a=b
local fs = flashspec
local a = fs.args
local pol = fs.policy[a.policy or "chain"] or fs.policy.chain
local r = fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
                   draft = fs.model "qwen3-8b-eagle3-q4_0",
                   trace = fs.trace(a.trace or "traces/data/synth-small.h5"), policy = pol {},
                   dram_fraction = tonumber(a.dram) or 0, seed = math.tointeger(tonumber(a.seed)) or 1,
                   max_new_tokens = math.tointeger(tonumber(a.tokens)) or 4 }
for k, v in pairs(a) do print(k, v) end
print(r.tokens, a.empty == "", a.weird)
