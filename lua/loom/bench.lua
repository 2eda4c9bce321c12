-- loom.bench — the benchmark suite behind `loom bench` / `make bench`. Every case warms up first,
-- runs several times and reports the median, min and max with the machine it ran on. Cases load
-- the scenes in scenes/ (one source for demo, test and benchmark).
--   loom bench [CASE-PREFIX ...] [--json] [--runs N] [--threads 1|2]
--   loom bench --list [CASE-PREFIX ...]    the cases and what each measures, without running them
local ffi = require "ffi"
local loom = require "loom"
local C = loom.C
local view = require "loom.view"

local M = {}

local function machine()
  local model, cores = "unknown CPU", 0
  local f = io.open("/proc/cpuinfo")
  if f then
    for line in f:lines() do
      local m = line:match("^model name%s*:%s*(.+)$")
      if m then model = m cores = cores + 1 end
    end
    f:close()
  end
  return ("%s, %d cores, %s"):format(model, cores, jit and jit.version or _VERSION)
end

local function stats(xs)
  table.sort(xs)
  local n = #xs
  local med = n % 2 == 1 and xs[(n + 1) / 2] or 0.5 * (xs[n / 2] + xs[n / 2 + 1])
  return med, xs[1], xs[n]
end

-- Runs fn `runs` times after `warmup` calls; fn returns one measurement.
local function sample(runs, warmup, fn)
  for _ = 1, warmup do fn() end
  local xs = {}
  for i = 1, runs do xs[i] = fn() end
  return stats(xs)
end

-- The median, min and max over `runs` samples (after one warm-up) of the mean ms per step of
-- `steps` steps of W; each(W) runs after every step, untimed (counts, crossings).
local function time_steps(W, runs, steps, each)
  return sample(runs, 1, function()
    local ms = 0
    for _ = 1, steps do
      local t0 = C.loom_clock()
      W:step()
      ms = ms + (C.loom_clock() - t0) * 1000
      each(W)
    end
    return ms / steps
  end)
end

-- The largest stretch and the largest compression over the body's edges (l/L - 1 above 0, 1 - l/L).
local function edge_strain_range(body)
  local tri, nt = body:triangles()
  local stretch, compression = 0, 0
  for t = 0, nt - 1 do
    for k = 0, 2 do
      local a, b = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
      local r0, r1, x0, x1 = body.rest[a], body.rest[b], body.x[a], body.x[b]
      local L = math.sqrt((r1.x - r0.x) ^ 2 + (r1.y - r0.y) ^ 2 + (r1.z - r0.z) ^ 2)
      local l = math.sqrt((x1.x - x0.x) ^ 2 + (x1.y - x0.y) ^ 2 + (x1.z - x0.z) ^ 2)
      stretch, compression = math.max(stretch, l / L - 1), math.max(compression, 1 - l / L)
    end
  end
  return stretch, compression
end

local function max_edge_strain(body)
  local s, c = edge_strain_range(body)
  return math.max(s, c)
end

-- Median, min and max milliseconds per step of `steps` steps, over `runs` runs after one warm-up.
local function ms_per_step(W, steps, runs)
  return sample(runs, 1, function()
    local t0 = C.loom_clock()
    W:step(steps)
    return (C.loom_clock() - t0) / steps * 1000
  end)
end

