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

  it("a parameter the cloth's model or integrator ignores is said once, naming it and who uses it", function()
    local W = loom.world {}
    local g = loom.mesh.grid { size = {0.3, 0.3}, cells = {3, 3} }
    local a = W:cloth { name = "a", model = "springs", integrator = "implicit", area_exponent = 0.75, mesh = g }
    local b = W:cloth { name = "b", model = "baraff_witkin", relative_damping = 1, compliance = 1e-3, mesh = g }
    local c = W:cloth { name = "c", model = "baraff_witkin", integrator = "symplectic", mesh = g }
    local d = W:cloth { name = "d", model = "springs_pbd", compliance = 1e-3, iterations = 5, mesh = g }
    c:set("cg_tolerance", 1e-5)
    c:set("cg_tolerance", 1e-6)                       -- said once
    c:set("newton_iterations", 4)                     -- its default: nothing to say
    d:set("iterations", 8)                            -- used
    local said = table.concat(W:messages(), "\n")
    local function count(text)
      local n, at = 0, 1
      while true do
        local i = said:find(text, at, true)
        if not i then return n end
        n, at = n + 1, i + 1
      end
    end
    assert.equal(1, count("cloth 'a': 'area_exponent' = 0.75 has no effect: it applies to model 'baraff_witkin' only"))
    assert.equal(1, count("cloth 'b': 'relative_damping' = 1 has no effect: it applies to model 'springs' only"))
    assert.equal(1, count("cloth 'b': 'compliance' = 0.001 has no effect: it applies to model 'springs_pbd' only"))
    assert.equal(1, count("cloth 'c': 'cg_tolerance' = 1e-05 has no effect: it applies to integrator 'implicit' only"))
    assert.equal(0, count("newton_iterations"))
    assert.equal(0, count("cloth 'd'"))
    assert.equal(1e-6, c:get "cg_tolerance")            -- kept all the same
    assert.equal(0, #W:errors())
  end)
end)
