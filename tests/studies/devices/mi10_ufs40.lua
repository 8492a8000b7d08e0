-- The Xiaomi Mi 10 with UFS 4.0 in place of its UFS 3.0: one part swapped
-- (flash), the llama.cpp CPU runtime kept (studies/faster_parts.lua).
return {
  base = "xiaomi10",
  name = "mi10_ufs40",
  parts = { flash = "ufs4.0" },
}
