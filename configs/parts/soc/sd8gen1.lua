-- Snapdragon 8 Gen 1 (SM8450): 1x Cortex-X2 3.0 GHz + 3x Cortex-A710 2.5 GHz +
-- 4x Cortex-A510 1.8 GHz, 6 MB L3; LPDDR5 at 3,200 MHz.  The cores EdgeLLM's
-- platform table lists for its "Xiaomi 11" (the Xiaomi 12 ships this SoC).
--
-- The NPU keys are left to a runtime that uses the NPU.
return {
  cpu_gbps = 27.2,
  cpu_gflops = 320,

  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  cite = {
    cpu_gbps = "ExecuTorch XNNPACK decodes Llama-2-7B 8da4w (g128) at 8.15 tok/s on a Galaxy S22 (pytorch/executorch examples/models/llama2/README.md; the S22 of the US and China markets carries this SoC): 3.34 GB x 8.15 /s = 27.2 GB/s, 53% of LPDDR5-6400's 51.2 GB/s",
    cpu_gflops = "estimate: the 8 Gen 3's ExecuTorch prefill (576 GFLOP/s) x the ratio of big-core clocks, (3.0 + 3 x 2.5) / (3.3 + 3 x 3.2 + 2 x 3.0) = 10.5 / 18.9 = 0.556 (gizbot.com core table, 2021-12-01); range: the 8 Gen 3's prefill per decode GB/s (576 / 38.6) x 27.2 = 406 at the top, half the estimate at the bottom",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
  },
  ranges = {
    cpu_gflops = { 160, 406 },
  },
}
