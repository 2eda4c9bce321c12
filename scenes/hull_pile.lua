-- A pile of convex hulls: rocks (hulls of jittered low-resolution spheres, each different) dropped
-- into a bin, as document 003's convex meshes, with exact polyhedral mass properties.
--   --param count=200, --param size=0.08 (m)
local loom = require "loom"

local scene = loom.scene {
  title  = "Pile of convex hulls",
  dt     = 1 / 120,
  params = { count = 200, size = 0.08 },
  camera = { target = {0, 0, 0.3}, distance = 3.0, azimuth = 30, elevation = 55 },
}

-- A rock: a coarse sphere stretched differently along each axis and turned (16 kinds).
local function rock(k, size)
  local sx, sy, sz = 0.7 + 0.1 * (k % 4), 0.6 + 0.1 * ((k * 3) % 5), 0.5 + 0.1 * ((k * 7) % 4)
  local a = 0.4 * k
  local m = loom.mesh.sphere { radius = size, segments = 7 + k % 3, rings = 4 + k % 2 }
  return loom.shape.convex(m:transform { scale = {sx, sy, sz}, rotate = {math.cos(a / 2), 0, 0, math.sin(a / 2)} })
end

function scene.build(world, p)
  world:rigid { name = "bottom", shape = loom.shape.box(0.7, 0.7, 0.05), position = {0, 0, -0.05}, static = true }
  for i, w in ipairs { {0.65, 0, 0.05, 0.6}, {-0.65, 0, 0.05, 0.6}, {0, 0.65, 0.6, 0.05}, {0, -0.65, 0.6, 0.05} } do
    world:rigid { name = "side " .. i, shape = loom.shape.box(w[3], w[4], 0.4), position = {w[1], w[2], 0.4}, static = true }
  end
  local per = 36
  for i = 0, p.count - 1 do
    local layer, k = math.floor(i / per), i % per
    world:rigid { name = "rock " .. i, shape = rock(i % 16, p.size), density = 2500, friction = 0.6,
                  position = {(k % 6 - 2.5) * 0.2, (math.floor(k / 6) - 2.5) * 0.2, 0.3 + layer * 0.22} }
  end
end

function scene.ui(ui, world)
  ui.text(("t = %.2f s   contacts %d"):format(world.time, #world:contacts()))
end

return scene
