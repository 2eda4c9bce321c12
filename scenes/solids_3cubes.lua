-- Document 002's benchmark scene: three elastic cubes (5 x 5 x 5 cells, 5 tets per cell: 216
-- nodes, 625 tets each; 648 nodes and 1875 tets in all) stacked on the floor with 002's model
-- (edge distance and tet volume constraints, Verlet). They settle and rest without sliding or
-- passing into each other.
--   --param distance=60 (k_D, J), --param volume=15 (k_V, J), --param damping=2 (d_C, J s),
--   --param node_mass=0.05 (kg), --param friction=0.5, --param size=5 (m; 002 used unit cells)
--   The cubes meet through the collision pipeline (the default for solids): every surface stays
--   a thickness apart and resting contacts hold (docs/architecture.md, "Resting contact").
--   --param contact=penetration: document 002's contacts instead (vertices inside the other
--   body's tets, Heidelberger's penetration depth). 002's method sees only vertices: where a
--   corner overhangs the cube below, its edges droop over that cube's rim (centimetres deep at
--   2.5 m) and the resting faces sit about a millimetre into each other (docs/benchmarks.md).
local loom = require "loom"

local scene = loom.scene {
  title  = "Three stacked cubes (document 002)",
  dt     = 1 / 100,
  params = { distance = 60, volume = 15, damping = 2, node_mass = 0.05, friction = 0.5, offset = 0.02, size = 2.5, gap = 0.05,
             contact = "pipeline" },
  camera = { target = {0, 0, 7}, distance = 30, azimuth = 30, elevation = 15 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = p.friction }
  for k = 1, 3 do
    local z = p.size / 2 + (k - 1) * (p.size + p.gap) + 0.01
    world:solid {
      name = "cube" .. k, model = "teschner", node_mass = p.node_mass,
      distance = p.distance, volume = p.volume, damping = p.damping, friction = p.friction, thickness = 0.01, contact = p.contact,
      mesh = loom.mesh.tet_box { size = {p.size, p.size, p.size}, cells = {5, 5, 5},
                                 center = {p.offset * (k - 2), 0.5 * p.offset * (k - 2), z} },
    }
  end
end

function scene.ui(ui, world)
  local top = world:body "cube3"
  local lo = top:aabb()
  ui.text(("t = %.2f s   top cube at z = %.3f m   volume %.4f m^3   interpenetrations %d"):format(
    world.time, lo[3], top:volume(), world:interpenetrations()))
end

return scene
