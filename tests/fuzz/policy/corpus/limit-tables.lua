local t = {} for i = 1, 100000 do t[i] = "" end
return { name = "tables", build = function()
  while true do
    local c = table.concat(t)
    table.insert(t, 1, "") table.remove(t, 1)
    local n = select("#", table.unpack(t, 1, 100000))
    table.move({}, 1, 1e15, 2)
  end
end }
