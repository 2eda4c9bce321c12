-- Document 001's experiments: a square cloth falls onto a body loaded from an OBJ file (a lumpy
-- stand-in for the Stanford bunny) standing on a floor. Every setting of 001 is a parameter:
--   --param model=springs|springs_pbd|baraff_witkin   (001's force springs, constraint springs,
--                                                       continuum model)
--   --param n=10|50|100        particles per side (001 compared 10², 50², 100²; default 20)
--   --param iterations=1|5|10  constraint iterations per substep (springs_pbd)
--   --param bend=1|0           bending on or off
--   --param kd=0.2             001's damping of the full relative velocity (springs; 0 = off)
--   --param area_exponent=0.75 001's a^(3/4) weighting of the continuum model (default BW's 1/2)
-- Time step 1/60 s with 001's Verlet (its damping form, integrator verlet_001); the constraint
-- variant takes 001's 10 substeps per frame, the force models as many as their stability needs.
local loom = require "loom"

local scene = loom.scene {
  title  = "Document 001: cloth on a body",
  dt     = 1 / 60,
  params = { model = "springs", n = 20, iterations = 10, bend = 1, kd = 0, area_exponent = 0.5 },
  camera = { target = {0, 0, 0.35}, distance = 2.0, azimuth = 35, elevation = 25 },
}

-- 001's materials: stretch / shear / bend (N/m for springs; fractions for the constraint variant)
local materials = {
  springs = { stretch = 500, shear = 50, bend = 5 },
  springs_pbd = { stretch = 1, shear = 1, bend = 0.2 },
  baraff_witkin = { stretch = 500, shear = 50, bend = 1e-5 },
}

function scene.build(world, p)
  local model = p.model
  local mat = materials[model]
  if not mat then error(("model must be springs, springs_pbd or baraff_witkin, got %q"):format(tostring(model)), 0) end
  world:rigid { name = "floor", shape = loom.shape.box(1.5, 1.5, 0.05), position = {0, 0, -0.05}, static = true }
  world:rigid { name = "body", shape = loom.shape.mesh(loom.mesh.load("meshes/lumpy.obj")), static = true }
  local cells = math.floor(p.n) - 1
  local def = {
    name = "cloth", model = model, integrator = "verlet_001",
    mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = {0, 0, 0.8} },
    stretch = mat.stretch, shear = mat.shear, bend = p.bend ~= 0 and mat.bend or 0,
    density = 0.2, thickness = 0.004, friction = 0.4,
  }
  if model == "springs_pbd" then
    def.iterations, def.substeps = p.iterations, 10
  elseif model == "springs" then
    def.relative_damping = p.kd
  else
    def.area_exponent = p.area_exponent
  end
  world:cloth(def)
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %s   %d substeps   %d contacts   %.2f ms/step"):format(world.time, scene.params.model,
    st.substeps, st.contacts, st.step_ms))
end

return scene
