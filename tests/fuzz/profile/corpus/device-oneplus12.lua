-- OnePlus 12: Snapdragon 8 Gen 3, UFS 4.0 flash, 12/16 GB LPDDR5X
-- (Lever §5.1, Table 3).  Lever's default ablation device.
--
-- Every value below cites a public fact, a figure of the Lever paper, or a
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
  -- 4.0 sequential-read rating (~4.2 GB/s, Samsung's UFS 4.0 launch figures):
  -- Table 1 itself
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
  -- assumption: half of the 12 GB variant (OnePlus 12 specification) is left
  -- to the LLM runtime; the memory an LLM may use is far below the physical
  -- DRAM (Lever §2.1: shared with the OS and apps).  With it a fully
  -- pinned Qwen3-8B (~4.3 GB + KV) fits and a fully pinned Qwen3-14B (~7.9 GB)
  -- does not.
  dram_budget_gb = 6.0,
  -- LPDDR5X at 9600 MT/s (the 4,800 MHz clock of the Snapdragon 8 Gen 3's
  -- public memory spec, double data rate) x 64-bit bus = 9.6e9 x 8 B = 76.8 GB/s.
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
  -- derived from Lever Table 2 (one verification, 16 / 32 nodes): Table 1
  -- does not constrain it (one row is weight-bound).  A 32-node verification
  -- is compute-bound in the speculative runtime (below): its wall time is the
  -- first layer read plus L + 1 NPU executions of 32 rows (a 32-row shape),
  --   verify = read0 + ( (L+1) x 1.0566 ms + FLOPs / rate ) / npu_efficiency
  --   FLOPs  = 32 x [ L x (2 x params/layer + 4 x H x d x (ctx + 32)) + 2 x V x h ]
  --   at ctx = 256 (tests/sim/hw/test_calib_table2.c):
  --   Llama  FLOPs = 4.8513e11, read0 = 24.30 ms, n = 33, eff 0.9686:
  --          (1255 - 24.30) x 0.9686 - 33 x 1.0566 = 1157.19 ms of arithmetic
  --   Q3-8B  FLOPs = 4.8979e11, read0 = 20.52 ms, n = 37, eff 0.9836:
  --          (1229 - 20.52) x 0.9836 - 37 x 1.0566 = 1149.57 ms
  --   pooled rate = (4.8513 + 4.8979)e11 / (1157.19 + 1149.57) ms
  --               = 4.226e8 FLOP/ms = 422.6 GFLOP/s
  -- (about 2% of the ~45 INT8 TOPS marketed for the Hexagon NPU of the 8 Gen 3,
  -- plausible for FP16-activation x 4-bit-weight GEMMs).  The 16-node points are
  -- then predictions: they are I/O-bound (see spec_queue_depth).  At one row
  -- every op stays weight-bound (e.g. a Qwen3-8B layer: 0.39 GFLOP / 422.6 =
  -- 0.92 ms < 108.5 MB / 76.8 GB/s = 1.41 ms), so Table 1 is unchanged.
  npu_gflops = 422.6,
  -- assumption: graphs compiled for power-of-two row counts (static shapes,
  -- Lever §2.2 / §4.4); more rows run as several executions of the largest.
  npu_shapes = { 1, 2, 4, 8, 16, 32, 64, 128, 256 },

  -- CPU --------------------------------------------------------------------
  -- K. Wiewiór, "Speculative Decoding for On-Device LLMs on Android" (MVP
  -- Factory blog), Snapdragon 8 Gen 3: a 3B model in DRAM
  -- decodes autoregressively at 8.2 tok/s with 2.1 GB RSS; decode is
  -- weight-bound, so 2.1 GB x 8.2 /s = 17.2 GB/s achieved on GEMV.
  cpu_gbps = 17.2,
  -- placeholder: effective multi-row GEMM rate of the big cores on 4-bit
  -- weights (Cortex-X4 + A720 NEON/i8mm peak is several hundred GOPS); to be
  -- calibrated against batched draft measurements.
  cpu_gflops = 200,
  -- placeholder: fixed cost of creating and merging one temporary KV sequence
  -- (cell bookkeeping of a llama.cpp-style seq_cp/seq_rm); the bytes copied per
  -- leaf are charged separately at cpu_gbps.  To be calibrated by the
  -- tree-verification work.
  kv_seq_us = 100,

  -- speculative runtime (sim/hw/sim_hw.h "Two runtimes") ---------------------
  -- Lever Table 2 cannot come from the serial Flash-AR runtime: its 16-node
  -- verification of Qwen3-8B (817 ms) is shorter than Table 1's I/O alone
  -- (953.4 ms).  The bytes themselves take, at read_gbps and the target's
  -- flash_efficiency, 4,257,054,720 B / 5e6 B/ms / 1.0642 = 800.0 ms, so the
  -- runtime that measured Table 2 both overlaps reads with compute and hides
  -- most of the per-request latency that Table 1 exposes (8,120 x 20.1 us =
  -- 163.2 ms).  Lever §4.4 describes that runtime as overlapping flash I/O with
  -- NPU compute.
  -- assumption: double buffering plus one layer in flight (three layer buffers);
  -- any value >= 1 gives the same Table 2 times within 0.5% (the reads are
  -- back to back either way).
  spec_prefetch_layers = 2,
  -- UFS command queueing: JEDEC UFS 2.x-4.0 keep up to 32 commands outstanding
  -- per logical unit; with 32 requests in flight each request's latency is
  -- paid once per 32 (sim/hw/sim_cost.h): Qwen3-8B I/O = (851.41 + 8,120 x
  -- 0.0201 / 32) / 1.0642 = 804.8 ms, Llama-3.1-8B (844.27 + 8,052 x 0.0201 /
  -- 32) / 1.0157 = 836.2 ms.  Predicted 16-node verification = that I/O plus
  -- the last layer and the LM head over 16 rows: Qwen3-8B 854 ms (Table 2:
  -- 817), Llama-3.1-8B 878 ms (828); 32 nodes: 1241 (1229), 1244 (1255).
  spec_queue_depth = 32,
}
