-- UFS 3.0 (JEDEC JESD220D, January 2018): two HS-G4 lanes, 11.6 Gb/s each.
-- The flash of the Xiaomi Mi 10.
return {
  read_gbps = 2.1,
  flash_active_w = 1.096,
  flash_idle_w = 0.05,

  cite = {
    read_gbps = "Samsung 512 GB eUFS 3.0 (February 2019): 2,100 MB/s sequential read, 63,000 random-read IOPS (cdrinfo.com)",
    flash_active_w = "assumption: UFS 3.1's derived 1.096 W (flash/ufs3.1: Samsung's read efficiency against UFS 4.0's) -- the same HS-G4 link and the same 2,100 MB/s rating; no efficiency figure is published for UFS 3.0",
    flash_idle_w = "assumption: UFS in hibernate between reads, ~0.05 W",
    request_latency_us = "no datasheet gives a command latency at queue depth 1. Range: from the UFS 4.0 fit (8 us, runtime/lever-qnn) to twice it, the HS-G4 link running at half HS-G5's rate",
  },
  ranges = {
    request_latency_us = { 8, 16 },
  },
}