-- Every case has a name (what `loom bench` filters by prefix) and a line saying what it measures
-- (`loom bench --list`); the comment above each says the rest.
local cases = {}
local function case(name, about, fn) cases[#cases + 1] = {name = name, about = about, fn = fn} end

-- cloth_springs_N: the mass-spring cloth (001 force variant) of N x N vertices hanging in air,
-- ms per 1/240 s step with the automatic substeps that keep the explicit integrator stable.
for _, n in ipairs {32, 64, 128} do
  case("cloth_springs_" .. n, ("%d x %d mass-spring cloth hanging in air, explicit, dt = 1/240 s: ms per step"):format(n, n),
       function(runs)
    local W = loom.load_scene("scenes/cloth_free.lua"):instantiate {n = n}
    W:run(0.25)
    local med, lo, hi = ms_per_step(W, math.max(4, math.floor(6000 / (n * n) * 8)), runs)
    local st = W:stats()
    return {size = ("%dx%d"):format(n, n), median = med, min = lo, max = hi, substeps = st.substeps,
            ms_per_substep = med / st.substeps, max_strain = max_edge_strain(W:body "cloth")}
  end)
end

-- cloth_implicit_N: the hanging scene, Baraff–Witkin with the implicit integrator at dt = 1/60 s
-- (stretch 20 000 N/m, strain_limit 1 %), ms per step, CG iterations per step, Newton iterations
-- after the first per step, the largest edge strain and the edges the strain limit shortened per step.
for _, n in ipairs {64, 128} do
  case("cloth_implicit_" .. n, ("%d x %d Baraff-Witkin cloth hanging (scenes/hanging.lua), implicit, dt = 1/60 s: ms and CG iterations per step"):format(n, n),
       function(runs)
    local W = loom.load_scene("scenes/hanging.lua"):instantiate {n = n}
    W:run(n <= 64 and 0.5 or 0.25)
    local steps = n <= 64 and 8 or 2
    local its, limited, newton = 0, 0, 0
    local med, lo, hi = ms_per_step(W, steps, runs)
    for _ = 1, steps do
      W:step()
      its = its + W:stats().iterations
      limited = limited + W:stats().strain_limited
      newton = newton + W:stats().newton_iterations
    end
    return {size = ("%dx%d"):format(n, n), median = med, min = lo, max = hi, cg_iterations = its / steps,
            newton_iterations = newton / steps,
            cg_residual = W:stats().cg_residual, max_strain = max_edge_strain(W:body "cloth"),
            strain_limited = limited / steps}
  end)
end

-- strain_limit_64: the strain limit beyond what it is for — scenes/hanging.lua at 64 x 64 with a
-- soft stretch (1 000 N/m, shear 100) whose whole upper part stretches beyond a 1 % limit: ms per
-- step with the limit and without it (interleaved, after the same 0.5 s), the edges over the
-- limit per step, and each run's largest stretch and compression (l/L - 1 above and below 0).
case("strain_limit_64", "64 x 64 soft hanging cloth with a 1 % strain limit against none: ms per step, strain", function(runs)
  local sc = loom.load_scene("scenes/hanging.lua")
  local W = {[0] = sc:instantiate {n = 64, stretch = 1000, shear = 100, strain_limit = 0},
             [1] = sc:instantiate {n = 64, stretch = 1000, shear = 100, strain_limit = 0.01}}
  W[0]:run(0.5)
  W[1]:run(0.5)
  local xs = {[0] = {}, [1] = {}}
  local limited = 0
  for r = 1, runs + 1 do
    for k = 0, 1 do
      local t0 = C.loom_clock()
      W[k]:step(4)
      if r > 1 then xs[k][#xs[k] + 1] = (C.loom_clock() - t0) / 4 * 1000 end
      if k == 1 then limited = W[1]:stats().strain_limited end
    end
  end
  local off = stats(xs[0])
  local med, lo, hi = stats(xs[1])
  local s1, c1 = edge_strain_range(W[1]:body "cloth")
  local s0, c0 = edge_strain_range(W[0]:body "cloth")
  return {size = "64x64", median = med, min = lo, max = hi, ms_without = off, ratio = med / off,
          strain_limited = limited, max_stretch = s1, max_compression = c1, max_stretch_without = s0,
          max_compression_without = c0}
end)

-- Issue 8's collision benchmarks, at dt = 1/100 s with N x N Baraff–Witkin cloth (implicit, self-
-- collision on), timed from t = 1 s: ms per step, the collision pipeline's counts in the last step,
-- Newton iterations after the first per timed step,
-- and `interpenetrations`, the largest count of crossing triangle pairs after any timed step (must
-- be 0).
--   crumple_N: scenes/crumple.lua, a sheet dropped on edge onto the floor crumples into a pile;
--   drape_sphere_N: a sheet draped over a sphere (r = 0.3 m) on a floor;
--   table_N: a sheet draped over the table mesh of scenes/tablecloth.lua (top and legs).
local function pipeline_case(name, about, n, make)
  case(name .. "_" .. n, ("%s, %d x %d, implicit, self-collision, dt = 1/100 s: ms per step, pipeline counts"):format(about, n, n),
       function(runs)
    local W = make(n)
    W:run(1.0)
    local steps = n >= 128 and 3 or 10
    local worst, newton, timed = 0, 0, 0
    local med, lo, hi = time_steps(W, n >= 128 and math.min(runs, 3) or runs, steps, function()
      worst = math.max(worst, W:interpenetrations())
      newton, timed = newton + W:stats().newton_iterations, timed + 1
    end)
    local st = W:stats()
    return {size = ("%dx%d"):format(n, n), median = med, min = lo, max = hi, proximity = st.proximity, candidates = st.candidates,
            ccd_collisions = st.ccd_collisions, impact_zones = st.impact_zones, cg_iterations = st.iterations,
            contacts = st.contacts, interpenetrations = worst, unresolved = st.unresolved, tangled = st.tangled,
            newton_iterations = newton / timed}
  end)
end

local function draped(n, obstacle)
  local W = loom.world {dt = 1 / 100}
  obstacle(W)
  W:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  W:cloth { name = "cloth", model = "baraff_witkin", integrator = "implicit", thickness = 0.004, friction = 0.4,
            mesh = loom.mesh.grid { size = {1.4, 1.4}, cells = {n, n}, center = {0.02, 0.01, 1.0} } }
  return W
end

for _, n in ipairs {32, 64, 128} do
  pipeline_case("crumple", "a sheet dropped on edge crumples on the floor", n, function(m) return loom.load_scene("scenes/crumple.lua"):instantiate {n = m} end)
  pipeline_case("drape_sphere", "a sheet draped over a sphere on a floor", n, function(m)
    return draped(m, function(W)
      W:rigid { name = "ball", shape = loom.shape.sphere(0.3), position = {0, 0, 0.6}, static = true }
    end)
  end)
  pipeline_case("table", "a sheet draped over the table mesh", n, function(m)
    return draped(m, function(W)
      W:rigid { name = "table", shape = loom.shape.mesh(loom.mesh.load("scenes/meshes/table.obj")), static = true }
    end)
  end)
end

-- crumple_settle_32: scenes/crumple.lua at 32 x 32 (dt = 1/100) from the drop to t = 4 s, one run
-- (the figures are the simulation's, the same every run; the time is that run's mean ms per step):
-- after the sheet has landed (t > 0.6 s) the largest vertex speed and the steps where some vertex
-- moves faster than 2 m/s (a pile's vertices move at centimetres per second: a faster one was
-- flung, docs/architecture.md "A cloth's own contacts in the solve"), then at t = 4 s the vertices
-- still faster than 5 cm/s and the kinetic energy (mJ), and the largest count of crossing triangle
-- pairs after any step (must be 0).
local function crumple_settle(self_friction)
  local W = loom.load_scene("scenes/crumple.lua"):instantiate {n = 32}
  local c = W:body "cloth"
  c:set("self_friction", self_friction)
  local vmax, fast, worst, ms, steps = 0, 0, 0, 0, 0
  local function speed(i)
    local v = c.v[i]
    return math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z)
  end
  while W.time < 4 - 1e-9 do
    local t0 = C.loom_clock()
    W:step()
    ms, steps = ms + (C.loom_clock() - t0) * 1000, steps + 1
    worst = math.max(worst, W:interpenetrations())
    if W.time > 0.6 then
      local m = 0
      for i = 0, c.n - 1 do m = math.max(m, speed(i)) end
      vmax = math.max(vmax, m)
      if m > 2 then fast = fast + 1 end
    end
  end
  local moving = 0
  for i = 0, c.n - 1 do if speed(i) > 0.05 then moving = moving + 1 end end
  ms = ms / steps
  return {size = "32x32", median = ms, min = ms, max = ms, runs = 1, max_speed = vmax, steps_over_2_m_s = fast,
          moving_at_4s = moving, kinetic_mJ = W:energy().kinetic * 1e3, interpenetrations = worst}
end
case("crumple_settle_32", "32 x 32 sheet crumpling on the floor for 4 s: flung vertices after landing, motion left at rest",
     function() return crumple_settle(0) end)
-- self_friction_32: the same with friction 0.3 between the cloth's own layers (self_friction)
case("self_friction_32", "crumple_settle_32 with self_friction = 0.3: its pairs stick and slide in the solve",
     function() return crumple_settle(0.3) end)

-- two_cloths_24: scenes/two_cloths.lua as it is (two 24 x 24 Baraff–Witkin cloths fallen on each
-- other onto a box, dt = 1/100), timed from t = 2 s when both rest: ms per step, the constraints in
-- the solves (stats.cloth_contacts: with the box and floor, their own folds and the other cloth),
-- the elastic energy at the end, and the largest count of crossing triangle pairs after any timed
-- step (must be 0).
case("two_cloths_24", "two 24 x 24 cloths resting on each other on a box: ms per step, constraints in the solves, elastic energy",
     function(runs)
  local W = loom.load_scene("scenes/two_cloths.lua"):instantiate()
  W:run(2.0)
  local worst = 0
  local med, lo, hi = time_steps(W, runs, 10, function() worst = math.max(worst, W:interpenetrations()) end)
  local st = W:stats()
  return {size = "2x24x24", median = med, min = lo, max = hi, cloth_contacts = st.cloth_contacts, cg_iterations = st.iterations,
          proximity = st.proximity, elastic = W:energy().elastic, interpenetrations = worst}
end)

