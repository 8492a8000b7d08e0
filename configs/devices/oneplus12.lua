-- OnePlus 12: Snapdragon 8 Gen 3, UFS 4.0 flash, 12/16 GB LPDDR5X
-- (CALIBRATION.md "Devices"; Lever Table 3).  Lever's default ablation device.
--
-- Every value below cites a public fact, a fact of CALIBRATION.md, or a
-- derivation from Lever Table 1 (Flash-AR per-token latency on this phone,
-- whole model streamed: compute / I/O / total ms).  The derivations use the
-- byte counts sim/hw derives from each model's architecture (Q4_0 = 4.5 bits
-- per weight; per layer q,k,v,o + 3 FFN matrices; LM head = vocab x hidden):
--
--   target        layer bytes   LM head bytes  streamed per token        reads
--   Llama-3.1-8B  122,683,392    295,501,824   32 layers + head = 4,221,370,368  8,052
--   Qwen3-4B       56,770,560    218,787,840   36 layers (tied head resident)
--                                                              = 2,043,740,160   3,924
--   Qwen3-8B      108,527,616    350,060,544   36 layers + head = 4,257,054,720  8,120
--   Qwen3-14B     185,794,560    437,575,680   40 layers + head = 7,869,358,080 15,035
--   (reads = requests of 512 KiB: ceil(bytes / 524,288) per layer and per head)
--
-- Structure of a Flash-AR token at 0% DRAM (sim/hw/sim_hw.h): prefetch 0, so
-- I/O = sum of layer (+ head) reads and compute = L + 1 NPU graph executions
-- (L layers + the eager LM head), total = compute + I/O as Table 1 shows.
-- What the device-level model leaves unexplained per target goes into that
-- target's profile as flash_efficiency / npu_efficiency (derived there).
return {
  name = "oneplus12",

  -- flash ------------------------------------------------------------------
  -- Lever §2.1: flash bandwidth is "typically 5 GB/s" effective.  Not the UFS
  -- 4.0 sequential-read rating (~4.2 GB/s, CALIBRATION.md): Table 1 itself
  -- implies more than 4.2 for Qwen3-8B (4,257,054,720 B / 953.4 ms = 4.47 GB/s),
  -- and 5 GB/s stays below the UFS 4.0 link rate (2 lanes x 23.2 Gb/s HS-G5 =
  -- 5.8 GB/s, JEDEC UFS 4.0).
  read_gbps = 5.0,
  -- assumption: the runtime reads weights in 512 KiB requests (the usual
  -- max_sectors_kb of a UFS block device on Android/Linux); only requests x
  -- latency matters below, so the choice is absorbed by request_latency_us.
  request_kb = 512,
  -- derived from Table 1, pooled over the four targets:
  --   sum of Table 1 I/O = 990.6 + 474.4 + 953.4 + 1967.1 = 4385.5 ms
  --   sum of streamed bytes / 5 GB/s = 18,391,523,328 B / 5e6 B/ms = 3678.30 ms
  --   sum of requests = 8,052 + 3,924 + 8,120 + 15,035 = 35,131
  --   latency = (4385.5 - 3678.30) ms / 35,131 = 0.02013 ms = 20.1 us per request
  request_latency_us = 20.1,
  -- Lever Table 1: total = compute + I/O exactly (e.g. Qwen3-8B 96.6 + 953.4 =
  -- 1050.0), so the measured runtime reads a layer, then computes it: no overlap.
  prefetch_layers = 0,

  -- DRAM -------------------------------------------------------------------
  -- assumption: half of the 12 GB variant (CALIBRATION.md devices table) is
  -- left to the LLM runtime; memory for an LLM is "far below physical DRAM"
  -- (CALIBRATION.md; Lever §2.1, shared with the OS and apps).  With it a fully
  -- pinned Qwen3-8B (~4.3 GB + KV) fits and a fully pinned Qwen3-14B (~7.9 GB)
  -- does not.
  dram_budget_gb = 6.0,
  -- LPDDR5X at 9600 MT/s (the "LPDDR5X-4800" clock of CALIBRATION.md, double
  -- data rate) x 64-bit bus = 9.6e9 x 8 B = 76.8 GB/s (CALIBRATION.md: ~77 GB/s).
  dram_gbps = 76.8,

  -- NPU (Hexagon, static graphs) -------------------------------------------
  -- At one row a layer is weight-bound: its graph streams the layer's weights
  -- from DRAM.  A least-squares fit of Table 1 compute = (L + 1) x overhead +
  -- weight bytes / rate over Llama-3.1-8B, Qwen3-8B and Qwen3-14B (Qwen3-4B is
  -- an outlier, see its profile) wants 95 GB/s, above the DRAM peak, so the rate
  -- is pinned at the physical bound, 76.8 GB/s, and the overhead refit:
  --   overhead = sum_m n_m (C_m - W_m / 76.8e6) / sum_m n_m^2, n = L + 1,
  --   W = L x layer bytes + head bytes, C = Table 1 compute (ms):
  --   Llama  n=33 W=4,221,370,368 C=93.2  -> C - W/76.8e6 = 38.234
  --   Q3-8B  n=37 W=4,257,054,720 C=96.6  -> 41.170
  --   Q3-14B n=41 W=7,869,358,080 C=141.2 -> 38.734
  --   overhead = (33x38.234 + 37x41.170 + 41x38.734) / (33^2 + 37^2 + 41^2)
  --            = 4373.1 / 4139 = 1.0566 ms per graph execution
  npu_gbps = 76.8,
  -- Table 1 only fixes launch + sync = 1056.6 us; split evenly (every NPU
  -- execution pays both, so the split changes no simulated time).
  launch_us = 528.3,
  sync_us = 528.3,
  -- fitted by flashspec calibrate to Lever Tables 1, 2, 5 and the released
  -- curve of Table 6 jointly (configs/calibration/oneplus12.lua; report
  -- configs/calibration/README.md): the verification throughput per padded row.  Table 2, read as the
  -- tree-dependent part of a verification on top of the streamed I/O, grows
  -- by ~26 ms per row from 16 to 32 nodes on both 8B targets; with the fixed
  -- set-up cost below that slope is the rows' arithmetic.  At one row every op
  -- stays weight-bound (a Qwen3-8B layer: 0.39 GFLOP / 562 GFLOP/s = 0.69 ms
  -- < 108.5 MB / 76.8 GB/s = 1.41 ms), so Table 1 does not see it.
  -- (~1% of the ~45 INT8 TOPS marketed for the 8 Gen 3 Hexagon: plausible for
  -- fp16-activation x 4-bit-weight GEMMs of a few rows.)
  npu_gflops = 536.621, -- +/- 33.2 (fit standard error)
  -- assumption: graphs compiled for power-of-two row counts (static shapes,
  -- Lever §2.2 / §4.4); more rows run as several executions of the largest.
  -- Compared in the calibration: every row count compiled fits worse (RMS 2.1%
  -- against 1.9%, configs/calibration/README.md).
  npu_shapes = { 1, 2, 4, 8, 16, 32, 64, 128, 256 },
  -- selected by the calibration (configs/calibration/README.md): the smallest
  -- compiled multi-row verification graph has 8 rows (a verification of 2 to 7
  -- rows runs the 8-row graph; a decode step runs the one-row graph).  On the
  -- four tables no smallest graph (power-of-two shapes from 1 row) fits as well
  -- (AIC -241.6 against -237.8: within the fit's noise) but transfers worse
  -- when a table is left out (Table 6 predicted within 11.2% RMS against 8.2%,
  -- Table 5 within 9.6% against 7.7%): it is the standing variant
  -- oneplus12-min1.
  verify_min_rows = 8,

  -- CPU --------------------------------------------------------------------
  -- papers/android-speculative-notes.md, Snapdragon 8 Gen 3: a 3B model in DRAM
  -- decodes autoregressively at 8.2 tok/s with 2.1 GB RSS; decode is
  -- weight-bound, so 2.1 GB x 8.2 /s = 17.2 GB/s achieved on GEMV.  (Fitted
  -- to Tables 1, 2 and 5 it comes out at 68 +/- 4,260 GB/s: the data do not
  -- determine it, so the cited figure stays.)
  cpu_gbps = 17.2,
  -- assumption: effective multi-row GEMM rate of the big cores on 4-bit
  -- weights (Cortex-X4 + A720 NEON/i8mm peak is several hundred GOPS).  Only
  -- CPU calls of several rows use it; one-row CPU calls are weight-bound.
  cpu_gflops = 200,

  -- the runtime (sim/hw/sim_hw.h "The runtime"): one for every policy --------
  -- Lever Table 1: total = compute + I/O exactly (e.g. Qwen3-8B 96.6 + 953.4 =
  -- 1050.0), so the runtime reads a layer, then computes it (prefetch_layers =
  -- 0, above) with one synchronous request at a time; Table 5's Flash-AR
  -- (0.952 tok/s) is that same 1050.0 ms per token.
  queue_depth = 1,
  -- fitted by flashspec calibrate (as npu_gflops): the fixed cost of every
  -- tree verification on top of its rows -- Lever §4.2's "runtime management"
  -- of a verification (tree mask and positions, batch set-up, KV-cache and
  -- temporary-sequence bookkeeping, merging the accepted path).  Table 2 needs
  -- it: 16 -> 32 nodes adds ~412 ms but 16 nodes already cost 817 ms beyond the
  -- I/O, against 96.6 ms of compute for one row (Table 1).  The same intercept
  -- fits Llama-3.1-8B and Qwen3-8B (401 / 405 ms from a straight line through
  -- their two points); Table 5 selects a cost per verification over one per
  -- leaf, and the Table 6 curve one that does not vanish when the target is
  -- pinned (~0.85 s per Lever cycle at 100%) over one per streamed byte
  -- (README.md, "Mechanisms of the set-up").
  verify_setup_us = 345345, -- +/- 32400 (fit standard error)
  -- selected by the Table 6 curve (README.md): a cycle that drafted and keeps
  -- the root alone still verifies through the tree pipeline and pays the
  -- set-up; a plain decode step (Flash-AR) never does (Table 1: total = compute
  -- + I/O).  With a free one-row verification Lever's stop rule falls back to
  -- one row from 60% DRAM on and the curve cannot be fitted (RMS 22% against
  -- 5%), while the phone's Lever still gains at 100% (3.4 tok/s).
  verify_setup_one_row = true,
  -- the set-up's parts that scale (sim/hw/sim_hw.h "The set-up"): the same
  -- comparison rejects a set-up per streamed byte (re-laying out fresh weights:
  -- it vanishes when the target is pinned; RMS 22%) and finds none per streamed
  -- layer (fitted: 0.1 +/- 1.6 ms), so none is charged.  A set-up per GB of the
  -- whole target fits Qwen3-8B as the constant does (its bytes do not change
  -- with the DRAM fraction): the standing variant oneplus12-weights, which
  -- differs for other targets.
  verify_setup_streamed_us_per_gb = 0,
  verify_setup_resident_us_per_gb = 0,
  verify_setup_layer_us = 0,
  -- selected by the Table 6 curve (README.md): the budget pins the first x% of
  -- the layers (CALIBRATION.md) and the untied LM head stays streamed even at
  -- 100%; pinning it with the last layer makes Lever 23% too fast there (RMS
  -- 5.3% against 3.7%, AIC higher by 28).
  pin_head = false,
  -- standing variants (sim/lua/profile.h): the explanations the calibration
  -- cannot tell apart from this one (configs/calibration/README.md).  Each is
  -- valued by flashspec calibrate with the workloads held at the shipped
  -- presets (--arg fixed_accept=1), where all three fit Lever Tables 1, 2, 5
  -- and 6 alike (RMS 3.65% / 3.66% / 3.68%, AIC within 0.4).  Result rows carry
  -- tokens_per_s_model_lo / _hi over the profile and these.
  variants = {
    -- no smallest multi-row verification graph (--arg min_rows=1): fits the
    -- four tables as well, transfers worse when a table is left out
    min1 = { verify_min_rows = 1,
             npu_gflops = 620.88,       -- +/- 26.8 (fit standard error)
             verify_setup_us = 408964 }, -- +/- 15000
    -- the set-up scales with the target's weights, streamed or resident alike
    -- (--arg setup=weights): the same on Qwen3-8B (4.257 GB; 81148 us/GB x
    -- 4.257 = 345.4 ms), 183 ms on Qwen3-4B, 639 ms on Qwen3-14B
    weights = { npu_gflops = 534.319,   -- +/- 25.2
                verify_setup_us = 0,    -- the whole set-up is per GB
                verify_setup_streamed_us_per_gb = 81148.1, -- +/- 4690
                verify_setup_resident_us_per_gb = 81148.1 }, -- +/- 4690
  },
  -- tree verifications read as Table 1's runtime does: one whose reads run
  -- ahead of compute (verify_overlap, with the spec_* keys below) fits far worse
  -- (RMS 9.8%).
  verify_overlap = false,
  -- per temporary sequence (leaf) on top of copying the tree rows' KV at
  -- cpu_gbps: the calibration does not select it (a per-leaf cost in place
  -- of the per-verification one fits far worse; fitted together with it, 7 +/-
  -- 2.4 ms, it raises AIC by 4), so none is charged.
  kv_seq_us = 0,
  -- what a stand-alone NPU call issued by CPU-side control flow (a draft call,
  -- an on-demand head row) pays beyond its graph's launch and sync: Tables 1,
  -- 2 and 5 do not determine it (fitted: 0.001 +/- 26 ms), so none is charged;
  -- scripts/study_ablations.lua shows how the Lever ablations move with it.
  npu_call_us = 0,

  -- an alternative runtime of this phone, for what-if comparisons (point key
  -- runtime = "speculative"; sim/hw/sim_hw.h "The runtime"): reads running
  -- ahead of compute with double buffering plus one layer in flight, and UFS
  -- command queueing (JEDEC UFS 2.x-4.0 keep up to 32 commands outstanding per
  -- logical unit).  It is not what Lever measured: with it the calibration
  -- cannot fit Table 1 (Flash-AR 21-32% too fast; configs/calibration/README.md).
  spec_prefetch_layers = 2,
  spec_queue_depth = 32,

  -- power states (sim/hw/sim_hw.h "Energy"; W, J/GB) -------------------------
  -- Anchor: papers/android-speculative-notes.md, Snapdragon 8 Gen 3, a 3B
  -- model decoding autoregressively on the CPU from DRAM: 8.2 tok/s at 4.8 W
  -- average = 4.8 / 8.2 = 0.585 J per token.  That decode is weight-bound
  -- (cpu_gbps above: 2.1 GB x 8.2 /s = 17.2 GB/s), the CPU is busy the whole
  -- wall time, NPU and flash are idle, so
  --   4.8 W = base_w + cpu_active_w + npu_idle_w + flash_idle_w
  --           + dram_j_per_gb x 17.2 GB/s.
  -- One equation: the split below fixes the other terms by assumption and
  -- derives cpu_active_w from it.
  -- assumption: LPDDR5X access + I/O energy ~5 pJ/bit (public LPDDR4/5
  -- figures are 4-6 pJ/bit): 5e-12 J x 8e9 bit = 0.04 J/GB, i.e. 0.69 W at
  -- 17.2 GB/s.
  dram_j_per_gb = 0.04,
  -- assumption: SoC uncore, always-on rails and memory controller with the
  -- display off, drawn whenever the phone decodes (order of magnitude of an
  -- awake phone's floor, 0.5-1.5 W).
  base_w = 1.0,
  -- assumption: power-gated Hexagon NPU between graphs (leakage, ~0.1 W).
  npu_idle_w = 0.1,
  -- assumption: a busy Hexagon NPU draws "a few W" (mobile NPUs run at 2-5 W
  -- under sustained load); 3 W.
  npu_active_w = 3.0,
  -- assumption: UFS 4.0 in hibernate between reads ~0.05 W; while streaming
  -- reads device + link draw ~1-2 W (UFS 4.0 read power class); 1.5 W.
  flash_idle_w = 0.05,
  flash_active_w = 1.5,
  -- assumption: idle big cores in WFI / power collapse ~0.2 W.
  cpu_idle_w = 0.2,
  -- derived: 4.8 - 1.0 - 0.1 - 0.05 - 0.04 x 17.2 = 2.962 W for the busy
  -- CPU cluster decoding.  Check against the same notes' speculative row
  -- (60M draft, K=4: 15.6 tok/s at 5.1 W): the CPU is again busy the whole
  -- time, so the model predicts ~4.8 W plus the draft's extra DRAM traffic,
  -- within 6% of 5.1 W.
  cpu_active_w = 2.962,

  -- thermal (sim/hw/sim_hw.h "Thermal"), off by default ----------------------
  -- papers/android-speculative-notes.md: "After 15-20 seconds of sustained
  -- inference, clock speeds can drop 30-40%": the midpoints, 17.5 s and 0.35.
  -- Enable in a profile variant (thermal = true) to study sustained decoding.
  thermal = false,
  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  -- memory -------------------------------------------------------------------
  -- separate draft and target KV caches (the usual layout); the notes describe
  -- sharing one memory-mapped region (papers/android-speculative-notes.md, "KV
  -- cache sharing"): set kv_shared = true for that runtime.
  kv_shared = false,

  -- draft work overlapping a verification (sim/hw/sim_hw.h "Overlap") -------
  -- papers/edgellm.md §III-D (Fig. 13): running the draft in parallel with the
  -- target slowed the target's computing by 2.2-2.3x and its parameter loading
  -- by 1.05-1.09x; the midpoints 2.25 and 1.07.  Measured on a Jetson TX2 (no
  -- phone measurement is published): carried over as the only figure there is.
  contention_compute = 2.25,
  contention_load = 1.07,
  -- same section: the two models barely disturb each other unless memory use
  -- exceeds 90%, so overlapping drafting may fill the DRAM budget up to 0.9.
  mem_upper_bound = 0.9,
}
