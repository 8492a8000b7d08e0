-- Snapdragon 8 Elite with UFS 3.1 flash: the Honor 500 Pro of the Lever
-- evaluation (CALIBRATION.md "Devices"; Lever Table 3).  No DRAM size is given.
--
-- No timing is published for this phone.  It is the OnePlus 12 profile
-- (configs/devices/oneplus12.lua: the same runtime, Lever §5.1 runs one
-- implementation on all three phones) with the parts that differ replaced by
-- their public specifications, and the OnePlus 12's fitted runtime costs
-- scaled by the vendor's generational claims, stated below.  The model
-- profiles' residual factors (flash_efficiency, npu_efficiency) were derived on
-- the OnePlus 12 and apply unchanged.  Public figures used:
--   [UFS31]  eUFS 3.1: 2,100 MB/s sequential read (Samsung, March 2020).
--   [SD8E]   Snapdragon 8 Elite (Qualcomm launch, 2024-10-21): LPDDR5X at
--            5,300 MHz; Hexagon NPU "45% faster" and Oryon CPU "45% faster"
--            than the Snapdragon 8 Gen 3.
-- Everything not listed is the OnePlus 12's, for the reason given there.
return {
  base = "oneplus12",
  name = "sd8elite_ufs31",

  -- flash: the UFS 3.1 rating [UFS31]; the request size, its latency (8 us,
  -- the command overhead fitted on the OnePlus 12's Table 1) and the one
  -- request in flight are the runtime's, carried over.
  read_gbps = 2.1,

  -- DRAM: LPDDR5X at 5,300 MHz [SD8E], double data rate x 64-bit bus =
  -- 10.6e9 x 8 B = 84.8 GB/s.  The budget left to the LLM (6 GB) is carried
  -- over: no DRAM size is given, and one budget keeps DRAM-fraction runs
  -- comparable across the three phones.
  dram_gbps = 84.8,
  -- the NPU's weight-read rate: the OnePlus 12's rule (the DRAM peak).
  npu_gbps = 84.8,
  -- the verification's multi-row kernels (fitted on the OnePlus 12: 693.502
  -- GFLOP/s) scaled by the NPU claim [SD8E]: 693.502 x 1.45 = 1005.6.
  npu_gflops = 1005.6,
  -- CPU: the OnePlus 12's public GEMV rate (38.6 GB/s, 50.3% of its DRAM peak)
  -- at the same share of this DRAM peak: 38.6 x 84.8 / 76.8 = 42.6 GB/s; its
  -- multi-row rate (576 GFLOP/s) scaled by the CPU claim [SD8E]: 835.
  cpu_gbps = 42.6,
  cpu_gflops = 835,
  -- the runtime's management per tree graph (fitted on the OnePlus 12: 13943.3
  -- us) is host-side work, scaled by the CPU claim [SD8E]: 13943.3 / 1.45 =
  -- 9616.1 us.
  verify_graph_us = 9616.1,

  -- standing variants: the OnePlus 12's, scaled as above (NPU x 1.45, per
  -- graph and constant set-up / 1.45).
  variants = {
    min8 = { verify_min_rows = 8, npu_gflops = 976.8, verify_graph_us = 9270.1 },
    all = { npu_shapes = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                           21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38,
                           39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56,
                           57, 58, 59, 60, 61, 62, 63, 64, 128, 256 },
            npu_gflops = 1100.4, verify_graph_us = 11164.1 },
    const = { npu_gflops = 1031.9, verify_graph_us = 0, verify_setup_us = 354363 },
  },
}
