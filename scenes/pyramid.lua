-- Document 003's failure made a target: a 2-D pyramid of boxes (20 at the base, 210 in all, 0.2 m
-- cubes 2 mm apart) standing still — resting contact beyond one contact. It stands within 1 mm for
-- 10 s at dt = 1/60 (loom bench pyramid_210).
--   --param base=20, --param size=0.2 (m), --param gap=0.002 (m)
local loom = require "loom"

local scene = loom.scene {
  title  = "Box pyramid",
  dt     = 1 / 60,
  params = { base = 20, size = 0.2, gap = 0.002 },
  camera = { target = {0, 0, 1.6}, distance = 7, azimuth = -90, elevation = 10 },
}

function scene.build(world, p)
  world:rigid { name = "ground", shape = loom.shape.box(20, 20, 0.5), position = {0, 0, -0.5}, static = true, friction = 0.5 }
  local h = p.size / 2
  for row = 0, p.base - 1 do
    for i = 0, p.base - 1 - row do
      world:rigid { name = ("box %d %d"):format(row, i), shape = loom.shape.box(h, h, h), friction = 0.5,
                    position = {(i - (p.base - 1 - row) / 2) * (p.size + p.gap), 0, h + row * p.size} }
    end
  end
end

function scene.ui(ui, world)
  local awake = 0
  for _, b in ipairs(world:bodies()) do if b.kind == "rigid" and b.name ~= "ground" and not b.asleep then awake = awake + 1 end end
  ui.text(("t = %.2f s   awake boxes: %d"):format(world.time, awake))
end

return scene
