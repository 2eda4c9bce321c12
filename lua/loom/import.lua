-- loom.import — scenes of other simulators as Loom worlds.
--
-- loom.import.dpo(dir [, opts]) reads a scene folder of document 000's simulator (dpoSimulator)
-- and builds it, so an old scene runs unchanged:
--   world_parameters              "Gravity (m/s^2) = g", "Framerate (frames/second) = f"
--   bodies/body_list              after "Start the list from here:", lines "dpo NAME", "rig NAME",
--                                 "par NAME", "vel NAME" (also written "dpo_NAME", "par_ NAME")
--   bodies/dpo_NAME, rig_NAME     ASCII STL meshes (duplicate vertices merged, in order of first
--                                 appearance: vertex ids count from 0 in that order)
--   bodies/par_NAME               "Density (kg/m^2 …) = d", "Mass (kg …) = m", "Thickness (m) … = t",
--                                 "Diffuse color (rgb) = r g b"
--   bodies/vel_NAME               blocks "Time t", "Number of constraint vectors k", then k times
--                                 "VertexId i Vector [ vx vy vz ]"; a block holds from its time to
--                                 the next block's; a vertex missing from a block is free in it
-- The files may also sit under environment/world_parameters/ and environment/bodies/ (the
-- original's layout). z is up; the world steps at dt = 1/framerate.
-- A dpo is a Baraff–Witkin cloth with the implicit integrator (000's dynamics) of the par file's
-- density and thickness (1 kg/m^2 and DPO_THICKNESS when it gives none; a thickness of 0 is taken
-- as none, with a warning); opts.cloth = {stretch = …, …} overrides its parameters (000 gives no
-- material constants). A rig is a static rigid body of its mesh — kinematic, moved by the
-- translation of its vel file, if that file has a non-zero velocity (000 moves rigid objects only
-- by one constrained vertex, in translation). Each constrained cloth vertex becomes a pin group
-- whose trajectory integrates the file's velocities exactly, so the vertex moves with exactly the
-- prescribed velocity while a block lists it and freely otherwise.
-- opts.world: build into this world instead of a new one (its dt and gravity are set from the
-- file). Returns the world, a table of the bodies by name, and a list of warnings (unknown
-- parameters, par files without a body, a rigid mass other than 0, a dpo thickness of 0), each
-- naming its file.
-- Errors (missing or malformed files, bad numbers, vertex ids out of range) name the file and line.
local check = require "loom.check"
local caller = require "loom.caller"
local ffi = require "ffi"
local C = require "loom.lib"

local tetmesh = require "loom.tetmesh"
local euler_quat, qrot = tetmesh.euler_quat, tetmesh.qrot

-- a triangle mesh's vertices, writable (the importer transforms its own copy)
local function ffi_cast_vertices(m) return ffi.cast("loom_vec3 *", C.loom_mesh_vertices(m)) end

local M = {}

local DPO_THICKNESS = 0.003 -- m: a dpo's thickness when its par file gives none

local importer = "loom.import.dpo" -- the function whose errors fail() words
local function fail(file, line, msg)
  if line then error(("%s: %s:%d: %s"):format(importer, file, line, msg), 0) end
  error(("%s: %s: %s"):format(importer, file, msg), 0)
end

local exists = caller.exists

-- W:cloth / W:rigid with a refused definition reported against the file its value came from: the
-- body's par file (at the parameter's line) unless opts.cloth set it.
local function make_body(W, method, def, par_path, kv, overrides)
  local ok, body = pcall(W[method], W, def)
  if ok then return body end
  local msg = tostring(body):gsub("^.-bad argument to '%w+' %((.*)%)$", "%1")
  local key = msg:match("^'([%w_]+)'") or msg:match('^unknown field "([%w_]+)"')
  if key and overrides and overrides[key] ~= nil then error(("%s: opts.cloth: %s"):format(importer, msg), 0) end
  local entry = key and kv and kv[key]
  fail(par_path or "(no par file)", entry and entry.line, msg)
end

local function read_lines(path)
  local text, err = caller.read_all(path)
  if not text then fail(path, nil, "cannot read (" .. tostring(err) .. ")") end
  local lines = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = (line:gsub("\r$", "")) end
  return lines, text
end

-- "Key (unit …) = value": the key is the text before the first "(" or "=", lower-cased and trimmed.
local function key_values(path)
  local lines = read_lines(path)
  local out = {}
  for n, line in ipairs(lines) do
    local lhs, rhs = line:match("^(.-)=(.*)$")
    if lhs then
      local key = lhs:match("^([^(]*)"):lower():gsub("^%s+", ""):gsub("%s+$", "")
      out[key] = {value = rhs:gsub("^%s+", ""):gsub("%s+$", ""), line = n}
    end
  end
  return out
end

local function number_of(path, kv, key, required, default)
  local e = kv[key]
  if not e then
    if required then fail(path, nil, ("no '%s = …' line"):format(key)) end
    return default
  end
  local v = tonumber(e.value)
  if not check.is_finite(v) then fail(path, e.line, ("'%s' must be a number, got %q"):format(key, e.value)) end
  return v
end

local function find_dirs(dir)
  local params = dir .. "/world_parameters"
  local alt = dir .. "/environment/world_parameters/world_parameters"
  local bodies = dir .. "/bodies"
  if exists(alt) then
    params, bodies = alt, dir .. "/environment/bodies"
  elseif not exists(params) then
    fail(dir, nil, "no world_parameters file (looked for " .. params .. " and " .. alt .. ")")
  end
  if not exists(bodies .. "/body_list") then fail(bodies .. "/body_list", nil, "missing") end
  return params, bodies
end

-- body_list: entries after the "Start the list from here:" line (the whole file if there is none).
local function body_list(path)
  local lines = read_lines(path)
  local start = 1
  for n, line in ipairs(lines) do
    if line:lower():find("start the list from here", 1, true) then start = n + 1 end
  end
  local entries = {}
  for n = start, #lines do
    local line = lines[n]
    if line:match("%S") then
      local kind, name = line:match("^%s*(%a%a%a)[_%s]%s*(%S+)%s*$")
      if not kind or not ({dpo = 1, rig = 1, par = 1, vel = 1})[kind:lower()] then
        fail(path, n, ("expected 'dpo NAME', 'rig NAME', 'par NAME' or 'vel NAME', got %q"):format(line))
      end
      entries[#entries + 1] = {kind = kind:lower(), name = name, line = n}
    end
  end
  return entries
end

-- vel file → blocks {t, list = {{vertex, vx, vy, vz}, …}} in increasing time. Tokenised, so a
-- block may be spread over lines or written on one.
local MAX_SPEED = C.loom_world_limit(C.LOOM_LIMIT_SPEED) -- m/s: the divergence guard stops a body beyond it
local function velocity_blocks(path)
  local lines = read_lines(path)
  local toks = {}
  for n, line in ipairs(lines) do
    for tok in line:gsub("%[", " [ "):gsub("%]", " ] "):gmatch("%S+") do toks[#toks + 1] = {tok, n} end
  end
  local i = 1
  local function peek() return toks[i] and toks[i][1] end
  local function line_at() return (toks[i] or toks[#toks] or {nil, #lines})[2] end
  local function expect_word(w)
    if not peek() or peek():lower() ~= w:lower() then
      fail(path, line_at(), ("expected %q, got %s"):format(w, peek() and ("%q"):format(peek()) or "the end of the file"))
    end
    i = i + 1
  end
  local function num(what)
    local v = tonumber(peek() or "")
    if not check.is_finite(v) then
      fail(path, line_at(), ("expected %s (a number), got %s"):format(what, peek() and ("%q"):format(peek()) or "the end of the file"))
    end
    i = i + 1
    return v
  end
  local blocks = {}
  while peek() do
    expect_word("Time")
    local t = num("the block's time")
    if #blocks > 0 and t <= blocks[#blocks].t then
      fail(path, line_at(), ("block times must increase: %g after %g"):format(t, blocks[#blocks].t))
    end
    if t < 0 then fail(path, line_at(), ("a block's time must be >= 0, got %g"):format(t)) end
    for _, w in ipairs {"Number", "of", "constraint", "vectors"} do expect_word(w) end
    local k = num("the number of constraint vectors")
    if k < 0 or k ~= math.floor(k) then fail(path, line_at(), ("the number of constraint vectors must be a whole number >= 0, got %g"):format(k)) end
    local list, seen = {}, {}
    for _ = 1, k do
      expect_word("VertexId")
      local at = line_at()
      local v = num("a vertex id")
      if v < 0 or v ~= math.floor(v) then fail(path, at, ("a vertex id must be a whole number >= 0, got %g"):format(v)) end
      if seen[v] then fail(path, at, ("vertex %d is constrained twice in the block of t = %g"):format(v, t)) end
      seen[v] = true
      expect_word("Vector")
      expect_word("[")
      local vx, vy, vz = num("vx"), num("vy"), num("vz")
      local big = math.max(math.abs(vx), math.abs(vy), math.abs(vz))
      if not (big <= MAX_SPEED and math.sqrt(vx * vx + vy * vy + vz * vz) <= MAX_SPEED) then
        fail(path, at, ("vertex %d's velocity (%g, %g, %g) m/s is beyond the %g m/s any body may reach"):format(v, vx, vy, vz, MAX_SPEED))
      end
      expect_word("]")
      list[#list + 1] = {v, vx, vy, vz, line = at}
    end
    blocks[#blocks + 1] = {t = t, list = list}
  end
  return blocks
end

-- For one vertex: offset(t), the integral of its prescribed velocity over the time it was
-- constrained up to t (constant while it is free), and held(t), whether the step of length dt that
-- ends at t lies inside a block that constrains it (at the import time t0 itself: whether the
-- next step does).
local function vertex_motion(blocks, vertex, dt, t0)
  local spans = {} -- {t0, t1, vx, vy, vz} while constrained
  for b = 1, #blocks do
    for _, c in ipairs(blocks[b].list) do
      if c[1] == vertex then
        spans[#spans + 1] = {blocks[b].t, blocks[b + 1] and blocks[b + 1].t or math.huge, c[2], c[3], c[4]}
      end
    end
  end
  local eps = 1e-6 * dt
  local function offset(t)
    local x, y, z = 0, 0, 0
    for _, s in ipairs(spans) do
      if t > s[1] then
        local d = math.min(t, s[2]) - s[1]
        x, y, z = x + d * s[3], y + d * s[4], z + d * s[5]
      end
    end
    return x, y, z
  end
  local function held(t)
    for _, s in ipairs(spans) do
      if math.max(t - dt, t0) >= s[1] - eps and t <= s[2] + eps then return true end
    end
    return false
  end
  return offset, held
end

function M.dpo(dir, opts)
  importer = "loom.import.dpo"
  if type(dir) ~= "string" then check.raise_n(1, "loom.import.dpo", "expected a scene folder, got " .. check.describe(dir)) end
  opts = opts or {}
  if type(opts) ~= "table" then check.raise_n(2, "loom.import.dpo", "expected a table of options, got " .. check.describe(opts)) end
  for k in pairs(opts) do
    if k ~= "world" and k ~= "cloth" then check.raise_n(2, "loom.import.dpo", ("unknown option %q (world, cloth)"):format(tostring(k))) end
  end
  local loom = require "loom"
  dir = caller.resolve(dir)
  local warnings = {}
  local params_path, bodies_dir = find_dirs(dir)
  local wp = key_values(params_path)
  local g = number_of(params_path, wp, "gravity", true)
  local fps = number_of(params_path, wp, "framerate", true)
  if not (fps >= 1 and fps <= 1e6) then
    -- (the world steps at dt = 1/framerate, at most 1 s)
    fail(params_path, wp.framerate.line, ("'framerate' must be in [1, 1e6] frames per second, got %g"):format(fps))
  end
  local gmax = loom.limits.gravity
  if not (math.abs(g) <= gmax) then
    fail(params_path, wp.gravity.line, ("'gravity' must be at most %g m/s^2 (loom.limits.gravity), got %g"):format(gmax, g))
  end
  for k, e in pairs(wp) do
    if k ~= "gravity" and k ~= "framerate" then
      warnings[#warnings + 1] = ("%s:%d: unknown parameter '%s' ignored"):format(params_path, e.line, k)
    end
  end
  local W = opts.world
  if W then
    W.dt = 1 / fps
    W.gravity = {0, 0, -g}
  else
    W = loom.world { dt = 1 / fps, gravity = {0, 0, -g} }
  end

  local list_path = bodies_dir .. "/body_list"
  local entries = body_list(list_path)
  local kinds, order, pars, vels = {}, {}, {}, {}
  for _, e in ipairs(entries) do
    local file = ("%s/%s_%s"):format(bodies_dir, e.kind, e.name)
    if not exists(file) then fail(list_path, e.line, ("%s_%s is listed but %s does not exist"):format(e.kind, e.name, file)) end
    if e.kind == "dpo" or e.kind == "rig" then
      if kinds[e.name] then fail(list_path, e.line, ("'%s' is listed twice as a body"):format(e.name)) end
      kinds[e.name] = e.kind
      order[#order + 1] = e.name
    elseif e.kind == "par" then
      pars[e.name] = file
    else
      if not kinds[e.name] then fail(list_path, e.line, ("vel_%s comes before its body (dpo or rig %s)"):format(e.name, e.name)) end
      vels[e.name] = file
    end
  end
  for name in pairs(pars) do
    if not kinds[name] then warnings[#warnings + 1] = ("%s: par_%s has no dpo or rig body; ignored"):format(list_path, name) end
  end

  local bodies = {}
  for _, name in ipairs(order) do
    local kind = kinds[name]
    local mesh_path = ("%s/%s_%s"):format(bodies_dir, kind, name)
    local ok, mesh = pcall(loom.mesh.load, mesh_path)
    if not ok then fail(mesh_path, nil, tostring(mesh):gsub("^.-loom%.mesh%.load: ", "")) end
    local density, mass, thickness = 1, 0, kind == "dpo" and DPO_THICKNESS or 0
    local par_kv
    if pars[name] then
      local kv = key_values(pars[name])
      par_kv = kv
      density = number_of(pars[name], kv, "density", false, density)
      mass = number_of(pars[name], kv, "mass", false, mass)
      thickness = number_of(pars[name], kv, "thickness", false, thickness)
      for k, e in pairs(kv) do
        if k ~= "density" and k ~= "mass" and k ~= "thickness" and k ~= "diffuse color" then
          warnings[#warnings + 1] = ("%s:%d: unknown parameter '%s' ignored"):format(pars[name], e.line, k)
        end
      end
      if kind == "dpo" and not (density > 0) then fail(pars[name], kv.density.line, ("'density' must be > 0 kg/m^2, got %g"):format(density)) end
      if thickness < 0 then fail(pars[name], kv.thickness.line, ("'thickness' must be >= 0 m, got %g"):format(thickness)) end
      if kind == "dpo" and thickness == 0 then
        thickness = DPO_THICKNESS
        if not (opts.cloth and opts.cloth.thickness ~= nil) then
          warnings[#warnings + 1] = ("%s:%d: dpo '%s' has thickness 0; using %g m"):format(pars[name], kv.thickness.line, name, thickness)
        end
      end
      if kind == "rig" and mass ~= 0 then
        warnings[#warnings + 1] = ("%s: rig '%s' has mass %g kg; rigid objects of 000 are infinitely heavy (mass 0): it is static or kinematic"):format(pars[name], name, mass)
      end
    end
    local blocks = vels[name] and velocity_blocks(vels[name]) or {}
    if kind == "dpo" then
      local def = {name = name, mesh = mesh, model = "baraff_witkin", integrator = "implicit", density = density,
                   thickness = thickness}
      for k, v in pairs(opts.cloth or {}) do def[k] = v end
      local c = make_body(W, "cloth", def, pars[name], par_kv, opts.cloth)
      local vertices = {}
      for _, b in ipairs(blocks) do
        for _, e in ipairs(b.list) do
          if e[1] >= c.n then
            fail(vels[name], e.line, ("vertex %d does not exist: '%s' has %d vertices (0..%d)"):format(e[1], name, c.n, c.n - 1))
          end
          if not vertices[e[1]] then vertices[e[1]] = true vertices[#vertices + 1] = e[1] end
        end
      end
      table.sort(vertices)
      c.constraints = {}
      local dt = 1 / fps
      for _, v in ipairs(vertices) do
        local offset, held = vertex_motion(blocks, v, dt, W.time)
        local group = c:pin {v}
        group.label = ("velocity constraint of vertex %d in %s"):format(v, vels[name])
        group:follow(function(t)
          if not held(t) then return nil end
          return offset(t)
        end)
        c.constraints[v] = group
      end
      bodies[name] = c
    else
      local moving = false
      for _, b in ipairs(blocks) do
        if #b.list > 1 then
          fail(vels[name], b.list[2].line, ("a rigid object is moved by one constrained vertex (000 translates rigid objects only); the block of t = %g has %d"):format(b.t, #b.list))
        end
        for _, e in ipairs(b.list) do
          if e[2] ~= 0 or e[3] ~= 0 or e[4] ~= 0 then moving = true end
        end
      end
      local r = make_body(W, "rigid", { name = name, shape = loom.shape.mesh(mesh), static = not moving, kinematic = moving,
                                         thickness = thickness }, pars[name], par_kv)
      if moving then
        -- the body translates with its constrained vertex; free blocks leave it where it is
        local vertex = nil
        for _, b in ipairs(blocks) do if b.list[1] then vertex = vertex or b.list[1][1] end end
        local offset = vertex_motion(blocks, vertex, 1 / fps, W.time)
        r:follow(offset)
      end
      bodies[name] = r
    end
  end
  return W, bodies, warnings
end

-- loom.import.tet_scene(path [, opts]) reads a scene file of document 002's simulator and builds
-- it: '#' comments, the keyword DeformableModels, then blocks
--   DeformableModel { Name n  Path coarse  Immersed fine  Color 0xRRGGBB  Mass m  Scale s | sx sy sz
--                     Translate x y z  Rotate rx ry rz  Damping d  DistancePreservation kD
--                     VolumePreservation kV }
-- with 002's defaults (Name "N/A", Color 0xc8c864, Mass 1 kg per node, Scale 1, Translate 0,
-- Rotate 0, Damping 1, DistancePreservation 20, VolumePreservation 10; Path required) and its
-- transform order: rotate (about x, then y, then z, radians) -> scale -> translate. Path is a
-- tetrahedral mesh Loom reads (.msh, .node/.ele); Immersed a triangle mesh (OBJ, STL) embedded in
-- it; both relative to the scene file. 002's world is y-up with the floor y = 0: the importer turns
-- it z-up ((x, y, z) -> (x, -z, y)) and adds that floor as a static plane named "floor".
-- Each model becomes a solid (model "teschner", contact "penetration", as 002). opts.world builds
-- into an existing world; opts.solid = {...} overrides solid parameters. Returns the world, the
-- bodies by name (each entry also has .color), and warnings (unknown keys), each naming the file.
local tet_keys = {Name = 1, Path = 1, Immersed = 1, Color = 1, Mass = 1, Scale = 1, Translate = 1, Rotate = 1,
                  Damping = 1, DistancePreservation = 1, VolumePreservation = 1}

function M.tet_scene(path, opts)
  opts = opts or {}
  importer = "loom.import.tet_scene"
  if type(path) ~= "string" then check.raise_n(1, "loom.import.tet_scene", "expected a scene file path") end
  path = caller.resolve(path)
  local loom_mesh = require "loom.mesh"
  local lines = read_lines(path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local warnings, models = {}, {}
  local cur, seen_header = nil, false
  for ln, raw in ipairs(lines) do
    local line = raw:gsub("#.*$", "")
    local text = line:gsub("[{}]", " ")
    local key, rest = text:match("^%s*(%S+)%s*(.-)%s*$")
    if key ~= "DeformableModel" and line:find("{", 1, true) then
      if not cur or cur.open then fail(path, ln, "'{' without a DeformableModel before it") end
      cur.open = true
    end
    if key == "DeformableModels" then
      seen_header = true
    elseif key == "DeformableModel" then
      if not seen_header then fail(path, ln, "DeformableModel before the DeformableModels keyword") end
      if cur and cur.open and not cur.closed then fail(path, ln, "DeformableModel inside another (missing '}')") end
      cur = {line = ln, Name = "N/A", Color = 0xc8c864, Mass = 1, Scale = {1, 1, 1}, Translate = {0, 0, 0},
             Rotate = {0, 0, 0}, Damping = 1, DistancePreservation = 20, VolumePreservation = 10}
      models[#models + 1] = cur
      if line:find("{", 1, true) then cur.open = true end
    elseif key then
      if not cur or not cur.open or cur.closed then fail(path, ln, ("'%s' outside a DeformableModel block"):format(key)) end
      local vals = {}
      for v in rest:gmatch("%S+") do vals[#vals + 1] = v end
      if not tet_keys[key] then
        warnings[#warnings + 1] = ("%s:%d: unknown parameter '%s' ignored"):format(path, ln, key)
      elseif key == "Name" or key == "Path" or key == "Immersed" then
        if #vals < 1 then fail(path, ln, key .. " needs a value") end
        cur[key] = rest
      elseif key == "Color" then
        local c = tonumber(vals[1])
        if not c or c < 0 or c > 0xffffff then fail(path, ln, "Color must be a number like 0xc8c864") end
        cur.Color = c
      elseif key == "Scale" or key == "Translate" or key == "Rotate" then
        local n = {}
        for i = 1, #vals do
          n[i] = tonumber(vals[i])
          if not n[i] or n[i] ~= n[i] or math.abs(n[i]) == math.huge then fail(path, ln, key .. ": '" .. vals[i] .. "' is not a finite number") end
        end
        if key == "Scale" and #n == 1 then n = {n[1], n[1], n[1]} end
        if #n ~= 3 then fail(path, ln, key .. " needs three numbers" .. (key == "Scale" and " (or one)" or "")) end
        if key == "Scale" and not (n[1] > 0 and n[2] > 0 and n[3] > 0) then fail(path, ln, "Scale must be positive") end
        cur[key] = n
      else
        local v = tonumber(vals[1])
        if not v or v ~= v or math.abs(v) == math.huge or #vals ~= 1 then fail(path, ln, key .. " needs one finite number") end
        if v < 0 or (key == "Mass" and v == 0) then fail(path, ln, key .. " must be " .. (key == "Mass" and "positive" or ">= 0")) end
        cur[key] = v
      end
    end
    if line:find("}", 1, true) then
      if not cur or not cur.open or cur.closed then fail(path, ln, "'}' without an open DeformableModel block") end
      cur.closed = true
    end
  end
  if not seen_header then fail(path, 1, "no DeformableModels keyword (not a document 002 scene file)") end
  for _, m in ipairs(models) do
    if not m.closed then fail(path, m.line, "DeformableModel block not closed with '}'") end
    if not m.Path then fail(path, m.line, ("DeformableModel '%s' has no Path (the coarse volumetric mesh is required)"):format(m.Name)) end
  end
  local loom_world = require "loom.world"
  local shape = require "loom.shape"
  local W = opts.world or loom_world.new { dt = 0.01 }
  W:rigid { name = "floor", shape = shape.plane { normal = {0, 0, 1} }, static = true, friction = 0.5 }
  local bodies, names = {}, {}
  for _, m in ipairs(models) do
    local function resolve(p) return p:sub(1, 1) == "/" and p or (dir .. "/" .. p) end
    local ok, mesh = pcall(loom_mesh.load, resolve(m.Path))
    if not ok then fail(path, m.line, tostring(mesh):gsub("^.-loom%.mesh%.load", "Path")) end
    if not loom_mesh.is_tet_mesh(mesh) then fail(path, m.line, "Path '" .. m.Path .. "' is not a tetrahedral mesh (.msh, .node)") end
    local fine
    if m.Immersed and m.Immersed ~= "" then
      local ok2, f = pcall(loom_mesh.load, resolve(m.Immersed))
      if not ok2 then fail(path, m.line, tostring(f):gsub("^.-loom%.mesh%.load", "Immersed")) end
      fine = f
    end
    -- 002's order: rotate, scale, translate (in its y-up frame), then y-up -> z-up
    local function to_z_up(msh, is_tet)
      local v = is_tet and msh:vertices() or ffi_cast_vertices(msh)
      local n = is_tet and msh.vertex_count or msh.vertex_count
      local R = euler_quat(m.Rotate)
      for i = 0, n - 1 do
        local x, y, z = qrot(R, v[i].x, v[i].y, v[i].z)
        x, y, z = m.Scale[1] * x + m.Translate[1], m.Scale[2] * y + m.Translate[2], m.Scale[3] * z + m.Translate[3]
        v[i].x, v[i].y, v[i].z = x, -z, y
      end
    end
    to_z_up(mesh, true)
    if C.loom_tet_mesh_check(mesh) ~= 0 then fail(path, m.line, "after its transform: " .. ffi.string(C.loom_last_error())) end
    if fine then to_z_up(fine, false) end
    local name, k = m.Name, 1
    while names[name] do k = k + 1 name = m.Name .. "_" .. k end
    names[name] = true
    local def = {name = name, mesh = mesh, model = "teschner", contact = "penetration", node_mass = m.Mass,
                 damping = m.Damping, distance = m.DistancePreservation, volume = m.VolumePreservation,
                 surface = fine, thickness = 0.01}
    for kk, vv in pairs(opts.solid or {}) do def[kk] = vv end
    local b = W:solid(def)
    b.color = m.Color
    bodies[name] = b
  end
  return W, bodies, warnings
end

return M
