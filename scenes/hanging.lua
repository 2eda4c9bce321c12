-- A cloth hanging from its two top corners, with the implicit integrator (Baraff–Witkin backward
-- Euler) at dt = 1/60 s: one solve per step whatever the stiffness. The scene behind the
-- cloth_implicit_N benchmarks. `n` is the number of vertices per side; the cloth starts a hair
-- (0.1 mm) out of the vertical plane, so it does not rest in the unstable flat balance. The
-- `strain_limit` of 1 % (Provot's deformation constraint) keeps the edges at the two pinned
-- corners, where the whole weight hangs on a point, from stretching beyond it; 0 turns it off.
local loom = require "loom"

local scene = loom.scene {
  title  = "Hanging cloth (implicit)",
  dt     = 1 / 60,
  params = { n = 32, stretch = 20000, shear = 2000, bend = 1e-4, strain_limit = 0.01 },
  camera = { target = {0, 0, 1.0}, distance = 2.6, azimuth = 25, elevation = 10 },
}

function scene.build(world, p)
  local cells = math.floor(p.n) - 1
  local mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = {0, 0, 1}, plane = "xz" }
  local cloth = world:cloth {
    name = "cloth", mesh = mesh, model = "baraff_witkin", integrator = "implicit",
    stretch = p.stretch, shear = p.shear, bend = p.bend, mass = 0.2, cg_iterations = 3000,
    strain_limit = p.strain_limit,
  }
  for i = 0, cloth.n - 1 do
    local x = cloth.x[i]
    x.y = 1e-4 * math.sin(7 * x.x + 3 * x.z)
  end
  cloth:pin { cloth:vertex_near {-0.5, 0, 1.5}, cloth:vertex_near {0.5, 0, 1.5} }
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %d CG iterations (residual %.1e)   %.2f ms/step   %d edges at the strain limit"):format(
    world.time, st.iterations, st.cg_residual, st.step_ms, st.strain_limited))
end

return scene
