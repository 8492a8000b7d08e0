-- The OnePlus 12 with UFS 3.1 flash in place of its UFS 4.0 (one slower part;
-- tests/studies/faster_parts.lua).
return { base = "oneplus12", name = "op12_ufs31", parts = { flash = "ufs3.1" } }
