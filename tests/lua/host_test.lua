-- The loom command line: help, options, scripts with errors, runtime errors in callbacks, the
-- watchdog, headless outputs, the no-display fallback, determinism across processes.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"

local GOOD = [[
local loom = require "loom"
local scene = loom.scene { title = "t", params = { push = 1 } }
function scene.build(world)
  world:cloth { name = "c", mesh = loom.mesh.grid { size = {0.4, 0.4}, cells = {6, 6}, center = {0, 0, 1} } }
end
scene.forces = {
  push = function(world)
    local c = world:body "c"
    for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + scene.params.push * c.m[i] end
  end,
}
return scene
]]

local function scene_file(dir, text, name)
  local p = dir .. "/" .. (name or "scene.lua")
  U.write(p, text)
  return p
end

describe("command line", function()
  it("prints help and version", function()
    local out, code = U.loom_run("--help")
    assert.equal(0, code)
    for _, w in ipairs {"loom run", "loom test", "loom exec", "loom bench", "--headless", "--param"} do
      assert.truthy(out:find(w, 1, true), "help lacks " .. w)
    end
    out, code = U.loom_run("--version")
    assert.equal(0, code)
    assert.truthy(out:match("^loom %d+%.%d+%.%d+"), out)
  end)

  it("rejects bad options with status 2 and names them", function()
    local out, code = U.loom_run("run scenes/hello_cloth.lua --frobnicate")
    assert.equal(2, code)
    assert.truthy(out:find("unknown option '--frobnicate'", 1, true), out)
    out, code = U.loom_run("run scenes/hello_cloth.lua --time -1")
    assert.equal(2, code)
    assert.truthy(out:find("--time", 1, true), out)
    out, code = U.loom_run("run scenes/hello_cloth.lua --param nothing")
    assert.equal(2, code, out)
  end)

  it("lists the benchmark cases with what each measures, and runs none", function()
    local out, code = U.loom_run("bench --list")
    assert.equal(0, code, out)
    for _, name in ipairs {"cloth_implicit_64", "crumple_64"} do
      assert.truthy(("\n" .. out):find("\n" .. name .. " +%S"), "--list lacks " .. name .. ": " .. out)
    end
    assert.is_nil(out:find("machine:", 1, true), out) -- (what a run prints first)
    out, code = U.loom_run("bench --list crumple")
    assert.equal(0, code, out)
    assert.truthy(out:find("^crumple_32 "), out)
    assert.is_nil(out:find("cloth_implicit", 1, true), out)
    out, code = U.loom_run("bench --help")
    assert.equal(0, code, out)
    assert.truthy(out:find("--list", 1, true), out)
    out, code = U.loom_run("bench --frobnicate")
    assert.equal(2, code, out)
    assert.truthy(out:find("unknown option --frobnicate", 1, true), out)
  end)

  it("names a missing scene file", function()
    local out, code = U.loom_run("run no/such/scene.lua --headless")
    assert.equal(1, code)
    assert.truthy(out:find("no/such/scene.lua", 1, true), out)
  end)
end)

