-- Document 003's ramp: a sphere with restitution 0 falls onto a ramp, lands without bouncing and
-- rolls down it without entering it.
--   --param angle=25 (degrees), --param friction=0.5
local loom = require "loom"

local scene = loom.scene {
  title  = "Sphere on a ramp",
  dt     = 1 / 120,
  params = { angle = 25, friction = 0.5 },
  camera = { target = {0, 0, 0.5}, distance = 4, azimuth = -90, elevation = 10 },
}

function scene.build(world, p)
  local a = math.rad(p.angle)
  world:rigid { name = "ramp", shape = loom.shape.box(1.5, 0.5, 0.05), static = true, friction = p.friction,
                orientation = {math.cos(a / 2), 0, math.sin(a / 2), 0}, position = {0, 0, 0.7} }
  world:rigid { name = "floor", shape = loom.shape.box(30, 4, 0.05), position = {0, 0, -0.05}, static = true, friction = p.friction }
  world:rigid { name = "ball", shape = loom.shape.sphere(0.12), density = 500, restitution = 0, friction = p.friction,
                position = {-0.8, 0, 3.7} }
end

function scene.ui(ui, world)
  local b = world:body "ball"
  ui.text(("t = %.2f s   ball at (%.2f, %.2f) m"):format(world.time, b.position.x, b.position.z))
end

return scene
