-- loom.mesh — triangle meshes: generators, OBJ/STL loading, and methods on the mesh cdata.
-- Meshes are standalone objects owned by Lua (freed by the garbage collector); bodies copy them.
local ffi = require "ffi"
local C = require "loom.lib"
local check = require "loom.check"
local caller = require "loom.caller"
local tet = require "loom.tetmesh"
local simplex = require "loom.simplexmesh"

local M = {}

-- Files loaded by the running scene (the host watches them for hot reload).
M.loaded_files = {}

local function last_error() return ffi.string(C.loom_last_error()) end

local function own(ptr, fname)
  if ptr == nil then caller.error(fname .. ": " .. last_error()) end
  return ffi.gc(ptr, C.loom_mesh_destroy)
end

local Mesh = {}
local props = {
  vertex_count = function(m) return C.loom_mesh_vertex_count(m) end,
  triangle_count = function(m) return C.loom_mesh_triangle_count(m) end,
  edge_count = function(m) return C.loom_mesh_edge_count(m) end,
  hinge_count = function(m) return C.loom_mesh_hinge_count(m) end,
}

-- 0-based FFI arrays, valid while the mesh is alive: vertices (n x loom_vec3), triangles (3 t int32).
function Mesh.vertices(m) return C.loom_mesh_vertices(m) end
function Mesh.triangles(m) return C.loom_mesh_triangles(m) end
function Mesh.aabb(m)
  local lo, hi = ffi.new("loom_vec3"), ffi.new("loom_vec3")
  C.loom_mesh_aabb(m, lo, hi)
  return {lo.x, lo.y, lo.z}, {hi.x, hi.y, hi.z}
end
function Mesh.copy(m) return own(C.loom_mesh_copy(m), "mesh:copy") end
-- mesh:weld([tol]) → a new mesh whose vertices within tol (m, default 0: the same point) of a
-- lower-numbered one are merged into it (renumbered; triangles that collapse dropped): pieces made
-- with from_arrays or merge{} that share border points become one surface
function Mesh.weld(m, tol)
  if tol ~= nil and not (check.is_finite(tol) and tol >= 0) then
    check.raise("weld", ("'tol' must be a finite number >= 0 (m), got %s"):format(check.describe(tol)))
  end
  return own(C.loom_mesh_weld(m, tol or 0), "mesh:weld")
end
-- mesh:transform{scale = s | {sx, sy, sz}, rotate = {w, x, y, z}, translate = {x, y, z}} → mesh
function Mesh.transform(m, t)
  local spec = {scale = {"any"}, rotate = {"table"}, translate = {"vec3"}}
  local d, err = check.fields(t or {}, spec)
  if not d then check.raise("transform", err) end
  local s
  if type(d.scale) == "number" then
    if not (check.is_finite(d.scale) and d.scale ~= 0) then check.raise("transform", "'scale' must be a non-zero number") end
    s = ffi.new("loom_vec3", d.scale, d.scale, d.scale)
  elseif d.scale ~= nil then
    local x, y, z = check.vec3(d.scale, "scale")
    if not x then check.raise("transform", y) end
    s = ffi.new("loom_vec3", x, y, z)
  end
  local q
  if d.rotate then
    local r = d.rotate
    if not (check.is_finite(r[1]) and check.is_finite(r[2]) and check.is_finite(r[3]) and check.is_finite(r[4])) then
      check.raise("transform", "'rotate' must be a quaternion {w, x, y, z}")
    end
    q = ffi.new("loom_quat", r[1], r[2], r[3], r[4])
  end
  local tr = d.translate and ffi.new("loom_vec3", d.translate[1], d.translate[2], d.translate[3]) or nil
  C.loom_mesh_transform(m, s, q, tr)
  return m
end
function Mesh.save_obj(m, path)
  if type(path) ~= "string" then check.raise_n(1, "save_obj", "expected a file path") end
  if C.loom_mesh_save_obj(m, nil, path) ~= 0 then caller.error("mesh:save_obj: " .. last_error()) end
end

ffi.metatype("struct loom_mesh", {
  __index = function(m, k)
    local p = props[k]
    if p then return p(m) end
    return Mesh[k]
  end,
  __tostring = function(m)
    return ("loom.mesh (%d vertices, %d triangles)"):format(C.loom_mesh_vertex_count(m), C.loom_mesh_triangle_count(m))
  end,
})

