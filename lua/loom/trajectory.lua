-- loom.trajectory — kinematic targets as functions of time. Each builder returns a function
-- traj(t) → x, y, z: an offset from the rest positions for pin groups (group:follow), a position
-- for kinematic rigid bodies (rigid:follow). Returning nil releases a pin group.
local check = require "loom.check"

local M = {}

local function vec(fname, v, what)
  local x, y, z = check.vec3(v, what)
  if not x then check.raise(fname, y, 3) end
  return {x, y, z}
end

local function times(fname, d)
  local t0, t1 = d.t0 or 0, d.t1 or 1
  if not (check.is_finite(t0) and check.is_finite(t1) and t1 > t0) then
    check.raise(fname, ("'t0' and 't1' must be finite numbers with t1 > t0, got %s, %s"):format(
      check.describe(t0), check.describe(t1)))
  end
  return t0, t1
end

local spec = {to = {"any", required = true}, from = {"any"}, t0 = {"number"}, t1 = {"number"}}

-- linear{to = {x, y, z}, from = {0, 0, 0}, t0 = 0, t1 = 1}: constant velocity from t0 to t1, then holds.
function M.linear(def)
  local d, err = check.fields(def, spec)
  if not d then check.raise("linear", err) end
  local to, from = vec("linear", d.to, "to"), vec("linear", d.from or {0, 0, 0}, "from")
  local t0, t1 = times("linear", d)
  return function(t)
    local s = (t - t0) / (t1 - t0)
    if s < 0 then s = 0 elseif s > 1 then s = 1 end
    return from[1] + s * (to[1] - from[1]), from[2] + s * (to[2] - from[2]), from[3] + s * (to[3] - from[3])
  end
end

