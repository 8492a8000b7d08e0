return { name = "r", build = function() end, reset = function() while true do end end }
