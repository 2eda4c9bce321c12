-- export_scene.lua — a Loom scene of rigid bodies written as plain text, for the peers' programs
-- (bullet_scene.cpp, ode_scene.c, mujoco_scene.c) to build the same bodies.
--
--   build/loom exec scripts/peers/export_scene.lua SCENE.lua OUT.txt
--
-- Every world:rigid call of the scene's build is recorded (the definition as given, the body's
-- mass and the diagonal of its inertia (kg m^2, at the start pose) as Loom computed them; the
-- position is the centre of mass, and a convex shape is written as its hull's vertices about it.
-- Lines:
--   dt <s>
--   gravity <x> <y> <z>
--   body <name> static|kinematic|dynamic <mass kg> <Ixx> <Iyy> <Izz> <friction> <restitution>
--        <x> <y> <z> <qw> <qx> <qy> <qz>
--        sphere <r> | box <hx> <hy> <hz> | capsule <r> <half height> | cylinder <r> <half height> |
--        convex <n> <x y z> ... (n vertices) <m> <i j k> ... (m triangles, counter-clockwise seen
--        from outside, indices from 0)
-- Friction is per body; Loom combines two as sqrt(mu_a mu_b), restitution as the larger. Exits 1
-- with a message for a shape the peers do not take (triangle meshes, planes).
local loom = require "loom"
local worldmod = require "loom.world"

local scene_path, out_path = arg and arg[1], arg and arg[2]
if not scene_path or not out_path then
  io.stderr:write("usage: loom exec export_scene.lua SCENE.lua OUT.txt\n")
  os.exit(2)
end

local recorded = {}
local rigid = worldmod.World.rigid
worldmod.World.rigid = function(W, def)
  local b = rigid(W, def)
  recorded[#recorded + 1] = {def = def, body = b}
  return b
end

local sc = loom.load_scene(scene_path)
local W = sc:instantiate()
worldmod.World.rigid = rigid

local lines = {("dt %.17g"):format(W.dt)}
local g = W.gravity
lines[#lines + 1] = ("gravity %.17g %.17g %.17g"):format(g.x or g[1], g.y or g[2], g.z or g[3])
for _, r in ipairs(recorded) do
  local d, b = r.def, r.body
  local kind = d.static and "static" or (d.kinematic and "kinematic" or "dynamic")
  local s = d.shape
  local shape
  if s.kind == "sphere" then
    shape = ("sphere %.17g"):format(s.radius)
  elseif s.kind == "box" then
    shape = ("box %.17g %.17g %.17g"):format(s.half_extents[1], s.half_extents[2], s.half_extents[3])
  elseif s.kind == "capsule" or s.kind == "cylinder" then
    shape = ("%s %.17g %.17g"):format(s.kind, s.radius, s.half_height)
  elseif s.kind == "convex" then
    local m = b:shape_mesh() -- the hull in the body's frame: its origin the centre of mass
    local v, parts = m:vertices(), {}
    for i = 0, m.vertex_count - 1 do parts[#parts + 1] = ("%.17g %.17g %.17g"):format(v[i].x, v[i].y, v[i].z) end
    local t, tris = m:triangles(), {}
    for i = 0, 3 * m.triangle_count - 1 do tris[#tris + 1] = tostring(t[i]) end
    shape = ("convex %d %s %d %s"):format(m.vertex_count, table.concat(parts, " "), m.triangle_count, table.concat(tris, " "))
  else
    io.stderr:write(("export_scene: %s: body '%s' has a %s shape, which the peers' programs do not take\n"):format(scene_path, b.name, s.kind))
    os.exit(1)
  end
  local p, q = b.position, d.orientation or {1, 0, 0, 0}
  local mass, I = 0, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
  if kind == "dynamic" then mass, I = b.mass, b.inertia end
  lines[#lines + 1] = ("body %s %s %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %s"):format(
    b.name:gsub("%s", "_"), kind, mass, I[1][1], I[2][2], I[3][3], d.friction or 0.3, d.restitution or 0,
    p.x, p.y, p.z, q[1], q[2], q[3], q[4], shape)
end
local f = assert(io.open(out_path, "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
print(("export_scene: %s: %d bodies -> %s"):format(scene_path, #recorded, out_path))
