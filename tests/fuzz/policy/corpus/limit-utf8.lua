local s = string.rep("a\xc3\xa9", 1 << 18)
local c = string.rep("\x80", 1 << 20)
return { name = "utf8_loops", build = function()
  while true do
    local n = utf8.len(s)
    utf8.codepoint(s, 1, 200000)
    utf8.offset(s, -1)
    for p in utf8.codes(c) do end
  end
end }
