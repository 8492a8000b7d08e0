-- Qwen3-8B, Q4_0 -- target model (flash-resident).
-- Architecture: the public Hugging Face config.json of Qwen/Qwen3-8B (a
-- target of Lever §5.1, Table 4).  Byte counts are derived in
-- sim/hw/sim_model.c from these fields, never written here:
--   params/layer = q 4096x4096 + k,v 2x4096x1024 + o 4096x4096 + FFN 3x4096x12288
--                = 192,937,984
--   bytes/layer  = 192,937,984 x 4.5 / 8 = 108,527,616 B
--   LM head      = 151936 x 4096 x 4.5 / 8 = 350,060,544 B (untied; kept in DRAM
--                  by the OnePlus 12's runtime, sim_hw.h "The runtime")
--   streamed per token at 0% DRAM = 36 x 108,527,616 = 3,906,994,176 B (the runtime keeps
--                  the LM head in DRAM: configs/devices/oneplus12.lua head_resident)
--   flash requests (512 KiB) = 36 x 207 = 7,452
--
-- Residual factors against Lever Table 1 (OnePlus 12, Flash-AR, 0% DRAM:
-- compute 96.6 ms, I/O 953.4 ms, total 1050.0 ms).  "Structural" =
-- what configs/devices/oneplus12.lua predicts with both factors at 1, one row,
-- context 256 tokens (tests/sim/hw/test_calib_table1.c prints it):
--   I/O:     3,906,994,176 B / 4.2e6 B/ms + 7,452 x 0.0080 ms = 989.85 ms
--            flash_efficiency = 989.85 / 953.4 = 1.0382
--   compute: 37 NPU executions (36 layers + eager LM head) = 95.02 ms
--            npu_efficiency = 95.02 / 96.6 = 0.9836
--   A factor > 1 means the phone did better than the device-level prediction.
--   Both factors are measured on the OnePlus 12 and assumed to carry to other
--   devices.
return {
  name = "qwen3-8b-q4_0",
  kind = "decoder",
  layers = 36,            -- config.json num_hidden_layers
  hidden = 4096,          -- config.json hidden_size
  heads = 32,             -- config.json num_attention_heads
  kv_heads = 8,           -- config.json num_key_value_heads
  head_dim = 128,         -- config.json head_dim
  ffn = 12288,            -- config.json intermediate_size
  vocab = 151936,         -- config.json vocab_size
  tied_embeddings = false, -- config.json tie_word_embeddings
  -- Q4_0, the format Lever §5.1 quantises target and draft to (ggml's
  -- block_q4_0): 32 weights in 16 B of 4-bit values + a 2 B fp16 scale =
  -- 18 B per 32 weights = 18 x 8 / 32 = 4.5 bits per weight.
  weight_bits = 4.5,
  -- fp16 K and V (llama.cpp's default cache type f16); KV per token =
  -- 2 x 36 x 8 x 128 x 2 B = 147,456 B (2 for K and V x layers x kv_heads
  -- x head_dim x bytes).
  kv_bits = 16,
  flash_efficiency = 1.0382, -- derived above from Table 1 I/O
  npu_efficiency = 0.9836, -- derived above from Table 1 compute
  -- not measured: no CPU figure exists for this model; 1 = device-level model.
  cpu_efficiency = 1.0,
}
