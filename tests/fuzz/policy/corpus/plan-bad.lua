local P = { name = "bad" }
function P.build(tree, draft) draft:expand(0, "cpu") end
function P.plan(tree, keep) tree:add(0, 5, -1) return { rows = 2147483647 } end
return P