function M.is_mesh(v) return type(v) == "cdata" and ffi.istype("loom_mesh*", v) end

-- loom.mesh.hull(m) → the convex hull of m's vertices (a new mesh), and whether m was convex
function M.hull(m)
  if not M.is_mesh(m) then check.raise_n(1, "loom.mesh.hull", "expected a mesh, got " .. check.describe(m)) end
  local was = ffi.new("int[1]")
  local h = own(C.loom_mesh_convex_hull(m, was), "loom.mesh.hull")
  return h, was[0] == 1
end

-- loom.mesh.mass_properties(m, density) → mass (kg), centre of mass {x, y, z}, inertia about it
-- {{...}, {...}, {...}} (kg m^2) of a closed mesh: exact polyhedral integrals
function M.mass_properties(m, density)
  if not M.is_mesh(m) then check.raise_n(1, "loom.mesh.mass_properties", "expected a mesh, got " .. check.describe(m)) end
  density = density or 1000
  if not (check.is_finite(density) and density > 0) then
    check.raise_n(2, "loom.mesh.mass_properties", "'density' must be a positive number, got " .. check.describe(density))
  end
  local mass, com, I = ffi.new("double[1]"), ffi.new("loom_vec3[1]"), ffi.new("double[9]")
  if C.loom_mesh_mass_properties(m, density, mass, com, I) ~= 0 then caller.error("loom.mesh.mass_properties: " .. last_error()) end
  return mass[0], {com[0].x, com[0].y, com[0].z}, {{I[0], I[1], I[2]}, {I[3], I[4], I[5]}, {I[6], I[7], I[8]}}
end

local planes = {xy = 0, xz = 1, yz = 2}

-- grid{size = {w, h}, cells = {nx, ny}, center = {x, y, z}, plane = "xy" | "xz" | "yz"}
-- grid{width = w, length = l, wDiv = nx, lDiv = ny, centre = {x, y, z}}: document 000's
--   fabricCreator parameters (width along x, length along y, in the horizontal plane, z up).
local fabric_spec = {
  width = {"number", required = true, min = 0, open_min = true}, length = {"number", required = true, min = 0, open_min = true},
  wDiv = {"number", required = true, integer = true, min = 1, max = 4096},
  lDiv = {"number", required = true, integer = true, min = 1, max = 4096},
  centre = {"vec3", default = {0, 0, 0}},
}
function M.grid(def)
  if type(def) == "table" and (def.width ~= nil or def.length ~= nil or def.wDiv ~= nil or def.lDiv ~= nil or def.centre ~= nil) then
    local d, err = check.fields(def, fabric_spec)
    if not d then check.raise("grid", err .. " (fabricCreator form: width, length, wDiv, lDiv, centre)") end
    local c = ffi.new("loom_vec3", d.centre[1], d.centre[2], d.centre[3])
    return own(C.loom_mesh_grid(d.width, d.length, d.wDiv, d.lDiv, c, planes.xy), "loom.mesh.grid")
  end
  local d, err = check.fields(def, {
    size = {"table", default = {1, 1}}, cells = {"table", default = {16, 16}},
    center = {"vec3", default = {0, 0, 0}}, plane = {"string", default = "xy", choices = {"xy", "xz", "yz"}},
  })
  if not d then check.raise("grid", err) end
  local w, h = d.size[1], d.size[2]
  if not (check.is_finite(w) and w > 0 and check.is_finite(h) and h > 0) then
    check.raise("grid", "'size' must be {width, height} with positive numbers")
  end
  local nx, ny = d.cells[1], d.cells[2]
  if not (check.is_finite(nx) and nx == math.floor(nx) and nx >= 1 and nx <= 4096 and
          check.is_finite(ny) and ny == math.floor(ny) and ny >= 1 and ny <= 4096) then
    check.raise("grid", "'cells' must be {nx, ny} with integers in [1, 4096]")
  end
  local c = ffi.new("loom_vec3", d.center[1], d.center[2], d.center[3])
  return own(C.loom_mesh_grid(w, h, nx, ny, c, planes[d.plane]), "loom.mesh.grid")
end

local function int_in(v, lo, hi) return check.is_finite(v) and v == math.floor(v) and v >= lo and v <= hi end

local function place(m, center)
  if center then
    C.loom_mesh_transform(m, nil, nil, ffi.new("loom_vec3", center[1], center[2], center[3]))
  end
  return m
