-- The Xiaomi 11 of EdgeLLM's platform table: 1x Cortex-X2 3.0 GHz + 3x
-- Cortex-A710 2.5 GHz + 4x Cortex-A510, the cores of a Snapdragon 8 Gen 1.
-- The Mi 11 as sold (devices/xiaomi11.lua, Snapdragon 888) with its SoC part
-- replaced by the 8 Gen 1 (soc/sd8gen1); the memory (LPDDR5-6400, which both
-- SoCs drive at 3,200 MHz), the flash, the budget and the runtime are the
-- phone's.  devices/xiaomi11.lua says why both exist.
return {
  base = "xiaomi11",
  name = "xiaomi11_sd8gen1",
  parts = { soc = "sd8gen1" },
}
