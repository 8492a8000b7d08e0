-- a model's base is a model: configs/models/oneplus12.lua does not exist
return {
  base = "oneplus12",
}
