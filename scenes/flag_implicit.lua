-- A light flag on a pole in a gusty wind, Baraff–Witkin cloth with the implicit integrator at one
-- step per frame (dt = 1/60 s). The wind is a Lua force field, the usual aerodynamic model of cloth
-- simulators: on each vertex's share A of the cloth's area, a force c A ((w - v)·n̂) n̂ along the
-- normal from the wind w relative to the vertex — so the flag luffs and flutters instead of being
-- pushed like a rigid sail. Force fields act explicitly inside the implicit step (their force is
-- held over the step); this one depends on the velocity strongly enough (c A / m = c / density =
-- 20 /s) to blow up the light cloth at dt = 1/60 s that way, so it also gives its velocity Jacobian
-- with body:add_damping, which the implicit integrator treats backward (docs/api.md). Its bending
-- (2e-4 N m) is ten times silk's: silk's wrinkles are finer than this 2.5 cm grid, which then
-- crumpled at the grid's scale by the pinned edge and, with self-collision, stayed folded and
-- strained (docs/architecture.md, "Crumples the grid cannot resolve").
--   --param wind=8 (m/s), --param air=2 (c, N s/m^3), --param cells=30 (across the height)
local ffi = require "ffi"
local loom = require "loom"

local scene = loom.scene {
  title   = "Flag in the wind (implicit, dt = 1/60 s)",
  dt      = 1 / 60,
  gravity = {0, 0, -9.81},
  params  = { wind = 8, air = 2, cells = 24 },
  camera  = { target = {0.5, 0, 1.5}, distance = 2.8, azimuth = 60, elevation = 12 },
}

local pole_radius = 0.025

function scene.build(world, p)
  world:rigid { name = "pole", shape = loom.shape.cylinder(pole_radius, 1.1), position = {0, 0, 1.1}, static = true }
  local w, h = 1.0, 0.6
  local flag = world:cloth {
    name = "flag", model = "baraff_witkin", integrator = "implicit",
    mesh = loom.mesh.grid { size = {w, h}, cells = {math.floor(5 / 3 * p.cells), p.cells}, plane = "xz",
                            center = {pole_radius + 0.008 + w / 2, 0, 1.8} },
    stretch = 5000, shear = 500, bend = 2e-4, density = 0.1, thickness = 0.004, friction = 0.3, drag = 0.05,
  }
  flag:pin(flag:edge "left")
end

-- Area-weighted normals (a third of each triangle's area vector to each corner), then the normal
-- drag c A (u·n̂) n̂, u the wind relative to the vertex.
local normals, count
scene.forces = {
  wind = function(world, t)
    local c = world:body "flag"
    local x, v, f, n = c.x, c.v, c.f, c.n
    if count ~= n then normals, count = ffi.new("loom_vec3[?]", n), n end
    local N = normals
    for i = 0, n - 1 do N[i].x, N[i].y, N[i].z = 0, 0, 0 end
    local tri, nt = c:triangles()
    for k = 0, nt - 1 do
      local a, b, d = tri[3 * k], tri[3 * k + 1], tri[3 * k + 2]
      local xa, xb, xd = x[a], x[b], x[d]
      local ux, uy, uz = xb.x - xa.x, xb.y - xa.y, xb.z - xa.z
      local wx, wy, wz = xd.x - xa.x, xd.y - xa.y, xd.z - xa.z
      local cx, cy, cz = (uy * wz - uz * wy) / 6, (uz * wx - ux * wz) / 6, (ux * wy - uy * wx) / 6
      N[a].x, N[a].y, N[a].z = N[a].x + cx, N[a].y + cy, N[a].z + cz
      N[b].x, N[b].y, N[b].z = N[b].x + cx, N[b].y + cy, N[b].z + cz
      N[d].x, N[d].y, N[d].z = N[d].x + cx, N[d].y + cy, N[d].z + cz
    end
    local air, speed = scene.params.air, scene.params.wind
    for i = 0, n - 1 do
      local p, vel = x[i], v[i]
      local gust = speed * (1 + 0.3 * math.sin(1.7 * t - 2 * p.x) + 0.15 * math.sin(5.3 * t + 3 * p.z))
      local rx, ry, rz = gust - vel.x, 0.25 * gust * math.sin(0.5 * t) - vel.y, -vel.z
      local nx, ny, nz = N[i].x, N[i].y, N[i].z
      local area = math.sqrt(nx * nx + ny * ny + nz * nz)
      if area > 0 then
        local un = (rx * nx + ry * ny + rz * nz) / area
        local s = air * un -- c A (u·n̂) / |N|, and N = A n̂
        f[i].x, f[i].y, f[i].z = f[i].x + s * nx, f[i].y + s * ny, f[i].z + s * nz
        -- the force's velocity Jacobian, -df/dv = c A n̂ n̂ᵀ, for the implicit step
        c:add_damping(i, air * area, nx, ny, nz)
      end
    end
  end,
}

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %d CG iterations   %.2f ms/step"):format(world.time, st.iterations, st.step_ms))
  ui.slider("wind (m/s)", scene.params, "wind", 0, 20)
  ui.slider("air (N s/m^3)", scene.params, "air", 0, 10)
end

return scene
