-- loom.shape — rigid body shapes (descriptions; the world builds them).
local check = require "loom.check"
local mesh = require "loom.mesh"

local caller = require "loom.caller"
local M = {}
local Shape = {}
Shape.__index = Shape
Shape.__tostring = function(s) return "loom.shape." .. s.kind end

function M.is_shape(v) return getmetatable(v) == Shape end

local function positive(fname, n, v, what)
  if not (check.is_finite(v) and v > 0) then
    check.raise_n(n, fname, ("'%s' must be a positive number, got %s"):format(what, check.describe(v)))
  end
end

-- The table forms, for those who write shapes as they write bodies: sphere{radius = r},
-- box{half_extents = {hx, hy, hz}} or box{size = {sx, sy, sz}} (full lengths), capsule{radius = r,
-- half_height = h} or {..., height = 2h}, cylinder the same. Unknown fields are refused.
local function fields(fname, def, allowed)
  for k in pairs(def) do
    if not allowed[k] then
      local names = {}
      for name in pairs(allowed) do names[#names + 1] = name end
      table.sort(names)
      check.raise_n(1, fname, ("unknown field '%s' (%s)"):format(tostring(k), table.concat(names, ", ")))
    end
  end
end

local function three(fname, v, what)
  if type(v) ~= "table" or #v ~= 3 then
    check.raise_n(1, fname, ("'%s' must be three positive numbers {x, y, z}, got %s"):format(what, check.describe(v)))
  end
  return v[1], v[2], v[3]
end

-- radius and half height of a capsule or cylinder table
local function round_def(fname, def)
  fields(fname, def, {radius = true, half_height = true, height = true})
  if def.height ~= nil and def.half_height ~= nil then check.raise_n(1, fname, "give 'half_height' or 'height', not both") end
  local hh = def.half_height
  if def.height ~= nil then
    positive(fname, 1, def.height, "height")
    hh = def.height / 2
  end
  if hh == nil then check.raise_n(1, fname, "give 'half_height' or 'height' (m)") end
  positive(fname, 1, def.radius, "radius")
  positive(fname, 1, hh, "half_height")
  return def.radius, hh
end

function M.sphere(r)
  if type(r) == "table" then
    fields("sphere", r, {radius = true})
    r = r.radius
  end
  positive("sphere", 1, r, "radius")
  return setmetatable({kind = "sphere", radius = r}, Shape)
end

-- box(hx, hy, hz): half extents (m).
function M.box(hx, hy, hz)
  if type(hx) == "table" then
    local def = hx
    fields("box", def, {half_extents = true, size = true})
    if (def.half_extents == nil) == (def.size == nil) then
      check.raise_n(1, "box", "give 'half_extents' = {hx, hy, hz} or 'size' = {sx, sy, sz} (one of them)")
    end
    if def.size ~= nil then
      local sx, sy, sz = three("box", def.size, "size")
      for _, v in ipairs {sx, sy, sz} do positive("box", 1, v, "size") end
      hx, hy, hz = sx / 2, sy / 2, sz / 2
    else
      hx, hy, hz = three("box", def.half_extents, "half_extents")
    end
  end
  positive("box", 1, hx, "hx")
  positive("box", 2, hy, "hy")
  positive("box", 3, hz, "hz")
  return setmetatable({kind = "box", half_extents = {hx, hy, hz}}, Shape)
end

-- capsule(r, half_h): a segment of half length half_h along local z, radius r.
function M.capsule(r, half_h)
  if type(r) == "table" then r, half_h = round_def("capsule", r) end
  positive("capsule", 1, r, "radius")
  positive("capsule", 2, half_h, "half_height")
  return setmetatable({kind = "capsule", radius = r, half_height = half_h}, Shape)
end

-- cylinder(r, half_h): along local z, flat caps.
function M.cylinder(r, half_h)
  if type(r) == "table" then r, half_h = round_def("cylinder", r) end
  positive("cylinder", 1, r, "radius")
  positive("cylinder", 2, half_h, "half_height")
  return setmetatable({kind = "cylinder", radius = r, half_height = half_h}, Shape)
end

-- plane{normal = {nx, ny, nz}, point = {x, y, z}}: a static half-space, the side the normal points
-- to being outside (default: the floor z = 0). It is a box of 1 km half extents whose top face is
-- the plane, so contacts and distances are exact within 1 km of `point`; world:rigid takes it for
-- static bodies only, without position or orientation (the plane gives them).
M.PLANE_HALF = 1000
function M.plane(def)
  def = def == nil and {} or def
  if type(def) ~= "table" then
    check.raise_n(1, "plane", "expected a table {normal = {nx, ny, nz}, point = {x, y, z}}, got " .. check.describe(def))
  end
  local n, p = def.normal or {0, 0, 1}, def.point or {0, 0, 0}
  for _, v in ipairs {n, p} do
    if type(v) ~= "table" or not (check.is_finite(v[1]) and check.is_finite(v[2]) and check.is_finite(v[3])) then
      check.raise_n(1, "plane", "'normal' and 'point' must be three finite numbers {x, y, z}")
    end
  end
  for k in pairs(def) do
    if k ~= "normal" and k ~= "point" then check.raise_n(1, "plane", ("unknown field '%s' (normal, point)"):format(tostring(k))) end
  end
  local len = math.sqrt(n[1] ^ 2 + n[2] ^ 2 + n[3] ^ 2)
  if not (len > 1e-12) then check.raise_n(1, "plane", "'normal' must not be zero") end
  return setmetatable({kind = "plane", normal = {n[1] / len, n[2] / len, n[3] / len}, point = {p[1], p[2], p[3]}}, Shape)
end

-- mesh(m): a triangle mesh obstacle (static or kinematic bodies only).
function M.mesh(m)
  if not mesh.is_mesh(m) then
    check.raise_n(1, "loom.shape.mesh", "expected a mesh (loom.mesh.load or a generator), got " .. check.describe(m), 2)
  end
  return setmetatable({kind = "mesh", mesh = m}, Shape)
end

-- convex(m): the convex hull of the mesh's vertices. A mesh that is not convex is replaced by its
-- hull, and a note says so. A dynamic body's origin is the hull's centre of mass (the body is placed
-- so that the hull stays where the mesh put it).
function M.convex(m)
  if not mesh.is_mesh(m) then
    check.raise_n(1, "loom.shape.convex", "expected a mesh (loom.mesh.load or a generator), got " .. check.describe(m), 2)
  end
  local hull, was = mesh.hull(m)
  if not was then
    io.stderr:write(("loom: loom.shape.convex: the mesh is not convex; its convex hull (%d of its %d vertices) is used\n"):format(
      hull.vertex_count, m.vertex_count))
  end
  return setmetatable({kind = "convex", mesh = hull, convex = was}, Shape)
end

return M
