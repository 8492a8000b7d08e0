-- derives from the shipped Qwen3-8B profile; one residual changed
return {
  base = "qwen3-8b-q4_0",
  npu_efficiency = 1.1,
}
