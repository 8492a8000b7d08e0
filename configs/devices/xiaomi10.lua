-- Xiaomi Mi 10: Snapdragon 865 (1x Cortex-A77 2.84 GHz + 3x A77 2.42 GHz + 4x
-- A55 1.8 GHz), 8 GB LPDDR5 at 5,500 Mbps, UFS 3.0 -- one of the two
-- smartphones of EdgeLLM's evaluation (EdgeLLM §I, §II-B), running llama.cpp on
-- its CPU with the target swapped in from storage.  Public specifications:
-- Qualcomm's Snapdragon 865 product brief (cores, clocks, LPDDR5 2,750 MHz,
-- UFS 3.0); Xiaomi's Mi 10 launch (2020-02-13) and GSMArena's Mi 10 page
-- (8/12 GB LPDDR5, UFS 3.0); Micron: the Mi 10 is the first phone with its
-- LPDDR5 at 5,500 Mbps (dram/lpddr5-5500).
--
-- The phone is its parts (configs/parts/, each figure cited there):
--   soc/sd865              CPU rates (estimates with ranges), power states
--   flash/ufs3.0           Samsung's eUFS 3.0 rating; request latency range
--   dram/lpddr5-5500       44.0 GB/s peak
--   runtime/llamacpp-cpu   llama.cpp on the CPU, the target memory-mapped:
--                          page faults of the readahead size, one per thread
-- No timing of this phone is published with the detail a fit needs: nothing
-- here is fitted, and the model profiles' residual factors (fitted under
-- another runtime on the OnePlus 12) are the structural ones for the
-- targets of this setting (configs/models/vicuna-*, llama2-*-chat-*).
return {
  name = "xiaomi10",
  parts = { soc = "sd865", flash = "ufs3.0", dram = "lpddr5-5500", runtime = "llamacpp-cpu" },

  -- EdgeLLM §II-B: "the memory budget is defined as the total available memory
  -- after accounting for the operating system usage, which is ... 6.0 GB for
  -- Xiaomi 10" (of its 8 GB)
  dram_budget_gb = 6.0,

  -- thermal throttling off by default, as on the other phones
  thermal = false,
}
