-- loom.scene — scene files: a scene is the table made by loom.scene{...} that a Lua file returns,
-- with build(world, params) and optional forces, on_step, ui, camera. Loading runs the file;
-- instantiating builds a fresh world from it.
local ffi = require "ffi"
local C = require "loom.lib"
local check = require "loom.check"
local world = require "loom.world"
local mesh = require "loom.mesh"
local util = require "loom.util"

local caller = require "loom.caller"
local M = {}
local Scene = {}
local SceneMT = {__index = Scene, __tostring = function(s) return "loom.scene '" .. s.title .. "'" end}

local camera_spec = {
  target = {"vec3"}, distance = {"number", min = 0, open_min = true},
  azimuth = {"number"}, elevation = {"number", min = -90, max = 90},
  azimuth_deg = {"number"}, elevation_deg = {"number", min = -90, max = 90},
  fov = {"number", min = 1, max = 170},
}

local scene_spec = {
  title = {"string", default = "Loom scene"},
  dt = {"number", default = 1 / 240, min = 0, open_min = true, max = 1},
  gravity = {"vec3", default = {0, 0, -9.81}},
  wind = {"vec3", default = {0, 0, 0}},
  params = {"table"},
  camera = {"table"},
  substeps = {"number", min = 1, max = 4096, integer = true},
  build = {"callable"}, forces = {"table"}, on_step = {"callable"}, ui = {"callable"},
  sweep = {"table"}, metrics = {"callable"},
}

function M.is_scene(s) return getmetatable(s) == SceneMT end

-- loom.scene{title, dt, gravity, wind, params, camera, substeps, build, forces, on_step, ui}
function M.scene(def)
  local d, err = check.fields(def, scene_spec)
  if not d then check.raise("loom.scene", err) end
  local params = d.params or {}
  for k, v in pairs(params) do
    local tv = type(v)
    if type(k) ~= "string" or not (tv == "number" or tv == "boolean" or tv == "string") then
      check.raise("loom.scene", ("params.%s must be a number, boolean or string, got %s"):format(tostring(k), check.describe(v)))
    end
    if tv == "number" and not check.is_finite(v) then
      check.raise("loom.scene", ("params.%s must be finite"):format(k))
    end
  end
  for k, fn in pairs(d.forces or {}) do
    if type(k) ~= "string" then
      check.raise("loom.scene", ("forces: a force field needs a name (forces = {wind = function(world, t) ... end}), got the key %s")
        :format(check.describe(k)))
    end
    if not check.is_callable(fn) then
      check.raise("loom.scene", ("forces.%s must be a function(world, t), got %s"):format(k, check.describe(fn)))
    end
  end
  if d.camera then
    local c, cerr = check.fields(d.camera, camera_spec)
    if not c then check.raise("loom.scene", "camera: " .. cerr) end
  end
  local s = {
    title = d.title, dt = d.dt, gravity = d.gravity, wind = d.wind,
    params = params,                 -- the very table: the scene's functions read scene.params
    _defaults = util.copy(params),   -- what the file says, to tell tuned values from edited defaults
    camera = d.camera, substeps = d.substeps,
    build = d.build, forces = d.forces, on_step = d.on_step, ui = d.ui,
    sweep = d.sweep, metrics = d.metrics, -- loom sweep: its parameter lists and per-run numbers
  }
  return setmetatable(s, SceneMT)
end

