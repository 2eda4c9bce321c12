-- Journaled sessions (issue 12): --record writes what changes a run from outside (input, UI, mouse
-- grabs, reloads with each version's source) by step; loom replay runs it again bit for bit.
package.path = "tests/lua/support/?.lua;" .. package.path
local ffi = require "ffi"
local loom = require "loom"
local C = loom.C
local U = require "util"
local replay = require "loom.replay"

local SCENE = [[
local loom = require "loom"
local scene = loom.scene { title = "journal", dt = 1 / 240, params = { wind = 0 },
                           camera = { target = {0, 0, 0.8}, distance = 2, azimuth = 0, elevation = 10 } }
function scene.build(world, p)
  world:cloth { name = "cloth", mesh = loom.mesh.grid { size = {0.6, 0.6}, cells = {10, 10}, center = {0, 0, 1}, plane = "xz" },
                fixed = {110, 120}, stretch = STRETCH }
end
scene.forces = {
  wind = function(world)
    local c = world:body "cloth"
    for i = 0, c.n - 1 do c.f[i].y = c.f[i].y + scene.params.wind * c.m[i] end
  end,
}
function scene.ui(ui, world) ui.slider("wind", scene.params, "wind", 0, 20) end
return scene
]]

local function fresh_app()
  package.loaded["loom.app"] = nil
  local a = require "loom.app"
  package.loaded["loom.app"] = nil
  return a
end

local function world_hash(app)
  local buf = ffi.new("char[17]")
  C.loom_world_hash(ffi.cast("loom_world*", app.world_address()), buf, 17)
  return ffi.string(buf)
end

describe("session journals", function()
  it("replay a session with a slider change, a mouse grab and a hot reload to the same state", function()
    local dir = U.tmpdir()
    local path, journal = dir .. "/cloth.lua", dir .. "/session.journal"
    U.write(path, (SCENE:gsub("STRETCH", "300")))
    local canvas = ffi.gc(C.loom_canvas_create(640, 400), C.loom_canvas_destroy)
    local a1 = fresh_app()
    a1.init { scene = path, mode = "window", canvas = canvas, quiet = true, budget = 10, record = journal }
    for _ = 1, 5 do a1.frame(0.05, {}) end
    -- the wind slider (the panel's first row) dragged to three quarters
    local sy = 10 + 8 + 18 + 2 + 5
    a1.frame(0.02, {{type = "mouse_move", x = 18 + 284 * 0.75, y = sy, dx = 0, dy = 0},
                    {type = "mouse_button", button = 1, down = true, x = 18 + 284 * 0.75, y = sy}})
    a1.frame(0.02, {{type = "mouse_button", button = 1, down = false, x = 18 + 284 * 0.75, y = sy}})
    for _ = 1, 3 do a1.frame(0.05, {}) end
    -- grab a free vertex and pull it
    local wptr = ffi.cast("loom_world*", a1.world_address())
    local h = C.loom_world_find(wptr, "cloth")
    local x = C.loom_body_x(wptr, h)
    local sx, sy2, depth = ffi.new("double[1]"), ffi.new("double[1]"), ffi.new("double[1]")
    assert.equal(1, C.loom_canvas_project(canvas, x + 5, sx, sy2, depth))
    a1.frame(0.02, {{type = "mouse_move", x = sx[0], y = sy2[0], dx = 0, dy = 0},
                    {type = "mouse_button", button = 1, down = true, x = sx[0], y = sy2[0]}})
    for k = 1, 10 do a1.frame(0.02, {{type = "mouse_move", x = sx[0] + 4 * k, y = sy2[0] - 5 * k, dx = 4, dy = -5}}) end
    a1.frame(0.02, {{type = "mouse_button", button = 1, down = false, x = sx[0] + 40, y = sy2[0] - 50}})
    for _ = 1, 3 do a1.frame(0.05, {}) end
    -- a hot reload as the host does it: a new version (softer) takes over the world
    U.replace(path, (SCENE:gsub("STRETCH", "150")))
    local a2 = fresh_app()
    a2.init { scene = path, mode = "window", canvas = canvas, quiet = true, budget = 10, record = journal, carry = a1.export() }
    a2.adopt(a1.world_address())
    a1.close()
    for _ = 1, 6 do a2.frame(0.05, {}) end
    local final = world_hash(a2)
    a2.close()
    -- the journal holds each kind of entry
    local kinds = {}
    for _, e in ipairs(replay.read(journal)) do kinds[e.kind] = (kinds[e.kind] or 0) + 1 end
    assert.equal(2, kinds.source)
    assert.is_true(kinds.params >= 3, "params entries: " .. tostring(kinds.params)) -- start, the slider, the reload
    assert.is_true(kinds.grab >= 3) -- none, held (moving), none
    assert.is_true(kinds.hash >= 2) -- when the first version closed, at the end (and every 240 steps)
    -- the replay ends where the session did
    local W, steps, checked = replay.replay(journal)
    assert.equal(final, W:hash())
    assert.equal(kinds.hash, checked)
    assert.is_true(steps > 100)
    -- and says where it goes astray when the journal is altered
    local text = U.read(journal)
    local p = text:find("\nparams [1-9]")
    assert.not_nil(p, "a params entry after the start")
    local line_end = text:find("\n", p + 1)
    local bad = text:sub(1, p) .. "params " .. text:sub(p + 8, line_end - 1):match("^(%d+)") .. " " ..
      (("x"):rep(0)) .. "7769" .. "6e64" .. "3d6e3a33" .. text:sub(line_end) -- wind=n:3
    U.write(dir .. "/bad.journal", bad)
    assert.error(function() replay.replay(dir .. "/bad.journal") end, "the replay diverged: after")
    -- a scene file edited after the session: refused, saying what differs, unless --recorded
    U.replace(path, (SCENE:gsub("STRETCH", "170")))
    assert.error(function() replay.replay(journal) end, "is not the version this journal recorded: line 6 was")
    local W2 = replay.replay(journal, {recorded = true})
    assert.equal(final, W2:hash())
  end)

  it("replays a hot reload that carries a rigid force added at run time", function()
    local dir = U.tmpdir()
    local path, journal = dir .. "/box.lua", dir .. "/session.journal"
    local BOX = [[
local loom = require "loom"
local scene = loom.scene { title = "box", dt = 1 / 100, gravity = {0, 0, 0} }
function scene.build(world)
  world:rigid { name = "box", shape = loom.shape.box(0.1, 0.1, 0.1), position = {0, 0, 1}, mass = 2 }
end
function scene.on_step(world, t)
  if t >= 0.05 and t < 0.055 then world:body("box"):apply_force({4, 0, 1}, {from = t, to = t + 5}) end
end
return scene
-- VERSION
]]
    U.write(path, (BOX:gsub("VERSION", "a")))
    local canvas = ffi.gc(C.loom_canvas_create(320, 200), C.loom_canvas_destroy)
    local a1 = fresh_app()
    a1.init { scene = path, mode = "window", canvas = canvas, quiet = true, budget = 10, record = journal }
    for _ = 1, 4 do a1.frame(0.05, {}) end
    U.replace(path, (BOX:gsub("VERSION", "b")))
    local a2 = fresh_app()
    a2.init { scene = path, mode = "window", canvas = canvas, quiet = true, budget = 10, record = journal,
              carry = a1.export() }
    a2.adopt(a1.world_address())
    a1.close()
    for _ = 1, 4 do a2.frame(0.05, {}) end
    local wptr = ffi.cast("loom_world*", a2.world_address())
    local v = ffi.new("loom_vec3")
    C.loom_rigid_velocity(wptr, C.loom_world_find(wptr, "box"), v, nil)
    local t = C.loom_world_time(wptr)
    local final = world_hash(a2)
    a2.close()
    assert.is_true(t > 0.3 and t < 1, tostring(t))
    assert.near(2 * (t - 0.05), v.x, 0.03) -- the force acted through the reload
    local W = replay.replay(journal)
    assert.equal(final, W:hash())
  end)

  it("records a headless run that loom replay reproduces, and refuses what is not a journal", function()
    local dir = U.tmpdir()
    local j = dir .. "/run.journal"
    local text, code = U.loom_run(("run scenes/hello_cloth.lua --headless --time 1.1 --param wind=2 --record %q"):format(j))
    assert.equal(0, code, text)
    text, code = U.loom_run(("replay %q --headless --frames %q --every 132 --size 160x120"):format(j, dir .. "/frames"))
    assert.equal(0, code, text)
    assert.matches("264 steps, t = 1.1000 s, final hash %x+ %(2 recorded hashes matched%)", text)
    assert.not_nil(U.read(dir .. "/frames/frame_00002.png"))
    U.write(dir .. "/not.journal", "hello\n")
    text, code = U.loom_run(("replay %q"):format(dir .. "/not.journal"))
    assert.equal(1, code)
    assert.matches("is not a Loom session journal", text)
    U.write(dir .. "/broken.journal", "loom-journal 1\nsource zero 12\n")
    text, code = U.loom_run(("replay %q"):format(dir .. "/broken.journal"))
    assert.equal(1, code)
    assert.matches("broken.journal:2: malformed entry", text)
  end)
end)
