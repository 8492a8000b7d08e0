-- derived from a phone made of parts, with a part swapped and variants that
-- meet the parts' range variants
return { base = "sd8elite_ufs31", parts = { flash = "ufs4.1" },
         variants = { a = { npu_gflops = 900 } } }
