-- Document 003's billiards: fifteen balls racked in a triangle, the white ball kicked with an
-- impulse at t = 0. Equal balls with restitution 1 exchange their velocities head on; the cloth of
-- the table rolls them with friction.
--   --param kick=1.2 (N s, the cue's impulse), --param restitution=0.95
local loom = require "loom"

local scene = loom.scene {
  title  = "Billiards",
  dt     = 1 / 240,
  params = { kick = 1.2, restitution = 0.95 },
  camera = { target = {0.3, 0, 0}, distance = 2.6, azimuth = 0, elevation = 55 },
}

local R, M = 0.028575, 0.17 -- a pool ball: 57.15 mm, 170 g

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.box(1.3, 0.7, 0.05), position = {0, 0, -0.05}, static = true,
                friction = 0.2 }
  for _, w in ipairs { {0, 0.72, 1.3, 0.02}, {0, -0.72, 1.3, 0.02}, {1.32, 0, 0.02, 0.74}, {-1.32, 0, 0.02, 0.74} } do
    world:rigid { name = ("cushion %g %g"):format(w[1], w[2]), shape = loom.shape.box(w[3], w[4], 0.04),
                  position = {w[1], w[2], 0.04}, static = true, restitution = 0.8, friction = 0.1 }
  end
  local n = 0
  for row = 0, 4 do
    for k = 0, row do
      n = n + 1
      world:rigid { name = "ball " .. n, shape = loom.shape.sphere(R), mass = M, restitution = p.restitution,
                    friction = 0.2, angular_damping = 0.3,
                    position = {0.6 + row * 2 * R * 0.8661, (k - row / 2) * 2.001 * R, R} }
    end
  end
  local cue = world:rigid { name = "white", shape = loom.shape.sphere(R), mass = M, restitution = p.restitution,
                            friction = 0.2, angular_damping = 0.3, position = {-0.6, 0, R} }
  cue:apply_impulse { p.kick, 0, 0 }
end

function scene.ui(ui, world)
  local w = world:body "white"
  ui.text(("t = %.2f s   white ball at x = %.3f m, v = %.3f m/s"):format(world.time, w.position.x, w.velocity.x))
end

return scene
