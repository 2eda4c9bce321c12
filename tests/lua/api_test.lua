-- The Lua API: FFI declarations in sync with the header and the C layout, argument errors that
-- name the parameter and point at the caller's file and line, trajectories, checkpoints.
package.path = "tests/lua/support/?.lua;" .. package.path
local ffi = require "ffi"
local loom = require "loom"
local U = require "util"
local C = loom.C
local HERE = "api_test.lua"

describe("FFI declarations", function()
  it("cdef.lua is what scripts/gen_cdef.lua makes from src/loom.h", function()
    local out, code = U.sh("luajit scripts/gen_cdef.lua --check src/loom.h lua/loom/cdef.lua")
    assert.equal(0, code, out)
  end)

  it("every struct has the size and field offsets the C compiler gave it", function()
    local cdef = require "loom.cdef"
    local checked = 0
    for name, body in cdef:gmatch("typedef struct ([%w_]+) {(.-)} [%w_]+;") do
      assert.equal(C.loom_abi_sizeof(name), ffi.sizeof(name), "sizeof " .. name)
      for decl in body:gmatch("([^;]+);") do
        -- "double x, y, z" / "const char *name" / "loom_vec3 gravity": drop qualifiers and the type
        local names = decl:gsub("%f[%w_]const%f[^%w_]", ""):gsub("^%s*[%w_]+[%s%*]+", "")
        for field in names:gmatch("[%w_]+") do
          local off = C.loom_abi_offsetof(name, field)
          assert.equal(off, ffi.offsetof(name, field), name .. "." .. field)
          checked = checked + 1
        end
      end
    end
    assert.is_true(checked >= 56, "checked only " .. checked .. " fields")
  end)
end)

local function world_with_cloth()
  local W = loom.world {}
  local c = W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4} } }
  return W, c
end

-- Asserts that fn fails with a message that contains `text` and points at this file, line `line`.
local function fails_here(line, text, fn)
  local err = assert.error(fn, text)
  assert.truthy(tostring(err):find(HERE .. ":" .. line .. ":", 1, true),
    ("message %q should point at %s:%d"):format(tostring(err), HERE, line))
end

