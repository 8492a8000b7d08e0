local a, b = string.rep("a", 1 << 20), string.rep("a", 1 << 20)
local z, y = string.rep("\0", 1 << 20), string.rep("\0", 1 << 20)
return { name = "compare", build = function()
  while true do local e = a == b local l = z < y local r = rawequal(a, b) end
end }
