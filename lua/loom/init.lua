-- loom — scripting-driven physics: require "loom" gives meshes, shapes, worlds, scenes,
-- trajectories and input; loom.ui, loom.view and loom.test load on first use.
local ffi = require "ffi"
local C = require "loom.lib"
local scene = require "loom.scene"
local world = require "loom.world"

local loom = {
  version = ffi.string(C.loom_version()),
  mesh = require "loom.mesh",
  shape = require "loom.shape",
  trajectory = require "loom.trajectory",
  input = require "loom.input",
  scene = scene.scene,
  load_scene = scene.load_scene,
  world_load = scene.world_load,
  world = world.new,
  import = require "loom.import",
  C = C,
  -- the world's reach (docs/api.md, "Force fields and bad values"): speed m/s (and spin rad/s),
  -- reach m from the origin, vertex_mass kg, gravity m/s^2
  limits = {speed = C.loom_world_limit(C.LOOM_LIMIT_SPEED), reach = C.loom_world_limit(C.LOOM_LIMIT_REACH),
            vertex_mass = C.loom_world_limit(C.LOOM_LIMIT_VERTEX_MASS), gravity = C.loom_world_limit(C.LOOM_LIMIT_GRAVITY)},
}

-- loom.oscillator_exact(m, b, k, x0, v0, t) → x, v: document 004's 1-D oscillator
-- m x'' + b x' + k x = 0 solved exactly (under-, critically and over-damped), the oracle its
-- integrator comparison needs.
function loom.oscillator_exact(m, b, k, x0, v0, t)
  local args = {m, b, k, x0, v0, t}
  for i, name in ipairs {"m", "b", "k", "x0", "v0", "t"} do
    if type(args[i]) ~= "number" then
      require("loom.check").raise_n(i, "loom.oscillator_exact", ("'%s' must be a number, got %s"):format(name, type(args[i])))
    end
  end
  local x, v = ffi.new("double[1]"), ffi.new("double[1]")
  if C.loom_oscillator_exact(m, b, k, x0, v0, t, x, v) ~= 0 then
    require("loom.check").raise_n(1, "loom.oscillator_exact", ffi.string(C.loom_last_error()))
  end
  return x[0], v[0]
end

-- loom.random(seed) → a random number generator of its own (SplitMix64): the same seed gives the
-- same numbers on every machine and build. rng:uniform([a, b]) (default [0, 1)), rng:int(a, b)
-- (inclusive), rng:normal([mean, sd]). Scenes that need randomness take it from here with their
-- 'seed' parameter (loom sweep sets it, and loom.seed, for each job) so a run can be repeated.
local RNG = {}
RNG.__index = RNG
local U64 = ffi.typeof("uint64_t")
function RNG:next64()
  self.s = self.s + 0x9E3779B97F4A7C15ULL
  local z = self.s
  z = bit.bxor(z, bit.rshift(z, 30)) * 0xBF58476D1CE4E5B9ULL
  z = bit.bxor(z, bit.rshift(z, 27)) * 0x94D049BB133111EBULL
  return bit.bxor(z, bit.rshift(z, 31))
end
function RNG:uniform(a, b)
  local u = tonumber(bit.rshift(self:next64(), 11)) / 9007199254740992 -- 53 bits: [0, 1)
  if a == nil then return u end
  return a + (b - a) * u
end
function RNG:int(a, b)
  if not (type(a) == "number" and type(b) == "number" and a == math.floor(a) and b == math.floor(b) and b >= a) then
    require("loom.check").raise_n(1, "rng:int", "expected integers a <= b")
  end
  return a + math.floor(self:uniform() * (b - a + 1))
end
function RNG:normal(mean, sd)
  local u1, u2 = self:uniform(), self:uniform()
  if u1 < 1e-300 then u1 = 1e-300 end
  return (mean or 0) + (sd or 1) * math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * u2)
end
function loom.random(seed)
  seed = seed or loom.seed or 0
  if type(seed) ~= "number" or seed ~= seed or seed ~= math.floor(seed) then
    require("loom.check").raise_n(1, "loom.random", "expected an integer seed, got " .. tostring(seed))
  end
  return setmetatable({s = U64(seed < 0 and seed + 2 ^ 53 or seed)}, RNG)
end

-- Monotonic clock in seconds.
function loom.clock() return C.loom_clock() end

local caller = require "loom.caller"

-- loom.resolve(path) → the path a loader would use: absolute paths unchanged; a relative one next
-- to the calling file if it exists there, else as given (relative to the current directory).
function loom.resolve(path)
  if type(path) ~= "string" then
    require("loom.check").raise_n(1, "loom.resolve", "expected a file path, got " .. require("loom.check").describe(path))
  end
  return caller.resolve(path)
end

-- loom.dofile(path, ...) → what the file returns: dofile with paths resolved like loom.resolve,
-- and the file watched for hot reload like a loaded mesh.
function loom.dofile(path, ...)
  if type(path) ~= "string" then
    require("loom.check").raise_n(1, "loom.dofile", "expected a file path, got " .. require("loom.check").describe(path))
  end
  path = caller.resolve(path)
  local chunk, err = loadfile(path)
  if not chunk then error(err, 0) end
  local files = loom.mesh.loaded_files
  files[#files + 1] = path
  return chunk(...)
end

local lazy = {ui = "loom.ui", view = "loom.view", test = "loom.test", util = "loom.util"}
return setmetatable(loom, {
  __index = function(t, k)
    local mod = lazy[k]
    if mod then
      local m = require(mod)
      rawset(t, k, m)
      return m
    end
    return nil
  end,
})
