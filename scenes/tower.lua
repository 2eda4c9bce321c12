-- Document 003's failure made a target: a tower of boxes (10 cubes of 0.2 m, one on another)
-- standing still — resting contact beyond one contact. It stands within 1 mm for 10 s at dt = 1/60
-- and 1/500 (loom bench tower_10). The overlay's button throws a ball at it.
--   --param count=10, --param size=0.2 (m)
local loom = require "loom"

local scene = loom.scene {
  title  = "Box tower",
  dt     = 1 / 60,
  params = { count = 10, size = 0.2 },
  camera = { target = {0, 0, 1.0}, distance = 5, azimuth = -60, elevation = 15 },
}

function scene.build(world, p)
  world:rigid { name = "ground", shape = loom.shape.box(20, 20, 0.5), position = {0, 0, -0.5}, static = true, friction = 0.5 }
  local h = p.size / 2
  for i = 0, p.count - 1 do
    world:rigid { name = ("box %d"):format(i), shape = loom.shape.box(h, h, h), friction = 0.5,
                  position = {0, 0, h + i * p.size} }
  end
end

local function throw_ball(world)
  local top = 0.8 * scene.params.count * scene.params.size
  local ball = world:rigid { name = "ball", shape = loom.shape.sphere(0.15), density = 2000, position = {-2, 0, top} }
  ball:apply_impulse({ball.mass * 8, 0, ball.mass * 2})
end

function scene.ui(ui, world)
  local awake, top, ball = 0, nil, nil
  for _, b in ipairs(world:bodies()) do
    if b.kind == "rigid" and b.name ~= "ground" and not b.asleep then awake = awake + 1 end
    if b.name == ("box %d"):format(scene.params.count - 1) then top = b end
    if b.name == "ball" then ball = b end
  end
  ui.text(("t = %.2f s   awake bodies: %d   top box at %.4f m"):format(world.time, awake, top and top.position.z or 0))
  if not ball and ui.button("throw a ball at it") then throw_ball(world) end
end

return scene
