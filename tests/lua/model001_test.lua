-- Document 001's options and experiments: the spring damping of the full relative velocity
-- (relative_damping), the a^(3/4) weighting of the continuum model (area_exponent), and the
-- experiment scene (scenes/experiments_001.lua) with each model, iteration count and resolution.
local loom = require "loom"

local function momentum(c)
  local px, py, pz, L = 0, 0, 0, 0
  for i = 0, c.n - 1 do
    local m, v, x = c.m[i], c.v[i], c.x[i]
    px, py, pz = px + m * v.x, py + m * v.y, pz + m * v.z
    L = L + m * (x.x * v.y - x.y * v.x)
  end
  return px, py, pz, L
end

local function spinning(integrator, c_rel)
  local W = loom.world { dt = 1 / 60, gravity = {0, 0, 0} }
  local c = W:cloth { name = "c", model = "springs", integrator = integrator, relative_damping = c_rel, damping = 0,
                      drag = 0, cg_tolerance = 1e-10, mesh = loom.mesh.grid { size = {1, 1}, cells = {12, 12} } }
  for i = 0, c.n - 1 do
    local x = c.x[i]
    c.v[i].x, c.v[i].y, c.v[i].z = 0.5 - 2 * x.y, 0.3 + 2 * x.x, 0.2 -- translation + spin about z
  end
  return W, c
end

describe("springs: relative_damping (001's -c (v_i - v_j) per spring)", function()
  it("keeps linear momentum and damps the spin that axial damping leaves alone", function()
    for _, integ in ipairs {"symplectic", "implicit"} do
      local W, c = spinning(integ, 0.05)
      local p0 = {momentum(c)}
      W:run(1)
      local p1 = {momentum(c)}
      for k = 1, 3 do assert.near(p1[k], p0[k], 1e-9 * math.abs(p0[k]) + 1e-12) end
      assert.less(math.abs(p1[4]), 0.2 * p0[4], integ)  -- the spin is mostly gone
      assert.is_false(c.frozen)
      -- without it (Rayleigh damping off too) the spin stays: all of it with symplectic Euler, three
      -- quarters with backward Euler, whose own damping takes the rest
      local W2, c2 = spinning(integ, 0)
      W2:run(1)
      local q = {momentum(c2)}
      assert.less((integ == "symplectic" and 0.9 or 0.6) * p0[4], q[4], integ)
    end
  end)

  it("enters the stable substep: a strong relative damping does not blow up the explicit step", function()
    local W = loom.world { dt = 1 / 60 }
    local c = W:cloth { name = "c", model = "springs", relative_damping = 2, damping = 0,
                        mesh = loom.mesh.grid { size = {1, 1}, cells = {20, 20}, center = {0, 0, 1}, plane = "xz" } }
    c:pin(c:edge "top")
    local before = c:get "stable_substep"
    assert.less(0, before)
    W:run(1)
    assert.is_false(c.frozen)
    c:set("relative_damping", 0)
    assert.less(before, c:get "stable_substep")     -- the damping had shortened it
  end)

  it("is checked like every parameter", function()
    local W = loom.world {}
    assert.is_false((pcall(W.cloth, W, { name = "c", mesh = loom.mesh.grid {}, relative_damping = -1 })))
    assert.is_false((pcall(W.cloth, W, { name = "c", mesh = loom.mesh.grid {}, relative_damping = "x" })))
  end)
end)

describe("baraff_witkin: area_exponent (001's a^(3/4))", function()
  -- a cloth hanging from its top edge: its extension under its own weight
  local function extension(cells, p)
    local W = loom.world { dt = 1 / 60 }
    local c = W:cloth { name = "c", model = "baraff_witkin", area_exponent = p, stretch = 2000, shear = 200, bend = 1e-5,
                        drag = 2, mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = {0, 0, 1}, plane = "xz" } }
    c:pin(c:edge "top")
    W:run(4)
    local zmin = math.huge
    for i = 0, c.n - 1 do zmin = math.min(zmin, c.x[i].z) end
    return 0.5 - zmin
  end

  it("is resolution-independent at BW's 1/2; at 3/4 the cloth halves its stiffness each time the cells halve", function()
    local h10, h20, h40 = extension(10, 0.5), extension(20, 0.5), extension(40, 0.5)
    assert.near(h20 / h10, 1, 0.02)
    assert.near(h40 / h10, 1, 0.02)
    local q10, q20, q40 = extension(10, 0.75), extension(20, 0.75), extension(40, 0.75)
    assert.near(q20 / q10, 2, 0.1)
    assert.near(q40 / q20, 2, 0.1)
  end)
