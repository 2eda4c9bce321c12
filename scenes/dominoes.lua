-- Document 003's dominoes: a row of pieces; a push at the top of the first knocks each onto the
-- next. One piece (`fixed`) has its rotation switched off and stops the run, as 003 showed with
-- behaviours disabled.
--   --param count=20, --param spacing=0.035 (m), --param fixed=15 (0: none)
local loom = require "loom"

local scene = loom.scene {
  title  = "Dominoes",
  dt     = 1 / 240,
  params = { count = 20, spacing = 0.035, fixed = 15 },
  camera = { target = {0.35, 0, 0.03}, distance = 1.0, azimuth = -60, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.box(2, 1, 0.05), position = {0, 0, -0.05}, static = true, friction = 0.6 }
  local first
  for i = 1, p.count do
    local d = world:rigid { name = "domino " .. i, shape = loom.shape.box(0.004, 0.012, 0.024), density = 700,
                            friction = 0.4, position = {(i - 1) * p.spacing, 0, 0.024},
                            angular = i ~= p.fixed }
    first = first or d
  end
  first:apply_impulse({0.002, 0, 0}, {0, 0, 0.045})
end

function scene.ui(ui, world)
  local down = 0
  for _, b in ipairs(world:bodies()) do
    if b.kind == "rigid" and b.name:find "domino" and b.position.z < 0.02 then down = down + 1 end
  end
  ui.text(("t = %.2f s   fallen: %d"):format(world.time, down))
end

return scene
