-- The explicit integrators against what docs/api.md says of them (issue 7's independent check):
-- convergence order measured by halving the substep, a hanging cloth that comes to rest with zero
-- velocity, RK4's dissipation at its stability-limited substep, and the warning that points to the
-- implicit integrator when a step needs very many substeps.
local loom = require "loom"

local function swing(integrator, substeps)
  local W = loom.world {dt = 1 / 60}
  local c = W:cloth { name = "c", integrator = integrator, damping = 0, drag = 0, substeps = substeps,
                      mesh = loom.mesh.grid { size = {0.5, 0.5}, cells = {4, 4}, center = {0, 0, 1} } }
  c:pin { c:vertex_near {-0.25, 0.25, 1} }
  W:run(0.5)
  local out = {}
  for i = 0, c.n - 1 do out[i] = {c.x[i].x, c.x[i].y, c.x[i].z} end
  return out, c.n
end

local function max_diff(a, b, n)
  local e = 0
  for i = 0, n - 1 do
    for k = 1, 3 do e = math.max(e, math.abs(a[i][k] - b[i][k])) end
  end
  return e
end

describe("explicit integrators", function()
  it("converge at their order: symplectic and verlet second, rk4 fourth", function()
    for _, case in ipairs { {"symplectic", 4}, {"verlet", 4}, {"verlet_001", 4}, {"rk4", 16} } do
      local ref, n = swing(case[1], 2048)
      local e1, e2 = max_diff(swing(case[1], 64), ref, n), max_diff(swing(case[1], 128), ref, n)
      assert.near(e1 / e2, case[2], 0.15 * case[2], case[1])
    end
  end)

  it("bring a hanging cloth to rest with zero velocity (symplectic, verlet)", function()
    for _, integrator in ipairs {"symplectic", "verlet"} do
      local W = loom.world {dt = 1 / 240}
      local c = W:cloth { name = "c", integrator = integrator, damping = 1e-3, drag = 2,
                          mesh = loom.mesh.grid { size = {0.4, 0.4}, cells = {6, 6}, center = {0, 0, 1}, plane = "xz" } }
      c:pin(c:edge "top")
      W:run(10)
      local vmax = 0
      for i = 0, c.n - 1 do vmax = math.max(vmax, math.abs(c.v[i].x), math.abs(c.v[i].y), math.abs(c.v[i].z)) end
      assert.less(vmax, 1e-9, integrator)
      assert.less(W:energy().kinetic, 1e-15, integrator)
    end
  end)

  it("rk4 at its automatic substep dissipates the energy of an undamped falling cloth; more substeps cure it", function()
    -- the figures docs/api.md quotes: a 32 x 32 springs cloth pinned at two corners, no damping or
    -- drag, 10 s at dt = 1/240
    local function lost(integrator, substeps)
      local W = loom.world {dt = 1 / 240}
      local c = W:cloth { name = "c", integrator = integrator, damping = 0, drag = 0, substeps = substeps,
                          mesh = loom.mesh.grid { size = {1, 1}, cells = {31, 31}, center = {0, 0, 1} } }
      c:pin { c:vertex_near {-0.5, 0.5, 1}, c:vertex_near {0.5, 0.5, 1} }
      local e0 = W:energy().total
      W:run(10)
      return 1 - W:energy().total / e0, W:stats().substeps
    end
    local auto, s = lost("rk4", 0)
    assert.equal(9, s)
    assert.near(auto, 0.286, 0.03)
    assert.less(lost("rk4", 60), 0.02)
    -- symplectic keeps it (its energy oscillates about the start, within a few percent)
    assert.less(math.abs(lost("symplectic", 0)), 0.10)
  end)

  it("say once that the implicit integrator would take the step in one solve", function()
    local W = loom.world {dt = 1 / 30}
    local c = W:cloth { name = "stiff", stretch = 20000,
                        mesh = loom.mesh.grid { size = {1, 1}, cells = {31, 31}, center = {0, 0, 1} } }
    W:step(2)
    local errs = W:errors()
    assert.equal(1, #errs, table.concat(errs, "\n"))
    assert.truthy(errs[1]:find("cloth 'stiff': the explicit integrator needs %d+ substeps per step at dt = 0.0333 s"), errs[1])
    assert.truthy(errs[1]:find("use integrator = 'implicit'", 1, true), errs[1])
    assert.less(100, c:get "substeps")
    -- a new dt that needs far more substeps says so again, with that dt
    W.dt = 1 / 10
    W:step(2)
    errs = W:errors()
    assert.equal(2, #errs, table.concat(errs, "\n"))
    assert.truthy(errs[2]:find("cloth 'stiff': the explicit integrator needs %d+ substeps per step at dt = 0.1 s"), errs[2])
  end)
  it("stay stable at their automatic substep where stiffness-proportional damping dominates", function()
    -- 2 beta / h > 1 (fine grids, or here a large damping): Verlet once took its damping forces at
    -- the extrapolated end-of-substep velocity and diverged where symplectic Euler did not
    for _, damping in ipairs {3e-4, 1e-3} do
      for _, integ in ipairs {"verlet", "verlet_001", "symplectic"} do
        local W = loom.world {dt = 1 / 60}
        local c = W:cloth { name = "c", integrator = integ, damping = damping,
                            mesh = loom.mesh.grid { size = {1, 1}, cells = {23, 23}, center = {0, 0, 1}, plane = "xz" } }
        c:pin { c:vertex_near {-0.5, 0, 1.5}, c:vertex_near {0.5, 0, 1.5} }
        W:run(1)
        assert.is_false(c.frozen, ("%s at damping %g"):format(integ, damping))
        local vmax = 0
        for i = 0, c.n - 1 do vmax = math.max(vmax, math.abs(c.v[i].x) + math.abs(c.v[i].y) + math.abs(c.v[i].z)) end
        assert.less(vmax, 5)
      end
    end
  end)
end)
