-- The Xiaomi Mi 10 with the Mi 11's UFS 3.1 in place of its UFS 3.0: one part
-- swapped (flash), the llama.cpp CPU runtime kept (studies/faster_parts.lua).
return {
  base = "xiaomi10",
  name = "mi10_ufs31",
  parts = { flash = "ufs3.1" },
}
