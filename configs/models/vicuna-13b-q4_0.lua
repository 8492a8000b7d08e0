-- Vicuna-13B v1.5, Q4_0 -- target (swapped in from flash): one of the models of EdgeLLM's
-- smartphone setting (EdgeLLM §I: Vicuna and LLaMA-2, llama.cpp INT4 on the CPU).
-- Architecture: the public Hugging Face config.json of lmsys/vicuna-13b-v1.5:
-- Vicuna v1.5 is LLaMA-2 fine-tuned, with LLaMA-2's shapes unchanged.
-- Byte counts are derived in sim/hw/sim_model.c from these fields, never
-- written here:
--   params/layer = q,k,v,o 4 x 5120x5120 + FFN 3 x 5120x13824 = 317,194,240
--   bytes/layer  = 317,194,240 x 4.5 / 8 = 178,421,760 B
--   LM head      = 163,840,000 x 4.5 / 8 = 92,160,000 B (untied: lm_head apart from embed_tokens)
--   weights      = 40 x 178,421,760 + 92,160,000 = 7,229,030,400 B (the input embedding, read a row per token, not counted)
--   KV per token = 2 x 40 x 40 x 128 x 2 B = 819,200 B (fp16, no grouped-query attention)
--   faults of 128 KiB (runtime/llamacpp-cpu) = 1,362 per layer, 704 for the head
-- No timing of this model is published with the detail a fit needs: the
-- residual factors stay at 1 (the device-level model).
return {
  name = "vicuna-13b-q4_0",
  kind = "decoder",
  layers = 40,            -- config.json num_hidden_layers
  hidden = 5120,          -- config.json hidden_size
  heads = 40,             -- config.json num_attention_heads
  kv_heads = 40,          -- config.json num_key_value_heads (= heads: no GQA)
  head_dim = 128,         -- config.json hidden_size / num_attention_heads = 5120 / 40
  ffn = 13824,            -- config.json intermediate_size
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
