return setmetatable({}, { __index = function() error({}) end, __pairs = function() error("p") end })
