-- Vicuna-13B v1.5, Q4_0 -- target (swapped in from flash): one of the models of EdgeLLM's
-- smartphone setting (EdgeLLM §I: Vicuna and LLaMA-2, llama.cpp INT4 on the CPU).
-- Vicuna v1.5 is LLaMA-2 fine-tuned with LLaMA-2's shapes unchanged: the
-- public Hugging Face config.json of lmsys/vicuna-13b-v1.5 gives the same
-- num_hidden_layers (40), hidden_size (5120), num_attention_heads and
-- num_key_value_heads (40), intermediate_size (13824), vocab_size (32000) and
-- tie_word_embeddings (false) as meta-llama/Llama-2-13b-chat-hf, so the
-- profile is LLaMA-2-Chat-13B's (models/llama2-13b-chat-q4_0.lua: the byte
-- counts and the Q4_0 and KV formats) under its own name.
return {
  base = "llama2-13b-chat-q4_0",
  name = "vicuna-13b-q4_0",
}
