-- Golden digests: an unintended change of physics in any scene shows here. When a change is
-- intended, record the new digests with `build/loom exec scripts/update_golden.lua` and say in the
-- commit which scenes changed and why.
package.path = "tests/lua/support/?.lua;" .. package.path
local golden = require "golden"

describe("golden digests", function()
  it("every scene gives its recorded state after " .. golden.steps .. " steps", function()
    local recorded = golden.read()
    local scenes = golden.scenes()
    assert.less(4, #scenes)
    local bad = {}
    for _, scene in ipairs(scenes) do
      local want = recorded[scene]
      local got = golden.compute(scene)
      if want == nil then
        bad[#bad + 1] = scene .. ": no golden digest recorded"
      elseif want ~= got then
        bad[#bad + 1] = ("%s: digest %s, recorded %s"):format(scene, got, want)
      end
    end
    assert.equal(0, #bad, table.concat(bad, "; ") .. " (see tests/lua/golden_test.lua)")
  end)

  it("the digest sees a one-ulp change of one coordinate", function()
    local loom = require "loom"
    local digest = require "digest"
    local w = loom.load_scene("scenes/hello_cloth.lua"):instantiate()
    w:step(3)
    local d0 = digest.world(w)
    local c = w:body "cloth"
    local x = c.x[7].z
    c.x[7].z = x + math.abs(x) * 2 ^ -52
    assert.is_true(digest.world(w) ~= d0)
  end)
end)
