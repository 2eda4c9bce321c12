-- A cloth dropped on edge onto the floor crumples into a pile: heavy self-contact, handled by the
-- collision pipeline (self_collision). The sheet starts vertical, slightly sheared and rippled so
-- that it folds instead of standing on its edge. `loom bench crumple_` times it.
local loom = require "loom"

local scene = loom.scene {
  title  = "Crumple",
  dt     = 1 / 100,
  params = { n = 32, self_collision = 1, thickness = 0.008, friction = 0.3 },
  camera = { target = {0, 0, 0.2}, distance = 2.2, azimuth = 30, elevation = 25 },
}

function scene.build(world, p)
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  local c = world:cloth {
    name = "cloth", model = "baraff_witkin", thickness = p.thickness, friction = p.friction,
    self_collision = p.self_collision ~= 0,
    mesh = loom.mesh.grid { size = {1, 1}, cells = {p.n, p.n}, center = {0, 0, 0.62}, plane = "xz" },
  }
  for i = 0, c.n - 1 do
    c.x[i].x = c.x[i].x + 0.15 * (c.x[i].z - 0.62)
    c.x[i].y = 0.03 * math.sin(9 * c.x[i].z)
  end
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   proximity = %d   ccd = %d   zones = %d (largest %d)   %.1f ms"):format(
    world.time, st.proximity, st.ccd_collisions, st.impact_zones, st.largest_zone, st.step_ms))
end

return scene
