-- A force field that writes NaN is named as the cause; the body does not diverge (issue 6 item 3).
local loom = require "loom"

describe("a force field writing a non-finite force", function()
  it("is reported with its name, the body, the vertex and the value, disabled, and the run goes on", function()
    local W = loom.world {}
    local c = W:cloth { name = "flag", mesh = loom.mesh.grid { size = {1, 1}, cells = {8, 8}, center = {0, 0, 1} } }
    W:force("bad", function(world, t)
      if t > 0.02 then c.f[5].y = 0 / 0 end
    end)
    W:force("push", function() for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + 0.5 * c.m[i] end end)
    W:run(0.2)
    local errs = table.concat(W:errors(), "\n")
    assert.truthy(errs:find("force field 'bad' wrote a non-finite force on cloth 'flag' at vertex 5", 1, true), errs)
    assert.truthy(errs:find("nan", 1, true), errs)
    assert.is_false(errs:find("diverged", 1, true) ~= nil, errs)
    assert.is_false(c.frozen)
    -- the other field kept pushing along +x, and every position is finite
    local mx = 0
    for i = 0, c.n - 1 do
      assert.truthy(c.x[i].x == c.x[i].x)
      mx = mx + c.x[i].x / c.n
    end
    assert.less(0.005, mx)
    assert.equal(1, select(2, errs:gsub("non%-finite force", ""))) -- reported once, then disabled
  end)
end)
