-- Checkpoints: world:save / world:load / loom.world_load carry everything that decides the future,
-- across processes, and refuse files that do not fit.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"
local golden = require "golden"

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

describe("checkpoints", function()
  it("every scene: 0.5 s, save, 0.25 s more gives the hash a new process gets from the file after 0.25 s", function()
    -- (1 s each way took 4 of the suite's 25 minutes of processor time, 0.5 s 2.6 of 24; the
    -- golden digests run every scene 240 steps, and the snapshot test below restores after the
    -- first steps)
    local d = U.tmpdir()
    for k, scene in ipairs(golden.scenes()) do
      local file = ("%s/%d.loom"):format(d, k)
      local W = loom.load_scene(scene):instantiate()
      W:run(0.5)
      W:save(file)
      W:run(0.25)
      local want = W:hash()
      local script = ("%s/%d.lua"):format(d, k)
      U.write(script, ([[
local loom = require "loom"
local W = loom.world_load(%q)
W:run(0.25)
io.write("HASH ", W:hash(), "\n")
]]):format(file))
      local out, code = U.loom_run(("exec %q"):format(script))
      assert.equal(0, code, out)
      assert.equal(want, out:match("HASH (%x+)"), scene .. ": " .. out)
    end
  end)

  it("every scene: a snapshot after the first or second step, restored into a fresh world, goes on the same", function()
    -- what a step looks for (a body's first state, triangles across obstacles) travels with the state
    for _, scene in ipairs(golden.scenes()) do
      local W = loom.load_scene(scene):instantiate()
      local snaps = {}
      for k = 1, 2 do
        W:step()
        snaps[k] = W:snapshot()
      end
      W:step(10)
      for k = 1, 2 do
        local V = loom.load_scene(scene):instantiate()
        V:restore(snaps[k])
        V:step(12 - k)
        assert.equal(W:hash(), V:hash(), scene .. ", restored after step " .. k)
      end
    end
  end)

  it("saves worlds made without a scene file and loads them into a world built the same way", function()
    local d = U.tmpdir()
    local function build()
      local W = loom.world { dt = 1 / 200, wind = {0.5, 0, 0} }
      local c = W:cloth { name = "c", mesh = loom.mesh.grid { size = {1, 1}, cells = {10, 10}, center = {0, 0, 1} } }
      W:rigid { name = "ball", shape = loom.shape.sphere(0.3), position = {0, 0, 0.4}, static = true }
      c:pin { c:vertex_near {-0.5, -0.5, 1} }
      return W, c
    end
    local W, c = build()
    c:set("stretch", 800)
    W:run(0.5)
    W:save(d .. "/plain.loom")
    W:run(0.5)
    local want = W:hash()
    local V, c2 = build()
    V:load(d .. "/plain.loom")
    assert.equal(800, c2:get "stretch") -- parameters changed with body:set come back
    assert.near(0.5, V.time, 1e-12)
    V:run(0.5)
    assert.equal(want, V:hash())
    -- loom.world_load needs a scene to rebuild from
    assert.error(function() loom.world_load(d .. "/plain.loom") end, "without a scene file")
  end)

  it("refuses truncated, corrupted and foreign files, and other scenes unless forced", function()
    local d = U.tmpdir()
    local W = loom.load_scene("scenes/hello_cloth.lua"):instantiate()
    W:run(0.2)
    W:save(d .. "/hc.loom")
    local good = read(d .. "/hc.loom")
    local before = W:hash()
    U.write(d .. "/cut.loom", good:sub(1, #good - 7))
    assert.error(function() W:load(d .. "/cut.loom") end, "truncated")
    local mid = math.floor(#good / 2)
    U.write(d .. "/flip.loom", good:sub(1, mid - 1) .. string.char((good:byte(mid) + 1) % 256) .. good:sub(mid + 1))
    assert.error(function() W:load(d .. "/flip.loom") end, "corrupted")
    U.write(d .. "/junk.loom", "hello")
    assert.error(function() W:load(d .. "/junk.loom") end, "not a Loom checkpoint")
    assert.error(function() loom.world_load(d .. "/junk.loom") end, "not a Loom checkpoint")
    assert.equal(before, W:hash()) -- nothing was applied
    -- another scene: says which body differs
    local other = loom.load_scene("scenes/drape.lua"):instantiate()
    assert.error(function() other:load(d .. "/hc.loom") end, "bodies")
    -- same bodies, another mesh resolution: vertex counts differ, refused even when forced
    local src = read("scenes/hello_cloth.lua")
    local coarse = d .. "/coarse.lua"
    U.write(coarse, (src:gsub("cells = {32, 32}", "cells = {20, 20}", 1)))
    local F = loom.load_scene(coarse):instantiate()
    assert.error(function() F:load(d .. "/hc.loom", { force = true }) end, "vertices")
    -- same topology, other masses (a heavier cloth): refused, applied with force
    local heavy = d .. "/heavy.lua"
    U.write(heavy, (src:gsub("density = 0.2", "density = 0.4", 1)))
    local H = loom.load_scene(heavy):instantiate()
    local err = select(2, pcall(function() H:load(d .. "/hc.loom") end))
    assert.truthy(tostring(err):find("differs", 1, true), tostring(err))
    H:load(d .. "/hc.loom", { force = true })
    assert.near(W.time, H.time, 1e-12)
  end)
end)
