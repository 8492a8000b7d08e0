-- Snapdragon 8 Elite (SM8750): 2x Oryon Prime 4.32 GHz + 6x Oryon Performance
-- 3.53 GHz, Hexagon NPU (v79), LPDDR5X up to 5,300 MHz
-- (configs/parts/dram/lpddr5x-10600.lua).  The SoC of the Honor 500 Pro and
-- the Honor Magic V5 of Lever's evaluation (Lever Table 3).
--
-- No LLM timing of these phones is published, and no public CPU LLM
-- benchmark on this SoC was found: the CPU rates are derived from the
-- Snapdragon 8 Gen 3's public figures by the vendor's claims and stated as
-- ranges.  How much faster it is than the 8 Gen 3 (npu_speed, cpu_speed)
-- carries the costs a runtime fitted there (parts.h "transfer").
return {
  -- CPU
  cpu_gbps = 42.6,
  cpu_gflops = 835,

  -- NPU
  npu_gbps = 84.8,
  npu_gflops = 13300,

  -- power states (W): no figure of this SoC; the vendor's efficiency claims
  -- keep the power under load about where the 8 Gen 3's is
  base_w = 1.0,
  cpu_active_w = 2.962,
  cpu_idle_w = 0.2,
  npu_active_w = 3.0,
  npu_idle_w = 0.1,

  -- thermal throttling (used when a profile sets thermal = true)
  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  -- against the Snapdragon 8 Gen 3
  speed_over = "sd8gen3",
  npu_speed = 1.45,
  cpu_speed = 1.45,

  cite = {
    cpu_gbps = "derived: the 8 Gen 3's public ExecuTorch GEMV rate (38.6 GB/s, 50.3% of its 76.8 GB/s peak; soc/sd8gen3) at the same share of this SoC's LPDDR5X-10600 peak, 38.6 x 84.8 / 76.8 = 42.6 GB/s; no public CPU decode figure on the 8 Elite. Range: the 8 Gen 3's own 38.6 GB/s (no gain) to 38.6 x 1.45 = 56.0 (the CPU claim)",
    cpu_gflops = "derived: the 8 Gen 3's public ExecuTorch prefill rate (576 GFLOP/s; soc/sd8gen3) x Qualcomm's CPU claim, '45% better CPU performance in both single and multi-core' (Snapdragon 8 Elite launch, 2024-10-21; expertreviews.com 2024-10-22) = 835 GFLOP/s. Range: the 8 Gen 3's 576 (no gain) to the claim",
    npu_gbps = "the one-row NPU weight read at the memory's peak, as Lever Table 1 puts the 8 Gen 3's (soc/sd8gen3): LPDDR5X-10600 x 8 B = 84.8 GB/s (AI Hub decode on the 8 Elite QRD implies 62.7-65 GB/s with model sizes that include the embedding: low bounds)",
    npu_gflops = "Qualcomm AI Hub perf.yaml (quic/ai-hub-models v0.46.1): Llama-3.1-8B-Instruct w4a16, 128-token prompt in 154.5 ms on the Snapdragon 8 Elite QRD = 13.3 TFLOP/s ; range: the 7-8B entries, Llama-2-7B 9.6 to Qwen2.5-7B 14.4 TFLOP/s",
    base_w = "assumption, as for any awake phone: SoC uncore and always-on rails with the display off, ~1 W",
    cpu_active_w = "Qualcomm: CPU 45% faster at up to 44% better power efficiency than the 8 Gen 3 (launch, 2024-10-21): the power of a busy cluster about unchanged (1.45 / 1.44); the 8 Gen 3 anchor's derived 2.962 W (soc/sd8gen3)",
    cpu_idle_w = "assumption: idle cores in WFI / power collapse, ~0.2 W",
    npu_active_w = "Qualcomm: Hexagon NPU 45% faster with 45% better performance per watt than the 8 Gen 3 (launch, 2024-10-21): the same power under load as the 8 Gen 3's assumed 3 W",
    npu_idle_w = "assumption: power-gated NPU between graphs (leakage), ~0.1 W",
    thermal_onset_s = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): mobile SoCs throttle after 15-20 s of sustained inference (midpoint 17.5 s)",
    thermal_throttle = "K. Wiewiór, 'Speculative Decoding for On-Device LLMs on Android' (MVP Factory blog): after 15-20 s of sustained inference clock speeds can drop 30-40% (midpoint 0.35)",
    npu_speed = "Qualcomm: Hexagon NPU '45% faster AI performance' than the Snapdragon 8 Gen 3 (launch, 2024-10-21; xda-developers.com spec table); AI Hub's identical configs on both SoCs measure 1.04x (Llama-2-7B prefill) to 1.40x (its decode)",
    cpu_speed = "Qualcomm: '45% better CPU performance in both single and multi-core' than the Snapdragon 8 Gen 3 (launch, 2024-10-21); the low end assumes host-side runtime work gains nothing",
  },
  ranges = {
    cpu_gbps = { 38.6, 56.0 },
    cpu_gflops = { 576, 835 },
    npu_gflops = { 9600, 14400 },
    npu_speed = { 1.04, 1.45 },
    cpu_speed = { 1.0, 1.45 },
  },
}
