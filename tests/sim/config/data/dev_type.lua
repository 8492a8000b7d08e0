return {
  read_gbps = 5.0,
  dram_budget_gb = "six",
}
