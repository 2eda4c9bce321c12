-- A cloth thrown over a light box on a table pushes it: the cloth's contacts with the box are
-- constraints of its implicit solve with the box as one of the unknowns, so the box takes the
-- impulses (normal and friction) the cloth gets, in the same substep.
--   --param box=0.1 (kg), --param speed=1.5 (m/s, the cloth's horizontal speed), --param friction=0.6
local loom = require "loom"

local scene = loom.scene {
  title  = "Cloth pushes a box",
  dt     = 1 / 240,
  params = { box = 0.03, speed = 2, friction = 0.6, cells = 24 },
  camera = { target = {0.2, 0, 0.9}, distance = 2.4, azimuth = -60, elevation = 20 },
}

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.box(1.2, 0.6, 0.4), position = {0, 0, 0.4}, static = true,
                friction = 0.3 }
  world:rigid { name = "box", shape = loom.shape.box(0.08, 0.08, 0.08), mass = p.box, friction = p.friction,
                position = {0, 0, 0.88} }
  local cloth = world:cloth {
    name = "cloth", model = "baraff_witkin", integrator = "implicit", density = 0.2, stretch = 5000, shear = 500,
    damping = 0.005, thickness = 0.008, friction = p.friction,
    mesh = loom.mesh.grid { size = {0.6, 0.6}, cells = {p.cells, p.cells}, center = {-0.1, 0, 0.985} },
  }
  for i = 0, cloth.n - 1 do cloth.v[i].x = p.speed end
end

function scene.ui(ui, world)
  local box = world:body "box"
  ui.text(("t = %.2f s   box at x = %.3f m, v = %.3f m/s"):format(world.time, box.position.x, box.velocity.x))
end

return scene
