return { name = "dup", build = function(tree, draft) local ids = {} for i = 1, 4096 do ids[i] = 0 end draft:expand(ids, "cpu") end }
