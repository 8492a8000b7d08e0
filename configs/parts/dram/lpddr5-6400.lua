-- LPDDR5 at 3,200 MHz (6,400 MT/s) on a 64-bit bus: the memory of the
-- Snapdragon 888 and 8 Gen 1 (soc/sd888, soc/sd8gen1), and of the Xiaomi Mi 11
-- (Xiaomi's launch specification, 2020-12-28: LPDDR5 at 6,400 Mbps).
return {
  dram_gbps = 51.2,
  dram_j_per_gb = 0.04,

  cite = {
    dram_gbps = "Snapdragon 888 and 8 Gen 1: LPDDR5 at 3,200 MHz (tipsclear.com Android Authority table; gizbot.com 2021-12-01): 6.4e9 x 8 B = 51.2 GB/s",
    dram_j_per_gb = "assumption: LPDDR5 access and I/O energy ~5 pJ/bit (public LPDDR4/5 figures are 4-6 pJ/bit): 0.04 J/GB",
  },
}
