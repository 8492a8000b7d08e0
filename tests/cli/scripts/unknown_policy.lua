local fs = flashspec
local p = fs.policy.eagle_2 {
  top_k = 4,
}
