-- The Honor Magic V5 profile with LPDDR5X-9600 in place of the 8 Elite's
-- LPDDR5X-10600 (one slower part; tests/studies/faster_parts.lua).
return { base = "sd8elite_ufs41", name = "e41_lp9600", parts = { dram = "lpddr5x-9600" } }
