local fs = flashspec
local dev = fs.device "oneplus12"
local x = = 3
