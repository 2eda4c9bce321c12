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
  C = C,
}

-- Monotonic clock in seconds.
function loom.clock() return C.loom_clock() end

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
