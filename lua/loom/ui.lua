-- loom.ui — immediate-mode widgets drawn by Lua on the renderer's 2D primitives. A scene's
-- ui(ui, world) function calls ui.text, ui.slider, ui.checkbox, ui.button and ui.plot every frame;
-- widgets lay themselves out top to bottom in a panel at the top left.
local C = require "loom.lib"
local check = require "loom.check"

local M = {}

local SCALE = 1.5               -- text scale (12 px lines at 1)
local LINE = 12 * SCALE
local PAD = 8
local WIDTH = 300

local COL = {
  panel = 0x161A22D0, text = 0xE6E6E6FF, dim = 0x9AA3B0FF, bar = 0x394150FF, fill = 0xD9822BFF,
  knob = 0xF2F2F2FF, box = 0x394150FF, check = 0xD9822BFF, button = 0x2F5D8CFF, button_hot = 0x3D76B0FF,
  plot_bg = 0x0E1117C0, plot = 0x7FC8F8FF, grid = 0x394150FF,
}

-- A UI context for one canvas. Returns the table handed to scene.ui and the context.
function M.new(canvas)
  local ctx = {
    canvas = canvas, x = 10, y = 10, cursor = 0, cmds = {}, ncmd = 0,
    mouse = {x = -1, y = -1, down = false, pressed = false, released = false},
    active = nil, history = {}, panel = {0, 0, 0, 0}, wants_mouse = false, width = WIDTH, text_w = 0,
    sampling = false,      -- between begin_sample and end_sample: plots record, nothing is drawn
    record_in_draw = true, -- false when plots are fed by begin_sample/end_sample instead
  }
  local ui = {}

  local function cmd(...)
    ctx.ncmd = ctx.ncmd + 1
    local c = ctx.cmds[ctx.ncmd]
    if not c then
      c = {}
      ctx.cmds[ctx.ncmd] = c
    end
    local n = select("#", ...)
    for i = 1, n do c[i] = select(i, ...) end
    c.n = n
  end

  local function row(h)
    local y = ctx.y + PAD + ctx.cursor
    ctx.cursor = ctx.cursor + h + 4
    return ctx.x + PAD, y, ctx.width - 2 * PAD
  end

  local function inside(x, y, w, h)
    local m = ctx.mouse
    return m.x >= x and m.x < x + w and m.y >= y and m.y < y + h
  end

  local function fmt(v)
    if type(v) ~= "number" then return tostring(v) end
    if v == math.floor(v) and math.abs(v) < 1e6 then return ("%d"):format(v) end
    return ("%.3g"):format(v)
  end

  -- ui.text(s): one or more lines of text
  function ui.text(s)
    s = tostring(s)
    local lines = 1
    for _ in s:gmatch("\n") do lines = lines + 1 end
    local x, y = row(LINE * lines)
    cmd("text", x, y, s, COL.text)
    -- the panel widens to its widest line (up to the canvas)
    for line in (s .. "\n"):gmatch("([^\n]*)\n") do
      ctx.text_w = math.max(ctx.text_w, C.loom_text_width(line, SCALE))
    end
  end

  -- ui.slider(label, table, key, min, max) → value, changed
  function ui.slider(label, t, key, lo, hi)
    if type(t) ~= "table" then check.raise_n(2, "slider", "expected the table holding the value") end
    if not (check.is_finite(lo) and check.is_finite(hi) and hi > lo) then
      check.raise("slider", "'min' and 'max' must be numbers with max > min")
    end
    local v = t[key]
    if type(v) ~= "number" then check.raise("slider", ("%s.%s is %s, not a number"):format("table", tostring(key), check.describe(v))) end
    label = tostring(label)
    local x, y, w = row(LINE + 14)
    local id = "slider\0" .. label
    local bx, by, bw, bh = x, y + LINE + 2, w, 10
    local changed = false
    if ctx.mouse.pressed and inside(bx, by - 4, bw, bh + 8) then ctx.active = id end
    if ctx.active == id then
      if ctx.mouse.down then
        local s = math.max(0, math.min(1, (ctx.mouse.x - bx) / bw))
        local nv = lo + s * (hi - lo)
        if nv ~= v then
          t[key] = nv
          v = nv
          changed = true
        end
      else
        ctx.active = nil
      end
    end
    local s = v == v and math.max(0, math.min(1, (v - lo) / (hi - lo))) or 0 -- (a NaN value: the knob at min)
    cmd("text", x, y, label, COL.dim)
    local vs = fmt(v)
    cmd("text", x + w - C.loom_text_width(vs, SCALE), y, vs, COL.text)
    cmd("rect", bx, by, bw, bh, COL.bar)
    cmd("rect", bx, by, bw * s, bh, COL.fill)
    cmd("rect", bx + bw * s - 2, by - 3, 4, bh + 6, COL.knob)
    return v, changed
  end

  -- ui.checkbox(label, table, key) → value, changed
  function ui.checkbox(label, t, key)
    if type(t) ~= "table" then check.raise_n(2, "checkbox", "expected the table holding the value") end
    label = tostring(label)
    local x, y = row(LINE)
    local changed = false
    if ctx.mouse.pressed and inside(x, y, ctx.width - 2 * PAD, LINE) then
      t[key] = not t[key]
      changed = true
    end
    local box = LINE - 4
    cmd("rect", x, y + 2, box, box, COL.box)
    if t[key] then cmd("rect", x + 3, y + 5, box - 6, box - 6, COL.check) end
    cmd("text", x + box + 8, y, label, COL.text)
    return t[key], changed
  end

  -- ui.button(label) → true on the frame it is clicked
  function ui.button(label)
    local x, y = row(LINE + 6)
    local w = C.loom_text_width(tostring(label), SCALE) + 16
    local hot = inside(x, y, w, LINE + 6)
    local id = "button\0" .. tostring(label)
    if ctx.mouse.pressed and hot then ctx.active = id end
    local clicked = false
    if ctx.active == id and ctx.mouse.released then
      clicked = hot
      ctx.active = nil
    end
    cmd("rect", x, y, w, LINE + 6, hot and COL.button_hot or COL.button)
    cmd("text", x + 8, y + 3, tostring(label), COL.text)
    return clicked
  end

  -- ui.plot(label, value [, {min =, max =}]): a scrolling history of the last 240 values
  function ui.plot(label, value, opts)
    if value ~= nil and type(value) ~= "number" then
      check.raise_n(2, "plot", "expected a number to plot, got " .. check.describe(value))
    end
    if opts ~= nil and type(opts) ~= "table" then check.raise_n(3, "plot", "expected {min =, max =}, got " .. check.describe(opts)) end
    local lo, hi = opts and opts.min, opts and opts.max
    if (lo ~= nil and not check.is_finite(lo)) or (hi ~= nil and not check.is_finite(hi)) or (lo and hi and not (hi > lo)) then
      check.raise_n(3, "plot", "'min' and 'max' must be finite numbers with max > min")
    end
    label = tostring(label)
    local hist = ctx.history[label]
    if not hist then
      hist = {n = 0, at = 0, size = 240}
      ctx.history[label] = hist
    end
    if type(value) == "number" and value == value and (ctx.sampling or ctx.record_in_draw) then
      hist.at = hist.at % hist.size + 1
      hist[hist.at] = value
      if hist.n < hist.size then hist.n = hist.n + 1 end
    end
    local x, y, w = row(LINE + 60)
    if not lo or not hi then
      local mn, mx = math.huge, -math.huge
      for i = 1, hist.n do
        local v = hist[i]
        if v < mn then mn = v end
        if v > mx then mx = v end
      end
      if mn > mx then mn, mx = 0, 1 end
      -- a flat history gets a span it can be drawn in (relative to its size: 1e308 + 1e-12 is 1e308)
      local span = math.max(1e-12, math.abs(mn) * 1e-9)
      if mx - mn < span then mx = mn + span end
      lo, hi = lo or mn, hi or mx
      if not (hi > lo) then lo, hi = mn, mx end -- one bound given, beyond the other
    end
    cmd("text", x, y, label, COL.dim)
    local vs = fmt(value)
    cmd("text", x + w - C.loom_text_width(vs, SCALE), y, vs, COL.text)
    local gy, gh = y + LINE + 2, 56
    cmd("rect", x, gy, w, gh, COL.plot_bg)
    cmd("plot", x, gy, w, gh, hist, lo, hi)
  end

  function ctx.begin_frame(mouse)
    ctx.cursor = 0
    ctx.ncmd = 0
    ctx.text_w = 0
    local m = ctx.mouse
    m.pressed = mouse.down and not m.down
    m.released = (not mouse.down) and m.down
    m.x, m.y, m.down = mouse.x, mouse.y, mouse.down
  end

  -- A pass that only samples: the scene's ui function runs so that plots record their values (once
  -- per step in headless frames), the mouse is ignored and nothing is drawn.
  function ctx.begin_sample()
    ctx.cursor = 0
    ctx.ncmd = 0
    ctx.text_w = 0
    ctx.sampling = true
    ctx.saved_mouse = {ctx.mouse.pressed, ctx.mouse.released}
    ctx.mouse.pressed, ctx.mouse.released = false, false
  end

  function ctx.end_sample()
    ctx.sampling = false
    ctx.ncmd = 0
    ctx.mouse.pressed, ctx.mouse.released = ctx.saved_mouse[1], ctx.saved_mouse[2]
  end

  local function draw_plot(cv, x, y, w, h, hist, lo, hi)
    local n = hist.n
    if n < 2 then return end
    local px, py
    for i = 1, n do
      local idx = (hist.at - n + i - 1) % hist.size + 1
      local v = hist[idx]
      local sx = x + (i - 1) / (hist.size - 1) * w
      local sy = y + h - (v - lo) / (hi - lo) * h
      if sy < y then sy = y elseif sy > y + h then sy = y + h end
      if px then C.loom_canvas_line2(cv, px, py, sx, sy, COL.plot) end
      px, py = sx, sy
    end
  end

  -- Draws the panel and everything recorded since begin_frame.
  function ctx.end_frame()
    local cv = ctx.canvas
    local h = ctx.cursor + 2 * PAD - 4
    if ctx.ncmd > 0 then
      local w = math.max(ctx.width, math.min(ctx.text_w + 2 * PAD, C.loom_canvas_width(cv) - 2 * ctx.x))
      C.loom_canvas_rect(cv, ctx.x, ctx.y, w, h, COL.panel)
      ctx.panel[1], ctx.panel[2], ctx.panel[3], ctx.panel[4] = ctx.x, ctx.y, w, h
    else
      ctx.panel[3], ctx.panel[4] = 0, 0
    end
    for i = 1, ctx.ncmd do
      local c = ctx.cmds[i]
      local k = c[1]
      if k == "text" then
        C.loom_canvas_text(cv, c[2], c[3], c[4], c[5], SCALE)
      elseif k == "rect" then
        C.loom_canvas_rect(cv, c[2], c[3], c[4], c[5], c[6])
      elseif k == "plot" then
        draw_plot(cv, c[2], c[3], c[4], c[5], c[6], c[7], c[8])
      end
    end
    local p, m = ctx.panel, ctx.mouse
    ctx.wants_mouse = ctx.active ~= nil or (m.x >= p[1] and m.x < p[1] + p[3] and m.y >= p[2] and m.y < p[2] + p[4])
  end

  ctx.ui = ui
  return ui, ctx
end

M.SCALE = SCALE
M.LINE = LINE
return M
