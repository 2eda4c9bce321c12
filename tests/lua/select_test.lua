-- Vertex selections on cloths: predicate, box, distance, boundary and the named edges of grids,
-- all as 0-based index lists that pin and unpin take.
local loom = require "loom"

local function flag(world)
  return world:cloth { name = "flag", mesh = loom.mesh.grid { size = {1, 0.6}, cells = {10, 6}, center = {0, 0, 1}, plane = "xz" } }
end

local function set(list)
  local s = {}
  for _, i in ipairs(list) do s[i] = true end
  return s
end

local function same(a, b)
  assert.equal(#a, #b, "sizes differ")
  for k = 1, #a do assert.equal(a[k], b[k], "entry " .. k) end
end

describe("selections", function()
  it("by predicate see the position and the index", function()
    local c = flag(loom.world {})
    local left = c:select(function(p) return p.x < -0.49 end)
    assert.equal(7, #left)
    for _, i in ipairs(left) do assert.near(c.x[i].x, -0.5, 1e-12) end
    local odd = c:select(function(_, i) return i % 2 == 1 end)
    assert.equal(math.floor(c.n / 2), #odd)
    assert.equal(1, odd[1])
  end)

  it("by box and by distance match a brute-force scan", function()
    local c = flag(loom.world {})
    local box = c:select_box({-0.21, -1, 0.9}, {0.3, 1, 1.3})
    local near = c:select_near({0.1, 0, 1.1}, 0.25)
    local want_box, want_near = {}, {}
    for i = 0, c.n - 1 do
      local p = c.x[i]
      if p.x >= -0.21 and p.x <= 0.3 and p.z >= 0.9 and p.z <= 1.3 then want_box[#want_box + 1] = i end
      if (p.x - 0.1) ^ 2 + p.y ^ 2 + (p.z - 1.1) ^ 2 <= 0.25 ^ 2 then want_near[#want_near + 1] = i end
    end
    assert.less(0, #want_box)
    assert.less(0, #want_near)
    same(want_box, box)
    same(want_near, near)
    assert.error(function() c:select_box({0, 0, 0}, {-1, 1, 1}) end, "'hi' must be >= 'lo'")
    assert.error(function() c:select_near({0, 0, 0}, -1) end, "bad argument #2 to 'select_near'")
  end)

  it("the boundary is the union of a grid's four edges", function()
    local c = flag(loom.world {})
    local b = c:boundary()
    assert.equal(2 * (10 + 6), #b)
    local union = {}
    for _, e in ipairs {"left", "right", "bottom", "top"} do
      for _, i in ipairs(c:edge(e)) do union[i] = true end
    end
    local n = 0
    for _ in pairs(union) do n = n + 1 end
    assert.equal(n, #b)
    for _, i in ipairs(b) do assert.is_true(union[i], "vertex " .. i) end
    -- a closed mesh has no boundary
    local ball = loom.world {}:cloth { name = "ball", mesh = loom.mesh.sphere { radius = 0.2, segments = 8, rings = 4 } }
    assert.equal(0, #ball:boundary())
  end)

  it("named edges lie where their names say, in the grid's plane", function()
    local c = flag(loom.world {})
    local lo, hi = c:aabb()
    local sides = {left = {"x", lo[1]}, right = {"x", hi[1]}, bottom = {"z", lo[3]}, top = {"z", hi[3]}}
    for name, s in pairs(sides) do
      local e = c:edge(name)
      assert.equal((name == "left" or name == "right") and 7 or 11, #e, name)
      for _, i in ipairs(e) do assert.near(c.x[i][s[1]], s[2], 1e-12, name) end
    end
    local round = loom.world {}:cloth { name = "disc", mesh = loom.mesh.sphere { radius = 0.2, segments = 8, rings = 4 } }
    assert.error(function() round:edge "left" end, "was not made from loom.mesh.grid")
    assert.error(function() c:edge "north" end, "bad argument #1 to 'edge'")
  end)

  it("a flag pinned along its left edge holds that edge in the wind", function()
    local W = loom.world {}
    local c = flag(W)
    local left = c:edge "left"
    local pole = {}
    for k, i in ipairs(left) do pole[k] = {c.x[i].x, c.x[i].y, c.x[i].z} end
    c:pin(left)
    W:force("wind", function(_, t)
      for i = 0, c.n - 1 do c.f[i].y = c.f[i].y + 3 * (1 + math.sin(4 * t)) * c.m[i] end
    end)
    W:run(1)
    for k, i in ipairs(left) do
      assert.equal(pole[k][1], c.x[i].x); assert.equal(pole[k][2], c.x[i].y); assert.equal(pole[k][3], c.x[i].z)
    end
    local free = set(c:edge "right")
    for i in pairs(free) do assert.less(0.05, math.abs(c.x[i].y), "the free edge flies") end
    assert.equal(#left, c:unpin(c:select_box({-0.6, -1, 0}, {-0.49, 1, 2})))
    assert.error(function() c:pin(c:select_near({5, 5, 5}, 0.1)) end, "the list of vertices is empty")
  end)
end)
