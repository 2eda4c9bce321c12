-- Writes the two scene folders of document 000's format used by tests/lua/dpo_test.lua, from the
-- format described in the reference (world_parameters, bodies/body_list, dpo_/rig_/par_/vel_
-- files, ASCII STL meshes). Run from the repository root to regenerate them:
--   build/loom exec tests/data/dpo/make.lua
local loom = require "loom"
local C = loom.C

local root = "tests/data/dpo"

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function stl(name, meshes)
  local out = {"solid " .. name}
  for _, m in ipairs(meshes) do
    local v, tri = C.loom_mesh_vertices(m), C.loom_mesh_triangles(m)
    for t = 0, C.loom_mesh_triangle_count(m) - 1 do
      local a, b, c = v[tri[3 * t]], v[tri[3 * t + 1]], v[tri[3 * t + 2]]
      local ux, uy, uz = b.x - a.x, b.y - a.y, b.z - a.z
      local wx, wy, wz = c.x - a.x, c.y - a.y, c.z - a.z
      local nx, ny, nz = uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx
      local l = math.sqrt(nx * nx + ny * ny + nz * nz)
      out[#out + 1] = ("facet normal %e %e %e"):format(nx / l, ny / l, nz / l)
      out[#out + 1] = "outer loop"
      for _, p in ipairs {a, b, c} do out[#out + 1] = ("vertex %e %e %e"):format(p.x, p.y, p.z) end
      out[#out + 1] = "endloop"
      out[#out + 1] = "endfacet"
    end
  end
  out[#out + 1] = "endsolid " .. name
  return table.concat(out, "\n") .. "\n"
end

-- vertex ids as 000 numbers them: merged vertices in order of first appearance in the STL
local function id_near(path, p)
  local m = loom.mesh.load(path)
  local v = C.loom_mesh_vertices(m)
  local best, bd = -1, math.huge
  for i = 0, C.loom_mesh_vertex_count(m) - 1 do
    local d = (v[i].x - p[1]) ^ 2 + (v[i].y - p[2]) ^ 2 + (v[i].z - p[3]) ^ 2
    if d < bd then best, bd = i, d end
  end
  return best
end

local world_parameters = [[
World parameters:
Please only change the values of the world parameters. Do not change the
order and do not delete a parameter.
Gravity (m/s^2) = 9.81
Framerate (frames/second) = 100
End of file.
]]

local list_header = [[
Here the user can add the files to be taken into account when
loading bodies. The files can start with: dpo (if they contain
information about a deformable planar object), rig (if they
contain information about a rigid object) or vel ( if they
contain information about velocity constraints which affect
objects). NOTE: vel files must be located after the files
that contain the dpo or rig objects that they refer to.
Start the list from here:
]]

local function par(density, mass, thickness, rgb)
  return ([[
The user can enter here the parameters of each body. The parameters should
not be reordered or deleted. Rigid and deformable objects share some parameters.
Unecessary parameters will not be read:
Density (kg/m^2 only used for DPO) = %g
Mass (kg only used for Rigid Objects) = %g
Thickness (m) (for Rigid Objects this should be zero) = %g
Diffuse color (rgb) = %s
]]):format(density, mass, thickness, rgb)
end

-- ClothOnTable: a 0.6 m cloth held at its two far corners, 0.2 m above the table, falls onto it.
do
  local dir = root .. "/ClothOnTable"
  os.execute("mkdir -p " .. dir .. "/bodies")
  write(dir .. "/world_parameters", world_parameters)
  write(dir .. "/bodies/body_list", list_header .. "dpo ClothOnTable\npar ClothOnTable\nvel ClothOnTable\nrig table\npar_ table\nvel table\n")
  local cloth = loom.mesh.grid { width = 0.6, length = 0.6, wDiv = 15, lDiv = 15, centre = {0, -0.05, 0.9} }
  write(dir .. "/bodies/dpo_ClothOnTable", stl("ClothOnTable", {cloth}))
  local top = loom.mesh.box { half_extents = {0.4, 0.3, 0.015}, center = {0, 0, 0.685} }
  local legs = {}
  for _, x in ipairs {-0.37, 0.37} do
    for _, y in ipairs {-0.27, 0.27} do
      legs[#legs + 1] = loom.mesh.box { half_extents = {0.02, 0.02, 0.335}, center = {x, y, 0.335} }
    end
  end
  write(dir .. "/bodies/rig_table", stl("table", {top, legs[1], legs[2], legs[3], legs[4]}))
  write(dir .. "/bodies/par_ClothOnTable", par(0.2, 0, 0.003, "0 0 0.9"))
  write(dir .. "/bodies/par_table", par(1, 0, 0, "0.6 0.4 0.2"))
  local a = id_near(dir .. "/bodies/dpo_ClothOnTable", {-0.3, 0.25, 0.9})
  local b = id_near(dir .. "/bodies/dpo_ClothOnTable", {0.3, 0.25, 0.9})
  write(dir .. "/bodies/vel_ClothOnTable", ("Time 0\nNumber of constraint vectors 2\nVertexId %d Vector [ 0 0 0 ]\nVertexId %d Vector [ 0 0 0 ]\n"):format(a, b))
  write(dir .. "/bodies/vel_table", "Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector [ 0 0 0 ]\n")
end

-- HangingCloth: a 1 m cloth (fabricCreator 1 1 15 15 0 0 1.3) whose two corners the velocity file
-- holds, lifts, lets go and takes again (the example timeline of the reference, on two corners).
do
  local dir = root .. "/HangingCloth"
  os.execute("mkdir -p " .. dir .. "/environment/world_parameters " .. dir .. "/environment/bodies")
  write(dir .. "/environment/world_parameters/world_parameters", world_parameters)
  write(dir .. "/environment/bodies/body_list", list_header .. "dpo HangingCloth\npar HangingCloth\nvel HangingCloth\n")
  local cloth = loom.mesh.grid { width = 1, length = 1, wDiv = 15, lDiv = 15, centre = {0, 0, 1.3} }
  local path = dir .. "/environment/bodies/dpo_HangingCloth"
  write(path, stl("HangingCloth", {cloth}))
  write(dir .. "/environment/bodies/par_HangingCloth", par(0.3, 0, 0.003, "0.8 0.1 0.1"))
  local a, b = id_near(path, {-0.5, 0.5, 1.3}), id_near(path, {0.5, 0.5, 1.3})
  write(dir .. "/environment/bodies/vel_HangingCloth", ([[
Time 0
Number of constraint vectors 2
VertexId %d Vector [ 0 0 0 ]
VertexId %d Vector [ 0 0 0 ]

Time 1
Number of constraint vectors 2
VertexId %d Vector [ 0 0 0.1 ]
VertexId %d Vector [ 0 0 0.1 ]

Time 2
Number of constraint vectors 1
VertexId %d Vector [ 0 0 0 ]

Time 2.5 Number of constraint vectors 2 VertexId %d Vector [ -0.1 0.1 0 ] VertexId %d Vector [ 0.1 0.1 0 ]
]]):format(a, b, a, b, a, a, b))
end
print("wrote " .. root .. "/ClothOnTable and " .. root .. "/HangingCloth")
