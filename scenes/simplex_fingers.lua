-- Document 004's demo: a simplex-mesh object (torus, sphere or cylinder) squeezed by five rigid
-- finger spheres. Each finger moves along its own straight path, placed by a value in [0, 255]
-- (0 = open, at the path's start; 255 = closed, at its end), as 004's data glove placed them.
--   --param object=torus|sphere|cylinder   --param density=low|medium|high (or --param rings=, segments=)
--   --param input=replay (the recorded squeeze in scenes/input/fingers_squeeze.csv, the default)
--   --param input=live   (gamepad axes 1-5 or, without one, hold keys 1-5)
--   --param plastic=true (clay: once the fingers let go, the dented shape becomes the rest shape;
--                         the 'reset' button brings the original back)
--   --param model=simplex_shape (the rotation-invariant model)   --param response=pd (004's PD)
local loom = require "loom"

local scene = loom.scene {
  title  = "Simplex object squeezed by five fingers (document 004)",
  dt     = 1 / 30,
  gravity = {0, 0, 0}, -- 004's objects float, held by their anchors
  params = { object = "torus", density = "medium", input = "replay", fingers = "input/fingers_squeeze.csv",
             k = 0.1, k_anchor = 0.05, mass = 0.001, damping = 0.01, model = "simplex_mra", response = "project",
             plastic = false, radius = 0.012, friction = 0.0, rings = 0, segments = 0 },
  camera = { target = {0.06, 0, 0}, distance = 0.5, azimuth = 60, elevation = 35 },
}

-- Where each finger starts (open) and ends (closed) for each object: the thumb opposes the four
-- fingers across the part of the object they squeeze.
local function finger_paths(object)
  local paths = {}
  local deg = math.pi / 180
  if object == "torus" then
    -- the tube at x = 0.1 (R = 0.1, r = 0.035): the thumb from the hole, four fingers from outside
    paths[1] = {{0.03, 0, 0.03}, {0.08, 0, 0.0}}
    for i, a in ipairs {-30, -10, 10, 30} do
      local c, s = math.cos(a * deg), math.sin(a * deg)
      paths[i + 1] = {{0.19 * c, 0.19 * s, 0.03}, {0.118 * c, 0.118 * s, 0.0}}
    end
  elseif object == "sphere" then
    -- a ball of radius 0.08: the thumb from -x, four fingers from +x, 2 cm deep
    paths[1] = {{-0.16, 0, 0.0}, {-0.06, 0, 0.0}}
    for i, a in ipairs {-48, -16, 16, 48} do
      local c, s = math.cos(a * deg), math.sin(a * deg)
      paths[i + 1] = {{0.16 * c, 0.16 * s, 0.02}, {0.065 * c, 0.065 * s, 0.0}}
    end
  else
    -- a cylinder of radius 0.06 along z: the thumb from -x, four fingers from +x up its side
    paths[1] = {{-0.14, 0, 0.0}, {-0.038, 0, 0.0}}
    for i, z in ipairs {-0.06, -0.02, 0.02, 0.06} do
      paths[i + 1] = {{0.14, 0, z}, {0.04, 0, z}}
    end
  end
  return paths
end

function scene.build(world, p)
  local mesh
  -- rings and segments (both > 0) give the triangulation's resolution instead of a density
  local res = p.rings > 0 and p.segments > 0 and {rings = p.rings, segments = p.segments} or {density = p.density}
  if p.object == "torus" then
    mesh = loom.mesh.simplex_torus { R = 0.1, r = 0.035, density = res.density, rings = res.rings, segments = res.segments }
  elseif p.object == "sphere" then
    mesh = loom.mesh.simplex_sphere { radius = 0.08, density = res.density, rings = res.rings, segments = res.segments }
  elseif p.object == "cylinder" then
    mesh = loom.mesh.simplex_cylinder { radius = 0.06, height = 0.2, density = res.density, rings = res.rings,
                                        segments = res.segments }
  else
    error(("'object' must be torus, sphere or cylinder, got %q"):format(tostring(p.object)), 0)
  end
  world:simplex { name = "object", mesh = mesh, model = p.model, k = p.k, k_anchor = p.k_anchor, mass = p.mass,
                  damping = p.damping, response = p.response, friction = p.friction }
  local source
  if p.input == "replay" then
    local rec = loom.input.replay(p.fingers) -- relative to this file
    source = function(i) return rec:channel(i) end
  elseif p.input == "live" then
    loom.input.stop_replay()
    source = function(i) return function(t) return loom.input.finger(i, t) end end
  else
    error(("'input' must be replay or live, got %q"):format(tostring(p.input)), 0)
  end
  for i, path in ipairs(finger_paths(p.object)) do
    local f = world:rigid { name = "finger " .. i, shape = loom.shape.sphere(p.radius), kinematic = true,
                            position = path[1] }
    f:follow(loom.trajectory.along { points = path, value = source(i) })
  end
  world._fingers_closed = false
end

-- plastic clay: when every finger has opened again after a squeeze, keep the dent
function scene.on_step(world)
  if not scene.params.plastic then return end
  local o = world:body "object"
  local pen = o:penetrations(0)
  local touching = world:stats().tool_contacts > 0
  if touching then world._fingers_closed = true end
  if world._fingers_closed and not touching and pen == 0 then
    o:set_rest()
    world._fingers_closed = false
  end
end

scene.display = { faces = true, simplex_edges = false, wireframe = false, vertices = false, centroids = false,
                  face_normals = false, vertex_normals = false, stereo = "off" }

function scene.ui(ui, world)
  local o = world:body "object"
  local s = world:stats()
  ui.text(("t = %.2f s   %d vertices   tool pushes %d   penetrating pairs %d"):format(world.time, o.n,
    s.tool_contacts, o:penetrations(0)))
  local d = scene.display
  ui.checkbox("faces", d, "faces")
  ui.checkbox("simplex edges", d, "simplex_edges")
  ui.checkbox("triangles (wireframe)", d, "wireframe")
  ui.checkbox("vertices", d, "vertices")
  ui.checkbox("centroids", d, "centroids")
  ui.checkbox("face normals", d, "face_normals")
  ui.checkbox("vertex normals", d, "vertex_normals")
  if ui.button("stereo: " .. d.stereo) then
    d.stereo = ({off = "anaglyph", anaglyph = "side_by_side", side_by_side = "off"})[d.stereo]
  end
  if ui.button("keep shape (plastic)") then o:set_rest() end
  if ui.button("reset") then o:reset() end
  world.display = d
end

return scene
