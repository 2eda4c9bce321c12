-- A cloth draped over a soft cube: an implicit Baraff-Witkin cloth falls on a Neo-Hookean cube
-- resting on the floor. They meet through the collision pipeline (the cube's surface triangles
-- against the cloth's), so the cloth never passes into the cube, and the cube dents under it.
--   --param young=2e4 (Pa), --param cells=24 (cloth)
local loom = require "loom"

local scene = loom.scene {
  title  = "Cloth over a soft cube",
  dt     = 1 / 120,
  params = { young = 2e4, cells = 24, size = 0.3 },
  camera = { target = {0, 0, 0.2}, distance = 1.6, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.8 }
  local s = p.size
  world:solid {
    name = "cube", model = "neohookean", young = p.young, poisson = 0.4, density = 300, rayleigh = 0.01,
    friction = 0.5, thickness = 0.003,
    mesh = loom.mesh.tet_box { size = {s, s, s}, cells = {5, 5, 5}, center = {0, 0, s / 2 + 0.003} },
  }
  world:cloth {
    name = "cloth", model = "baraff_witkin", integrator = "implicit", density = 0.2, stretch = 2000, shear = 200,
    bend = 1e-5, thickness = 0.004, friction = 0.5,
    mesh = loom.mesh.grid { size = {0.7, 0.7}, cells = {p.cells, p.cells}, center = {0, 0, s + 0.1} },
  }
end

function scene.ui(ui, world)
  local _, hi = world:body "cube":aabb()
  ui.text(("t = %.2f s   cube top %.3f m   crossings %d"):format(world.time, hi[3], world:interpenetrations()))
end

return scene
