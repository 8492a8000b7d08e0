-- every key is in range, but the merged profile's cpu_gbps exceeds dram_gbps
return {
  base = "oneplus12",
  cpu_gbps = 500,
}
