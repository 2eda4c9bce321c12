-- loom.view — draws a world into a canvas: orbit camera, bodies, pins, contacts, velocities,
-- a ground grid. Used by the host for the window and for headless PNG frames.
local ffi = require "ffi"
local C = require "loom.lib"

local M = {}

M.colors = {
  simplex = 0xD98C6AFF, wire = 0xE6E6E6FF, simplex_edge = 0x3FD0E0FF, centroid = 0xF0E040FF,
  normal = 0x70E070FF,
  background = 0x2A2E35FF, cloth_front = 0xE39B3AFF, cloth_back = 0x4A7FC1FF, rigid = 0xA9AFB8FF, solid = 0xC8C864FF,
  kinematic = 0x8CC084FF, frozen = 0xC04848FF, pin = 0xFF4D4DFF, contact = 0xFFE14DFF,
  velocity = 0x7FE0FFFF, grid = 0x3E444DFF, axis_x = 0xA04040FF, axis_y = 0x40A040FF,
  proximity = 0x4DD2FFFF, ccd = 0xFF5A3CFF, box = 0x9A7FE0FF,
  zones = {0xFF5A5AFF, 0x5AE05AFF, 0x5A8CFFFF, 0xFFD24DFF, 0xE05AE0FF, 0x4DE0E0FF, 0xFF9A3CFF, 0xB4B4FFFF},
}

local rad = math.pi / 180

-- A camera: orbit around `target` (degrees for azimuth/elevation; azimuth 0 looks along +y from
-- the -y side, positive turns towards +x; z is up).
function M.camera(def)
  def = def or {}
  local t = def.target or {0, 0, 0}
  return {
    target = {t[1], t[2], t[3]},
    distance = def.distance or 3,
    azimuth = def.azimuth_deg or def.azimuth or 30,
    elevation = def.elevation_deg or def.elevation or 20,
    fov = def.fov or 45,
  }
end

-- A camera framing the world's cloths (a floor or a big obstacle would make them tiny), or all its
-- bodies when it has no cloth.
function M.fit(world)
  local function box(filter)
    local lo, hi = {math.huge, math.huge, math.huge}, {-math.huge, -math.huge, -math.huge}
    for _, b in ipairs(world:bodies()) do
      if filter(b) then
        local a, z = b:aabb()
        for i = 1, 3 do
          if a[i] == a[i] and math.abs(a[i]) < 1e5 then lo[i] = math.min(lo[i], a[i]) end
          if z[i] == z[i] and math.abs(z[i]) < 1e5 then hi[i] = math.max(hi[i], z[i]) end
        end
      end
    end
    return lo, hi
  end
  local lo, hi = box(function(b) return b.kind ~= "rigid" end)
  if lo[1] > hi[1] then lo, hi = box(function() return true end) end
  if lo[1] > hi[1] then return M.camera() end
  local size = math.max(hi[1] - lo[1], hi[2] - lo[2], hi[3] - lo[3], 0.5)
  -- aim a little above the middle: cloths fall, hang and get lifted around where they start
  local c = {(lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2, (lo[3] + hi[3]) / 2 + 0.35 * size}
  return M.camera {target = c, distance = 3.0 * size + 0.5, azimuth = 30, elevation = 22}
end

local camdef = ffi.new("loom_camera")
function M.apply(canvas, cam)
  local el, az = cam.elevation * rad, cam.azimuth * rad
  local d = cam.distance
  local t = cam.target
  camdef.target.x, camdef.target.y, camdef.target.z = t[1], t[2], t[3]
  camdef.eye.x = t[1] + d * math.cos(el) * math.sin(az)
  camdef.eye.y = t[2] - d * math.cos(el) * math.cos(az)
  camdef.eye.z = t[3] + d * math.sin(el)
  camdef.up.x, camdef.up.y, camdef.up.z = 0, 0, 1
  camdef.fov_deg = cam.fov
  camdef.znear = math.max(1e-3, d * 0.01)
  camdef.zfar = d * 100 + 100
  C.loom_canvas_set_camera(canvas, camdef)
  local lx, ly, lz = 0.4 * math.sin(az) - 0.3, -0.6 * math.cos(az) - 0.2, 0.8
  local l = ffi.new("loom_vec3", lx, ly, lz)
  C.loom_canvas_set_light(canvas, l)
end

local function draw_grid(canvas, extent, step)
  local a, b = ffi.new("loom_vec3"), ffi.new("loom_vec3")
  local n = math.floor(extent / step)
  for i = -n, n do
    local v = i * step
    a.x, a.y, a.z = v, -n * step, 0
    b.x, b.y, b.z = v, n * step, 0
    C.loom_canvas_line3(canvas, a, b, i == 0 and M.colors.axis_y or M.colors.grid)
    a.x, a.y = -n * step, v
    b.x, b.y = n * step, v
    C.loom_canvas_line3(canvas, a, b, i == 0 and M.colors.axis_x or M.colors.grid)
  end
end

-- The collision pipeline's pairs of the last substep (contacts of solver 3, proximity, and 4,
-- continuous collision): a vertex and the triangle it meets, or the two edges, drawn over the
-- cloth in their solver's colour; a pair with a rigid obstacle as its contact point and normal.
local function draw_pairs(canvas, world, w)
  local by_handle = {}
  for _, b in ipairs(world:bodies()) do by_handle[tonumber(b.handle)] = b end
  local n, ne = ffi.new("int[1]"), ffi.new("int[1]")
  local items = C.loom_world_contacts(w, n)
  local e = ffi.new("loom_vec3")
  local tris, edges = {}, {} -- per body, looked up once per frame
  local function topology(b)
    if not tris[b] then
      tris[b] = b:triangles()
      edges[b] = C.loom_body_collision_edges(w, b.handle, ne)
    end
    return tris[b], edges[b]
  end
  for i = 0, n[0] - 1 do
    local c = items[i]
    if c.solver == 3 or c.solver == 4 then
      local col = c.solver == 3 and M.colors.proximity or M.colors.ccd
      local A, B = by_handle[tonumber(c.body_a)], by_handle[tonumber(c.body_b)]
      if A and B and A.kind ~= "rigid" and B.kind ~= "rigid" then
        local xa, xb = A:raw "x", B:raw "x"
        if c.type_a == 1 then -- a vertex against a triangle
          local tri = topology(B)
          local t = c.feature_b
          C.loom_canvas_point3(canvas, xa + c.feature_a, 5, col)
          for k = 0, 2 do C.loom_canvas_line3(canvas, xb + tri[3 * t + k], xb + tri[3 * t + (k + 1) % 3], col) end
        else -- an edge against an edge
          local _, ea = topology(A)
          local _, eb = topology(B)
          if ea ~= nil and eb ~= nil then
            C.loom_canvas_line3(canvas, xa + ea[2 * c.feature_a], xa + ea[2 * c.feature_a + 1], col)
            C.loom_canvas_line3(canvas, xb + eb[2 * c.feature_b], xb + eb[2 * c.feature_b + 1], col)
          end
        end
      else
        C.loom_canvas_point3(canvas, c.point, 5, col)
        e.x, e.y, e.z = c.point.x + 0.02 * c.normal.x, c.point.y + 0.02 * c.normal.y, c.point.z + 0.02 * c.normal.z
        C.loom_canvas_line3(canvas, c.point, e, col)
      end
    end
  end
