-- Force fields' output is checked when they return: a non-finite force names the field, the body,
-- the vertex and the value, disables that field, and the simulation goes on undiverged.
local loom = require "loom"

local function sheet()
  local W = loom.world {}
  local c = W:cloth { name = "flag", mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {6, 6}, center = {0, 0, 1} } }
  return W, c
end

local function all_finite(c)
  for i = 0, c.n - 1 do
    local p = c.x[i]
    if not (p.x * 0 == 0 and p.y * 0 == 0 and p.z * 0 == 0) then return false end
  end
  return true
end

describe("force fields returning non-finite forces", function()
  it("are named with the body, vertex and value, disabled, and the cloth keeps going", function()
    local W, c = sheet()
    local bad_calls, good_calls = 0, 0
    W:force("gust", function(_, t)
      bad_calls = bad_calls + 1
      if t > 0.02 then c.f[7].y = c.f[7].y + 0 / 0 end
    end)
    W:force("push", function()
      good_calls = good_calls + 1
      for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + c.m[i] end
    end)
    W:run(0.5)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    local e = errs[1]
    for _, part in ipairs {"force field 'gust'", "cloth 'flag'", "vertex 7", "nan", "disabled"} do
      assert.truthy(e:find(part, 1, true), e)
    end
    assert.is_nil(e:find("diverged", 1, true), e)
    assert.is_false(c.frozen)
    assert.is_true(all_finite(c))
    local steps = math.floor(0.5 / W.dt + 0.5)
    assert.equal(steps, good_calls)                         -- the other field still runs
    assert.less(bad_calls, 8)                               -- the bad one stopped after its first NaN
    assert.less(0.1, c.v[20].x)                             -- and the push acted all along
  end)

  it("report infinities too, and count the bad vertices", function()
    local W, c = sheet()
    W:force("blast", function()
      c.f[3].z = -1 / 0
      c.f[40].x = 1 / 0
    end)
    W:step(3)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    assert.truthy(errs[1]:find("cloth 'flag' at vertex 3 at t = 0.0000 s: f = (0, 0, -inf) (2 vertices in all)", 1, true), errs[1])
    assert.is_false(c.frozen)
    assert.is_true(all_finite(c))
  end)

  it("report a field that raises once, even if it left a NaN behind", function()
    local W, c = sheet()
    W:force("half", function()
      c.f[0].x = 0 / 0
      error("half done")
    end)
    W:step(2)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    assert.truthy(errs[1]:find("half done", 1, true), errs[1])
    assert.is_false(c.frozen)
  end)

  it("are named as the cause when their finite forces make a cloth diverge", function()
    local W, c = sheet()
    W:force("kick", function(_, t) if t > 0.05 then c.f[10].z = c.f[10].z + 1e7 * c.m[10] end end)
    W:force("calm", function() end)
    W:run(0.2)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    assert.truthy(errs[1]:find("cloth 'flag' diverged", 1, true), errs[1])
    assert.truthy(errs[1]:find("force fields 'calm', 'kick' pushed vertex 10 with", 1, true), errs[1])
    assert.is_nil(errs[1]:find("reduce dt", 1, true), errs[1])
    assert.is_true(c.frozen)
  end)

  it("are not blamed for a divergence when their forces are small", function()
    local W, c = sheet()
    W:force("gentle", function() for i = 0, c.n - 1 do c.f[i].x = c.f[i].x + 0.1 * c.m[i] end end)
    c:set("stretch", 1e9)
    c:set("substeps", 1)
    W:run(0.2)
    local errs = table.concat(W:errors(), "\n")
    assert.truthy(errs:find("diverged", 1, true), errs)
    assert.is_nil(errs:find("gentle", 1, true), errs)
  end)
end)
