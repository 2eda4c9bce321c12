-- What `bend` means for the Baraff–Witkin model: the plate's bending rigidity D in N m. A flat
-- sheet rolled onto a cylinder of radius R stores D A / (2 R^2), whatever the direction of the roll
-- relative to the mesh; and a cantilever strip sags as beam theory says.
local loom = require "loom"

-- Rolls every vertex of c (flat in z = 0) onto a cylinder of radius R whose axis makes `angle` with y.
local function roll(c, angle, R)
  local ca, sa = math.cos(angle), math.sin(angle)
  for i = 0, c.n - 1 do
    local x, y = c.x[i].x, c.x[i].y
    local s, t = ca * x + sa * y, -sa * x + ca * y
    local X, Z = R * math.sin(s / R), R * (1 - math.cos(s / R))
    c.x[i].x, c.x[i].y, c.x[i].z = ca * X - sa * t, sa * X + ca * t, Z
  end
end

-- An equilateral-triangle mesh of about w x w metres with n triangles per row.
local function equilateral(n, w)
  local a = w / n
  local h = a * math.sqrt(3) / 2
  local rows = math.floor(w / h)
  local verts, tris = {}, {}
  for j = 0, rows do
    for i = 0, n do verts[#verts + 1] = {-w / 2 + i * a + (j % 2) * a / 2, -w / 2 + j * h, 0} end
  end
  local W = n + 1
  for j = 0, rows - 1 do
    for i = 0, n - 1 do
      local v00, v10, v01, v11 = j * W + i, j * W + i + 1, (j + 1) * W + i, (j + 1) * W + i + 1
      if j % 2 == 0 then
        tris[#tris + 1] = {v00, v10, v01}
        tris[#tris + 1] = {v10, v11, v01}
      else
        tris[#tris + 1] = {v00, v10, v11}
        tris[#tris + 1] = {v00, v11, v01}
      end
    end
  end
  return loom.mesh.from_arrays(verts, tris), (n * a) * (rows * h)
end

local function bending_energy(mesh, D, angle, R)
  local W = loom.world {}
  local c = W:cloth { name = "c", model = "baraff_witkin", stretch = 0, shear = 0, bend = D, mesh = mesh }
  roll(c, angle, R)
  return W:energy().elastic
end

describe("bend is the bending rigidity D (N m)", function()
  it("a grid rolled onto a cylinder stores D A / (2 R^2) in every direction", function()
    local cells = 48
    for _, deg in ipairs {0, 30, 45, 60, 90} do
      local mesh = loom.mesh.grid { size = {0.4, 0.4}, cells = {cells, cells} }
      for _, R in ipairs {0.5, 2} do
        local e = bending_energy(mesh, 0.01, math.rad(deg), R)
        local want = 0.5 * 0.01 * 0.16 / (R * R)
        -- the hinges of the outermost ring of edges are missing: 1 - 1/48 of the energy at most
        assert.near(e / want, 1, 0.03, ("%d degrees, R = %g m"):format(deg, R))
      end
    end
  end)

  it("so does a mesh of equilateral triangles", function()
    local mesh, A = equilateral(32, 0.4)
    for _, deg in ipairs {0, 45, 90} do
      local e = bending_energy(mesh, 0.02, math.rad(deg), 1)
      assert.near(e / (0.5 * 0.02 * A), 1, 0.04, deg .. " degrees")
    end
  end)

  it("a cantilever strip sags as beam theory q L^4 / (8 D) says, closer as the mesh is refined", function()
    -- a 0.3 m strip, 0.1 m wide, clamped at one end (two pinned columns), under its own weight,
    -- stiff in-plane so only bending deflects it; settled with drag
    local function sag(cw)
      local L, width, D = 0.3, 0.1, 0.44
      local a = width / cw
      local n = math.floor(L / a + 0.5) + 1
      local W = loom.world {dt = 1 / 60}
      local c = W:cloth { name = "strip", model = "baraff_witkin", stretch = 2e4, shear = 2e3, bend = D, density = 0.2,
                          drag = 3, damping = 0, cg_tolerance = 1e-8, cg_iterations = 5000,
                          mesh = loom.mesh.grid { size = {n * a, width}, cells = {n, cw}, center = {n * a / 2 - a, 0, 1} } }
      c:pin(c:select(function(p) return p.x < 1e-9 end))
      W:run(8)
      local tip, k = 0, 0
      for i = 0, c.n - 1 do
        if c.rest[i].x > L - 1e-9 then
          tip = tip + (1 - c.x[i].z)
          k = k + 1
        end
      end
      return (tip / k) / (0.2 * 9.81 * L ^ 4 / (8 * D))
    end
    -- 1.17x at 4 cells across, 1.085x at 8: first order in the cell size towards beam theory. When
    -- a grid line's hinge took its opposite vertices from alternating rows, a row could bend where
    -- no hinge measured it, and the strip sagged 1.48x at 8 cells across.
    local r4, r8 = sag(4), sag(8)
    assert.less(math.abs(r8 - 1), 0.1, ("8 cells across: %.3f x beam theory"):format(r8))
    assert.near((r8 - 1) / (r4 - 1), 0.5, 0.1, ("%.3f, %.3f"):format(r4, r8))
  end)

end)
