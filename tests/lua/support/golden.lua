-- Golden digests: every scene in scenes/ run for a fixed number of steps, digested with
-- support/digest.lua. Shared by tests/lua/golden_test.lua (checks) and scripts/update_golden.lua
-- (records, on purpose, after a change of physics).
local loom = require "loom"
local digest = require "digest"

local M = {}

M.file = "tests/golden/scenes.txt"
M.steps = 240

function M.scenes()
  local p = io.popen("ls scenes/*.lua")
  local list = {}
  for f in p:lines() do list[#list + 1] = f end
  p:close()
  return list
end

function M.compute(scene)
  local w = loom.load_scene(scene):instantiate()
  w:step(M.steps)
  return digest.world(w)
end

-- scene -> digest as recorded
function M.read()
  local out = {}
  local f = io.open(M.file)
  if not f then return out end
  for line in f:lines() do
    local scene, steps, d = line:match("^(%S+)%s+(%d+)%s+(%x+)$")
    if scene and tonumber(steps) == M.steps then out[scene] = d end
  end
  f:close()
  return out
end

return M
