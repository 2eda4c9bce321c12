-- The tablecloth trick: a cloth laid on a table under two plates and two cups is pulled out along
-- the table. Pulled fast, the dishes stay (the cloth slides under them: friction can give them only
-- mu g of acceleration for the moment it takes); pulled slowly, they ride along with it. The cloth
-- pressed between a dish and the table holds the dish by friction bounded by the dish's weight
-- (contact/contact_cloth.c); the table carries the weight.
--   --param speed=6 (m/s, the pull; 0.3 drags the dishes), --param distance=1.2 (m),
--   --param friction=0.4
local loom = require "loom"

local scene = loom.scene {
  title  = "Tablecloth trick",
  dt     = 1 / 240,
  params = { speed = 6, distance = 1.2, friction = 0.4, cells = 28 },
  camera = { target = {-0.2, 0, 0.75}, distance = 2.4, azimuth = -70, elevation = 25 },
}

local TOP, TH = 0.75, 0.003 -- table top (m), cloth thickness (m)
local pull

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.box(0.6, 0.4, 0.05), position = {0, 0, TOP - 0.05}, static = true,
                friction = 0.2 }
  world:rigid { name = "floor", shape = loom.shape.plane(), static = true }
  local cloth = world:cloth {
    name = "cloth", model = "baraff_witkin", integrator = "implicit", density = 0.2, stretch = 5000, shear = 500,
    thickness = TH, friction = p.friction,
    mesh = loom.mesh.grid { size = {1.1, 0.7}, cells = {p.cells, math.floor(p.cells * 0.7 / 1.1 + 0.5)},
                            center = {0, 0, TOP + TH} },
  }
  local z = TOP + 2 * TH -- a dish rests on the cloth: twice its thickness above the table
  local dishes = {
    {"plate 1", loom.shape.cylinder(0.1, 0.008), {0.15, -0.15}, 0.4},
    {"plate 2", loom.shape.cylinder(0.1, 0.008), {0.15, 0.15}, 0.4},
    {"cup 1", loom.shape.box(0.035, 0.035, 0.05), {-0.15, -0.12}, 0.25},
    {"cup 2", loom.shape.box(0.035, 0.035, 0.05), {-0.15, 0.12}, 0.25},
  }
  for _, d in ipairs(dishes) do
    local half = d[2].half_height or d[2].half_extents[3]
    world:rigid { name = d[1], shape = d[2], mass = d[4], friction = p.friction, position = {d[3][1], d[3][2], z + half} }
  end
  -- the edge at x = -0.55 is taken and pulled along -x at the given speed, from t = 0.2 s
  local edge = cloth:select(function(x) return x.x < -0.549 end)
  pull = cloth:pin(edge)
  pull:follow(loom.trajectory.linear { to = {-p.distance, 0, 0}, t0 = 0.2, t1 = 0.2 + p.distance / p.speed })
end

function scene.ui(ui, world)
  local moved = 0
  for _, n in ipairs { "plate 1", "plate 2", "cup 1", "cup 2" } do
    local b = world:body(n)
    moved = math.max(moved, math.abs(b.position.x - (n:find("plate") and 0.15 or -0.15)))
  end
  ui.text(("t = %.2f s   the dishes moved at most %.3f m"):format(world.time, moved))
end

return scene
