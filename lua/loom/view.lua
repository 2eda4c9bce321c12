-- loom.view — draws a world into a canvas: orbit camera, bodies, pins, contacts, velocities,
-- a ground grid. Used by the host for the window and for headless PNG frames.
local ffi = require "ffi"
local C = require "loom.lib"

local M = {}

M.colors = {
  background = 0x2A2E35FF, cloth_front = 0xE39B3AFF, cloth_back = 0x4A7FC1FF, rigid = 0xA9AFB8FF, solid = 0xC8C864FF,
  kinematic = 0x8CC084FF, frozen = 0xC04848FF, pin = 0xFF4D4DFF, contact = 0xFFE14DFF,
  velocity = 0x7FE0FFFF, grid = 0x3E444DFF, axis_x = 0xA04040FF, axis_y = 0x40A040FF,
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

-- opts: wireframe, pins, contacts, velocities, grid (booleans)
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
      local front = frozen and M.colors.frozen or (b.kind == "solid" and M.colors.solid or M.colors.cloth_front)
      local stri, snt = nil, 0
      if b.kind == "solid" and not opts.lattice then stri, snt = b:surface_triangles() end
      if stri then
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

return M
