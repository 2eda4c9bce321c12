-- A cloth dropped on a sphere that spins about a tilted axis (a kinematic body whose rotation
-- enters the contact tests): friction drags the cloth round, it wraps, slides and folds onto
-- itself, and nothing passes through the sphere or through the cloth.
--   --param spin=1 (turns per second), --param friction=0.5, --param cells=24
local loom = require "loom"

local scene = loom.scene {
  title  = "Rotating sphere",
  dt     = 1 / 120,
  params = { spin = 1, friction = 0.5, cells = 24 },
  camera = { target = {0, 0, 0.5}, distance = 2.2, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  local ball = world:rigid { name = "ball", shape = loom.shape.sphere(0.3), position = {0, 0, 0.5}, kinematic = true,
                             friction = p.friction }
  -- rotation about the axis (0.3, 0, 1) (normalised), `spin` turns per second
  local ax, az = 0.3 / math.sqrt(1.09), 1 / math.sqrt(1.09)
  ball:follow(function(t)
    local half = math.pi * p.spin * t
    local s = math.sin(half)
    return 0, 0, 0.5, math.cos(half), ax * s, 0, az * s
  end)
  world:cloth {
    name = "cloth", model = "baraff_witkin", integrator = "implicit", thickness = 0.004, friction = p.friction,
    mesh = loom.mesh.grid { size = {1, 1}, cells = {p.cells, p.cells}, center = {0.05, 0.02, 0.9} },
  }
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   contacts = %d   proximity = %d   ccd = %d   crossings = %d"):format(
    world.time, st.contacts, st.proximity, st.ccd_collisions, world:interpenetrations()))
end

return scene
