-- The world's contact buffer as Lua sees it: world:contacts() after a step.
local loom = require "loom"

describe("world:contacts()", function()
  it("lists the vertices resting on the ball with unit normals, at the contact distance, outside the ball", function()
    local w = loom.load_scene("scenes/hello_cloth.lua"):instantiate()
    w:run(1.5)
    local cs = w:contacts()
    local cloth, ball = w:body "cloth", w:body "ball"
    assert.less(10, #cs)
    local flags = cloth:contacts()
    for i = 0, #cs - 1 do
      local c = cs[i]
      assert.equal(cloth.handle, c.body_a)
      assert.equal(ball.handle, c.body_b)
      local len = math.sqrt(c.normal.x ^ 2 + c.normal.y ^ 2 + c.normal.z ^ 2)
      assert.near(len, 1, 1e-9)
      if c.type_a == 1 then -- a vertex: it sits at the cloth's thickness from the ball
        assert.equal(1, flags[c.feature_a])
        local d = ball:distance { c.point.x, c.point.y, c.point.z }
        assert.less(0.004 - 1e-9, d)
        assert.less(d, 0.0041)
      end
    end
    -- ids are persistent: the same vertex keeps its id in the next step (the vertex on top of the
    -- ball, which stays in contact)
    local first = cs[0]
    for i = 1, #cs - 1 do
      if cs[i].type_a == 1 and cs[i].point.z > first.point.z then first = cs[i] end
    end
    local id, vertex = first.id, first.feature_a
    w:step()
    local again = w:contacts()
    local found = false
    for i = 0, #again - 1 do
      if again[i].feature_a == vertex and again[i].type_a == 1 then found = again[i].id == id end
    end
    assert.is_true(found)
  end)

  it("refuses an index out of range and a view older than the last step", function()
    local w = loom.load_scene("scenes/hello_cloth.lua"):instantiate()
    w:run(1.0)
    local cs = w:contacts()
    local ok, err = pcall(function() return cs[#cs] end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("out of range", 1, true))
    w:step()
    ok, err = pcall(function() return cs[0] end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("stepped again", 1, true))
  end)
end)
