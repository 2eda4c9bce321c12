-- Document 002's parameter feel, side by side: four 5 x 5 x 5 cubes dropped together. Left pair:
-- jelly (k_D 5) against rubber (k_D 80) — the jelly wobbles and sags, the rubber bounces. Right
-- pair: k_V 5 against k_V 10 at k_D 3 — the weaker volume term sags visibly lower.
local loom = require "loom"

local scene = loom.scene {
  title  = "Jelly and rubber (document 002's parameters)",
  dt     = 1 / 100,
  params = { height = 1.0, damping = 0.5 },
  camera = { target = {0, 0, 1}, distance = 12, azimuth = 10, elevation = 15 },
}

local cubes = {
  { name = "jelly",    x = -4.5, distance = 5,  volume = 10 },
  { name = "rubber",   x = -1.5, distance = 80, volume = 10 },
  { name = "volume_5", x = 1.5,  distance = 3, volume = 5 },
  { name = "volume_10", x = 4.5, distance = 3, volume = 10 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 }
  for _, c in ipairs(cubes) do
    world:solid {
      name = c.name, node_mass = 0.05, distance = c.distance, volume = c.volume, damping = p.damping,
      thickness = 0.01, mesh = loom.mesh.tet_box { size = {2.5, 2.5, 2.5}, center = {c.x, 0, 1.25 + p.height} },
    }
  end
end

function scene.ui(ui, world)
  local parts = {}
  for _, c in ipairs(cubes) do
    local _, hi = world:body(c.name):aabb()
    parts[#parts + 1] = ("%s top %.2f m"):format(c.name, hi[3])
  end
  ui.text(("t = %.2f s   "):format(world.time) .. table.concat(parts, "   "))
end

return scene
