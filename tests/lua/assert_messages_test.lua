-- Failing assertions say what was expected and what came instead.
-- an assertion failure is a table carrying the message (the runner adds the location)
local function text(e) return type(e) == "table" and e.msg or tostring(e) end

describe("assertion messages", function()
  it("assert.near names the expected value with its tolerance and the value it got", function()
    local ok, err = pcall(assert.near, 0.965, 0.865, 0.001)
    assert.is_false(ok)
    assert.truthy(text(err):find("expected 0.865 ± 0.001, got 0.965", 1, true), text(err))
  end)

  it("assert.equal names the expected and the actual value", function()
    local ok, err = pcall(assert.equal, 3, 4)
    assert.is_false(ok)
    assert.truthy(text(err):find("expected 3, got 4", 1, true), text(err))
  end)

  it("assert.near says which arguments are wrong", function()
    local ok, err = pcall(assert.near, "a", 1, 0.1)
    assert.is_false(ok)
    assert.truthy(text(err):find("actual, expected, tolerance", 1, true), text(err))
  end)
end)
