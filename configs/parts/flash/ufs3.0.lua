-- UFS 3.0 (JEDEC JESD220D, January 2018): two HS-G4 lanes, 11.6 Gb/s each.
-- The flash of the Xiaomi Mi 10.
return {
  read_gbps = 2.1,

  cite = {
    read_gbps = "Samsung 512 GB eUFS 3.0 (February 2019): 2,100 MB/s sequential read, 63,000 random-read IOPS (cdrinfo.com)",
    request_latency_us = "no datasheet gives a command latency at queue depth 1. Range: from the UFS 4.0 fit (8 us, runtime/lever-qnn) to twice it, the HS-G4 link running at half HS-G5's rate",
  },
  ranges = {
    request_latency_us = { 8, 16 },
  },
}
