-- A test scene for loom sweep: a small cloth pinned along one edge sags under gravity; its stiffness
-- and resolution are parameters, the seed jitters its mass, 'fail' makes the build raise an error
-- (a sweep must go on and list it), and the metrics report the sag.
local loom = require "loom"

local scene = loom.scene {
  title = "sweep test: sag",
  dt = 1 / 120,
  params = { stretch = 500, cells = 6, seed = 1, fail = false },
  sweep = { stretch = {200, 800}, seeds = "1..2", time = 0.25 },
}

function scene.build(world, p)
  if p.fail then error("asked to fail (fail = true)") end
  local rng = loom.random(p.seed)
  local c = world:cloth { name = "c", mesh = loom.mesh.grid { size = {0.4, 0.4}, cells = {p.cells, p.cells}, center = {0, 0, 1} },
                          stretch = p.stretch, density = 0.1 * (1 + 0.1 * rng:uniform()) }
  c:pin(c:select(function(x) return x.y > 0.199 end))
end

function scene.metrics(world)
  local lo = world:body "c":aabb()
  return { sag = 1 - lo[3], energy = world:energy().total }
end

return scene
