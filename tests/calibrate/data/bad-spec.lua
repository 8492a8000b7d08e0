-- tests/calibrate: a small valid calibration spec (launch_us of the phone from its
-- Flash-AR latency) and, with --arg bad=WHAT, one mistake in it:
--   bounds  a start outside its bounds        lohi   bounds with lo >= hi
--   edge    a start a hair inside a bound
--   key     an unknown spec key (a typo)      nofn   points that is not a function
--   many    three parameters (for a reference of two rows)
--   raise   a points function that raises     after  an error after a good fit
--   results name = "results" (would overwrite the run's results.csv)
--   twice   two calibrations of one name      nobase  profile.base that does not exist
--   script  profile.name = "script" (would overwrite the run's script.lua)
--   casefold name = "Results.v2" (results.* on a case-insensitive file system)
--   profdup two calibrations, one profile.name (the second's profile would overwrite)
--   boundhi bounds below the truth (launch_us about 600; bounds 100..400), a
--           bootstrap of 20: the fit ends at its upper bound (warnings, exit 0)
--   boundlo bounds above the truth (1000..1e4): at its lower bound
--   none    no mistake (the control)
-- --arg ref=PATH names the reference (required); max_iter, s_launch as usual;
-- boot=N a parametric bootstrap of N replicates (its interval and replicates
-- printed).
local fs = flashspec
local A = fs.args

local function points(p)
  if A.bad == "raise" then error("points failed on purpose") end -- RAISE
  local dev = fs.device("oneplus12", { name = "oneplus12", launch_us = p.launch_us,
                                       npu_gflops = p.npu_gflops,
                                       verify_setup_us = p.verify_setup_us })
  local pts = {}
  for _, m in ipairs { "qwen3-4b", "qwen3-8b" } do
    pts[#pts + 1] = { target = fs.model(m .. "-q4_0"), policy = fs.policy.flash_ar {} }
  end
  return { device = dev, trace = fs.trace "traces/data/synth-small.h5", max_new_tokens = 16,
           points = pts }
end

local spec = {
  name = "bad", reference = A.ref, points = points,
  params = { launch_us = { tonumber(A.s_launch or "300"), 1, 1e4 } },
  profile = { base = "oneplus12", name = "cal-bad-fit" },
  max_iter = tonumber(A.max_iter or "100"),
  bootstrap = tonumber(A.boot or "0"),
}
if A.bad == "bounds" then spec.params.launch_us = { 2e4, 1, 1e4 } end
if A.bad == "lohi" then spec.params.launch_us = { 400, 1e4, 1 } end
if A.bad == "edge" then spec.params.launch_us = { 1.0001, 1, 1e4 } end
if A.bad == "key" then spec.max_iters = 5 end
if A.bad == "nofn" then spec.points = "points" end
if A.bad == "results" then spec.name = "results" end
if A.bad == "nobase" then spec.profile.base = "oneplus21" end
if A.bad == "script" then spec.profile.name = "script" end
if A.bad == "boundhi" then spec.params.launch_us = { 300, 100, 400 } spec.bootstrap = 20 end
if A.bad == "boundlo" then spec.params.launch_us = { 3000, 1000, 1e4 } end
if A.bad == "casefold" then spec.name = "Results.v2" end
if A.bad == "profdup" then
  fs.calibrate(spec)
  spec.name = "bad2" -- a name of its own, the profile's name again
  fs.calibrate(spec) -- PROFDUP
end
if A.bad == "twice" then
  fs.calibrate(spec)
  spec.profile = nil -- the second has no profile: only the name collides
  fs.calibrate(spec) -- TWICE
end
if A.bad == "many" then
  spec.params.npu_gflops = { 600, 50, 5000 }
  spec.params.verify_setup_us = { 1e5, 1, 3e6 }
end
local fit = fs.calibrate(spec) -- CALIBRATE
print(string.format("param launch_us %.17g %.17g", fit.params.launch_us.value,
                    fit.params.launch_us.se))
print(string.format("bound launch_us %s %.17g %.17g", tostring(fit.params.launch_us.at_bound),
                    fit.params.launch_us.ci_lo, fit.params.launch_us.ci_hi))
local q, b = fit.params.launch_us, {}
for i, v in ipairs(q.boot) do b[i] = string.format("%.17g", v) end
print(string.format("interval launch_us %.17g %.17g %.17g", q.ci_lo, q.ci_hi, q.se_boot))
print(string.format("boot launch_us %s", table.concat(b, " ")))
if A.bad == "after" then error("failed after a good fit") end -- AFTER
