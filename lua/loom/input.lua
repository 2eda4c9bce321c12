-- loom.input — the state of keyboard, mouse and input devices for interactive scenes
-- (trajectories driven by a device, as document 004's glove drove five tools). The host fills
-- the state every frame; headless runs and plain luajit see a neutral state.
local caller = require "loom.caller"
local M = {}

local state = {keys = {}, axes = {}, mouse = {x = 0, y = 0, left = false, right = false, middle = false},
               device = nil}
M._state = state

local active_replay = nil

-- input.axis(i) → value in [-1, 1] of device axis i (1-based), 0 when absent. While a recording is
-- active (input.replay) it reads channel i of it instead, value / 127.5 - 1, at the time of the
-- world step being taken (or last taken).
function M.axis(i)
  if type(i) ~= "number" then caller.error("bad argument #1 to 'axis' (expected an axis number)") end
  if active_replay and active_replay.columns[i] then return active_replay:value(i, M._now or 0) / 127.5 - 1 end
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

-- Where input messages go (the window shows them; headless runs print them once to stderr).
M.on_message = function(text) io.stderr:write("loom: ", text, "\n") end
local said = {}
local function say_once(key, text)
  if said[key] then return end
  said[key] = true
  M.on_message(text)
end

-- The host reports devices: input.device() → the connected gamepad's name, or nil.
function M.device() return state.device end
function M._device_event(name)
  state.device = name
  if name then
    said.nodevice = nil
    M.on_message(("gamepad '%s' connected: its axes 1-5 drive fingers 1-5"):format(name))
  else
    for k in pairs(state.axes) do state.axes[k] = nil end
    M.on_message("gamepad disconnected: hold keys 1-5 to close fingers 1-5")
  end
end

----------------------------------------------------------------------------------------------------
-- fingers (document 004's glove): five values in [0, 255], 0 = open (trajectory start), 255 =
-- closed (its end)

local keyfinger = {}

-- input.finger(i [, t]) → finger i's value in [0, 255] at simulated time t (default: the time of the
-- world step being taken): from the active replay
-- (input.replay) when there is one, else from gamepad axis i ((a + 1) / 2 x 255: a trigger at rest
-- reads 0), else from key i ("1" .. "5": the finger closes at 510 per second while the key is held
-- and opens as fast when it is released).
function M.finger(i, t)
  if type(i) ~= "number" or i ~= math.floor(i) or i < 1 then
    caller.error("bad argument #1 to 'finger' (expected a finger number >= 1)")
  end
  t = t or M._now or 0
  if active_replay then return active_replay:value(i, t) end
  if state.device and state.axes[i] then return (math.max(-1, math.min(1, state.axes[i])) + 1) * 127.5 end
  if not state.device then
    say_once("nodevice", "no gamepad: hold keys 1-5 to close fingers 1-5 (or replay a recording with loom.input.replay)")
  end
  local kf = keyfinger[i]
  if not kf then kf = {value = 0, t = t or 0} keyfinger[i] = kf end
  local tt = t or kf.t
  local dtk = math.max(0, tt - kf.t)
  kf.t = tt
  local held = state.keys[tostring(i)] == true
  kf.value = math.max(0, math.min(255, kf.value + (held and 510 or -510) * dtk))
  return kf.value
end

local Replay = {}
Replay.__index = Replay

-- replay:value(i, t) → channel i at time t, linear between rows, held before the first and after
-- the last
function Replay:value(i, t)
  local col = self.columns[i]
  if not col then
    caller.error(("replay '%s': no finger %s (the file has %d)"):format(self.path, tostring(i), #self.columns))
  end
  local ts, n = self.t, #self.t
  t = t or 0
  if t <= ts[1] then return col[1] end
  if t >= ts[n] then return col[n] end
  local lo, hi = 1, n
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if ts[mid] <= t then lo = mid else hi = mid end
  end
  local s = (t - ts[lo]) / (ts[hi] - ts[lo])
  return col[lo] + s * (col[hi] - col[lo])
end

-- replay:channel(i) → function(t) of channel i (for loom.trajectory.along's value)
function Replay:channel(i)
  return function(t) return self:value(i, t) end
end

-- input.replay("fingers.csv" [, {activate = true}]) → a recording of finger values: rows
-- "t, f1, f2, ..." (seconds, then values in [0, 255]; an optional header line of names; '#'
-- comments). Times must increase; values outside [0, 255] are clamped with a warning naming the
-- line and column; anything else malformed is an error naming them. The recording becomes what
-- input.finger reads (activate = false: only returned).
function M.replay(path, opts)
  if type(path) ~= "string" then caller.error("bad argument #1 to 'replay' (expected a CSV file path)") end
  path = caller.resolve(path) -- relative to the calling file, as every loader
  local text, err = caller.read_all(path)
  if not text then caller.error(("replay: cannot open '%s': %s"):format(path, tostring(err))) end
  local rec = setmetatable({path = path, t = {}, columns = {}, clamped = 0}, Replay)
  local ncol, line_no = nil, 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    line_no = line_no + 1
    line = line:gsub("\r$", "")
    local body = line:gsub("#.*$", "")
    if body:match("^%s*$") then goto continue end
    do
      local fields = {}
      for field in (body .. ","):gmatch("([^,]*),") do fields[#fields + 1] = field:match("^%s*(.-)%s*$") end
      if #rec.t == 0 and not ncol and not tonumber(fields[1]) then
        ncol = #fields - 1 -- a header
        goto continue
      end
      if ncol and #fields - 1 ~= ncol then
        caller.error(("replay: %s:%d: expected %d columns (t and %d fingers), got %d"):format(path, line_no, ncol + 1, ncol, #fields))
      end
      ncol = ncol or #fields - 1
      if ncol < 1 then caller.error(("replay: %s:%d: expected t and at least one finger value"):format(path, line_no)) end
      local vals = {}
      for c = 1, #fields do
        local v = tonumber(fields[c])
        if not v or v ~= v or v == math.huge or v == -math.huge then
          caller.error(("replay: %s:%d: column %d is not a number (%q)"):format(path, line_no, c, fields[c]))
        end
        vals[c] = v
      end
      local n = #rec.t
      if n > 0 and not (vals[1] > rec.t[n]) then
        caller.error(("replay: %s:%d: column 1: times must increase (%s after %s)"):format(path, line_no,
          tostring(vals[1]), tostring(rec.t[n])))
      end
      rec.t[n + 1] = vals[1]
      for c = 2, #vals do
        local v = vals[c]
        if v < 0 or v > 255 then
          if rec.clamped == 0 then
            M.on_message(("replay: %s:%d: column %d: finger value %s is outside [0, 255]; clamped"):format(path, line_no, c, tostring(v)))
          end
          rec.clamped = rec.clamped + 1
          v = math.max(0, math.min(255, v))
        end
        rec.columns[c - 1] = rec.columns[c - 1] or {}
        rec.columns[c - 1][n + 1] = v
      end
    end
    ::continue::
  end
  if #rec.t == 0 then caller.error(("replay: %s: no rows of finger values"):format(path)) end
  rec.duration = rec.t[#rec.t]
  if not opts or opts.activate ~= false then active_replay = rec end
  return rec
end

-- input.stop_replay(): input.finger reads the devices again
function M.stop_replay() active_replay = nil end

return M
