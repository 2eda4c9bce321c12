-- What a headless run writes and how it fails: output directories made without a shell and checked
-- before the run, frame 0 and the first stats row at t = 0, plots fed every step, PLY meshes with
-- velocities, vertex tracks, --param hints, and the exit status of a --watch run that was fixed.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"
local C = loom.C

local SCENE = [[
local loom = require "loom"
local scene = loom.scene { title = "t", params = { push = 1, cells = 6 } }
function scene.build(world, p)
  world:cloth { name = "c", mesh = loom.mesh.grid { size = {0.4, 0.4}, cells = {p.cells, p.cells}, center = {0, 0, 1} } }
end
scene.forces = {
  push = function(world)
    local c = world:body "c"
    for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + scene.params.push * c.m[i] end
  end,
}
PLOT
return scene
]]

local function scene_file(dir, name, plot)
  local p = dir .. "/" .. name
  U.write(p, (SCENE:gsub("PLOT", plot or "")))
  return p
end

local function lines(s)
  local n = 0
  for _ in s:gmatch("[^\n]+") do n = n + 1 end
  return n
end

-- the values of a binary little-endian PLY written by --export --format ply
local function read_ply(path)
  local data = assert(U.read(path), "missing " .. path)
  local header, body = data:match("^(.-end_header\n)(.*)$")
  local nv = tonumber(header:match("element vertex (%d+)"))
  local nf = tonumber(header:match("element face (%d+)"))
  assert.truthy(header:find("property double vx", 1, true), header)
  local ffi = require "ffi"
  local v = ffi.new("double[?]", 6 * nv)
  ffi.copy(v, body, 48 * nv)
  assert.equal(48 * nv + 13 * nf, #body)
  return v, nv, nf
end

describe("output directories", function()
  local d = U.tmpdir()
  U.write(d .. "/afile", "x")

  for _, opt in ipairs {"--frames %s/afile/frames", "--export %s/afile/meshes", "--stats %s/afile/s.csv",
                        "--screenshot %s/afile/shot.png"} do
    local flag = opt:match("^(%S+)")
    it(flag .. " into a directory that cannot be made stops at once with one message and status 2", function()
      local arg = opt:format(d)
      local t0 = loom.clock()
      local out, code = U.loom_run(("run scenes/hello_cloth.lua --headless --time 2 --size 64x64 %s"):format(arg))
      assert.equal(2, code, out)
      assert.less(loom.clock() - t0, 1.5) -- it did not run the 2 s first
      assert.equal(1, lines(out), out)
      assert.truthy(out:find(flag .. " ", 1, true), out)
      assert.truthy(out:find(d .. "/afile is not a directory", 1, true), out)
    end)
  end

  it("a frames directory that disappears during the run is reported once", function()
    local f = d .. "/vanishing"
    local out = U.sh(table.concat({
      ("%q run scenes/hello_cloth.lua --headless --realtime --time 1.2 --every 6 --size 64x64 --quiet --frames %q > %q 2>&1 &"):format(U.loom, f, d .. "/log.txt"),
      "pid=$!", "sleep 0.5", ("rm -rf %q"):format(f), "wait $pid", "echo status $?",
    }, "\n"))
    local log = U.read(d .. "/log.txt") or ""
    assert.truthy(out:find("status 1", 1, true), out .. log)
    local n = 0
    for _ in log:gmatch("%-%-frames:") do n = n + 1 end
    assert.equal(1, n, log)
    assert.truthy(log:find("no more frames are written", 1, true), log)
  end)

  it("creates nested directories without a shell", function()
    -- PATH leads nowhere: a `mkdir -p` through the shell would fail
    local out, code = U.sh(("env PATH=/nonexistent %q run scenes/hello_cloth.lua --headless --steps 2 --every 1 --size 64x64 --quiet --frames %q --export %q --stats %q"):format(
      U.loom, d .. "/a/b/frames", d .. "/c//d/meshes/", d .. "/e/f/s.csv"))
    assert.equal(0, code, out)
    assert.truthy(U.read(d .. "/a/b/frames/frame_00002.png"), out)
    assert.truthy(U.read(d .. "/c/d/meshes/cloth_00002.obj"), out)
    assert.equal(3, #U.csv(d .. "/e/f/s.csv"))
  end)
end)

describe("frame 0", function()
  it("is the initial state, whatever --every is; the stats start at t = 0", function()
    local d = U.tmpdir()
    local out, code = U.loom_run(("run scenes/hello_cloth.lua --headless --steps 40 --every 20 --size 160x100 --quiet --frames %q --export %q --stats %q"):format(
      d .. "/f20", d .. "/m20", d .. "/s.csv"))
    assert.equal(0, code, out)
    out, code = U.loom_run(("run scenes/hello_cloth.lua --headless --steps 3 --every 1 --size 160x100 --quiet --frames %q"):format(d .. "/f1"))
    assert.equal(0, code, out)
    assert.equal(U.read(d .. "/f1/frame_00000.png"), U.read(d .. "/f20/frame_00000.png"))
    assert.not_equal(U.read(d .. "/f1/frame_00001.png"), U.read(d .. "/f20/frame_00001.png"))
    local initial = loom.load_scene("scenes/hello_cloth.lua"):instantiate():body "cloth"
    local m0 = loom.mesh.load(d .. "/m20/cloth_00000.obj")
    local v = m0:vertices()
    for i = 0, initial.n - 1 do
      assert.equal(initial.x[i].z, v[i].z)
    end
    assert.truthy(U.read(d .. "/m20/cloth_00002.obj"), "frame 2 is step 40")
    assert.is_nil(U.read(d .. "/m20/cloth_00003.obj"))
    local rows = U.csv(d .. "/s.csv")
    assert.equal(41, #rows)
    assert.equal(0, rows[1].step)
    assert.equal(0, rows[1].time)
    assert.equal(0, rows[1].kinetic)
  end)

  it("ui.plot in headless frames plots every step's value", function()
    local d = U.tmpdir()
    -- a ramp: the plot line's width is proportional to the number of values it holds
    local p = scene_file(d, "plot.lua", "function scene.ui(ui, world) ui.plot('t', world.time, {min = 0, max = 1}) end")
    local out, code = U.loom_run(("run %q --headless --steps 48 --every 24 --size 400x200 --quiet --frames %q"):format(p, d .. "/f"))
    assert.equal(0, code, out)
    local c = C.loom_canvas_read_png(d .. "/f/frame_00002.png")
    assert.truthy(c ~= nil)
    local w, h, px = C.loom_canvas_width(c), C.loom_canvas_height(c), C.loom_canvas_pixels(c)
    local xmin, xmax = math.huge, -1
    for y = 0, h - 1 do
      for x = 0, w - 1 do
        local k = 4 * (y * w + x)
        -- the plot colour 0x7FC8F8
        if math.abs(px[k] - 0x7F) < 30 and math.abs(px[k + 1] - 0xC8) < 30 and math.abs(px[k + 2] - 0xF8) < 30 then
          xmin, xmax = math.min(xmin, x), math.max(xmax, x)
        end
      end
    end
    C.loom_canvas_destroy(c)
    -- 49 values (steps 0 … 48) of 240 across the 284 px wide plot: about 57 px; the drawn frames
    -- alone (3 values) would give 2 px
    assert.less(50, xmax - xmin)
    assert.less(xmax - xmin, 64)
  end)
end)

describe("--export --format ply and --track", function()
  it("write velocities per vertex and one track CSV per cloth, consistent with each other", function()
    local d = U.tmpdir()
    local out, code = U.loom_run(("run scenes/hello_cloth.lua --headless --steps 40 --every 20 --quiet --export %q --format ply --track cloth:0 --track cloth:600 --track cloth:17"):format(d))
    assert.equal(0, code, out)
    assert.is_nil(U.read(d .. "/cloth_00000.obj"))
    local rows = U.csv(d .. "/cloth_track.csv")
    assert.equal(41, #rows)          -- t = 0 and one row per step
    assert.equal(0, rows[1].t)
    local W = loom.load_scene("scenes/hello_cloth.lua"):instantiate()
    local cloth = W:body "cloth"
    assert.equal(cloth.x[600].z, rows[1].z_600)
    assert.equal(0, rows[1].vz_600)
    W:step(40)
    for k, frame in ipairs {0, 2} do
      local v, nv, nf = read_ply(("%s/cloth_%05d.ply"):format(d, frame))
      assert.equal(cloth.n, nv)
      assert.equal(2 * 32 * 32, nf)
      local r = rows[frame * 20 + 1]
      for _, i in ipairs {0, 600, 17} do
        assert.equal(r["x_" .. i], tonumber(("%.9g"):format(v[6 * i])))
        assert.equal(r["vz_" .. i], tonumber(("%.9g"):format(v[6 * i + 5])))
      end
      if k == 2 then
        -- the same state as an in-process run, and velocities that match the motion
        for _, i in ipairs {0, 600, 17} do
          assert.near(v[6 * i + 2], cloth.x[i].z, 1e-12)
          assert.near(v[6 * i + 5], cloth.v[i].z, 1e-12)
        end
        local vz = (rows[41].z_600 - rows[40].z_600) / W.dt
        assert.near(vz, rows[41].vz_600, 0.02 * math.abs(rows[41].vz_600) + 1e-6)
        assert.less(rows[41].vz_600, -0.1) -- it is falling
      end
    end
  end)

  it("refuses tracks that do not fit the scene with status 2 and a hint", function()
    local out, code = U.loom_run("run scenes/hello_cloth.lua --headless --steps 1 --export /tmp --track clth:3")
    assert.equal(2, code, out)
    assert.truthy(out:find("no body 'clth' (did you mean 'cloth'?", 1, true), out)
    out, code = U.loom_run("run scenes/hello_cloth.lua --headless --steps 1 --export /tmp --track cloth:5000")
    assert.equal(2, code, out)
    assert.truthy(out:find("vertex 5000 out of range (cloth 'cloth' has 1089 vertices", 1, true), out)
    out, code = U.loom_run("run scenes/hello_cloth.lua --headless --steps 1 --track cloth:3")
    assert.equal(2, code, out)
    assert.truthy(out:find("needs --export DIR", 1, true), out)
    out, code = U.loom_run("run scenes/hello_cloth.lua --headless --steps 1 --export /tmp --format stl")
    assert.equal(2, code, out)
  end)
end)

describe("--param", function()
  local d = U.tmpdir()
  local p = scene_file(d, "params.lua")

  it("suggests the declared name for a typo", function()
    local out, code = U.loom_run(("run %q --headless --steps 1 --param pusj=3"):format(p))
    assert.equal(1, code, out)
    assert.truthy(out:find("unknown parameter 'pusj' (did you mean 'push'?", 1, true), out)
    assert.truthy(out:find("cells, push", 1, true), out)
  end)

  it("echoes the value when build refuses it", function()
    local out, code = U.loom_run(("run %q --headless --steps 1 --param cells=2.5"):format(p))
    assert.equal(1, code, out)
    assert.truthy(out:find("cells=2.5", 1, true), out)
    assert.truthy(out:find(p .. ":4:", 1, true), out)
  end)
end)

describe("--watch exit status", function()
  it("is documented in loom --help with the new options", function()
    local out, code = U.loom_run("--help")
    assert.equal(0, code)
    local status = out:match("exit status:\n(.*)$")
    assert.truthy(status, out)
    assert.truthy(status:find("--watch", 1, true), status)
    assert.truthy(status:find("state at the end", 1, true), status)
    for _, w in ipairs {"--format obj|ply", "--track BODY:INDEX", "loom new NAME"} do
      assert.truthy(out:find(w, 1, true), "help lacks " .. w)
    end
  end)

  it("is 0 when a file broken during the run was fixed before the end", function()
    local d = U.tmpdir()
    local p = scene_file(d, "w.lua")
    U.write(d .. "/broken.lua", (SCENE:gsub("PLOT", "")):gsub("local c = world:body", "local c = = world:body"))
    U.write(d .. "/fixed.lua", (SCENE:gsub("PLOT", "")):gsub("push = 1", "push = 2"))
    local swap = function(name) return ("cp %q %q && mv %q %q"):format(d .. "/" .. name, p .. ".tmp", p .. ".tmp", p) end
    local out = U.sh(table.concat({
      ("%q run %q --headless --watch --time 2 > %q 2>&1 &"):format(U.loom, p, d .. "/log.txt"),
      "pid=$!", "sleep 0.6", swap("broken.lua"), "sleep 0.6", swap("fixed.lua"),
      "wait $pid", "echo status $?",
    }, "\n"))
    local log = U.read(d .. "/log.txt") or ""
    assert.truthy(log:find(p .. ":8:", 1, true), "the syntax error was reported: " .. log)
    assert.truthy(log:find("reloaded", 1, true), log)
    assert.truthy(out:find("status 0", 1, true), out .. log)
  end)
end)
