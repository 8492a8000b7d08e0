-- Chain-SD as a Lua policy: each cycle drafts a chain of k tokens, always the
-- draft's most likely next token, and the target verifies the chain.  The
-- same rule as the built-in `chain` policy, step for step, so the two give
-- the same results (tests/lua/test_lua_policies.py checks it).
--
--   local pol = flashspec.policy.lua("examples/policies/chain.lua", { k = 8, unit = "cpu" })
local params = ...
local k = params.k or 8
local unit = params.unit or "cpu"
-- (k and unit are checked against P.params below before any point runs)

local P = {
  name = "chain_lua",
  params = {
    k = { default = 8, min = 1, max = 64, integer = true,
          doc = "draft tokens per cycle (chain length)" },
    unit = { default = "cpu", choices = { "cpu", "npu" }, doc = "processor the draft runs on" },
  },
}

function P.build(tree, draft, lim)
  -- never longer than the tokens still to generate, the depth or the
  -- tree capacity the runtime can serve
  local n = k
  if lim.remaining - 1 < n then n = lim.remaining - 1 end
  if lim.max_depth < n then n = lim.max_depth end
  if lim.max_nodes - 1 < n then n = lim.max_nodes - 1 end
  local tip = 0 -- the root
  for _ = 1, n do
    draft:expand(tip, unit)
    if tree:ncands(tip) < 1 then break end
    local tok, logp = tree:cand(tip, 1)
    tip = tree:add(tip, tok, logp)
  end
end

return P
