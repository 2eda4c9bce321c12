-- Document 002's second scene: four dog-like bodies, each a coarse tetrahedral lattice with a fine
-- surface embedded in it (the fine mesh moves with the lattice by barycentric coordinates and is
-- what is drawn); one is dropped on the three others. The dogs are procedural: a capsule body, a
-- head, four legs and a tail, 2.5 m long (002's dog is some units long: Translate 0 8 0), filled
-- with a lattice of 0.4 m cells.
--   --param cell=0.4 (m), --param fine=24 (segments of the fine surface), --param distance=60,
--   --param volume=20, --param damping=2 (002's dog), --param node_mass=0.05 (kg)
local loom = require "loom"

local scene = loom.scene {
  title  = "Dogs (document 002)",
  dt     = 1 / 100,
  params = { cell = 0.4, fine = 24, distance = 60, volume = 20, damping = 2, node_mass = 0.05 },
  camera = { target = {0, 0, 2}, distance = 14, azimuth = 35, elevation = 20 },
}

local Y90 = {math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0} -- local z onto x

-- a dog standing along x, feet at z = 0
local function dog_surface(segments)
  local rings = math.max(2, math.floor(segments / 4))
  local parts = {
    loom.mesh.capsule { radius = 0.16, half_height = 0.28, segments = segments, rings = rings }
      :transform { rotate = Y90, translate = {0, 0, 0.52} },
    loom.mesh.sphere { radius = 0.15, segments = segments, rings = math.floor(segments / 2), center = {0.5, 0, 0.72} },
    loom.mesh.capsule { radius = 0.05, half_height = 0.1, segments = math.floor(segments / 2), rings = rings }
      :transform { rotate = {math.cos(0.5), 0, math.sin(0.5), 0}, translate = {-0.48, 0, 0.68} },
  }
  for _, leg in ipairs { {0.25, 0.09}, {0.25, -0.09}, {-0.25, 0.09}, {-0.25, -0.09} } do
    parts[#parts + 1] = loom.mesh.cylinder { radius = 0.055, half_height = 0.2, segments = math.floor(segments / 2), rings = 2,
                                             center = {leg[1], leg[2], 0.2} }
  end
  return loom.mesh.merge(parts):transform { scale = 2 }
end

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.6 }
  local coarse_surface = dog_surface(12)
  local fine_surface = dog_surface(p.fine)
  local places = { {-1.0, -1.2, 0.01, 0}, {1.1, -0.3, 0.01, 1.2}, {-0.6, 1.1, 0.01, -0.3}, {0.0, -0.2, 2.6, 0.8} }
  for k, at in ipairs(places) do
    local c, s = math.cos(at[4] / 2), math.sin(at[4] / 2)
    local lattice = loom.mesh.tet_fill(coarse_surface, { cell = p.cell })
      :transform { rotate = {c, 0, 0, s}, translate = {at[1], at[2], at[3]} }
    local fine = fine_surface:copy():transform { rotate = {c, 0, 0, s}, translate = {at[1], at[2], at[3]} }
    world:solid {
      name = "dog" .. k, node_mass = p.node_mass, distance = p.distance, volume = p.volume, damping = p.damping,
      friction = 0.6, thickness = 0.01, contact = "penetration", mesh = lattice, surface = fine,
    }
  end
end

function scene.ui(ui, world)
  local lo = world:body "dog4":aabb()
  ui.text(("t = %.2f s   the dropped dog's lowest point z = %.2f m"):format(world.time, lo[3]))
end

return scene
