-- Exercises the script surface; every check is an assert (a failure exits 78).
local fs = flashspec
assert(type(fs.version) == "string")
local dev = fs.device "oneplus12"
local tgt = fs.model "qwen3-8b-q4_0"
local drf = fs.model "qwen3-8b-eagle3-q4_0"
assert(tostring(dev) == "device(oneplus12)" and dev.name == "oneplus12")
assert(tgt.name == "qwen3-8b-q4_0")

-- in-memory synthetic traces: same knobs, same trace (cached, same checksum)
local t1 = fs.trace.synth { prompts = 2, output_len = 24, seed = 5 }
local t2 = fs.trace.synth { prompts = 2, output_len = 24, seed = 5 }
assert(t1.name == t2.name, "same synth parameters gave different traces")
local t3 = fs.trace.synth { prompts = 2, output_len = 24, seed = 6 }
assert(t3.name ~= t1.name, "seed had no effect")

-- perfect and useless drafts bound Chain-SD exactly
local perfect = fs.trace.synth { prompts = 2, output_len = 40, accept = { 1.0 }, coverage = 1.0,
                                 depth = 8, nodes = 16 }
local useless = fs.trace.synth { prompts = 2, output_len = 40, accept = { 0.0 }, coverage = 0.0,
                                 depth = 8, nodes = 16 }
