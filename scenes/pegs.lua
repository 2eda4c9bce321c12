-- A cloth dropped onto a bed of 49 pegs standing on a floor: 50 obstacles under one cloth. The
-- scene behind the many-obstacle benchmark (each peg only touches the cloth near it).
-- Try --param cells=95 or --param rows=9.
local loom = require "loom"

local scene = loom.scene {
  title  = "Bed of pegs",
  dt     = 1 / 240,
  params = { cells = 48, rows = 7, friction = 0.5 },
  camera = { target = {0, 0, 0.2}, distance = 2.6, azimuth = 35, elevation = 35 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.box(1.2, 1.2, 0.05), position = {0, 0, -0.05}, static = true }
  local spacing = 1.4 / p.rows
  for i = 1, p.rows do
    for j = 1, p.rows do
      local x = (i - (p.rows + 1) / 2) * spacing
      local y = (j - (p.rows + 1) / 2) * spacing
      -- pegs of slightly different heights, so the cloth settles onto them one by one
      local h = 0.12 + 0.03 * ((i * 7 + j * 3) % 5) / 4
      world:rigid { name = ("peg_%d_%d"):format(i, j), shape = loom.shape.capsule(0.025, h / 2),
                    position = {x, y, h / 2 + 0.025}, static = true }
    end
  end
  world:cloth {
    name = "cloth",
    mesh = loom.mesh.grid { size = {1.3, 1.3}, cells = {p.cells, p.cells}, center = {0, 0, 0.45} },
    mass = 0.25, thickness = 0.004, friction = p.friction,
  }
end

function scene.ui(ui, world)
  ui.text(("t = %.2f s   contacts = %d   bodies = %d"):format(world.time, world:stats().contacts, #world:bodies()))
end

return scene
