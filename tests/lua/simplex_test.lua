-- Simplex meshes and the simplex body kind (issue 11): document 004's behaviours 1-9, the
-- integrators against the exact oscillator, the rotation-invariant model, tools, input and what
-- bad input gets.
local loom = require "loom"
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

local function tmpfile(text)
  local p = U.tmpdir() .. "/data.csv"
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end

local function graph_distances(m, from)
  local dist, q, h = {[from] = 0}, {from}, 1
  while h <= #q do
    local i = q[h]
    h = h + 1
    for _, j in ipairs(m:neighbors(i)) do
      if not dist[j] then
        dist[j] = dist[i] + 1
        q[#q + 1] = j
      end
    end
  end
  return dist
end

describe("simplex meshes", function()
  it("have document 004's counts: medium sphere 1296 V / 1944 E / 650 F, torus 1860 / 2790 / 930", function()
    local s = loom.mesh.simplex_sphere { radius = 0.08, density = "medium" }
    assert.equal(1296, s.vertex_count)
    assert.equal(1944, s.edge_count)
    assert.equal(650, s.face_count)
    assert.equal(2588, s.triangle_count) -- 2E - 2F fan triangles
    local t = loom.mesh.simplex_torus { R = 0.1, r = 0.035, density = "medium" }
    assert.equal(1860, t.vertex_count)
    assert.equal(2790, t.edge_count)
    assert.equal(930, t.face_count)
    assert.equal(3720, t.triangle_count)
  end)

  it("are 3-regular with symmetric neighbours and Euler characteristic 2 (sphere, cylinder) or 0 (torus)", function()
    for _, kind in ipairs {"sphere", "torus", "cylinder"} do
      for _, density in ipairs {"low", "medium", "high"} do
        local m = loom.mesh["simplex_" .. kind] { density = density }
        assert.equal(m.vertex_count * 3, 2 * m.edge_count)
        assert.equal(kind == "torus" and 0 or 2, m.euler_characteristic)
        assert.equal(kind == "torus" and 0 or 2, m.vertex_count - m.edge_count + m.face_count)
        for i = 0, m.vertex_count - 1 do
          local nb = m:neighbors(i)
          assert.equal(3, #nb)
          assert.is_true(nb[1] ~= nb[2] and nb[2] ~= nb[3] and nb[1] ~= nb[3] and nb[1] ~= i)
          for _, j in ipairs(nb) do
            local back = m:neighbors(j)
            assert.is_true(back[1] == i or back[2] == i or back[3] == i)
          end
        end
      end
    end
    local rs = loom.mesh.simplex_sphere { rings = 5, segments = 7 }
    assert.equal(2 * (5 * 7 + 2 - 2), rs.vertex_count)
  end)

  it("give outward normals from the ordered neighbours: sphere from its centre, torus from its skeleton circle", function()
    local s = loom.mesh.simplex_sphere { radius = 0.5, center = {1, 2, 3}, density = "high" }
    local n, v = s:normals(), s:vertices()
    for i = 0, s.vertex_count - 1 do
      local d = (v[i].x - 1) * n[i].x + (v[i].y - 2) * n[i].y + (v[i].z - 3) * n[i].z
      assert.is_true(d > 0.95 * 0.5, "sphere vertex " .. i)
    end
    local R = 0.1
    local t = loom.mesh.simplex_torus { R = R, r = 0.03, density = "high" }
    n, v = t:normals(), t:vertices()
    for i = 0, t.vertex_count - 1 do
      -- 004's rule: P_C is the nearest point of the skeleton circle (the tube's centre line)
      local rho = math.sqrt(v[i].x ^ 2 + v[i].y ^ 2)
      local cx, cy = v[i].x * R / rho, v[i].y * R / rho
      local d = (v[i].x - cx) * n[i].x + (v[i].y - cy) * n[i].y + v[i].z * n[i].z
      assert.is_true(d > 0.9 * 0.03, "torus vertex " .. i)
    end
  end)

  it("fan-triangulate every face into a closed outward surface (no holes) that encloses the object's volume", function()
    for _, m in ipairs {loom.mesh.simplex_sphere { radius = 0.1 }, loom.mesh.simplex_torus { R = 0.1, r = 0.035 },
                        loom.mesh.simplex_cylinder { radius = 0.06, height = 0.2 }} do
      local tri, nt, v = m:triangles(), m.triangle_count, m:vertices()
      local uses = {}
      local vol = 0
      for t = 0, nt - 1 do
        local a, b, c = tri[3 * t], tri[3 * t + 1], tri[3 * t + 2]
        for _, e in ipairs {{a, b}, {b, c}, {c, a}} do
          local key = e[1] .. ":" .. e[2]
          assert.is_nil(uses[key], "edge used twice in one direction")
          uses[key] = true
        end
        local A, B, C = v[a], v[b], v[c]
        vol = vol + (A.x * (B.y * C.z - B.z * C.y) - A.y * (B.x * C.z - B.z * C.x) + A.z * (B.x * C.y - B.y * C.x)) / 6
      end
      for key in pairs(uses) do
        local a, b = key:match("(%d+):(%d+)")
        assert.not_nil(uses[b .. ":" .. a], "open edge " .. key)
      end
      local exact = m.shape == "sphere" and 4 / 3 * math.pi * 0.1 ^ 3 or
        (m.shape == "torus" and 2 * math.pi ^ 2 * 0.1 * 0.035 ^ 2 or math.pi * 0.06 ^ 2 * 0.2)
      -- the dual's vertices lie on the surface, its faces cut a little inside
      assert.is_true(vol > 0.9 * exact and vol < 1.0001 * exact, m.shape .. " volume " .. vol .. " vs " .. exact)
    end
  end)

  it("is the dual of any closed triangle mesh, refusing open and non-manifold ones with the edge named", function()
    local cube = loom.mesh.simplex_dual(loom.mesh.sphere { radius = 1, segments = 8, rings = 4 })
    assert.equal(0, cube.vertex_count % 2)
    assert.equal(2, cube.euler_characteristic)
    assert.error(function() loom.mesh.simplex_dual(loom.mesh.grid { cells = {3, 3} }) end, "is open (edge 0-1 belongs to one triangle")
    -- two tetrahedra glued along an edge: that edge has four triangles
    local v = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, -1, 0}, {0, 0, -1}}
    local m = loom.mesh.from_arrays(v, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3},
                                                               {0, 1, 4}, {0, 5, 1}, {0, 4, 5}, {1, 5, 4}})
    assert.error(function() loom.mesh.simplex_dual(m) end, "edge 0-1 is shared by 4 triangles (non-manifold)")
    assert.error(function() loom.mesh.simplex_dual("sphere.obj") end, "expected a closed triangle mesh")
    assert.error(function() loom.mesh.simplex_torus { R = 0.1, r = 0.2 } end, "smaller than 'R'")
    assert.error(function() loom.mesh.simplex_sphere { density = "huge" } end, "density")
    assert.error(function() loom.mesh.simplex_sphere { rings = 4 } end, "both 'rings' and 'segments'")
  end)