end

-- The vertices of the last step's impact zones, one colour per zone.
local function draw_zones(canvas, b, xs, w)
  local z = C.loom_body_impact_zones(w, b.handle)
  if z == nil then return end
  local palette = M.colors.zones
  for i = 0, b.n - 1 do
    if z[i] >= 0 then C.loom_canvas_point3(canvas, xs + i, 5, palette[z[i] % #palette + 1]) end
  end
end

-- The 12 edges of a box between its corners numbered as in draw_boxes (1-based).
local BOX_EDGES = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {1, 3}, {2, 4}, {5, 7}, {6, 8}, {1, 5}, {2, 6}, {3, 7}, {4, 8}}

-- The collision pipeline's tree boxes of a body at a depth, as wire boxes.
local box_lo, box_hi, box_cap = nil, nil, 0
local function draw_boxes(canvas, b, depth, w)
  local count = C.loom_body_collision_boxes(w, b.handle, depth, nil, nil, 0)
  if count <= 0 then return end
  if count > box_cap then
    box_cap = count
    box_lo, box_hi = ffi.new("loom_vec3[?]", count), ffi.new("loom_vec3[?]", count)
  end
  count = C.loom_body_collision_boxes(w, b.handle, depth, box_lo, box_hi, box_cap)
  local c = {}
  for i = 1, 8 do c[i] = ffi.new("loom_vec3") end
  for k = 0, count - 1 do
    local lo, hi = box_lo[k], box_hi[k]
    for i = 0, 7 do -- corner i: bit 0 picks x, bit 1 y, bit 2 z
      local v = c[i + 1]
      v.x = i % 2 == 1 and hi.x or lo.x
      v.y = math.floor(i / 2) % 2 == 1 and hi.y or lo.y
      v.z = i >= 4 and hi.z or lo.z
    end
    for _, pair in ipairs(BOX_EDGES) do C.loom_canvas_line3(canvas, c[pair[1]], c[pair[2]], M.colors.box) end
  end
end

-- opts: wireframe, pins, contacts, velocities, grid (booleans); pairs (the collision pipeline's
-- pairs), zones (its impact zones), boxes (false, or the depth of its tree boxes to draw)
function M.draw(canvas, world, cam, opts)
  opts = opts or {}
  C.loom_canvas_clear(canvas, M.colors.background)
  M.apply(canvas, cam)
  if opts.grid ~= false then draw_grid(canvas, math.max(2, cam.distance), cam.distance > 8 and 1 or 0.25) end
  local w = world:ptr()
  local flags = opts.wireframe and C.LOOM_DRAW_WIREFRAME or 0
  local p, q = ffi.new("loom_vec3"), ffi.new("loom_quat")
  for _, b in ipairs(world:bodies()) do
    if b.kind == "rigid" then
      local m = b:shape_mesh()
      if m ~= nil then
        C.loom_rigid_pose(w, b.handle, p, q)
        C.loom_canvas_mesh(canvas, C.loom_mesh_vertices(m), C.loom_mesh_vertex_count(m), C.loom_mesh_triangles(m),
          C.loom_mesh_triangle_count(m), p, q, M.colors.rigid, M.colors.rigid, nil, flags)
      end
    else
      local tri, nt = b:triangles()
      local frozen = C.loom_body_frozen(w, b.handle) == 1
      local xs = b:raw "x"
      local front = frozen and M.colors.frozen or (b.kind == "solid" and M.colors.solid or
        (b.kind == "simplex" and M.colors.simplex or M.colors.cloth_front))
      local stri, snt = nil, 0
      if b.kind == "solid" and not opts.lattice then stri, snt = b:surface_triangles() end
      local disp = b.kind == "simplex" and (rawget(world, "display") or {}) or nil
      if disp then
        if disp.faces ~= false then
          C.loom_canvas_mesh(canvas, xs, b.n, tri, nt, nil, nil, front, M.colors.cloth_back, nil,
            disp.wireframe and C.LOOM_DRAW_WIREFRAME or flags)
        elseif disp.wireframe then
          for t = 0, nt - 1 do
            for c = 0, 2 do C.loom_canvas_line3(canvas, xs + tri[3 * t + c], xs + tri[3 * t + (c + 1) % 3], M.colors.wire) end
          end
        end
        M.draw_simplex_extras(canvas, b, xs, disp)
      elseif stri then
        -- a solid with an embedded fine surface is drawn by it (document 002's render mode)
        local nv = ffi.new("int[1]")
        local sx = C.loom_solid_surface_vertices(w, b.handle, nv)
        C.loom_canvas_mesh(canvas, sx, nv[0], stri, snt, nil, nil, front, M.colors.cloth_back, nil, flags)
      else
        C.loom_canvas_mesh(canvas, xs, b.n, tri, nt, nil, nil, front, M.colors.cloth_back, nil, flags)
      end
      if opts.pins ~= false then
        for i = 0, b.n - 1 do
          if b.inv_m[i] == 0 then C.loom_canvas_point3(canvas, xs + i, 5, M.colors.pin) end
        end
      end
      if opts.zones then draw_zones(canvas, b, xs, w) end
      if opts.boxes then draw_boxes(canvas, b, opts.boxes, w) end
      if opts.velocities then
        local e = ffi.new("loom_vec3")
        for i = 0, b.n - 1 do
          local x, v = b.x[i], b.v[i]
          e.x, e.y, e.z = x.x + 0.05 * v.x, x.y + 0.05 * v.y, x.z + 0.05 * v.z
          C.loom_canvas_line3(canvas, xs + i, e, M.colors.velocity)
        end
      end
    end
  end
  if opts.pairs then draw_pairs(canvas, world, w) end
  if opts.contacts then
    -- the contact buffer of the last substep: each contact's point and a 2 cm normal
    local n = ffi.new("int[1]")
    local items = C.loom_world_contacts(w, n)
    local e = ffi.new("loom_vec3")
    for i = 0, n[0] - 1 do
      local c = items[i]
      C.loom_canvas_point3(canvas, c.point, 4, M.colors.contact)
      e.x, e.y, e.z = c.point.x + 0.02 * c.normal.x, c.point.y + 0.02 * c.normal.y, c.point.z + 0.02 * c.normal.z
      C.loom_canvas_line3(canvas, c.point, e, M.colors.contact)
    end
  end
end

-- 004's display options of a simplex body (world.display: simplex_edges, vertices, centroids,
-- face_normals, vertex_normals); normals are drawn a fifth of the mean edge long.
function M.draw_simplex_extras(canvas, b, xs, disp)
  local mesh = rawget(b, "mesh")
  if not mesh then return end
  local n = b.n
  local e = ffi.new("loom_vec3")
  local edges, ne = mesh:edges(), mesh.edge_count
  local len = 0
  for k = 0, ne - 1 do
    local a, c = xs[edges[2 * k]], xs[edges[2 * k + 1]]
    len = len + math.sqrt((a.x - c.x) ^ 2 + (a.y - c.y) ^ 2 + (a.z - c.z) ^ 2)
  end
  len = ne > 0 and 0.2 * len / ne or 0.01
  if disp.simplex_edges then
    for k = 0, ne - 1 do C.loom_canvas_line3(canvas, xs + edges[2 * k], xs + edges[2 * k + 1], M.colors.simplex_edge) end
  end
  if disp.vertices then
    for i = 0, n - 1 do C.loom_canvas_point3(canvas, xs + i, 3, M.colors.wire) end
  end
  if disp.vertex_normals then
    local nv = mesh:normals(b.x)
    for i = 0, n - 1 do
      local x = xs[i]
      e.x, e.y, e.z = x.x + len * nv[i].x, x.y + len * nv[i].y, x.z + len * nv[i].z
      C.loom_canvas_line3(canvas, xs + i, e, M.colors.normal)
    end
  end
  if disp.centroids or disp.face_normals then
    local off, fv = C.loom_simplex_mesh_face_offsets(mesh), C.loom_simplex_mesh_face_vertices(mesh)
    local c = ffi.new("loom_vec3")
    for f = 0, mesh.face_count - 1 do
      local k0, k1 = off[f], off[f + 1]
      local cx, cy, cz, nx, ny, nz = 0, 0, 0, 0, 0, 0
      for k = k0, k1 - 1 do
        local p, q = xs[fv[k]], xs[fv[k + 1 < k1 and k + 1 or k0]]
        cx, cy, cz = cx + p.x, cy + p.y, cz + p.z
        -- Newell's normal of the polygon
        nx, ny, nz = nx + (p.y - q.y) * (p.z + q.z), ny + (p.z - q.z) * (p.x + q.x), nz + (p.x - q.x) * (p.y + q.y)
      end
      local m = k1 - k0
      c.x, c.y, c.z = cx / m, cy / m, cz / m
      if disp.centroids then C.loom_canvas_point3(canvas, c, 4, M.colors.centroid) end
      local l = math.sqrt(nx * nx + ny * ny + nz * nz)
      if disp.face_normals and l > 0 then
        e.x, e.y, e.z = c.x + len * nx / l, c.y + len * ny / l, c.z + len * nz / l
        C.loom_canvas_line3(canvas, c, e, M.colors.normal)
      end
    end
  end
end

-- Stereo as 004 made it: the scene seen twice, turned by +-angle (degrees, 2.5 by default) about
-- the vertical axis. mode "anaglyph": red from the left eye, green and blue from the right (red-cyan
-- glasses); "side_by_side": both views squeezed into the two halves (cross-eyed or a headset).
local stereo_buf = nil
function M.draw_stereo(canvas, world, cam, opts, mode, angle)
  angle = angle or 2.5
  local w, h = C.loom_canvas_width(canvas), C.loom_canvas_height(canvas)
  local bytes = w * h * 4
  if not stereo_buf or stereo_buf.n ~= bytes then stereo_buf = {n = bytes, p = ffi.new("uint8_t[?]", bytes)} end
  local az = cam.azimuth
  cam.azimuth = az + angle
  M.draw(canvas, world, cam, opts)
  local px = C.loom_canvas_pixels(canvas)
  ffi.copy(stereo_buf.p, px, bytes)
  cam.azimuth = az - angle
  M.draw(canvas, world, cam, opts)
  cam.azimuth = az
  M.apply(canvas, cam)
  local L = stereo_buf.p
  if mode == "anaglyph" then
    for i = 0, w * h - 1 do px[4 * i] = L[4 * i] end
  else
    -- left eye in the left half, right eye (already in px) squeezed into the right half
    local half = math.floor(w / 2)
    for y = 0, h - 1 do
      local row = 4 * w * y
      for x = w - 1, half, -1 do -- descending: a source pixel is never one already written
        local s = row + 4 * (2 * (x - half))
        local d = row + 4 * x
        px[d], px[d + 1], px[d + 2], px[d + 3] = px[s], px[s + 1], px[s + 2], px[s + 3]
      end
      for x = 0, half - 1 do
        local s = row + 4 * (2 * x)
        local d = row + 4 * x
        px[d], px[d + 1], px[d + 2], px[d + 3] = L[s], L[s + 1], L[s + 2], L[s + 3]
      end
    end
  end
end

return M
