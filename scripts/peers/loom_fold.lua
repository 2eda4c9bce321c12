-- loom_fold.lua — the peers' self-collision benchmark in Loom (the twin of
-- scripts/peers/bullet_fold.cpp), the scene it shares with Bullet, and Loom's exact crossing test
-- applied to Bullet's states.
--
-- Scene: an N x N vertex cloth, 1 m x 1 m, 1 kg, folded in two across its middle: the lower half
-- flat 1 cm above a floor (a static box whose top is z = 0), the fold a half cylinder of radius
-- 2.5 cm, the upper half flat 5 cm above the lower one. Every edge has its rest length (the folded
-- sheet is the rest shape). Gravity -9.81 along z: the cloth drops onto the floor, the fold's upper
-- half onto the lower one, and nothing holds the layers apart but self-collision.
--
--   build/loom exec scripts/peers/loom_fold.lua N [--seconds T] [--runs R]
--       Loom: Baraff-Witkin cloth (stretch 20 000 N/m, shear 2 000 N/m, bend 1e-4 N m), implicit at
--       dt = 1/100 s, self-collision on (Loom's default), thickness 4 mm, friction 0.5; T simulated
--       seconds (default 1). One untimed run that counts crossings after every step
--       (world:interpenetrations(), exact triangle-triangle tests, the cloth with itself and with
--       the floor), then R timed runs (default 3). Prints one JSON object.
--   build/loom exec scripts/peers/loom_fold.lua N --export MESH.txt
--       Writes the scene's mesh for bullet_fold: "N nv nt", then nv lines "x y z", then nt lines
--       "i j k" (0-based, counter-clockwise seen from above the lower half).
--   build/loom exec scripts/peers/loom_fold.lua N --check STATES.txt
--       Reads the states bullet_fold wrote ("state STEP" then nv lines "x y z", repeated), puts each
--       into the same cloth above the same floor and counts its crossings with Loom's exact test.
--       Prints one JSON object: the largest count, the last state's, and how many states had any.
local loom = require "loom"
local C = loom.C

local FOLD_R, LIFT = 0.025, 0.01

local function usage(msg)
  io.stderr:write("loom_fold: ", msg,
    "\nusage: loom exec loom_fold.lua N [--seconds T] [--runs R] | N --export MESH.txt | N --check STATES.txt\n")
  os.exit(2)
end

local args = {...}
local n = tonumber(args[1])
if not n or n ~= math.floor(n) or n < 4 or n > 512 or n % 2 ~= 0 then
  usage(("bad N '%s' (an even number of vertices per side, 4..512)"):format(tostring(args[1])))
end
local opt = {seconds = 1, runs = 3}
local i = 2
while i <= #args do
  local k, v = args[i], args[i + 1]
  if v == nil then usage("option " .. k .. " needs a value") end
  if k == "--seconds" then opt.seconds = tonumber(v)
  elseif k == "--runs" then opt.runs = tonumber(v)
  elseif k == "--export" then opt.export = v
  elseif k == "--check" then opt.check = v
  else usage("unknown option " .. k) end
  i = i + 2
end
if not (opt.seconds and opt.seconds > 0 and opt.seconds <= 60) then usage("bad --seconds (0..60)") end
if not (opt.runs and opt.runs == math.floor(opt.runs) and opt.runs >= 1 and opt.runs <= 100) then
  usage("bad --runs (1..100)")
end

-- The folded sheet: vertex (i, j) of the grid sits at arc length s = j / (n - 1) across the fold
-- direction; the lower flat part, then the half cylinder, then the upper flat part back over it.
local function folded_mesh()
  local verts, tris = {}, {}
  local arc = math.pi * FOLD_R
  local flat = (1 - arc) / 2
  for j = 0, n - 1 do
    local s = j / (n - 1)
    local y, z
    if s <= flat then
      y, z = s - flat, LIFT
    elseif s < flat + arc then
      local phi = (s - flat) / FOLD_R
      y, z = FOLD_R * math.sin(phi), LIFT + FOLD_R * (1 - math.cos(phi))
    else
      y, z = -(s - flat - arc), LIFT + 2 * FOLD_R
    end
    for i = 0, n - 1 do verts[#verts + 1] = {i / (n - 1) - 0.5, y, z} end
  end
  -- two triangles per cell, the diagonal alternating like a grid's (counter-clockwise in (x, s))
  for j = 0, n - 2 do
    for i = 0, n - 2 do
      local a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1
      if (i + j) % 2 == 0 then
        tris[#tris + 1] = {a, b, d}
        tris[#tris + 1] = {a, d, c}
      else
        tris[#tris + 1] = {a, b, c}
        tris[#tris + 1] = {b, d, c}
      end
    end
  end
  return verts, tris
end

local verts, tris = folded_mesh()

if opt.export then
  local f = assert(io.open(opt.export, "w"))
  f:write(("%d %d %d\n"):format(n, #verts, #tris))
  for _, v in ipairs(verts) do f:write(("%.17g %.17g %.17g\n"):format(v[1], v[2], v[3])) end
  for _, t in ipairs(tris) do f:write(("%d %d %d\n"):format(t[1], t[2], t[3])) end
  f:close()
  os.exit(0)
end

local function build(dt)
  local W = loom.world {dt = dt, gravity = {0, 0, -9.81}}
  W:rigid {name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true,
           friction = 0.5}
  local cloth = W:cloth {
    name = "cloth", mesh = loom.mesh.from_arrays(verts, tris), mass = 1, friction = 0.5,
    model = "baraff_witkin", integrator = "implicit", stretch = 20000, shear = 2000, bend = 1e-4,
  }
  return W, cloth
end

-- One JSON object, fields in order; non-finite numbers become null.
local fields = {}
local function field(k, raw) fields[#fields + 1] = ("%q:%s"):format(k, raw) end
local function num(k, v, fmt)
  if v ~= v or v == math.huge or v == -math.huge then field(k, "null") else field(k, (fmt or "%.6g"):format(v)) end
end

-- Upper-half vertices that end below their twin in the lower half (the row mirrored across the
-- fold): the reference's count for this test, meaningful while the layers stay where they fell.
local function below_twin(x)
  local count = 0
  local flat = (1 - math.pi * FOLD_R) / 2
  for j = 0, n - 1 do
    if j / (n - 1) >= flat + math.pi * FOLD_R then
      for i = 0, n - 1 do
        if x[j * n + i].z < x[(n - 1 - j) * n + i].z then count = count + 1 end
      end
    end
  end
  return count
end

if opt.check then
  local W, cloth = build(1 / 240)
  local f = assert(io.open(opt.check, "r"))
  local most, last, with, states, below = 0, -1, 0, 0, 0
  local line = f:read("*l")
  while line do
    if not line:match("^state ") then usage("bad states file " .. opt.check .. ": expected 'state STEP'") end
    local x = cloth.x
    for v = 0, cloth.n - 1 do
      local a, b, c = f:read("*n", "*n", "*n")
      if not c then usage(("bad states file %s: state %d ends early"):format(opt.check, states + 1)) end
      x[v].x, x[v].y, x[v].z = a, b, c
    end
    f:read("*l")
    states = states + 1
    last = W:interpenetrations()
    if last > most then most = last end
    if last > 0 then with = with + 1 end
    below = below_twin(x)
    line = f:read("*l")
  end
  f:close()
  field("states", states) field("crossings_max", most) field("crossings_end", last) field("states_with_crossings", with)
  field("below_twin_end", below)
  io.stdout:write("{", table.concat(fields, ","), "}\n")
  os.exit(0)
end

local DT = 1 / 100
local steps = math.max(1, math.floor(opt.seconds / DT + 0.5))

-- Untimed run: warm-up, and the crossings after every step.
local most, with, finite = 0, 0, true
local W, cloth = build(DT)
for _ = 1, steps do
  W:step(1)
  local c = W:interpenetrations()
  if c > most then most = c end
  if c > 0 then with = with + 1 end
end
local x = cloth.x
for v = 0, cloth.n - 1 do
  if not (math.abs(x[v].x) < math.huge and math.abs(x[v].y) < math.huge and math.abs(x[v].z) < math.huge) then
    finite = false
  end
end
local st = W:stats()
local below = below_twin(x)
local messages = W:messages()
W, cloth, x = nil, nil, nil
collectgarbage()

-- Timed runs: a fresh world each, only the stepping timed.
local ms = {}
for r = 1, opt.runs do
  local w = build(DT)
  collectgarbage()
  local t0 = C.loom_clock()
  w:step(steps)
  ms[r] = (C.loom_clock() - t0) / steps * 1000
  w = nil
  collectgarbage()
end
table.sort(ms)
local m = #ms
local med = m % 2 == 1 and ms[(m + 1) / 2] or 0.5 * (ms[m / 2] + ms[m / 2 + 1])

field("engine", '"loom"') field("version", ("%q"):format(loom.version)) field("n", n)
num("dt", DT) field("steps", steps) field("runs", m)
num("ms_per_step_median", med) num("min", ms[1]) num("max", ms[m]) num("ms_per_simulated_s", med / DT, "%.1f")
field("crossings_max", most) field("steps_with_crossings", with) field("below_twin_end", below)
field("unresolved_last_step", st.unresolved) field("nan", tostring(not finite)) field("messages", #messages)
io.stdout:write("{", table.concat(fields, ","), "}\n")
for _, msg in ipairs(messages) do io.stderr:write("loom_fold: kernel message: ", msg, "\n") end
os.exit(finite and 0 or 1)