local base = { device = dev, target = tgt, draft = drf, max_new_tokens = 40 }
local function point(extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return fs.run(t)
end
local r = point { trace = perfect, policy = fs.policy.chain { k = 4 } }
assert(r.tokens == 80, "tokens " .. r.tokens)
assert(r.cycles == 16, "perfect draft, k=4, 40 tokens: 8 cycles a prompt, got " .. r.cycles)
assert(r.mean_accepted == 4 and r.tokens_per_cycle == 5)
assert(r.coverage == 1.0)
r = point { trace = useless, policy = fs.policy.chain { k = 4 } }
assert(r.cycles == 80 and r.mean_accepted == 0 and r.tokens_per_cycle == 1)
local ar = point { trace = useless, policy = fs.policy.flash_ar {} }
assert(ar.cycles == 80 and ar.draft_ms == 0 and ar.coverage == 1.0)
assert(r.draft_ms > 0, "Chain-SD drafting took no time")
-- one runtime for every policy: a useless draft costs throughput against
-- Flash-AR on the same phone, and "auto" is the phone's runtime for both
assert(ar.tokens_per_s > r.tokens_per_s, "a useless draft must cost throughput")
local r_base = point { trace = useless, policy = fs.policy.chain { k = 4 }, runtime = "baseline" }
assert(r_base.tokens_per_s == r.tokens_per_s and r_base.verify_ms == r.verify_ms,
       "auto is the device's runtime for a drafting policy too")
local ar_spec = point { trace = useless, policy = fs.policy.flash_ar {}, runtime = "speculative" }
local r_spec = point { trace = useless, policy = fs.policy.chain { k = 4 }, runtime = "speculative" }
assert(ar_spec.tokens_per_s > r_spec.tokens_per_s, "a useless draft costs throughput there too")
assert(ar.runtime == "auto" and ar_spec.runtime == "speculative")
assert(ar_spec.tokens_per_s > ar.tokens_per_s, "the overlapped what-if runtime streams faster")

-- sweep: Cartesian product, last key fastest, rows carry their parameters
local rows = fs.sweep { device = dev, target = tgt, draft = drf, trace = t1,
                        policy = { fs.policy.flash_ar {}, fs.policy.chain { k = 2 } },
                        dram_fraction = { 0, 1 } }
assert(#rows == 4)
assert(rows[1].policy == "flash_ar" and rows[1].dram_fraction == 0)
assert(rows[2].policy == "flash_ar" and rows[2].dram_fraction == 1)
assert(rows[3].policy == "chain" and rows[3].policy_params == "k=2,unit=cpu")
assert(rows[2].flash_ms == 0, "the profile's runtime keeps the LM head resident: nothing to read")
local streamed = fs.run { device = fs.device("oneplus12", { head_resident = false, pin_head = false }),
                          target = tgt, trace = t1, policy = fs.policy.flash_ar {}, dram_fraction = 1 }
assert(streamed.flash_ms > 0, "a runtime that streams its LM head read no flash with every layer pinned")
assert(rows[2].resident_layers == 36)

-- standing variants: listed by name, each a device of its own
local names = dev.variants
assert(#names == 4 and names[1] == "all" and names[2] == "const" and names[3] == "min8" and
       names[4] == "parts_slow", table.concat(names, ","))
local v8 = dev:variant "min8"
assert(v8.name == "oneplus12~min8" and #v8.variants == 0)
local r8 = fs.run { device = v8, target = tgt, draft = drf, trace = t1, policy = fs.policy.chain { k = 2 } }
assert(r8.device == "oneplus12~min8" and r8.tokens_per_s_model_lo ~= r8.tokens_per_s_model_lo,
       "a variant replays alone: no band")
local okv, ev = pcall(dev.variant, dev, "min9")
assert(not okv and ev.code == 78 and tostring(ev):find("its variants: all, const, min8, parts_slow", 1, true),
       tostring(ev))

-- the acceptance bracket: tr:bracket(...) is the trace with the ends the
-- point is also replayed on; the band spans every trace on every device,
-- nothing else of the row moves, and the trace itself keeps no bracket
local mid = fs.trace.synth { prompts = 2, output_len = 40, accept = { 0.7 }, seed = 9 }
local low = fs.trace.synth { prompts = 2, output_len = 40, accept = { 0.4 }, seed = 9 }
local high = fs.trace.synth { prompts = 2, output_len = 40, accept = { 0.95 }, seed = 9 }
local br = mid:bracket(low, high)
assert(#br.brackets == 2 and br.brackets[1] == low.name and br.brackets[2] == high.name)
assert(#mid.brackets == 0 and br.name == mid.name)
local vd = dev:variant "all" -- a device without variants
local function on(t, d, pol)
  return fs.run { device = d, target = tgt, draft = drf, trace = t, max_new_tokens = 40,
                  policy = pol or fs.policy.chain { k = 4 } }
end
local rb, rm, rl, rh = on(br, vd), on(mid, vd), on(low, vd), on(high, vd)
assert(rm.tokens_per_s_model_lo ~= rm.tokens_per_s_model_lo, "no variant, no bracket: no band")
assert(rb.tokens_per_s == rm.tokens_per_s and rb.cycles == rm.cycles and rb.point_id ~= rm.point_id)
assert(rb.tokens_per_s_model_lo == math.min(rl.tokens_per_s, rm.tokens_per_s, rh.tokens_per_s))
assert(rb.tokens_per_s_model_hi == math.max(rl.tokens_per_s, rm.tokens_per_s, rh.tokens_per_s))
assert(rl.tokens_per_s < rm.tokens_per_s and rm.tokens_per_s < rh.tokens_per_s)
-- with the phone's standing variants: the corners too (a slow variant on the low end)
local corner = fs.run { device = dev:variant "parts_slow", target = tgt, draft = drf, trace = low,
                        max_new_tokens = 40, policy = fs.policy.chain { k = 4 } }
local rbv = on(br, dev)
assert(rbv.tokens_per_s_model_lo <= corner.tokens_per_s and
       rbv.tokens_per_s_model_lo <= rb.tokens_per_s_model_lo)
for _, bad in ipairs { { "bracket takes 1 to 8 traces (got 0)", function() return mid:bracket() end },
                       { "argument 2 is not a trace (got number)", function() return mid:bracket(low, 5) end },
                       { "has a bracket of its own", function() return mid:bracket(br) end },
                       { "bracket takes 1 to 8 traces (got 9)", function()
                           return mid:bracket(low, low, low, low, low, low, low, low, low) end } } do
  local okb, eb = pcall(bad[2])
  assert(not okb and eb.code == 78 and tostring(eb):find(bad[1], 1, true), tostring(eb))
end

-- a whole real in a policy label keeps its digits (tau=500, never 5e+02)
local lab = tostring(fs.policy.lever { tau = 500 })
assert(lab:find("tau=500,", 1, true) and not lab:find("e+", 1, true), lab)

-- errors are objects carrying an exit code, catchable by scripts
local ok, e = pcall(fs.trace, "no/such/file.h5")
assert(not ok and e.code == 66 and tostring(e):find("no/such/file.h5", 1, true))
ok, e = pcall(fs.policy.chain, { k = 0 })
assert(not ok and tostring(e):find("out of range"), tostring(e))
ok, e = pcall(fs.run, { device = dev, target = tgt, trace = t1, policy = fs.policy.chain {} })
assert(not ok and tostring(e):find("needs a draft"), tostring(e))
ok, e = pcall(fs.device, "../etc/passwd")
assert(not ok)
ok, e = pcall(fs.device, "no-such-phone")
assert(not ok and tostring(e):find("no-such-phone", 1, true))
print("api ok")

-- acceptance rules, waste and runtime keys (tree policies)
do
  local g = point { trace = t1, policy = fs.policy.eagle2 {} }
  assert(g.accept == "greedy" and g.token_mismatch == 0 and g.top_p == 0.9)
  assert(g.waste_ms >= 0 and g.waste_ms < g.verify_ms and g.waste_frac >= 0 and g.waste_frac < 1)
  local tp = point { trace = t1, policy = fs.policy.eagle2 {}, accept = "top_p", top_p = 0.8 }
  assert(tp.accept == "top_p" and tp.top_p == 0.8 and tp.token_mismatch >= 0)
  assert(tp.mean_accepted >= g.mean_accepted, "top-p accepts at least what greedy accepts")
  local sp = point { trace = t1, policy = fs.policy.specinfer {}, accept = "sampling",
                     temperature = 0.7 }
  assert(sp.accept == "sampling" and sp.temperature == 0.7)
  for _, name in ipairs { "adaptive_chain", "specinfer", "eagle2", "opt_tree", "sequoia" } do
    local r2 = point { trace = t1, policy = fs.policy[name] {} }
    assert(r2.policy == name and r2.tokens > 0 and r2.token_mismatch == 0, name)
  end
  local ok2, e2 = pcall(point, { trace = t1, policy = fs.policy.chain {}, accept = "nucleus" })
  assert(not ok2 and tostring(e2):find("greedy", 1, true), tostring(e2))
  ok2, e2 = pcall(fs.policy.eagle2, { top_kk = 3 })
  assert(not ok2 and tostring(e2):find("top_k", 1, true), tostring(e2))
end
