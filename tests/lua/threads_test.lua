-- A world may split the implicit cloth's matrix work over two threads (world.threads = 2, the
-- default on two cores or more); the results must be bit-identical to one thread, whatever the
-- scene: pins, self-collision, contacts in the solve, a movable body coupled to the cloth, springs.
local loom = require "loom"

local function run(scene, params, threads, steps)
  local w = loom.load_scene(scene):instantiate(params)
  w.threads = threads
  assert.equal(threads, w.threads)
  w:step(steps)
  return w:hash(), w
end

describe("threads", function()
  it("two threads give the same bits as one (implicit cloth scenes)", function()
    local cases = {
      {"scenes/hanging.lua", {n = 32}, 30},
      {"scenes/crumple.lua", {n = 16}, 60},        -- self-collision, the floor
      {"scenes/two_cloths.lua", {n = 16}, 50},     -- cloth on cloth, a box
      {"scenes/cloth_pushes_box.lua", {cells = 16}, 60}, -- a movable body in the solve
      {"scenes/flag_implicit.lua", {cells = 16}, 40},    -- a force field
      -- a pile: thousands of candidate pairs, whose start distances are found in two halves
      {"scenes/crumple.lua", {n = 32}, 110, candidates = 2048},
    }
    for _, c in ipairs(cases) do
      local h1 = run(c[1], c[2], 1, c[3])
      local h2, w = run(c[1], c[2], 2, c[3])
      assert.equal(h1, h2, c[1])
      assert.less(0, w:stats().iterations, c[1] .. ": an implicit solve ran")
      local most = 0
      for _, b in ipairs(w:bodies()) do
        if b.kind == "cloth" then most = math.max(most, b.n) end
      end
      assert.less(255, most, c[1] .. ": a cloth big enough to be split in two")
      if c.candidates then
        assert.less(c.candidates, w:stats().candidates, c[1] .. ": a candidate list long enough to be split")
      end
    end
  end)

  it("a mass-spring cloth integrated implicitly too", function()
    local function world(threads)
      local w = loom.world { dt = 1 / 60, threads = threads }
      local c = w:cloth { name = "c", model = "springs", integrator = "implicit", stretch = 2000,
                          mesh = loom.mesh.grid { size = {1, 1}, cells = {20, 20}, center = {0, 0, 1}, plane = "xz" } }
      c:pin { c:vertex_near {-0.5, 0, 1.5}, c:vertex_near {0.5, 0, 1.5} }
      w:step(30)
      return w:hash()
    end
    assert.equal(world(1), world(2))
  end)

  it("the setting is checked and can change between steps", function()
    local w = loom.world {}
    assert.is_true(w.threads == 1 or w.threads == 2)
    w.threads = 1
    assert.equal(1, w.threads)
    w.threads = 2
    assert.equal(2, w.threads)
    local ok, err = pcall(function() w.threads = 3 end)
    assert.is_false(ok)
    assert.matches("threads", err)
    ok, err = pcall(loom.world, { threads = 0 })
    assert.is_false(ok)
    assert.matches("threads", err)
  end)
end)