-- scene:set_params{name = value, ...}: checked against the declared parameters and their types
-- (strings are converted for numbers and booleans, as --param name=value gives them).
function Scene:set_params(t)
  for k, v in pairs(t) do
    local default = self._defaults[k]
    if default == nil then
      local names = {}
      for n in pairs(self._defaults) do names[#names + 1] = n end
      table.sort(names)
      caller.error(("unknown parameter '%s' (the scene declares: %s)"):format(tostring(k),
        #names > 0 and table.concat(names, ", ") or "none"))
    end
    local want = type(default)
    if type(v) == "string" and want == "number" then
      local n = tonumber(v)
      if not check.is_finite(n) then caller.error(("parameter '%s' must be a number, got %q"):format(k, v)) end
      v = n
    elseif type(v) == "string" and want == "boolean" then
      if v == "true" or v == "1" then v = true elseif v == "false" or v == "0" then v = false
      else caller.error(("parameter '%s' must be true or false, got %q"):format(k, v)) end
    end
    if type(v) ~= want then
      caller.error(("parameter '%s' must be a %s, got %s"):format(k, want, check.describe(v)))
    end
    self.params[k] = v
  end
  return self
end

-- scene:instantiate([params]) → a new world at t = 0, built by the scene
function Scene:instantiate(overrides)
  if overrides ~= nil then
    if type(overrides) ~= "table" then check.raise_n(1, "instantiate", "expected a table of parameters") end
    local ok, err = pcall(self.set_params, self, overrides)
    if not ok then error(err, 0) end   -- set_params put the user's line in it already
  end
  local W = world.new {dt = self.dt, gravity = self.gravity, wind = self.wind}
  rawset(W, "_scene", self)
  rawset(W, "_default_substeps", self.substeps)
  if self.build then
    -- (forces applied now are the build's: a hot reload does not carry them; a build that fails
    -- leaves no world)
    rawset(W, "_building", true)
    self.build(W, self.params)
    rawset(W, "_building", nil)
  end
  return W
end

-- loom.load_scene(path [, params]) → scene. Errors carry the file and line. A relative path is
-- looked up next to the file that calls load_scene first, then in the current directory.
local function scene_from(path, chunk, params)
  local ok, sc = pcall(chunk)
  if not ok then error(sc, 0) end
  if not M.is_scene(sc) then
    error(("%s: a scene file must return the table made by loom.scene{...} (it returned %s)"):format(path, check.describe(sc)), 0)
  end
  sc.path = path
  if params ~= nil then
    local pok, perr = pcall(sc.set_params, sc, params)
    if not pok then error(path .. ": " .. tostring(perr):gsub("^[^:]*:%d+: ", ""), 0) end
  end
  return sc
end

function M.load_scene(path, params)
  if type(path) ~= "string" then check.raise_n(1, "load_scene", "expected a file path, got " .. check.describe(path)) end
  path = caller.resolve(path)
  local chunk, err = loadfile(path)
  if not chunk then error(err, 0) end
  mesh.loaded_files[#mesh.loaded_files + 1] = path
  return scene_from(path, chunk, params)
end

-- load_scene_source(text, path) → scene: a scene file's text (a journal's version of it) run as
-- if it were the file at path (errors name it, relative paths resolve next to it).
function M.load_scene_source(text, path)
  local chunk, err = load(text, "@" .. path)
  if not chunk then error(err, 0) end
  return scene_from(path, chunk)
end

----------------------------------------------------------------------------------------------------
-- checkpoints: the kernel's checkpoint (dt, gravity, wind, every live parameter, the whole state,
-- model hashes, a checksum) with the scene's path and parameters in its extra data

local checkpoint_extra -- (below)

local function read_file(path, fname)
  local data, ferr = caller.read_all(path)
  if not data then caller.error(("%s: cannot open '%s' (%s)"):format(fname, path, tostring(ferr))) end
  return data
end

-- A checkpoint's extra data: "rforces <bytes>\n", the rigid forces in effect or to come
-- (world.encode_forces), then, for a world made from a scene, "scene <path>\n" and its parameters.
-- → {forces =, scene =, params =}, or nil and what is wrong.
checkpoint_extra = function(data)
  local off, len = ffi.new("int[1]"), ffi.new("int[1]")
  if C.loom_world_checkpoint_extra(data, #data, off, len) ~= 0 then return nil, ffi.string(C.loom_last_error()) end
  local extra = data:sub(off[0] + 1, off[0] + len[0])
  local head, n = extra:match("^(rforces (%d+)\n)")
  n = tonumber(n)
  if not head or #extra < #head + n then return nil, "the checkpoint's extra data is damaged" end
  local out = {forces = extra:sub(#head + 1, #head + n)}
  local after = extra:sub(#head + n + 1)
  if after ~= "" then
    out.scene, out.params = after:match("^scene ([^\n]*)\n(.*)$")
    if not out.scene then return nil, "the checkpoint's extra data is damaged" end
  end
  return out
end

-- world:save(path) writes a checkpoint of any world (made from a scene or not).
function world.World:save(path)
  if type(path) ~= "string" then check.raise_n(1, "save", "expected a file path, got " .. check.describe(path)) end
  local sc = rawget(self, "_scene")
  local forces = world.encode_forces(self)
  local extra = ("rforces %d\n"):format(#forces) .. forces
  if sc and sc.path then extra = extra .. "scene " .. sc.path .. "\n" .. util.encode(sc.params) end
  local n = C.loom_world_checkpoint_size(self._w, #extra)
  if n < 0 then caller.error("world:save: " .. ffi.string(C.loom_last_error())) end
  local buf = ffi.new("uint8_t[?]", n)
  if C.loom_world_checkpoint_write(self._w, extra, #extra, buf, n) < 0 then
    caller.error("world:save: " .. ffi.string(C.loom_last_error()))
  end
  local f, ferr = io.open(path, "wb")
  if not f then caller.error(("world:save: cannot write '%s' (%s)"):format(path, tostring(ferr))) end
  local ok, werr = f:write(ffi.string(buf, n))
  f:close()
  if not ok then caller.error(("world:save: writing '%s' failed (%s)"):format(path, tostring(werr))) end
  return self
end

-- world:load(path [, {force = true}]) loads a checkpoint into this world, which must have been built
-- the same way (same bodies, topology, models). Without force a difference is an error saying what
-- differs, and the world is unchanged.
function world.World:load(path, opts)
  if type(path) ~= "string" then check.raise_n(1, "load", "expected a file path, got " .. check.describe(path)) end
  if opts ~= nil and type(opts) ~= "table" then check.raise_n(2, "load", "expected a table of options ({force = true})") end
  local force = opts and opts.force and 1 or 0
  path = caller.resolve(path)
  local data = read_file(path, "world:load")
  local extra, rest = checkpoint_extra(data)
  local forces = extra and world.decode_forces(extra.forces)
  if not forces then
    caller.error(("world:load: %s: %s"):format(path, extra and "the checkpoint's rigid forces are damaged" or rest))
  end
  if C.loom_world_checkpoint_read(self._w, data, #data, force) ~= 0 then
    caller.error(("world:load: %s: %s"):format(path, ffi.string(C.loom_last_error())))
  end
  local ok, ferr = world.set_forces(self, forces)
  if not ok then caller.error(("world:load: %s: %s"):format(path, ferr)) end
  return self
end

-- loom.world_load(path [, {force = true}]) → world: rebuilds the checkpoint's scene with its saved
-- parameters, then loads the state.
function M.world_load(path, opts)
  if type(path) ~= "string" then check.raise_n(1, "world_load", "expected a file path, got " .. check.describe(path)) end
  path = caller.resolve(path)
  local data = read_file(path, "loom.world_load")
  local extra, err = checkpoint_extra(data)
  if not extra then caller.error(("loom.world_load: %s: %s"):format(path, err)) end
  local scene_path, rest = extra.scene, extra.params
  if not scene_path then
    caller.error(("loom.world_load: %s was saved from a world without a scene file; build that world and use "
      .. "world:load(path)"):format(path))
  end
  local W = M.load_scene(scene_path, util.decode(rest)):instantiate()
  W:load(path, opts)
  return W
end

return M
