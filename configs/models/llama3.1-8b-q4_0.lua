-- Llama-3.1-8B, Q4_0 -- target model (flash-resident).
-- Architecture: the public Hugging Face config.json of meta-llama/Llama-3.1-8B-Instruct (a
-- target of Lever §5.1, Table 4).  Byte counts are derived in
-- sim/hw/sim_model.c from these fields, never written here:
--   params/layer = q 4096x4096 + k,v 2x4096x1024 + o 4096x4096 + FFN 3x4096x14336
--                = 218,103,808
--   bytes/layer  = 218,103,808 x 4.5 / 8 = 122,683,392 B
--   LM head      = 128256 x 4096 x 4.5 / 8 = 295,501,824 B (untied; kept in DRAM
--                  by the OnePlus 12's runtime, sim_hw.h "The runtime")
--   streamed per token at 0% DRAM = 32 x 122,683,392 = 3,925,868,544 B (the runtime keeps
--                  the LM head in DRAM: configs/devices/oneplus12.lua head_resident)
--   flash requests (512 KiB) = 32 x 234 = 7,488
--
-- Residual factors against Lever Table 1 (OnePlus 12, Flash-AR, 0% DRAM:
-- compute 93.2 ms, I/O 990.6 ms, total 1083.8 ms).  "Structural" =
-- what configs/devices/oneplus12.lua predicts with both factors at 1, one row,
-- context 256 tokens (tests/sim/hw/test_calib_table1.c prints it):
--   I/O:     3,925,868,544 B / 4.2e6 B/ms + 7,488 x 0.0080 ms = 994.63 ms
--            flash_efficiency = 994.63 / 990.6 = 1.0041
--   compute: 33 NPU executions (32 layers + eager LM head) = 90.27 ms
--            npu_efficiency = 90.27 / 93.2 = 0.9686
--   A factor > 1 means the phone did better than the device-level prediction.
--   Both factors are measured on the OnePlus 12 and assumed to carry to other
--   devices.
return {
  name = "llama3.1-8b-q4_0",
  kind = "decoder",
  layers = 32,            -- config.json num_hidden_layers
  hidden = 4096,          -- config.json hidden_size
  heads = 32,             -- config.json num_attention_heads
  kv_heads = 8,           -- config.json num_key_value_heads
  head_dim = 128,         -- config.json head_dim
  ffn = 14336,            -- config.json intermediate_size
  vocab = 128256,         -- config.json vocab_size
  tied_embeddings = false, -- config.json tie_word_embeddings
  -- Q4_0, the format Lever §5.1 quantises target and draft to (ggml's
  -- block_q4_0): 32 weights in 16 B of 4-bit values + a 2 B fp16 scale =
  -- 18 B per 32 weights = 18 x 8 / 32 = 4.5 bits per weight.
  weight_bits = 4.5,
  -- fp16 K and V (llama.cpp's default cache type f16); KV per token =
  -- 2 x 32 x 8 x 128 x 2 B = 131,072 B (2 for K and V x layers x kv_heads
  -- x head_dim x bytes).
  kv_bits = 16,
  flash_efficiency = 1.0041, -- derived above from Table 1 I/O
  npu_efficiency = 0.9686, -- derived above from Table 1 compute
  -- not measured: no CPU figure exists for this model; 1 = device-level model.
  cpu_efficiency = 1.0,
}
