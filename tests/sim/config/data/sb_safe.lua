-- the safe libraries remain usable inside a profile
local layers = math.floor(72 / 2)
assert(string.dump == nil and string.format("%d", layers) == "36")
assert(table.concat({ "a", "b" }) == "ab" and utf8.char(65) == "A")
assert(io == nil and os == nil and debug == nil and package == nil)
return {
  name = "safe",
  layers = layers, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
  ffn = 12288, vocab = 151936, weight_bits = 4.5,
}
