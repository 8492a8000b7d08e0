local fs = flashspec
local p = fs.policy.chain{
  kk = 8,
}
