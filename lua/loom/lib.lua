-- loom.lib — the C library behind Loom, reached through LuaJIT's FFI. Inside the `loom` host the
-- kernel is linked into the executable (its symbols are exported), so ffi.C has it; from plain
-- luajit it is build/libloom.so (or $LOOM_LIB, or the installed lib/libloom.so).
local ffi = require "ffi"

ffi.cdef(require "loom.cdef")

local function in_process()
  return pcall(function() return ffi.C.loom_version end)
end

local function here()
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) ~= "@" then return "." end
  return src:sub(2):match("^(.*)/[^/]*$") or "."
end

local C
if in_process() then
  C = ffi.C
else
  local tried = {}
  local candidates = {}
  if os.getenv("LOOM_LIB") then candidates[#candidates + 1] = os.getenv("LOOM_LIB") end
  local dir = here()
  candidates[#candidates + 1] = dir .. "/../../build/libloom.so"       -- source tree
  candidates[#candidates + 1] = dir .. "/../../../../lib/libloom.so"   -- PREFIX/share/loom/lua/loom
  candidates[#candidates + 1] = "loom"                                  -- system search path
  for _, path in ipairs(candidates) do
    local ok, lib = pcall(ffi.load, path)
    if ok then C = lib break end
    tried[#tried + 1] = path
  end
  if not C then
    error("loom: cannot load the Loom library (tried " .. table.concat(tried, ", ")
      .. "); run `make` first or set LOOM_LIB", 0)
  end
end

return C
