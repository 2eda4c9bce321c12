-- Contacts with obstacles at the level of triangles: a coarse cloth sags between its vertices by
-- cell^2 / 8R; its triangles must still not cut into small round obstacles, nor into box edges.
local loom = require "loom"

local function drop(shape, cells, center)
  local W = loom.world {}
  W:rigid { name = "o", shape = shape, position = {0, 0, 0.5}, static = true }
  W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = center } }
  local worst = 0
  for _ = 1, 100 do
    W:step(4)
    worst = math.max(worst, W:interpenetrations())
  end
  return worst, W
end

describe("coarse cloth", function()
  it("does not cut into a small sphere (cells 12 cm, radius 15 cm)", function()
    assert.equal(0, (drop(loom.shape.sphere(0.15), 8, {0.03, 0.02, 0.8})))
  end)
  it("does not cut into a capsule lying across it", function()
    assert.equal(0, (drop(loom.shape.capsule(0.1, 0.2), 8, {0.03, 0.02, 0.8})))
  end)
  it("does not let a box edge poke through between its vertices", function()
    local worst, W = drop(loom.shape.box(0.3, 0.3, 0.05), 10, {0.05, 0.0, 0.7})
    assert.equal(0, worst)
    assert.less(0, W:stats().contacts)
  end)
end)

-- A square patch laid on a box tilted by `deg` about y (friction: cloth 0.8, box 1, so mu = 0.894,
-- the angle of repose 41.8 degrees), or dropped on it from `drop` m above: how far its centre
-- moves along x between t = 0.5 s (landed) and 2.5 s.
local function on_slope(integrator, deg, drop)
  local a = math.rad(deg)
  local W = loom.world {dt = 1 / 60}
  W:rigid { name = "slope", shape = loom.shape.box(1, 1, 0.05), position = {0, 0, 0},
            orientation = {math.cos(a / 2), 0, math.sin(a / 2), 0}, static = true, friction = 1 }
  local c = W:cloth { name = "c", model = "baraff_witkin", integrator = integrator, friction = 0.8,
                      mesh = loom.mesh.grid { size = {0.3, 0.3}, cells = {10, 10}, center = {0, 0, 0} } }
  for i = 0, c.n - 1 do -- onto the top face, at the contact distance
    local x, lift = c.x[i].x, 0.05 + 0.004 + (drop or 0)
    c.x[i].x, c.x[i].z = x * math.cos(a) + math.sin(a) * lift, -x * math.sin(a) + math.cos(a) * lift
  end
  local function cx() local s = 0 for i = 0, c.n - 1 do s = s + c.x[i].x end return s / c.n end
  W:run(0.5)
  local x0 = cx()
  W:run(2)
  return cx() - x0
end

describe("static friction on a slope", function()
  it("holds a patch below the angle of repose and lets it slide above, explicit and implicit", function()
    for _, integrator in ipairs { "symplectic", "implicit" } do
      for _, drop in ipairs {0, 0.01} do
        local what = ("%s, dropped %g m"):format(integrator, drop)
        assert.less(math.abs(on_slope(integrator, 20, drop)), 1e-6, what)
        assert.less(math.abs(on_slope(integrator, 38, drop)), 1e-6, what)
        assert.less(0.5, on_slope(integrator, 46, drop), what)
      end
    end
  end)
end)