end)

describe("document 004's model (simplex_mra)", function()
  local function torus_world(o)
    o = o or {}
    local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
    local mesh = loom.mesh.simplex_torus { R = 0.1, r = 0.035, density = o.density or "medium" }
    local b = W:simplex { name = "t", mesh = mesh, k = o.k or 0.1, k_anchor = o.k_anchor or 0.05, mass = o.mass or 0.001,
                          damping = o.damping or 0.01, integrator = o.integrator, model = o.model, substeps = o.substeps }
    return W, b, mesh
  end

  it("has zero internal force at rest", function()
    local _, b = torus_world()
    local F = b:internal_forces()
    for i = 0, b.n - 1 do assert.equal(0, math.abs(F[i].x) + math.abs(F[i].y) + math.abs(F[i].z)) end
  end)

  it("answers a single-vertex displacement d with -(k_r + 3k) d on it and +k d on each neighbour, 0 elsewhere", function()
    local _, b, mesh = torus_world { k = 0.07, k_anchor = 0.02 }
    local d = {1e-3, -2e-3, 0.5e-3}
    local i0 = 77
    local x = b.x[i0]
    b.x[i0] = {x.x + d[1], x.y + d[2], x.z + d[3]}
    local F = b:internal_forces()
    assert.near(-(0.02 + 3 * 0.07) * d[1], F[i0].x, 1e-15)
    assert.near(-(0.02 + 3 * 0.07) * d[2], F[i0].y, 1e-15)
    assert.near(-(0.02 + 3 * 0.07) * d[3], F[i0].z, 1e-15)
    local nb = {}
    for _, j in ipairs(mesh:neighbors(i0)) do
      nb[j] = true
      assert.near(0.07 * d[1], F[j].x, 1e-15)
      assert.near(0.07 * d[2], F[j].y, 1e-15)
      assert.near(0.07 * d[3], F[j].z, 1e-15)
    end
    for i = 0, b.n - 1 do
      if i ~= i0 and not nb[i] then assert.equal(0, math.abs(F[i].x) + math.abs(F[i].y) + math.abs(F[i].z)) end
    end
    -- the same as body:neighbors
    assert.equal(mesh:neighbors(i0)[2], b:neighbors(i0)[2])
  end)

  it("propagates a displacement one neighbour ring per step (the two-phase update)", function()
    local W, b, mesh = torus_world()
    local dist = graph_distances(mesh, 0)
    b.x[0] = {b.x[0].x, b.x[0].y, b.x[0].z + 0.01}
    for step = 1, 8 do
      W:step()
      local far = 0
      for i = 0, b.n - 1 do
        local x, r = b.x[i], b.rest[i]
        if x.x ~= r.x or x.y ~= r.y or x.z ~= r.z then far = math.max(far, dist[i]) end
      end
      assert.equal(step, far)
    end
  end)

  it("is stable at 004's dt = 1/30 for its parameter sets (one step per frame, energy decays)", function()
    for _, set in ipairs {{0.001, 0.01, 0.1}, {0.001, 0.001, 0.001}, {0.001, 0.1, 0.1}, {0.001, 0.001, 0.1}} do
      local m, bd, k = set[1], set[2], set[3]
      local W, b = torus_world { mass = m, damping = bd, k = k, k_anchor = k }
      assert.equal(1, b:get "substeps")
      for i = 0, b.n - 1, 7 do
        local x = b.x[i]
        b.x[i] = {x.x + 0.004 * math.sin(i), x.y, x.z + 0.004 * math.cos(i)}
      end
      local e0 = W:energy().total
      assert.is_true(e0 > 0)
      local worst = 0
      for _ = 1, 300 do
        W:step()
        for i = 0, b.n - 1 do worst = math.max(worst, math.abs(b.x[i].z - b.rest[i].z)) end
      end
      assert.is_true(worst < 0.02, ("m %g b %g k %g: moved %g"):format(m, bd, k, worst))
      assert.equal(0, loom.C.loom_body_frozen(W:ptr(), b.handle))
      assert.is_true(W:energy().total < 0.5 * e0, ("energy %g -> %g"):format(e0, W:energy().total))
    end
  end)

  it("warns when fixed substeps are below its stability estimate", function()
    local W, b = torus_world { k = 50, substeps = 1 }
    W:step()
    local found = false
    for _, m in ipairs(W:messages()) do if m:match("below the stable estimate") then found = true end end
    assert.is_true(found)
  end)

  it("compares integrators on the 1-D oscillator as 004 did: Euler worst, RK4 best, against the exact solution", function()
    -- with k = 0 every vertex of a uniformly displaced body is 004's oscillator m x'' + b x' + k_r x = 0
    local m, bd, kr = 0.001, 0.01, 0.1
    local err = {}
    for _, integ in ipairs {"euler", "heun", "central", "rk4"} do
      local W, b = torus_world { k = 0, k_anchor = kr, mass = m, damping = bd, integrator = integ, substeps = 1 }
      for i = 0, b.n - 1 do b.x[i] = {b.x[i].x + 0.01, b.x[i].y, b.x[i].z} end
      local worst = 0
      for s = 1, 60 do
        W:step()
        local xe = loom.oscillator_exact(m, bd, kr, 0.01, 0, s / 30)
        worst = math.max(worst, math.abs((b.x[5].x - b.rest[5].x) - xe))
      end
      err[integ] = worst
    end
    assert.is_true(err.euler > err.heun, ("euler %g heun %g"):format(err.euler, err.heun))
    assert.is_true(err.heun > err.rk4, ("heun %g rk4 %g"):format(err.heun, err.rk4))
    assert.is_true(err.central < err.euler)
    assert.is_true(err.rk4 < 1e-5 * 0.01 * 30, "rk4 " .. err.rk4)
  end)

  it("has an exact oscillator oracle that satisfies the equation (under-, critically and over-damped)", function()
    for _, c in ipairs {{0.001, 0.01, 0.1}, {0.001, 2 * math.sqrt(0.1 * 0.001), 0.1}, {0.001, 0.1, 0.1}} do
      local m, bd, k = c[1], c[2], c[3]
      local x0, v0 = loom.oscillator_exact(m, bd, k, 0.01, 0.2, 0)
      assert.near(0.01, x0, 1e-15)
      assert.near(0.2, v0, 1e-14)
      for _, t in ipairs {0.1, 0.37, 1.2} do
        local hh = 1e-5
        local xm = loom.oscillator_exact(m, bd, k, 0.01, 0.2, t - hh)
        local x, v = loom.oscillator_exact(m, bd, k, 0.01, 0.2, t)
        local xp = loom.oscillator_exact(m, bd, k, 0.01, 0.2, t + hh)
        local acc = (xp - 2 * x + xm) / (hh * hh)
        assert.near(0, m * acc + bd * v + k * x, 1e-6 * (k * 0.01 + 1e-12) + 1e-9)
        assert.near(v, (xp - xm) / (2 * hh), 1e-6)
      end
    end
    assert.error(function() loom.oscillator_exact(-1, 0, 1, 0, 0, 1) end, "m > 0")
  end)
end)

