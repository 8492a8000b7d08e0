return {
  read_gbps = 5.0,
  dram_gbps = = 76.8,
}