end)

describe("001's experiments (scenes/experiments_001.lua)", function()
  local sc = loom.load_scene("../../scenes/experiments_001.lua")

  local function mean_strain(c)
    local tri, nt = c:triangles()
    local sum, cnt = 0, 0
    for t = 0, nt - 1 do
      for k = 0, 2 do
        local a, b = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
        local r0, r1, x0, x1 = c.rest[a], c.rest[b], c.x[a], c.x[b]
        local L = math.sqrt((r1.x - r0.x) ^ 2 + (r1.y - r0.y) ^ 2 + (r1.z - r0.z) ^ 2)
        local l = math.sqrt((x1.x - x0.x) ^ 2 + (x1.y - x0.y) ^ 2 + (x1.z - x0.z) ^ 2)
        sum, cnt = sum + (l / L - 1), cnt + 1
      end
    end
    return sum / cnt
  end

  it("drops the cloth of every model, with and without bending, onto the OBJ body without passing into it", function()
    for _, model in ipairs {"springs", "springs_pbd", "baraff_witkin"} do
      for _, bend in ipairs {1, 0} do
        local W = sc:instantiate { model = model, n = 10, bend = bend }
        W:run(1.5)
        local c, body, floor = W:body "cloth", W:body "body", W:body "floor"
        assert.is_false(c.frozen, model)
        local touching = 0
        for i = 0, c.n - 1 do
          local p = {c.x[i].x, c.x[i].y, c.x[i].z}
          assert.is_true(p[1] == p[1] and p[3] == p[3])
          local d = body:distance(p)
          assert.less(0.004 * 0.98, d, ("%s: vertex %d inside the body"):format(model, i))
          assert.less(0.004 * 0.98, (floor:distance(p)))
          -- (within a cell, 0.11 m: a coarse stiff sheet rests on the lumps between its vertices)
          if d < 0.12 and p[3] > 0.3 then touching = touching + 1 end
        end
        assert.less(0, touching, model)                -- it lies on the body, held above the floor
        assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
      end
    end
  end)

  it("keeps a coarse cloth's triangles out of the smooth OBJ body, not only its vertices", function()
    -- 5 cm cloth triangles over bumps of about 0.1 m radius sag ~5 mm between their vertices, more
    -- than the 4 mm thickness: the body's smoothly convex vertices are contact features too
    local W = sc:instantiate { model = "springs", n = 20, bend = 1, iterations = 10, kd = 0, area_exponent = 0.5 }
    for _ = 1, 8 do
      W:run(0.25)
      assert.equal(0, W:interpenetrations(), ("t = %.2f s"):format(W.time))
    end
  end)

  it("constraint springs stretch less with more iterations and more at a finer grid (001's observation)", function()
    local s = {}
    for _, n in ipairs {10, 30} do
      s[n] = {}
      for _, it in ipairs {1, 5, 10} do
        local W = sc:instantiate { model = "springs_pbd", n = n, iterations = it, bend = 1 }
        W:run(1.5)
        s[n][it] = mean_strain(W:body "cloth")
      end
    end
    assert.less(1.3 * s[30][5], s[30][1])
    -- (1.197 measured; above 1.2 before the proximity pass left points beside triangles out)
    assert.less(1.15 * s[30][10], s[30][5])
    assert.less(1.5 * s[10][1], s[30][1])
    -- force springs look alike at both resolutions
    local W10 = sc:instantiate { model = "springs", n = 10, bend = 1 }
    local W30 = sc:instantiate { model = "springs", n = 30, bend = 1 }
    W10:run(1.5)
    W30:run(1.5)
    assert.less(math.abs(mean_strain(W10:body "cloth")), 0.002)
    assert.less(math.abs(mean_strain(W30:body "cloth")), 0.002)
  end)
end)