describe("the rotation-invariant model (simplex_shape)", function()
  it("feels no force after a rigid motion, where simplex_mra pulls back", function()
    local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
    local mesh = loom.mesh.simplex_sphere { radius = 0.1, density = "low" }
    local s = W:simplex { name = "s", mesh = mesh, model = "simplex_shape" }
    local r = W:simplex { name = "r", mesh = mesh, model = "simplex_mra" }
    local c, sn = math.cos(0.7), math.sin(0.7)
    local max = {}
    for _, b in ipairs {s, r} do
      for i = 0, b.n - 1 do
        local x = b.x[i]
        b.x[i] = {c * x.x - sn * x.z + 0.05, x.y - 0.02, sn * x.x + c * x.z}
      end
      local F, mx = b:internal_forces(), 0
      for i = 0, b.n - 1 do mx = math.max(mx, math.sqrt(F[i].x ^ 2 + F[i].y ^ 2 + F[i].z ^ 2)) end
      max[b.name] = mx
    end
    assert.is_true(max.s < 1e-9, "shape " .. max.s)
    assert.is_true(max.r > 1e-3, "mra " .. max.r)
  end)

  it("conserves momentum of a free deformed body and carries no net internal force", function()
    local W = loom.world { dt = 1 / 60, gravity = {0, 0, 0} }
    local b = W:simplex { name = "s", mesh = loom.mesh.simplex_sphere { radius = 0.1, density = "low" },
                          model = "simplex_shape", k = 5, k_anchor = 2, damping = 0 }
    for i = 0, b.n - 1, 3 do b.x[i] = {b.x[i].x * 1.1, b.x[i].y, b.x[i].z} end
    local F = b:internal_forces()
    local sx, sy, sz = 0, 0, 0
    for i = 0, b.n - 1 do sx, sy, sz = sx + F[i].x, sy + F[i].y, sz + F[i].z end
    assert.near(0, sx, 1e-12)
    assert.near(0, sy, 1e-12)
    assert.near(0, sz, 1e-12)
    W:step(30)
    local px = 0
    for i = 0, b.n - 1 do px = px + b.m[i] * b.v[i].x end
    assert.near(0, px, 1e-12)
  end)

  it("falls onto the floor as a free ball and rests on it", function()
    local W = loom.world { dt = 1 / 60 }
    W:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true }
    local b = W:simplex { name = "ball", mesh = loom.mesh.simplex_sphere { radius = 0.1, center = {0, 0, 0.3}, density = "low" },
                          model = "simplex_shape", k = 20, k_anchor = 10, damping = 0.002 }
    W:run(2)
    local lo, hi = b:aabb()
    assert.is_true(lo[3] > -1e-6, "below the floor: " .. lo[3])
    assert.is_true(lo[3] < 0.01)
    assert.is_true(hi[3] - lo[3] > 0.15, "squashed flat: " .. (hi[3] - lo[3]))
  end)

  it("lands on cloth through the contact buffer without passing through it", function()
    local W = loom.world { dt = 1 / 120 }
    local cloth = W:cloth { name = "c", mesh = loom.mesh.grid { size = {0.6, 0.6}, cells = {16, 16} },
                            fixed = {0, 16, 272, 288}, stretch = 2000, model = "springs", density = 0.2 }
    local b = W:simplex { name = "ball", mesh = loom.mesh.simplex_sphere { radius = 0.08, center = {0, 0, 0.2}, density = "low" },
                          model = "simplex_shape", k = 20, k_anchor = 10, damping = 0.002, thickness = 0.004 }
    W:run(1)
    assert.equal(0, W:interpenetrations())
    local lo = b:aabb()
    local clo = cloth:aabb()
    assert.is_true(lo[3] > clo[3] - 0.01, "ball bottom " .. lo[3] .. " cloth bottom " .. clo[3])
    assert.is_true(lo[3] < 0.1, "the ball fell onto the cloth")
  end)
