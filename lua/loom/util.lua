-- loom.util — small helpers shared by the runtime: a safe text format for parameter tables
-- (hot reload hands parameters from one Lua state to the next; checkpoints store them).
local M = {}

local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
local function unhex(s) return (s:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)) end
M.hex, M.unhex = hex, unhex

-- Flat table of number/boolean/string values → text ("key=n:1.5\n..."), keys sorted.
function M.encode(t)
  local keys = {}
  for k, v in pairs(t) do
    local tv = type(v)
    if type(k) == "string" and (tv == "number" or tv == "boolean" or tv == "string") then keys[#keys + 1] = k end
  end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = t[k]
    local tv = type(v)
    local enc = tv == "number" and ("n:%.17g"):format(v) or tv == "boolean" and ("b:" .. tostring(v)) or ("s:" .. hex(v))
    out[#out + 1] = hex(k) .. "=" .. enc
  end
  return table.concat(out, "\n")
end

-- Inverse of encode; ignores malformed lines.
function M.decode(s)
  local t = {}
  for line in (s or ""):gmatch("[^\n]+") do
    local k, kind, v = line:match("^(%x+)=(%a):(.*)$")
    if k then
      k = unhex(k)
      if kind == "n" then t[k] = tonumber(v)
      elseif kind == "b" then t[k] = v == "true"
      elseif kind == "s" and v:match("^%x*$") then t[k] = unhex(v) end
    end
  end
  return t
end

function M.copy(t)
  local o = {}
  for k, v in pairs(t) do o[k] = v end
  return o
end

-- Shallow structural equality of two values (tables compared one level deep, numbers exactly).
function M.same(a, b)
  if type(a) ~= "table" or type(b) ~= "table" then return a == b end
  for k, v in pairs(a) do if not M.same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

return M
