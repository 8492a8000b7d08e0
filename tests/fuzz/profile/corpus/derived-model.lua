return { base = "qwen3-8b-q4_0", npu_efficiency = 1.1, layers = 2 }