end)

describe("finger tools", function()
  it("place a tool at the trajectory's start for 0, its end for 255, linearly between (arc length)", function()
    local v = 0
    local tr = loom.trajectory.along { points = {{0, 0, 0}, {1, 0, 0}, {1, 3, 0}}, value = function() return v end }
    local x, y, z = tr(0)
    assert.equal(0, x) assert.equal(0, y) assert.equal(0, z)
    v = 255
    x, y = tr(1)
    assert.near(1, x, 1e-15) assert.near(3, y, 1e-15)
    v = 255 / 4 -- a quarter of the 4 m path: 1 m, the corner
    x, y = tr(2)
    assert.near(1, x, 1e-12) assert.near(0, y, 1e-12)
    v = 255 * 0.625 -- 2.5 m: halfway up the second leg
    x, y = tr(3)
    assert.near(1, x, 1e-12) assert.near(1.5, y, 1e-12)
    -- positional form, and values outside [0, 255] clamped
    local t2 = loom.trajectory.along({{0, 0, 0}, {0, 0, 2}}, function() return 400 end)
    assert.equal(2, select(3, t2(0)))
    local t3 = loom.trajectory.along({{0, 0, 0}, {0, 0, 2}}, function() return -5 end)
    assert.equal(0, select(3, t3(0)))
    assert.error(function() loom.trajectory.along { points = {{0, 0, 0}}, value = function() return 0 end } end, "at least two")
    local bad = loom.trajectory.along({{0, 0, 0}, {1, 0, 0}}, function() return "x" end)
    assert.error(function() bad(0) end, "expected 0..255")
  end)

  it("move five tools independently from recorded finger values", function()
    local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
    local csv = tmpfile("t,f1,f2,f3,f4,f5\n0,0,0,0,0,0\n1,255,0,51,102,255\n")
    local rec = loom.input.replay(csv, {activate = false})
    local tools = {}
    for i = 1, 5 do
      tools[i] = W:rigid { name = "f" .. i, shape = loom.shape.sphere(0.01), kinematic = true, position = {i, 0, 0} }
      tools[i]:follow(loom.trajectory.along { points = {{i, 0, 0}, {i, 0, 1}}, value = rec:channel(i) })
    end
    W:run(1)
    local want = {1, 0, 0.2, 0.4, 1}
    for i = 1, 5 do
      assert.near(want[i], tools[i].position.z, 1e-9)
    end
    os.remove(csv)
  end)

  it("leave no tool-triangle pair penetrating after the response, every step of a squeeze", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    for _, object in ipairs {"torus", "sphere", "cylinder"} do
      local W = sc:instantiate { object = object, density = "low" }
      local o = W:body "object"
      local pushes = 0
      for _ = 1, 120 do
        W:step()
        pushes = pushes + W:stats().tool_contacts
        assert.equal(0, o:penetrations(1e-9))
        assert.equal(0, W:stats().tool_unresolved)
      end
      assert.is_true(pushes > 0, object .. ": the fingers touched it")
    end
  end)

  it("do not tunnel: a tool crossing a whole tube in one step pushes the surface ahead of it", function()
    local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
    local b = W:simplex { name = "t", mesh = loom.mesh.simplex_torus { R = 0.1, r = 0.035, density = "medium" } }
    local tool = W:rigid { name = "f", shape = loom.shape.sphere(0.01), kinematic = true, position = {0.1, 0, 0.06} }
    -- 6 cm in one step (1.8 m/s), from above the tube to its centre
    tool:follow(function(t) if t < 0.05 then return 0.1, 0, 0.06 end return 0.1, 0, 0 end)
    W:step(3)
    assert.equal(0, b:penetrations())
    -- the top of the tube went down with the tool instead of staying above it
    local top = -1
    for i = 0, b.n - 1 do
      local x = b.x[i]
      if math.abs(x.x - 0.1) < 0.006 and math.abs(x.y) < 0.006 then top = math.max(top, x.z) end
    end
    assert.is_true(top < -0.01, "surface above the tool's centre: " .. top)
  end)

  it("take boxes and cylinders as tools too: nothing overlaps them after the response", function()
    for _, shape in ipairs {loom.shape.box(0.03, 0.03, 0.01), loom.shape.cylinder(0.02, 0.01)} do
      local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
      local b = W:simplex { name = "s", mesh = loom.mesh.simplex_sphere { radius = 0.08, density = "medium" } }
      local t = W:rigid { name = "t", shape = shape, kinematic = true, position = {0, 0, 0.12} }
      t:follow(loom.trajectory.linear { from = {0, 0, 0.12}, to = {0, 0, 0.06}, t0 = 0, t1 = 1 })
      for _ = 1, 45 do
        W:step()
        assert.equal(0, b:penetrations(1e-9))
      end
      local top = -1
      for i = 0, b.n - 1 do
        local x = b.x[i]
        if math.abs(x.x) < 0.01 and math.abs(x.y) < 0.01 then top = math.max(top, x.z) end
      end
      assert.is_true(top <= 0.05, "the surface under the tool is at " .. top) -- the tool's face is at z = 0.05
    end
  end)

  it("hold a touched vertex still while its tool does not move (004's contact hold), and let go when it moves", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local W = sc:instantiate { density = "low" }
    local o = W:body "object"
    W:run(2.6) -- the recorded squeeze: every finger closed and still from 2.4 s to 3.5 s
    local x0 = {}
    for i = 0, o.n - 1 do x0[i] = {o.x[i].x, o.x[i].y, o.x[i].z} end
    local held = 0
    W:step(10)
    for i = 0, o.n - 1 do
      local x = o.x[i]
      if x.x == x0[i][1] and x.y == x0[i][2] and x.z == x0[i][3] then held = held + 1 end
    end
    assert.is_true(held > 0, "no vertex held")
    -- without the rule those vertices keep moving
    local W2 = sc:instantiate { density = "low" }
    local o2 = W2:body "object"
    o2:set("hold", 0)
    W2:run(2.6)
    for i = 0, o2.n - 1 do x0[i] = {o2.x[i].x, o2.x[i].y, o2.x[i].z} end
    W2:step(10)
    local still = 0
    for i = 0, o2.n - 1 do
      local x = o2.x[i]
      if x.x == x0[i][1] and x.y == x0[i][2] and x.z == x0[i][3] then still = still + 1 end
    end
    assert.is_true(still < held)
  end)

  it("with 004's PD response track the penetration depth vector over the following steps", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local W = sc:instantiate { density = "low", response = "pd" }
    local o = W:body "object"
    W:run(2.2)
    local moved = 0
    for i = 0, o.n - 1 do
      local x, r = o.x[i], o.rest[i]
      moved = math.max(moved, math.sqrt((x.x - r.x) ^ 2 + (x.y - r.y) ^ 2 + (x.z - r.z) ^ 2))
    end
    assert.is_true(moved > 0.005, "the PD controller moved the surface " .. moved)
  end)

  it("drag the surface along the tool's motion with 004's friction", function()
    local function run(mu)
      local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
      local b = W:simplex { name = "t", mesh = loom.mesh.simplex_sphere { radius = 0.08, density = "low" }, friction = mu }
      local tool = W:rigid { name = "f", shape = loom.shape.sphere(0.015), kinematic = true, position = {-0.03, 0, 0.09} }
      tool:follow(loom.trajectory.linear { from = {-0.03, 0, 0.09}, to = {0.03, 0, 0.07}, t0 = 0, t1 = 1 })
      W:run(1)
      local sx = 0
      for i = 0, b.n - 1 do sx = sx + (b.x[i].x - b.rest[i].x) end
      return sx
    end
    assert.is_true(run(0.5) > run(0) + 1e-4)
  end)
end)

