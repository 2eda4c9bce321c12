-- The runtime behind the window (lua/loom/app.lua), driven with synthetic events: pause, single
-- step, restart, mouse grab, camera orbit and zoom.
local ffi = require "ffi"
local loom = require "loom"
local C = loom.C
local app = require "loom.app"

local canvas = ffi.gc(C.loom_canvas_create(640, 400), C.loom_canvas_destroy)

local function key(k) return {type = "key", key = k, down = true} end

describe("app", function()
  -- (a generous stepping budget: the accumulator is under test, not this machine's speed)
  app.init {scene = "scenes/hello_cloth.lua", mode = "window", canvas = canvas, quiet = true, budget = 10}

  it("runs in real time, pauses, steps once and restarts", function()
    for _ = 1, 5 do app.frame(0.05, {}) end
    local t1 = app.time()
    assert.near(t1, 0.25, 1 / 240 + 1e-9)
    app.frame(0.05, {key "space"})
    assert.is_true(app.paused())
    local t2 = app.time()
    app.frame(0.5, {})
    assert.equal(t2, app.time())
    app.frame(0.05, {key "."})
    assert.near(app.time(), t2 + 1 / 240, 1e-12)
    app.frame(0.05, {key "r"})
    assert.equal(0, app.time())
    app.frame(0.05, {key "space"})
    assert.is_false(app.paused())
  end)

  it("grabs the cloth under the cursor and pulls it towards the mouse", function()
    app.frame(0.05, {key "r"})
    for _ = 1, 4 do app.frame(0.05, {}) end
    -- a free vertex of the cloth and where it is on screen
    local sx, sy, depth = ffi.new("double[1]"), ffi.new("double[1]"), ffi.new("double[1]")
    -- the world is private to the app: reach it through its address
    local addr = app.world_address()
    local wptr = ffi.cast("loom_world*", addr)
    local h = C.loom_world_find(wptr, "cloth")
    local x = C.loom_body_x(wptr, h)
    local idx = C.loom_body_vertex_near(wptr, h, ffi.new("loom_vec3", 0, 0.2, 0.9))
    assert.equal(1, C.loom_canvas_project(canvas, x + idx, sx, sy, depth))
    local z0 = x[idx].z
    app.frame(0.02, {{type = "mouse_button", button = 1, down = true, x = sx[0], y = sy[0]}})
    for k = 1, 20 do
      app.frame(0.02, {{type = "mouse_move", x = sx[0], y = sy[0] - 6 * k, dx = 0, dy = -6}})
    end
    assert.less(z0 + 0.2, x[idx].z) -- pulled up after the cursor, well above where it was
    app.frame(0.02, {{type = "mouse_button", button = 1, down = false, x = sx[0], y = sy[0] - 120}})
  end)

  it("orbits and zooms without touching the simulation", function()
    local before = app.time()
    app.frame(0, {{type = "key", key = "space", down = true}}) -- pause
    local t = app.time()
    app.frame(0, {{type = "mouse_button", button = 1, down = true, x = 5, y = 395},
                  {type = "mouse_move", x = 50, y = 395, dx = 45, dy = 0},
                  {type = "mouse_button", button = 1, down = false, x = 50, y = 395},
                  {type = "wheel", dy = 3}})
    assert.equal(t, app.time())
    assert.less(before - 1, t)
  end)
end)
