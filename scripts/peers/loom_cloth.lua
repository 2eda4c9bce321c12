-- loom_cloth.lua — the peers cloth benchmark in Loom (the twin of scripts/peers/bullet_cloth.cpp).
--
-- Scene: an N x N vertex cloth, 1 m x 1 m, flat at z = 1, pinned at (-0.5, -0.5, 1) and
-- (0.5, -0.5, 1), total mass 1 kg, friction 0.5, optionally falling on a static sphere r = 0.3 at
-- (0, 0, 0.6); z up, gravity -9.81, dt = 1/240. Loom's default cloth model (mass-spring,
-- symplectic Euler, automatic substeps), untuned. With --implicit: Baraff-Witkin cloth (stretch
-- 20 000 N/m, shear 2 000 N/m, bend 1e-4 N m) with the implicit integrator at dt = 1/60, for S/4
-- steps, so the run covers the same simulated time as S steps at 1/240. --strain-limit L sets the
-- cloth's strain_limit (no edge longer than (1 + L) times its rest length after a step).
--
--   build/loom exec scripts/peers/loom_cloth.lua N sphere|free [--steps S] [--runs R] [--implicit]
--                                                [--strain-limit L]
--
-- One untimed run first (it warms the JIT and caches and records the quality figures step by
-- step), then R timed runs, each on a fresh world, timing only the stepping. Prints one JSON object;
-- the exit status is 1 if any vertex position became NaN or infinite ("frozen" reports Loom's
-- divergence guard stopping the cloth).
local loom = require "loom"
local C = loom.C

local RADIUS, CENTER = 0.3, {0, 0, 0.6}

local function usage(msg)
  io.stderr:write("loom_cloth: ", msg, "\nusage: loom exec loom_cloth.lua N sphere|free [--steps S] [--runs R] [--implicit] [--strain-limit L]\n")
  os.exit(2)
end

local function whole(s, lo, hi, what)
  local v = tonumber(s)
  if not v or v ~= math.floor(v) or v < lo or v > hi then
    usage(("bad %s '%s' (expected %d..%d)"):format(what, tostring(s), lo, hi))
  end
  return v
end

local args = {...}
if #args < 2 then usage("need N and sphere|free") end
local opt = {n = whole(args[1], 2, 1024, "N"), steps = 500, runs = 5, dt = 1 / 240}
if args[2] == "sphere" then opt.sphere = true
elseif args[2] == "free" then opt.sphere = false
else usage("the second argument must be 'sphere' or 'free'") end
local i = 3
while i <= #args do
  local k, v = args[i], args[i + 1]
  if k == "--implicit" then
    opt.implicit, opt.dt = true, 1 / 60
    i = i + 1
    goto continue
  end
  if v == nil then usage("an option needs a value") end
  if k == "--steps" then opt.steps = whole(v, 1, 1000000, "--steps")
  elseif k == "--strain-limit" then
    opt.strain_limit = tonumber(v)
    if not opt.strain_limit or not (opt.strain_limit >= 0 and opt.strain_limit <= 10) then
      usage(("bad --strain-limit '%s' (expected a number in [0, 10])"):format(v))
    end
  elseif k == "--runs" then opt.runs = whole(v, 1, 1000, "--runs")
  else usage("unknown option " .. k) end
  i = i + 2
  ::continue::
end
-- the same simulated time whatever the step
if opt.implicit then opt.steps = math.max(1, math.floor(opt.steps / 4 + 0.5)) end

local function build()
  local W = loom.world {dt = opt.dt, gravity = {0, 0, -9.81}}
  if opt.sphere then
    -- Loom combines frictions by the geometric mean: 0.5 on both sides makes the contact 0.5.
    W:rigid {name = "ball", shape = loom.shape.sphere(RADIUS), position = CENTER, static = true, friction = 0.5}
  end
  local cells = opt.n - 1
  local cloth_def = {
    name = "cloth",
    mesh = loom.mesh.grid {size = {1, 1}, cells = {cells, cells}, center = {0, 0, 1}},
    mass = 1, friction = 0.5,
  }
  if opt.implicit then
    cloth_def.model, cloth_def.integrator = "baraff_witkin", "implicit"
    cloth_def.stretch, cloth_def.shear, cloth_def.bend = 20000, 2000, 1e-4
  end
  cloth_def.strain_limit = opt.strain_limit
  local cloth = W:cloth(cloth_def)
  cloth:pin {cloth:vertex_near {-0.5, -0.5, 1}, cloth:vertex_near {0.5, -0.5, 1}}
  return W, cloth
end

