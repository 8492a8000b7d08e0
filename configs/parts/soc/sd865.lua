-- Snapdragon 865 (SM8250): 1x Kryo 585 Prime (Cortex-A77) 2.84 GHz + 3x
-- Cortex-A77 2.42 GHz + 4x Cortex-A55 1.8 GHz, 4 MB L3, Hexagon 698; LPDDR5
-- at 2,750 MHz or LPDDR4X; UFS 3.0.  The SoC of the Xiaomi Mi 10.
--
-- No public LLM figure on this SoC was found: the CPU rates are estimates
-- from the 8 Gen 3's and 8 Gen 1's public figures, stated as ranges.  The NPU
-- keys are left to a runtime that uses the NPU.
return {
  cpu_gbps = 22.1,
  cpu_gflops = 308,

  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  cite = {
    cpu_gbps = "estimate: a 4-bit CPU decode reaches about half of the memory's peak on the phones with public figures (8 Gen 3: 38.6 of 76.8 GB/s, 50.3%; 8 Gen 1: 27.2 of 51.2, 53%; soc/sd8gen3, soc/sd8gen1); at 50.3% of LPDDR5-5500's 44.0 GB/s = 22.1 GB/s. Range: 35% (older A77/A55 cores) to 53% of the peak",
    cpu_gflops = "estimate: the 8 Gen 3's ExecuTorch prefill (576 GFLOP/s) x the ratio of big-core clocks, (2.84 + 3 x 2.42) / (3.3 + 3 x 3.2 + 2 x 3.0) = 10.1 / 18.9 = 0.534 (Qualcomm core tables: dealntech.com, fonearena.com); range: half of that (older cores, no SVE/i8mm) to the estimate",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
  },
  ranges = {
    cpu_gbps = { 15.4, 23.3 },
    cpu_gflops = { 154, 308 },
  },
}
