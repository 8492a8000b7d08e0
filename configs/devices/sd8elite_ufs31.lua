-- Snapdragon 8 Elite with UFS 3.1 flash: the Honor 500 Pro of the Lever
-- evaluation (Lever §5.1, Table 3).  No DRAM size is given.
--
-- No timing is published for this phone: it is built from its parts, with
-- nothing fitted on it and nothing copied from the OnePlus 12 but the runtime
-- (Lever §5.1 runs one implementation on all three phones):
--   soc/sd8elite         CPU and NPU rates from public figures and Qualcomm's
--                        claims against the 8 Gen 3, with ranges
--   flash/ufs3.1         Samsung's eUFS 3.1 rating; its request latency range
--   dram/lpddr5x-10600   the 8 Elite's LPDDR5X at 5,300 MHz
--   runtime/lever-qnn    the runtime's mechanisms; its costs fitted on the
--                        OnePlus 12 carried by the part's transfer rules (the
--                        multi-row NPU kernels x the NPU claim, host-side
--                        management / the CPU claim), with their ranges
-- The model profiles' residual factors (flash_efficiency, npu_efficiency)
-- were derived on the OnePlus 12 and apply unchanged.  Where a part states a
-- range, the profile gets the standing variants parts_slow and parts_fast, so
-- the ranges reach tokens_per_s_model_lo / _hi.
return {
  name = "sd8elite_ufs31",
  parts = { soc = "sd8elite", flash = "ufs3.1", dram = "lpddr5x-10600", runtime = "lever-qnn" },

  -- assumption: no DRAM size is given for this phone; the OnePlus 12's budget
  -- (6 GB) keeps DRAM-fraction runs comparable across the three phones.
  dram_budget_gb = 6.0,
  -- thermal throttling off by default, as on the OnePlus 12
  thermal = false,
}
