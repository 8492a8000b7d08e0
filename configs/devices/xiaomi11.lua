-- Xiaomi Mi 11 as sold: Snapdragon 888 (1x Cortex-X1 2.84 GHz + 3x Cortex-A78
-- 2.42 GHz + 4x Cortex-A55 1.8 GHz), 8 GB LPDDR5 at 6,400 Mbps, UFS 3.1 -- the
-- second smartphone of EdgeLLM's evaluation (EdgeLLM §I), running llama.cpp
-- on its CPU.  Public specifications: Qualcomm's Snapdragon 888 product brief
-- (cores, clocks, LPDDR5 3,200 MHz); Xiaomi's Mi 11 launch (2020-12-28) and
-- GSMArena's Mi 11 page (8/12 GB LPDDR5, UFS 3.1).
--
-- Which SoC.  EdgeLLM's platform table lists 1x X2 3.0 GHz + 3x A710 2.5 GHz +
-- 4x A510 for its "Xiaomi 11" -- the cores of a Snapdragon 8 Gen 1, which the
-- Mi 11 never shipped with (its successor, the Xiaomi 12, does).  Either the
-- table names the wrong phone or the wrong cores; the phone's name is the
-- more specific record, so this profile models the Mi 11 as sold, and
-- devices/xiaomi11_sd8gen1.lua is the same phone with the table's cores (the
-- 8 Gen 1 part) for a reading of the paper's numbers against its own table.
--
-- The phone is its parts (configs/parts/, each figure cited there):
--   soc/sd888              CPU rates (estimates with ranges), power states
--   flash/ufs3.1           Samsung's eUFS 3.1 rating; request latency range
--   dram/lpddr5-6400       51.2 GB/s peak
--   runtime/llamacpp-cpu   llama.cpp on the CPU, the target memory-mapped
-- Nothing is fitted (as devices/xiaomi10.lua).
return {
  name = "xiaomi11",
  parts = { soc = "sd888", flash = "ufs3.1", dram = "lpddr5-6400", runtime = "llamacpp-cpu" },

  -- assumption: EdgeLLM states the budget of the Xiaomi 10 only (§II-B: 6.0 GB
  -- of 8 GB left after the OS); the Mi 11 has the same 8 GB and a system of
  -- the same generation (MIUI 12, Android 11 against the Mi 10's Android 10),
  -- so the same 6.0 GB (plausibly 5.5-6.5 GB: a newer system's larger
  -- footprint against the same RAM)
  dram_budget_gb = 6.0,

  -- thermal throttling off by default, as on the other phones
  thermal = false,
}
