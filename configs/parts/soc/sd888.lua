-- Snapdragon 888 (SM8350): 1x Cortex-X1 2.84 GHz + 3x Cortex-A78 2.42 GHz +
-- 4x Cortex-A55 1.8 GHz (Kryo 680), 4 MB L3, Hexagon 780; LPDDR5 at 3,200 MHz.
-- The SoC of the Xiaomi Mi 11.
--
-- No public LLM figure on this SoC was found: the CPU rates are estimates
-- from the 8 Gen 3's and 8 Gen 1's public figures, stated as ranges.  The NPU
-- keys are left to a runtime that uses the NPU.
return {
  cpu_gbps = 25.8,
  cpu_gflops = 308,

  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  cite = {
    cpu_gbps = "estimate: a 4-bit CPU decode reaches about half of the memory's peak on the phones with public figures (8 Gen 3: 50.3%; 8 Gen 1: 53%; soc/sd8gen3, soc/sd8gen1); at 50.3% of LPDDR5-6400's 51.2 GB/s = 25.8 GB/s. Range: 35% to 53% of the peak",
    cpu_gflops = "estimate: the 8 Gen 3's ExecuTorch prefill (576 GFLOP/s) x the ratio of big-core clocks, (2.84 + 3 x 2.42) / (3.3 + 3 x 3.2 + 2 x 3.0) = 0.534 (Android Authority core table via tipsclear.com); range: half of that to the estimate",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
  },
  ranges = {
    cpu_gbps = { 17.9, 27.2 },
    cpu_gflops = { 154, 308 },
  },
}
