-- loom.select — vertex selections on cloth bodies: by predicate, box, distance to a point, the
-- boundary, and the named edges of grids. Each returns a table of 0-based vertex indices in
-- increasing order (edges: along the edge), which body:pin and body:unpin accept as they are.
-- The body methods (body:select, body:select_box, …) in loom.world check arguments and call these.
local M = {}

-- Vertices i for which pred(x[i], i) is true; x[i] is the current position (a loom_vec3 with x, y,
-- z), read-only by convention.
function M.predicate(b, pred)
  local out, x = {}, b.x
  for i = 0, b.n - 1 do
    if pred(x[i], i) then out[#out + 1] = i end
  end
  return out
end

-- Vertices inside the closed box lo <= x <= hi (component-wise).
function M.box(b, lx, ly, lz, hx, hy, hz)
  local out, x = {}, b.x
  for i = 0, b.n - 1 do
    local p = x[i]
    if p.x >= lx and p.x <= hx and p.y >= ly and p.y <= hy and p.z >= lz and p.z <= hz then out[#out + 1] = i end
  end
  return out
end

-- Vertices whose distance to (px, py, pz) is at most r.
function M.near(b, px, py, pz, r)
  local out, x, r2 = {}, b.x, r * r
  for i = 0, b.n - 1 do
    local p = x[i]
    local dx, dy, dz = p.x - px, p.y - py, p.z - pz
    if dx * dx + dy * dy + dz * dz <= r2 then out[#out + 1] = i end
  end
  return out
end

-- Vertices on an edge that only one triangle uses (the rim of an open mesh; none for a closed one).
function M.boundary(b)
  local tri, nt = b:triangles()
  local n = b.n
  local uses = {}
  for t = 0, nt - 1 do
    for k = 0, 2 do
      local a, c = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
      if a > c then a, c = c, a end
      local key = a * n + c
      uses[key] = (uses[key] or 0) + 1
    end
  end
  local on = {}
  for key, count in pairs(uses) do
    if count == 1 then
      local a = math.floor(key / n)
      on[a], on[key - a * n] = true, true
    end
  end
  local out = {}
  for i = 0, n - 1 do
    if on[i] then out[#out + 1] = i end
  end
  return out
end

-- Named edges of a grid of gx x gy vertices (vertex (i, j) at j gx + i; i runs along the plane's
-- first axis, j along its second: x and y for "xy", x and z for "xz", y and z for "yz").
M.edge_names = {"left", "right", "bottom", "top"}
function M.edge(gx, gy, name)
  local out = {}
  if name == "left" or name == "right" then
    local i = name == "left" and 0 or gx - 1
    for j = 0, gy - 1 do out[#out + 1] = j * gx + i end
  else
    local j = name == "bottom" and 0 or gy - 1
    for i = 0, gx - 1 do out[#out + 1] = j * gx + i end
  end
  return out
end

return M
