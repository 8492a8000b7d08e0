local t = {} for i = 1, 2000 do t[i] = string.rep("q", 2000) end
local heap = {} for i = 1, 100000 do heap[i] = {} end
return { name = "sort_gc", build = function()
  pcall(collectgarbage, "setpause", 0)
  while true do table.sort(t) collectgarbage() end
end }
