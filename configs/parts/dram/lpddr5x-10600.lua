-- LPDDR5X at 5,300 MHz (10,600 MT/s) on a 64-bit bus: the memory the
-- Snapdragon 8 Elite (soc/sd8elite) supports.
return {
  dram_gbps = 84.8,
  dram_j_per_gb = 0.04,

  cite = {
    dram_gbps = "Snapdragon 8 Elite: 'dual-channel LPDDR5X RAM up to 5,300MHz' (Qualcomm launch, 2024-10-21; expertreviews.com, xda-developers.com spec table): 10.6e9 transfers/s x 8 B = 84.8 GB/s",
    dram_j_per_gb = "assumption: LPDDR5X access and I/O energy ~5 pJ/bit (public LPDDR4/5 figures are 4-6 pJ/bit): 0.04 J/GB",
  },
}
