-- Document 003's "marabunta": thirty objects in a closed room, kicked at t = 0 and t = 0.3 s; six of
-- them are spheres under gravity, the others float (gravity_scale = 0). Many collisions at once,
-- restitution 0.6: the scene must never hang and its energy never grows.
--   --param restitution=0.6
local loom = require "loom"

local scene = loom.scene {
  title  = "Marabunta",
  dt     = 1 / 120,
  params = { restitution = 0.6 },
  camera = { target = {0, 0, 0.9}, distance = 1.45, azimuth = 30, elevation = 20 }, -- inside the room
}

function scene.build(world, p)
  local walls = { {0, 0, -0.1, 1.6, 1.6, 0.1}, {0, 0, 2.1, 1.6, 1.6, 0.1}, {1.6, 0, 1, 0.1, 1.6, 1.2},
                  {-1.6, 0, 1, 0.1, 1.6, 1.2}, {0, 1.6, 1, 1.6, 0.1, 1.2}, {0, -1.6, 1, 1.6, 0.1, 1.2} }
  for i, w in ipairs(walls) do
    world:rigid { name = "wall " .. i, shape = loom.shape.box(w[4], w[5], w[6]), position = {w[1], w[2], w[3]},
                  static = true, restitution = p.restitution }
  end
  local bodies = {}
  for i = 0, 29 do
    local shape
    if i < 6 then shape = loom.shape.sphere(0.12)
    elseif i % 3 == 0 then shape = loom.shape.box(0.12, 0.08, 0.1)
    elseif i % 3 == 1 then shape = loom.shape.capsule(0.06, 0.1)
    else shape = loom.shape.cylinder(0.08, 0.08) end
    local x, y, z = (i % 5) * 0.5 - 1, (math.floor(i / 5) % 3) * 0.6 - 0.6, 0.4 + math.floor(i / 15) * 0.9
    bodies[#bodies + 1] = world:rigid { name = "object " .. i, shape = shape, restitution = p.restitution,
                                        gravity_scale = i < 6 and 1 or 0, position = {x, y, z} }
  end
  for i, b in ipairs(bodies) do
    local s = (i % 2 == 0) and 1 or -1
    b:apply_impulse { 2 * s * b.mass, (i % 3 - 1) * b.mass, 0.5 * b.mass }
    if i % 4 == 0 then b:apply_force({0, -60 * b.mass * s, 0}, {from = 0.3, to = 0.35}) end
  end
end

function scene.ui(ui, world)
  local e = world:energy()
  ui.text(("t = %.2f s   energy %.2f J   contacts %d"):format(world.time, e.kinetic + e.potential, #world:contacts()))
  require("loom.force_panel").draw(ui, world) -- document 003's force manager
end

return scene
