-- Snapdragon 888 (SM8350): 1x Cortex-X1 2.84 GHz + 3x Cortex-A78 2.42 GHz +
-- 4x Cortex-A55 1.8 GHz (Kryo 680), 4 MB L3, Hexagon 780; LPDDR5 at 3,200 MHz.
-- The SoC of the Xiaomi Mi 11.
--
-- No public LLM figure on this SoC was found: the CPU rates are estimates
-- from the 8 Gen 3's and 8 Gen 1's public figures, stated as ranges.  The NPU
-- keys but the memory-peak read rate
-- (npu_gbps) are left to a runtime that uses the NPU.
return {
  cpu_gbps = 25.8,
  cpu_gflops = 335.7,

  -- NPU: the one-row weight read at the memory's peak (soc/sd8elite's rule)
  npu_gbps = 51.2,

  -- power states (W): no public anchor on this SoC; the 8 Gen 3's split
  -- (soc/sd8gen3), as for every phone of this class
  base_w = 1.0,
  cpu_active_w = 2.962,
  cpu_idle_w = 0.2,
  npu_active_w = 3.0,
  npu_idle_w = 0.1,

  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  cite = {
    npu_gbps = "the one-row NPU weight read at the memory's peak, as Lever Table 1 puts the 8 Gen 3's (soc/sd8gen3): LPDDR5 at 3,200 MHz x 8 B = 51.2 GB/s; not read by a runtime that verifies on the CPU",
    base_w = "assumption, as for any awake phone: SoC uncore and always-on rails with the display off, ~1 W (soc/sd8gen3)",
    cpu_active_w = "assumption: a busy big-core cluster within a phone's sustained 3-5 W envelope; the 8 Gen 3 anchor's derived 2.962 W (soc/sd8gen3)",
    cpu_idle_w = "assumption: idle cores in WFI / power collapse, ~0.2 W",
    npu_active_w = "assumption: a busy mobile NPU draws 2-5 W under sustained load; 3 W (not drawn by a runtime that verifies on the CPU)",
    npu_idle_w = "assumption: power-gated Hexagon DSP between graphs (leakage), ~0.1 W",
    cpu_gbps = "estimate: a 4-bit CPU decode reaches about half of the memory's peak on the phones with public figures (8 Gen 3: 50.3%; 8 Gen 1: 53%; soc/sd8gen3, soc/sd8gen1); at 50.3% of LPDDR5-6400's 51.2 GB/s = 25.8 GB/s. Range: 35% to 53% of the peak",
    cpu_gflops = "estimate: the 8 Gen 3's ExecuTorch prefill (576 GFLOP/s, soc/sd8gen3) x the big cores' 128-bit SIMD pipes x clock against its own: the Cortex-X4, X2 and X1 have four NEON pipes, the A720, A710, A78 and A77 two (Arm's core announcements), and the 8 Gen 3 sums 3.3 x 4 + 3 x 3.2 x 2 + 2 x 3.0 x 2 = 44.4; this SoC (2.84 x 4 + 3 x 2.42 x 2) = 25.88: 576 x 25.88 / 44.4 = 335.7 (Android Authority core table via tipsclear.com); range: half of that to the estimate",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
  },
  ranges = {
    cpu_gbps = { 17.9, 27.2 },
    cpu_gflops = { 167.9, 335.7 },
  },
}
