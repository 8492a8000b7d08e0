-- a phone made of parts (configs/parts/), one part swapped and one key set
return {
  parts = { soc = "sd8elite", flash = "ufs3.0", dram = "lpddr5-5500", runtime = "lever-qnn" },
  dram_budget_gb = 4, -- assumption
  fit = { dram_budget_gb = "a fit" },
}
