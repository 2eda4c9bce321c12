-- Per-vertex masses written through body.m (issue 7: mass scaling for grips): the step uses them
-- from the next step on (inverse masses and the total follow), and a mass that is not a finite
-- positive number is refused with a message naming the body, the vertex and the value.
local loom = require "loom"

local function sheet()
  local W = loom.world {dt = 1 / 240}
  local c = W:cloth { name = "sheet", drag = 0, mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {6, 6}, center = {0, 0, 1} } }
  return W, c
end

local function momentum_z(c)
  local p = 0
  for i = 0, c.n - 1 do p = p + c.m[i] * c.v[i].z end
  return p
end

describe("masses written from Lua", function()
  it("take effect at the next step: inverse masses follow and momentum grows by the new weight", function()
    local W, c = sheet()
    local total = 0
    for _, i in ipairs(c:edge "top") do c.m[i] = c.m[i] * 10 end
    for i = 0, c.n - 1 do total = total + c.m[i] end
    W:step()
    for _, i in ipairs(c:edge "top") do assert.equal(1 / c.m[i], c.inv_m[i]) end
    local p0 = momentum_z(c)
    W:step(24)
    assert.near(momentum_z(c) - p0, -9.81 * total * 24 / 240, 1e-12 * total)
  end)

  it("a heavier vertex accelerates less under the same force", function()
    -- no internal forces, so each vertex answers only to its own force and mass
    local W = loom.world {dt = 1 / 240, gravity = {0, 0, 0}}
    local c = W:cloth { name = "dust", stretch = 0, shear = 0, bend = 0, drag = 0,
                        mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {6, 6}, center = {0, 0, 1} } }
    local v = c:vertex_near {-0.25, -0.25, 1}
    local u = c:vertex_near {0.25, 0.25, 1}
    c.m[v] = c.m[u] * 4
    W:force("push", function() c.f[v].x, c.f[u].x = 1e-3, 1e-3 end)
    W:step()
    assert.near(c.v[u].x / c.v[v].x, 4, 1e-12)
  end)

  it("refuses a mass that is not a finite positive number up to 1e9 kg, keeping the last good one", function()
    -- (1e300 kg at one vertex used to be taken: the next step overflowed and the cloth froze with
    -- advice about dt and stiffness)
    for _, bad in ipairs {0, -1, 0 / 0, math.huge, 1e300, 2e9} do
      local W, c = sheet()
      local keep = c.m[5]
      c.m[5] = bad
      W:step()
      local errs = W:errors()
      assert.equal(1, #errs, table.concat(errs, "\n"))
      assert.truthy(errs[1]:find("cloth 'sheet': the mass of vertex 5 must be a finite number > 0", 1, true), errs[1])
      assert.equal(keep, c.m[5])
      assert.is_false(c.frozen)
    end
  end)
end)
