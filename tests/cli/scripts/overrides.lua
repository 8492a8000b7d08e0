-- flashspec.device/model with an override table; every check is an assert.
local fs = flashspec
local tr = fs.trace "traces/data/synth-small.h5"
local tgt = fs.model "qwen3-8b-q4_0"

-- names: the profile's name plus the overrides in key-table order, or `name`
local dev = fs.device "oneplus12"
local slow = fs.device("oneplus12", { read_gbps = 2.5 })
assert(slow.name == "oneplus12[read_gbps=2.5]", slow.name)
assert(tostring(slow) == "device(oneplus12[read_gbps=2.5])")
local two = fs.device("oneplus12", { request_latency_us = 25, read_gbps = 4.2 })
assert(two.name == "oneplus12[read_gbps=4.2,request_latency_us=25]", two.name)
assert(fs.device("oneplus12", { read_gbps = 0.1 + 0.2 }).name
       == "oneplus12[read_gbps=0.30000000000000004]")
assert(fs.device("oneplus12", { prefetch_layers = 2 }).name == "oneplus12[prefetch_layers=2]")
assert(fs.device("oneplus12", { read_gbps = 2.5, name = "slowphone" }).name == "slowphone")
assert(fs.device("oneplus12", {}).name == "oneplus12")
assert(fs.device("oneplus12", nil).name == "oneplus12")
local eff = fs.model("qwen3-8b-q4_0", { npu_efficiency = 1.1 })
assert(eff.name == "qwen3-8b-q4_0[npu_efficiency=1.1]", eff.name)

-- the overrides reach the run: slower flash, slower Flash-AR
local function run(d, m)
  return fs.run { device = d, target = m or tgt, trace = tr, policy = fs.policy.flash_ar {},
                  max_new_tokens = 16 }
end
local base, r_slow = run(dev), run(slow)
assert(r_slow.tokens_per_s < base.tokens_per_s, "read_gbps = 2.5 did not slow Flash-AR down")
assert(r_slow.device == "oneplus12[read_gbps=2.5]" and base.device == "oneplus12")
assert(r_slow.tokens == base.tokens)
-- an override equal to the profile's value changes nothing
local same = run(fs.device("oneplus12", { read_gbps = 4.2, name = "oneplus12" }))
assert(same.tokens_per_s == base.tokens_per_s and same.point_id == base.point_id)
-- a model residual: a larger flash_efficiency streams faster
local fast = run(dev, fs.model("qwen3-8b-q4_0", { flash_efficiency = 2 }))
assert(fast.tokens_per_s > base.tokens_per_s and fast.target == "qwen3-8b-q4_0[flash_efficiency=2]")

-- errors carry exit 78 and name the key
local function fails(want, f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok and e.code == 78 and tostring(e):find(want, 1, true), tostring(e))
end
fails("unknown key 'read_gbp' in flashspec.device overrides (did you mean 'read_gbps'?)",
      fs.device, "oneplus12", { read_gbp = 1 })
fails("key 'read_gbps' = 1000 is out of range [0.001, 100]", fs.device, "oneplus12",
      { read_gbps = 1000 })
fails("key 'npu_efficiency' must be a number (got string)", fs.model, "qwen3-8b-q4_0",
      { npu_efficiency = "fast" })
fails("second argument must be a table of overrides (got number)", fs.device, "oneplus12", 5)
fails("key 'base' is not allowed in overrides", fs.model, "qwen3-8b-q4_0",
      { base = "qwen3-4b-q4_0" })
fails("cannot exceed dram_gbps", fs.device, "oneplus12", { cpu_gbps = 500 })
fails("longer than 47 bytes", fs.device, "oneplus12",
      { read_gbps = 4.25, request_latency_us = 20.5, npu_gflops = 500 })
print("overrides ok")
