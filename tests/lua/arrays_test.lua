-- Body arrays are bounds-checked views: an index outside 0..n-1 raises an error naming the body,
-- the array and the index at the user's line, also inside loops the JIT has compiled.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"

local function flag(cells)
  local W = loom.world {}
  local c = W:cloth { name = "flag", mesh = loom.mesh.grid { size = {1, 0.6}, cells = {cells, cells}, center = {0, 0, 1}, plane = "xz" } }
  return W, c
end

describe("body arrays", function()
  it("read and write the kernel's own memory", function()
    local W, c = flag(4)
    assert.equal(25, #c.x)
    c.x[3].z = 2.5
    assert.equal(2.5, loom.C.loom_body_x(W:ptr(), c.handle)[3].z)
    c.f[24].y = 7
    assert.equal(7, (c:raw "f")[24].y)
    c.m[0] = 0.125
    assert.equal(0.125, loom.C.loom_body_m(W:ptr(), c.handle)[0])
    assert.equal(c.rest[3].x, c.x[3].x)
  end)

  it("refuse the 1-based loop's last index with the body, array, index and line", function()
    local _, c = flag(4)
    local line
    local ok, err = pcall(function()
      for i = 1, c.n do line = U.line() + 1
        c.f[i].z = c.f[i].z + 1
      end
    end)
    assert.is_false(ok)
    assert.truthy(err:find("arrays_test.lua:" .. line .. ":", 1, true), err)
    assert.truthy(err:find("cloth 'flag'.f[25] is out of range (25 vertices, indices 0..24", 1, true), err)
    assert.truthy(err:find("0-based", 1, true), err)
  end)

  it("refuse a value of the wrong kind, and writes to read-only arrays, at the user's line", function()
    local _, c = flag(4)
    local cases = {
      {function() c.m[3] = "x" end, "cloth 'flag'.m[3]: expected a number, got \"x\""},
      {function() c.x[3] = 5 end, "cloth 'flag'.x[3]: expected a loom_vec3 or an {x, y, z} table, got number"},
      {function() c.inv_m[3] = 1 end, "cloth 'flag'.inv_m[3]: the array is read-only"},
      {function() c.rest[3] = {1, 2, 3} end, "cloth 'flag'.rest[3]: the array is read-only"},
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(case[1])
      assert.is_false(ok)
      assert.truthy(err:find(case[2], 1, true), err)
      assert.truthy(err:find("arrays_test.lua:%d+:"), err)
      assert.is_nil(err:find("array.lua", 1, true), err)
    end
    c.x[3] = {1, 2, 3}                              -- (what the views take still goes through)
    assert.equal(2, c.x[3].y)
    c.m[3] = 0.5
    assert.equal(0.5, c.m[3])
  end)

  it("refuse far and negative indices for every array", function()
    local _, c = flag(4)
    for _, k in ipairs {"x", "v", "f", "m", "rest"} do
      local ok, err = pcall(function() return c[k][c.n + 100000] end)
      assert.is_false(ok, k)
      assert.truthy(err:find(("cloth 'flag'.%s[100025] is out of range"):format(k), 1, true), err)
      ok, err = pcall(function() return c[k][-1] end)
      assert.is_false(ok, k)
      assert.truthy(err:find(("cloth 'flag'.%s[-1] is out of range"):format(k), 1, true), err)
    end
    local ok, err = pcall(function() c.f[c.n + 100000].x = 1 end)
    assert.is_false(ok)
    assert.truthy(err:find("cloth 'flag'.f[100025]", 1, true), err)
    ok, err = pcall(function() c.m[c.n] = 1 end)
    assert.is_false(ok)
    assert.truthy(err:find("cloth 'flag'.m[25]", 1, true), err)
    ok, err = pcall(function() return c.x.z end)
    assert.is_false(ok)
    assert.truthy(err:find("cloth 'flag'.x: index must be a vertex number", 1, true), err)
  end)

  it("check inside compiled traces too", function()
    local _, c = flag(63)
    local function field(last)
      for i = 0, last do c.f[i].x = c.f[i].x + c.m[i] end
    end
    for _ = 1, 50 do field(c.n - 1) end       -- hot: the loop is compiled by now
    local ok, err = pcall(field, c.n)
    assert.is_false(ok)
    assert.truthy(err:find("cloth 'flag'.f[4096] is out of range", 1, true), err)
    -- nothing was written past the end before the error
    assert.near(c.f[c.n - 1].x, 51 * c.m[c.n - 1], 1e-15)
  end)

  it("refuse every index once the body is removed", function()
    local W, c = flag(4)
    local f = c.f
    W:remove(c)
    local ok, err = pcall(function() return f[0] end)
    assert.is_false(ok)
    assert.truthy(err:find("cloth 'flag'.f[0]: the body was removed", 1, true), err)
  end)

  it("give raw pointers only when asked", function()
    local W, c = flag(4)
    local x = c:raw "x"
    assert.is_true(require("ffi").istype("loom_vec3*", x))
    assert.equal(loom.C.loom_body_x(W:ptr(), c.handle), x)
    assert.error(function() c:raw "velocity" end, "bad argument #1 to 'raw'")
  end)

  it("keep rest positions read-only", function()
    local _, c = flag(4)
    assert.error(function() c.rest[0].x = 1 end)
  end)
end)
