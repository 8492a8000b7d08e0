-- Replays the real traces recorded from the tiny pair (traces/data/real-*.h5)
-- with Flash-AR, Chain-SD (k = 8) and Lever, timed as Qwen3-8B (Q4_0) with its
-- EAGLE-3 draft on the OnePlus 12, fully flash-backed, greedy, 64 new tokens.
-- The draft/target *behaviour* comes from the tiny pair; the *timing* from the
-- phone model.  Every replay checks the emitted tokens against the reference.
--
--   build/sim/cli/flashspec run traces/recorder/replay_real.lua -o /tmp/real
local fs = flashspec
local dev = fs.device "oneplus12"
local tgt = fs.model "qwen3-8b-q4_0"
local drf = fs.model "qwen3-8b-eagle3-q4_0"
local traces = { "code", "prose", "math" }
local policies = { fs.policy.flash_ar {}, fs.policy.chain { k = 8 }, fs.policy.lever {} }
print(string.format("%-11s %-9s %9s %9s %9s %9s", "trace", "policy", "tok/s", "accepted",
                    "coverage", "speedup"))
for _, name in ipairs(traces) do
  local tr = fs.trace("traces/data/real-" .. name .. ".h5")
  local ar
  for _, pol in ipairs(policies) do
    local r = fs.run { device = dev, target = tgt, draft = drf, trace = tr, policy = pol,
                       dram_fraction = 0.0, max_new_tokens = 64, seed = 1 }
    assert(r.token_mismatch == 0, r.policy .. " emitted a token off the reference")
    ar = ar or r.tokens_per_s
    print(string.format("%-11s %-9s %9.3f %9.3f %9.3f %8.2fx", "real-" .. name, r.policy,
                        r.tokens_per_s, r.mean_accepted, r.coverage, r.tokens_per_s / ar))
  end
end
