-- LPDDR5X at 4,800 MHz (9,600 MT/s) on a 64-bit bus (4 x 16-bit channels):
-- the memory of the Snapdragon 8 Gen 3 (soc/sd8gen3) and the OnePlus 12.
return {
  dram_gbps = 76.8,
  dram_j_per_gb = 0.04,

  cite = {
    dram_gbps = "Snapdragon 8 Gen 3 memory: LPDDR5X up to 4,800 MHz (fyss.in spec table): 9.6e9 transfers/s x 8 B = 76.8 GB/s",
    dram_j_per_gb = "assumption: LPDDR5X access and I/O energy ~5 pJ/bit (public LPDDR4/5 figures are 4-6 pJ/bit): 5e-12 J x 8e9 bit = 0.04 J/GB",
  },
}
