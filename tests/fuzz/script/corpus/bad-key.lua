local fs = flashspec
fs.run { device = fs.device "oneplus12", target = fs.model "qwen3-8b-q4_0",
         trace = fs.trace "traces/data/synth-small.h5", policy = fs.policy.chain { kk = 4 },
         dram_fractoin = 0.5 }
