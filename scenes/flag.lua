-- A flag pinned along a pole in a swinging, gusty wind that wraps it around the pole. Its left
-- edge is held `gap` from the pole's surface. Try --param gap=0.002 (inside the cloth's 4 mm
-- thickness): Loom warns that the pins lie in the pole's contact margin, the pins stay put, and the
-- free vertices next to them are kept outside without gaining energy (tests/lua/flag_test.lua).
local loom = require "loom"

local scene = loom.scene {
  title   = "Flag on a pole",
  dt      = 1/240,
  gravity = {0, 0, -9.81},
  params  = { wind = 6, gap = 0.006, cells = 24 },
  camera  = { target = {0.4, 0, 1.5}, distance = 2.6, azimuth = 60, elevation = 15 },
}

local pole_radius = 0.02

function scene.build(world, p)
  world:rigid { name = "pole", shape = loom.shape.cylinder(pole_radius, 1.0), position = {0, 0, 1.0}, static = true }
  local w, h = 0.9, 0.6
  local flag = world:cloth {
    name = "flag",
    mesh = loom.mesh.grid { size = {w, h}, cells = {math.floor(1.5 * p.cells), p.cells}, plane = "xz",
                            center = {pole_radius + p.gap + w / 2, 0, 1.65} },
    density = 0.15, thickness = 0.004, friction = 0.3, drag = 0.5,
  }
  flag:pin(flag:edge "left")
end

-- A wind that swings from side to side, so the flag wraps around the pole one way and then the
-- other, with gusts that travel along the flag. (Until cloth self-collision arrives, a fold can
-- pass through the cloth itself.)
scene.forces = {
  wind = function(world, t)
    local c = world:body "flag"
    local s = scene.params.wind
    local dir_x, dir_y = 0.3, math.sin(0.7 * t)
    for i = 0, c.n - 1 do
      local x = c.x[i]
      local gust = 1 + 0.4 * math.sin(3 * t - 4 * x.x)
      c.f[i].x = c.f[i].x + s * dir_x * gust * c.m[i]
      c.f[i].y = c.f[i].y + s * dir_y * gust * c.m[i]
    end
  end,
}

function scene.ui(ui, world)
  ui.text(("t = %.2f s"):format(world.time))
  ui.slider("wind", scene.params, "wind", 0, 20)
end

return scene
