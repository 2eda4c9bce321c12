-- The immediate-mode UI: widgets react to the mouse the way a user expects and draw in the panel.
local ffi = require "ffi"
local loom = require "loom"
local C = loom.C

local function setup()
  local canvas = ffi.gc(C.loom_canvas_create(640, 360), C.loom_canvas_destroy)
  local ui, ctx = loom.ui.new(canvas)
  return canvas, ui, ctx
end

-- one frame: mouse state, then the widget calls in fn
local function frame(ctx, mouse, fn)
  C.loom_canvas_clear(ctx.canvas, 0x000000FF)
  ctx.begin_frame(mouse)
  local r = {fn()}
  ctx.end_frame()
  return unpack(r)
end

describe("ui", function()
  it("a slider follows a drag that starts on it and clamps to its range", function()
    local _, ui, ctx = setup()
    local t = {wind = 0}
    local function draw() return ui.slider("wind", t, "wind", 0, 20) end
    frame(ctx, {x = -1, y = -1, down = false}, draw)
    -- the bar is the second line of the first row: x from 18 to 302, y around 10 + 8 + 18 + 2
    local y = 10 + 8 + 18 + 2 + 5
    frame(ctx, {x = 18 + 284 / 2, y = y, down = true}, draw)
    assert.near(t.wind, 10, 0.1)
    frame(ctx, {x = 600, y = 300, down = true}, draw)  -- dragging far right: clamped
    assert.equal(20, t.wind)
    frame(ctx, {x = 600, y = 300, down = false}, draw) -- release
    frame(ctx, {x = 18, y = y, down = false}, draw)    -- moving without a press changes nothing
    assert.equal(20, t.wind)
  end)

  it("a press outside the slider does not grab it", function()
    local _, ui, ctx = setup()
    local t = {v = 5}
    local function draw() return ui.slider("v", t, "v", 0, 10) end
    frame(ctx, {x = 500, y = 300, down = false}, draw)
    frame(ctx, {x = 500, y = 300, down = true}, draw)
    frame(ctx, {x = 20, y = 41, down = true}, draw)
    assert.equal(5, t.v)
  end)

  it("a checkbox toggles once per click and a button reports the click on release", function()
    local _, ui, ctx = setup()
    local t = {on = false}
    local clicks = 0
    local function draw()
      ui.checkbox("on", t, "on")
      if ui.button("go") then clicks = clicks + 1 end
    end
    local cy, by = 10 + 8 + 5, 10 + 8 + 18 + 4 + 5
    frame(ctx, {x = 30, y = cy, down = false}, draw)
    frame(ctx, {x = 30, y = cy, down = true}, draw)
    frame(ctx, {x = 30, y = cy, down = true}, draw)   -- held: no second toggle
    frame(ctx, {x = 30, y = cy, down = false}, draw)
    assert.is_true(t.on)
    frame(ctx, {x = 30, y = by, down = true}, draw)
    assert.equal(0, clicks)
    frame(ctx, {x = 30, y = by, down = false}, draw)
    assert.equal(1, clicks)
  end)

  it("the panel takes the mouse only where it is drawn", function()
    local _, ui, ctx = setup()
    local function draw() ui.text("hello") ui.plot("energy", 1.5) end
    frame(ctx, {x = 20, y = 20, down = false}, draw)
    assert.is_true(ctx.wants_mouse)
    frame(ctx, {x = 500, y = 300, down = false}, draw)
    assert.is_false(ctx.wants_mouse)
  end)

  it("widens the panel to its widest line of text, and takes the mouse there", function()
    local _, ui, ctx = setup()
    local long = "15 CG iterations (residual 8.0e-04)   33.29 ms/step"
    local w = C.loom_text_width(long, 1.5)
    assert.truthy(w > 300 and w < 560, tostring(w)) -- longer than the panel's usual width
    local function draw() ui.text("short\n" .. long) end
    frame(ctx, {x = ctx.x + w, y = ctx.y + 10, down = false}, draw)
    assert.truthy(ctx.panel[3] >= w and ctx.panel[3] < 620, tostring(ctx.panel[3]))
    assert.is_true(ctx.wants_mouse)
    -- never wider than the canvas
    frame(ctx, {x = 20, y = 20, down = false}, function() ui.text(long .. long) end)
    assert.equal(640 - 2 * ctx.x, ctx.panel[3])
    frame(ctx, {x = 20, y = 20, down = false}, function() ui.text("hello") end)
    assert.equal(300, ctx.panel[3])                 -- and back when the text is short
  end)

  it("draws text and plots into the canvas", function()
    local canvas, ui, ctx = setup()
    frame(ctx, {x = -1, y = -1, down = false}, function()
      ui.text("t = 1.00 s")
      for i = 1, 50 do ui.plot("x", math.sin(i / 5)) end
    end)
    local p = C.loom_canvas_pixels(canvas)
    local lit = 0
    for i = 0, 640 * 360 - 1 do
      if p[4 * i] > 150 then lit = lit + 1 end
    end
    assert.less(100, lit)
  end)

  it("argument errors name the widget", function()
    local _, ui, ctx = setup()
    ctx.begin_frame({x = 0, y = 0, down = false})
    assert.error(function() ui.slider("s", {s = "x"}, "s", 0, 1) end, "not a number")
    assert.error(function() ui.slider("s", {s = 1}, "s", 1, 0) end, "max > min")
    assert.error(function() ui.plot("p", "x") end, "bad argument #2 to 'plot' (expected a number to plot, got \"x\")")
    assert.error(function() ui.plot("p", 1, 5) end, "bad argument #3 to 'plot' (expected {min =, max =}, got 5)")
    assert.error(function() ui.plot("p", 1, {min = 2, max = 1}) end, "'min' and 'max' must be finite numbers with max > min")
    assert.error(function() ui.plot("p", 1, {min = -1 / 0}) end, "'min' and 'max' must be finite")
    -- no label, a NaN value, a flat history at 1e308: drawn, not an error inside the widget
    ui.plot(nil, 1)
    ui.slider(nil, {s = 0 / 0}, "s", 0, 1)
    ui.checkbox(nil, {c = true}, "c")
    for _ = 1, 3 do ui.plot("big", 1e308) end
    ctx.end_frame()
  end)
end)
