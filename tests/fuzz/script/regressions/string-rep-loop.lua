print(io, os.execute, require, package, e, loadfile)
print(pcall(load, string.dump(function() end)))
print(pcall(load, "return 1 + 1"))
local t = {} for i = 1, 1e9 do t[i] = d string.rep("x", 1e6) end
