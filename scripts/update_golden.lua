-- Records the golden digest of every scene (tests/golden/scenes.txt). Run it only when a change
-- of physics is intended, and say in the commit which scenes changed and why:
--   build/loom exec scripts/update_golden.lua
package.path = "tests/lua/support/?.lua;" .. package.path
local golden = require "golden"

local old = golden.read()
local lines = {
  "# scene  steps  digest of positions, velocities and rigid poses (tests/lua/support/digest.lua)",
  "# regenerate on purpose with: build/loom exec scripts/update_golden.lua",
}
for _, scene in ipairs(golden.scenes()) do
  local d = golden.compute(scene)
  lines[#lines + 1] = ("%s %d %s"):format(scene, golden.steps, d)
  local was = old[scene]
  print(("%-28s %s%s"):format(scene, d, was == nil and "  (new)" or (was ~= d and "  (changed from " .. was .. ")" or "")))
end
local f = assert(io.open(golden.file, "w"))
f:write(table.concat(lines, "\n"), "\n")
f:close()
