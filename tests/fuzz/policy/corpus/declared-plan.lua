--@ declare
local p = ...
local P = { name = "c6", params = { k = { default = 3, min = 1, max = 8, integer = true } } }
function P.build(tree, draft, lim)
  local tip = 0
  for _ = 1, math.min(p.k, lim.remaining - 1) do
    draft:expand(tip, "cpu")
    local tok, lq = tree:cand(tip, 1)
    tip = tree:add(tip, tok, lq)
  end
end
function P.plan(tree, keep) return { rows = tree:size(), leaves = 1 } end
function P.observe(fb) end
return P
