-- OnePlus 12: Snapdragon 8 Gen 3, UFS 4.0 flash, 12/16 GB LPDDR5X
-- (Lever §5.1, Table 3).  Lever's default ablation device.
--
-- The phone is its parts (configs/parts/, each figure cited there):
--   soc/sd8gen3          CPU and NPU rates, power states, thermal
--   flash/ufs4.0         sequential read, flash power
--   dram/lpddr5x-9600    peak bandwidth, access energy
--   runtime/lever-qnn    the runtime Lever measured: its loader, compiled
--                        shapes, set-up and the costs fitted on this phone
-- plus the keys below, which belong to the phone itself.  The calibration
-- (configs/calibration/oneplus12.lua; report configs/calibration/README.md)
-- fitted the runtime's costs on this phone against Lever Tables 1, 2, 5 and
-- 6; they live in the runtime part, marked as fits, because the runtime is
-- the same on all three phones of Lever's evaluation.  A re-calibration
-- (`flashspec calibrate`) writes one more layer on top: a profile with
-- base = "oneplus12" and the refitted keys.
--
-- `flashspec profiles --explain oneplus12` prints every resolved value with
-- where it came from.  Public figures beside every value, with the ratio and
-- the mechanism where they differ by more than 2x: configs/calibration/README.md,
-- "The phone against public figures".
return {
  name = "oneplus12",
  parts = { soc = "sd8gen3", flash = "ufs4.0", dram = "lpddr5x-9600", runtime = "lever-qnn" },

  -- assumption: half of the 12 GB variant (OnePlus 12 specification) is left
  -- to the LLM runtime; the memory an LLM may use is far below the physical
  -- DRAM (Lever §2.1: shared with the OS and apps).  With it a fully
  -- pinned Qwen3-8B (~4.3 GB + KV) fits and a fully pinned Qwen3-14B (~7.9 GB)
  -- does not.
  dram_budget_gb = 6.0,

  -- thermal throttling off by default (the soc part gives its onset and
  -- depth): enable it in a variant or an override (thermal = true) to study
  -- sustained decoding.
  thermal = false,
}
