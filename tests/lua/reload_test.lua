-- Hot reload in a headless `--watch` run: editing the force field keeps the simulation going with
-- the new force, a parameter tuned at run time survives unless the file changes its default, and a
-- broken file leaves the old scene running with the error reported as file:line.
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

local TEMPLATE = [[
local loom = require "loom"
local scene = loom.scene { title = "reload", gravity = {0, 0, 0}, params = { push = DEFAULT } }
function scene.build(world)
  world:cloth { name = "c", mesh = loom.mesh.grid { size = {0.3, 0.3}, cells = {4, 4} }, drag = 0 }
end
scene.forces = {
  push = function(world)
    local c = world:body "c"
    for i = 0, c.n - 1 do c.f[i].AXIS = c.f[i].AXIS + scene.params.push * c.m[i] end
  end,
}
TUNE
return scene
]]

local function version(default, axis, tune)
  return (TEMPLATE:gsub("DEFAULT", tostring(default)):gsub("AXIS", axis):gsub("TUNE", tune and
    "function scene.on_step(world, t) if t >= 0.3 then scene.params.push = 4 end end" or ""))
end

-- least-squares slope of column `col` against time over [t0, t1]
local function slope(rows, col, t0, t1)
  local n, st, sv, stt, stv = 0, 0, 0, 0, 0
  for _, r in ipairs(rows) do
    if r.time >= t0 and r.time <= t1 then
      n, st, sv, stt, stv = n + 1, st + r.time, sv + r[col], stt + r.time * r.time, stv + r.time * r[col]
    end
  end
  assert.is_true(n > 10, ("only %d rows in [%g, %g]"):format(n, t0, t1))
  return (n * stv - st * sv) / (n * stt - st * st)
end

