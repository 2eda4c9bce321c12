-- A rubber ball (stable Neo-Hookean, E = 1 MPa, nu = 0.45) dropped on the floor at dt = 1/60 s:
-- the implicit integrator takes the real material at a frame's step.
--   --param young=1e6 (Pa), --param poisson=0.45, --param radius=0.15 (m), --param cell=0.04 (m)
local loom = require "loom"

local scene = loom.scene {
  title  = "Rubber ball (Neo-Hookean)",
  dt     = 1 / 60,
  params = { young = 1e6, poisson = 0.45, radius = 0.15, cell = 0.04, height = 1.0, rayleigh = 0.002 },
  camera = { target = {0, 0, 0.4}, distance = 2.2, azimuth = 30, elevation = 12 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.6,
                restitution = 0 }
  local surface = loom.mesh.sphere { radius = p.radius, segments = 24, rings = 12, center = {0, 0, p.height} }
  world:solid {
    name = "ball", model = "neohookean", young = p.young, poisson = p.poisson, density = 1100, rayleigh = p.rayleigh,
    mesh = loom.mesh.tet_fill(surface, { cell = p.cell }), surface = surface, friction = 0.6, thickness = 0.003,
  }
end

function scene.ui(ui, world)
  local lo = world:body "ball":aabb()
  ui.text(("t = %.2f s   ball bottom at z = %.3f m"):format(world.time, lo[3]))
end

return scene
