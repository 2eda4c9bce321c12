-- Cloth and rigid bodies act on each other (issue 9): the contacts of implicit cloth with a body
-- are constraints of its solve with the body's velocities among the unknowns.
local loom = require "loom"

describe("cloth and rigid bodies, both ways", function()
  it("a ball dropped into a hammock comes to rest; the pins carry ball and cloth within 1 %", function()
    local w = loom.load_scene("scenes/hammock.lua"):instantiate()
    local ball, cloth = w:body "ball", w:body "hammock"
    local corners, weight = {}, ball.mass
    for _, c in ipairs { {-0.5, -0.5}, {0.5, -0.5}, {-0.5, 0.5}, {0.5, 0.5} } do
      corners[#corners + 1] = cloth:vertex_near { c[1], c[2], 1 }
    end
    for i = 0, cloth.n - 1 do weight = weight + cloth.m[i] end
    weight = weight * 9.81
    local lowest = math.huge
    for _ = 1, 8 * 240 do
      w:step()
      lowest = math.min(lowest, ball.position.z)
      assert.equal(0, w:interpenetrations())
    end
    -- it fell into the cloth and stays in it, above the floor of the pins' plane minus the sag
    assert.is_true(lowest < 1.0 and ball.position.z > 0.9, ("ball at z = %.3f (lowest %.3f)"):format(ball.position.z, lowest))
    local v = ball.velocity
    assert.is_true(math.sqrt(v.x ^ 2 + v.y ^ 2 + v.z ^ 2) < 0.005, "the ball still moves")
    -- the pins hold everything: minus the model forces and weights at the pinned vertices
    local f = cloth:internal_forces()
    local rz = 0
    for _, i in ipairs(corners) do rz = rz - f[i].z + cloth.m[i] * 9.81 end
    assert.near(rz, weight, 0.01 * weight)
    -- the ball rests on the cloth: no cloth vertex inside it
    for i = 0, cloth.n - 1 do
      local x = cloth.x[i]
      local d = math.sqrt((x.x - ball.position.x) ^ 2 + (x.y - ball.position.y) ^ 2 + (x.z - ball.position.z) ^ 2)
      assert.is_true(d > 0.12, ("vertex %d is %.4f m from the centre"):format(i, d))
    end
  end)

  it("a cloth thrown over a light box on a table pushes it, and momentum goes where it should", function()
    local w = loom.load_scene("scenes/cloth_pushes_box.lua"):instantiate()
    local box, cloth = w:body "box", w:body "cloth"
    local x0 = box.position.x
    for _ = 1, 240 do
      w:step()
      assert.equal(0, w:interpenetrations())
    end
    assert.is_true(box.position.x - x0 > 0.05, ("the box moved %.4f m"):format(box.position.x - x0))
    -- it ends at rest on the table, upright
    assert.near(box.position.z, 0.88, 0.002)
    assert.is_true(math.abs(box.velocity.x) < 0.02)
  end)

  it("the same ball, cloth and pins give bit-identical states in two runs", function()
    local function run()
      local w = loom.load_scene("scenes/hammock.lua"):instantiate()
      w:step(240)
      return w:hash()
    end
    assert.equal(run(), run())
  end)
end)

describe("the tablecloth trick (cloth pressed between dishes and a table)", function()
  local names = { "plate 1", "plate 2", "cup 1", "cup 2" }
  local function run(params, seconds)
    local w = loom.load_scene("scenes/tablecloth_trick.lua"):instantiate(params)
    local x0 = {}
    for _, n in ipairs(names) do x0[n] = w:body(n).position.x end
    for _ = 1, math.floor(seconds * 240 + 0.5) do
      w:step()
      assert.equal(0, w:interpenetrations())
    end
    local out = {}
    for _, n in ipairs(names) do
      local b = w:body(n)
      out[n] = {dx = b.position.x - x0[n], z = b.position.z}
    end
    return out
  end

  it("pulled fast (6 m/s), the cloth leaves the dishes standing on the table", function()
    local r = run({}, 0.8)
    for _, n in ipairs(names) do
      -- friction gives a dish at most mu g for the moment the cloth is under it: a few cm
      assert.is_true(math.abs(r[n].dx) < 0.1, ("%s moved %.3f m"):format(n, r[n].dx))
      assert.is_true(r[n].dx < -0.005, ("%s did not feel the cloth (%.4f m)"):format(n, r[n].dx))
      assert.is_true(r[n].z > 0.75, n .. " fell off the table")
    end
  end)

  it("pulled slowly (0.3 m/s over 0.3 m), the cloth drags the dishes with it", function()
    local r = run({speed = 0.3, distance = 0.3}, 1.4)
    for _, n in ipairs(names) do
      assert.is_true(r[n].dx < -0.2, ("%s moved only %.3f m"):format(n, r[n].dx))
      assert.is_true(r[n].z > 0.75, n .. " fell off the table")
    end
  end)
end)

describe("implicit cloth on a fixed ball", function()
  it("thrown at 2.5 m/s onto it (no friction), stays bounded in energy and then loses it", function()
    local w = loom.world { dt = 1 / 240 }
    local c = w:cloth { name = "c", model = "baraff_witkin", integrator = "implicit", thickness = 0.01, friction = 0,
                        density = 0.3, stretch = 20000, shear = 2000, damping = 0.02, self_collision = false,
                        mesh = loom.mesh.grid { size = {1, 1}, cells = {24, 24}, center = {0, 0, 1.0} } }
    w:rigid { name = "ball", shape = loom.shape.sphere(0.12), static = true, position = {0, 0, 0.7}, friction = 0 }
    for i = 0, c.n - 1 do c.v[i].z = -2.5 end
    -- (the contacts' position corrections at the impact add some: measured peaks 1.22x to 1.30x
    -- the start, depending on where each solve stops within its tolerance: 1.30 at cg_tolerance
    -- 1e-4, 1.26 with the last step's change as CG's first guess)
    local e0 = w:energy().total
    for s = 1, 240 do
      w:step()
      local e = w:energy().total
      assert.is_true(e <= 1.35 * e0, ("step %d: energy %.4f J, %.4f J at the start"):format(s, e, e0))
    end
    assert.is_true(w:energy().total < 0.5 * e0)
  end)
end)
