-- loom.mesh's tetrahedral meshes: lattices of a box, lattices that fill a closed surface, TetGen
-- (.node/.ele/.face) and Gmsh (.msh v2 and v4 ASCII) loaders, and methods on the tet-mesh cdata.
-- The kernel validates every mesh (orientation, zero volume, non-manifold faces, unused vertices)
-- and builds edges and the surface; the loaders here only parse text and say where it is wrong.
local ffi = require "ffi"
local C = require "loom.lib"
local check = require "loom.check"
local caller = require "loom.caller"

local M = {}

local function last_error() return ffi.string(C.loom_last_error()) end

local function own(ptr, fname)
  if ptr == nil then caller.error(fname .. ": " .. last_error()) end
  return ffi.gc(ptr, C.loom_tet_mesh_destroy)
end

local TetMesh = {}
local props = {
  vertex_count = function(m) return C.loom_tet_mesh_vertex_count(m) end,
  tet_count = function(m) return C.loom_tet_mesh_tet_count(m) end,
  edge_count = function(m) return C.loom_tet_mesh_edge_count(m) end,
  triangle_count = function(m) return C.loom_tet_mesh_triangle_count(m) end,
  flipped = function(m) return C.loom_tet_mesh_flipped(m) == 1 end,
}

-- 0-based FFI arrays valid while the mesh is alive
function TetMesh.vertices(m) return C.loom_tet_mesh_vertices(m) end
function TetMesh.tets(m) return C.loom_tet_mesh_tets(m) end
function TetMesh.edges(m) return C.loom_tet_mesh_edges(m) end
function TetMesh.triangles(m) return C.loom_tet_mesh_triangles(m) end
function TetMesh.volume(m) return C.loom_tet_mesh_volume(m) end
function TetMesh.copy(m) return own(C.loom_tet_mesh_copy(m), "tet_mesh:copy") end
-- the surface as a triangle mesh (same vertex indices)
function TetMesh.surface(m)
  local s = C.loom_tet_mesh_surface(m)
  if s == nil then caller.error("tet_mesh:surface: " .. last_error()) end
  return ffi.gc(s, C.loom_mesh_destroy)
end

