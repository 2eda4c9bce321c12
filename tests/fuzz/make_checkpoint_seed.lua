-- Writes the checkpoint fuzz target's seed: the same world as tests/fuzz/fuzz_checkpoint.c,
-- stepped a little, saved, with the target's leading "force" byte.
--   build/loom exec tests/fuzz/make_checkpoint_seed.lua
local loom = require "loom"
local W = loom.world {}
local c = W:cloth { name = "cloth", mesh = loom.mesh.grid { size = {1, 1}, cells = {6, 6} } }
W:rigid { name = "ball", shape = loom.shape.sphere(0.3), position = {0, 0, -0.5}, static = true }
c:pin { 0 }
W:run(0.05)
local tmp = os.tmpname()
W:save(tmp)
local f = assert(io.open(tmp, "rb"))
local data = f:read("*a")
f:close()
os.remove(tmp)
for force = 0, 1 do
  local out = assert(io.open(("tests/fuzz/corpus/fuzz_checkpoint/seed_force%d"):format(force), "wb"))
  out:write(string.char(force), data)
  out:close()
end
print(("checkpoint seed: %d bytes"):format(#data + 1))
