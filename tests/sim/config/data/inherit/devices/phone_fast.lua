-- derives from phone, with a name of its own
return {
  base = "phone",
  name = "fastphone",
  read_gbps = 8,
  npu_shapes = { 1, 4, 16 },
}
