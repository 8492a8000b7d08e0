-- The OnePlus 12 with the Snapdragon 8 Elite in place of its 8 Gen 3 (one
-- faster part; tests/studies/faster_parts.lua).
return { base = "oneplus12", name = "op12_sd8elite", parts = { soc = "sd8elite" } }
