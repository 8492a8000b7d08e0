local f = string.rep("%99.99f", 50)
local big = {} for i = 1, 50 do big[i] = 1e300 end
local d = string.rep("7", 1 << 20)
local s = string.rep("a", 1 << 20)
local needle = string.rep("a", 1 << 19) .. "b"
return { name = "strings", build = function()
  while true do
    local x = string.format(f, table.unpack(big))
    local n = tonumber(d)
    pcall(function() return d + 0 end)
    local i = s:find(needle, 1, true)
    local u = s:upper()
    string.byte(s, 1, 100000)
    string.find(string.rep("a", 31000), "(.-)%1c")
  end
end }
