-- Generates the binary mesh files (and the CRLF OBJ) of tests/data used by tests/c/test_mesh.c.
-- The outputs are committed; rerun only to change them: luajit scripts/gen_mesh_test_data.lua [dir]
local ffi = require("ffi")
local dir = arg[1] or "tests/data"

local function u32(n)
  return string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256, math.floor(n / 16777216) % 256)
end

local fbuf = ffi.new("float[1]")
local function f32(x)
  fbuf[0] = x
  return ffi.string(fbuf, 4) -- little-endian hosts only (x86, arm64): fine for a dev tool
end
assert(ffi.abi("le"), "gen_mesh_test_data.lua writes little-endian floats: run it on a little-endian machine")

local function header(text)
  return text .. string.rep(" ", 80 - #text)
end

local function facet(n, a, b, c)
  local s = {}
  for _, v in ipairs({n, a, b, c}) do s[#s + 1] = f32(v[1]) .. f32(v[2]) .. f32(v[3]) end
  return table.concat(s) .. "\0\0"
end

local function write(name, data)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(data)
  f:close()
  print(("%s/%s: %d bytes"):format(dir, name, #data))
end

-- Cube [-1, 1]^3 as 12 outward counter-clockwise facets (36 corners, 8 distinct points).
local function cube_facets()
  local quads = { -- corners counter-clockwise seen from outside, normal
    {{1, -1, -1}, {1, 1, -1}, {1, 1, 1}, {1, -1, 1}, {1, 0, 0}},
    {{-1, 1, -1}, {-1, -1, -1}, {-1, -1, 1}, {-1, 1, 1}, {-1, 0, 0}},
    {{1, 1, -1}, {-1, 1, -1}, {-1, 1, 1}, {1, 1, 1}, {0, 1, 0}},
    {{-1, -1, -1}, {1, -1, -1}, {1, -1, 1}, {-1, -1, 1}, {0, -1, 0}},
    {{-1, -1, 1}, {1, -1, 1}, {1, 1, 1}, {-1, 1, 1}, {0, 0, 1}},
    {{-1, 1, -1}, {1, 1, -1}, {1, -1, -1}, {-1, -1, -1}, {0, 0, -1}},
  }
  local out = {}
  for _, q in ipairs(quads) do
    out[#out + 1] = facet(q[5], q[1], q[2], q[3])
    out[#out + 1] = facet(q[5], q[1], q[3], q[4])
  end
  return out
end

local cube = cube_facets()
write("cube_binary.stl", header("binary cube, side 2") .. u32(#cube) .. table.concat(cube))
-- Binary despite a header starting with "solid" (common exporter habit), with 7 bytes of padding.
write("cube_binary_solid_header.stl", header("solid cube") .. u32(#cube) .. table.concat(cube) .. string.rep("\0", 7))

-- Claims 1200 triangles, holds 37.
local part = {}
for i = 1, 37 do part[i] = cube[(i - 1) % 12 + 1] end
write("truncated.stl", header("truncated") .. u32(1200) .. table.concat(part))

-- Claims 2^31 triangles in a 200-byte file.
local huge = header("huge count") .. u32(2 ^ 31)
write("huge_count.stl", huge .. string.rep("\1", 200 - #huge))

-- One facet with a NaN coordinate.
local nan = 0 / 0
write("nonfinite_binary.stl", header("nan") .. u32(2) .. cube[1] ..
  facet({0, 0, 1}, {0, 0, 0}, {1, nan, 0}, {0, 1, 0}))

-- 512 pseudo-random bytes (fixed LCG, Numerical Recipes constants) whose "count" cannot fit.
local seed = 12345
local bytes = {}
for i = 1, 512 do
  seed = (seed * 1664525 + 1013904223) % 4294967296
  bytes[i] = string.char(math.floor(seed / 16777216))
end
local rnd = table.concat(bytes)
local count = rnd:byte(81) + 256 * (rnd:byte(82) + 256 * (rnd:byte(83) + 256 * rnd:byte(84)))
assert(84 + 50 * count > #rnd, "random.bin would be a valid STL: change the seed")
write("random.bin", rnd)

-- CRLF line endings (kept byte-exact by tests/data/.gitattributes).
write("crlf.obj", table.concat({
  "# quad with CRLF line endings", "v 0 0 0", "v 1 0 0", "v 1 1 0", "v 0 1 0", "f 1 2 3 4", ""
}, "\r\n"))
