-- UFS 3.1: two HS-G4 lanes, 11.6 Gb/s each (half of UFS 4.x's HS-G5).  The
-- flash of the Honor 500 Pro (Lever Table 3) and of the Xiaomi Mi 11.
return {
  read_gbps = 2.1,
  flash_active_w = 1.096,
  flash_idle_w = 0.05,

  cite = {
    read_gbps = "Samsung 512 GB eUFS 3.1 (March 2020): 2,100 MB/s sequential read (cdrinfo.com)",
    flash_active_w = "derived: Samsung rates UFS 4.0 at 6.0 MB/s per mA, 46% better than UFS 3.1 (4.11 MB/s per mA); reading at 2,100 MB/s draws 511 mA against UFS 4.0's 700 mA at 4,200 MB/s: 1.5 W x 511 / 700 = 1.096 W",
    flash_idle_w = "assumption: UFS in hibernate between reads, ~0.05 W",
    request_latency_us = "no datasheet gives a command latency at queue depth 1. Range: from the UFS 4.0 fit (8 us, runtime/lever-qnn) to twice it, the HS-G4 link running at half HS-G5's rate",
  },
  ranges = {
    request_latency_us = { 8, 16 },
  },
}
