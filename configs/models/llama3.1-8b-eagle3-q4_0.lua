-- EAGLE-3 draft for Llama-3.1-8B, Q4_0 -- DRAM-resident draft model.
-- Shape (EAGLE-3, Li et al. 2025, the drafts Lever §5.1 pairs with each
-- target; public EAGLE-3 draft configs): one decoder layer at the target's
-- hidden size, a fusion layer over three target feature layers (3 x hidden ->
-- hidden) and its own LM head over a 32k draft vocabulary.  The layer keeps the
-- target's attention and FFN shape (heads, kv_heads, head_dim, ffn from the
-- target's config.json (configs/models/llama3.1-8b-q4_0.lua), as in the public EAGLE-3
-- draft configs); its q/k/v read the token embedding concatenated with the
-- fused feature, 2 x hidden wide (public EAGLE-3 reference code), hence
-- attn_in_mult = 2.  The input embedding is the target's (EAGLE-3 has none of
-- its own), looked up by row.  Derived in sim/hw/sim_model.c:
--   layer  = q 8192x4096 + k,v 2x8192x1024 + o 4096x4096 + FFN 3x4096x14336 = 243,269,632
--   fusion = 3 x 4096 x 4096 = 50,331,648;  LM head = 32000 x 4096 = 131,072,000
--   weights = 424,673,280 params x 4.5 / 8 = 238,878,720 B, all in DRAM
-- No draft timing is published for the OnePlus 12, so the residual factors
-- stay at 1 (the device-level model).
return {
  name = "llama3.1-8b-eagle3-q4_0",
  kind = "eagle3",
  layers = 1,             -- EAGLE-3: one decoder layer
  hidden = 4096,          -- target hidden_size (its config.json)
  heads = 32,             -- target num_attention_heads
  kv_heads = 8,           -- target num_key_value_heads
  head_dim = 128,         -- target head_dim
  ffn = 14336,            -- target intermediate_size
  vocab = 32000,          -- EAGLE-3 draft configs: draft_vocab_size 32000
  tied_embeddings = false, -- own LM head; input embedding borrowed from the target
  attn_in_mult = 2,       -- q/k/v over [embedding ; fused feature] (EAGLE-3 code)
  fusion_in = 3,          -- EAGLE-3: fusion over three target feature layers
  weight_bits = 4.5,      -- Q4_0, 18 B per 32 weights (Lever §5.1 quantises drafts too)
  kv_bits = 16,           -- fp16 KV cache, as the target
  flash_efficiency = 1.0, -- unused: a draft is never streamed
  npu_efficiency = 1.0,   -- not measured: device-level model
  cpu_efficiency = 1.0,   -- not measured: device-level model
}
