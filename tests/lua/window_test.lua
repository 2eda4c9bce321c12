-- The real window path: the windowed host under a virtual X server (Xvfb), a key sent to it,
-- screenshots read back from the window's own renderer (F12), and a check of what they show.
package.path = "tests/lua/support/?.lua;" .. package.path
local loom = require "loom"
local U = require "util"
local C = loom.C

local function have(cmd) return select(2, U.sh("command -v " .. cmd)) == 0 end

-- fraction of pixels with the cloth's orange (front) or blue (back) colour after shading
local function cloth_fraction(png)
  local c = C.loom_canvas_read_png(png)
  assert.truthy(c ~= nil, "cannot read " .. png)
  local w, h = C.loom_canvas_width(c), C.loom_canvas_height(c)
  local p = C.loom_canvas_pixels(c)
  local cloth, grey = 0, 0
  for i = 0, w * h - 1 do
    local r, g, b = p[4 * i], p[4 * i + 1], p[4 * i + 2]
    if (r > 120 and r - b > 80 and g > 0.45 * r and g < 0.85 * r) or (b > 100 and b - r > 50) then cloth = cloth + 1 end
    if r > 90 and math.abs(r - g) < 12 and math.abs(g - b) < 16 and r > 100 then grey = grey + 1 end
  end
  C.loom_canvas_destroy(c)
  return cloth / (w * h), grey / (w * h), w, h
end

local function same_pixels(a, b)
  return U.read(a) ~= nil and U.read(a) == U.read(b)
end

describe("window", function()
  it("runs hello_cloth in a real window, pauses on space and shows the cloth", function()
    assert.is_true(have("xvfb-run") and have("xdotool"), "xvfb-run and xdotool are needed (make deps installs them)")
    local d = U.tmpdir()
    local script = d .. "/drive.sh"
    -- Under `make asan`, X11, D-Bus and the GL drivers leak a few hundred bytes that LeakSanitizer
    -- cannot attribute without slow unwinding; address and UB checks stay on for the window.
    local env = os.getenv("LOOM_SANITIZED") and "ASAN_OPTIONS=detect_leaks=0 " or ""
    U.write(script, table.concat({
      (env .. "%q scenes/hello_cloth.lua --screenshot %q > %q 2>&1 &"):format(U.loom, d .. "/shot-%d.png", d .. "/log.txt"),
      "pid=$!",
      "wid=$(xdotool search --sync --name 'Loom' | head -n 1)",
      "xdotool windowfocus --sync $wid 2>/dev/null; xdotool mousemove --window $wid 640 100",
      "sleep 1.0", "xdotool key F12",          -- shot-0: running
      "sleep 0.3", "xdotool key space",        -- pause
      "sleep 0.3", "xdotool key F12",          -- shot-1: paused
      "sleep 0.6", "xdotool key F12",          -- shot-2: still paused, 0.6 s later
      "sleep 0.4", "xdotool key Escape",
      "wait $pid", "echo window-status $?",
    }, "\n"))
    local out, code = U.sh(("timeout 60 xvfb-run -a -s '-screen 0 1280x800x24' sh %q"):format(script))
    local log = U.read(d .. "/log.txt") or ""
    assert.equal(0, code, out .. log)
    assert.truthy(out:find("window-status 0", 1, true), out .. log)
    local times, states = {}, {}
    for tt, st in log:gmatch("t = ([%d%.]+) s, (%a+)%)") do times[#times + 1] = tonumber(tt) states[#states + 1] = st end
    assert.equal(3, #times, log)
    assert.equal("running", states[1])
    assert.equal("paused", states[2])
    assert.equal("paused", states[3])
    assert.less(0.3, times[1])                -- the simulation ran in the window
    assert.less(times[1], times[2])
    assert.equal(times[2], times[3])          -- paused: time stands still ...
    assert.is_true(same_pixels(d .. "/shot-1.png", d .. "/shot-2.png"), "paused frames differ") -- ... and so does the picture
    local cloth, grey, w, h = cloth_fraction(d .. "/shot-1.png")
    assert.equal(1280, w)
    assert.equal(720, h)
    assert.less(0.04, cloth)                  -- the cloth covers a good part of the picture
    assert.less(0.002, grey)                  -- and the ball shows
  end)
end)
