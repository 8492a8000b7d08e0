local t = {}
for i = 1, 10 do t[i] = i end
return { layers = #t, hidden = "big" }
