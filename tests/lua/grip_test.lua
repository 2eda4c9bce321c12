-- Grips (world:grip) and fixed vertices (world:cloth{fixed = …}): document 000's robot picks up
-- vertices at a time, carries them on a trajectory with exactly its velocity, and lets go; and the
-- towel fold scene built on them.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"

local function sheet(W, integrator)
  return W:cloth { name = "sheet", model = "baraff_witkin", integrator = integrator or "implicit",
                   mesh = loom.mesh.grid { size = {1, 1}, cells = {8, 8}, center = {0, 0, 1} } }
end

-- a corner carried up and sideways at constant velocity (1, 0, 2) m/s, starting 0.3 s into the
-- trajectory's own clock: the grip subtracts traj(at)
local function line(t) return 1.0 * t, 0, 2.0 * t end

describe("world:grip", function()
  it("waits, then carries the vertices exactly on the trajectory, then lets them go with its velocity", function()
    local W = loom.world { dt = 1 / 60 }
    local c = sheet(W)
    local i = c:vertex_near {0.5, 0.5, 1}
    local g = W:grip { body = c, vertices = {i}, trajectory = line, at = 0.25, release = 0.75 }
    assert.equal("waiting", g:state())
    W:run(0.2)
    assert.less(c.x[i].z, 1 - 0.01)                -- free before the pick-up: it falls
    while W.time < 0.25 - 1e-9 do W:step() end
    assert.equal("holding", g:state())
    local p0 = {c.x[i].x, c.x[i].y, c.x[i].z}
    for _ = 1, 20 do
      W:step()
      local dt = W.time - 0.25
      assert.near(c.x[i].x, p0[1] + 1.0 * dt, 1e-12)
      assert.near(c.x[i].y, p0[2], 1e-12)
      assert.near(c.x[i].z, p0[3] + 2.0 * dt, 1e-12)
      assert.near(c.v[i].x, 1.0, 1e-9)
      assert.near(c.v[i].z, 2.0, 1e-9)
    end
    while W.time < 0.75 - 1e-9 do W:step() end
    assert.equal("holding", g:state())
    W:step()
    assert.equal("released", g:state())
    -- one free step later: not stopped, not kicked (the stretched cloth pulls it back a little)
    assert.less(0.5, c.v[i].x)
    assert.less(c.v[i].x, 2)
    assert.less(1.0, c.v[i].z)
    assert.less(c.v[i].z, 3)
    assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
  end)

  it("releases with exactly the carried velocity (a cloth without stiffness: v + g h after one step)", function()
    local W = loom.world { dt = 1 / 60 }
    local c = W:cloth { name = "dust", model = "baraff_witkin", stretch = 0, shear = 0, bend = 0, damping = 0, drag = 0,
                        cg_tolerance = 1e-12, mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4}, center = {0, 0, 1} } }
    local i = 7
    W:grip { body = c, vertices = {i}, trajectory = line, release = 0.5 }
    while W.time < 0.5 - 1e-9 do W:step() end
    W:step()
    assert.near(c.v[i].x, 1.0, 1e-9)
    assert.near(c.v[i].y, 0.0, 1e-9)
    assert.near(c.v[i].z, 2.0 - 9.81 / 60, 1e-9)
  end)

  it("picks up at once by default, and keeps a waiting vertex's velocity", function()
    local W = loom.world { dt = 1 / 60 }
    local c = sheet(W)
    W:run(0.2)
    local i, j = 0, c.n - 1
    local vz = c.v[j].z
    local g1 = W:grip { body = "sheet", vertices = {i}, trajectory = function(t) return 0, 0, t end }
    assert.equal("holding", g1:state())
    local g2 = W:grip { body = c, vertices = {j}, trajectory = line, at = 1 }
    assert.equal("waiting", g2:state())
    assert.near(c.v[j].z, vz, 0)                   -- creating a waiting grip does not stop the vertex
    local z = c.x[i].z
    W:run(0.5)
    assert.near(c.x[i].z, z + 0.5, 1e-9)
    g1:release()
    assert.equal("released", g1:state())
  end)

  it("refuses bad definitions with the field's name", function()
    local W = loom.world { dt = 1 / 60 }
    local c = sheet(W)
    local rigid = W:rigid { name = "ball", shape = loom.shape.sphere(0.1), static = true }
    local function err(def)
      local ok, e = pcall(function() W:grip(def) end)
      assert.is_false(ok)
      return tostring(e)
    end
    assert.truthy(err { body = "nope", vertices = {0}, trajectory = line }:find("no body named", 1, true))
    assert.truthy(err { body = rigid, vertices = {0}, trajectory = line }:find("'body' must be a cloth", 1, true))
    assert.truthy(err { body = c, vertices = {c.n}, trajectory = line }:find("'vertices'", 1, true))
    assert.truthy(err { body = c, vertices = {}, trajectory = line }:find("empty", 1, true))
    assert.truthy(err { body = c, vertices = {0}, trajectory = 3 }:find("'trajectory' must be a function", 1, true))
    assert.truthy(err { body = c, vertices = {0}, trajectory = line, at = 1, release = 0.5 }:find("'release'", 1, true))
    assert.truthy(err { body = c, vertices = {0}, trajectory = function() return 0 / 0, 0, 0 end }:find(
      "three finite numbers", 1, true))
    assert.truthy(err { body = c, vertices = {0}, trajectory = line, speed = 2 }:find("unknown field", 1, true))
    local e = err { body = c, vertices = {0}, trajectory = line, at = -1 }
    assert.truthy(e:find("in the past", 1, true), e)
    assert.truthy(e:find("grip_test.lua", 1, true), e)  -- the user's line
    -- nothing was left pinned by the failures
    for i = 0, c.n - 1 do assert.is_false(c:pinned(i)) end
  end)
