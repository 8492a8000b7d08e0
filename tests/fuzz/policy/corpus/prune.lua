--@ j=2
local P = { name = "pr" }
function P.build(tree, draft, lim)
  draft:expand(0, "npu")
  for j = 1, math.min(3, tree:ncands(0), lim.max_nodes - 1) do
    local tok, lq = tree:cand(0, j)
    tree:add(0, tok, lq)
  end
end
function P.prune(tree, target)
  local s = target:exit_scores(0)
  return { [3] = false }
end
return P
