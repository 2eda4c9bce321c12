-- A tablecloth falls on a table loaded from an OBJ file (document 000's ClothOnTable), settles,
-- then a "robot" picks up two corners with minimum-jerk motions and drags the cloth off the table.
-- Shows mesh obstacles (the table's sharp edges are handled as edge and corner contacts),
-- trajectories and the UI.
local loom = require "loom"

local scene = loom.scene {
  title  = "Tablecloth",
  dt     = 1 / 240,
  params = { lift = 0.5, pull = 0.6, friction = 0.4 },
  camera = { target = {0, 0, 0.6}, distance = 2.8, azimuth = 35, elevation = 22 },
}

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.mesh(loom.mesh.load("meshes/table.obj")), static = true }
  world:rigid { name = "floor", shape = loom.shape.box(2, 2, 0.05), position = {0, 0, -0.05}, static = true }
  local cloth = world:cloth {
    name = "cloth",
    mesh = loom.mesh.grid { size = {1.5, 1.1}, cells = {45, 33}, center = {0, 0, 0.9} },
    density = 0.25, thickness = 0.004, friction = p.friction,
  }
  -- the robot's grippers take the two near corners at t = 2 s and lift, then pull
  local corners = cloth:pin { cloth:vertex_near {-0.75, -0.55, 0.9}, cloth:vertex_near {0.75, -0.55, 0.9} }
  corners:release()
  local up = loom.trajectory.min_jerk { to = {0, 0, p.lift}, t0 = 2.0, t1 = 3.5 }
  local out = loom.trajectory.min_jerk { to = {0, -p.pull, 0}, t0 = 3.5, t1 = 5.0 }
  corners:follow(function(t)
    if t < 2.0 then return nil end            -- not holding yet
    local x1, y1, z1 = up(t)
    local x2, y2, z2 = out(t)
    return x1 + x2, y1 + y2, z1 + z2
  end)
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   contacts = %d   substeps = %d"):format(world.time, st.contacts, st.substeps))
  ui.slider("lift (m)", scene.params, "lift", 0.1, 1.0)
  ui.slider("pull (m)", scene.params, "pull", 0, 1.5)
end

return scene
