-- a phone on the llama.cpp CPU runtime (runtime/llamacpp-cpu): every compute
-- on the CPU, the target paged in by faults; one key of the runtime set
return {
  parts = { soc = "sd865", flash = "ufs3.0", dram = "lpddr5-5500", runtime = "llamacpp-cpu" },
  dram_budget_gb = 6.0, -- assumption
  verify_unit = "cpu", -- the runtime's own value
}