describe("scripts with errors", function()
  local dir = U.tmpdir()

  it("a syntax error gives file:line on one line and status 1", function()
    local p = scene_file(dir, "local loom = require 'loom'\nlocal scene = loom.scene {\n  title = 'x'\n  dt = 1/60,\n}\nreturn scene\n", "syntax.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find(p .. ":4:", 1, true), out)
    local lines = 0
    for _ in out:gmatch("[^\n]+") do lines = lines + 1 end
    assert.equal(1, lines, out)
  end)

  it("an error in build names the scene's line", function()
    local p = scene_file(dir, GOOD:gsub('world:cloth {', 'local c = nil; c.x = 1; world:cloth {'), "build.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find(p .. ":4: attempt to index", 1, true), out)
  end)

  it("a runtime error in a force field is reported, the run goes on, status is 1", function()
    local p = scene_file(dir, GOOD:gsub("local c = world:body \"c\"", "local c = world:body \"c\"; if world.time > 0.05 then local q = nil; q.boom = 1 end"), "field.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.2"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find(p .. ":8: attempt to index", 1, true), out)
    assert.truthy(out:find("force field 'push'", 1, true), out)
    assert.truthy(out:find("48 steps", 1, true), "the run should finish: " .. out)
  end)

  it("a bad argument in build points at the scene line", function()
    local p = scene_file(dir, GOOD:gsub("center = {0, 0, 1} }", "center = {0, 0, 1} }, stretch = -3"), "arg.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find(p .. ":4: bad argument to 'cloth'", 1, true), out)
  end)

  it("a file that returns no scene says so", function()
    local p = scene_file(dir, "return 42\n", "noscene.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find("must return the table made by loom.scene", 1, true), out)
  end)

  it("unknown and mistyped --param values are named", function()
    local p = scene_file(dir, GOOD, "good.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.1 --param pull=3"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find("unknown parameter 'pull'", 1, true), out)
    out, code = U.loom_run(("run %q --headless --time 0.1 --param push=strong"):format(p))
    assert.equal(1, code)
    assert.truthy(out:find("parameter 'push' must be a number", 1, true), out)
    out, code = U.loom_run(("run %q --headless --time 0.1 --param push=3 --quiet"):format(p))
    assert.equal(0, code, out)
  end)
end)

describe("diverging simulations", function()
  it("freeze the body with a message naming it, the time and the vertex; the run ends with status 1", function()
    local dir = U.tmpdir()
    local p = scene_file(dir, [[
local loom = require "loom"
local scene = loom.scene { title = "stiff" }
function scene.build(world)
  local c = world:cloth { name = "stiff", mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {8, 8} }, stretch = 1e7, substeps = 1 }
  c:pin { 0 }
  world:cloth { name = "calm", mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {4, 4}, center = {2, 0, 0} } }
end
scene.on_step = function(world, t) if t > 0.19 then io.write(("calm z %.4f\n"):format(world:body("calm").x[0].z)) end end
return scene
]], "stiff.lua")
    local out, code = U.loom_run(("run %q --headless --time 0.2"):format(p))
    assert.equal(1, code, out)
    assert.truthy(out:find("below the stable estimate", 1, true), out)
    -- the message names the cause it can see: fewer substeps than the stability estimate, which asks for
    -- more than the 4096 a step can take (so it advises the implicit integrator, not more substeps)
    assert.truthy(out:match("cloth 'stiff' diverged at t = [%d%.]+ s %([^)]* at vertex %d+%): [^\n]*is above the stable [^\n]*integrator = 'implicit'"), out)
    local z = tonumber(out:match("calm z (%-?[%d%.]+)"))
    assert.less(z, -0.15) -- the other cloth kept falling
  end)
end)

describe("watchdog", function()
  local dir = U.tmpdir()

  it("stops an interpreted endless force field and keeps running", function()
    local p = scene_file(dir, GOOD:gsub("local c = world:body \"c\"", "local c = world:body \"c\"; if world.time > 0.02 then jit.off(); local k = 0; while true do k = k + 1 end end"), "loop_interp.lua")
    local t0 = loom.clock()
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.less(loom.clock() - t0, 15)
    assert.equal(1, code, out)
    assert.truthy(out:find("force field 'push' did not return within 3 s", 1, true), out)
    assert.truthy(out:find("24 steps", 1, true), "the run should finish: " .. out)
  end)

  it("ends a run stuck in a compiled loop with status 3 and a message", function()
    local p = scene_file(dir, GOOD:gsub("local c = world:body \"c\"", "local c = world:body \"c\"; if world.time > 0.02 then local k = 0; while true do k = k + 1 end end"), "loop_jit.lua")
    local t0 = loom.clock()
    local out, code = U.loom_run(("run %q --headless --time 0.1"):format(p))
    assert.less(loom.clock() - t0, 15)
    assert.equal(3, code, out)
    assert.truthy(out:find("force field 'push'", 1, true), out)
  end)
end)

describe("headless runs", function()
  it("write frames, meshes and statistics", function()
    local d = U.tmpdir()
    local out, code = U.loom_run(("run scenes/hello_cloth.lua --headless --time 0.25 --every 20 --frames %q --export %q --stats %q --size 320x200 --quiet"):format(
      d .. "/frames", d .. "/meshes", d .. "/stats.csv"))
    assert.equal(0, code, out)
    assert.truthy(U.read(d .. "/frames/frame_00003.png"), "frames missing") -- steps 0, 20, 40, 60
    local png = require("loom").C.loom_canvas_read_png(d .. "/frames/frame_00000.png")
    assert.truthy(png ~= nil)
    assert.equal(320, loom.C.loom_canvas_width(png))
    loom.C.loom_canvas_destroy(png)
    local m = loom.mesh.load(d .. "/meshes/cloth_00002.obj")
    assert.equal(33 * 33, m.vertex_count)
    local rows = U.csv(d .. "/stats.csv")
    assert.equal(61, #rows) -- the initial state and 60 steps
    assert.equal(0, rows[1].time)
    assert.near(rows[61].time, 0.25, 1e-9)
    assert.less(rows[61].cloth_cz, 1.0) -- it fell
  end)

  it("falls back to headless frames when there is no display, and says so", function()
    local d = U.tmpdir()
    local out, code = U.sh(("cd %q && env -u DISPLAY -u WAYLAND_DISPLAY LOOM_LUA_DIR=%q %q %q --time 0.1 --quiet"):format(
      d, os.getenv("PWD") .. "/lua", U.loom, os.getenv("PWD") .. "/scenes/hello_cloth.lua"))
    assert.equal(0, code, out)
    assert.truthy(out:find("no display available", 1, true), out)
    assert.truthy(U.read(d .. "/out/hello_cloth/frame_00000.png"), "no frames in out/hello_cloth")
  end)

  it("is deterministic across processes", function()
    local d = U.tmpdir()
    local script = d .. "/hash.lua"
    U.write(script, [[
      local loom = require "loom"
      local w = loom.load_scene("scenes/lift_and_wave.lua"):instantiate()
      w:run(0.75)
      io.write(w:hash())
    ]])
    local a = U.loom_run(("exec %q"):format(script))
    local b = U.loom_run(("exec %q"):format(script))
    assert.truthy(a:match("^%x+$"), a)
    assert.equal(a, b)
    local w = loom.load_scene("scenes/lift_and_wave.lua"):instantiate()
    w:run(0.75)
    assert.equal(a, w:hash())
  end)
end)
