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
end)