end

-- box{size = {sx, sy, sz} | half_extents = {hx, hy, hz}, divisions = 1, center = {x, y, z}}
function M.box(def)
  local d, err = check.fields(def or {}, {
    size = {"vec3"}, half_extents = {"vec3"}, divisions = {"number", default = 1},
    center = {"vec3"},
  })
  if not d then check.raise("box", err) end
  local h = d.half_extents or (d.size and {d.size[1] / 2, d.size[2] / 2, d.size[3] / 2}) or {0.5, 0.5, 0.5}
  if not int_in(d.divisions, 1, 256) then check.raise("box", "'divisions' must be an integer in [1, 256]") end
  return place(own(C.loom_mesh_box(h[1], h[2], h[3], d.divisions), "loom.mesh.box"), d.center)
end

-- sphere{radius = 0.5, segments = 32, rings = 16, center}
function M.sphere(def)
  local d, err = check.fields(def or {}, {
    radius = {"number", default = 0.5, min = 0, open_min = true}, segments = {"number", default = 32},
    rings = {"number", default = 16}, center = {"vec3"},
  })
  if not d then check.raise("sphere", err) end
  if not int_in(d.segments, 3, 4096) or not int_in(d.rings, 2, 4096) then
    check.raise("sphere", "'segments' must be an integer in [3, 4096] and 'rings' in [2, 4096]")
  end
  return place(own(C.loom_mesh_sphere(d.radius, d.segments, d.rings), "loom.mesh.sphere"), d.center)
end

local function half_height(d, fname)
  local hh = d.half_height or (d.height and d.height / 2) or 0.5
  if not (check.is_finite(hh) and hh > 0) then check.raise(fname, "'height' must be a positive number", 3) end
  return hh
end

-- cylinder{radius = 0.5, height = 1 | half_height, segments = 32, rings = 1, center}
function M.cylinder(def)
  local d, err = check.fields(def or {}, {
    radius = {"number", default = 0.5, min = 0, open_min = true}, height = {"number"}, half_height = {"number"},
    segments = {"number", default = 32}, rings = {"number", default = 1}, center = {"vec3"},
  })
  if not d then check.raise("cylinder", err) end
  if not int_in(d.segments, 3, 4096) or not int_in(d.rings, 1, 4096) then
    check.raise("cylinder", "'segments' must be an integer in [3, 4096] and 'rings' in [1, 4096]")
  end
  return place(own(C.loom_mesh_cylinder(d.radius, half_height(d, "cylinder"), d.segments, d.rings), "loom.mesh.cylinder"), d.center)
end

-- capsule{radius = 0.25, height = 1 | half_height (of the straight part), segments = 32, rings = 8, center}
function M.capsule(def)
  local d, err = check.fields(def or {}, {
    radius = {"number", default = 0.25, min = 0, open_min = true}, height = {"number"}, half_height = {"number"},
    segments = {"number", default = 32}, rings = {"number", default = 8}, center = {"vec3"},
  })
  if not d then check.raise("capsule", err) end
  if not int_in(d.segments, 3, 4096) or not int_in(d.rings, 1, 4096) then
    check.raise("capsule", "'segments' must be an integer in [3, 4096] and 'rings' in [1, 4096]")
  end
  return place(own(C.loom_mesh_capsule(d.radius, half_height(d, "capsule"), d.segments, d.rings), "loom.mesh.capsule"), d.center)
end

-- torus{major = 0.5, minor = 0.15, segments = {48, 16}, center}
function M.torus(def)
  local d, err = check.fields(def or {}, {
    major = {"number", default = 0.5, min = 0, open_min = true}, minor = {"number", default = 0.15, min = 0, open_min = true},
    segments = {"table", default = {48, 16}}, center = {"vec3"},
  })
  if not d then check.raise("torus", err) end
  if d.minor >= d.major then check.raise("torus", "'minor' must be smaller than 'major'") end
  local a, b = d.segments[1], d.segments[2]
  if not int_in(a, 3, 4096) or not int_in(b, 3, 4096) then
    check.raise("torus", "'segments' must be {major, minor} with integers in [3, 4096]")
  end
  return place(own(C.loom_mesh_torus(d.major, d.minor, a, b), "loom.mesh.torus"), d.center)
end

