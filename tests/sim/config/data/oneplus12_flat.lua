-- The OnePlus 12 profile as one flat file, as it was before it was made of
-- parts (configs/parts/): tests/sim/config/test_parts.c checks that the
-- parts resolve to exactly these values and variants.
-- OnePlus 12: Snapdragon 8 Gen 3, UFS 4.0 flash, 12/16 GB LPDDR5X
-- (Lever §5.1, Table 3).  Lever's default ablation device.
--
-- Every value below cites a public figure, a figure of the Lever paper, or a
-- derivation from Lever Table 1 (Flash-AR per-token latency on this phone,
-- whole model streamed: compute / I/O / total ms).  The derivations use the
-- byte counts sim/hw derives from each model's architecture (Q4_0 = 4.5 bits
-- per weight; per layer q,k,v,o + 3 FFN matrices; LM head = vocab x hidden):
--
--   target        layers x layer bytes       LM head bytes  512 KiB reads
--   Llama-3.1-8B  32 x 122,683,392  = 3,925,868,544   295,501,824    7,488
--   Qwen3-4B      36 x  56,770,560  = 2,043,740,160   (tied)         3,924
--   Qwen3-8B      36 x 108,527,616  = 3,906,994,176   350,060,544    7,452
--   Qwen3-14B     40 x 185,794,560  = 7,431,782,400   437,575,680   14,200
--   (reads = ceil(layer bytes / 524,288) per layer)
--
-- Structure of a Flash-AR token at 0% DRAM (sim/hw/sim_hw.h): the runtime
-- reads a layer, then computes it (one buffer: read, compute, read, ...), so
-- I/O = the layers' reads and compute = L + 1 NPU graph executions (L layers
-- + the LM head, which the runtime keeps in DRAM: head_resident below), total
-- = compute + I/O as Table 1 shows.  What the device-level model leaves
-- unexplained per target goes into that target's profile as flash_efficiency
-- / npu_efficiency (derived there).
--
-- Public figures beside every value, with the ratio and the mechanism where
-- they differ by more than 2x: configs/calibration/README.md, "The phone
-- against public figures".
return {
  name = "oneplus12",

  -- flash ------------------------------------------------------------------
  -- UFS 4.0 sequential read as rated: 4,200 MB/s (Samsung UFS 4.0 launch
  -- figures, May 2022; Micron's UFS 4.0 part: 4,300 MB/s).  Lever §2.1's
  -- "typically 5 GB/s" is above the rating; Table 1 reads below it once the
  -- LM head stays in DRAM (Qwen3-8B: 3,906,994,176 B / 953.4 ms = 4.10 GB/s;
  -- with the head streamed it would be 4.47 GB/s, above the rated part).
  read_gbps = 4.2,
  -- the runtime reads weights in 512 KiB requests (the usual max_sectors_kb
  -- of a UFS block device on Android/Linux), one in flight (queue_depth
  -- below): each request pays its command latency in full.
  request_kb = 512,
  -- derived from Table 1, pooled over the four targets, head resident:
  --   sum of Table 1 I/O = 990.6 + 474.4 + 953.4 + 1967.1 = 4385.5 ms
  --   sum of streamed bytes / 4.2 GB/s = 17,308,385,280 B / 4.2e6 B/ms = 4121.04 ms
  --   sum of requests = 7,488 + 3,924 + 7,452 + 14,200 = 33,064
  --   latency = (4385.5 - 4121.04) ms / 33,064 = 0.00800 ms = 8.0 us per request
  -- (no datasheet gives a UFS 4.0 command latency at queue depth 1; 8 us is
  -- the order of a UFS command's protocol overhead, well below a 4 KiB random
  -- read's ~60-150 us, which includes the NAND page read)
  request_latency_us = 8.0,
  -- Lever Table 1: total = compute + I/O exactly (e.g. Qwen3-8B 96.6 + 953.4 =
  -- 1050.0): the runtime's loader has one layer buffer, so a layer's read
  -- waits for the compute of the layer before it (sim/hw/sim_hw.h "The
  -- runtime": the loader's ring of prefetch_layers + 1 buffers).
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
  -- fitted by flashspec calibrate to Lever Tables 1, 2, 5 and the released
  -- curve of Table 6 jointly (configs/calibration/oneplus12.lua; report
  -- configs/calibration/README.md): the rate of the verification's multi-row
  -- kernels per padded row.  Table 2, read as the tree-dependent part of a
  -- verification on top of the streamed I/O, grows by ~26 ms per row from 16
  -- to 32 nodes on both 8B targets: that slope is the rows' arithmetic.  At
  -- one row every op stays weight-bound (a Qwen3-8B layer: 0.39 GFLOP / 694
  -- GFLOP/s = 0.56 ms < 108.5 MB / 76.8 GB/s = 1.41 ms), so Table 1 does not
  -- see it.  Public NPU prompt processing on this SoC, with Qualcomm's
  -- compiled w4a16 graphs, runs at 9.2-12.5 TFLOP/s (AI Hub, Llama-2-7B and
  -- Llama-3-8B on a Galaxy S24): 13-18x more.  The fitted rate is the vector /
  -- CPU class of this phone (ExecuTorch's CPU prefill, cpu_gflops below, 576
  -- GFLOP/s): the runtime's few-row graphs over streamed Q4_0 weights do not
  -- run the matrix path those figures measure (configs/calibration/README.md,
  -- "The phone against public figures").
  npu_gflops = 693.502, -- +/- 47.2 (fit standard error)
  -- assumption: graphs compiled for power-of-two row counts (static shapes,
  -- Lever §2.2 / §4.4); more rows run as several executions of the largest.
  -- Verification splits at the predictor's layer: the layers before it run
  -- the whole tree's padded graph, the layers after it the kept rows' own.
  npu_shapes = { 1, 2, 4, 8, 16, 32, 64, 128, 256 },
  -- selected by the calibration: no smallest multi-row graph (a 6-row tree
  -- runs the 8-row graph, a 3-row one the 4-row graph).  A smallest graph of
  -- 8 rows and every row count compiled fit the four tables less well; they
  -- are standing variants (configs/calibration/README.md).
  verify_min_rows = 1,

  -- CPU --------------------------------------------------------------------
  -- GEMV rate from a public CPU decode figure on this phone: ExecuTorch's
  -- XNNPACK backend decodes Llama-2-7B with 4-bit groupwise weights (8da4w,
  -- group 128) at 11.55 tok/s on the OnePlus 12 (pytorch/executorch,
  -- examples/models/llama2/README.md).  Decode is weight-bound: its linear
  -- weights, 6.48e9 x 4.125 bits / 8 = 3.34 GB, read once a token, give
  -- 3.34 GB x 11.55 /s = 38.6 GB/s.  (A 3B model's runtime in the
  -- practitioner article of K. Wiewiór, "Speculative Decoding for On-Device
  -- LLMs on Android" (MVP Factory blog), reached 17.2 GB/s;
  -- Tables 1, 2 and 5 do not determine the rate.)
  cpu_gbps = 38.6,
  -- multi-row GEMM rate of the big cores on 4-bit weights, from the same
  -- source: ExecuTorch (KleidiAI) prefills Llama-3.2-3B SpinQuant at 89.7
  -- tok/s on the OnePlus 12 (examples/models/llama/README.md):
  -- 2 x 3.21e9 x 89.7 = 0.58 TFLOP/s.
  cpu_gflops = 576,

  -- the runtime (sim/hw/sim_hw.h "The runtime"): one for every policy --------
  -- Lever Table 1: total = compute + I/O exactly (e.g. Qwen3-8B 96.6 + 953.4 =
  -- 1050.0), so the runtime reads a layer, then computes it (prefetch_layers =
  -- 0, above) with one synchronous request at a time; Table 5's Flash-AR
  -- (0.952 tok/s) is that same 1050.0 ms per token.
  queue_depth = 1,
  -- fitted by flashspec calibrate (as npu_gflops): what a tree verification
  -- pays per target graph beyond its rows (L + 1 graphs: 37 on Qwen3-8B, 33
  -- on Llama-3.1-8B) -- the runtime switches each layer's graph from the
  -- decode shape to the tree's and binds its buffers (weights, KV, mask) to it,
  -- Lever §4.1's "runtime management" of a verification.  Table 2 needs it:
  -- 16 -> 32 nodes adds ~412 ms but 16 nodes already cost 817 ms beyond the
  -- I/O, against 96.6 ms of compute for one row (Table 1).  Per graph, it fits
  -- the four tables better than one constant per verification (RMS 3.6%
  -- against 4.3%, AIC -240 against -225; README.md "Mechanisms of the
  -- set-up"), and the Table 6 curve selects a cost that does not vanish when
  -- the target is pinned (~0.85 s per Lever cycle at 100%).  No public figure
  -- sizes it: a placeholder for the runtime's management, with the constant as
  -- a standing variant.
  verify_graph_us = 13943.3, -- +/- 712 (fit standard error)
  verify_setup_us = 0,
  -- a cycle that drafted runs its verification on the tree graphs even when it
  -- keeps the root alone, so it pays them; a plain decode step (Flash-AR) runs
  -- the decode graphs and never does (Table 1: total = compute + I/O).  The
  -- Table 6 curve selects it: with a free one-row verification Lever's stop
  -- rule falls back to one row at 100% DRAM (9.5 tok/s against the phone's
  -- 3.4; RMS 29% against 3.6%).
  verify_setup_one_row = true,
  -- the set-up's parts that scale with bytes or streamed layers (sim/hw/sim_hw.h
  -- "The set-up"): none is charged; a set-up per streamed byte vanishes when
  -- the target is pinned, which the Table 6 curve rejects.
  verify_setup_streamed_us_per_gb = 0,
  verify_setup_resident_us_per_gb = 0,
  verify_setup_layer_us = 0,
  -- the LM head: the runtime keeps it in DRAM at every budget (the budget
  -- pins the first x% of the layers, as in Lever's DRAM-budget setting
  -- behind Table 6; the head is not a
  -- layer).  Table 1 selects it: with the head streamed its I/O implies
  -- 4.47 GB/s for Qwen3-8B, above the part's 4.2 GB/s rating (flash, above).
  head_resident = true,
  -- reads during drafting: the loader has a free buffer while the cycle drafts
  -- and knows the next verification's first layer; whether this runtime uses
  -- it is selected by the calibration (configs/calibration/README.md).
  read_during_draft = false,
  -- standing variants (sim/lua/profile.h): the explanations the calibration
  -- cannot tell apart from this one (configs/calibration/README.md).  Each is
  -- valued by flashspec calibrate with the workloads held at the shipped
  -- presets (--arg fixed_accept=1), where the profile fits Lever Tables 1, 2,
  -- 5 and 6 to RMS 3.50%.  Result rows carry tokens_per_s_model_lo / _hi over
  -- the profile and these.
  variants = {
    -- a smallest multi-row verification graph of 8 rows (--arg min_rows=8):
    -- RMS 4.56%; pruning a tree of 8 rows or fewer then saves no graph
    min8 = { verify_min_rows = 8,
             npu_gflops = 673.665,      -- +/- 50.6 (fit standard error)
             verify_graph_us = 13441.6 }, -- +/- 747
    -- every row count compiled (--arg shapes=all): RMS 4.88%
    all = { npu_shapes = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                           21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38,
                           39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
                           57, 58, 59, 60, 61, 62, 63, 64, 128, 256 },
            npu_gflops = 758.884,       -- +/- 31.5
            verify_graph_us = 16188 },  -- +/- 443
    -- one constant per tree verification instead of a cost per tree graph
    -- (--arg setup=const): RMS 3.44%, the same on the Qwen3-8B points; it
    -- differs on targets with other layer counts (33 graphs on Llama-3.1-8B,
    -- 41 on Qwen3-14B)
    const = { npu_gflops = 711.652,     -- +/- 30.5
              verify_graph_us = 0,
              verify_setup_us = 513826 }, -- +/- 15300
  },

  -- tree verifications read as Table 1's runtime does: one whose reads run
  -- ahead of compute (verify_overlap, with the spec_* keys below) fits far
  -- worse (RMS 8.5%; README.md).
  verify_overlap = false,
  -- per temporary sequence (leaf) on top of copying the tree rows' KV at
  -- cpu_gbps: Table 5's chains (one leaf) need the set-up too, so a per-leaf
  -- cost cannot stand in for it, and no measurement sizes one beside it: none
  -- is charged.
  kv_seq_us = 0,
  -- per tree row (mask row, position, gather) and a KV snapshot over the
  -- context per verification (sim/hw/sim_hw.h "The set-up"): no measurement
  -- sizes them; the snapshot of a few hundred context tokens at cpu_gbps
  -- (2 x 300 x 147,456 B / 38.6 GB/s = 2.3 ms) is below what these data
  -- resolve.  Neither is charged.
  verify_row_us = 0,
  verify_kv_snapshot = false,
  -- what a stand-alone NPU call issued by CPU-side control flow (a draft call,
  -- an on-demand head row) pays beyond its graph's launch and sync: a FastRPC
  -- round trip is "a few hundred us to several ms" (Hexagon SDK), which the
  -- per-graph launch + sync above (1.06 ms) already covers; Tables 1, 2 and 5
  -- do not determine more, so none is charged; scripts/study_ablations.lua
  -- shows how the Lever ablations move with it.
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
  -- Anchor: K. Wiewiór, "Speculative Decoding for On-Device LLMs on Android"
  -- (MVP Factory blog), Snapdragon 8 Gen 3, a 3B
  -- model decoding autoregressively on the CPU from DRAM: 8.2 tok/s at 4.8 W
  -- average = 4.8 / 8.2 = 0.585 J per token.  That decode is weight-bound
  -- (that runtime's 2.1 GB x 8.2 /s = 17.2 GB/s), the CPU is busy the whole
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
  -- CPU cluster decoding.  Check against the same article's speculative row
  -- (60M draft, K=4: 15.6 tok/s at 5.1 W): the CPU is again busy the whole
  -- time, so the model predicts ~4.8 W plus the draft's extra DRAM traffic,
  -- within 6% of 5.1 W.
  cpu_active_w = 2.962,

  -- thermal (sim/hw/sim_hw.h "Thermal"), off by default ----------------------
  -- K. Wiewiór, "Speculative Decoding for On-Device LLMs on Android" (MVP
  -- Factory blog): "After 15-20 seconds of sustained
  -- inference, clock speeds can drop 30-40%": the midpoints, 17.5 s and 0.35.
  -- Enable in a profile variant (thermal = true) to study sustained decoding.
  thermal = false,
  thermal_onset_s = 17.5,
  thermal_throttle = 0.35,

  -- memory -------------------------------------------------------------------
  -- separate draft and target KV caches (the usual layout); K. Wiewiór,
  -- "Speculative Decoding for On-Device LLMs on Android" (MVP Factory blog,
  -- "KV cache sharing via memory-mapped GGUF") describes sharing one
  -- memory-mapped region: set kv_shared = true for that runtime.
  kv_shared = false,

  -- draft work overlapping a verification (sim/hw/sim_hw.h "Overlap") -------
  -- EdgeLLM §III-D (Fig. 13): running the draft in parallel with the
  -- target slowed the target's computing by 2.2-2.3x and its parameter loading
  -- by 1.05-1.09x; the midpoints 2.25 and 1.07.  Measured on a Jetson TX2 (no
  -- phone measurement is published): carried over as the only figure there is.
  contention_compute = 2.25,
  contention_load = 1.07,
  -- same section: the two models barely disturb each other unless memory use
  -- exceeds 90%, so overlapping drafting may fill the DRAM budget up to 0.9.
  mem_upper_bound = 0.9,
}
