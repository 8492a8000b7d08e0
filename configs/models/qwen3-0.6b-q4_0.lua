-- Qwen3-0.6B, Q4_0 -- standalone ("weak") draft model, DRAM-resident.
-- Architecture: the public Hugging Face config.json of Qwen/Qwen3-0.6B.
-- Derived in sim/hw/sim_model.c:
--   params/layer = q 1024x2048 + k,v 2x1024x1024 + o 2048x1024 + FFN 3x1024x3072 = 15,728,640
--   LM head (tied with the embedding) = 151936 x 1024 = 155,582,464
--   weights = 28 x 15,728,640 + 155,582,464 = 595,984,384 params x 4.5 / 8 = 335,241,216 B
-- No timing of this model on the OnePlus 12 is published: residuals stay at 1.
return {
  name = "qwen3-0.6b-q4_0",
  kind = "decoder",
  layers = 28,            -- config.json num_hidden_layers
  hidden = 1024,          -- config.json hidden_size
  heads = 16,             -- config.json num_attention_heads
  kv_heads = 8,           -- config.json num_key_value_heads
  head_dim = 128,         -- config.json head_dim
  ffn = 3072,             -- config.json intermediate_size
  vocab = 151936,         -- config.json vocab_size
  tied_embeddings = true, -- config.json tie_word_embeddings
  weight_bits = 4.5,      -- Q4_0: 18 B per 32 weights = 4.5 bits (ggml block_q4_0)
  kv_bits = 16,           -- fp16 KV cache (llama.cpp default f16)
  flash_efficiency = 1.0, -- unused: a draft is never streamed
  npu_efficiency = 1.0,   -- not measured: device-level model
  cpu_efficiency = 1.0,   -- not measured: device-level model
}
