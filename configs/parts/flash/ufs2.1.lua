-- UFS 2.1: two HS-G3 lanes, 5.8 Gb/s each (a quarter of UFS 4.x's HS-G5).
return {
  read_gbps = 0.86,

  cite = {
    read_gbps = "Samsung 512 GB eUFS 2.1 (November 2017): 860 MB/s sequential read (the 1 TB part of January 2019: 1,000 MB/s; liliputing.com, pcper.com). Range: 860 to 1,000 MB/s",
    request_latency_us = "no datasheet gives a command latency at queue depth 1. Range: from the UFS 4.0 fit (8 us, runtime/lever-qnn) to four times it, the HS-G3 link running at a quarter of HS-G5's rate",
  },
  ranges = {
    read_gbps = { 0.86, 1.0 },
    request_latency_us = { 8, 32 },
  },
}