describe("argument errors", function()
  it("name the field and point at the caller for world:cloth", function()
    local W = loom.world {}
    local g = loom.mesh.grid { size = {1, 1}, cells = {2, 2} }
    fails_here(U.line(), "'stretch' must be a number >= 0, got -3", function() W:cloth { name = "a", mesh = g, stretch = -3 } end)
    fails_here(U.line(), "'density' must be a positive number", function() W:cloth { name = "a", mesh = g, density = 0 } end)
    fails_here(U.line(), "'mesh' is required", function() W:cloth { name = "a" } end)
    fails_here(U.line(), "did you mean 'stretch'", function() W:cloth { name = "a", mesh = g, strech = 5 } end)
    fails_here(U.line(), "'model' must be one of", function() W:cloth { name = "a", mesh = g, model = "fem" } end)
    fails_here(U.line(), "'mesh' must be a mesh", function() W:cloth { name = "a", mesh = {} } end)
    fails_here(U.line(), "'substeps' must be an integer", function() W:cloth { name = "a", mesh = g, substeps = 2.5 } end)
    fails_here(U.line(), "finite number", function() W:cloth { name = "a", mesh = g, friction = 0 / 0 } end)
    fails_here(U.line(), "for model 'springs_pbd'", function() W:cloth { name = "a", mesh = g, model = "springs_pbd", stretch = 500 } end)
    fails_here(U.line(), "'implicit' needs forces", function() W:cloth { name = "a", mesh = g, model = "springs_pbd", integrator = "implicit" } end)
    fails_here(U.line(), "'cg_tolerance' must be", function() W:cloth { name = "a", mesh = g, cg_tolerance = 0 } end)
    fails_here(U.line(), "'cg_iterations' must be an integer", function() W:cloth { name = "a", mesh = g, cg_iterations = 0.5 } end)
    W:cloth { name = "a", mesh = g }
    fails_here(U.line(), "already exists", function() W:cloth { name = "a", mesh = g } end)
  end)

  it("name the field for world:rigid and shapes", function()
    local W = loom.world {}
    fails_here(U.line(), "'radius' must be a positive number", function() loom.shape.sphere(-1) end)
    fails_here(U.line(), "'shape' must be a loom.shape", function() W:rigid { name = "r", shape = "ball", static = true } end)
    fails_here(U.line(), "'position' must be a {x, y, z}", function() W:rigid { name = "r", shape = loom.shape.sphere(1), position = {1, 2}, static = true } end)
    fails_here(U.line(), "'velocity' applies to dynamic bodies", function() W:rigid { name = "r", shape = loom.shape.sphere(1), static = true, velocity = {1, 0, 0} } end)
    fails_here(U.line(), "'integrator' must be", function() W:rigid { name = "r", shape = loom.shape.sphere(1), integrator = "verlet" } end)
    fails_here(U.line(), "give 'mass' or 'density'", function() W:rigid { name = "r", shape = loom.shape.sphere(1), mass = 1, density = 2 } end)
    fails_here(U.line(), "both 'static' and 'kinematic'", function() W:rigid { name = "r", shape = loom.shape.sphere(1), static = true, kinematic = true } end)
    fails_here(U.line(), "'restitution' must be a number <= 1", function() W:rigid { name = "r", shape = loom.shape.sphere(1), static = true, restitution = 2 } end)
  end)

  it("cover meshes, bodies, steps and scenes", function()
    local W, c = world_with_cloth()
    fails_here(U.line(), "'cells' must be {nx, ny}", function() loom.mesh.grid { cells = {0, 3} } end)
    fails_here(U.line(), "unknown field", function() loom.mesh.grid { sise = {1, 1} } end)
    fails_here(U.line(), "bad argument #1 to 'vertex_near'", function() c:vertex_near "corner" end)
    fails_here(U.line(), "vertices are 0..24", function() c:pin { 25 } end)
    fails_here(U.line(), "whole number of steps", function() W:step(-1) end)
    fails_here(U.line(), "no body named 'cloth'", function() W:body "cloth" end)
    fails_here(U.line(), "unknown parameter 'stiffness'", function() c:set("stiffness", 3) end)
    fails_here(U.line(), "'stretch' must be a number >= 0", function() c:set("stretch", -1) end)
    fails_here(U.line(), "times must increase", function() loom.trajectory.keys { {1, {0, 0, 0}}, {0.5, {1, 1, 1}} } end)
    fails_here(U.line(), "'to' is required", function() loom.trajectory.min_jerk { t0 = 0, t1 = 1 } end)
    fails_here(U.line(), "'dt' must be a number <= 1", function() loom.scene { dt = 2 } end)
    fails_here(U.line(), "bad argument #1 to 'follow'", function() c:pin { 0 }:follow(42) end)
  end)

  it("report a bad mesh file with its name and problem", function()
    local err = assert.error(function() loom.mesh.load("tests/data/truncated.stl") end, "loom.mesh.load: tests/data/truncated.stl")
    assert.truthy(tostring(err):find("truncated binary STL", 1, true), tostring(err))
    assert.error(function() loom.mesh.load("tests/data/does_not_exist.obj") end, "does_not_exist.obj")
  end)
end)

