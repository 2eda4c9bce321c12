-- loom.params — the kernel's parameter tables as Lua sees them (one source: the C tables of each
-- body kind). world.lua builds its argument checks from them; scripts/gen_param_docs.lua writes
-- the parameter tables of docs/api.md from them.
local ffi = require "ffi"
local bit = require "bit"
local C = require "loom.lib"

local M = {}

local FLAG_LIVE, FLAG_INTEGER, FLAG_READONLY, FLAG_MIN_OPEN = 1, 2, 4, 8

-- list of {name, unit, doc, min, max, live, integer, readonly} for a kind id (C.LOOM_KIND_*)
function M.list(kind)
  local out = {}
  local info = ffi.new("loom_param_info")
  for i = 0, C.loom_kind_param_count(kind) - 1 do
    assert(C.loom_kind_param_info(kind, i, info) == 0)
    out[#out + 1] = {
      name = ffi.string(info.name), unit = ffi.string(info.unit), doc = ffi.string(info.doc),
      min = info.min, max = info.max,
      live = bit.band(info.flags, FLAG_LIVE) ~= 0, integer = bit.band(info.flags, FLAG_INTEGER) ~= 0,
      readonly = bit.band(info.flags, FLAG_READONLY) ~= 0, min_open = bit.band(info.flags, FLAG_MIN_OPEN) ~= 0,
    }
  end
  return out
end

-- Adds a loom.check field spec for every live parameter of a kind to `spec` (creation arguments).
function M.add_checks(spec, kind)
  for _, p in ipairs(M.list(kind)) do
    if p.live then
      spec[p.name] = {"number", min = p.min, max = p.max, integer = p.integer or nil, open_min = p.min_open or nil}
    end
  end
  return spec
end

-- The markdown table of a kind's parameters (docs/api.md).
function M.markdown(kind)
  local rows = {"| parameter | unit | range | live | meaning |", "|---|---|---|---|---|"}
  for _, p in ipairs(M.list(kind)) do
    local range = p.readonly and "read only" or
      ("%s%s, %s]"):format(p.min_open and "(" or "[", ("%g"):format(p.min), ("%g"):format(p.max))
    if p.integer and not p.readonly then range = range .. " integer" end
    rows[#rows + 1] = ("| `%s` | %s | %s | %s | %s |"):format(p.name, p.unit ~= "" and p.unit or "–", range,
      p.live and "yes" or "no", p.doc)
  end
  return table.concat(rows, "\n")
end

M.kinds = {cloth = C.LOOM_KIND_CLOTH, rigid = C.LOOM_KIND_RIGID, solid = C.LOOM_KIND_SOLID, simplex = C.LOOM_KIND_SIMPLEX}

return M
