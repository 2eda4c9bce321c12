-- A cloth of `cells` x `cells` cells dropped onto a fixed sphere and a floor: the scene behind the
-- cloth-on-sphere and render benchmarks. Try --param cells=127.
local loom = require "loom"

local scene = loom.scene {
  title  = "Drape",
  dt     = 1 / 240,
  params = { cells = 32, friction = 0.4, wind = 0 },
  camera = { target = {0, 0, 0.45}, distance = 2.2, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "ball", shape = loom.shape.sphere(0.3), position = {0, 0, 0.6}, static = true }
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  world:cloth {
    name = "cloth",
    mesh = loom.mesh.grid { size = {1, 1}, cells = {p.cells, p.cells}, center = {0, 0, 1.0} },
    mass = 0.2, thickness = 0.004, friction = p.friction,
  }
end

scene.forces = {
  wind = function(world, t)
    local c = world:body "cloth"
    local w = scene.params.wind
    if w == 0 then return end
    for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + w * c.m[i] end
  end,
}

function scene.ui(ui, world)
  ui.text(("t = %.2f s   contacts = %d"):format(world.time, world:stats().contacts))
  ui.slider("wind", scene.params, "wind", 0, 10)
  ui.slider("friction", scene.params, "friction", 0, 1)
  world:body("cloth"):set("friction", scene.params.friction)
end

return scene
