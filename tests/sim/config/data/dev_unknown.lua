-- device profile with a misspelt key on line 5
return {
  name = "bad",
  dram_gbps = 76.8,
  read_gbp = 5.0,
}
