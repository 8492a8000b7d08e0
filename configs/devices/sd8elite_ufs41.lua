-- Snapdragon 8 Elite with UFS 4.1 flash: the Honor Magic V5 of the Lever
-- evaluation (Lever §5.1, Table 3).  The Honor 500 Pro
-- profile (configs/devices/sd8elite_ufs31.lua: the same SoC, memory and
-- runtime) with the flash part replaced by UFS 4.1 (configs/parts/flash/ufs4.1.lua).
return {
  base = "sd8elite_ufs31",
  name = "sd8elite_ufs41",
  parts = { flash = "ufs4.1" },
}
