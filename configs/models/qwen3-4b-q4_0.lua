-- Qwen3-4B, Q4_0 -- target model (flash-resident).
-- Architecture: the public Hugging Face config.json of Qwen/Qwen3-4B (a
-- target of Lever §5.1, Table 4).  Byte counts are derived in
-- sim/hw/sim_model.c from these fields, never written here:
--   params/layer = q 2560x4096 + k,v 2x2560x1024 + o 4096x2560 + FFN 3x2560x9728
--                = 100,925,440
--   bytes/layer  = 100,925,440 x 4.5 / 8 = 56,770,560 B
--   LM head      = 151936 x 2560 x 4.5 / 8 = 218,787,840 B (tied: the shared embedding/LM-head
--                  matrix stays in DRAM (sim_hw.h), so it is not streamed)
--   streamed per token at 0% DRAM = 36 x 56,770,560 = 2,043,740,160 B (the runtime keeps
--                  the LM head in DRAM: configs/devices/oneplus12.lua head_resident)
--   flash requests (512 KiB) = 36 x 109 = 3,924
--
-- Residual factors against Lever Table 1 (OnePlus 12, Flash-AR, 0% DRAM:
-- compute 131.5 ms, I/O 474.4 ms, total 605.9 ms).  "Structural" =
-- what configs/devices/oneplus12.lua predicts with both factors at 1, one row,
-- context 256 tokens (tests/sim/hw/test_calib_table1.c prints it):
--   I/O:     2,043,740,160 B / 4.2e6 B/ms + 3,924 x 0.0080 ms = 518.00 ms
--            flash_efficiency = 518.00 / 474.4 = 1.0919
--   compute: 37 NPU executions (36 layers + eager LM head) = 69.05 ms
--            npu_efficiency = 69.05 / 131.5 = 0.5251
--   Qwen3-4B is the outlier of Table 1: slower to compute than Qwen3-8B
--   (131.5 vs 96.6 ms) with half the weights and the same 36 layers, which no
--   size-based device model explains.
--   A factor > 1 means the phone did better than the device-level prediction.
--   Both factors are measured on the OnePlus 12 and assumed to carry to other
--   devices.
return {
  name = "qwen3-4b-q4_0",
  kind = "decoder",
  layers = 36,            -- config.json num_hidden_layers
  hidden = 2560,          -- config.json hidden_size
  heads = 32,             -- config.json num_attention_heads
  kv_heads = 8,           -- config.json num_key_value_heads
  head_dim = 128,         -- config.json head_dim
  ffn = 9728,             -- config.json intermediate_size
  vocab = 151936,         -- config.json vocab_size
  tied_embeddings = true, -- config.json tie_word_embeddings
  -- Q4_0, the format Lever §5.1 quantises target and draft to (ggml's
  -- block_q4_0): 32 weights in 16 B of 4-bit values + a 2 B fp16 scale =
  -- 18 B per 32 weights = 18 x 8 / 32 = 4.5 bits per weight.
  weight_bits = 4.5,
  -- fp16 K and V (llama.cpp's default cache type f16); KV per token =
  -- 2 x 36 x 8 x 128 x 2 B = 147,456 B (2 for K and V x layers x kv_heads
  -- x head_dim x bytes).
  kv_bits = 16,
  flash_efficiency = 1.0919, -- derived above from Table 1 I/O
  npu_efficiency = 0.5251, -- derived above from Table 1 compute
  -- not measured: no CPU figure exists for this model; 1 = device-level model.
  cpu_efficiency = 1.0,
}
