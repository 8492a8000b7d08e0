-- Snapdragon 8 Elite with UFS 3.1 flash: the Honor 500 Pro of the Lever
-- evaluation (CALIBRATION.md "Devices"; Lever Table 3).  No DRAM size is given.
--
-- No timing is published for this phone, so every value is either a public
-- specification of its parts or carried over from configs/devices/oneplus12.lua
-- (fitted to Lever Tables 1 and 2 on the OnePlus 12) with the reason stated.
-- The model profiles' residual factors (flash_efficiency, npu_efficiency) were
-- fitted on the OnePlus 12 and apply unchanged here (configs/README.md,
-- "Other phones").  Public figures used below:
--   [UFS31]  UFS 3.1 sequential read ~2.1 GB/s (CALIBRATION.md; Samsung's UFS 4.0
--            announcement, 2022-05, gives 4,200 MB/s as about twice UFS 3.1).
--   [MPHY4]  UFS 3.1 link: M-PHY HS-G4, 11.66 Gb/s per lane, 2 lanes, 8b/10b
--            line code: 2 x 11.66 x 0.8 / 8 = 2.33 GB/s (JEDEC JESD220E).
--   [SD8E]   Snapdragon 8 Elite (Qualcomm launch, 2024-10-21): LPDDR5X at
--            5,300 MHz, Hexagon NPU "45% faster" and Oryon CPU "45% faster"
--            than the Snapdragon 8 Gen 3.
return {
  name = "sd8elite_ufs31",

  -- flash ------------------------------------------------------------------
  -- The OnePlus 12 fit delivers one 512 KiB request at the UFS 4.0 rating:
  -- 524,288 B / (524,288 B / 5.0 GB/s + 20.1 us) = 524,288 B / 124.96 us
  -- = 4.196 GB/s ~ 4.2 GB/s.  Same rule here, with the request latency carried
  -- over (below): 524,288 B / 2.1 GB/s [UFS31] = 249.66 us per request,
  -- streaming part = 249.66 - 20.1 = 229.56 us, so
  -- read_gbps = 524,288 B / 229.56 us = 2.284 GB/s, below the 2.33 GB/s link [MPHY4].
  read_gbps = 2.284,
  -- carried over from oneplus12.lua (same runtime, same block-layer request size).
  request_kb = 512,
  -- carried over from oneplus12.lua (fit of Lever Table 1): a per-request
  -- command + completion cost; no measurement separates it for UFS 3.1.
  request_latency_us = 20.1,
  -- carried over: the Flash-AR baseline is the same read-then-compute runtime
  -- (Lever §5.1 uses one implementation on all three phones).
  prefetch_layers = 0,

  -- DRAM -------------------------------------------------------------------
  -- carried over from oneplus12.lua (6 GB for the LLM): CALIBRATION.md gives no
  -- DRAM size for this phone; one budget keeps DRAM-fraction runs comparable
  -- across the three phones (only pinned layers and KV depend on it).
  dram_budget_gb = 6.0,
  -- LPDDR5X at 5,300 MHz [SD8E], double data rate = 10,600 MT/s x 64-bit bus
  -- = 10.6e9 x 8 B = 84.8 GB/s (the OnePlus 12 arithmetic: 4,800 MHz -> 76.8).
  dram_gbps = 84.8,

  -- NPU (Hexagon, static graphs) -------------------------------------------
  -- oneplus12.lua pins the one-row weight-streaming rate at the DRAM peak
  -- (Table 1 wants more than the peak); same rule: 84.8 GB/s.
  npu_gbps = 84.8,
  -- carried over from oneplus12.lua (Table 1 fit, 1056.6 us per graph
  -- execution, split evenly): launch and sync are runtime/driver overheads with
  -- no published figure for the 8 Elite.
  launch_us = 528.3,
  sync_us = 528.3,
  -- oneplus12.lua's calibrated verification throughput (536.621 +/- 33.2
  -- GFLOP/s, fitted to Lever Tables 1, 2, 5 and 6) scaled by the vendor's
  -- generational claim [SD8E]: 536.621 x 1.45 = 778.1 GFLOP/s.
  npu_gflops = 778.1,
  -- carried over: the same compiled shapes (Lever §2.2 / §4.4 static graphs).
  npu_shapes = { 1, 2, 4, 8, 16, 32, 64, 128, 256 },

  -- CPU --------------------------------------------------------------------
  -- oneplus12.lua measures CPU GEMV at 17.2 GB/s = 22.4% of its 76.8 GB/s DRAM
  -- peak; the same share of this DRAM peak: 17.2 x 84.8 / 76.8 = 19.0 GB/s.
  cpu_gbps = 19.0,
  -- oneplus12.lua's placeholder 200 GFLOP/s scaled by the vendor's CPU claim
  -- [SD8E]: 200 x 1.45 = 290 GFLOP/s (still a placeholder).
  cpu_gflops = 290,
  -- carried over from oneplus12.lua: the calibration does not determine a
  -- per-leaf temporary-sequence cost, so none is charged.
  kv_seq_us = 0,

  -- the runtime (sim/hw/sim_hw.h "The runtime"): the OnePlus 12's, one for
  -- every policy (Lever §5.1 runs one implementation on all three phones) ----
  -- carried over: one synchronous request at a time (Lever Table 1 on the
  -- OnePlus 12: total = compute + I/O).
  queue_depth = 1,
  -- carried over from oneplus12.lua (the calibration's smallest compiled
  -- multi-row verification graph: the same runtime on every phone).
  verify_min_rows = 8,
  -- oneplus12.lua's calibrated fixed cost of a tree verification
  -- (345345 +/- 32400 us) is CPU-side runtime management, scaled by the
  -- vendor's CPU claim [SD8E]: 345345 / 1.45 = 238169 us.
  verify_setup_us = 238169,
  -- carried over from oneplus12.lua (selected there by Lever's Table 6 curve):
  -- a drafted cycle verifying the root alone pays the set-up too, and the DRAM
  -- budget pins layers only (the untied LM head stays streamed): the same
  -- runtime on every phone.
  verify_setup_one_row = true,
  pin_head = false,
  -- oneplus12.lua's standing variants, scaled as above (NPU x 1.45, set-up
  -- / 1.45 [SD8E]): 620.88 x 1.45 = 900.3, 408964 / 1.45 = 282044;
  -- 534.319 x 1.45 = 774.8, 81148.1 / 1.45 = 55964 us/GB.
  variants = {
    min1 = { verify_min_rows = 1, npu_gflops = 900.3, verify_setup_us = 282044 },
    weights = { npu_gflops = 774.8, verify_setup_us = 0,
                verify_setup_streamed_us_per_gb = 55964,
                verify_setup_resident_us_per_gb = 55964 },
  },
  -- carried over from oneplus12.lua: not determined by any measurement.
  npu_call_us = 0,
  -- the alternative overlapped runtime (runtime = "speculative"), carried over
  -- from oneplus12.lua for what-if comparisons; not what Lever measured.
  spec_prefetch_layers = 2,
  spec_queue_depth = 32,

  -- power states (sim/hw/sim_hw.h "Energy"; W, J/GB) -------------------------
  -- all carried over from oneplus12.lua (its assumptions and its Snapdragon 8
  -- Gen 3 derivation); no power figure is published for this phone.
  dram_j_per_gb = 0.04,
  base_w = 1.0,
  npu_idle_w = 0.1,
  npu_active_w = 3.0,
  flash_idle_w = 0.05,
  flash_active_w = 1.5,
  cpu_idle_w = 0.2,
  cpu_active_w = 2.962,

  -- thermal (off by default) -------------------------------------------------
  -- carried over from oneplus12.lua (papers/android-speculative-notes.md:
  -- clocks drop 30-40% after 15-20 s: midpoints 17.5 s and 0.35).
  thermal = false,
  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  -- memory: separate draft and target KV caches, as oneplus12.lua.
  kv_shared = false,

  -- draft work overlapping a verification (sim/hw/sim_hw.h "Overlap") -------
  -- carried over from oneplus12.lua: papers/edgellm.md §III-D (Fig. 13),
  -- target compute slowed 2.2-2.3x and loading 1.05-1.09x by a concurrent
  -- draft (midpoints 2.25, 1.07), measured on a Jetson TX2; no phone figure
  -- exists for either SoC, so the only published one is used for all three.
  contention_compute = 2.25,
  contention_load = 1.07,
  -- same section: little interference below 90% memory use.
  mem_upper_bound = 0.9,
}
