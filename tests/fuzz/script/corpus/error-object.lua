local fs = flashspec
fs.run { device = fs.device "oneplus12", max_new_tokens = -1 }
error(setmetatable({}, {__tostring = function() return "x" end}))
