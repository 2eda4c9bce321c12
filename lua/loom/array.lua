-- loom.array — bounds-checked views of a body's kernel arrays (body.x, body.v, body.f, body.m,
-- body.rest, body.inv_m). A view is a small struct {pointer, count, label}: indexing checks 0 <= i < n and then
-- returns the kernel's own element (a loom_vec3 reference, or a double), so `c.f[i].z = …` writes
-- straight into the kernel and nothing is copied. LuaJIT compiles the metamethods into the trace:
-- the check costs two compares per access (see force_field_lua_vs_c in docs/benchmarks.md).
-- body:raw(name) gives the unchecked pointer for code that has checked its own bounds.
local ffi = require "ffi"
require "loom.lib"   -- loom_vec3

ffi.cdef [[
typedef struct loom_vec3_array { loom_vec3 *p; int32_t n; int32_t label; } loom_vec3_array;
typedef struct loom_double_array { double *p; int32_t n; int32_t label; } loom_double_array;
typedef struct loom_const_vec3_array { const loom_vec3 *p; int32_t n; int32_t label; } loom_const_vec3_array;
typedef struct loom_const_double_array { const double *p; int32_t n; int32_t label; } loom_const_double_array;
]]

local M = {}

-- Labels (owner "cloth 'flag'", array "f") live in Lua; a view holds the label's number. Interned,
-- so the table grows with distinct body names, not with the number of worlds made.
local labels, label_ids = {}, {}
local function label_id(owner, array)
  local key = owner .. "\0" .. array
  local id = label_ids[key]
  if not id then
    id = #labels + 1
    labels[id] = {owner = owner, array = array}
    label_ids[key] = id
  end
  return id
end

-- Cold path, kept out of the metamethods so the traces stay small. Level 3: this function, the
-- metamethod, then the user's line that indexed the array.
local function out_of_range(a, i)
  local l = labels[a.label] or {owner = "body", array = "array"}
  local owner, array = l.owner, l.array
  local n = a.n
  if type(i) ~= "number" then
    error(("%s.%s: index must be a vertex number 0..%d, got %s"):format(owner, array, n - 1,
      type(i) == "string" and ("%q"):format(i) or type(i)), 3)
  end
  if n == 0 and a.p == nil then
    error(("%s.%s[%s]: the body was removed"):format(owner, array, tostring(i)), 3)
  end
  local hint = ""
  if i == n then hint = "; arrays are 0-based: loop with for i = 0, c.n - 1" end
  error(("%s.%s[%s] is out of range (%d vertices, indices 0..%d%s)"):format(owner, array,
    (i == math.floor(i)) and ("%d"):format(i) or tostring(i), n, n - 1, hint), 3)
end

local function index(a, i)
  if type(i) == "number" and i >= 0 and i < a.n then return a.p[i] end
  out_of_range(a, i)
end

-- A value the element cannot take, or a write to a read-only view, named at the user's line.
local function bad_write(a, i, v, what)
  local l = labels[a.label] or {owner = "body", array = "array"}
  local got = v == nil and "" or (", got " .. (type(v) == "string" and ("%q"):format(v) or type(v)))
  error(("%s.%s[%s]: %s%s"):format(l.owner, l.array, tostring(i), what, got), 3)
end

local function newindex_vec3(a, i, v)
  if type(i) == "number" and i >= 0 and i < a.n then
    local t = type(v)
    if t ~= "cdata" and t ~= "table" then bad_write(a, i, v, "expected a loom_vec3 or an {x, y, z} table") end
    a.p[i] = v
    return
  end
  out_of_range(a, i)
end

local function newindex_double(a, i, v)
  if type(i) == "number" and i >= 0 and i < a.n then
    if type(v) ~= "number" then bad_write(a, i, v, "expected a number") end
    a.p[i] = v
    return
  end
  out_of_range(a, i)
end

local function newindex_const(a, i, v)
  if type(i) == "number" and i >= 0 and i < a.n then bad_write(a, i, nil, "the array is read-only") end
  out_of_range(a, i)
end

local function len(a) return a.n end

local function describe(a)
  local l = labels[a.label] or {owner = "?", array = "?"}
  return ("loom.array %s.%s (%d)"):format(l.owner, l.array, a.n)
end

local function mt_with(newindex) return {__index = index, __newindex = newindex, __len = len, __tostring = describe} end
local Vec3Array = ffi.metatype("loom_vec3_array", mt_with(newindex_vec3))
local DoubleArray = ffi.metatype("loom_double_array", mt_with(newindex_double))
local ConstVec3Array = ffi.metatype("loom_const_vec3_array", mt_with(newindex_const))
local ConstDoubleArray = ffi.metatype("loom_const_double_array", mt_with(newindex_const))

-- M.vec3(ptr, n, owner, name) / M.double(ptr, n, owner, name): a checked view of n elements at
-- ptr; owner ("cloth 'flag'") and name ("f") make the error messages.
function M.vec3(p, n, owner, name) return Vec3Array(p, n, label_id(owner, name)) end
function M.double(p, n, owner, name) return DoubleArray(p, n, label_id(owner, name)) end
function M.const_vec3(p, n, owner, name) return ConstVec3Array(p, n, label_id(owner, name)) end
function M.const_double(p, n, owner, name) return ConstDoubleArray(p, n, label_id(owner, name)) end

-- Makes a view refuse every index (its body was removed); copies held by user code then raise an
-- error instead of touching freed memory.
function M.invalidate(a)
  a.n = 0
  a.p = nil
end

function M.is_array(v)
  return type(v) == "cdata" and (ffi.istype(Vec3Array, v) or ffi.istype(DoubleArray, v) or ffi.istype(ConstVec3Array, v)
    or ffi.istype(ConstDoubleArray, v))
end

return M
