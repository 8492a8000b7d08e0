-- Vicuna-7B v1.5, Q4_0 -- draft (resident in DRAM) of Vicuna-13B in EdgeLLM's
-- smartphone setting (EdgeLLM §I: Vicuna and LLaMA-2, llama.cpp INT4 on the CPU).
-- Vicuna v1.5 is LLaMA-2 fine-tuned with LLaMA-2's shapes unchanged: the
-- public Hugging Face config.json of lmsys/vicuna-7b-v1.5 gives the same
-- num_hidden_layers (32), hidden_size (4096), num_attention_heads and
-- num_key_value_heads (32), intermediate_size (11008), vocab_size (32000) and
-- tie_word_embeddings (false) as meta-llama/Llama-2-7b-chat-hf, so the
-- profile is LLaMA-2-Chat-7B's (models/llama2-7b-chat-q4_0.lua: the byte
-- counts and the Q4_0 and KV formats) under its own name.
return {
  base = "llama2-7b-chat-q4_0",
  name = "vicuna-7b-q4_0",
}