-- Vertex positions against the sphere, checked after every step of the untimed run: max
-- (r - |x - c|) (penetration, 0 if no vertex is inside), min (|x - c| - r) (closest approach),
-- all positions finite.
local function contact(cloth)
  local x = cloth.x
  local finite, pen, gap = true, 0, math.huge
  local cx, cy, cz = CENTER[1], CENTER[2], CENTER[3]
  for v = 0, cloth.n - 1 do
    local p = x[v]
    if not (math.abs(p.x) < math.huge and math.abs(p.y) < math.huge and math.abs(p.z) < math.huge) then
      finite = false
    end
    if opt.sphere then
      local d = math.sqrt((p.x - cx) ^ 2 + (p.y - cy) ^ 2 + (p.z - cz) ^ 2) - RADIUS
      if -d > pen then pen = -d end
      if d < gap then gap = d end
    end
  end
  return {penetration = pen, gap = gap, finite = finite}
end

-- Edge strains |l / L - 1| over the triangle edges at the end: max, mean, 99th percentile.
local function strain(cloth)
  local x, rest = cloth.x, cloth.rest
  local tri, nt = cloth:triangles()
  local worst, sum, all = 0, 0, {}
  for t = 0, nt - 1 do
    for k = 0, 2 do
      local a, b = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
      local r0, r1, x0, x1 = rest[a], rest[b], x[a], x[b]
      local L = math.sqrt((r1.x - r0.x) ^ 2 + (r1.y - r0.y) ^ 2 + (r1.z - r0.z) ^ 2)
      local l = math.sqrt((x1.x - x0.x) ^ 2 + (x1.y - x0.y) ^ 2 + (x1.z - x0.z) ^ 2)
      local s = math.abs(l / L - 1)
      if s > worst then worst = s end
      sum = sum + s
      all[#all + 1] = s
    end
  end
  table.sort(all)
  return {max = worst, mean = sum / #all, p99 = all[1 + math.floor(0.99 * (#all - 1))]}
end

-- Untimed run: warm-up, and the quality figures (the sphere checked after every step).
local max_pen, finite, nan_step, substeps_max, frozen = 0, true, -1, 0, false
local W, cloth = build()
for k = 1, opt.steps do
  W:step(1)
  local q = contact(cloth)
  if q.penetration > max_pen then max_pen = q.penetration end
  if not q.finite and finite then finite, nan_step = false, k end
  local st = W:stats()
  if st.substeps > substeps_max then substeps_max = st.substeps end
  if st.frozen > 0 then frozen = true end
end
local last = contact(cloth)
local str = last.finite and strain(cloth) or {max = 0 / 0, mean = 0 / 0, p99 = 0 / 0}
local substeps_end, messages = W:stats().substeps, W:messages()
W, cloth = nil, nil
collectgarbage()

-- Timed runs: a fresh world each, only the stepping timed.
local ms = {}
for r = 1, opt.runs do
  local w, c = build()
  collectgarbage()
  local t0 = C.loom_clock()
  w:step(opt.steps)
  ms[r] = (C.loom_clock() - t0) / opt.steps * 1000
  if not contact(c).finite then finite = false end
  if w:stats().frozen > 0 then frozen = true end
  w, c = nil, nil
  collectgarbage()
end
table.sort(ms)
local n = #ms
local med = n % 2 == 1 and ms[(n + 1) / 2] or 0.5 * (ms[n / 2] + ms[n / 2 + 1])

-- One JSON object, fields in order; non-finite numbers become null.
local fields = {}
local function field(k, raw) fields[#fields + 1] = ("%q:%s"):format(k, raw) end
local function str_(k, v) field(k, ("%q"):format(v)) end
local function num(k, v, fmt)
  if v ~= v or v == math.huge or v == -math.huge then field(k, "null") else field(k, (fmt or "%.6g"):format(v)) end
end
local NAN = 0 / 0
str_("engine", "loom") str_("version", loom.version) str_("case", opt.sphere and "sphere" or "free")
field("n", opt.n) str_("integrator", opt.implicit and "implicit" or "symplectic")
num("strain_limit", opt.strain_limit or 0) num("dt", opt.dt) num("ms_per_step_median", med) num("min", ms[1]) num("max", ms[n])
num("ms_per_simulated_s", med / opt.dt, "%.1f")
field("runs", n) field("steps", opt.steps) field("substeps", substeps_end) field("substeps_max", substeps_max)
num("max_strain", str.max) num("mean_strain", str.mean) num("p99_strain", str.p99)
num("max_penetration_mm", opt.sphere and 1000 * max_pen or NAN, "%.3f")
num("end_penetration_mm", opt.sphere and 1000 * last.penetration or NAN, "%.3f")
num("end_min_gap_mm", opt.sphere and 1000 * last.gap or NAN, "%.3f")
field("nan", tostring(not finite)) field("nan_step", nan_step) field("frozen", tostring(frozen))
field("messages", #messages)
io.stdout:write("{", table.concat(fields, ","), "}\n")
for _, m in ipairs(messages) do io.stderr:write("loom_cloth: kernel message: ", m, "\n") end
os.exit(finite and 0 or 1)
