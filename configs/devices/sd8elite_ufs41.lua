-- Snapdragon 8 Elite with UFS 4.1 flash: the Honor Magic V5 of the Lever
-- evaluation (CALIBRATION.md "Devices"; Lever Table 3).  The Honor 500 Pro
-- profile (configs/devices/sd8elite_ufs31.lua: the same SoC and runtime) with
-- the flash part replaced:
--   [UFS41]  UFS 4.1: up to 4.3 GB/s sequential read (SK hynix, 321-layer
--            UFS 4.1); Micron's UFS 4.0 part reads 4,300 MB/s as well.
return {
  base = "sd8elite_ufs31",
  name = "sd8elite_ufs41",
  read_gbps = 4.3, -- [UFS41]
}
