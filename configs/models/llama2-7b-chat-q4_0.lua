-- LLaMA-2-Chat-7B, Q4_0 -- draft (DRAM-resident) or target: one of the models of EdgeLLM's
-- smartphone setting (EdgeLLM §I: Vicuna and LLaMA-2, llama.cpp INT4 on the CPU).
-- Architecture: the public Hugging Face config.json of meta-llama/Llama-2-7b-chat-hf
-- (LLaMA-2, Touvron et al. 2023, Table 1 gives the same shapes).
-- Byte counts are derived in sim/hw/sim_model.c from these fields, never
-- written here:
--   params/layer = q,k,v,o 4 x 4096x4096 + FFN 3 x 4096x11008 = 202,375,168
--   bytes/layer  = 202,375,168 x 4.5 / 8 = 113,836,032 B
--   LM head      = 131,072,000 x 4.5 / 8 = 73,728,000 B (untied: lm_head apart from embed_tokens)
--   weights      = 32 x 113,836,032 + 73,728,000 = 3,716,481,024 B (the input embedding, read a row per token, not counted)
--   KV per token = 2 x 32 x 32 x 128 x 2 B = 524,288 B (fp16, no grouped-query attention)
--   faults of 128 KiB (runtime/llamacpp-cpu) = 869 per layer, 563 for the head
-- No timing of this model is published with the detail a fit needs: the
-- residual factors stay at 1 (the device-level model).
return {
  name = "llama2-7b-chat-q4_0",
  kind = "decoder",
  layers = 32,            -- config.json num_hidden_layers
  hidden = 4096,          -- config.json hidden_size
  heads = 32,             -- config.json num_attention_heads
  kv_heads = 32,          -- config.json num_key_value_heads (= heads: no GQA)
  head_dim = 128,         -- config.json hidden_size / num_attention_heads = 4096 / 32
  ffn = 11008,            -- config.json intermediate_size
  vocab = 32000,          -- config.json vocab_size
  tied_embeddings = false, -- config.json tie_word_embeddings
  -- Q4_0 (llama.cpp ggml-common.h block_q4_0): 32 weights in 16 B of 4-bit
  -- values + a 2 B fp16 scale = 18 B per 32 weights = 4.5 bits per weight.
  weight_bits = 4.5,
  kv_bits = 16,           -- fp16 K and V (llama.cpp's default cache type f16)
  flash_efficiency = 1.0, -- not measured: device-level model
  npu_efficiency = 1.0,   -- not measured: device-level model
  cpu_efficiency = 1.0,   -- not measured: device-level model
}
