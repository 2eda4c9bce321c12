-- One parameter table per kind: the kernel's table drives Lua's creation checks, body:set/get and
-- the tables in docs/api.md.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local params = require "loom.params"
local U = require "util"

describe("parameter tables", function()
  it("docs/api.md shows exactly the kernel's tables", function()
    local out, code = U.loom_run("exec scripts/gen_param_docs.lua --check")
    assert.equal(0, code, out)
  end)

  it("creation checks use the kernel's ranges, and body:set/get accept every live parameter", function()
    local W = loom.world {}
    local m = loom.mesh.grid { size = {1, 1}, cells = {4, 4} }
    for _, kind in ipairs { "cloth", "rigid" } do
      local list = params.list(params.kinds[kind])
      assert.less(2, #list)
      local b = kind == "cloth" and W:cloth { name = "c", mesh = m }
        or W:rigid { name = "r", shape = loom.shape.sphere(0.1), static = true }
      for _, p in ipairs(list) do
        local v = b:get(p.name) -- every parameter can be read
        assert.equal("number", type(v))
        if p.live then
          -- one above the maximum is refused at creation and by set, naming the parameter
          local bad = p.max + (p.integer and 1 or math.max(1, math.abs(p.max)))
          local ok, err = pcall(b.set, b, p.name, bad)
          assert.is_false(ok, p.name)
          assert.truthy(tostring(err):find(p.name, 1, true), tostring(err))
          local def = kind == "cloth" and { name = "x" .. p.name, mesh = m }
            or { name = "x" .. p.name, shape = loom.shape.sphere(0.1), static = true }
          def[p.name] = bad
          ok, err = pcall(kind == "cloth" and W.cloth or W.rigid, W, def)
          assert.is_false(ok, p.name)
          assert.truthy(tostring(err):find(p.name, 1, true), tostring(err))
        else
          local ok, err = pcall(b.set, b, p.name, v)
          assert.is_false(ok)
          assert.truthy(tostring(err):find("read only", 1, true) or tostring(err):find("unknown", 1, true), tostring(err))
        end
      end
    end
  end)

  it("an unknown parameter lists the live ones", function()
    local W = loom.world {}
    local c = W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4} } }
    local ok, err = pcall(c.set, c, "strech", 10)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("unknown parameter 'strech'", 1, true), tostring(err))
    assert.truthy(tostring(err):find("stretch", 1, true))
  end)
end)
