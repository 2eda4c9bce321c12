-- Rocks, boxes and cylinders tumbling down a hilly triangle-mesh terrain into a hollow: rigid
-- polytopes against a static mesh (each triangle by separating axes, its inside edges left out,
-- manifolds gathered by normal — docs/architecture.md, rigid bodies).
--   --param count=60, --param cells=40 (terrain triangles: 2 cells^2), --param friction=0.5
local loom = require "loom"

local scene = loom.scene {
  title  = "Bodies on a mesh terrain",
  dt     = 1 / 60,
  params = { count = 60, cells = 40, friction = 0.5 },
  camera = { target = {0, 0, 0}, distance = 9, azimuth = 35, elevation = 40 },
}

-- the terrain's height: a bowl with ripples
local function height(x, y)
  return 0.06 * (x * x + y * y) + 0.15 * math.sin(2.1 * x) * math.cos(1.7 * y)
end

function scene.build(world, p)
  local n, size = p.cells, 8
  local v, t = {}, {}
  for j = 0, n do
    for i = 0, n do
      local x, y = (i / n - 0.5) * size, (j / n - 0.5) * size
      v[#v + 1] = {x, y, height(x, y)}
    end
  end
  for j = 0, n - 1 do
    for i = 0, n - 1 do
      local a, b = j * (n + 1) + i, j * (n + 1) + i + 1
      local c, d = a + n + 1, b + n + 1
      t[#t + 1] = {a, b, d}
      t[#t + 1] = {a, d, c}
    end
  end
  world:rigid { name = "terrain", shape = loom.shape.mesh(loom.mesh.from_arrays(v, t)), static = true, friction = p.friction }
  local rock = loom.shape.convex(loom.mesh.sphere { radius = 0.14, segments = 7, rings = 4 }:transform { scale = {1, 0.8, 0.6} })
  local shapes = { loom.shape.box(0.15, 0.1, 0.08), loom.shape.cylinder(0.1, 0.12), rock }
  for k = 0, p.count - 1 do
    local a, r = 2.39996 * k, 3.3 * math.sqrt((k + 0.5) / p.count) -- a sunflower spiral: evenly spread
    local x, y = r * math.cos(a), r * math.sin(a)
    world:rigid { name = "body " .. k, shape = shapes[k % 3 + 1], density = 800, friction = p.friction,
                  position = {x, y, height(x, y) + 0.4 + 0.05 * (k % 5)},
                  orientation = {math.cos(a / 2), math.sin(a / 2) * 0.6, math.sin(a / 2) * 0.8, 0} }
  end
end

function scene.ui(ui, world)
  ui.text(("t = %.2f s   contacts %d"):format(world.time, #world:contacts()))
end

return scene
