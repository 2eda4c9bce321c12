-- Document 000's HangingCloth2: a cloth hangs from its two top corners, which then move towards
-- each other and cross over, so the cloth folds and its halves press on each other — the cloth
-- against itself, with pins (infinite mass) in the collisions.
--   --param cells=24, --param travel=0.8 (m each corner moves), --param duration=2 (s)
local loom = require "loom"

local scene = loom.scene {
  title  = "Hanging cloth, corners together",
  dt     = 1 / 120,
  params = { cells = 24, travel = 0.8, duration = 2 },
  camera = { target = {0, 0, 1.0}, distance = 2.4, azimuth = 35, elevation = 10 },
}

function scene.build(world, p)
  local c = world:cloth {
    name = "cloth", model = "baraff_witkin", integrator = "implicit", thickness = 0.005, friction = 0.3,
    mesh = loom.mesh.grid { size = {1, 1}, cells = {p.cells, p.cells}, center = {0, 0, 1.0}, plane = "xz" },
  }
  for i = 0, c.n - 1 do c.x[i].y = 0.02 * math.sin(6 * c.x[i].x) end   -- a ripple, so it folds one way
  local left, right = c:vertex_near {-0.5, 0, 1.5}, c:vertex_near {0.5, 0, 1.5}
  -- the left corner passes in front of the right one (5 cm apart in y), so the halves overlap
  c:pin({left}):follow(loom.trajectory.min_jerk { to = {p.travel, -0.05, 0}, t0 = 0.3, t1 = 0.3 + p.duration })
  c:pin({right}):follow(loom.trajectory.min_jerk { to = {-p.travel, 0.05, 0}, t0 = 0.3, t1 = 0.3 + p.duration })
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   proximity = %d   ccd = %d   zones = %d   crossings = %d"):format(
    world.time, st.proximity, st.ccd_collisions, st.impact_zones, world:interpenetrations()))
end

return scene
