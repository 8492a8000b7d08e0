-- SpecInfer's expansion configuration as a Lua policy: a tree grown level by
-- level, every node of a level expanded in one draft call and given the
-- draft's top widths[d] candidates as children at depth d.  The same rule as
-- the built-in `specinfer` policy (tests/lua/test_lua_policies.py checks it).
--
--   local pol = flashspec.policy.lua("examples/policies/specinfer.lua",
--                                    { widths = "1,1,3,1,1,1,1,1", unit = "npu" })
local params = ...
local unit = params.unit or "npu"
local widths = {}
for w in string.gmatch(params.widths or "1,1,3,1,1,1,1,1", "[^,]+") do
  local v = math.tointeger(tonumber(w))
  assert(v and v >= 1 and v <= 64, "widths: each entry an integer in [1, 64]")
  widths[#widths + 1] = v
end
assert(#widths >= 1 and #widths <= 32, "widths: 1 to 32 entries")

local MAX_NODES = 1024 -- the engine's largest policy tree

local P = {
  name = "specinfer_lua",
  params = {
    widths = { default = "1,1,3,1,1,1,1,1",
               doc = "children per node at each depth, comma-separated" },
    unit = { default = "npu", choices = { "cpu", "npu" }, doc = "processor the draft runs on" },
  },
}

function P.build(tree, draft, lim)
  local depth = #widths
  if lim.max_depth < depth then depth = lim.max_depth end
  if lim.remaining - 1 < depth then depth = lim.remaining - 1 end
  local cap = math.min(lim.max_nodes, MAX_NODES)
  local lo, hi = 0, tree:size() -- the current level: ids lo .. hi - 1
  for d = 1, depth do
    if tree:size() >= cap then break end
    local ids = {}
    for i = lo, hi - 1 do ids[#ids + 1] = i end
    draft:expand(ids, unit)
    local w = widths[d]
    for u = lo, hi - 1 do
      local cn = tree:ncands(u)
      local j = 1
      while j <= w and j <= cn and tree:size() < cap do
        local tok, logp = tree:cand(u, j)
        tree:add(u, tok, logp)
        j = j + 1
      end
    end
    lo, hi = hi, tree:size()
    if lo == hi then break end
  end
end

return P
