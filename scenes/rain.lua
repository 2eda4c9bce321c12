-- Spheres raining into an open bin: 500 spheres of radius 5 cm dropped in layers into a 1 m box,
-- many contacts, sleeping once they settle.
--   --param count=500, --param radius=0.05
local loom = require "loom"

local scene = loom.scene {
  title  = "Rain of spheres",
  dt     = 1 / 120,
  params = { count = 500, radius = 0.05 },
  camera = { target = {0, 0, 0.5}, distance = 3.5, azimuth = 30, elevation = 30 },
}

function scene.build(world, p)
  world:rigid { name = "bottom", shape = loom.shape.box(0.6, 0.6, 0.05), position = {0, 0, -0.05}, static = true }
  for i, w in ipairs { {0.55, 0, 0.05, 0.5}, {-0.55, 0, 0.05, 0.5}, {0, 0.55, 0.5, 0.05}, {0, -0.55, 0.5, 0.05} } do
    world:rigid { name = "side " .. i, shape = loom.shape.box(w[3], w[4], 0.4), position = {w[1], w[2], 0.4}, static = true }
  end
  local per_layer, r = 64, p.radius
  for i = 0, p.count - 1 do
    local layer, k = math.floor(i / per_layer), i % per_layer
    local x, y = (k % 8 - 3.5) * 0.12 + (layer % 2) * 0.02, (math.floor(k / 8) - 3.5) * 0.12
    world:rigid { name = "sphere " .. i, shape = loom.shape.sphere(r), density = 1000, friction = 0.4,
                  position = {x, y, 1.0 + layer * 0.13} }
  end
end

function scene.ui(ui, world)
  ui.text(("t = %.2f s   contacts %d"):format(world.time, #world:contacts()))
end

return scene