describe("bodies", function()
  it("expose the kernel arrays without copies", function()
    local W, c = world_with_cloth()
    assert.equal(25, c.n)
    c.x[3].z = 0.25
    assert.equal(0.25, ffi.cast("loom_vec3*", C.loom_body_x(W:ptr(), c.handle))[3].z)
    assert.is_true(c.m[0] > 0)
  end)

  it("pin groups hold, follow, release and hold again where they are", function()
    local W = loom.world {}
    local c = W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {6, 6}, center = {0, 0, 1} } }
    local v = c:vertex_near {-0.5, -0.5, 1}
    local g = c:pin { v }
    assert.is_true(c:pinned(v))
    assert.is_true(c.m[v] > 0) -- a pin is a constraint: the mass stays
    g:follow(loom.trajectory.linear { to = {0, 0, 0.5}, t0 = 0, t1 = 1 })
    W:run(0.5)
    assert.near(c.x[v].z, 1.25, 1e-12)
    W:run(0.5)
    assert.near(c.x[v].z, 1.5, 1e-12)
    g:stop():release()
    assert.is_false(c:pinned(v))
    W:run(0.2)
    local z = c.x[v].z
    assert.less(z, 1.5)
    g:hold()
    W:run(0.2)
    assert.near(c.x[v].z, z, 1e-12)
  end)

  it("velocity blocks follow document 000's timeline", function()
    local traj = loom.trajectory.velocity_blocks {
      {0, {0, 0, 0}}, {1, {0, 0, 0.1}}, {2, false}, {2.5, {-0.1, 0.1, 0}},
    }
    local _, _, z0 = traj(1.5)
    assert.near(z0, 0.05, 1e-15)
    assert.is_nil(traj(2.2))
    local x, y, z = traj(3.0)
    assert.near(x, -0.05, 1e-15); assert.near(y, 0.05, 1e-15); assert.near(z, 0.1, 1e-15)
  end)

  it("minimum-jerk trajectories start and end at rest", function()
    local traj = loom.trajectory.min_jerk { to = {0, 0, 1}, t0 = 1, t1 = 3 }
    local _, _, z0 = traj(1)
    local _, _, zm = traj(2)
    local _, _, z1 = traj(3)
    assert.equal(0, z0); assert.near(zm, 0.5, 1e-15); assert.equal(1, z1)
    local h = 1e-6
    local _, _, a = traj(1 + h)
    local _, _, b = traj(3 - h)
    assert.less(a / h, 1e-9) -- zero velocity at both ends
    assert.less((1 - b) / h, 1e-9)
  end)

  it("callback errors are reported once and the callback is disabled", function()
    local W = world_with_cloth()
    local calls = 0
    W:force("broken", function() calls = calls + 1 error("boom") end)
    W:step(3)
    assert.equal(1, calls)
    assert.equal(1, #W:errors())
    assert.truthy(W:errors()[1]:find("boom", 1, true))
    assert.truthy(W:errors()[1]:find("force field 'broken'", 1, true))
  end)
end)

describe("checkpoints", function()
  it("snapshot and restore continue bit-identically", function()
    local W = loom.load_scene("scenes/lift_and_wave.lua"):instantiate()
    W:run(0.6)
    local s = W:snapshot()
    W:run(0.3)
    local a = W:hash()
    W:restore(s)
    W:run(0.3)
    assert.equal(a, W:hash())
  end)

  it("save and world_load round trip a scene with its parameters", function()
    local d = U.tmpdir()
    local W = loom.load_scene("scenes/hello_cloth.lua"):instantiate { wind = 2.5 }
    W:run(0.4)
    W:save(d .. "/hc.loom")
    W:run(0.2)
    local h = W:hash()
    local V = loom.world_load(d .. "/hc.loom")
    assert.equal(2.5, rawget(V, "_scene").params.wind)
    V:run(0.2)
    assert.equal(h, V:hash())
    U.write(d .. "/bad.loom", "LOOMSAVE 1\nscene scenes/hello_cloth.lua\nparams 0\nstate 99\nxx")
    assert.error(function() loom.world_load(d .. "/bad.loom") end, "not a Loom checkpoint")
  end)
end)

describe("world queries", function()
  -- two cloths 5 m apart, falling; the one at x = 0 is given a NaN and frozen, the other is made alone
  local function falling(both)
    local W = loom.world {dt = 1 / 60}
    local a = both and W:cloth { name = "a", model = "baraff_witkin", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4} } }
    local m = loom.mesh.grid { size = {1, 1}, cells = {4, 4} }
    m:transform { translate = {5, 0, 1} }
    W:cloth { name = "b", model = "baraff_witkin", mesh = m, fixed = {0} }
    return W, a
  end

  it("energy() sums the bodies that are not frozen", function()
    local W, a = falling(true)
    a:raw("x")[7].z = 0 / 0
    W:step(10)
    assert.is_true(a.frozen)
    local alone = falling(false)
    alone:step(10)
    local e, e1 = W:energy(), alone:energy()
    assert.is_true(e.total == e.total, "energy is NaN")
    for _, k in ipairs {"kinetic", "potential", "elastic", "total"} do
      assert.near(e[k], e1[k], 1e-12 * math.max(1, math.abs(e1[k])), k)
    end
    assert.less(0, e1.kinetic)                     -- the other cloth moves
  end)

  it("stats() counts interpenetrations when the field is read: pairs lists it only after that", function()
    local W = falling(true)
    W:step(1)
    local st = W:stats()
    local function listed() for k in pairs(st) do if k == "interpenetrations" then return true end end return false end
    assert.is_false(listed())
    assert.equal(W:interpenetrations(), st.interpenetrations)
    assert.is_true(listed())
  end)
end)
