-- Contacts with obstacles at the level of triangles: a coarse cloth sags between its vertices by
-- cell^2 / 8R; its triangles must still not cut into small round obstacles, nor into box edges.
local loom = require "loom"

local function drop(shape, cells, center)
  local W = loom.world {}
  W:rigid { name = "o", shape = shape, position = {0, 0, 0.5}, static = true }
  W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {cells, cells}, center = center } }
  local worst = 0
  for _ = 1, 100 do
    W:step(4)
    worst = math.max(worst, W:interpenetrations())
  end
  return worst, W
end

describe("coarse cloth", function()
  it("does not cut into a small sphere (cells 12 cm, radius 15 cm)", function()
    assert.equal(0, (drop(loom.shape.sphere(0.15), 8, {0.03, 0.02, 0.8})))
  end)
  it("does not cut into a capsule lying across it", function()
    assert.equal(0, (drop(loom.shape.capsule(0.1, 0.2), 8, {0.03, 0.02, 0.8})))
  end)
  it("does not let a box edge poke through between its vertices", function()
    local worst, W = drop(loom.shape.box(0.3, 0.3, 0.05), 10, {0.05, 0.0, 0.7})
    assert.equal(0, worst)
    assert.less(0, W:stats().contacts)
  end)
end)
