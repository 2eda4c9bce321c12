-- Soft solids (issue 10): tetrahedral meshes, document 002's model and contacts, the
-- Neo-Hookean model, and what bad input gets.
local loom = require "loom"
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

local function cube(w, name, o)
  o = o or {}
  return w:solid {
    name = name, model = o.model or "teschner", node_mass = o.node_mass or 0.05, distance = o.distance or 60,
    volume = o.volume or 15, damping = o.damping or 1, friction = o.friction, contact = o.contact,
    thickness = 0.01, young = o.young, poisson = o.poisson, rayleigh = o.rayleigh, density = o.density,
    mesh = loom.mesh.tet_box { size = o.size or {5, 5, 5}, cells = o.cells or {5, 5, 5}, center = o.center or {0, 0, 2.51} },
  }
end

local function floor(w) w:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 } end

describe("tetrahedral meshes", function()
  it("the 5 x 5 x 5 lattice has document 002's counts: 216 nodes, 990 edges, 300 surface triangles, 625 tets", function()
    local m = loom.mesh.tet_box { size = {1, 2, 3}, cells = {5, 5, 5} }
    assert.equal(216, m.vertex_count)
    assert.equal(990, m.edge_count)
    assert.equal(300, m.triangle_count)
    assert.equal(625, m.tet_count)
    assert.near(6, m:volume(), 1e-12)
    local m6 = loom.mesh.tet_box { size = {1, 1, 1}, cells = {5, 5, 5}, per_cell = 6 }
    assert.equal(750, m6.tet_count)
    assert.equal(300, m6.triangle_count)
    assert.near(1, m6:volume(), 1e-12)
    -- the surface is closed and outward: its mesh encloses the same volume
    local mass = loom.mesh.mass_properties(m:surface(), 1)
    assert.near(6, mass, 1e-9)
  end)

  it("fills a closed surface with a lattice, and refuses an open one naming an edge", function()
    local s = loom.mesh.sphere { radius = 0.5, segments = 32, rings = 16 }
    local t = loom.mesh.tet_fill(s, { cell = 0.1 })
    -- cells inside or crossing: at least the sphere's volume, at most one cell layer more
    local v = t:volume()
    assert.is_true(v > 4 / 3 * math.pi * 0.5 ^ 3 * 0.98 and v < 4 / 3 * math.pi * 0.6 ^ 3, "volume " .. v)
    local ok, err = pcall(loom.mesh.tet_fill, loom.mesh.grid { size = {1, 1}, cells = {4, 4} }, { cell = 0.1 })
    assert.is_false(ok)
    assert.matches("open: edge %(%d+, %d+%)", err)
  end)

  it("loads Gmsh v2 and v4 and TetGen files, and names file and line when they are broken", function()
    assert.equal(625, loom.mesh.load("../data/tet/cube5.msh").tet_count)
    assert.equal(48, loom.mesh.load("../data/tet/cube2_v4.msh").tet_count)
    assert.equal(48, loom.mesh.load("../data/tet/cube2.node").tet_count)
    local dir = U.tmpdir() .. "/"
    local function write(name, text)
      local f = assert(io.open(dir .. name, "wb"))
      f:write(text)
      f:close()
      return dir .. name
    end
    local p = write("a.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n2 1 0 x\n$EndNodes\n")
    local ok, err = pcall(loom.mesh.load, p)
    assert.is_false(ok)
    assert.matches("a%.msh:7:", err)
    p = write("b.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n")
    write("b.ele", "1 4 0\n0 0 1 2 7\n")
    ok, err = pcall(loom.mesh.load, p)
    assert.is_false(ok)
    assert.matches("b%.ele:2: tet 0: node 7", err)
    -- node tags that are not integers (NaN, a word) are refused at their line, not an index error
    p = write("c.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\nnan 1 0 0\n$EndNodes\n")
    ok, err = pcall(loom.mesh.load, p)
    assert.is_false(ok)
    assert.matches("c%.msh:7: expected '<id> <x> <y> <z>' with an integer id", err)
    p = write("d.msh", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n3 1 0 2\n1\nx\n0 0 0\n1 0 0\n$EndNodes\n")
    ok, err = pcall(loom.mesh.load, p)
    assert.is_false(ok)
    assert.matches("d%.msh:8: expected 2 integer node tags in this block, got \"x\"", err)
    os.remove(dir .. "a.msh") os.remove(dir .. "b.node") os.remove(dir .. "b.ele") os.remove(dir .. "c.msh") os.remove(dir .. "d.msh")
  end)

  it("refuses inverted and flat tets with their index, and flips a mesh written the other way round", function()
    local v = { {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {-1, -1, -1} }
    local ok, err = pcall(loom.mesh.tet_from_arrays, v, { {0, 1, 2, 3}, {1, 2, 3, 4}, {0, 1, 2, 5} })
    assert.is_false(ok)
    assert.matches("tet 2 is inverted", err)
    ok, err = pcall(loom.mesh.tet_from_arrays, { {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0} }, { {0, 1, 2, 3} })
    assert.is_false(ok)
    assert.matches("tet 0 has zero volume", err)
    local m = loom.mesh.tet_from_arrays({ {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1} }, { {0, 2, 1, 3} })
    assert.is_true(m.flipped)
    assert.near(1 / 6, m:volume(), 1e-15)
  end)
end)

describe("document 002's model", function()
  it("an undisturbed lattice at rest stays exactly at rest", function()
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local c = cube(w, "c")
    w:step(100)
    for i = 0, c.n - 1 do
      assert.equal(0, c.v[i].x) assert.equal(0, c.v[i].y) assert.equal(0, c.v[i].z)
      assert.equal(c.rest[i].x, c.x[i].x) assert.equal(c.rest[i].z, c.x[i].z)
    end
  end)

  it("internal forces conserve linear and angular momentum", function()
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local c = cube(w, "c", { damping = 0.5 })
    local seed = 12345
    local function rnd() seed = (seed * 1103515245 + 12345) % 2147483648 return seed / 2147483648 - 0.5 end
    for i = 0, c.n - 1 do c.v[i] = { rnd(), rnd(), rnd() } end
    local function momenta()
      local p, L = {0, 0, 0}, {0, 0, 0}
      for i = 0, c.n - 1 do
        local m, x, v = c.m[i], c.x[i], c.v[i]
        p[1], p[2], p[3] = p[1] + m * v.x, p[2] + m * v.y, p[3] + m * v.z
        L[1] = L[1] + m * (x.y * v.z - x.z * v.y)
        L[2] = L[2] + m * (x.z * v.x - x.x * v.z)
        L[3] = L[3] + m * (x.x * v.y - x.y * v.x)
      end
      return p, L
    end
    local p0, L0 = momenta()
    w:step(100)
    local p1, L1 = momenta()
    for k = 1, 3 do
      assert.near(p0[k], p1[k], 1e-12)
      assert.near(L0[k], L1[k], 1e-3 * (math.abs(L0[k]) + 1e-3))
    end
  end)

  it("the volume term restores a tet squashed almost flat", function()
    local w = loom.world { dt = 0.001, gravity = {0, 0, 0} }
    local m = loom.mesh.tet_from_arrays({ {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1} }, { {0, 1, 2, 3} })
    local s = w:solid { name = "t", mesh = m, node_mass = 0.05, distance = 1, volume = 15, damping = 0.1 }
    local v0 = s:volume()
    s.x[3] = {0.3, 0.3, 0.02}
    assert.is_true(s:volume() < 0.05 * v0)
    local least = s:volume()
    for _ = 1, 500 do
      w:step()
      least = math.min(least, s:volume())
    end
    assert.is_true(least > 0, "the tet inverted")
    assert.is_true(s:volume() > 0.5 * v0, ("volume %.4f of %.4f"):format(s:volume(), v0))
  end)

  it("the 5 x 5 x 5 lattice stays stable at 15 ms steps over 002's parameter ranges", function()
    for _, mass in ipairs { 0.05, 0.1 } do
      for _, kd in ipairs { 1, 20, 100 } do
        for _, kv in ipairs { 10, 20 } do
          for _, dc in ipairs { 0.01, 2 } do
            local w = loom.world { dt = 0.015 }
            floor(w)
            local c = cube(w, "c", { node_mass = mass, distance = kd, volume = kv, damping = dc, size = {2.5, 2.5, 2.5},
                                     center = {0, 0, 1.5} })
            local label = ("mass %g kD %g kV %g dC %g"):format(mass, kd, kv, dc)
            for _ = 1, 200 do
              w:step()
              for i = 0, c.n - 1, 7 do assert.is_true(math.abs(c.v[i].z) < 50, label .. ": speed") end
            end
            assert.is_false(c.frozen, label)
            local lo, hi = c:aabb()
            assert.is_true(lo[3] > -0.01 and hi[3] < 3, label)
            -- a normal drop (not 002's "melting" k_D = 1) inverts no tet
            if kd >= 20 then
              for _, msg in ipairs(w:messages()) do assert.is_nil(msg:find("inverted"), label .. ": " .. msg) end
              assert.is_true(c:volume() > 0.9 * 2.5 ^ 3, label)
            end
          end
        end
      end
    end
  end)

  it("stiff k_D sags less than jelly, and k_V 5 sags differently from 10", function()
    local function sag(kd, kv)
      local w = loom.world { dt = 0.01 }
      floor(w)
      local c = cube(w, "c", { distance = kd, volume = kv, damping = 2 })
      w:step(400)
      local _, hi = c:aabb()
      return 5.01 - hi[3]
    end
    local jelly, rubber = sag(5, 10), sag(80, 10)
    assert.is_true(jelly > 3 * rubber and rubber > 0, ("jelly %.3f, rubber %.3f"):format(jelly, rubber))
    local soft, firm = sag(10, 5), sag(10, 10)
    assert.is_true(soft > 1.05 * firm, ("k_V 5: %.3f, k_V 10: %.3f"):format(soft, firm))
  end)
end)

describe("solids touching solids (document 002's contacts)", function()
  it("two equally stiff bodies pressed together meet halfway", function()
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local a = cube(w, "a", { center = {-2.45, 0, 0}, contact = "penetration", damping = 2 })
    local b = cube(w, "b", { center = {2.45, 0, 0}, contact = "penetration", damping = 2 })
    w:force("push", function(world)
      for i = 0, a.n - 1 do a.f[i].x = a.f[i].x + 2 * a.m[i] end
      for i = 0, b.n - 1 do b.f[i].x = b.f[i].x - 2 * b.m[i] end
    end)
    local seen = 0
    for _ = 1, 300 do
      w:step()
      seen = math.max(seen, w:stats().solid_points)
    end
    assert.is_true(seen > 0, "they never touched")
    local _, ha = a:aabb()
    local lb = b:aabb()
    local mid = 0.5 * (ha[1] + lb[1])
    assert.near(0, mid, 0.01)
    -- and they do not pass into each other: overlap below a tenth of a cell
    assert.is_true(ha[1] - lb[1] < 0.1, ("overlap %.3f m"):format(ha[1] - lb[1]))
  end)

  it("three stacked cubes come to rest without sliding on each other (both contact methods)", function()
    local w
    for _, contact in ipairs { "penetration", "pipeline" } do
      w = loom.load_scene("scenes/solids_3cubes.lua", {contact = contact}):instantiate()
      w:step(600)
      local lower, upper = w:body "cube2", w:body "cube3"
      local i = 0 -- upper's bottom corner and the lower vertex under it
      local j = lower:vertex_near { upper.x[i].x, upper.x[i].y, upper.x[i].z }
      local r0 = upper.x[i].x - lower.x[j].x
      w:step(200)
      local slide = math.abs(upper.x[i].x - lower.x[j].x - r0)
      assert.is_true(slide < 2e-4, ("%s: slid %.2e m in 2 s"):format(contact, slide))
      -- no visible interpenetration: the upper cube's bottom layer (vertices 0 .. 35) is at most 2 %
      -- of the cube's size below the lower cube's nearest vertex
      local deepest = 0
      for k = 0, 35 do
        local x = upper.x[k]
        local near = lower.x[lower:vertex_near { x.x, x.y, x.z }]
        deepest = math.max(deepest, near.z - x.z)
      end
      assert.is_true(deepest < 0.05, ("%s: %.3f m deep"):format(contact, deepest))
    end
    local lower, upper = w:body "cube2", w:body "cube3"
    -- the stack keeps a slow sway (its lowest mode, about 3 s, is damped only through the edges'
    -- rates: stiffness-proportional damping); it decays: the largest motion in each second of
    -- t = 10 .. 13 s is below 0.8 of that in t = 4 .. 7 s
    local function sway(from, to)
      local most = 0
      for _ = from, to - 1 do
        local before = {}
        for _, b in ipairs { lower, upper } do
          before[b] = {}
          for k = 0, b.n - 1 do before[b][k] = {b.x[k].x, b.x[k].y, b.x[k].z} end
        end
        w:step(100)
        for _, b in ipairs { lower, upper } do
          for k = 0, b.n - 1 do
            local p = before[b][k]
            most = math.max(most, math.sqrt((b.x[k].x - p[1]) ^ 2 + (b.x[k].y - p[2]) ^ 2 + (b.x[k].z - p[3]) ^ 2))
          end
        end
      end
      return most
    end
    -- (the stack is at t = 8 s here: run to 10)
    w:step(200)
    local late = sway(10, 13)
    local w2 = loom.load_scene("scenes/solids_3cubes.lua"):instantiate()
    w2:step(400)
    lower, upper = w2:body "cube2", w2:body "cube3"
    w = w2
    local early = sway(4, 7)
    assert.is_true(late < 0.8 * early, ("sway %.4f m/s at 4-7 s, %.4f m/s at 10-13 s"):format(early, late))
  end)

  it("solid:depth measures how deep a point is inside, 0 outside", function()
    local w = loom.world {}
    local b = w:solid { name = "c", mesh = loom.mesh.tet_box { size = {2, 2, 2}, cells = {4, 4, 4} } }
    assert.near(1, b:depth {0, 0, 0}, 1e-12)
    assert.near(0.1, b:depth {0.9, 0.2, -0.3}, 1e-12)
    assert.equal(0, b:depth {1.5, 0, 0})
    local ok, err = pcall(b.depth, b, {0, 0 / 0, 0})
    assert.is_false(ok)
    assert.matches("'p'", err)
  end)

  it("three cubes: 002's contacts leave the overhanging rims centimetres deep, the pipeline none", function()
    local edge_depth = require("loom.bench").edge_depth
    local function deepest(w)
      local d = 0
      for _, pr in ipairs { {"cube1", "cube2"}, {"cube2", "cube1"}, {"cube2", "cube3"}, {"cube3", "cube2"} } do
        d = math.max(d, edge_depth(w:body(pr[1]), w:body(pr[2])))
      end
      return d
    end
    local w = loom.load_scene("scenes/solids_3cubes.lua", {contact = "penetration"}):instantiate()
    w:step(400)
    local d = deepest(w)
    -- (measured 5.5 cm: a weakness of the vertex method, docs/architecture.md; bounded here)
    assert.is_true(d > 0.01 and d < 0.08, ("edges %.4f m deep"):format(d))
    local wp = loom.load_scene("scenes/solids_3cubes.lua"):instantiate()
    wp:step(400)
    assert.equal(0, deepest(wp))
  end)

  it("the three cubes in the collision pipeline never cross, and their resting contacts do not creep", function()
    local w = loom.load_scene("scenes/solids_3cubes.lua"):instantiate()
    for _ = 1, 8 do
      w:step(50)
      assert.equal(0, w:interpenetrations(), ("t = %.1f s"):format(w.time))
    end
    -- the top cube's bottom layer against the middle cube's top layer, and the middle cube's bottom
    -- layer against the bottom cube's top layer, in x: from t = 6 to 30 s they keep their offsets
    -- within 0.5 mm (measured 0.1-0.2 mm; before resting pairs engaged ahead of the thickness and
    -- iterated their friction, the overhang's load made them creep 8.8 and 15 mm, faster and faster)
    local bottom, lower, upper = w:body "cube1", w:body "cube2", w:body "cube3"
    local function offset(up, lo)
      local s = 0
      for k = 0, 35 do s = s + up.x[k].x - lo.x[180 + k].x end
      return s / 36
    end
    w:step(200)
    local o1, o2 = offset(upper, lower), offset(lower, bottom)
    for _ = 1, 8 do
      w:step(300)
      assert.equal(0, w:interpenetrations(), ("t = %.1f s"):format(w.time))
    end
    local c1, c2 = offset(upper, lower) - o1, offset(lower, bottom) - o2
    assert.is_true(math.abs(c1) < 5e-4 and math.abs(c2) < 5e-4,
                   ("the top cube moved %.2e m on the middle one, the middle one %.2e m on the bottom one"):format(c1, c2))
    -- and they landed on each other (not apart, not through): the top cube's bottom lies two cube
    -- heights (2.5 m each, a little compressed) above the floor
    local top_lo = w:body("cube3"):aabb()
    assert.is_true(top_lo[3] > 4.6 and top_lo[3] < 5.05, ("top cube's bottom at %.3f m"):format(top_lo[3]))
  end)

  it("document 002's scene files: defaults, transform order rotate -> scale -> translate, y up", function()
    local w, bodies, warnings = loom.import.tet_scene("../data/tet/defaults.scene")
    local d = bodies["N/A"]
    assert.equal(20, d:get "distance")
    assert.equal(10, d:get "volume")
    assert.equal(1, d:get "damping")
    assert.equal(1, d.m[0])
    assert.equal(0xc8c864, d.color)
    -- rotated a quarter turn about the vertical, then stretched along x, then moved 10 along x
    local lo, hi = bodies.moved:aabb()
    assert.near(9, lo[1], 1e-9) assert.near(11, hi[1], 1e-9)
    assert.near(-0.5, lo[2], 1e-9) assert.near(0.5, hi[3], 1e-9)
    assert.equal(1, #warnings)
    assert.matches("defaults%.scene:12: unknown parameter 'Shininess'", warnings[1])
    local ok, err = pcall(loom.import.tet_scene, "../data/tet/missing.scene")
    assert.is_false(ok)
    assert.matches("missing%.scene", err)
    assert.not_nil(w)
  end)
end)

describe("solids: determinism and bad input", function()
  it("the same scene gives bit-identical states", function()
    local function run()
      local w = loom.load_scene("scenes/solids_3cubes.lua"):instantiate()
      w:step(100)
      return w:hash()
    end
    assert.equal(run(), run())
  end)

  it("a snapshot continues bit-identically (explicit and implicit solids, with contacts)", function()
    for _, f in ipairs { "scenes/solids_3cubes.lua", "scenes/soft_press.lua", "penetration" } do
      local w = f == "penetration" and loom.load_scene("scenes/solids_3cubes.lua", {contact = "penetration"}):instantiate()
                or loom.load_scene(f):instantiate()
      w:step(60)
      local snap = w:snapshot()
      w:step(40)
      local h1 = w:hash()
      w:restore(snap)
      w:step(40)
      assert.equal(h1, w:hash(), f)
    end
  end)

  it("bad parameters get messages naming the body and the parameter", function()
    local w = loom.world {}
    local m = loom.mesh.tet_box {}
    local function fails(def, pattern)
      def.name, def.mesh = def.name or "s", def.mesh or m
      local ok, err = pcall(w.solid, w, def)
      assert.is_false(ok)
      assert.matches(pattern, err)
    end
    fails({ distance = -1 }, "'distance'")
    fails({ model = "neohookean", poisson = 0.5 }, "'poisson'")
    fails({ model = "neohookean", young = 0 }, "'young'")
    fails({ mesh = loom.mesh.grid {} }, "'mesh' must be a tetrahedral mesh")
    fails({ model = "jelly" }, "model")
    fails({ model = "teschner", integrator = "implicit" }, "implicit")
    assert.equal(0, #w:bodies())
  end)

  it("an embedded surface follows the lattice; its vertices outside every tet are named in a warning", function()
    local w = loom.world { dt = 0.01 }
    floor(w)
    local fine = loom.mesh.sphere { radius = 2.6, segments = 24, rings = 12, center = {0, 0, 2.51} }
    local c = w:solid { name = "c", node_mass = 0.05, distance = 60, volume = 15, damping = 2, surface = fine,
                        mesh = loom.mesh.tet_box { size = {5, 5, 5}, center = {0, 0, 2.51} } }
    local warned = false
    for _, msg in ipairs(w:messages()) do warned = warned or msg:find("outside every tet") ~= nil end
    assert.is_true(warned)
    assert.equal(fine.vertex_count, c.surface.n)
    local z0 = c.surface[0].z
    w:step(100)
    assert.is_true(c.surface[0].z < z0 - 0.005, "the surface did not move with the lattice")
  end)

  it("an implicit solid whose forces overflow the solve is stopped and named, not left standing still", function()
    -- a field's 1e200 N: the CG's norms overflow; it used to stop at once and leave the solid
    -- where it was, unfrozen and without a word
    local w = loom.world { dt = 1 / 60 }
    local s = w:solid { name = "s", model = "neohookean", mesh = loom.mesh.tet_box { size = {0.2, 0.2, 0.2}, cells = {2, 2, 2}, center = {0, 0, 1} } }
    w:force("huge", function() s.f[2].x = 1e200 end)
    w:step(2)
    assert.is_true(s.frozen)
    local all = table.concat(w:errors(), "\n")
    assert.truthy(all:find("solid 's' diverged", 1, true) and all:find("at vertex 2)", 1, true), all)
    assert.truthy(all:find("force field 'huge' pushed vertex 2 with 1e+200 N", 1, true), all)
  end)
end)

describe("Neo-Hookean solids", function()
  -- a bar of length 1 m, pinned at x = 0, pulled at x = 1 by a uniform traction (consistent nodal loads)
  local function bar(nu, stress, cells)
    local w = loom.world { dt = 1 / 60, gravity = {0, 0, 0} }
    local m = loom.mesh.tet_box { size = {1, 0.1, 0.1}, cells = cells, center = {0.5, 0, 0} }
    local b = w:solid { name = "bar", model = "neohookean", mesh = m, young = 1e6, poisson = nu, density = 1000, rayleigh = 0.01 }
    b:pin(b:select(function(x) return x.x < 1e-9 end))
    local load = {}
    local tri, nt = b:triangles()
    for t = 0, nt - 1 do
      local i, j, k = tri[3 * t], tri[3 * t + 1], tri[3 * t + 2]
      local xi, xj, xk = b.x[i], b.x[j], b.x[k]
      if xi.x > 1 - 1e-9 and xj.x > 1 - 1e-9 and xk.x > 1 - 1e-9 then
        local ux, uy, uz = xj.x - xi.x, xj.y - xi.y, xj.z - xi.z
        local vx, vy, vz = xk.x - xi.x, xk.y - xi.y, xk.z - xi.z
        local area = 0.5 * math.sqrt((uy * vz - uz * vy) ^ 2 + (uz * vx - ux * vz) ^ 2 + (ux * vy - uy * vx) ^ 2)
        for _, v in ipairs { i, j, k } do load[v] = (load[v] or 0) + stress * area / 3 end
      end
    end
    w:force("pull", function() for v, f in pairs(load) do b.f[v].x = b.f[v].x + f end end)
    local V0 = b:volume()
    w:step(240)
    local sum, n = 0, 0
    for v in pairs(load) do sum, n = sum + b.x[v].x, n + 1 end
    return sum / n - 1, b:volume() / V0 - 1
  end

  it("a bar under uniaxial load stretches as Young's modulus predicts, on coarse and finer meshes", function()
    for _, cells in ipairs { {10, 1, 1}, {20, 2, 2} } do
      local strain = bar(0, 2000, cells)
      assert.near(strain, 2000 / 1e6, 0.02 * 2000 / 1e6)
    end
  end)

  it("keeps its volume within 1 % at nu = 0.49, stretched 10 %", function()
    local strain, dv = bar(0.49, 1e5, {10, 1, 1})
    assert.is_true(strain > 0.08, "strain " .. strain)
    assert.is_true(math.abs(dv) < 0.01, ("volume changed %.4f"):format(dv))
    local _, dv3 = bar(0.3, 1e5, {10, 1, 1})
    assert.is_true(math.abs(dv3) > 0.02, "a compressible material changes volume") -- the test can tell
  end)

  it("a rubber ball dropped at dt = 1/60 bounces, inverts no tet, stays bounded and comes to rest", function()
    local w = loom.load_scene("scenes/rubber_ball.lua"):instantiate()
    local ball = w:body "ball"
    local lo0, hi0 = ball:aabb()
    local landed, bounced, first_bounce_done = false, false, false
    local top_after = 0
    for step = 1, 180 do
      w:step()
      local lo, hi = ball:aabb()
      if lo[3] < 0.02 then landed = true end
      if landed and lo[3] > 0.05 then bounced = true end
      if bounced then top_after = math.max(top_after, hi[3]) end
      if bounced and not first_bounce_done and lo[3] > 0.08 then
        first_bounce_done = true
        for _, msg in ipairs(w:messages()) do assert.is_nil(msg:find("inverted"), msg) end
      end
      assert.is_false(ball.frozen, "step " .. step)
    end
    assert.is_true(landed and bounced and first_bounce_done, "it did not bounce")
    assert.is_true(top_after < hi0[3], ("it rose to %.3f m from %.3f m"):format(top_after, hi0[3]))
    assert.is_true(lo0[3] > 0)
    for _, msg in ipairs(w:messages()) do assert.is_nil(msg:find("inverted"), msg) end
    -- and it comes to rest on the floor, upright in volume
    local lo = ball:aabb()
    assert.near(lo[3], 0.003, 0.002)
  end)
end)

describe("Neo-Hookean contacts", function()
  it("a soft cube squashed by a kinematic press bulges, keeps its volume and recovers", function()
    local w = loom.load_scene("scenes/soft_press.lua"):instantiate()
    local c = w:body "cube"
    local V0 = c:volume()
    w:run(2.5)
    local lo, hi = c:aabb()
    assert.near(hi[3] - lo[3], 0.3 * (1 - 0.33), 0.01)
    assert.is_true(hi[1] - lo[1] > 0.33, "no bulge: " .. (hi[1] - lo[1]))
    -- (its faces stick to the floor and the press now, friction 0.8, so it barrels and loses 8.9 %
    -- of its volume at nu = 0.45; while the contacts had no friction its faces slid out and it lost
    -- 4.9 %)
    assert.is_true(math.abs(c:volume() / V0 - 1) < 0.12, "volume " .. c:volume() / V0)
    w:run(3)
    lo, hi = c:aabb()
    assert.near(hi[3] - lo[3], 0.3, 0.01)
    assert.equal(0, w:interpenetrations())
  end)
end)

describe("Neo-Hookean friction and stacks", function()
  local function rubber(w, name, center)
    return w:solid { name = name, model = "neohookean", young = 1e6, poisson = 0.45, density = 1100, friction = 0.5,
                     thickness = 0.005, mesh = loom.mesh.tet_box { size = {0.5, 0.5, 0.5}, cells = {4, 4, 4}, center = center } }
  end
  local function com_x(b)
    local q, M = 0, 0
    for j = 0, b.n - 1 do q, M = q + b.m[j] * b.x[j].x, M + b.m[j] end
    return q / M
  end

  it("a rubber cube sliding on the floor slows down at about mu g (friction from the solve's contact force)", function()
    local w = loom.world { dt = 1 / 60 }
    w:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 }
    local b = rubber(w, "c", {0, 0, 0.255})
    w:run(0.5)
    for j = 0, b.n - 1 do b.v[j].x = 1 end
    local function vx()
      local p, M = 0, 0
      for j = 0, b.n - 1 do p, M = p + b.m[j] * b.v[j].x, M + b.m[j] end
      return p / M
    end
    w:run(0.05)
    -- mu g = 4.9 m/s^2 would leave 0.755 m/s after 0.05 s; measured 0.82 (the cube tips onto its
    -- front edge and rocks, and vertices that lift off give no friction); without friction from
    -- the solve's contact force it kept 1.000
    local v1 = vx()
    assert.is_true(v1 > 0.7 and v1 < 0.86, ("%.3f m/s after 0.05 s"):format(v1))
    w:run(1.95)
    assert.is_true(math.abs(vx()) < 0.05, ("still sliding at %.3f m/s"):format(vx()))
  end)

  it("rubber cubes at dt = 1/60 stack: two stand still, three stand for 6 s", function()
    for _, count in ipairs { 2, 3 } do
      local w = loom.world { dt = 1 / 60 }
      w:rigid { name = "floor", shape = loom.shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 }
      for k = 1, count do
        rubber(w, "c" .. k, {0.02 * (k - 1), 0.01 * (k - 1), 0.255 + (k - 1) * 0.51})
      end
      local top = w:body("c" .. count)
      w:run(1)
      -- the holds on the cube underneath are state: a snapshot continues bit for bit
      local snap = w:snapshot()
      w:step(20)
      local h1 = w:hash()
      w:restore(snap)
      w:step(20)
      assert.equal(h1, w:hash())
      w:restore(snap)
      local x1 = com_x(top)
      for _ = 1, 5 do
        w:run(1)
        assert.equal(0, w:interpenetrations(), ("%d cubes, t = %.1f s"):format(count, w.time))
      end
      local lo = top:aabb()
      -- the top cube still sits on the others (measured: 0.50 and 0.98-0.99 m; before its vertices
      -- were held on the cube under it in the solve, it slid off within a second)
      assert.is_true(lo[3] > 0.5 * (count - 1) - 0.03, ("%d cubes: the top cube's bottom at %.3f m"):format(count, lo[3]))
      -- and barely moves: two cubes 0 mm from t = 1 to 6 s, three 0-2 cm (they wander a little)
      local moved = math.abs(com_x(top) - x1)
      assert.is_true(moved < (count == 2 and 0.002 or 0.03), ("%d cubes: the top cube moved %.4f m"):format(count, moved))
    end
  end)
end)

describe("solids: plasticity, the mouse and overlapping starts", function()
  local function pulled(yield)
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local b = w:solid { name = "bar", node_mass = 0.05, distance = 40, volume = 10, damping = 1, yield = yield, creep = 0.5,
                        mesh = loom.mesh.tet_box { size = {2, 0.4, 0.4}, cells = {5, 1, 1}, center = {1, 0, 0} } }
    b:pin(b:select(function(x) return x.x < 1e-9 end))
    local ends = b:select(function(x) return x.x > 2 - 1e-9 end)
    local g = b:pin(ends)
    g:follow(loom.trajectory.linear { from = {0, 0, 0}, to = {0.6, 0, 0}, t0 = 0, t1 = 1 })
    w:run(1.5)
    b:unpin(ends)
    w:run(3)
    local sum = 0
    for _, i in ipairs(ends) do sum = sum + b.x[i].x end
    return sum / #ends - 2
  end

  it("an elastic bar springs back; past its yield strain it keeps part of the stretch", function()
    local elastic, plastic = pulled(0), pulled(0.05)
    assert.is_true(math.abs(elastic) < 0.01, ("elastic bar kept %.3f m"):format(elastic))
    assert.is_true(plastic > 0.1, ("plastic bar kept %.3f m"):format(plastic))
  end)

  it("the mouse's grab pulls a solid's vertex toward the pointer", function()
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local c = w:solid { name = "c", node_mass = 0.05, distance = 60, volume = 15, damping = 1,
                        mesh = loom.mesh.tet_box { size = {1, 1, 1} } }
    local v = c:vertex_near { 0.5, 0.5, 0.5 }
    w:grab(c, v, {1.5, 1.5, 1.5}, 8)
    w:step(50)
    assert.is_true(c.x[v].x > 0.7, ("vertex at %.3f"):format(c.x[v].x))
  end)

  it("solids that start inside each other: penetration contact pushes them apart, the pipeline says so", function()
    local w = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    local a = w:solid { name = "a", node_mass = 0.05, distance = 40, volume = 15, damping = 2, contact = "penetration",
                        mesh = loom.mesh.tet_box { size = {1, 1, 1}, center = {-0.4, 0, 0} } }
    local b = w:solid { name = "b", node_mass = 0.05, distance = 40, volume = 15, damping = 2, contact = "penetration",
                        mesh = loom.mesh.tet_box { size = {1, 1, 1}, center = {0.4, 0, 0} } }
    w:step(50)
    local _, ha = a:aabb()
    local lb = b:aabb()
    assert.is_true(ha[1] - lb[1] < 0.02, ("still %.3f m inside each other"):format(ha[1] - lb[1]))
    local w2 = loom.world { dt = 0.01, gravity = {0, 0, 0} }
    w2:solid { name = "a", node_mass = 0.05, mesh = loom.mesh.tet_box { size = {1, 1, 1}, center = {-0.4, 0, 0} } }
    w2:solid { name = "b", node_mass = 0.05, mesh = loom.mesh.tet_box { size = {1, 1, 1}, center = {0.4, 0, 0} } }
    w2:step()
    local said = false
    for _, msg in ipairs(w2:messages()) do said = said or msg:find("already cross") ~= nil end
    assert.is_true(said, "no message about the crossing start")
  end)
end)

describe("drawing solids", function()
  it("draws the embedded surface, or the lattice when asked (the window's l key)", function()
    local ffi = require "ffi"
    local C = require "loom.lib"
    local view = require "loom.view"
    local w = loom.world { dt = 0.01 }
    local fine = loom.mesh.sphere { radius = 0.5, segments = 24, rings = 12 }
    w:solid { name = "s", node_mass = 0.05, surface = fine, mesh = loom.mesh.tet_box { size = {1, 1, 1}, cells = {2, 2, 2} } }
    local canvas = ffi.gc(C.loom_canvas_create(160, 120), C.loom_canvas_destroy)
    local cam = view.fit(w)
    local function lit(lattice)
      view.draw(canvas, w, cam, { grid = false, lattice = lattice })
      local px, n = C.loom_canvas_pixels(canvas), 0
      for i = 0, 160 * 120 - 1 do
        if px[4 * i] ~= 0x2A or px[4 * i + 1] ~= 0x2E then n = n + 1 end
      end
      return n
    end
    local sphere, box = lit(false), lit(true)
    assert.is_true(sphere > 100 and box > sphere * 1.1, ("sphere %d px, lattice %d px"):format(sphere, box))
  end)
end)

describe("solids and rigid bodies", function()
  it("a ball smaller than the lattice's cells rests on a soft cube instead of sinking between its vertices", function()
    local w = loom.world { dt = 1 / 100 }
    floor(w)
    local c = cube(w, "c", { size = {2.5, 2.5, 2.5}, center = {0, 0, 1.26}, damping = 2 })
    local ball = w:rigid { name = "ball", shape = loom.shape.sphere(0.4), mass = 2, position = {0, 0, 3.5} }
    w:run(3)
    local _, hi = c:aabb()
    local bottom = ball.position.z - 0.4
    assert.is_true(bottom > hi[3] - 0.1, ("ball bottom %.3f m, cube top %.3f m"):format(bottom, hi[3]))
    assert.is_true(math.abs(ball.position.z - 2.85) < 0.1)
    -- the ball's weight went into the cube: it sags a little more than it does alone
    assert.is_true(hi[3] < 2.51)
  end)
end)

describe("solids and polytopes", function()
  it("a box, a cylinder and a hull dropped corner first rest on a coarse soft cube instead of passing between its vertices", function()
    -- the lattice's cells are 0.5 m: a 0.2 m body falling corner first onto the middle of a face
    -- meets no vertex; only its corners and edges against the surface triangles can hold it
    local th = math.acos(-1 / math.sqrt(3)) / 2
    local s = math.sin(th) / math.sqrt(2)
    local shapes = {
      box = loom.shape.box(0.1, 0.1, 0.1),
      cylinder = loom.shape.cylinder(0.1, 0.1),
      hull = loom.shape.convex(loom.mesh.sphere { radius = 0.12, segments = 6, rings = 3 }),
    }
    for name, shape in pairs(shapes) do
      local w = loom.world { dt = 1 / 100 }
      floor(w)
      local c = cube(w, "c", { size = {2.5, 2.5, 2.5}, center = {0, 0, 1.26}, damping = 2 })
      local b = w:rigid { name = name, shape = shape, mass = 2, position = {0.05, 0.03, 3.0},
                          orientation = {math.cos(th), -s, s, 0} }
      local deepest = 0
      for _ = 1, 60 do
        w:run(0.05)
        local _, hi = c:aabb()
        local lo = b:aabb()
        deepest = math.max(deepest, hi[3] - lo[3])
        assert.equal(0, w:interpenetrations(), ("%s at t = %.2f s"):format(name, w.time))
      end
      -- it lands at 2.5 m/s and dents the jelly (k_D = 60) by up to a quarter metre, then rests
      -- in a dent of a few centimetres; before, it sank to the floor
      local _, hi = c:aabb()
      local lo = b:aabb()
      assert.is_true(deepest < 0.3, ("%s: %.3f m below the top at most"):format(name, deepest))
      assert.is_true(lo[3] > hi[3] - 0.12, ("%s: bottom %.3f m, cube top %.3f m"):format(name, lo[3], hi[3]))
    end
  end)

  it("a coarse cube with penetration contacts falls on a mesh ridge between its vertices and is not cut", function()
    -- a tent whose ridge (z = 0.5) lies between the cube's bottom vertices (cells of a third of a
    -- metre): the vertices alone let the ridge cut 0.17 m into it
    local w = loom.world { dt = 1 / 100 }
    floor(w)
    local v = { {-0.5, -1, 0}, {0, -1, 0.5}, {0.5, -1, 0}, {-0.5, 1, 0}, {0, 1, 0.5}, {0.5, 1, 0} }
    local t = { {0, 1, 4}, {0, 4, 3}, {1, 2, 5}, {1, 5, 4} }
    w:rigid { name = "tent", shape = loom.shape.mesh(loom.mesh.from_arrays(v, t)), static = true, friction = 1 }
    local c = cube(w, "c", { size = {1, 1, 1}, cells = {3, 3, 3}, center = {0, 0, 1.1}, damping = 2, friction = 1,
                             contact = "penetration" })
    local lowest = math.huge
    for _ = 1, 150 do
      w:step()
      assert.equal(0, w:interpenetrations(), ("t = %.2f s"):format(w.time))
      local low = math.huge -- the lowest of the bottom vertices nearest the ridge
      for k = 0, c.n - 1 do
        if math.abs(c.x[k].x) < 0.2 and c.x[k].z < 1 then low = math.min(low, c.x[k].z) end
      end
      lowest = math.min(lowest, low)
    end
    -- landed on the ridge, the vertices beside it stay near its height (without the triangle
    -- contacts they came down to the slopes, 0.33 m)
    assert.is_true(lowest > 0.45, ("the ridge went %.3f m in"):format(0.5 - lowest))
  end)
end)

describe("tet_fill limits", function()
  it("refuses a fill that would take minutes, saying what to change", function()
    local ok, err = pcall(loom.mesh.tet_fill, loom.mesh.sphere { radius = 1, segments = 256, rings = 128 }, { cell = 0.03 })
    assert.is_false(ok)
    assert.matches("too much work", err)
    ok, err = pcall(loom.mesh.tet_fill, loom.mesh.sphere { radius = 1 }, { cell = 0.001 })
    assert.is_false(ok)
    assert.matches("use a larger cell", err)
  end)
end)
