local s = string.rep("x", 1 << 20)
local t = {}
for i = 1, 1e6 do tgoto= s .. i end