describe("plastic simplex bodies", function()
  it("keep the deformed shape after set_rest and return to the original with reset", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local W = sc:instantiate { density = "low" }
    local o = W:body "object"
    W:run(2.5)
    o:set_rest()
    local dent = {}
    for i = 0, o.n - 1 do dent[i] = {o.x[i].x, o.x[i].y, o.x[i].z} end
    local F = o:internal_forces()
    for i = 0, o.n - 1 do assert.equal(0, math.abs(F[i].x) + math.abs(F[i].y) + math.abs(F[i].z)) end
    -- fingers open (the recording releases by 5 s); the dent stays
    W:run(3.5)
    local worst = 0
    for i = 0, o.n - 1 do
      worst = math.max(worst, math.abs(o.x[i].x - dent[i][1]) + math.abs(o.x[i].y - dent[i][2]) + math.abs(o.x[i].z - dent[i][3]))
    end
    assert.is_true(worst < 1e-3, "the dent relaxed by " .. worst)
    local deformed = 0
    for i = 0, o.n - 1 do deformed = math.max(deformed, math.abs(o.x[i].x - o.rest[i].x)) end
    assert.is_true(deformed > 0.003)
    o:reset()
    for i = 0, o.n - 1 do
      assert.equal(o.rest[i].x, o.x[i].x) assert.equal(o.rest[i].y, o.x[i].y) assert.equal(o.rest[i].z, o.x[i].z)
      assert.equal(0, o.v[i].x)
    end
    local F2 = o:internal_forces()
    for i = 0, o.n - 1 do assert.equal(0, math.abs(F2[i].x) + math.abs(F2[i].y) + math.abs(F2[i].z)) end
  end)

  it("the clay scene keeps the dent by itself once the fingers let go", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local W = sc:instantiate { density = "low", plastic = true }
    local o = W:body "object"
    W:run(6)
    local deformed = 0
    for i = 0, o.n - 1 do deformed = math.max(deformed, math.abs(o.x[i].x - o.rest[i].x) + math.abs(o.x[i].y - o.rest[i].y)) end
    assert.is_true(deformed > 0.003, "no dent kept: " .. deformed)
  end)
end)

