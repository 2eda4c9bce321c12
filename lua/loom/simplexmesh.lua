-- loom.mesh's simplex meshes (document 004): every vertex has exactly three neighbours. They are
-- the duals of closed triangulations; the generators make 004's sphere, torus and cylinder at
-- low, medium and high density (medium: 004's counts), loom.mesh.simplex_dual any closed mesh.
local ffi = require "ffi"
local C = require "loom.lib"
local check = require "loom.check"
local caller = require "loom.caller"

local M = {}

local function last_error() return ffi.string(C.loom_last_error()) end

local function own(ptr, fname)
  if ptr == nil then caller.error(fname .. ": " .. last_error()) end
  return ffi.gc(ptr, C.loom_simplex_mesh_destroy)
end

local SimplexMesh = {}
local props = {
  vertex_count = function(m) return C.loom_simplex_mesh_vertex_count(m) end,
  edge_count = function(m) return C.loom_simplex_mesh_edge_count(m) end,
  face_count = function(m) return C.loom_simplex_mesh_face_count(m) end,
  triangle_count = function(m) return C.loom_simplex_mesh_triangle_count(m) end,
  -- V - E + F: 2 for a sphere or a closed cylinder, 0 for a torus
  euler_characteristic = function(m)
    return C.loom_simplex_mesh_vertex_count(m) - C.loom_simplex_mesh_edge_count(m) + C.loom_simplex_mesh_face_count(m)
  end,
  shape = function(m)
    local s = C.loom_simplex_mesh_shape(m, nil, nil, nil)
    return ({[0] = "dual", "sphere", "torus", "cylinder"})[s]
  end,
}

local function vertex_index(m, i, fname)
  local n = C.loom_simplex_mesh_vertex_count(m)
  if type(i) ~= "number" or i ~= math.floor(i) or i < 0 or i >= n then
    check.raise_n(1, fname, ("expected a vertex index in [0, %d], got %s"):format(n - 1, check.describe(i)))
  end
  return i
end

-- mesh:neighbors(i) → {j1, j2, j3}: the three neighbours of vertex i (0-based) in 004's
-- rotational order (-normalize((x[j2] - x[j1]) x (x[j3] - x[j2])) is the outward normal).
function SimplexMesh.neighbors(m, i)
  vertex_index(m, i, "neighbors")
  local nb = C.loom_simplex_mesh_neighbors(m)
  return {nb[3 * i], nb[3 * i + 1], nb[3 * i + 2]}
end

-- mesh:face(f) → {vertex indices}: face f's cycle, counter-clockwise seen from outside.
function SimplexMesh.face(m, f)
  local nf = C.loom_simplex_mesh_face_count(m)
  if type(f) ~= "number" or f ~= math.floor(f) or f < 0 or f >= nf then
    check.raise_n(1, "face", ("expected a face index in [0, %d], got %s"):format(nf - 1, check.describe(f)))
  end
  local off, fv = C.loom_simplex_mesh_face_offsets(m), C.loom_simplex_mesh_face_vertices(m)
  local out = {}
  for k = off[f], off[f + 1] - 1 do out[#out + 1] = fv[k] end
  return out
end

-- 0-based FFI arrays valid while the mesh is alive
function SimplexMesh.vertices(m) return C.loom_simplex_mesh_vertices(m) end
function SimplexMesh.edges(m) return C.loom_simplex_mesh_edges(m) end
function SimplexMesh.triangles(m) return C.loom_simplex_mesh_triangles(m) end
function SimplexMesh.neighbor_array(m) return C.loom_simplex_mesh_neighbors(m) end
function SimplexMesh.copy(m) return own(C.loom_simplex_mesh_copy(m), "simplex_mesh:copy") end

-- mesh:normals([x]) → FFI array of 004's vertex normals (of positions x, an FFI vec3 array or a
-- body's x, or the mesh's own)
function SimplexMesh.normals(m, x)
  local n = C.loom_simplex_mesh_vertex_count(m)
  local out = ffi.new("loom_vec3[?]", n)
  local px = nil
  if x ~= nil then
    if type(x) == "cdata" and (ffi.istype("loom_vec3_array", x) or ffi.istype("loom_const_vec3_array", x)) then
      if x.n ~= n then check.raise_n(1, "normals", ("expected %d positions, got %d"):format(n, x.n)) end
      px = x.p
    elseif type(x) == "cdata" then
      px = x
    else
      check.raise_n(1, "normals", "expected positions (a body's x or an FFI vec3 array), got " .. check.describe(x))
    end
  end
  if C.loom_simplex_mesh_normals(m, px, out) ~= 0 then caller.error("normals: " .. last_error()) end
  return out
end

-- mesh:transform{scale = s, translate = {x, y, z}} moves the vertices (a uniform scale keeps the
-- generator's surface description true; other transforms make it a plain dual)
function SimplexMesh.transform(m, t)
  local d, err = check.fields(t or {}, {scale = {"number", min = 0, open_min = true}, translate = {"vec3"}})
  if not d then check.raise("transform", err) end
  local v, n = C.loom_simplex_mesh_vertices(m), C.loom_simplex_mesh_vertex_count(m)
  local s, tr = d.scale or 1, d.translate or {0, 0, 0}
  for i = 0, n - 1 do
    v[i].x, v[i].y, v[i].z = v[i].x * s + tr[1], v[i].y * s + tr[2], v[i].z * s + tr[3]
  end
  return m
end

ffi.metatype("struct loom_simplex_mesh", {
  __index = function(m, k)
    local p = props[k]
    if p then return p(m) end
    return SimplexMesh[k]
  end,
  __tostring = function(m)
    return ("loom.simplex_mesh (%d vertices, %d edges, %d faces)"):format(C.loom_simplex_mesh_vertex_count(m),
      C.loom_simplex_mesh_edge_count(m), C.loom_simplex_mesh_face_count(m))
  end,
})

function M.is_simplex_mesh(v) return type(v) == "cdata" and ffi.istype("loom_simplex_mesh*", v) end

-- densities: rings x segments of the triangulation whose dual is the mesh ("medium" is 004's)
M.densities = {
  sphere = {low = {9, 18}, medium = {18, 36}, high = {36, 72}},
  torus = {low = {15, 16}, medium = {30, 31}, high = {60, 62}},
  cylinder = {low = {6, 18}, medium = {12, 36}, high = {24, 72}},
}

local function resolution(fname, kind, d)
  if d.rings ~= nil or d.segments ~= nil then
    if d.rings == nil or d.segments == nil then
      check.raise(fname, "give both 'rings' and 'segments' (or a 'density')")
    end
    return d.rings, d.segments
  end
  local r = M.densities[kind][d.density]
  return r[1], r[2]
end

local density = {"string", default = "medium", choices = {"low", "medium", "high"}}
local count = {"number", integer = true, min = 1, max = 2048}

-- A generator: its size fields (name -> default), then density or rings/segments and a centre;
-- make(d, center, rings, segments) calls the kernel.
local function generator(kind, sizes, make)
  local fname = "simplex_" .. kind
  local spec = {center = {"vec3", default = {0, 0, 0}}, density = density, rings = count, segments = count}
  for name, default in pairs(sizes) do spec[name] = {"number", default = default, min = 0, open_min = true} end
  return function(def)
    local d, err = check.fields(def or {}, spec)
    if not d then check.raise(fname, err) end
    local rings, segs = resolution(fname, kind, d)
    local c = ffi.new("loom_vec3", d.center[1], d.center[2], d.center[3])
    return own(make(d, c, rings, segs), "loom.mesh")
  end
end

-- simplex_sphere{radius = 0.1, center = {0, 0, 0}, density = "low" | "medium" | "high" | rings =,
-- segments =}: medium is 004's 1296 vertices, 1944 edges, 650 faces
M.simplex_sphere = generator("sphere", {radius = 0.1},
  function(d, c, rings, segs) return C.loom_simplex_sphere(d.radius, c, rings, segs) end)

-- simplex_torus{R = 0.1, r = 0.035, center, density | rings (around the tube) =, segments (around
-- the axis) =}: around z; medium is 004's 1860 vertices, 2790 edges, 930 faces
M.simplex_torus = generator("torus", {R = 0.1, r = 0.035},
  function(d, c, rings, segs) return C.loom_simplex_torus(d.R, d.r, c, rings, segs) end)

-- simplex_cylinder{radius = 0.06, height = 0.2, center, density | rings (bands along the side) =,
-- segments =}: along z, closed by flat caps
M.simplex_cylinder = generator("cylinder", {radius = 0.06, height = 0.2},
  function(d, c, rings, segs) return C.loom_simplex_cylinder(d.radius, d.height, c, rings, segs) end)

-- simplex_dual(triangle_mesh): the simplex mesh dual to a closed, manifold, consistently oriented
-- triangle mesh (vertices at the triangles' centroids)
function M.simplex_dual(m)
  if not (type(m) == "cdata" and ffi.istype("loom_mesh*", m)) then
    check.raise_n(1, "loom.mesh.simplex_dual", "expected a closed triangle mesh, got " .. check.describe(m))
  end
  return own(C.loom_simplex_mesh_dual(m), "loom.mesh")
end

return M