-- detailed_obstacle_32: scenes/detailed_obstacle.lua as it is (a 32 x 32 Baraff–Witkin cloth
-- hanging, with friction, on a static mesh of 9 800 triangles; dt = 1/100), timed from t = 1 s: ms
-- per step, the exact triangle tests against the obstacle per step (stats.obstacle_tests), those a
-- scan of every triangle would make for the same queries, their ratio over the timed steps, and
-- the largest count of crossing triangle pairs after any timed step (must be 0).
case("detailed_obstacle_32", "32 x 32 cloth on a 9 800-triangle static mesh: ms per step, triangle tests against a scan",
     function(runs)
  local W = loom.load_scene("scenes/detailed_obstacle.lua"):instantiate {cells = 32}
  W:run(1.0)
  local steps, worst, tests, brute = 10, 0, 0, 0
  local med, lo, hi = time_steps(W, runs, steps, function()
    local st = W:stats()
    tests, brute = tests + st.obstacle_tests, brute + st.obstacle_tests_brute
    worst = math.max(worst, W:interpenetrations())
  end)
  local n = (runs + 1) * steps
  return {size = "32x32", median = med, min = lo, max = hi, contacts = W:stats().contacts,
          obstacle_tests = tests / n, obstacle_tests_brute = brute / n, ratio = brute / tests,
          interpenetrations = worst}
end)

