-- Two cloths fall on each other onto a box (issue 8's cloth-on-cloth scene): the collision
-- pipeline keeps them apart — the upper one drapes over the lower at about one thickness — and
-- each keeps clear of itself where it folds over the box's edges.
local loom = require "loom"

local scene = loom.scene {
  title  = "Two cloths",
  dt     = 1 / 100,
  params = { n = 24, thickness = 0.006, friction = 0.4 },
  camera = { target = {0, 0, 0.2}, distance = 2.0, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "box", shape = loom.shape.box(0.25, 0.25, 0.1), position = {0, 0, 0.1}, static = true }
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  for _, spec in ipairs { {"lower", {0, 0, 0.35}}, {"upper", {0.08, 0.05, 0.55}} } do
    world:cloth {
      name = spec[1], model = "baraff_witkin", thickness = p.thickness, friction = p.friction,
      self_collision = true,
      mesh = loom.mesh.grid { size = {0.9, 0.9}, cells = {p.n, p.n}, center = spec[2] },
    }
  end
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   proximity = %d   ccd = %d   zones = %d   crossings = %d"):format(
    world.time, st.proximity, st.ccd_collisions, st.impact_zones, world:interpenetrations()))
end

return scene
