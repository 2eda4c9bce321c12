-- A square cloth hanging from two corners in free air (no contact): the scene behind the
-- cloth_springs_N benchmarks. `n` is the number of vertices per side. It starts a hair (0.1 mm)
-- out of its vertical plane: a cloth exactly in the plane of gravity would hang as a flat plate,
-- an unstable balance that only symmetry keeps.
local loom = require "loom"

local scene = loom.scene {
  title  = "Free cloth",
  dt     = 1 / 240,
  params = { n = 32, model = "springs", integrator = "symplectic" },
  camera = { target = {0, 0, 0.6}, distance = 2.6, azimuth = 25, elevation = 15 },
}

function scene.build(world, p)
  local cells = math.floor(p.n) - 1
  local cloth = world:cloth {
    name = "cloth",
    mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = {0, 0, 1}, plane = "xz" },
    model = p.model, integrator = p.integrator, mass = 0.2,
  }
  for i = 0, cloth.n - 1 do
    local x = cloth.x[i]
    x.y = 1e-4 * math.sin(7 * x.x + 3 * x.z)
  end
  cloth:pin { cloth:vertex_near {-0.5, 0, 1.5}, cloth:vertex_near {0.5, 0, 1.5} }
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %d substeps   %.2f ms/step"):format(world.time, st.substeps, st.step_ms))
end

return scene
