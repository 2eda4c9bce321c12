-- loom.new — `loom new NAME`: writes a commented starter scene NAME.lua and its test NAME_test.lua
-- next to it, refusing to overwrite anything.
local host = require "loom.host"

local M = {}

M.SCENE = [==[
-- SCENE_NAME.lua — a starter scene made by `loom new`. Run it with `loom SCENE_NAME.lua`: edit and
-- save while the window is open and the scene reloads, keeping its state. Its test is
-- SCENE_NAME_test.lua (`loom test SCENE_NAME_test.lua`).
local loom = require "loom"

local scene = loom.scene {
  title  = "SCENE_NAME",
  dt     = 1 / 240,                 -- seconds per step
  -- parameters: tuned live by the UI below, set from the command line with --param wind=5
  params = { wind = 2 },
  camera = { target = {0, 0, 0.8}, distance = 2.2, azimuth = 30, elevation = 20 },
}

-- build(world, params) fills a fresh world at t = 0 (again on `r` and on every reload).
function scene.build(world, p)
  -- an obstacle: static bodies never move; the cloth keeps `thickness` away from them
  world:rigid { name = "ball", shape = loom.shape.sphere(0.12), position = {0, 0.25, 0.75}, static = true }
  -- a 0.8 m x 0.6 m cloth in the xz plane (a banner), 24 x 18 cells
  local cloth = world:cloth {
    name = "cloth",
    mesh = loom.mesh.grid { size = {0.8, 0.6}, cells = {24, 18}, center = {0, 0, 1}, plane = "xz" },
    density = 0.2,      -- kg/m²
    thickness = 0.004,  -- m
  }
  -- hold the two top corners where they are (vertex indices are 0-based)
  cloth:pin { cloth:vertex_near {-0.4, 0, 1.3}, cloth:vertex_near {0.4, 0, 1.3} }
end

-- Force fields run once per step, after the force array f is cleared. x, v, f and m are the
-- kernel's own 0-based arrays, so this loop runs at C speed.
scene.forces = {
  wind = function(world, t)
    local c = world:body "cloth"
    local w = scene.params.wind
    for i = 0, c.n - 1 do
      local gust = 1 + 0.5 * math.sin(3 * t + 4 * c.x[i].x)
      c.f[i].y = c.f[i].y + w * gust * c.m[i]   -- acceleration w · gust along +y
    end
  end,
}

-- The window's panel, drawn every frame (and in headless PNG frames).
function scene.ui(ui, world)
  ui.text(("t = %.2f s"):format(world.time))
  ui.slider("wind (m/s^2)", scene.params, "wind", 0, 10)
  ui.plot("kinetic energy (J)", world:energy().kinetic)
end

return scene
]==]

M.TEST = [==[
-- SCENE_NAME_test.lua — tests for SCENE_NAME.lua, made by `loom new`. Run with
-- `loom test SCENE_NAME_test.lua`; the last line reads "N passed, M failed".
local loom = require "loom"

-- The scene file next to this test (this file's directory is on package.path).
local scene = require "SCENE_NAME"

describe("SCENE_NAME", function()
  it("hangs from its pinned corners, is blown by the wind and stays out of the ball", function()
    local function mean_y(world)
      local c, y = world:body "cloth", 0
      for i = 0, c.n - 1 do y = y + c.x[i].y / c.n end
      return y
    end
    -- params are live (force fields read scene.params while stepping): run the calm world first
    local wind = scene.params.wind
    local calm = scene:instantiate { wind = 0 }
    calm:run(1.5)
    scene.params.wind = wind
    local world = scene:instantiate()
    local cloth = world:body "cloth"
    local pinned = {}
    for i = 0, cloth.n - 1 do
      if cloth:pinned(i) then pinned[#pinned + 1] = {i, cloth.x[i].x, cloth.x[i].y, cloth.x[i].z} end
    end
    assert.equal(2, #pinned)
    world:run(1.5)
    for _, p in ipairs(pinned) do                     -- the pins held
      local x = cloth.x[p[1]]
      assert.near(x.x, p[2], 1e-9)
      assert.near(x.y, p[3], 1e-9)
      assert.near(x.z, p[4], 1e-9)
    end
    assert.near(mean_y(calm), 0, 1e-6)                -- without wind it hangs in its plane
    assert.less(0.01, mean_y(world))                  -- the wind blows it along +y
    assert.equal(0, world:interpenetrations())
    local ball = world:body "ball"
    for i = 0, cloth.n - 1 do
      local d = ball:distance { cloth.x[i].x, cloth.x[i].y, cloth.x[i].z }
      assert.less(0.0035, d)                          -- thickness 0.004, a little slack
    end
    assert.less(world:energy().kinetic, 5)            -- no blow-up
  end)

  it("is deterministic", function()
    local a, b = scene:instantiate(), scene:instantiate()
    a:run(0.5)
    b:run(0.5)
    assert.equal(a:hash(), b:hash())
  end)
end)
]==]

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

-- main(name) → exit status: 0 written, 1 refused (files exist, cannot write), 2 bad name.
function M.main(name)
  if type(name) ~= "string" or name == "" then
    io.stderr:write("loom new: needs a NAME (loom new NAME writes NAME.lua and NAME_test.lua)\n")
    return 2
  end
  name = name:gsub("%.lua$", "")
  local dir, base = name:match("^(.*)/([^/]*)$")
  if not dir then dir, base = nil, name end
  if not base:match("^[%a_][%w_]*$") then
    io.stderr:write(("loom new: '%s' is not a usable name: letters, digits and _ , not starting with a digit (the test loads the scene with require)\n"):format(base))
    return 2
  end
  local taken = package.loaded[base] ~= nil or (host.lua_dir and exists(host.lua_dir .. "/" .. base .. ".lua"))
  if taken then
    io.stderr:write(("loom new: '%s' is the name of a Lua module; choose another name\n"):format(base))
    return 2
  end
  local prefix = dir and (dir == "" and "/" or dir .. "/") or ""
  local scene_path, test_path = prefix .. base .. ".lua", prefix .. base .. "_test.lua"
  for _, p in ipairs {scene_path, test_path} do
    if exists(p) then
      io.stderr:write(("loom new: %s already exists; nothing was written\n"):format(p))
      return 1
    end
  end
  if dir and dir ~= "" then
    local ok, err = host.mkdir_p(dir)
    if not ok then
      io.stderr:write("loom new: ", err, "\n")
      return 1
    end
  end
  for _, out in ipairs {{scene_path, M.SCENE}, {test_path, M.TEST}} do
    local f, err = io.open(out[1], "w")
    if not f then
      io.stderr:write("loom new: ", tostring(err), "\n")
      return 1
    end
    f:write((out[2]:gsub("SCENE_NAME", base)))
    f:close()
  end
  io.stdout:write(("wrote %s and %s\n  run it:   loom %s\n  test it:  loom test %s\n"):format(
    scene_path, test_path, scene_path, test_path))
  return 0
end

return M
