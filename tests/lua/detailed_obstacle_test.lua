-- Document 001's cloth on a detailed obstacle (scenes/detailed_obstacle.lua: a 9 800-face static
-- mesh): with friction the cloth hangs on it, without it the cloth slides off, never crossing it;
-- the obstacle's tree finds the same triangles as testing every one of them (world.brute_obstacles,
-- the same state hash) with orders of magnitude fewer exact tests (001 claims 4–5 for its octree).
local loom = require "loom"

local scene = loom.load_scene("scenes/detailed_obstacle.lua")
local CELLS = 20 -- coarser than the scene's 32: the test runs in seconds (it hangs and slides alike)

-- Runs `steps` steps, checking after every one that no cloth triangle crosses anything; returns the
-- world, the fraction of cloth vertices above the obstacle's mid-height and the cloth's mean height.
local function run(params, steps)
  local w = scene:instantiate(params)
  for s = 1, steps do
    w:step()
    assert.equal(0, w:interpenetrations(), ("friction %g, step %d"):format(params.friction, s))
  end
  assert.equal(0, #w:errors(), table.concat(w:errors(), "; "))
  local c = w:body "cloth"
  local mid = scene.center[3]
  local above, z = 0, 0
  for i = 0, c.n - 1 do
    z = z + c.x[i].z
    if c.x[i].z > mid then above = above + 1 end
  end
  assert.is_false(c.frozen)
  return w, above / c.n, z / c.n
end

describe("detailed_obstacle: 001's cloth on a 9 800-face obstacle", function()
  it("the obstacle has about 10 000 faces", function()
    local m = scene.obstacle_mesh(scene.params.segments, scene.params.rings)
    assert.equal(9800, m.triangle_count)
  end)

  it("hangs on it with friction (0.8) and slides off onto the floor without, never crossing it", function()
    -- with friction, measured at 3.5 s (cells 20): 72 % of the vertices above the obstacle's
    -- mid-height, mean height 0.37 m; without, at 7.5 s: none above it, mean height 0.07 m: on the
    -- floor (its top is z = 0) beside the obstacle, a fold leaning on it (the folded pile leans on
    -- it for a while: 6 % above at 4.5 s, 0.5 % at 6.5 s)
    local _, held, z_held = run({friction = 0.8, cells = CELLS}, 350)
    assert.less(0.6, held, "share above mid-height with friction")
    assert.less(0.3, z_held, "mean height with friction")
    local _, slid, z_slid = run({friction = 0, cells = CELLS}, 750)
    assert.less(slid, 0.05, "share above mid-height without friction")
    assert.less(z_slid, 0.1, "mean height without friction")
  end)

  it("counts its triangle tests: the same state as testing every triangle, far fewer tests", function()
    -- 50 steps: the cloth lands at about 0.1 s and lies on the obstacle for the rest. A brute-force
    -- scan costs 10 000 tests a query, so this comparison stays short and coarse.
    local hashes, tests, brute = {}, {}, {}
    for _, scan in ipairs {false, true} do
      local w = scene:instantiate {cells = 16}
      w.brute_obstacles = scan
      assert.equal(scan, w.brute_obstacles)
      local t, b = 0, 0
      for _ = 1, 50 do
        w:step()
        local st = w:stats()
        t, b = t + st.obstacle_tests, b + st.obstacle_tests_brute
      end
      assert.less(0, w:stats().contacts) -- it lies on the obstacle
      hashes[#hashes + 1], tests[#tests + 1], brute[#brute + 1] = w:hash(), t, b
    end
    assert.equal(hashes[1], hashes[2])
    -- the same queries either way; the scan tests every triangle for each
    assert.equal(brute[1], brute[2])
    assert.equal(brute[2], tests[2])
    assert.equal(0, brute[1] % 9800)
    -- the tree: measured 1 100 times fewer tests here (1 299 for the scene's 32² cloth over
    -- its first 4 s), where 001 reports 4–5 orders of magnitude for its octree
    assert.less(100 * tests[1], brute[1], ("ratio %.0f"):format(brute[1] / tests[1]))
  end)

  it("the switch is a boolean, off by default, and counts nothing without mesh obstacles", function()
    local w = loom.world {}
    assert.is_false(w.brute_obstacles)
    assert.error(function() w.brute_obstacles = 1 end, "must be a boolean")
    w:rigid { name = "ball", shape = loom.shape.sphere(0.3), static = true }
    w:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4}, center = {0, 0, 0.31} } }
    w:step()
    assert.equal(0, w:stats().obstacle_tests)
    assert.equal(0, w:stats().obstacle_tests_brute)
  end)
end)
