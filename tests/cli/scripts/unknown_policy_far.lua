local fs = flashspec
assert(rawget(fs.policy, "nope") == nil)
local p = fs.policy.qqqqqqqqqqqq {}
