-- UFS 4.0 (JEDEC JESD220F): two HS-G5 lanes, 23.2 Gb/s each.  The flash of
-- the OnePlus 12, on which the runtime part lever-qnn fitted its per-request
-- latency (so this part states no range for it).
return {
  read_gbps = 4.2,
  flash_active_w = 1.5,
  flash_idle_w = 0.05,

  cite = {
    read_gbps = "Samsung UFS 4.0 launch figures (May 2022): 4,200 MB/s sequential read (Micron's 232-layer UFS 4.0, June 2023: 4,300 MB/s)",
    flash_active_w = "assumption: device and link streaming reads draw ~1-2 W (UFS 4.0 read power class); 1.5 W",
    flash_idle_w = "assumption: UFS in hibernate between reads, ~0.05 W",
  },
}
