-- Relative paths given to loom.mesh.load, loom.load_scene and loom.dofile resolve against the file
-- that makes the call, so scenes and tests work whatever the current directory; absolute paths are
-- used as they are, and a file found only in the current directory still loads.
package.path = "tests/lua/support/?.lua;" .. package.path
local U = require "util"

local function absolute(p)
  if p:sub(1, 1) == "/" then return p end
  return os.getenv("PWD") .. "/" .. p
end
local LOOM = absolute(U.loom)

local TRI = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"

local DROP = [[
local loom = require "loom"
local scene = loom.scene { title = "drop" }
function scene.build(world)
  world:rigid { name = "tri", shape = loom.shape.mesh(loom.mesh.load("meshes/tri.obj")), static = true }
  world:cloth { name = "c", mesh = loom.mesh.grid { size = {0.2, 0.2}, cells = {2, 2}, center = {0, 0, 1} } }
end
return scene
]]

-- a project directory: proj/drop.lua, proj/meshes/tri.obj, proj/helper.lua, proj/tests/drop_test.lua
local function project()
  local root = U.tmpdir()
  local proj = root .. "/proj"
  os.execute(("mkdir -p %q %q %q"):format(proj .. "/meshes", proj .. "/tests", root .. "/elsewhere"))
  U.write(proj .. "/meshes/tri.obj", TRI)
  U.write(proj .. "/drop.lua", DROP)
  U.write(proj .. "/helper.lua", "return {answer = 42}\n")
  U.write(proj .. "/tests/drop_test.lua", [[
local loom = require "loom"
describe("drop", function()
  it("loads the scene next to the test's directory and its mesh next to the scene", function()
    local W = loom.load_scene("../drop.lua"):instantiate()
    assert.equal("rigid", W:body("tri").kind)
  end)
  it("loads Lua files next to the test", function()
    assert.equal(42, loom.dofile("../helper.lua").answer)
  end)
end)
]])
  return root, proj
end

describe("relative paths", function()
  it("resolve against the scene file when run from another directory", function()
    local root, proj = project()
    local out, code = U.sh(("cd %q && %q run %q --headless --time 0.05 --quiet"):format(root .. "/elsewhere", LOOM,
      proj .. "/drop.lua"))
    assert.equal(0, code, out)
    -- the same with a relative scene path from the parent directory
    out, code = U.sh(("cd %q && %q run proj/drop.lua --headless --time 0.05 --quiet"):format(root, LOOM))
    assert.equal(0, code, out)
  end)

  it("resolve against the test file for load_scene and loom.dofile", function()
    local root = project()
    local out, code = U.sh(("cd %q && %q test ../proj/tests/drop_test.lua"):format(root .. "/elsewhere", LOOM))
    assert.equal(0, code, out)
    assert.truthy(out:find("2 passed, 0 failed", 1, true), out)
  end)

  it("fall back to the current directory, and leave absolute paths alone", function()
    local root, proj = project()
    U.write(root .. "/elsewhere/only_here.obj", TRI)
    U.write(proj .. "/uses_cwd.lua", ([[
local loom = require "loom"
assert(loom.mesh.load("only_here.obj").triangle_count == 1)
assert(loom.mesh.load(%q).triangle_count == 1)
assert(loom.resolve("meshes/tri.obj") == %q)
assert(loom.resolve("only_here.obj") == "only_here.obj")
print("fine")
]]):format(proj .. "/meshes/tri.obj", proj .. "/meshes/tri.obj"))
    local out, code = U.sh(("cd %q && %q exec %q"):format(root .. "/elsewhere", LOOM, proj .. "/uses_cwd.lua"))
    assert.equal(0, code, out)
    assert.truthy(out:find("fine", 1, true), out)
  end)

  it("let the tablecloth scene load its table from any directory", function()
    local root = U.tmpdir()
    local scene = absolute("scenes/tablecloth.lua")
    local text = U.read(scene)
    assert.is_nil(text:find("debug.getinfo", 1, true), "the scene still works around relative paths")
    local out, code = U.sh(("cd %q && %q run %q --headless --time 0.02 --quiet"):format(root, LOOM, scene))
    assert.equal(0, code, out)
  end)
end)
