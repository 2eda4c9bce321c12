-- The guided tour (docs/guide.md) keeps working: every complete scene in it (a Lua block that
-- makes a loom.scene and returns it) loads, builds and runs a second headless.
local loom = require "loom"
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

local function scenes_in(path)
  local f = assert(io.open(path, "r"))
  local text = f:read("*a")
  f:close()
  local out = {}
  for block in text:gmatch("```lua\n(.-)```") do
    if block:find("loom.scene", 1, true) and block:find("return scene", 1, true) then out[#out + 1] = block end
  end
  return out
end

describe("the guide's scenes", function()
  it("every complete scene in docs/guide.md builds and runs a second", function()
    local blocks = scenes_in("docs/guide.md")
    assert.less(3, #blocks) -- sections 1, 8, 9 and 10 (the others change section 1's scene)
    local dir = U.tmpdir()
    for k, src in ipairs(blocks) do
      local path = ("%s/guide_%d.lua"):format(dir, k)
      local f = assert(io.open(path, "w"))
      f:write(src)
      f:close()
      local ok, err = pcall(function()
        local w = loom.load_scene(path):instantiate()
        w:run(1)
        for _, b in ipairs(w:bodies()) do
          if b.position then assert(b.position.x == b.position.x, b.name .. " is NaN") end
        end
      end)
      assert.is_true(ok, ("guide scene %d: %s"):format(k, tostring(err)))
    end
  end)
end)
