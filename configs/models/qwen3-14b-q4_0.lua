-- Qwen3-14B, Q4_0 -- target model (flash-resident).
-- Architecture: the public Hugging Face config.json of Qwen/Qwen3-14B (a
-- target of Lever §5.1, Table 4).  Byte counts are derived in
-- sim/hw/sim_model.c from these fields, never written here:
--   params/layer = q 5120x5120 + k,v 2x5120x1024 + o 5120x5120 + FFN 3x5120x17408
--                = 330,301,440
--   bytes/layer  = 330,301,440 x 4.5 / 8 = 185,794,560 B
--   LM head      = 151936 x 5120 x 4.5 / 8 = 437,575,680 B (untied; kept in DRAM
--                  by the OnePlus 12's runtime, sim_hw.h "The runtime")
--   streamed per token at 0% DRAM = 40 x 185,794,560 = 7,431,782,400 B (the runtime keeps
--                  the LM head in DRAM: configs/devices/oneplus12.lua head_resident)
--   flash requests (512 KiB) = 40 x 355 = 14,200
--
-- Residual factors against Lever Table 1 (OnePlus 12, Flash-AR, 0% DRAM:
-- compute 141.2 ms, I/O 1967.1 ms, total 2108.3 ms).  "Structural" =
-- what configs/devices/oneplus12.lua predicts with both factors at 1, one row,
-- context 256 tokens (tests/sim/hw/test_calib_table1.c prints it):
--   I/O:     7,431,782,400 B / 4.2e6 B/ms + 14,200 x 0.0080 ms = 1883.07 ms
--            flash_efficiency = 1883.07 / 1967.1 = 0.9573
--   compute: 41 NPU executions (40 layers + eager LM head) = 146.33 ms
--            npu_efficiency = 146.33 / 141.2 = 1.0363
--   A factor > 1 means the phone did better than the device-level prediction.
--   Both factors are measured on the OnePlus 12 and assumed to carry to other
--   devices.
return {
  name = "qwen3-14b-q4_0",
  kind = "decoder",
  layers = 40,            -- config.json num_hidden_layers
  hidden = 5120,          -- config.json hidden_size
  heads = 40,             -- config.json num_attention_heads
  kv_heads = 8,           -- config.json num_key_value_heads
  head_dim = 128,         -- config.json head_dim
  ffn = 17408,            -- config.json intermediate_size
  vocab = 151936,         -- config.json vocab_size
  tied_embeddings = false, -- config.json tie_word_embeddings
  -- Q4_0, the format Lever §5.1 quantises target and draft to (ggml's
  -- block_q4_0): 32 weights in 16 B of 4-bit values + a 2 B fp16 scale =
  -- 18 B per 32 weights = 18 x 8 / 32 = 4.5 bits per weight.
  weight_bits = 4.5,
  -- fp16 K and V (llama.cpp's default cache type f16); KV per token =
  -- 2 x 40 x 8 x 128 x 2 B = 163,840 B (2 for K and V x layers x kv_heads
  -- x head_dim x bytes).
  kv_bits = 16,
  flash_efficiency = 0.9573, -- derived above from Table 1 I/O
  npu_efficiency = 1.0363, -- derived above from Table 1 compute
  -- not measured: no CPU figure exists for this model; 1 = device-level model.
  cpu_efficiency = 1.0,
}
