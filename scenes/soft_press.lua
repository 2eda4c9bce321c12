-- A soft Neo-Hookean cube (E = 50 kPa, nu = 0.45) squashed by a kinematic press: the plate comes
-- down by a third of the cube's height, holds, and lifts again; the cube bulges and recovers.
--   --param young=5e4 (Pa), --param poisson=0.45, --param squash=0.33 (of the height)
local loom = require "loom"

local scene = loom.scene {
  title  = "Soft cube under a press",
  dt     = 1 / 60,
  params = { young = 5e4, poisson = 0.45, squash = 0.33, size = 0.3, cells = 6 },
  camera = { target = {0, 0, 0.15}, distance = 1.3, azimuth = 35, elevation = 15 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.8 }
  local s = p.size
  world:solid {
    name = "cube", model = "neohookean", young = p.young, poisson = p.poisson, density = 1000, rayleigh = 0.01,
    friction = 0.8, thickness = 0.002,
    mesh = loom.mesh.tet_box { size = {s, s, s}, cells = {p.cells, p.cells, p.cells}, center = {0, 0, s / 2 + 0.002} },
  }
  local top = s + 0.002 + 0.002 + 0.025
  local press = world:rigid { name = "press", shape = loom.shape.box(0.3, 0.3, 0.025), kinematic = true,
                              position = {0, 0, top + 0.05}, friction = 0.8 }
  local down = loom.trajectory.min_jerk { from = {0, 0, top + 0.05}, to = {0, 0, top - p.squash * s}, t0 = 0.5, t1 = 2 }
  local up = loom.trajectory.min_jerk { from = {0, 0, top - p.squash * s}, to = {0, 0, top + 0.05}, t0 = 3, t1 = 4.5 }
  press:follow(function(t) if t < 3 then return down(t) end return up(t) end)
end

function scene.ui(ui, world)
  local lo, hi = world:body "cube":aabb()
  ui.text(("t = %.2f s   cube: height %.3f m, width %.3f m, volume %.5f m^3"):format(
    world.time, hi[3] - lo[3], hi[1] - lo[1], world:body "cube":volume()))
end

return scene