-- cloth_grid_MODEL_INTEGRATOR_N: every model with every integrator it takes on the same hanging
-- N x N cloth (scenes/cloth_free.lua, each model's default material, two pinned corners) at one
-- frame step dt = 1/60 s: ms per frame step (explicit integrators take the substeps their stability
-- estimate asks for), substeps and CG iterations per step, and the largest edge strain at the end
-- (time t: the cloth is still falling into place, so strain compares models at equal t, not at rest).
-- Large explicit grids take seconds per step: they run fewer steps and at most 3 runs.
local grid_combos = {
  springs = {"symplectic", "verlet", "verlet_001", "rk4", "implicit"},
  springs_pbd = {"symplectic", "verlet", "verlet_001", "rk4"},
  baraff_witkin = {"symplectic", "verlet", "verlet_001", "rk4", "implicit"},
}
for _, model in ipairs {"springs", "springs_pbd", "baraff_witkin"} do
  for _, integ in ipairs(grid_combos[model]) do
    for _, n in ipairs {32, 64, 128, 256} do
      case(("cloth_grid_%s_%s_%d"):format(model, integ, n),
           ("%d x %d %s cloth, %s, pinned at two corners, dt = 1/60 s: ms per step, substeps, strain"):format(n, n, model, integ),
           function(runs)
        local W = loom.load_scene("scenes/cloth_free.lua"):instantiate {n = n, model = model, integrator = integ}
        W.dt = 1 / 60
        local big = integ ~= "implicit" and n >= 128
        local steps = big and 1 or (n >= 128 and 2 or 6)
        W:step(big and 1 or 3)
        local med, lo, hi = ms_per_step(W, steps, big and math.min(runs, 3) or runs)
        local st = W:stats()
        return {size = ("%dx%d"):format(n, n), median = med, min = lo, max = hi, substeps = st.substeps,
                cg_iterations = integ == "implicit" and st.iterations or nil, t = W.time,
                max_strain = max_edge_strain(W:body "cloth")}
      end)
    end
  end
end

-- fig51_MODEL: document 001's figure 5.1, the time to compute 600 frames (1/60 s each) of its
-- experiment (scenes/experiments_001.lua: a 20 x 20 cloth falling onto an OBJ body on a floor,
-- 001's Verlet) with each model: force springs, constraint springs (10 substeps x 10 iterations),
-- the continuum model with and without bending. The median is ms for all 600 frames; the force
-- models take the substeps their stability needs (001 used 10 for all).
for _, v in ipairs {
  {"springs", {model = "springs"}}, {"springs_pbd", {model = "springs_pbd", iterations = 10}},
  {"baraff_witkin", {model = "baraff_witkin", bend = 1}}, {"baraff_witkin_nobend", {model = "baraff_witkin", bend = 0}},
} do
  case("fig51_" .. v[1], ("document 001's figure 5.1 with %s: ms for 600 frames of its 20 x 20 experiment"):format(v[1]),
       function(runs)
    local sc = loom.load_scene("scenes/experiments_001.lua")
    local p = {n = 20, iterations = 10, bend = 1, kd = 0, area_exponent = 0.5}
    for k, x in pairs(v[2]) do p[k] = x end
    local last
    local med, lo, hi = sample(math.min(runs, 3), 1, function()
      local W = sc:instantiate(p)
      local t0 = C.loom_clock()
      W:step(600)
      last = W
      return (C.loom_clock() - t0) * 1000
    end)
    local sub = last:stats().substeps
    return {size = "20x20, 600 frames", median = med, min = lo, max = hi, runs = math.min(runs, 3), substeps = sub,
            ms_per_frame = med / 600, ms_per_substep = med / 600 / sub}
  end)
end

-- cloth_on_sphere_N: the drape scene (cloth on a ball and a floor, contacts every substep).
for _, cells in ipairs {31, 63} do
  case("cloth_on_sphere_" .. (cells + 1),
       ("%d x %d cloth draped on a ball and a floor (scenes/drape.lua): ms per step"):format(cells + 1, cells + 1), function(runs)
    local W = loom.load_scene("scenes/drape.lua"):instantiate {cells = cells}
    W:run(0.5)
    local med, lo, hi = ms_per_step(W, cells < 40 and 100 or 25, runs)
    local st = W:stats()
    return {size = ("%dx%d"):format(cells + 1, cells + 1), median = med, min = lo, max = hi,
            substeps = st.substeps, contacts = st.contacts, interpenetrations = W:interpenetrations()}
  end)
end

-- cloth_on_pegs_50: the pegs scene, a 49 x 49 cloth settling onto 49 capsule pegs and a floor
-- (50 obstacles). The broad phase pairs the cloth with every peg under it; each pair's vertex
-- candidates come from the cloth's path tree instead of a pass over all vertices.
-- Rigid stacks as the peers are measured (0.2 m cubes, density 1000, friction 0.5, restitution 0;
-- the pyramid's rows 2 mm apart): ms per step over the first 2 s at dt = 1/60 and 1/500 (median of
-- the runs), and the largest distance a box moved from where it was placed after 10 s.
local function stack_world(kind, dt)
  local W = loom.world { dt = dt }
  W:rigid { name = "ground", shape = loom.shape.box(20, 20, 0.5), position = {0, 0, -0.5}, static = true, friction = 0.5 }
  local boxes, start = {}, {}
  local function add(x, z)
    local p = {x, 0, z}
    boxes[#boxes + 1] = W:rigid { name = "b" .. #boxes, shape = loom.shape.box(0.1, 0.1, 0.1), position = p, friction = 0.5 }
    start[#start + 1] = p
  end
  if kind == "tower" then
    for i = 0, 9 do add(0, 0.1 + 0.2 * i) end
  else
    for row = 0, 19 do
      for i = 0, 19 - row do add((i - (19 - row) / 2) * 0.202, 0.1 + 0.2 * row) end
    end
  end
  return W, boxes, start
end

local function stack_case(kind)
  return function(runs)
    local out = {size = kind == "tower" and "10 boxes" or "210 boxes"}
    for _, dt in ipairs {1 / 60, 1 / 500} do
      local tag = dt == 1 / 60 and "60" or "500"
      local drift = 0
      local med, lo, hi = sample(runs, 1, function()
        local W, boxes, start = stack_world(kind, dt)
        local steps = math.floor(2 / dt + 0.5)
        local t0 = C.loom_clock()
        W:step(steps)
        local ms = (C.loom_clock() - t0) / steps * 1000
        W:run(8)
        drift = 0
        for i, b in ipairs(boxes) do
          local p = b.position
          drift = math.max(drift, math.sqrt((p.x - start[i][1]) ^ 2 + (p.y - start[i][2]) ^ 2 + (p.z - start[i][3]) ^ 2))
        end
        return ms
      end)
      if tag == "60" then out.median, out.min, out.max = med, lo, hi end
      out["ms_dt" .. tag] = ("%.3f"):format(med)
      out["drift_mm_dt" .. tag] = ("%.2f"):format(drift * 1000)
    end
    return out
  end
end
case("tower_10", "a tower of 10 rigid cubes, dt = 1/60 and 1/500 s: ms per step, drift after 10 s", stack_case("tower"))
case("pyramid_210", "a pyramid of 210 rigid cubes, dt = 1/60 and 1/500 s: ms per step, drift after 10 s", stack_case("pyramid"))

-- Scenes of many bodies at dt = 1/60 and 1/500: ms per step over the first 2 s (the bodies fall,
-- pile up, settle; median of the runs) and the contact points then, and how settled the pile is
-- after 10 s (one run of each step): the bodies lost (centre below z = -1 m: out of the bin and
-- falling; the scenes' floors are at z = 0) and, of the others, the largest distance one moved
-- during the last second (creep_mm) and how many are still awake.
local function pile_case(file, label)
  return function(runs)
    local sc = loom.load_scene(file)
    local out = {size = label}
    for _, dt in ipairs {1 / 60, 1 / 500} do
      local tag = dt == 1 / 60 and "60" or "500"
      local W, contacts
      local med, lo, hi = sample(runs, 1, function()
        W = sc:instantiate()
        W.dt = dt
        local steps = math.floor(2 / dt + 0.5)
        local t0 = C.loom_clock()
        W:step(steps)
        local ms = (C.loom_clock() - t0) / steps * 1000
        contacts = #W:contacts()
        return ms
      end)
      W:run(7)
      local before, dyn = {}, {}
      for _, b in ipairs(W:bodies()) do
        if b.kind == "rigid" and b.mass > 0 and not b.frozen then dyn[#dyn + 1] = b end
      end
      for i, b in ipairs(dyn) do local p = b.position; before[i] = {p.x, p.y, p.z} end
      W:run(1)
      local creep, awake, lost = 0, 0, 0
      for i, b in ipairs(dyn) do
        local p, q = b.position, before[i]
        if p.z < -1 then
          lost = lost + 1
        else
          creep = math.max(creep, math.sqrt((p.x - q[1]) ^ 2 + (p.y - q[2]) ^ 2 + (p.z - q[3]) ^ 2))
          if not b.asleep then awake = awake + 1 end
        end
      end
      if tag == "60" then out.median, out.min, out.max = med, lo, hi end
      out["ms_dt" .. tag] = ("%.3f"):format(med)
      out["contacts_2s_dt" .. tag] = contacts
      out["lost_dt" .. tag] = lost
      out["creep_mm_dt" .. tag] = ("%.2f"):format(creep * 1000)
      out["awake_10s_dt" .. tag] = awake
    end
    return out
  end
end
case("rain_500", "500 rigid spheres rain into a bin: ms per step, contacts, how settled after 10 s",
     pile_case("scenes/rain.lua", "500 spheres"))
-- terrain_60: boxes, cylinders and convex rocks tumbling down a 3200-triangle mesh terrain
-- (polytopes against every triangle near them by separating axes, several manifolds per pair).
case("terrain_60", "60 rigid bodies tumbling down a 3200-triangle terrain: ms per step, how settled after 10 s",
     pile_case("scenes/terrain.lua", "60 bodies on a 3200-triangle mesh"))

-- hammock_24: cloth and a rigid body in one implicit solve (scenes/hammock.lua: a 2 kg ball
-- dropped into a 24 x 24 cloth pinned at its corners), ms per step over the first 4 s; after 8 s
-- the ball's speed and the pins' load over the weight of ball and cloth.
case("hammock_24", "a 2 kg ball dropped into a 24 x 24 cloth, one implicit solve: ms per step, pins' load", function(runs)
  local sc = loom.load_scene("scenes/hammock.lua")
  local speed, load
  local med, lo, hi = sample(runs, 1, function()
    local W = sc:instantiate()
    local steps = math.floor(4 / W.dt + 0.5)
    local t0 = C.loom_clock()
    W:step(steps)
    local ms = (C.loom_clock() - t0) / steps * 1000
    W:run(4)
    local ball, cloth = W:body "ball", W:body "hammock"
    local v = ball.velocity
    speed = math.sqrt(v.x ^ 2 + v.y ^ 2 + v.z ^ 2)
    local f, rz, weight = cloth:internal_forces(), 0, ball.mass
    for i = 0, cloth.n - 1 do weight = weight + cloth.m[i] end
    for _, c in ipairs { {-0.5, -0.5}, {0.5, -0.5}, {-0.5, 0.5}, {0.5, 0.5} } do
      local i = cloth:vertex_near { c[1], c[2], 1 }
      rz = rz - f[i].z + cloth.m[i] * 9.81
    end
    load = rz / (weight * 9.81)
    return ms
  end)
  return {size = "24x24 cloth, 1 ball", median = med, min = lo, max = hi, ball_speed = ("%.4f"):format(speed),
          pins_over_weight = ("%.5f"):format(load)}
end)
-- How deep the surface of solid A reaches into solid B: the deepest of 11 points along each of A's
-- surface edges, by B:depth (inside a tet of B: the distance to B's surface) (m). Edges reach
-- where vertices do not (a corner drooping over the rim of the body below).
local function edge_depth(A, B)
  local tri, n = A:triangles()
  local seen, worst, p = {}, 0, {0, 0, 0}
  for t = 0, n - 1 do
    for k = 0, 2 do
      local i, j = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
      local key = math.min(i, j) * 1048576 + math.max(i, j)
      if not seen[key] then
        seen[key] = true
        local p0, p1 = A.x[i], A.x[j]
        for m = 0, 10 do
          local f = m / 10
          p[1], p[2], p[3] = p0.x + f * (p1.x - p0.x), p0.y + f * (p1.y - p0.y), p0.z + f * (p1.z - p0.z)
          worst = math.max(worst, B:depth(p))
        end
      end
    end
  end
  return worst
end
M.edge_depth = edge_depth

-- solids_3cubes: document 002's benchmark scene (scenes/solids_3cubes.lua: three 5 x 5 x 5 cubes,
-- 648 nodes and 1875 tets, 002's model, meeting through the collision pipeline), steps per second
-- over t = 2 .. 4 s (they have landed and rest on each other); 002 ran it at 31 FPS on a 2007 PC.
-- At the end: the top
-- cube's bottom vertex farthest below the middle cube's vertex nearest it (top_cube_depth_m: at
-- an overhanging corner that is a droop beside the rim, not a depth), how deep any cube's surface
-- edges reach into the cube under or over it (edge_depth_m, measured), and the crossing triangle
-- pairs world:interpenetrations() counts.
--   solids_3cubes_penetration: the same with contact = "penetration" (document 002's contacts).
local function cubes_case(contact)
  return function(runs)
    local sc = loom.load_scene("scenes/solids_3cubes.lua", {contact = contact})
    local depth, W
    local med, lo, hi = sample(runs, 1, function()
      W = sc:instantiate()
      W:run(2)
      local steps = math.floor(2 / W.dt + 0.5)
      local t0 = C.loom_clock()
      W:step(steps)
      local ms = (C.loom_clock() - t0) / steps * 1000
      local lower, upper = W:body "cube2", W:body "cube3"
      depth = 0
      for k = 0, 35 do
        local x = upper.x[k]
        depth = math.max(depth, lower.x[lower:vertex_near { x.x, x.y, x.z }].z - x.z)
      end
      return ms
    end)
    local edges = 0
    for _, pr in ipairs { {"cube1", "cube2"}, {"cube2", "cube1"}, {"cube2", "cube3"}, {"cube3", "cube2"} } do
      edges = math.max(edges, edge_depth(W:body(pr[1]), W:body(pr[2])))
    end
    return {size = "3 cubes, 648 nodes, 1875 tets", median = med, min = lo, max = hi,
            steps_per_s = ("%.0f"):format(1000 / med), top_cube_depth_m = ("%.4f"):format(depth),
            edge_depth_m = ("%.4f"):format(edges), crossings = W:interpenetrations()}
  end
end
case("solids_3cubes", "document 002's three soft cubes meeting through the collision pipeline: steps per second, depth",
     cubes_case("pipeline"))
case("solids_3cubes_penetration", "the same three cubes with 002's penetration contacts: steps per second, depth",
     cubes_case("penetration"))

-- neohookean_bar_N: a Neo-Hookean bar (1 x 0.1 x 0.1 m, N x N/10 x N/10 cells, E = 1 MPa, nu = 0.45)
-- pinned at one end and sagging under gravity at dt = 1/60 s, ms per step (one implicit solve).
local function nh_bar_case(n)
  return function(runs)
    local W = loom.world { dt = 1 / 60 }
    local m = loom.mesh.tet_box { size = {1, 0.1, 0.1}, cells = {n, math.max(1, math.floor(n / 10)), math.max(1, math.floor(n / 10))},
                                  center = {0.5, 0, 0} }
    local b = W:solid { name = "bar", model = "neohookean", mesh = m, young = 1e6, poisson = 0.45, density = 1000 }
    b:pin(b:select(function(x) return x.x < 1e-9 end))
    local med, lo, hi = ms_per_step(W, 30, runs)
    return {size = ("%d nodes, %d tets"):format(b.n, m.tet_count), median = med, min = lo, max = hi,
            cg_iterations = W:stats().iterations}
  end
end
case("neohookean_bar_20", "a Neo-Hookean bar of 20 x 2 x 2 cells sagging, implicit, dt = 1/60 s: ms per step", nh_bar_case(20))
case("neohookean_bar_40", "a Neo-Hookean bar of 40 x 4 x 4 cells sagging, implicit, dt = 1/60 s: ms per step", nh_bar_case(40))

-- rubber_stack_3: three Neo-Hookean cubes (0.5 m, 4 x 4 x 4 cells, E = 1 MPa, nu = 0.45, each 2 cm
-- off the one under it) stacked on the floor at dt = 1/60 s, ms per step over t = 1 .. 2 s (landed,
-- resting on each other); how far the top cube's centre moved in x over t = 1 .. 6 s and its
-- bottom's height at the end (0.5 m cubes: about 1.0 when it still stands).
case("rubber_stack_3", "three Neo-Hookean cubes stacked on the floor: ms per step, whether the stack stands", function(runs)
  local function build()
    local W = loom.world { dt = 1 / 60 }
    W:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 }
    for k = 1, 3 do
      W:solid { name = "c" .. k, model = "neohookean", young = 1e6, poisson = 0.45, density = 1100, friction = 0.5,
                thickness = 0.005, mesh = loom.mesh.tet_box { size = {0.5, 0.5, 0.5}, cells = {4, 4, 4},
                                                              center = {0.02 * (k - 1), 0.01 * (k - 1), 0.255 + (k - 1) * 0.51} } }
    end
    return W
  end
  local function com_x(b)
    local q, M = 0, 0
    for j = 0, b.n - 1 do q, M = q + b.m[j] * b.x[j].x, M + b.m[j] end
    return q / M
  end
  local W, x1
  local med, lo, hi = sample(runs, 1, function()
    W = build()
    W:run(1)
    x1 = com_x(W:body "c3")
    local t0 = C.loom_clock()
    W:step(60)
    return (C.loom_clock() - t0) / 60 * 1000
  end)
  W:run(4)
  local top = W:body "c3"
  local bottom = top:aabb()
  return {size = "3 cubes, 375 nodes, 960 tets", median = med, min = lo, max = hi, cg_iterations = W:stats().iterations,
          top_moved_m = ("%.4f"):format(math.abs(com_x(top) - x1)), top_bottom_z_m = ("%.3f"):format(bottom[3]),
          crossings = W:interpenetrations()}
end)

-- simplex_torus_5tools: document 004's scene (scenes/simplex_fingers.lua: the medium torus, 1860
-- vertices, squeezed by five finger spheres replaying a recorded squeeze at 004's dt = 1/30 s), ms per
-- step over t = 0.5 .. 3.5 s (the fingers close, press and hold); 004 ran it at 30 FPS in 2006.
-- simplex_torus_high: the same at the high density (7440 vertices); simplex_shape_torus: the
-- rotation-invariant model on the medium torus.
local function simplex_case(params, label)
  return function(runs)
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local n
    local med, lo, hi = sample(runs, 1, function()
      local W = sc:instantiate(params)
      n = W:body "object".n
      W:run(0.5)
      local steps = 90
      local t0 = C.loom_clock()
      W:step(steps)
      return (C.loom_clock() - t0) / steps * 1000
    end)
    return {size = ("%s, %d vertices, 5 tools"):format(label, n), median = med, min = lo, max = hi,
            steps_per_s = ("%.0f"):format(1000 / med)}
  end
end
case("simplex_torus_5tools", "document 004's torus (1860 vertices) squeezed by five fingers, dt = 1/30 s: ms per step",
     simplex_case({density = "medium"}, "torus"))
case("simplex_torus_high", "the finger squeeze on the high-density torus (7440 vertices): ms per step",
     simplex_case({density = "high"}, "torus"))
case("simplex_shape_torus", "the finger squeeze with the rotation-invariant simplex_shape model: ms per step",
     simplex_case({density = "medium", model = "simplex_shape"}, "torus, simplex_shape"))
-- simplex_torus_max60: the finest torus (rings x segments = 30 s x 31 s, s = 2, 4, 6, ...) that still
-- steps at >= 60 steps/s in the finger scene (median of the runs at each size).
case("simplex_torus_max60", "the finest torus the finger scene steps at 60 steps/s or more", function(runs)
  local sc = loom.load_scene("scenes/simplex_fingers.lua")
  local best, best_rate, ms_best = 0, 0, 0
  for s = 2, 40, 2 do
    local n
    local med = sample(runs, 1, function()
      local W = sc:instantiate { rings = 30 * s, segments = 31 * s }
      n = W:body "object".n
      W:run(1)
      local steps = 15
      local t0 = C.loom_clock()
      W:step(steps)
      return (C.loom_clock() - t0) / steps * 1000
    end)
    if 1000 / med < 60 then break end
    best, best_rate, ms_best = n, 1000 / med, med
  end
  return {size = ("%d vertices"):format(best), median = ms_best, min = ms_best, max = ms_best,
          steps_per_s = ("%.0f"):format(best_rate)}
end)

-- sweep_40: a 40-job sweep of hello_cloth (wind 0..2 in 5 values x 8 seeds, 0.5 s each) through
-- `loom sweep` with --jobs 1 and --jobs 2 (fresh each run): wall seconds of the 2-process sweep, and
-- the speed-up over one process. sweep_slurm_6: 6 jobs through the Slurm array when one is
-- reachable (scripts/slurm-local.sh start; SLURM_CONF set), against the same 6 jobs locally with
-- --jobs 1: the overhead per job.
local function sweep_wall(args)
  local host = require "loom.host"
  local dir = os.tmpname()
  os.remove(dir)
  local t0 = C.loom_clock()
  local p = io.popen(("%q sweep scenes/hello_cloth.lua %s --fresh --out %q 2>&1"):format(host.executable, args, dir))
  local out = p:read("*a")
  p:close()
  local wall = C.loom_clock() - t0
  os.execute(("rm -rf %q"):format(dir))
  if not out:match("jobs: %d+ ok, 0 failed") then error("sweep failed: " .. out, 0) end
  return wall
end
case("sweep_40", "a 40-job loom sweep of hello_cloth with 1 and 2 processes: wall seconds, speed-up", function(runs)
  local grid = "--param wind=0,0.5,1,1.5,2 --seeds 1..8 --time 0.5"
  local one, two = {}, {}
  for i = 1, math.max(1, runs) do
    one[i] = sweep_wall(grid .. " --jobs 1")
    two[i] = sweep_wall(grid .. " --jobs 2")
  end
  table.sort(one)
  table.sort(two)
  local m1, m2 = one[math.floor((#one + 1) / 2)], two[math.floor((#two + 1) / 2)]
  return {size = "40 jobs of hello_cloth, 0.5 s each", median = m2 * 1000, min = two[1] * 1000, max = two[#two] * 1000,
          jobs1_s = ("%.2f"):format(m1), jobs2_s = ("%.2f"):format(m2), speedup = ("%.2f"):format(m1 / m2)}
end)
case("sweep_slurm_6", "6 sweep jobs through a Slurm array against 1 local process: overhead per job", function(runs)
  local ok = os.execute("squeue -h >/dev/null 2>&1")
  if ok ~= 0 and ok ~= true then
    return {size = "6 jobs", median = 0, min = 0, max = 0, note = "no Slurm reachable (scripts/slurm-local.sh start)"}
  end
  local grid = "--param wind=0,1,2 --seeds 1..2 --time 0.5"
  local loc, sl = {}, {}
  for i = 1, math.max(1, runs) do
    loc[i] = sweep_wall(grid .. " --jobs 1")
    sl[i] = sweep_wall(grid .. " --on slurm")
  end
  table.sort(loc)
  table.sort(sl)
  local ml, ms = loc[math.floor((#loc + 1) / 2)], sl[math.floor((#sl + 1) / 2)]
  return {size = "6 jobs of hello_cloth, 0.5 s each", median = ms * 1000, min = sl[1] * 1000, max = sl[#sl] * 1000,
          local_jobs1_s = ("%.2f"):format(ml), slurm_s = ("%.2f"):format(ms),
          overhead_per_job_s = ("%.2f"):format((ms - ml) / 6)}
end)

case("hull_pile_200", "200 convex hulls piling up: ms per step, contacts, how settled after 10 s",
     pile_case("scenes/hull_pile.lua", "200 hulls"))

-- tablecloth_trick: scenes/tablecloth_trick.lua (a 28 x 18 cloth pulled at 6 m/s from under two
-- plates and two cups, pressed between them and the table): ms per step over the pull (0.2-0.45 s)
-- and how far the dishes moved after 0.8 s (the largest).
case("tablecloth_trick", "a cloth pulled at 6 m/s from under plates and cups: ms per step, how far the dishes moved",
     function(runs)
  local sc = loom.load_scene("scenes/tablecloth_trick.lua")
  local moved
  local med, lo, hi = sample(runs, 1, function()
    local W = sc:instantiate()
    W:run(0.2)
    local x0 = {}
    for _, n in ipairs { "plate 1", "plate 2", "cup 1", "cup 2" } do x0[n] = W:body(n).position.x end
    local steps = 60
    local t0 = C.loom_clock()
    W:step(steps)
    local ms = (C.loom_clock() - t0) / steps * 1000
    W:run(0.35)
    moved = 0
    for n, x in pairs(x0) do moved = math.max(moved, math.abs(W:body(n).position.x - x)) end
    return ms
  end)
  return {size = "28x18 cloth, 4 dishes", median = med, min = lo, max = hi, dishes_moved_m = ("%.3f"):format(moved)}
end)

case("cloth_on_pegs_50", "a 49 x 49 cloth settling onto 49 capsule pegs and a floor: ms per step", function(runs)
  local W = loom.load_scene("scenes/pegs.lua"):instantiate()
  W:run(0.5)
  local med, lo, hi = ms_per_step(W, 24, runs)
  local st = W:stats()
  return {size = "49x49, 50 obstacles", median = med, min = lo, max = hi, substeps = st.substeps,
          contacts = st.contacts, interpenetrations = W:interpenetrations()}
end)

-- force_field_lua_vs_c: Lua force fields over the bounds-checked body arrays (body.x, body.f, …),
-- over the raw pointers (body:raw "x", …) and in C, on the drape scene's 128 x 128 cloth.
--   simple: f += m a for a constant a — the arithmetic of loom_body_add_acceleration component for
--     component, so checked / C and raw / C compare the same work.
--   wind: a realistic field — area-weighted vertex normals from the triangles, a gust with
--     math.sin along the cloth, pressure (u . n) n on the wind relative to each vertex. Kernel C
--     has no twin of it, so it is compared with itself over raw pointers (checked / raw).
-- Each variant is compiled from the same source text separately, so one does not inherit the
-- other's traces.
local simple_src = [[
local raw = ...
local ax, ay, az = 3, 0.5, -1
return function(world)
  local c = world:body "cloth"
  local f, m = c.f, c.m
  if raw then f, m = c:raw "f", c:raw "m" end
  for i = 0, c.n - 1 do
    f[i].x = f[i].x + ax * m[i]
    f[i].y = f[i].y + ay * m[i]
    f[i].z = f[i].z + az * m[i]
  end
end
]]

local wind_src = [[
local raw = ...
local ffi = require "ffi"
local sin, sqrt = math.sin, math.sqrt
local normals, ncount
return function(world, t)
  local c = world:body "cloth"
  local x, v, f = c.x, c.v, c.f
  if raw then x, v, f = c:raw "x", c:raw "v", c:raw "f" end
  local n = c.n
  if ncount ~= n then normals, ncount = ffi.new("loom_vec3[?]", n), n end
  local N = normals
  for i = 0, n - 1 do N[i].x, N[i].y, N[i].z = 0, 0, 0 end
  local tri, nt = c:triangles()
  for k = 0, nt - 1 do
    local a, b, d = tri[3 * k], tri[3 * k + 1], tri[3 * k + 2]
    local xa, xb, xd = x[a], x[b], x[d]
    local ux, uy, uz = xb.x - xa.x, xb.y - xa.y, xb.z - xa.z
    local wx, wy, wz = xd.x - xa.x, xd.y - xa.y, xd.z - xa.z
    -- a third of the triangle's area vector to each corner
    local cx, cy, cz = (uy * wz - uz * wy) / 6, (uz * wx - ux * wz) / 6, (ux * wy - uy * wx) / 6
    N[a].x, N[a].y, N[a].z = N[a].x + cx, N[a].y + cy, N[a].z + cz
    N[b].x, N[b].y, N[b].z = N[b].x + cx, N[b].y + cy, N[b].z + cz
    N[d].x, N[d].y, N[d].z = N[d].x + cx, N[d].y + cy, N[d].z + cz
  end
  local rho = 1.2   -- air density, kg/m^3
  for i = 0, n - 1 do
    local p, vel = x[i], v[i]
    local gust = 4 * (1 + 0.5 * sin(2 * t + 3 * p.x))
    local rx, ry, rz = gust - vel.x, 0.3 * gust - vel.y, -vel.z
    local nx, ny, nz = N[i].x, N[i].y, N[i].z
    local area = sqrt(nx * nx + ny * ny + nz * nz)
    if area > 0 then
      local un = (rx * nx + ry * ny + rz * nz) / area
      local s = 0.5 * rho * un * (un < 0 and -un or un) / area
      f[i].x = f[i].x + s * nx
      f[i].y = f[i].y + s * ny
      f[i].z = f[i].z + s * nz
    end
  end
end
]]

local function compile(src, name, raw)
  return assert(loadstring(src, "=" .. name))(raw)
end

case("force_field_lua_vs_c", "Lua force fields over checked arrays, raw pointers and C on a 128 x 128 cloth: ms per evaluation",
     function(runs)
  local sc = loom.load_scene("scenes/drape.lua")
  local W = sc:instantiate {cells = 127}
  W:run(0.1)   -- a draped, moving cloth: normals and velocities are not all alike
  local body = W:body "cloth"
  local acc = {3, 0.5, -1}
  local reps = 200
  local function timed(fn)
    return function()
      local t0 = C.loom_clock()
      for r = 1, reps do fn(W, r * 1e-3) end
      return (C.loom_clock() - t0) / reps * 1000
    end
  end
  local simple_checked = compile(simple_src, "simple_checked", false)
  local simple_raw = compile(simple_src, "simple_raw", true)
  local wind_checked = compile(wind_src, "wind_checked", false)
  local wind_raw = compile(wind_src, "wind_raw", true)
  -- checked and raw must compute the same forces, or the comparison means nothing
  for _, pair in ipairs {{simple_checked, simple_raw}, {wind_checked, wind_raw}} do
    C.loom_world_clear_forces(W:ptr())
    pair[1](W, 0.5)
    local a = ffi.new("loom_vec3[?]", body.n)
    ffi.copy(a, body:raw "f", ffi.sizeof("loom_vec3") * body.n)
    C.loom_world_clear_forces(W:ptr())
    pair[2](W, 0.5)
    local f = body:raw "f"
    for i = 0, body.n - 1 do
      if a[i].x ~= f[i].x or a[i].y ~= f[i].y or a[i].z ~= f[i].z then
        error("force_field_lua_vs_c: checked and raw fields differ at vertex " .. i)
      end
    end
  end
  -- interleave the variants run by run, so drift of a shared machine hits them alike
  local xs = {sc = {}, sr = {}, c = {}, wc = {}, wr = {}}
  local fns = {sc = timed(simple_checked), sr = timed(simple_raw), wc = timed(wind_checked), wr = timed(wind_raw),
               c = timed(function() body:add_acceleration(acc) end)}
  local order = {"sc", "sr", "c", "wc", "wr"}
  for _ = 1, 2 do for _, k in ipairs(order) do fns[k]() end end
  for _ = 1, runs do for _, k in ipairs(order) do local v = fns[k]() table.insert(xs[k], v) end end
  local r = {}
  for k, list in pairs(xs) do r[k] = {stats(list)} end
  return {size = "128x128", median = r.sc[1], min = r.sc[2], max = r.sc[3],
          raw_median = r.sr[1], c_median = r.c[1], c_min = r.c[2], c_max = r.c[3],
          ratio = r.sc[1] / r.c[1], raw_ratio = r.sr[1] / r.c[1],
          wind_median = r.wc[1], wind_min = r.wc[2], wind_max = r.wc[3], wind_raw_median = r.wr[1],
          wind_ratio = r.wc[1] / r.wr[1]}
end)

-- render_1280x720: a draped 128 x 128 cloth over the sphere, one full frame (clear, grid,
-- bodies, pins) per sample.
case("render_1280x720", "one full 1280 x 720 frame of a 128 x 128 cloth draped on a sphere: ms", function(runs)
  local sc = loom.load_scene("scenes/drape.lua")
  local W = sc:instantiate {cells = 127}
  W:run(0.6)
  local canvas = ffi.gc(C.loom_canvas_create(1280, 720), C.loom_canvas_destroy)
  local cam = view.camera(sc.camera)
  local med, lo, hi = sample(runs * 3, 5, function()
    local t0 = C.loom_clock()
    view.draw(canvas, W, cam, {})
    return (C.loom_clock() - t0) * 1000
  end)
  local _, nt = W:body("cloth"):triangles()
  return {size = "1280x720", median = med, min = lo, max = hi, triangles = nt}
end)

-- reload_latency: from renaming an edited scene over the watched one to the new force field
-- acting, with `loom run --headless --watch` in another process.
case("reload_latency", "from saving an edited scene to its new force acting, headless --watch: ms", function(runs)
  local host = require "loom.host"
  local src = io.open("scenes/hello_cloth.lua"):read("*a")
  local dir = os.tmpname()
  os.remove(dir)
  os.execute(("mkdir -p %q"):format(dir))
  local path = dir .. "/scene.lua"
  local function variant(k)
    local marker = ("scene.forces = {\n  marker = function() if not MARKED then MARKED = true " ..
      "io.stdout:write(('ACT %d %%.6f\\n'):format(require('loom').C.loom_wall_clock())) io.stdout:flush() end end,")
      :format(k)
    local text = src:gsub("scene%.forces = {", function() return marker end, 1)
    local tmp = path .. ".tmp"
    local f = io.open(tmp, "w")
    f:write(text)
    f:close()
    local t = C.loom_wall_clock()
    os.rename(tmp, path)
    return t
  end
  variant(0)
  local p = io.popen(("sh -c 'echo $$; exec %q run %q --headless --watch --quiet' 2>/dev/null"):format(host.executable, path))
  local pid = p:read("*l")
  local first = p:read("*l")
  if not first or not first:match("^ACT 0") then
    p:close()
    error("reload_latency: the watched scene did not start")
  end
  local xs = {}
  -- the watcher polls every 50 ms: spread the edits over that cycle (a fixed seed keeps the
  -- schedule reproducible) instead of locking onto one phase of it
  local seed = 12345
  for k = 1, runs do
    seed = (seed * 1103515245 + 12345) % 2147483648
    host.sleep(0.3 + 0.05 * seed / 2147483648)
    local t_write = variant(k)
    local line = p:read("*l")
    local kk, t = (line or ""):match("^ACT (%d+) ([%d%.]+)")
    if tonumber(kk) ~= k then
      os.execute("kill " .. pid)
      p:close()
      error("reload_latency: unexpected output " .. tostring(line))
    end
    xs[#xs + 1] = (tonumber(t) - t_write) * 1000
  end
  os.execute("kill " .. pid .. " 2>/dev/null")
  p:close()
  os.execute(("rm -rf %q"):format(dir))
  local med, lo, hi = stats(xs)
  return {size = "hello_cloth", median = med, min = lo, max = hi}
end)

local function json_value(v)
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    return ("%.6g"):format(v)
  end
  return ("%q"):format(tostring(v))
end

local order = {"case", "size", "unit", "median", "min", "max", "runs"}

local function to_json(row)
  local parts, seen = {}, {}
  for _, k in ipairs(order) do
    if row[k] ~= nil then parts[#parts + 1] = ("%q:%s"):format(k, json_value(row[k])) seen[k] = true end
  end
  local extra = {}
  for k in pairs(row) do if not seen[k] then extra[#extra + 1] = k end end
  table.sort(extra)
  for _, k in ipairs(extra) do parts[#parts + 1] = ("%q:%s"):format(k, json_value(row[k])) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function to_text(row)
  local extra = {}
  for k, v in pairs(row) do
    local skip = false
    for _, o in ipairs(order) do if o == k then skip = true end end
    if not skip then extra[#extra + 1] = ("%s=%s"):format(k, type(v) == "number" and ("%.4g"):format(v) or tostring(v)) end
  end
  table.sort(extra)
  return ("%-24s %-12s %9.3f ms  (min %.3f, max %.3f, %d runs)  %s"):format(row.case, row.size, row.median, row.min,
    row.max, row.runs, table.concat(extra, " "))
end

local usage = [[
usage: loom bench [CASE-PREFIX ...] [options]   run the cases whose names start with a prefix (default: all)
  --list        list the cases (those matching the prefixes) with what each measures; run nothing
  --json        one JSON object per case instead of a line of text
  --runs N      timed runs per case after the warm-up (default 7); the median, min and max are reported
  --threads 1|2 threads of the worlds the cases make without their own `threads`
]]

function M.main(args)
  local json, list, runs, filters = false, false, 7, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--json" then json = true
    elseif a == "--list" then list = true
    elseif a == "--help" or a == "-h" then
      io.stdout:write(usage)
      return 0
    elseif a == "--runs" then
      runs = tonumber(args[i + 1])
      i = i + 1
      if not runs or runs < 1 or runs ~= math.floor(runs) then
        io.stderr:write("loom bench: --runs needs a positive whole number\n")
        return 2
      end
    elseif a == "--threads" then
      local t = tonumber(args[i + 1])
      i = i + 1
      if t ~= 1 and t ~= 2 then
        io.stderr:write("loom bench: --threads needs 1 or 2\n")
        return 2
      end
      require("loom.world").default_threads = t
    elseif a:sub(1, 2) == "--" then
      io.stderr:write("loom bench: unknown option " .. a .. " (see loom bench --help)\n")
      return 2
    else filters[#filters + 1] = a end
    i = i + 1
  end
  local selected = {}
  for _, c in ipairs(cases) do
    local ok = #filters == 0
    for _, f in ipairs(filters) do if c.name:sub(1, #f) == f then ok = true end end
    if ok then selected[#selected + 1] = c end
  end
  if #selected == 0 then
    io.stderr:write("loom bench: no case matches; cases: ")
    for _, c in ipairs(cases) do io.stderr:write(c.name, " ") end
    io.stderr:write("\n")
    return 2
  end
  if list then
    local width = 0
    for _, c in ipairs(selected) do width = math.max(width, #c.name) end
    for _, c in ipairs(selected) do io.stdout:write(("%-" .. width .. "s  %s\n"):format(c.name, c.about)) end
    return 0
  end
  local mach = machine()
  if not json then io.stdout:write("machine: ", mach, "\n") end
  local status = 0
  for _, c in ipairs(selected) do
    local ok, row = pcall(c.fn, runs)
    if ok then
      row.case, row.unit, row.runs = c.name, "ms", row.runs or runs
      if json then row.machine = mach end
      io.stdout:write(json and to_json(row) or to_text(row), "\n")
    else
      status = 1
      io.stderr:write("loom bench: ", c.name, ": ", tostring(row), "\n")
    end
    io.stdout:flush()
    collectgarbage()
  end
  return status
end

return M
