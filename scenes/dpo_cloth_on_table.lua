-- Document 000's ClothOnTable scene folder, read by loom.import.dpo and run as it is: its world
-- parameters (gravity, 100 frames per second), its cloth (dpo_ STL, par_ density and thickness,
-- vel_ corners held still) and its table (rig_ STL). Point `dir` at another such folder with
-- --param dir=path/to/Scene (relative to this file, or absolute).
local loom = require "loom"

local scene = loom.scene {
  title  = "dpoSimulator scene: ClothOnTable",
  dt     = 1 / 100,
  params = { dir = "../tests/data/dpo/ClothOnTable" },
  camera = { target = {0, 0, 0.7}, distance = 2.0, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  local _, _, warnings = loom.import.dpo(p.dir, { world = world })
  for _, w in ipairs(warnings) do print("loom.import.dpo: " .. w) end
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %d contacts   %d CG iterations"):format(world.time, st.contacts, st.iterations))
end

return scene
