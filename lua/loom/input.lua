-- loom.input — the state of keyboard, mouse and input devices for interactive scenes
-- (trajectories driven by a device, as document 004's glove drove five tools). The host fills
-- the state every frame; headless runs and plain luajit see a neutral state.
local caller = require "loom.caller"
local M = {}

local state = {keys = {}, axes = {}, mouse = {x = 0, y = 0, left = false, right = false, middle = false}}
M._state = state

-- input.axis(i) → value in [-1, 1] of device axis i (1-based), 0 when absent.
function M.axis(i)
  if type(i) ~= "number" then caller.error("bad argument #1 to 'axis' (expected an axis number)") end
  return state.axes[i] or 0
end

-- input.set_axis(i, v): lets a script or the UI stand in for a device.
function M.set_axis(i, v)
  if type(i) ~= "number" or type(v) ~= "number" then caller.error("bad argument to 'set_axis' (expected numbers)") end
  state.axes[i] = math.max(-1, math.min(1, v))
end

-- input.key(name) → true while the key is held ("space", "a", "left", "1", ...).
function M.key(name)
  if type(name) ~= "string" then caller.error("bad argument #1 to 'key' (expected a key name)") end
  return state.keys[name:lower()] == true
end

-- input.mouse() → x, y (pixels), {left =, right =, middle =}
function M.mouse()
  local m = state.mouse
  return m.x, m.y, {left = m.left, right = m.right, middle = m.middle}
end

return M
