return { name = "rep_empty", build = function() while true do local s = string.rep("", 1e15, "") end end }
