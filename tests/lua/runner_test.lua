-- The test runner itself: what failing assertions say, where failures point, and what `loom test`
-- says when it finds nothing to run.
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

-- The message of a failing assertion (assertions raise a table with the text in .msg).
local function failure(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok, "the assertion should have failed")
  return type(err) == "table" and err.msg or tostring(err)
end

describe("assertion messages", function()
  it("assert.near names the expected value, the tolerance and the actual value", function()
    local msg = failure(function() assert.near(0.965, 0.865, 0.001) end)
    assert.truthy(msg:find("expected 0.865 ± 0.001, got 0.965", 1, true), msg)
    msg = failure(function() assert.near(2.5, -1e-3, 1e-9, "corner height") end)
    assert.truthy(msg:find("corner height: expected -0.001 ± 1e-09, got 2.5", 1, true), msg)
  end)

  it("assert.near passes within the tolerance and fails on NaN", function()
    assert.near(1.0005, 1, 0.001)
    local msg = failure(function() assert.near(0 / 0, 1, 0.5) end)
    assert.truthy(msg:find("expected 1 ± 0.5, got", 1, true), msg)
  end)

  it("assert.equal shows numbers that differ in the last digits", function()
    local msg = failure(function() assert.equal(0.3, 0.1 + 0.2) end)
    assert.truthy(msg:find("expected 0.3, got 0.30000000000000004", 1, true), msg)
    msg = failure(function() assert.equal("a", "b") end)
    assert.truthy(msg:find('expected "a", got "b"', 1, true), msg)
  end)
end)

describe("loom test without a path", function()
  it("says where it looked for tests/lua and how to name tests", function()
    local dir = U.tmpdir()
    local exe = U.loom:sub(1, 1) == "/" and U.loom or os.getenv("PWD") .. "/" .. U.loom
    local out, code = U.sh(("cd %q && %q test"):format(dir, exe))
    assert.equal(1, code, out)
    assert.truthy(out:find("no test path given and no 'tests/lua' directory in " .. dir, 1, true), out)
    assert.truthy(out:find("loom test PATH", 1, true), out)
  end)
end)
