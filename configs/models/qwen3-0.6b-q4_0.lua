-- Qwen3-0.6B, Q4_0 -- standalone ("weak") draft model, DRAM-resident.
-- Architecture: CALIBRATION.md "Target and draft models" table (public
-- Hugging Face config.json of Qwen/Qwen3-0.6B).  Derived in sim/hw/sim_model.c:
--   params/layer = q 1024x2048 + k,v 2x1024x1024 + o 2048x1024 + FFN 3x1024x3072 = 15,728,640
--   LM head (tied with the embedding) = 151936 x 1024 = 155,582,464
--   weights = 28 x 15,728,640 + 155,582,464 = 595,984,384 params x 4.5 / 8 = 335,241,216 B
-- No timing of this model on the OnePlus 12 is published: residuals stay at 1.
return {
  name = "qwen3-0.6b-q4_0",
  kind = "decoder",
  layers = 28,            -- CALIBRATION.md model table
  hidden = 1024,          -- CALIBRATION.md model table
  heads = 16,             -- CALIBRATION.md model table
  kv_heads = 8,           -- CALIBRATION.md model table
  head_dim = 128,         -- CALIBRATION.md model table
  ffn = 3072,             -- CALIBRATION.md model table
  vocab = 151936,         -- CALIBRATION.md model table
  tied_embeddings = true, -- CALIBRATION.md model table
  weight_bits = 4.5,      -- Q4_0: 18 B per 32 weights = 4.5 bits (CALIBRATION.md)
  kv_bits = 16,           -- fp16 KV cache (llama.cpp default f16)
  flash_efficiency = 1.0, -- unused: a draft is never streamed
  npu_efficiency = 1.0,   -- not measured: device-level model
  cpu_efficiency = 1.0,   -- not measured: device-level model
}
