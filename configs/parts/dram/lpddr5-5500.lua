-- LPDDR5 at 5,500 MT/s on a 64-bit bus: the memory of the Xiaomi Mi 10.
return {
  dram_gbps = 44.0,
  dram_j_per_gb = 0.04,

  cite = {
    dram_gbps = "Xiaomi Mi 10: LPDDR5 at 5,500 Mbps, the first phone with it (Micron; androidcommunity.com, xiaomireview.com): 5.5e9 x 8 B = 44.0 GB/s",
    dram_j_per_gb = "assumption: LPDDR5 access and I/O energy ~5 pJ/bit (public LPDDR4/5 figures are 4-6 pJ/bit): 0.04 J/GB",
  },
}
