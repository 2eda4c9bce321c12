-- Puts PNG frames side by side at half size (two per row) into one PNG, to look at a run at a glance.
-- usage: build/loom exec scripts/contact_sheet.lua OUT.png FRAME.png [FRAME.png ...]
local loom = require "loom"
local C = loom.C
local out, files = arg[1], {}
for i = 2, #arg do files[#files + 1] = arg[i] end
if not out or #files == 0 then
  io.stderr:write("usage: loom exec scripts/contact_sheet.lua OUT.png FRAME.png [...]\n")
  os.exit(2)
end
local first = C.loom_canvas_read_png(files[1])
if first == nil then error("cannot read " .. files[1]) end
local w, h = C.loom_canvas_width(first) / 2, C.loom_canvas_height(first) / 2
C.loom_canvas_destroy(first)
local cols = math.min(2, #files)
local rows = math.ceil(#files / cols)
local sheet = C.loom_canvas_create(w * cols, h * rows)
local dst = C.loom_canvas_pixels(sheet)
local sw = w * cols
for k, f in ipairs(files) do
  local c = C.loom_canvas_read_png(f)
  if c == nil then error("cannot read " .. f) end
  local src, cw = C.loom_canvas_pixels(c), C.loom_canvas_width(c)
  local ox, oy = ((k - 1) % cols) * w, math.floor((k - 1) / cols) * h
  for y = 0, h - 1 do
    for x = 0, w - 1 do
      local s, d = 4 * ((2 * y) * cw + 2 * x), 4 * ((oy + y) * sw + ox + x)
      for ch = 0, 3 do dst[d + ch] = src[s + ch] end
    end
  end
  C.loom_canvas_destroy(c)
end
if C.loom_canvas_write_png(sheet, out) ~= 0 then error(require("ffi").string(C.loom_last_error())) end
C.loom_canvas_destroy(sheet)
