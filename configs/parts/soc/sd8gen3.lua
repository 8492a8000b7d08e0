-- Snapdragon 8 Gen 3 (SM8650): 1x Cortex-X4 3.3 GHz + 3x Cortex-A720 3.2 GHz +
-- 2x Cortex-A720 3.0 GHz + 2x Cortex-A520 2.3 GHz, Hexagon NPU (v75), LPDDR5X
-- up to 4,800 MHz (configs/parts/dram/lpddr5x-9600.lua).  The SoC of the
-- OnePlus 12, the phone the runtime part lever-qnn was fitted on.
--
-- Values first, then their citations (`cite`, `fit`, `ranges`): parts.h.
return {
  -- CPU: 4-bit decode reads every weight once a token, so a public decode
  -- figure is a GEMV bandwidth (weight bytes x tokens/s); a public prefill
  -- figure is a multi-row GEMM rate (2 x parameters x tokens/s).
  cpu_gbps = 38.6,
  cpu_gflops = 576,

  -- NPU.  The one-row weight read: Lever Table 1's compute column is
  -- weight-bound; its least-squares rate (95 GB/s) exceeds the DRAM peak, so
  -- the rate is pinned at the peak (configs/calibration/README.md).
  npu_gbps = 76.8,
  -- compiled w4a16 prompt processing (the matrix path); a runtime whose
  -- kernels do not run it says so in its own part (lever-qnn does).
  npu_gflops = 12500,

  -- power states (W): one public anchor on this SoC, a 3B model decoding on
  -- the CPU from DRAM at 8.2 tok/s and 4.8 W; the split is by assumption.
  base_w = 1.0,
  cpu_active_w = 2.962,
  cpu_idle_w = 0.2,
  npu_active_w = 3.0,
  npu_idle_w = 0.1,

  -- thermal throttling (used when a profile sets thermal = true)
  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  cite = {
    cpu_gbps = "ExecuTorch XNNPACK decodes Llama-2-7B 4-bit groupwise (8da4w, g128) at 11.55 tok/s on the OnePlus 12 (pytorch/executorch examples/models/llama2/README.md): 6.48e9 x 4.125 bits / 8 = 3.34 GB x 11.55 /s = 38.6 GB/s",
    cpu_gflops = "ExecuTorch (KleidiAI) prefills Llama-3.2-3B SpinQuant at 89.7 tok/s on the OnePlus 12 (pytorch/executorch examples/models/llama/README.md): 2 x 3.21e9 x 89.7 = 576 GFLOP/s",
    npu_gflops = "Qualcomm AI Hub perf.yaml (quic/ai-hub-models): Llama-3-8B-Chat w4a16, 1,024-token prompt in 1,316.5 ms on a Galaxy S24 = 12.5 TFLOP/s (Llama-2-7B: 9.2)",
    base_w = "assumption: SoC uncore, always-on rails and memory controller with the display off (an awake phone's floor, 0.5-1.5 W)",
    cpu_active_w = "derived from the anchor of K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android', MVP Factory blog (Snapdragon 8 Gen 3, 3B model on the CPU: 8.2 tok/s at 4.8 W, 17.2 GB/s of weights): 4.8 - base 1.0 - npu idle 0.1 - flash idle 0.05 - 0.04 J/GB x 17.2 GB/s = 2.962 W",
    cpu_idle_w = "assumption: idle big cores in WFI / power collapse, ~0.2 W",
    npu_active_w = "assumption: a busy mobile NPU draws 2-5 W under sustained load; 3 W",
    npu_idle_w = "assumption: power-gated Hexagon NPU between graphs (leakage), ~0.1 W",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
  },
  fit = {
    npu_gbps = "Lever Table 1 (OnePlus 12): compute = (L + 1) x overhead + weight bytes / rate over Llama-3.1-8B, Qwen3-8B and Qwen3-14B wants 95 GB/s, above the LPDDR5X-9600 peak; pinned at the peak, 76.8 GB/s (AI Hub decode implies 46-66 GB/s, model sizes with the embedding: low bounds)",
  },
  ranges = {
    npu_gflops = { 9200, 12500 },
  },
}
