-- loom.check — argument validation with messages in Lua's style:
--   bad argument to 'cloth' ('stretch' must be a number >= 0, got -3)
-- Validators return the checked value, or nil and a message; API functions raise the message with
-- caller.error(msg) so that it points at the user's own file and line.
local caller = require "loom.caller"
local M = {}

local function describe(v)
  local t = type(v)
  if t == "string" then return ("%q"):format(v) end
  if t == "number" or t == "boolean" or t == "nil" then return tostring(v) end
  return t
end
M.describe = describe

local function is_finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end
M.is_finite = is_finite

-- A function, or a table or cdata that can be called like one (__call).
local function is_callable(v)
  local mt = getmetatable(v)
  return type(v) == "function" or (mt ~= nil and type(mt) == "table" and mt.__call ~= nil)
end
M.is_callable = is_callable

-- Raises "bad argument to 'fname' (msg)" at the user's line: the innermost frame outside Loom's
-- modules, however deep inside Loom the check runs.
function M.raise(fname, msg)
  caller.error(("bad argument to '%s' (%s)"):format(fname, msg))
end

-- Raises "bad argument #n to 'fname' (msg)".
function M.raise_n(n, fname, msg)
  caller.error(("bad argument #%d to '%s' (%s)"):format(n, fname, msg))
end

-- A 3-vector from {x, y, z} (or a loom_vec3 cdata). Returns x, y, z or nil, message.
function M.vec3(v, what)
  if type(v) == "table" then
    local x, y, z = v[1], v[2], v[3]
    if x == nil and v.x ~= nil then x, y, z = v.x, v.y, v.z end
    if is_finite(x) and is_finite(y) and is_finite(z) then return x, y, z end
    return nil, ("'%s' must be a {x, y, z} table of finite numbers"):format(what)
  elseif type(v) == "cdata" then
    local ok, x, y, z = pcall(function() return v.x, v.y, v.z end)
    if ok and is_finite(x) and is_finite(y) and is_finite(z) then return x, y, z end
  end
  return nil, ("'%s' must be a {x, y, z} table of finite numbers, got %s"):format(what, describe(v))
end

-- Checks the fields of a definition table against a spec:
--   spec = { field = {kind, default = d, min = a, max = b, required = true, integer = true,
--                     choices = {...}, open_min = true} }
-- kind: "number", "string", "boolean", "vec3", "table", "function", "any", "mesh".
-- Returns a table of values (defaults filled) or nil, message. Unknown fields are reported with a
-- suggestion, so typos do not pass silently.
local function closest(name, spec)
  local best, bestd
  for k in pairs(spec) do
    -- tiny edit distance
    local a, b = name, k
    local prev = {}
    for j = 0, #b do prev[j] = j end
    for i = 1, #a do
      local cur = {[0] = i}
      for j = 1, #b do
        local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
        cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
      end
      prev = cur
    end
    local d = prev[#b]
    if d <= 2 and (not bestd or d < bestd or (d == bestd and k < best)) then best, bestd = k, d end
  end
  return best
end

-- The name in `names` (an array) closest to `name` within two edits, or nil: "did you mean" hints.
function M.suggest(name, names)
  local set = {}
  for _, n in ipairs(names) do set[n] = true end
  return closest(tostring(name), set)
end

function M.fields(def, spec)
  if type(def) ~= "table" then
    return nil, ("expected a table of fields, got %s"):format(describe(def))
  end
  for k in pairs(def) do
    if spec[k] == nil then
      local hint = type(k) == "string" and closest(k, spec)
      return nil, ("unknown field %s%s"):format(describe(k), hint and (" (did you mean '" .. hint .. "'?)") or "")
    end
  end
  local out = {}
  local names = {}
  for k in pairs(spec) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local s = spec[k]
    local v = def[k]
    if v == nil then
      if s.required then return nil, ("'%s' is required"):format(k) end
      out[k] = s.default
    else
      local kind = s[1]
      if kind == "number" then
        if not is_finite(v) then
          return nil, ("'%s' must be a finite number, got %s"):format(k, describe(v))
        end
        if s.integer and v ~= math.floor(v) then
          return nil, ("'%s' must be an integer, got %s"):format(k, describe(v))
        end
        if s.min and (v < s.min or (s.open_min and v == s.min)) then
          if s.open_min and s.min == 0 then
            return nil, ("'%s' must be a positive number, got %s"):format(k, describe(v))
          end
          return nil, ("'%s' must be a number %s %s, got %s"):format(k, s.open_min and ">" or ">=", tostring(s.min), describe(v))
        end
        if s.max and v > s.max then
          return nil, ("'%s' must be a number <= %s, got %s"):format(k, tostring(s.max), describe(v))
        end
      elseif kind == "vec3" then
        local x, y, z = M.vec3(v, k)
        if not x then return nil, y end
        v = {x, y, z}
      elseif kind == "callable" then
        if not is_callable(v) then
          return nil, ("'%s' must be a function, got %s"):format(k, describe(v))
        end
      elseif kind ~= "any" and type(v) ~= kind then
        return nil, ("'%s' must be a %s, got %s"):format(k, kind, describe(v))
      end
      if s.choices then
        local ok = false
        for _, c in ipairs(s.choices) do if c == v then ok = true end end
        if not ok then
          return nil, ("'%s' must be one of %s, got %s"):format(k, table.concat(s.choices, ", "), describe(v))
        end
      end
      out[k] = v
    end
  end
  return out
end

return M
