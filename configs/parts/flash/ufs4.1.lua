-- UFS 4.1 (JEDEC JESD220G, December 2024): the HS-G5 link of UFS 4.0.  The
-- flash of the Honor Magic V5 (Lever Table 3).
return {
  read_gbps = 4.3,
  flash_active_w = 1.5,
  flash_idle_w = 0.05,

  cite = {
    read_gbps = "SK hynix 321-layer UFS 4.1: up to 4.3 GB/s sequential read (telepolis.pl)",
    flash_active_w = "assumption: the UFS 4.x read power class of UFS 4.0 (the same HS-G5 link), 1.5 W",
    flash_idle_w = "assumption: UFS in hibernate between reads, ~0.05 W",
    request_latency_us = "no datasheet gives a command latency at queue depth 1. Range: SK hynix claims 15% faster random reads than its previous generation, so from the UFS 4.0 fit (8 us, runtime/lever-qnn) / 1.15 = 6.96 us to 8 us",
  },
  ranges = {
    request_latency_us = { 6.96, 8 },
  },
}
