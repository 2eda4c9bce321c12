-- A digest of the physical state of a world: the bits of every cloth and solid vertex's position and
-- velocity and every rigid body's pose, in creation order. Unlike world:hash() it does not depend
-- on how the kernel lays out or hashes its state, so it changes only when the physics does.
local ffi = require "ffi"
local C = require "loom.lib"

local M = {}

local FNV_PRIME = 16777619ULL

-- FNV-1a over 32-bit words (not bytes): fast enough for 10^5 vertices, and any bit flip shows.
local function mix(h, p, words)
  for i = 0, words - 1 do
    h = bit.bxor(h, p[i]) * FNV_PRIME % 4294967296ULL
  end
  return h
end

function M.world(w)
  local h = 2166136261ULL
  local pose = ffi.new("loom_vec3[1]")
  local q = ffi.new("loom_quat[1]")
  for _, b in ipairs(w:bodies()) do
    if b.kind == "cloth" or b.kind == "solid" then
      local n = C.loom_body_vertex_count(w._w, b.handle)
      h = mix(h, ffi.cast("const uint32_t *", C.loom_body_x(w._w, b.handle)), 6 * n)
      h = mix(h, ffi.cast("const uint32_t *", C.loom_body_v(w._w, b.handle)), 6 * n)
    else
      C.loom_rigid_pose(w._w, b.handle, pose, q)
      h = mix(h, ffi.cast("const uint32_t *", pose), 6)
      h = mix(h, ffi.cast("const uint32_t *", q), 8)
    end
  end
  return ("%08x"):format(tonumber(h))
end

return M
