local fs = flashspec
fs.sweep {
  device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
  trace = fs.trace "traces/data/synth-small.h5", policy = fs.policy.flash_ar {},
  points = { { dram_fracton = 0.5 } },
}