-- weld(mesh [, tol]) → mesh:weld(tol)
function M.weld(m, tol)
  if not M.is_mesh(m) then check.raise_n(1, "loom.mesh.weld", ("expected a mesh, got %s"):format(check.describe(m))) end
  return m:weld(tol)
end

-- load(path): OBJ or STL (ASCII or binary), duplicate vertices merged. A relative path is looked
-- up next to the file that calls load first (the scene or test), then in the current directory.
-- merge{mesh, mesh, ...} → one mesh holding all their vertices and triangles (the pieces stay
-- separate components: a union of closed pieces is what loom.mesh.tet_fill fills)
function M.merge(list)
  if type(list) ~= "table" or #list == 0 then check.raise_n(1, "loom.mesh.merge", "expected a list of meshes") end
  local nv, nt = 0, 0
  for i, m in ipairs(list) do
    if not M.is_mesh(m) then check.raise_n(1, "loom.mesh.merge", ("item %d is not a mesh: %s"):format(i, check.describe(m))) end
    nv, nt = nv + m.vertex_count, nt + m.triangle_count
  end
  local v = ffi.new("loom_vec3[?]", math.max(nv, 1))
  local t = ffi.new("int32_t[?]", math.max(3 * nt, 1))
  local ov, ot = 0, 0
  for _, m in ipairs(list) do
    local mv, mt = C.loom_mesh_vertices(m), C.loom_mesh_triangles(m)
    for i = 0, m.vertex_count - 1 do v[ov + i] = mv[i] end
    for i = 0, 3 * m.triangle_count - 1 do t[3 * ot + i] = mt[i] + ov end
    ov, ot = ov + m.vertex_count, ot + m.triangle_count
  end
  return own(C.loom_mesh_from_arrays(v, nv, t, nt), "loom.mesh.merge")
end

-- A .node/.ele (TetGen) or .msh (Gmsh) path gives a tetrahedral mesh (loom.mesh.tet_box's kind).
function M.load(path)
  if type(path) ~= "string" then check.raise_n(1, "loom.mesh.load", "expected a file path, got " .. check.describe(path)) end
  path = caller.resolve(path)
  M.loaded_files[#M.loaded_files + 1] = path
  local tm = tet.load(path, "loom.mesh.load")
  if tm then return tm end
  return own(C.loom_mesh_load(path), "loom.mesh.load")
end

M.tet_box = tet.tet_box
M.tet_fill = tet.tet_fill
M.tet_from_arrays = tet.tet_from_arrays
M.is_tet_mesh = tet.is_tet_mesh
M.simplex_sphere = simplex.simplex_sphere
M.simplex_torus = simplex.simplex_torus
M.simplex_cylinder = simplex.simplex_cylinder
M.simplex_dual = simplex.simplex_dual
M.is_simplex_mesh = simplex.is_simplex_mesh

-- from_arrays(vertices, triangles): vertices = {{x, y, z}, ...}, triangles = {{a, b, c}, ...} with
-- 0-based vertex indices (as everywhere in Loom).
function M.from_arrays(vertices, triangles)
  if type(vertices) ~= "table" then check.raise_n(1, "from_arrays", "expected a table of {x, y, z}") end
  if type(triangles) ~= "table" then check.raise_n(2, "from_arrays", "expected a table of {a, b, c}") end
  local nv, nt = #vertices, #triangles
  local v = ffi.new("loom_vec3[?]", math.max(nv, 1))
  for i = 1, nv do
    local x, y, z = check.vec3(vertices[i], "vertices[" .. i .. "]")
    if not x then check.raise_n(1, "from_arrays", y) end
    v[i - 1].x, v[i - 1].y, v[i - 1].z = x, y, z
  end
  local t = ffi.new("int32_t[?]", math.max(3 * nt, 1))
  for i = 1, nt do
    local tri = triangles[i]
    if type(tri) ~= "table" then check.raise_n(2, "from_arrays", "triangle " .. i .. " is not a table") end
    for k = 1, 3 do
      local idx = tri[k]
      if not (check.is_finite(idx) and idx == math.floor(idx)) then
        check.raise_n(2, "from_arrays", ("triangle %d: index %d is not an integer"):format(i, k))
      end
      t[3 * (i - 1) + k - 1] = idx
    end
  end
  return own(C.loom_mesh_from_arrays(v, nv, t, nt), "loom.mesh.from_arrays")
end

return M
