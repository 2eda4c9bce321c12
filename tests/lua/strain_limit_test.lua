-- The strain limit (strain_limit, Provot's deformation constraint): no edge ends a step longer
-- than (1 + s) times its rest length, whatever the model and integrator; it says when pins pull a
-- cloth apart beyond what it can do; bad values are refused by name; a checkpoint continues it
-- bit for bit.
local loom = require "loom"

local function max_stretch(c)
  local tri, nt = c:triangles()
  local worst = -1
  for t = 0, nt - 1 do
    for k = 0, 2 do
      local a, b = tri[3 * t + k], tri[3 * t + (k + 1) % 3]
      local p, q, r, s = c.x[a], c.x[b], c.rest[a], c.rest[b]
      local l = math.sqrt((p.x - q.x) ^ 2 + (p.y - q.y) ^ 2 + (p.z - q.z) ^ 2)
      local L = math.sqrt((r.x - s.x) ^ 2 + (r.y - s.y) ^ 2 + (r.z - s.z) ^ 2)
      worst = math.max(worst, l / L - 1)
    end
  end
  return worst
end

-- a soft cloth (its corners stretch several per cent) hanging from two corners
local function hanging(def)
  local W = loom.world {dt = def.dt or 1 / 60}
  def.dt = nil
  def.name = "cloth"
  def.mesh = loom.mesh.grid { size = {1, 1}, cells = {19, 19}, center = {0, 0, 1}, plane = "xz" }
  def.mass = 0.2
  local c = W:cloth(def)
  c:pin { c:vertex_near {-0.5, 0, 1.5}, c:vertex_near {0.5, 0, 1.5} }
  return W, c
end

describe("strain_limit", function()
  for _, case in ipairs {
    {model = "baraff_witkin", stretch = 1000, shear = 100, bend = 1e-4},
    {model = "springs", integrator = "symplectic", stretch = 1000, shear = 100, bend = 0, dt = 1 / 240},
    {model = "springs", integrator = "implicit", stretch = 1000, shear = 100, bend = 0},
  } do
    it(("keeps every edge within the limit after every step (%s, %s)"):format(case.model, case.integrator or "implicit"), function()
      local function run(limit)
        local def = {}
        for k, v in pairs(case) do def[k] = v end
        def.strain_limit = limit
        local W, c = hanging(def)
        local worst, limited = -1, 0
        for _ = 1, 60 do
          W:step()
          worst = math.max(worst, max_stretch(c))
          limited = limited + W:stats().strain_limited
        end
        assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
        return worst, limited
      end
      local free = run(0)
      assert.less(0.03, free)                       -- without the limit the corners stretch beyond 3 %
      local worst, limited = run(0.01)
      assert.truthy(worst <= 0.01, ("largest stretch %.9g"):format(worst))
      assert.less(0.0095, worst)                    -- and the limit is what holds them, not more
      assert.less(0, limited)
    end)
  end

  it("is a live parameter, refused by name when out of range", function()
    local W, c = hanging {model = "baraff_witkin"}
    assert.equal(0, c:get "strain_limit")
    c:set("strain_limit", 0.02)
    assert.equal(0.02, c:get "strain_limit")
    for _, bad in ipairs {-0.1, 0 / 0, 11, "x"} do
      local ok, err = pcall(c.set, c, "strain_limit", bad)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("strain_limit", 1, true), tostring(err))
    end
    local ok, err = pcall(W.cloth, W, { name = "b", strain_limit = -1,
                                       mesh = loom.mesh.grid { size = {1, 1}, cells = {3, 3} } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("strain_limit", 1, true), tostring(err))
  end)

  it("says once, naming the cloth, when pins pull it apart beyond the limit; the world keeps running", function()
    local W, c = hanging {model = "baraff_witkin", stretch = 300, strain_limit = 0.01}
    local g = c:pin { c:vertex_near {0.5, 0, 0.5} }
    g:follow(function(t) return 0, 0, -0.5 * t end) -- drags the bottom corner down at 0.5 m/s
    W:step(60)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    for _, part in ipairs {"cloth 'cloth'", "strain_limit 0.01 not reached", "raise 'stretch' or 'strain_limit'"} do
      assert.truthy(errs[1]:find(part, 1, true), errs[1])
    end
    assert.is_false(c.frozen)
    local x = c.x[0]
    assert.truthy(x.x == x.x and x.z == x.z)
  end)

  it("runs on a mesh with a zero-length edge and a zero-area triangle without NaN", function()
    -- vertices 3 and 4 coincide: edge 3-4 has no length to limit; triangle 1-4-3 has no area
    local m = loom.mesh.from_arrays({{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}},
                                    {{0, 1, 2}, {1, 3, 2}, {1, 4, 3}, {0, 4, 2}})
    for _, model in ipairs {"baraff_witkin", "springs"} do
      local W = loom.world {dt = 1 / 60}
      local c = W:cloth { name = "odd", model = model, mesh = m, self_collision = false, strain_limit = 0.01 }
      c:pin { 0 }
      W:run(1)
      assert.is_false(c.frozen, model)
      for i = 0, c.n - 1 do assert.truthy(c.x[i].z == c.x[i].z and c.v[i].z == c.v[i].z, model) end
    end
  end)

  it("continues bit for bit from a checkpoint", function()
    local W = hanging {model = "baraff_witkin", stretch = 300, strain_limit = 0.01}
    W:step(20)
    local snap = W:snapshot()
    W:step(20)
    local h = W:hash()
    W:restore(snap)
    W:step(20)
    assert.equal(h, W:hash())
  end)
end)