-- rotation about x, then y, then z (radians; document 002's Rotate) as a quaternion {w, x, y, z}
function M.euler_quat(e)
  local function axis(ax, ang)
    local sn = math.sin(ang / 2)
    return {math.cos(ang / 2), ax == 1 and sn or 0, ax == 2 and sn or 0, ax == 3 and sn or 0}
  end
  local function mul(a, b)
    return {a[1] * b[1] - a[2] * b[2] - a[3] * b[3] - a[4] * b[4], a[1] * b[2] + a[2] * b[1] + a[3] * b[4] - a[4] * b[3],
            a[1] * b[3] - a[2] * b[4] + a[3] * b[1] + a[4] * b[2], a[1] * b[4] + a[2] * b[3] - a[3] * b[2] + a[4] * b[1]}
  end
  return mul(axis(3, e[3]), mul(axis(2, e[2]), axis(1, e[1])))
end

-- q * v for a unit quaternion {w, x, y, z}
local function qrot(q, x, y, z)
  local w, qx, qy, qz = q[1], q[2], q[3], q[4]
  local tx, ty, tz = 2 * (qy * z - qz * y), 2 * (qz * x - qx * z), 2 * (qx * y - qy * x)
  return x + w * tx + (qy * tz - qz * ty), y + w * ty + (qz * tx - qx * tz), z + w * tz + (qx * ty - qy * tx)
end

-- tet_mesh:transform{rotate = {w, x, y, z} | euler = {rx, ry, rz}, scale = s | {sx, sy, sz},
-- translate = {x, y, z}}: x' = R(S x) ... applied in document 002's order rotate -> scale ->
-- translate: x' = S (R x) + t. A mirror (negative scale) flips every tet, which is refused.
function TetMesh.transform(m, t)
  local d, err = check.fields(t or {}, {scale = {"any"}, rotate = {"table"}, euler = {"vec3"}, translate = {"vec3"}})
  if not d then check.raise("transform", err) end
  local sx, sy, sz = 1, 1, 1
  if type(d.scale) == "number" then
    sx, sy, sz = d.scale, d.scale, d.scale
  elseif d.scale ~= nil then
    local e
    sx, sy, sz = check.vec3(d.scale, "scale")
    if not sx then e = sy check.raise("transform", e) end
  end
  if not (check.is_finite(sx) and check.is_finite(sy) and check.is_finite(sz) and sx > 0 and sy > 0 and sz > 0) then
    check.raise("transform", "'scale' must be positive (a mirror would invert every tet)")
  end
  local q = d.rotate
  if d.euler then q = M.euler_quat(d.euler) end
  if q then
    local n = math.sqrt(q[1] ^ 2 + q[2] ^ 2 + q[3] ^ 2 + q[4] ^ 2)
    if not (check.is_finite(n) and n > 0) then check.raise("transform", "'rotate' must be a quaternion {w, x, y, z}") end
    q = {q[1] / n, q[2] / n, q[3] / n, q[4] / n}
  end
  local tr = d.translate or {0, 0, 0}
  local v = C.loom_tet_mesh_vertices(m)
  for i = 0, C.loom_tet_mesh_vertex_count(m) - 1 do
    local x, y, z = v[i].x, v[i].y, v[i].z
    if q then x, y, z = qrot(q, x, y, z) end
    v[i].x, v[i].y, v[i].z = sx * x + tr[1], sy * y + tr[2], sz * z + tr[3]
  end
  if C.loom_tet_mesh_check(m) ~= 0 then caller.error("transform: " .. last_error()) end
  return m
end

-- tet_mesh:save(path): Gmsh ASCII (.msh, version 2.2; ".msh4" writes version 4.1 to a .msh name
-- given as opts.version = 4) or TetGen (.node, with .ele next to it)
function TetMesh.save(m, path, opts)
  if type(path) ~= "string" then check.raise_n(1, "save", "expected a file path") end
  local version = opts and opts.version or 2
  local nv, nt = C.loom_tet_mesh_vertex_count(m), C.loom_tet_mesh_tet_count(m)
  local v, t = C.loom_tet_mesh_vertices(m), C.loom_tet_mesh_tets(m)
  local out = {}
  local function put(s) out[#out + 1] = s end
  local ext = path:match("%.([^./]+)$")
  if ext == "node" or ext == "ele" then
    local base = path:gsub("%.[^./]*$", "")
    put(("%d 3 0 0\n"):format(nv))
    for i = 0, nv - 1 do put(("%d %.17g %.17g %.17g\n"):format(i, v[i].x, v[i].y, v[i].z)) end
    local f = assert(io.open(base .. ".node", "wb"))
    f:write(table.concat(out)) f:close()
    out = {}
    put(("%d 4 0\n"):format(nt))
    for k = 0, nt - 1 do put(("%d %d %d %d %d\n"):format(k, t[4 * k], t[4 * k + 1], t[4 * k + 2], t[4 * k + 3])) end
    f = assert(io.open(base .. ".ele", "wb"))
    f:write(table.concat(out)) f:close()
    return
  end
  if version == 4 then
    put("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n")
    put(("1 %d 1 %d\n3 1 0 %d\n"):format(nv, nv, nv))
    for i = 1, nv do put(("%d\n"):format(i)) end
    for i = 0, nv - 1 do put(("%.17g %.17g %.17g\n"):format(v[i].x, v[i].y, v[i].z)) end
    put("$EndNodes\n$Elements\n")
    put(("1 %d 1 %d\n3 1 4 %d\n"):format(nt, nt, nt))
    for k = 0, nt - 1 do
      put(("%d %d %d %d %d\n"):format(k + 1, t[4 * k] + 1, t[4 * k + 1] + 1, t[4 * k + 2] + 1, t[4 * k + 3] + 1))
    end
    put("$EndElements\n")
  else
    put("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n")
    put(("%d\n"):format(nv))
    for i = 0, nv - 1 do put(("%d %.17g %.17g %.17g\n"):format(i + 1, v[i].x, v[i].y, v[i].z)) end
    put("$EndNodes\n$Elements\n")
    put(("%d\n"):format(nt))
    for k = 0, nt - 1 do
      put(("%d 4 2 0 1 %d %d %d %d\n"):format(k + 1, t[4 * k] + 1, t[4 * k + 1] + 1, t[4 * k + 2] + 1, t[4 * k + 3] + 1))
    end
    put("$EndElements\n")
  end
  local f, err = io.open(path, "wb")
  if not f then caller.error(("save: cannot write '%s': %s"):format(path, tostring(err))) end
  f:write(table.concat(out))
  f:close()
end

ffi.metatype("struct loom_tet_mesh", {
  __index = function(m, k)
    local p = props[k]
    if p then return p(m) end
    return TetMesh[k]
  end,
  __tostring = function(m)
    return ("loom.tet_mesh (%d vertices, %d tets, %d surface triangles)"):format(C.loom_tet_mesh_vertex_count(m),
      C.loom_tet_mesh_tet_count(m), C.loom_tet_mesh_triangle_count(m))
  end,
})

M.qrot = qrot

function M.is_tet_mesh(v) return type(v) == "cdata" and ffi.istype("loom_tet_mesh*", v) end

local function int_in(v, lo, hi) return check.is_finite(v) and v == math.floor(v) and v >= lo and v <= hi end

-- tet_box{size = {sx, sy, sz}, cells = {nx, ny, nz}, center = {x, y, z}, per_cell = 5 | 6}
function M.tet_box(def)
  local d, err = check.fields(def or {}, {
    size = {"vec3", default = {1, 1, 1}}, cells = {"table", default = {5, 5, 5}}, center = {"vec3", default = {0, 0, 0}},
    per_cell = {"number", default = 5, choices = {5, 6}},
  })
  if not d then check.raise("tet_box", err) end
  local c = d.cells
  if not (int_in(c[1], 1, 512) and int_in(c[2], 1, 512) and int_in(c[3], 1, 512)) then
    check.raise("tet_box", "'cells' must be {nx, ny, nz} with integers in [1, 512]")
  end
  return own(C.loom_tet_mesh_box(ffi.new("loom_vec3", d.size[1], d.size[2], d.size[3]), c[1], c[2], c[3],
    ffi.new("loom_vec3", d.center[1], d.center[2], d.center[3]), d.per_cell), "loom.mesh.tet_box")
end

-- tet_fill(surface_mesh, {cell = m, per_cell = 5}) → the lattice of cubes of edge `cell` inside or
-- crossing a closed triangle mesh
function M.tet_fill(surface, opts)
  local mesh = require "loom.mesh"
  if not mesh.is_mesh(surface) then
    check.raise_n(1, "loom.mesh.tet_fill", "expected a closed triangle mesh, got " .. check.describe(surface))
  end
  local d, err = check.fields(opts or {}, {cell = {"number", required = true, min = 0, open_min = true},
                                          per_cell = {"number", default = 5, choices = {5, 6}}})
  if not d then check.raise("tet_fill", err) end
  return own(C.loom_tet_mesh_fill(surface, d.cell, d.per_cell), "loom.mesh.tet_fill")
end

-- tet_from_arrays(vertices, tets): {{x, y, z}, ...} and {{a, b, c, d}, ...} with 0-based indices
function M.tet_from_arrays(vertices, tets)
  if type(vertices) ~= "table" then check.raise_n(1, "tet_from_arrays", "expected a table of {x, y, z}") end
  if type(tets) ~= "table" then check.raise_n(2, "tet_from_arrays", "expected a table of {a, b, c, d}") end
  local nv, nt = #vertices, #tets
  local v = ffi.new("loom_vec3[?]", math.max(nv, 1))
  for i = 1, nv do
    local x, y, z = check.vec3(vertices[i], "vertices[" .. i .. "]")
    if not x then check.raise_n(1, "tet_from_arrays", y) end
    v[i - 1].x, v[i - 1].y, v[i - 1].z = x, y, z
  end
  local t = ffi.new("int32_t[?]", math.max(4 * nt, 1))
  for i = 1, nt do
    local q = tets[i]
    if type(q) ~= "table" then check.raise_n(2, "tet_from_arrays", "tet " .. i .. " is not a table") end
    for k = 1, 4 do
      if not int_in(q[k], -2 ^ 31, 2 ^ 31 - 1) then
        check.raise_n(2, "tet_from_arrays", ("tet %d: index %d is not an integer"):format(i, k))
      end
      t[4 * (i - 1) + k - 1] = q[k]
    end
  end
  return own(C.loom_tet_mesh_create(v, nv, t, nt), "loom.mesh.tet_from_arrays")
end

---------------------------------------------------------------------------------------------------
-- file formats

local function read_lines(path, fname)
  local text, err = caller.read_all(path)
  if not text then caller.error(("%s: cannot open '%s': %s"):format(fname, path, tostring(err))) end
  if #text > 512 * 1024 * 1024 then caller.error(("%s: '%s' is larger than 512 MB"):format(fname, path)) end
  return text
end

-- a tokenizer over non-empty, non-comment lines: next() → line number, {numbers...}
local function lines_of(text, comment)
  local pos, lineno = 1, 0
  return function()
    while pos <= #text do
      local e = text:find("\n", pos, true) or (#text + 1)
      local line = text:sub(pos, e - 1)
      pos = e + 1
      lineno = lineno + 1
      if comment then line = line:gsub(comment .. ".*$", "") end
      if line:find("%S") then return lineno, line end
    end
    return nil
  end
end

local function numbers(line)
  local out = {}
  for tok in line:gmatch("%S+") do
    local v = tonumber(tok)
    out[#out + 1] = v == nil and tok or v
  end
  return out
end

local function build(fname, path, pts, tets)
  local nv, nt = #pts, #tets
  local v = ffi.new("loom_vec3[?]", math.max(nv, 1))
  for i = 1, nv do v[i - 1].x, v[i - 1].y, v[i - 1].z = pts[i][1], pts[i][2], pts[i][3] end
  local t = ffi.new("int32_t[?]", math.max(4 * nt, 1))
  for i = 1, nt do for k = 1, 4 do t[4 * (i - 1) + k - 1] = tets[i][k] end end
  local m = C.loom_tet_mesh_create(v, nv, t, nt)
  if m == nil then caller.error(("%s: '%s': %s"):format(fname, path, last_error())) end
  return ffi.gc(m, C.loom_tet_mesh_destroy)
end

local MAX_ITEMS = 50 * 1000 * 1000

-- TetGen: x.node (points) with x.ele (tets) next to it; x.face, when present, is checked against the
-- surface Loom extracts.
local function load_tetgen(path, fname)
  local base = path:gsub("%.[^./]*$", "")
  local node_path, ele_path = base .. ".node", base .. ".ele"
  local function fail(p, line, msg) caller.error(("%s: %s:%d: %s"):format(fname, p, line, msg)) end
  local next_line = lines_of(read_lines(node_path, fname), "#")
  local ln, header = next_line()
  if not ln then caller.error(("%s: %s: empty file"):format(fname, node_path)) end
  local h = numbers(header)
  local np, dim, nattr, nbm = h[1], h[2] or 3, h[3] or 0, h[4] or 0
  if not (int_in(np, 4, MAX_ITEMS) and dim == 3 and int_in(nattr, 0, 1000) and int_in(nbm, 0, 1)) then
    fail(node_path, ln, "expected '<points> 3 <attributes> <0|1>' with at least 4 points in 3 dimensions")
  end
  local pts, id_of, first = {}, {}, nil
  for i = 1, np do
    local l, line = next_line()
    if not l then caller.error(("%s: %s: %d points announced, %d found"):format(fname, node_path, np, i - 1)) end
    local r = numbers(line)
    if #r < 4 or not (int_in(r[1], -2 ^ 31, 2 ^ 31 - 1) and check.is_finite(r[2]) and check.is_finite(r[3]) and check.is_finite(r[4])) then
      fail(node_path, l, "expected '<index> <x> <y> <z> ...' with finite numbers")
    end
    if id_of[r[1]] then fail(node_path, l, ("point %d appears twice"):format(r[1])) end
    first = first or r[1]
    id_of[r[1]] = i - 1
    pts[i] = {r[2], r[3], r[4]}
  end
  next_line = lines_of(read_lines(ele_path, fname), "#")
  ln, header = next_line()
  if not ln then caller.error(("%s: %s: empty file"):format(fname, ele_path)) end
  h = numbers(header)
  local nt, per = h[1], h[2] or 4
  if not (int_in(nt, 1, MAX_ITEMS) and (per == 4 or per == 10)) then
    fail(ele_path, ln, "expected '<tetrahedra> <4|10> <attributes>'")
  end
  local tets = {}
  for i = 1, nt do
    local l, line = next_line()
    if not l then caller.error(("%s: %s: %d tetrahedra announced, %d found"):format(fname, ele_path, nt, i - 1)) end
    local r = numbers(line)
    local q = {}
    for k = 1, 4 do
      local id = r[k + 1]
      if id_of[id] == nil then fail(ele_path, l, ("tet %s: node %s is not in %s"):format(tostring(r[1]), tostring(id), node_path)) end
      q[k] = id_of[id]
    end
    tets[i] = q
  end
  local m = build(fname, path, pts, tets)
  local face_path = base .. ".face"
  local text
  if caller.exists(face_path) then
    local err
    text, err = caller.read_all(face_path)
    if not text then fail(face_path, 1, "cannot read (" .. tostring(err) .. ")") end
  end
  if text then
    local nl = lines_of(text, "#")
    local l, hl = nl()
    local nf = l and numbers(hl)[1]
    if not int_in(nf, 0, MAX_ITEMS) then fail(face_path, l or 1, "expected '<faces> <0|1>'") end
    -- TetGen writes boundary faces (and, with some switches, interior ones): at least the surface
    if nf < m.triangle_count then
      caller.error(("%s: %s lists %d faces but the tets have %d surface triangles (the files do not belong together)")
        :format(fname, face_path, nf, m.triangle_count))
    end
  end
  return m
end

-- Gmsh ASCII .msh: version 2 ($Nodes: id x y z; $Elements: id type ntags tags... nodes) or 4
-- (entity blocks); tetrahedra are element type 4 (type 11, 10-node tets, use their corners).
local function load_msh(path, fname)
  local text = read_lines(path, fname)
  local next_line = lines_of(text, nil)
  local function fail(line, msg) caller.error(("%s: %s:%d: %s"):format(fname, path, line, msg)) end
  local version
  local pts, id_of, tets = {}, {}, {}
  while true do
    local ln, line = next_line()
    if not ln then break end
    local sect = line:match("^%s*%$(%S+)")
    if sect == "MeshFormat" then
      local l, fl = next_line()
      local r = numbers(fl or "")
      version = r[1]
      if not l or type(version) ~= "number" then fail(l or ln, "expected '<version> <file-type> <data-size>'") end
      if r[2] ~= 0 then fail(l, "binary .msh files are not supported: export ASCII (Gmsh: -format msh2 or msh4, Binary off)") end
      if not (math.floor(version) == 2 or math.floor(version) == 4) then fail(l, ("version %s: Loom reads versions 2 and 4"):format(tostring(version))) end
    elseif sect == "Nodes" then
      if not version then fail(ln, "$Nodes before $MeshFormat") end
      local l, hl = next_line()
      local h = numbers(hl or "")
      if math.floor(version) == 2 then
        if not int_in(h[1], 0, MAX_ITEMS) then fail(l or ln, "expected the number of nodes") end
        for _ = 1, h[1] do
          local l2, nl = next_line()
          local r = numbers(nl or "")
          if not l2 or #r < 4 or not (int_in(r[1], -2 ^ 31, 2 ^ 31 - 1) and check.is_finite(r[2]) and check.is_finite(r[3])
                                      and check.is_finite(r[4])) then
            fail(l2 or l, "expected '<id> <x> <y> <z>' with an integer id and finite numbers")
          end
          if id_of[r[1]] then fail(l2, ("node %s appears twice"):format(tostring(r[1]))) end
          pts[#pts + 1] = {r[2], r[3], r[4]}
          id_of[r[1]] = #pts - 1
        end
      else
        local nblocks = h[1]
        if not (int_in(nblocks, 0, MAX_ITEMS) and int_in(h[2], 0, MAX_ITEMS)) then fail(l or ln, "expected '<blocks> <nodes> <min tag> <max tag>'") end
        for _ = 1, nblocks do
          local l2, bl = next_line()
          local b = numbers(bl or "")
          local parametric, count = b[3], b[4]
          if not (int_in(count, 0, MAX_ITEMS)) or parametric ~= 0 then
            fail(l2 or l, "expected '<dim> <tag> 0 <nodes in block>' (parametric nodes are not supported)")
          end
          local ids = {}
          local read = 0
          while read < count do
            local l3, tl = next_line()
            if not l3 then fail(l2, "the file ends inside a node block") end
            for tok in tl:gmatch("%S+") do
              read = read + 1
              ids[read] = tonumber(tok)
              if read > count or not int_in(ids[read], -2 ^ 31, 2 ^ 31 - 1) then
                fail(l3, ("expected %d integer node tags in this block, got %q"):format(count, tok))
              end
            end
          end
          for k = 1, count do
            local l3, cl = next_line()
            local r = numbers(cl or "")
            if not l3 or not (check.is_finite(r[1]) and check.is_finite(r[2]) and check.is_finite(r[3])) then
              fail(l3 or l2, "expected '<x> <y> <z>' with finite numbers")
            end
            if id_of[ids[k]] then fail(l3, ("node %s appears twice"):format(tostring(ids[k]))) end
            pts[#pts + 1] = {r[1], r[2], r[3]}
            id_of[ids[k]] = #pts - 1
          end
        end
      end
    elseif sect == "Elements" then
      if not version then fail(ln, "$Elements before $MeshFormat") end
      local l, hl = next_line()
      local h = numbers(hl or "")
      local function add_tet(lno, nodes)
        local q = {}
        for k = 1, 4 do
          local id = id_of[nodes[k]]
          if id == nil then fail(lno, ("tetrahedron refers to node %s, which $Nodes does not define"):format(tostring(nodes[k]))) end
          q[k] = id
        end
        tets[#tets + 1] = q
      end
      if math.floor(version) == 2 then
        if not int_in(h[1], 0, MAX_ITEMS) then fail(l or ln, "expected the number of elements") end
        for _ = 1, h[1] do
          local l2, el = next_line()
          local r = numbers(el or "")
          if not l2 or not int_in(r[2], 1, 1000) or not int_in(r[3], 0, 100) then fail(l2 or l, "expected '<id> <type> <tags> ...'") end
          if r[2] == 4 or r[2] == 11 then
            local nodes = {}
            for k = 1, 4 do nodes[k] = r[3 + r[3] + k] end
            add_tet(l2, nodes)
          end
        end
      else
        local nblocks = h[1]
        if not int_in(nblocks, 0, MAX_ITEMS) then fail(l or ln, "expected '<blocks> <elements> <min tag> <max tag>'") end
        for _ = 1, nblocks do
          local l2, bl = next_line()
          local b = numbers(bl or "")
          local etype, count = b[3], b[4]
          if not (int_in(etype, 1, 1000) and int_in(count, 0, MAX_ITEMS)) then fail(l2 or l, "expected '<dim> <tag> <type> <elements>'") end
          for _ = 1, count do
            local l3, el = next_line()
            if not l3 then fail(l2, "the file ends inside an element block") end
            if etype == 4 or etype == 11 then
              local r = numbers(el)
              add_tet(l3, {r[2], r[3], r[4], r[5]})
            end
          end
        end
      end
    end
  end
  if not version then caller.error(("%s: %s: no $MeshFormat section (not a Gmsh .msh file)"):format(fname, path)) end
  if #tets == 0 then caller.error(("%s: %s: no tetrahedra (element type 4) in $Elements"):format(fname, path)) end
  -- Gmsh keeps every node (also those only on curves and surfaces): keep the ones tets use
  local used, map, kept = {}, {}, {}
  for _, q in ipairs(tets) do for k = 1, 4 do used[q[k]] = true end end
  for i = 0, #pts - 1 do
    if used[i] then
      kept[#kept + 1] = pts[i + 1]
      map[i] = #kept - 1
    end
  end
  for _, q in ipairs(tets) do for k = 1, 4 do q[k] = map[q[k]] end end
  return build(fname, path, kept, tets)
end

-- load(path) for tet meshes: .node / .ele (TetGen) or .msh (Gmsh)
function M.load(path, fname)
  local ext = path:match("%.([^./]+)$")
  ext = ext and ext:lower()
  if ext == "node" or ext == "ele" or ext == "face" then return load_tetgen(path, fname) end
  if ext == "msh" then return load_msh(path, fname) end
  return nil
end

return M
