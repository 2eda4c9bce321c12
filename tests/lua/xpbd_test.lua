-- springs_pbd with XPBD compliance (issue 7): the stiffness no longer depends on the iteration
-- count once the projection has converged, and it is 1 / compliance; 001's fractions per iteration
-- (compliance = 0, the default) keep getting stiffer with more iterations.
local loom = require "loom"

-- how far the lower half of a strip hanging from its top edge has sagged, after settling
local function sag(iterations, compliance)
  local W = loom.world {dt = 1 / 60}
  local c = W:cloth { name = "s", model = "springs_pbd", iterations = iterations, compliance = compliance, drag = 5,
                      substeps = 2, mesh = loom.mesh.grid { size = {0.1, 0.5}, cells = {4, 20}, center = {0, 0, 1}, plane = "xz" } }
  c:pin(c:edge "top")
  W:run(6)
  local z, k = 0, 0
  for i = 0, c.n - 1 do
    if c.rest[i].z < 0.75 + 1e-9 then
      z = z + (c.rest[i].z - c.x[i].z)
      k = k + 1
    end
  end
  return z / k
end

describe("springs_pbd compliance", function()
  it("gives the same stiffness at 160 and 320 iterations; 001's fractions do not", function()
    local x160, x320 = sag(160, 1e-2), sag(320, 1e-2)
    assert.near(x160 / x320, 1, 0.06)
    local f160, f320 = sag(160, 0), sag(320, 0)
    assert.less(5, f160 / f320)
  end)

  it("is 1 / compliance: twice the compliance, twice the sag", function()
    assert.near(sag(320, 2e-2) / sag(320, 1e-2), 2, 0.1)
  end)

  it("is checked like the other parameters", function()
    local W = loom.world {}
    local ok, err = pcall(W.cloth, W, { name = "s", model = "springs_pbd", compliance = -1,
                                         mesh = loom.mesh.grid { size = {1, 1}, cells = {2, 2} } })
    assert.is_false(ok)
    assert.truthy(tostring(err):find("compliance", 1, true), tostring(err))
  end)

  -- A two-column strip hanging from its top edge, only its structural springs (shear = bend = 0):
  -- each column is a chain of springs of stiffness 1 / compliance, and the bottom vertex sags by
  -- the sum over the springs of the weight below each, divided by that stiffness.
  local function chain(integrator)
    local a = 1e-2
    local W = loom.world {dt = 1 / 240}
    local c = W:cloth { name = "s", model = "springs_pbd", integrator = integrator, compliance = a, iterations = 200,
                        shear = 0, bend = 0, self_collision = false,
                        mesh = loom.mesh.grid { size = {0.1, 0.5}, cells = {1, 20}, center = {0, 0, 1}, plane = "yz" } }
    c:pin(c:edge "top")
    W:run(8) -- (settled: rk4's damping is the slowest)
    local col = c:select(function(_, i) return c.rest[i].y < 0 end)
    table.sort(col, function(i, j) return c.rest[i].z > c.rest[j].z end)
    local sag = 0
    for s = 1, #col - 1 do
      local below = 0
      for j = s + 1, #col do below = below + c.m[col[j]] * 9.81 end
      sag = sag + below * a
    end
    local bottom = col[#col]
    return c.rest[bottom].z - c.x[bottom].z, sag
  end

  it("has the stiffness 1 / compliance under gravity, with every explicit integrator", function()
    for _, integrator in ipairs {"symplectic", "verlet", "verlet_001", "rk4"} do
      local got, want = chain(integrator)
      assert.near(got / want, 1, 0.01, integrator) -- (it was 0.5: the constraints carried half the weight)
    end
  end)
end)