describe("hot reload with --watch", function()
  it("keeps time and state, applies the new force, keeps tuned parameters, survives errors", function()
    local d = U.tmpdir()
    local scene, csv, log = d .. "/scene.lua", d .. "/stats.csv", d .. "/log.txt"
    U.write(d .. "/a.lua", version(1, "x", true))
    U.write(d .. "/b.lua", version(1, "y", false))
    U.write(d .. "/c.lua", version(2, "y", false))
    U.write(d .. "/d.lua", version(2, "y", false):gsub("local c = world:body", "local c = = world:body"))
    U.write(scene, version(1, "x", true))
    local swap = function(name) return ("cp %q %q && mv %q %q"):format(d .. "/" .. name, scene .. ".tmp", scene .. ".tmp", scene) end
    local out = U.sh(table.concat({
      ("%q run %q --headless --watch --time 4 --stats %q > %q 2>&1 &"):format(U.loom, scene, csv, log),
      "pid=$!", "sleep 1", swap("b.lua"), "sleep 1", swap("c.lua"), "sleep 1", swap("d.lua"),
      "wait $pid", "echo status $?",
    }, "\n"))
    local logtext = U.read(log) or ""
    assert.truthy(out:find("status 1", 1, true), out .. logtext) -- an error happened during the run
    local reloads = {}
    for t in logtext:gmatch("reloaded [^\n]- at t = ([%d%.]+) s") do reloads[#reloads + 1] = tonumber(t) end
    assert.equal(2, #reloads, logtext)
    assert.truthy(logtext:find(scene .. ":8:", 1, true), "syntax error not reported as file:line: " .. logtext)

    local rows = U.csv(csv)
    for i = 2, #rows do assert.less(rows[i - 1].time, rows[i].time) end -- time never went back
    assert.near(rows[#rows].time, 4, 1e-6)
    local r1, r2 = reloads[1], reloads[2]
    assert.near(r1, 1.0, 0.4)
    assert.near(r2, 2.0, 0.4)
    -- version a: x force, tuned from 1 to 4 at t = 0.3
    assert.near(slope(rows, "c_vx", 0.35, r1 - 0.05), 4, 1e-6)
    -- version b: the new (y) force acts, with the tuned value kept; x velocity carried over
    assert.near(slope(rows, "c_vy", r1 + 0.05, r2 - 0.05), 4, 1e-6)
    assert.near(slope(rows, "c_vx", r1 + 0.05, r2 - 0.05), 0, 1e-9)
    -- version c changed the default: it wins over the tuned value
    assert.near(slope(rows, "c_vy", r2 + 0.05, 2.95), 2, 1e-6)
    -- version d does not compile: version c keeps running to the end
    assert.near(slope(rows, "c_vy", 3.3, 3.95), 2, 1e-6)
  end)
end)

describe("hot reload of an unchanged scene", function()
  -- world:adopt is what the runner does on a reload: a new world built from the file takes over
  -- the old one's state. With the file unchanged it goes on as if nothing happened: the rigid
  -- contacts keep their remembered impulses (a pile restarted them from nothing and settled
  -- again, 2.5 mm in one step in scenes/rain.lua), pin groups moving on a trajectory keep their
  -- vertices' motion (they were stopped and set again), and a vertex pinned in both worlds keeps
  -- the velocity its pin gave it (it was zeroed, and the next solve rounded differently:
  -- hanging_corners and tablecloth_trick ended 1e-14 to 1e-12 m apart). Nothing around the bodies
  -- changed, so what their next step looks for is carried too, and a kinematic body already where
  -- its trajectory says keeps its motion: the state hash is the same at once.
  for _, name in ipairs {"tower", "pyramid", "lift_and_wave", "towel_fold", "hanging_corners", "tablecloth_trick",
                         "fast_sphere"} do
    it(name .. ": goes on to the same state hash as the run without the reload", function()
      local loom = require "loom"
      local path = "scenes/" .. name .. ".lua"
      local sc = loom.load_scene(path)
      local A, B = sc:instantiate(), sc:instantiate()
      for _ = 1, 60 do A:step(); B:step() end
      local N = loom.load_scene(path):instantiate()
      assert.is_true(N:adopt(B:address()) > 0)
      assert.equal(A:hash(), N:hash())
      for _ = 1, 30 do A:step(); N:step() end
      assert.equal(A:hash(), N:hash())
    end)
  end
end)

describe("hot reload and the rigid forces", function()
  -- A force added while the world runs (the force panel, a scene's on_step) goes on acting after a
  -- reload; the new build's own forces are the ones in the file.
  local FORCES = [[
local loom = require "loom"
local scene = loom.scene { title = "forces", gravity = {0, 0, 0}, dt = 1 / 100 }
function scene.build(world)
  local b = world:rigid { name = "box", shape = loom.shape.box(0.1, 0.1, 0.1), position = {0, 0, 1}, mass = 2 }
  b:apply_force({0, 0, BUILD}, {from = 0})
end
function scene.on_step(world, t)
  local b = world:body "box"
  if t >= 0.2 and t < 0.205 then b:apply_force({4, 0, 0}, {from = t}) end -- once, at t = 0.2
  local f = io.open(OUT, "a")
  f:write(("%.9f %.12f %.12f\n"):format(world.time, b.velocity.x, b.velocity.z))
  f:close()
end
return scene
-- VERSION
]]

  it("carries a force added at run time, keeps the build's, and takes an edited build force", function()
    local d = U.tmpdir()
    local scene, out, log = d .. "/scene.lua", d .. "/v.txt", d .. "/log.txt"
    local function version(build, tag)
      return (FORCES:gsub("BUILD", tostring(build)):gsub("OUT", ("%q"):format(out)):gsub("VERSION", tag))
    end
    U.write(scene, version(1, "a"))
    U.write(d .. "/b.lua", version(3, "b"))
    local res = U.sh(table.concat({
      ("%q run %q --headless --watch --time 2.5 > %q 2>&1 &"):format(U.loom, scene, log),
      "pid=$!", "sleep 1.2",
      ("cp %q %q && mv %q %q"):format(d .. "/b.lua", scene .. ".tmp", scene .. ".tmp", scene),
      "wait $pid", "echo status $?",
    }, "\n"))
    local logtext = U.read(log) or ""
    assert.truthy(res:find("status 0", 1, true), res .. logtext)
    local at = tonumber(logtext:match("reloaded [^\n]- at t = ([%d%.]+) s"))
    assert.truthy(at, logtext)
    assert.truthy(logtext:find("1 rigid force carried", 1, true), logtext)
    local rows = {}
    for t, vx, vz in (U.read(out) or ""):gmatch("(%S+) (%S+) (%S+)\n") do
      rows[#rows + 1] = {t = tonumber(t), vx = tonumber(vx), vz = tonumber(vz)}
    end
    assert.is_true(#rows > 200)
    -- x: 4 N on 2 kg from t = 0.2 on, before and after the reload (2 m/s^2)
    local last = rows[#rows]
    assert.near(last.t, 2.5, 1e-6)
    assert.near(2 * (last.t - 0.2), last.vx, 0.03)
    -- z: the build's 1 N (0.5 m/s^2) until the reload, then version b's 3 N (1.5 m/s^2)
    assert.near(0.5 * at + 1.5 * (last.t - at), last.vz, 0.03)
  end)
end)

describe("hot reload of a scene that pins a vertex the old one left free", function()
  it("holds the newly pinned vertex still and keeps the velocity of a vertex pinned in both", function()
    local loom = require "loom"
    local function make(extra)
      local W = loom.world { dt = 1 / 100 }
      local c = W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4}, center = {0, 0, 1} },
                          model = "baraff_witkin" }
      c:pin({0}):follow(function(t) return 0.2 * t, 0, 0 end)
      if extra then c:pin {4} end
      return W, c
    end
    local old, oc = make(false)
    old:step(10)
    local free_v = oc.v[4].z
    assert.is_true(free_v < -0.01) -- vertex 4 falls in the old world
    local new, nc = make(true)
    assert.is_true(new:adopt(old:address()) > 0)
    assert.equal(0, nc.v[4].x)
    assert.equal(0, nc.v[4].y)
    assert.equal(0, nc.v[4].z)
    assert.equal(oc.v[0].x, nc.v[0].x) -- pinned in both: its pin's velocity, 0.2 m/s along x
    assert.near(0.2, nc.v[0].x, 1e-9)
  end)
end)

describe("hot reload of a scene that puts an obstacle where the cloth is", function()
  it("looks for what the new obstacle crosses, as for a new body", function()
    local loom = require "loom"
    local function make(with_box)
      local W = loom.world { dt = 1 / 100, gravity = {0, 0, 0} }
      W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {8, 8}, center = {0, 0, 1} }, model = "baraff_witkin" }
      if with_box then
        W:rigid { name = "box", shape = loom.shape.mesh(loom.mesh.box { size = {0.4, 0.4, 0.4} }), position = {0, 0, 1},
                  static = true }
      end
      return W
    end
    local old = make(false)
    old:step(5)
    local same = make(false)
    same:adopt(old:address())
    assert.equal(old:hash(), same:hash()) -- nothing changed: the state is the old one
    local new = make(true)
    new:adopt(old:address())
    new:step()
    assert.is_true(new:stats().obstacle_crossings > 0) -- the cloth lies across the new box: said
  end)
end)

describe("hot reload of a cloth whose triangles changed", function()
  it("keeps the new build's pins: a body that is not carried keeps its groups' rest positions", function()
    local loom = require "loom"
    local function make(x0, tris)
      local W = loom.world { dt = 1 / 100, gravity = {0, 0, 0} }
      local m = loom.mesh.from_arrays({{x0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}, tris)
      local c = W:cloth { name = "c", mesh = m, model = "baraff_witkin" }
      c:pin {0}
      return W
    end
    local old = make(0, {{0, 1, 2}, {0, 2, 3}})
    for _ = 1, 5 do old:step() end
    -- the same name and vertex count, other triangles: the cloth is built afresh, its pin where
    -- the new file puts vertex 0
    local new = make(0.5, {{0, 1, 3}, {1, 2, 3}})
    assert.equal(0, new:adopt(old:address()))
    new:step()
    local x = new:body("c").x[0]
    assert.equal(0.5, x.x)
    assert.equal(0, x.y)
    assert.equal(1, x.z)
  end)
end)