-- min_jerk{to, from, t0, t1}: the minimum-jerk profile s = 10 u^3 - 15 u^4 + 6 u^5 (Flash & Hogan
-- 1985), zero velocity and acceleration at both ends (000's jerk-free trajectory generator).
function M.min_jerk(def)
  local d, err = check.fields(def, spec)
  if not d then check.raise("min_jerk", err) end
  local to, from = vec("min_jerk", d.to, "to"), vec("min_jerk", d.from or {0, 0, 0}, "from")
  local t0, t1 = times("min_jerk", d)
  return function(t)
    local u = (t - t0) / (t1 - t0)
    if u < 0 then u = 0 elseif u > 1 then u = 1 end
    local s = u * u * u * (10 + u * (-15 + 6 * u))
    return from[1] + s * (to[1] - from[1]), from[2] + s * (to[2] - from[2]), from[3] + s * (to[3] - from[3])
  end
end

local function sorted_blocks(fname, list, allow_false)
  if type(list) ~= "table" or #list == 0 then check.raise(fname, "expected a list of {t, value} entries", 3) end
  local out = {}
  for i, e in ipairs(list) do
    if type(e) ~= "table" or not check.is_finite(e[1]) then
      check.raise(fname, ("entry %d must be {t, {x, y, z}}"):format(i))
    end
    if i > 1 and not (e[1] > out[i - 1].t) then
      check.raise(fname, ("entry %d: times must increase (%s after %s)"):format(i, tostring(e[1]), tostring(out[i - 1].t)))
    end
    local v = e[2]
    if v == false and allow_false then
      out[i] = {t = e[1], v = false}
    else
      local x, y, z = check.vec3(v, ("entry %d value"):format(i))
      if not x then check.raise(fname, y, 3) end
      out[i] = {t = e[1], v = {x, y, z}}
    end
  end
  return out
end

-- keys{ {t, {x, y, z}}, ... }: piecewise linear through the keys, held before the first and after
-- the last.
function M.keys(list)
  local k = sorted_blocks("keys", list, false)
  local n = #k
  return function(t)
    if t <= k[1].t then return k[1].v[1], k[1].v[2], k[1].v[3] end
    if t >= k[n].t then return k[n].v[1], k[n].v[2], k[n].v[3] end
    local lo, hi = 1, n
    while hi - lo > 1 do
      local mid = math.floor((lo + hi) / 2)
      if k[mid].t <= t then lo = mid else hi = mid end
    end
    local a, b = k[lo], k[hi]
    local s = (t - a.t) / (b.t - a.t)
    return a.v[1] + s * (b.v[1] - a.v[1]), a.v[2] + s * (b.v[2] - a.v[2]), a.v[3] + s * (b.v[3] - a.v[3])
  end
end

-- velocity_blocks{ {t, {vx, vy, vz} | false}, ... }: document 000's velocity constraints. Each
-- block's velocity applies from its time until the next block's; false releases the vertices for
-- that block. The offset is the integral of the velocity over the held blocks.
function M.velocity_blocks(list)
  local b = sorted_blocks("velocity_blocks", list, true)
  local n = #b
  return function(t)
    if t < b[1].t then return 0, 0, 0 end
    local x, y, z = 0, 0, 0
    for i = 1, n do
      local blk = b[i]
      if blk.t >= t then break end
      local t_end = i < n and math.min(t, b[i + 1].t) or t
      if blk.v then
        local dtb = t_end - blk.t
        x, y, z = x + blk.v[1] * dtb, y + blk.v[2] * dtb, z + blk.v[3] * dtb
      end
    end
    -- the block containing t decides whether the group is held
    local cur = b[1]
    for i = 1, n do if b[i].t <= t then cur = b[i] end end
    if cur.v == false then return nil end
    return x, y, z
  end
end

-- sine{amplitude = {x, y, z}, frequency = f (Hz), phase = 0, t0 = 0}: oscillation about zero.
function M.sine(def)
  local d, err = check.fields(def, {amplitude = {"any", required = true}, frequency = {"number", required = true, min = 0},
                                    phase = {"number", default = 0}, t0 = {"number", default = 0}})
  if not d then check.raise("sine", err) end
  local a = vec("sine", d.amplitude, "amplitude")
  local w, ph, t0 = 2 * math.pi * d.frequency, d.phase, d.t0
  return function(t)
    local s = t < t0 and 0 or math.sin(w * (t - t0) + ph)
    return a[1] * s, a[2] * s, a[3] * s
  end
end


-- along{points = {{x, y, z}, ...}, value = function(t) return 0..255 end} (or along(points, value)):
-- document 004's finger tools. The value places the tool on the polyline through the points by arc
-- length: 0 at the first point, 255 at the last, linear between. Values outside [0, 255] are
-- clamped, with one warning.
function M.along(def, value_fn)
  local pts, value
  if type(def) == "table" and def.points ~= nil then
    local d, err = check.fields(def, {points = {"table", required = true}, value = {"function", required = true}})
    if not d then check.raise("along", err) end
    pts, value = d.points, d.value
  else
    pts, value = def, value_fn
  end
  if type(pts) ~= "table" or #pts < 2 then check.raise("along", "'points' must be a list of at least two {x, y, z}") end
  if type(value) ~= "function" then check.raise("along", "'value' must be a function of t returning 0..255") end
  local P, cum = {}, {0}
  for i, p in ipairs(pts) do
    P[i] = vec("along", p, ("point %d"):format(i))
    if i > 1 then
      local a, b = P[i - 1], P[i]
      cum[i] = cum[i - 1] + math.sqrt((b[1] - a[1]) ^ 2 + (b[2] - a[2]) ^ 2 + (b[3] - a[3]) ^ 2)
    end
  end
  local total = cum[#P]
  local warned = false
  return function(t)
    local v = value(t)
    if type(v) ~= "number" or v ~= v then
      check.raise("along", ("the value function returned %s at t = %g (expected 0..255)"):format(check.describe(v), t))
    end
    if v < 0 or v > 255 then
      if not warned then
        warned = true
        io.stderr:write(("loom: trajectory.along: finger value %g at t = %g is outside [0, 255]; clamped\n"):format(v, t))
      end
      v = v < 0 and 0 or 255
    end
    if total == 0 then return P[1][1], P[1][2], P[1][3] end
    local s = v / 255 * total
    local k = 1
    while k < #P - 1 and cum[k + 1] < s do k = k + 1 end
    local seg = cum[k + 1] - cum[k]
    local u = seg > 0 and (s - cum[k]) / seg or 0
    local a, b = P[k], P[k + 1]
    return a[1] + u * (b[1] - a[1]), a[2] + u * (b[2] - a[2]), a[3] + u * (b[3] - a[3])
  end
end

return M
