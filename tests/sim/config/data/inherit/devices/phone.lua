-- the root of the test chains: a complete device
return {
  name = "phone",
  read_gbps = 5.0,
  dram_budget_gb = 6,
  dram_gbps = 76.8,
  npu_gbps = 76.8,
  npu_gflops = 1000,
  launch_us = 500,
  sync_us = 500,
  cpu_gbps = 17.2,
  cpu_gflops = 200,
}
