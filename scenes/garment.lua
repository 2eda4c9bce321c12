-- A closed garment — a tube of cloth, like a sleeve or a skirt — dropped on its side onto a table:
-- its two layers land on each other and must stay apart, the cloth against itself over its whole
-- surface, with the table's edges below.
--   --param segments=24 (around), --param rings=16 (along), --param radius=0.15, --param length=0.6
local loom = require "loom"

local scene = loom.scene {
  title  = "Garment",
  dt     = 1 / 100,
  params = { segments = 24, rings = 16, radius = 0.15, length = 0.6 },
  camera = { target = {0, 0, 0.8}, distance = 1.8, azimuth = 30, elevation = 30 },
}

-- an open tube along x: rings x segments vertices, quads split into two triangles
local function tube(p)
  local v, t = {}, {}
  for r = 0, p.rings do
    local x = -p.length / 2 + p.length * r / p.rings
    for s = 0, p.segments - 1 do
      local a = 2 * math.pi * s / p.segments
      v[#v + 1] = {x, p.radius * math.cos(a), 1.05 + p.radius * math.sin(a)}
    end
  end
  for r = 0, p.rings - 1 do
    for s = 0, p.segments - 1 do
      local a, b = r * p.segments + s, r * p.segments + (s + 1) % p.segments
      local c, d = a + p.segments, b + p.segments
      t[#t + 1] = {a, b, d}
      t[#t + 1] = {a, d, c}
    end
  end
  return loom.mesh.from_arrays(v, t)
end

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.box(0.4, 0.4, 0.4), position = {0, 0, 0.4}, static = true, friction = 0.5 }
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  world:cloth {
    name = "garment", model = "baraff_witkin", integrator = "implicit", thickness = 0.005, friction = 0.4,
    mesh = tube(p),
  }
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   proximity = %d   ccd = %d   zones = %d   crossings = %d"):format(
    world.time, st.proximity, st.ccd_collisions, st.impact_zones, world:interpenetrations()))
end

return scene