end)

describe("world:cloth{fixed = …}", function()
  it("holds the listed vertices where the mesh put them", function()
    local W = loom.world { dt = 1 / 60 }
    local c = W:cloth { name = "c", model = "baraff_witkin", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4} },
                        fixed = {0, 4} }
    local x0, x4 = c.x[0].z, c.x[4].z
    W:run(1)
    assert.equal(x0, c.x[0].z)
    assert.equal(x4, c.x[4].z)
    assert.less(c.x[12].z, x0 - 0.1)
    assert.is_true(c:pinned(0) and c:pinned(4) and not c:pinned(1))
    for _, bad in ipairs { {99}, {}, "x", {0.5}, {1, 1}, {1, nil, 3}, {1, 2, k = 3} } do
      local ok, e = pcall(function()
        W:cloth { name = "d", mesh = loom.mesh.grid { size = {1, 1}, cells = {4, 4} }, fixed = bad }
      end)
      assert.is_false(ok)
      assert.truthy(tostring(e):find("'fixed'", 1, true), tostring(e))
      local _, places = tostring(e):gsub("%.lua:%d+:", "")
      assert.equal(1, places, tostring(e))         -- where, once
    end
    assert.equal(1, #W:bodies())                   -- the refused cloths are gone
  end)
end)

describe("the towel fold (scenes/towel_fold.lua)", function()
  it("folds the towel in half on the table: near corners on the far ones, nothing below the table", function()
    local W = loom.load_scene("../../scenes/towel_fold.lua"):instantiate()
    local c = W:body "towel"
    local near = {c:vertex_near {-0.25, -0.25, 0.75}, c:vertex_near {0.25, -0.25, 0.75}}
    local far = {c:vertex_near {-0.25, 0.25, 0.75}, c:vertex_near {0.25, 0.25, 0.75}}
    local top = 0
    for _ = 1, 240 do
      W:step()
      top = math.max(top, c.x[near[1]].z)
    end
    assert.less(0.95, top)                         -- lifted over the arc (radius 0.25 m)
    for k = 1, 2 do
      local a, b = c.x[near[k]], c.x[far[k]]
      local d = math.sqrt((a.x - b.x) ^ 2 + (a.y - b.y) ^ 2 + (a.z - b.z) ^ 2)
      assert.less(d, 0.06, ("corner %d is %.3f m from its far corner"):format(k, d))
    end
    for i = 0, c.n - 1 do assert.less(0.75 + 0.003, c.x[i].z) end  -- above the table top
    assert.is_false(c.frozen)
    assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
  end)

  it("continues bit for bit from a checkpoint saved before, during and after the fold", function()
    local d = U.tmpdir()
    local sc = loom.load_scene("../../scenes/towel_fold.lua")
    for k, t in ipairs {0.25, 1.5, 3.0} do
      local file = ("%s/towel%d.loom"):format(d, k)
      local W = sc:instantiate()
      W:run(t)
      W:save(file)
      W:run(1)
      local want = W:hash()
      local W2 = sc:instantiate()
      W2:load(file)
      W2:run(1)
      assert.equal(want, W2:hash(), ("saved at t = %g s"):format(t))
    end
  end)
end)