describe("recorded finger input", function()
  it("replayed headless gives a bit-identical final state", function()
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local hashes = {}
    for run = 1, 2 do
      local W = sc:instantiate { density = "low" }
      W:run(4)
      hashes[run] = W:hash()
    end
    assert.equal(hashes[1], hashes[2])
    -- and a different recording gives a different state
    local csv = tmpfile("t,a,b,c,d,e\n0,0,0,0,0,0\n1,255,255,255,255,255\n")
    local W = sc:instantiate { density = "low", fingers = csv }
    W:run(4)
    assert.is_true(W:hash() ~= hashes[1])
    os.remove(csv)
  end)

  it("makes input.axis and input.finger read the recording at the time of the world's step", function()
    local csv = tmpfile("t,a,b\n0,0,255\n1,255,0\n")
    loom.input.replay(csv)
    local W = loom.world { dt = 0.25 }
    local seen = {}
    W:force("probe", function() seen[#seen + 1] = {loom.input.axis(1), loom.input.finger(2)} end)
    W:step(2)
    -- fields run at the step's start time t; the input clock is the step's end, t + dt
    assert.near(-1 + 2 * 0.25, seen[1][1], 1e-12)
    assert.near(255 * 0.75, seen[1][2], 1e-9)
    assert.near(0, seen[2][1], 1e-12)
    loom.input.stop_replay()
    assert.equal(0, loom.input.axis(1))
    os.remove(csv)
  end)

  it("names the line and column of a malformed CSV, and clamps values outside [0, 255] with a warning", function()
    local bad = tmpfile("t,a,b\n0,0,0\n0.5,12,x\n")
    assert.error(function() loom.input.replay(bad, {activate = false}) end, ":3: column 3 is not a number")
    local short = tmpfile("t,a,b\n0,0,0\n0.5,12\n")
    assert.error(function() loom.input.replay(short, {activate = false}) end, ":3: expected 3 columns")
    local back = tmpfile("0,0\n1,10\n0.5,20\n")
    assert.error(function() loom.input.replay(back, {activate = false}) end, ":3: column 1: times must increase")
    assert.error(function() loom.input.replay("/nonexistent/fingers.csv") end, "cannot open")
    local said = {}
    local old = loom.input.on_message
    loom.input.on_message = function(m) said[#said + 1] = m end
    local hot = tmpfile("t,a\n0,300\n1,-4\n")
    local rec = loom.input.replay(hot, {activate = false})
    loom.input.on_message = old
    assert.equal(255, rec:value(1, 0))
    assert.equal(0, rec:value(1, 1))
    assert.equal(1, #said)
    assert.matches(":2: column 2: finger value 300 is outside %[0, 255%]", said[1])
    for _, p in ipairs {bad, short, back, hot} do os.remove(p) end
  end)

  it("falls back to keys 1-5 with a message when there is no gamepad, and to the axes when there is one", function()
    local said = {}
    local old = loom.input.on_message
    loom.input.on_message = function(m) said[#said + 1] = m end
    loom.input.stop_replay()
    local st = loom.input._state
    st.device = nil
    assert.equal(0, loom.input.finger(3, 0))
    st.keys["3"] = true
    assert.near(255, loom.input.finger(3, 0.5), 1e-9)
    st.keys["3"] = false
    assert.near(0, loom.input.finger(3, 1.0), 1e-9)
    assert.is_true(#said >= 1 and said[1]:match("keys 1%-5") ~= nil)
    loom.input._device_event("Test pad")
    loom.input.set_axis(2, 1)
    assert.equal(255, loom.input.finger(2, 2))
    loom.input.set_axis(2, -1)
    assert.equal(0, loom.input.finger(2, 2))
    loom.input._device_event(nil)
    assert.is_true(said[#said]:match("disconnected") ~= nil)
    loom.input.on_message = old
  end)
end)

describe("simplex bodies refuse bad input", function()
  it("names the bad field", function()
    local W = loom.world {}
    local m = loom.mesh.simplex_sphere { density = "low" }
    assert.error(function() W:simplex { name = "a", mesh = loom.mesh.grid {} } end, "must be a simplex mesh")
    assert.error(function() W:simplex { name = "a", mesh = m, mass = -1 } end, "mass")
    assert.error(function() W:simplex { name = "a", mesh = m, k = "stiff" } end, "'k'")
    assert.error(function() W:simplex { name = "a", mesh = m, k = 0 / 0 } end, "'k'")
    assert.error(function() W:simplex { name = "a", mesh = m, model = "springs" } end, "model")
    assert.error(function() W:simplex { name = "a", mesh = m, integrator = "verlet" } end, "integrator")
    assert.error(function() W:simplex { name = "a", mesh = m, response = "bounce" } end, "response")
    local b = W:simplex { name = "a", mesh = m }
    assert.error(function() b:neighbors(b.n) end, "vertex index")
    assert.error(function() b:set("k", -1) end, "k")
    assert.error(function() m:neighbors(-1) end, "vertex index")
    assert.error(function() W:cloth { name = "c", mesh = loom.mesh.grid {} }:reset() end, "not a simplex body")
  end)

  it("freezes a diverging body with a message naming it, and the world goes on", function()
    local W = loom.world { dt = 1 / 30, gravity = {0, 0, 0} }
    local b = W:simplex { name = "wild", mesh = loom.mesh.simplex_sphere { density = "low" }, integrator = "euler",
                          k = 1e4, substeps = 1, damping = 0 }
    b.x[3] = {b.x[3].x + 0.01, b.x[3].y, b.x[3].z}
    W:step(200)
    assert.is_true(loom.C.loom_body_frozen(W:ptr(), b.handle) == 1)
    local found = false
    for _, m in ipairs(W:messages()) do if m:match("simplex 'wild' diverged") then found = true end end
    assert.is_true(found)
  end)
end)

describe("004's display", function()
  it("draws the display options and both stereo modes (the eyes differ; anaglyph red from the left eye)", function()
    local ffi = require "ffi"
    local view = require "loom.view"
    local C = loom.C
    local sc = loom.load_scene("scenes/simplex_fingers.lua")
    local W = sc:instantiate { density = "low" }
    W:run(2)
    local cv = ffi.gc(C.loom_canvas_create(160, 100), C.loom_canvas_destroy)
    local cam = view.camera { target = {0.1, 0, 0}, distance = 0.3, azimuth = 60, elevation = 35 }
    local function pixels()
      local n = 160 * 100 * 4
      return ffi.string(C.loom_canvas_pixels(cv), n)
    end
    W.display = { faces = true }
    view.draw(cv, W, cam, {})
    local plain = pixels()
    W.display = { faces = true, simplex_edges = true, vertices = true, centroids = true, face_normals = true,
                  vertex_normals = true, wireframe = true }
    view.draw(cv, W, cam, {})
    assert.is_true(pixels() ~= plain, "the overlays drew nothing")
    W.display = { faces = true }
    view.draw_stereo(cv, W, cam, {}, "anaglyph")
    local ana = pixels()
    assert.is_true(ana ~= plain)
    -- red comes from the left eye (turned +2.5 degrees), green and blue from the right one (-2.5)
    local c2 = { target = cam.target, distance = cam.distance, azimuth = cam.azimuth + 2.5, elevation = cam.elevation, fov = cam.fov }
    view.draw(cv, W, view.camera(c2), {})
    local left = pixels()
    local same_red = true
    for i = 0, 160 * 100 - 1, 37 do
      if ana:byte(4 * i + 1) ~= left:byte(4 * i + 1) then same_red = false break end
    end
    assert.is_true(same_red)
    view.draw_stereo(cv, W, cam, {}, "side_by_side")
    assert.is_true(pixels() ~= ana)
  end)
end)

describe("004's glove tilt", function()
  it("turns the view with gamepad axes 6 and 7 once a device is connected", function()
    local ffi = require "ffi"
    local util = require "loom.util"
    package.loaded["loom.app"] = nil
    local app = require "loom.app"
    package.loaded["loom.app"] = nil
    local canvas = ffi.gc(loom.C.loom_canvas_create(320, 200), loom.C.loom_canvas_destroy)
    local said = {}
    app.init { scene = "scenes/simplex_fingers.lua", mode = "window", canvas = canvas, quiet = true, budget = 10,
               params = { density = "low" } }
    loom.input.on_message = function(m) said[#said + 1] = m end
    local function view() return util.decode(util.decode(app.export()).view) end
    local az0, el0 = view().azimuth, view().elevation
    app.frame(0.1, {{type = "axis", index = 6, value = 1}}) -- no device yet: the axis alone does not turn it
    assert.equal(az0, view().azimuth)
    app.frame(0.1, {{type = "device", text = "Test pad", down = true}, {type = "axis", index = 6, value = 1},
                    {type = "axis", index = 7, value = -0.5}})
    assert.near(az0 + 9, view().azimuth, 1e-9)   -- 90 degrees a second for 0.1 s
    assert.near(el0 + 4.5, view().elevation, 1e-9)
    assert.matches("Test pad", said[1])
    app.frame(0.1, {{type = "device", down = false}})
    assert.matches("disconnected", said[2])
    app.close()
    loom.input._device_event(nil)
  end)
end)
