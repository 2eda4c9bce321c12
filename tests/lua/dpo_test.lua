-- loom.import.dpo: document 000's scene folders (world_parameters, body_list, dpo_/rig_/par_/vel_
-- files, ASCII STL) run in Loom unchanged. The two folders under tests/data/dpo were written from
-- the reference's description of the format (tests/data/dpo/make.lua).
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"

local DATA = loom.resolve("../data/dpo")

describe("loom.import.dpo", function()
  it("builds ClothOnTable: world from world_parameters, cloth and table from the body list", function()
    local W, bodies, warnings = loom.import.dpo(DATA .. "/ClothOnTable")
    assert.near(W.dt, 0.01, 1e-15)                 -- framerate 100
    local c, table_ = bodies.ClothOnTable, bodies.table
    assert.equal("cloth", c.kind)
    assert.equal("rigid", table_.kind)
    assert.equal(256, c.n)                         -- fabricCreator 0.6 0.6 15 15: (15 + 1)^2 vertices
    assert.equal(0, #warnings, table.concat(warnings, "\n"))
    -- par_ClothOnTable: density 0.2 kg/m^2 over 0.36 m^2
    local m = 0
    for i = 0, c.n - 1 do m = m + c.m[i] end
    assert.near(m, 0.2 * 0.36, 1e-9)
    assert.near(c:get "thickness", 0.003, 1e-15)
    assert.equal(4, c:get "integrator")            -- Baraff-Witkin, implicit (000's dynamics)
    local held = 0
    for i = 0, c.n - 1 do if c:pinned(i) then held = held + 1 end end
    assert.equal(2, held)                          -- vel_ClothOnTable holds two corners
  end)

  it("runs ClothOnTable: the cloth settles on the table top and does not pass through it", function()
    local W, bodies = loom.import.dpo(DATA .. "/ClothOnTable")
    local c = bodies.ClothOnTable
    W:run(3)
    assert.is_false(c.frozen)
    local on_top, lowest = 0, math.huge
    for i = 0, c.n - 1 do
      local x = c.x[i]
      assert.is_true(x.x == x.x and x.z == x.z)
      if math.abs(x.x) < 0.38 and math.abs(x.y) < 0.28 then
        lowest = math.min(lowest, x.z)
        if x.z < 0.71 then on_top = on_top + 1 end
      end
    end
    assert.less(0.7 + 0.0025, lowest)              -- table top at 0.7 m, cloth thickness 3 mm
    assert.less(100, on_top)                       -- most of it lies on the table
    assert.less(0, W:stats().contacts)
    assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
  end)

  it("drives HangingCloth's vertices exactly by its velocity file (holds, lifts, lets go, takes again)", function()
    local W, bodies = loom.import.dpo(DATA .. "/HangingCloth")   -- the environment/ layout
    local c = bodies.HangingCloth
    local a, b = 241, 255                          -- the ids in vel_HangingCloth
    local pa, pb = {c.x[a].x, c.x[a].y, c.x[a].z}, {c.x[b].x, c.x[b].y, c.x[b].z}
    local function at(i, p, dx, dy, dz)
      assert.near(c.x[i].x, p[1] + dx, 1e-12)
      assert.near(c.x[i].y, p[2] + dy, 1e-12)
      assert.near(c.x[i].z, p[3] + dz, 1e-12)
    end
    W:run(1)                                       -- 0..1 s: held still
    at(a, pa, 0, 0, 0) at(b, pb, 0, 0, 0)
    W:run(0.5)                                     -- 1..2 s: 0.1 m/s up
    at(a, pa, 0, 0, 0.05) at(b, pb, 0, 0, 0.05)
    assert.near(c.v[a].z, 0.1, 1e-9)
    W:run(0.5)
    at(a, pa, 0, 0, 0.1) at(b, pb, 0, 0, 0.1)
    W:run(0.5)                                     -- 2..2.5 s: a held still, b free (it falls)
    at(a, pa, 0, 0, 0.1)
    assert.is_false(c:pinned(b))
    assert.less(c.x[b].z, pb[3] + 0.1 - 1e-3)
    local qb = {c.x[b].x, c.x[b].y, c.x[b].z}
    W:run(1)                                       -- from 2.5 s: a at (-0.1, 0.1, 0), b at (0.1, 0.1, 0) m/s
    at(a, pa, -0.1, 0.1, 0.1)
    at(b, qb, 0.1, 0.1, 0)
    assert.near(c.v[b].x, 0.1, 1e-9)
    assert.near(c.v[b].y, 0.1, 1e-9)
    assert.near(c.v[b].z, 0, 1e-9)
    assert.equal(0, #W:errors(), table.concat(W:errors(), "\n"))
  end)

  it("refuses broken folders with the file (and line) at fault", function()
    local d = U.tmpdir()
    local function variant(name, edit)
      local dir = d .. "/" .. name
      os.execute(("cp -r %q %q"):format(DATA .. "/ClothOnTable", dir))
      edit(dir .. "/bodies")
      local ok, e = pcall(loom.import.dpo, dir)
      assert.is_false(ok, name)
      return tostring(e)
    end
    local function put(path, text) local f = assert(io.open(path, "wb")) f:write(text) f:close() end
    local function get(path) local f = assert(io.open(path, "rb")) local s = f:read("*a") f:close() return s end
    local e
    e = variant("missing_par", function(b) os.remove(b .. "/par_table") end)
    assert.truthy(e:find("body_list:%d+: par_table is listed but .-par_table does not exist"), e)
    e = variant("bad_number", function(b) put(b .. "/par_ClothOnTable", get(b .. "/par_ClothOnTable"):gsub("= 0.2", "= zero")) end)
    assert.truthy(e:find("par_ClothOnTable:%d+: 'density' must be a number, got \"zero\""), e)
    e = variant("bad_vertex", function(b) put(b .. "/vel_ClothOnTable", "Time 0\nNumber of constraint vectors 1\nVertexId 900 Vector [ 0 0 0 ]\n") end)
    assert.truthy(e:find("vel_ClothOnTable:3: vertex 900 does not exist", 1, false), e)
    e = variant("bad_block", function(b) put(b .. "/vel_ClothOnTable", "Time 0\nNumber of constraint vectors 1\nVertexId 3 Vector [ 0 0 ]\n") end)
    assert.truthy(e:find("vel_ClothOnTable:3: expected vz", 1, true), e)
    e = variant("times", function(b) put(b .. "/vel_ClothOnTable", "Time 1\nNumber of constraint vectors 0\nTime 0.5\nNumber of constraint vectors 0\n") end)
    assert.truthy(e:find("block times must increase", 1, true), e)
    e = variant("truncated_stl", function(b) local s = get(b .. "/rig_table") put(b .. "/rig_table", s:sub(1, math.floor(#s / 2))) end)
    assert.truthy(e:find("rig_table", 1, true), e)
    e = variant("bad_list", function(b) put(b .. "/body_list", "Start the list from here:\ndpo ClothOnTable\nmesh table\n") end)
    assert.truthy(e:find("body_list:3: expected 'dpo NAME'", 1, true), e)
    e = variant("vel_first", function(b) put(b .. "/body_list", "Start the list from here:\nvel ClothOnTable\ndpo ClothOnTable\n") end)
    assert.truthy(e:find("vel_ClothOnTable comes before its body", 1, true), e)
    e = variant("gravity", function(b)
      put(b .. "/../world_parameters", (get(b .. "/../world_parameters"):gsub("([Gg]ravity[^=\n]*=)[^\n]*", "%1 2e6")))
    end)
    assert.truthy(e:find("world_parameters:%d+: 'gravity' must be at most 1e%+06 m/s%^2 %(loom.limits.gravity%), got 2e%+06"), e)
    e = variant("slow", function(b)
      put(b .. "/../world_parameters", (get(b .. "/../world_parameters"):gsub("([Ff]ramerate[^=\n]*=)[^\n]*", "%1 0.5")))
    end)
    assert.truthy(e:find("world_parameters:%d+: 'framerate' must be in %[1, 1e6%] frames per second, got 0.5"), e)
    -- values the bodies refuse are reported against the file they came from
    e = variant("thick", function(b) put(b .. "/par_ClothOnTable", get(b .. "/par_ClothOnTable") .. "Thickness (m) = 1e9\n") end)
    assert.truthy(e:find("^loom%.import%.dpo: .-par_ClothOnTable:%d+: 'thickness' must be a number <= 1"), e)
    e = variant("fast", function(b) put(b .. "/vel_ClothOnTable", "Time 0\nNumber of constraint vectors 1\nVertexId 3 Vector [ 1e300 0 0 ]\n") end)
    assert.truthy(e:find("vel_ClothOnTable:3: vertex 3's velocity (1e+300, 0, 0) m/s is beyond", 1, true), e)
    local okc, ec = pcall(loom.import.dpo, DATA .. "/ClothOnTable", {cloth = {stretch = -1}})
    assert.is_false(okc)
    assert.truthy(tostring(ec):find("loom.import.dpo: opts.cloth: 'stretch' must be", 1, true), tostring(ec))
    local ok, e2 = pcall(loom.import.dpo, d .. "/nowhere")
    assert.is_false(ok)
    assert.truthy(tostring(e2):find("no world_parameters file", 1, true), tostring(e2))
    assert.is_false((pcall(loom.import.dpo, 42)))
  end)

  it("warns about parameters it does not know, naming the file and line", function()
    local d = U.tmpdir()
    local dir = d .. "/extra"
    os.execute(("cp -r %q %q"):format(DATA .. "/ClothOnTable", dir))
    local f = assert(io.open(dir .. "/world_parameters", "ab"))
    f:write("Wind (m/s) = 3\n")
    f:close()
    local _, _, warnings = loom.import.dpo(dir)
    assert.equal(1, #warnings)
    assert.truthy(warnings[1]:find("world_parameters:%d+: unknown parameter 'wind' ignored"), warnings[1])
  end)

  it("gives a cloth 1 kg/m^2 and 3 mm when its par file does not say; a thickness of 0 gets 3 mm, with a warning", function()
    local d = U.tmpdir()
    local function with_par(name, text, opts)
      local dir = d .. "/" .. name
      os.execute(("cp -r %q %q"):format(DATA .. "/ClothOnTable", dir))
      local f = assert(io.open(dir .. "/bodies/par_ClothOnTable", "wb"))
      f:write(text)
      f:close()
      local _, bodies, warnings = loom.import.dpo(dir, opts)
      local c, m = bodies.ClothOnTable, 0
      for i = 0, c.n - 1 do m = m + c.m[i] end
      return c, m, warnings
    end
    local c, m, warnings = with_par("silent", "Diffuse color (rgb) = 0 0 0.9\n")
    assert.near(c:get "thickness", 0.003, 1e-15)
    assert.near(m, 1 * 0.36, 1e-9)                 -- 1 kg/m^2 over 0.36 m^2
    assert.equal(0, #warnings, table.concat(warnings, "\n"))
    c, m, warnings = with_par("zero", "Density (kg/m^2 only used for DPO) = 0.2\nThickness (m) = 0\n")
    assert.near(c:get "thickness", 0.003, 1e-15)
    assert.near(m, 0.2 * 0.36, 1e-9)
    assert.equal(1, #warnings, table.concat(warnings, "\n"))
    assert.truthy(warnings[1]:find("par_ClothOnTable:2: dpo 'ClothOnTable' has thickness 0; using 0.003 m", 1, true), warnings[1])
    -- opts.cloth's thickness is the one used: nothing to warn about
    c, _, warnings = with_par("zero_override", "Thickness (m) = 0\n", {cloth = {thickness = 0.002}})
    assert.near(c:get "thickness", 0.002, 1e-15)
    assert.equal(0, #warnings, table.concat(warnings, "\n"))
  end)
end)

describe("a rig moved by its velocity file", function()
  it("is kinematic and translates with its constrained vertex", function()
    local d = U.tmpdir()
    local dir = d .. "/moving"
    os.execute(("cp -r %q %q"):format(DATA .. "/ClothOnTable", dir))
    local f = assert(io.open(dir .. "/bodies/vel_table", "wb"))
    f:write("Time 0\nNumber of constraint vectors 1\nVertexId 0 Vector [ 0 0 0 ]\n" ..
            "Time 0.5\nNumber of constraint vectors 1\nVertexId 0 Vector [ 0 0 -0.2 ]\n" ..
            "Time 1\nNumber of constraint vectors 0\n")
    f:close()
    local W, bodies = loom.import.dpo(dir)
    local t = bodies.table
    W:run(1.5)
    local p = t.position
    assert.near(p.z, -0.1, 1e-9)                   -- 0.5 s down at 0.2 m/s, then it stays
    assert.near(p.x, 0, 1e-12)
  end)
end)

describe("loom.mesh.grid in 000's fabricCreator form", function()
  it("gives (wDiv + 1)(lDiv + 1) vertices over width x length around the centre, in the horizontal plane", function()
    local m = loom.mesh.grid { width = 1, length = 2, wDiv = 15, lDiv = 10, centre = {0.4, 0.3, 1.3} }
    local C = loom.C
    assert.equal(16 * 11, C.loom_mesh_vertex_count(m))
    assert.equal(2 * 15 * 10, C.loom_mesh_triangle_count(m))
    local v = C.loom_mesh_vertices(m)
    local lo, hi = {math.huge, math.huge, math.huge}, {-math.huge, -math.huge, -math.huge}
    for i = 0, C.loom_mesh_vertex_count(m) - 1 do
      for k, c in ipairs {v[i].x, v[i].y, v[i].z} do lo[k], hi[k] = math.min(lo[k], c), math.max(hi[k], c) end
    end
    assert.near(hi[1] - lo[1], 1, 1e-12)
    assert.near(hi[2] - lo[2], 2, 1e-12)
    assert.near(hi[3] - lo[3], 0, 1e-12)
    assert.near((hi[1] + lo[1]) / 2, 0.4, 1e-12)
    assert.near((hi[2] + lo[2]) / 2, 0.3, 1e-12)
    assert.near(lo[3], 1.3, 1e-12)
    -- 000's example: 1 x 1 m, 15 x 15 divisions -> 256 vertices, 450 triangles
    local e = loom.mesh.grid { width = 1, length = 1, wDiv = 15, lDiv = 15, centre = {0.4, 0.3, 1.3} }
    assert.equal(256, C.loom_mesh_vertex_count(e))
    assert.equal(450, C.loom_mesh_triangle_count(e))
    assert.is_false((pcall(loom.mesh.grid, {width = 1, length = 1, wDiv = 0, lDiv = 3})))
    assert.is_false((pcall(loom.mesh.grid, {width = 1, length = 1, wDiv = 2})))
    -- the usual form is unchanged
    assert.equal(9, C.loom_mesh_vertex_count(loom.mesh.grid { size = {1, 1}, cells = {2, 2} }))
  end)
end)
