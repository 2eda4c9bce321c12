-- loom.plot — `loom plot results.csv --x NAME --y NAME [--by NAME] [--out FILE.png]`: a quick look
-- at a sweep's results drawn with Loom's own renderer: points of y against x (the mean and the
-- spread over seeds per x as a line), one series per value of --by.
local C = require "loom.lib"
local caller = require "loom.caller"

local M = {}

local function fail(fmt, ...) error(("loom plot: " .. fmt):format(...), 0) end

-- a CSV line into cells (quoted cells with "" escapes)
local function cells(line)
  local out, i, n = {}, 1, #line
  while i <= n + 1 do
    if line:sub(i, i) == '"' then
      local buf, j = {}, i + 1
      while j <= n do
        local ch = line:sub(j, j)
        if ch == '"' then
          if line:sub(j + 1, j + 1) == '"' then buf[#buf + 1] = '"' j = j + 2
          else j = j + 1 break end
        else buf[#buf + 1] = ch j = j + 1 end
      end
      out[#out + 1] = table.concat(buf)
      i = j + 1
    else
      local j = line:find(",", i, true) or n + 1
      out[#out + 1] = line:sub(i, j - 1)
      i = j + 1
    end
  end
  return out
end
M.cells = cells

function M.read_csv(path)
  local text, err = caller.read_all(path)
  if not text then fail("cannot open '%s': %s", path, tostring(err)) end
  local header, rows = nil, {}
  local line_no = 0
  for line in caller.lines(text) do
    line_no = line_no + 1
    line = line:gsub("\r$", "")
    if line ~= "" then
      if not header then header = cells(line)
      else
        local c = cells(line)
        if #c ~= #header then fail("%s:%d: %d cells, the header has %d", path, line_no, #c, #header) end
        local r = {}
        for k, name in ipairs(header) do r[name] = c[k] end
        rows[#rows + 1] = r
      end
    end
  end
  if not header then fail("%s is empty", path) end
  return header, rows
end

local palette = {0xE39B3AFF, 0x4A9FE1FF, 0x6CCB6CFF, 0xD9534FFF, 0xB07CD8FF, 0xE6E6E6FF}

function M.plot(path, xname, yname, opts)
  opts = opts or {}
  local header, rows = M.read_csv(path)
  local has = {}
  for _, h in ipairs(header) do has[h] = true end
  for _, n in ipairs {xname, yname, opts.by} do
    if n and not has[n] then fail("%s has no column '%s' (it has: %s)", path, n, table.concat(header, ", ")) end
  end
  local series, order = {}, {}
  local xlo, xhi, ylo, yhi = math.huge, -math.huge, math.huge, -math.huge
  for _, r in ipairs(rows) do
    local x, y = tonumber(r[xname]), tonumber(r[yname])
    if x and y and (r.status == nil or r.status == "ok") then
      local key = opts.by and (opts.by .. " = " .. r[opts.by]) or yname
      if not series[key] then series[key] = {} order[#order + 1] = key end
      local s = series[key]
      s[#s + 1] = {x, y}
      xlo, xhi, ylo, yhi = math.min(xlo, x), math.max(xhi, x), math.min(ylo, y), math.max(yhi, y)
    end
  end
  if #order == 0 then fail("no rows with numbers in '%s' and '%s' (and status ok) in %s", xname, yname, path) end
  if xhi == xlo then xlo, xhi = xlo - 1, xhi + 1 end
  if yhi == ylo then ylo, yhi = ylo - 1, yhi + 1 end
  local W, H = opts.width or 800, opts.height or 500
  local L, R, T, B = 80, 20, 40, 60
  local cv = C.loom_canvas_create(W, H)
  C.loom_canvas_clear(cv, 0x202328FF)
  local function px(x) return L + (x - xlo) / (xhi - xlo) * (W - L - R) end
  local function py(y) return H - B - (y - ylo) / (yhi - ylo) * (H - T - B) end
  -- axes and ticks
  C.loom_canvas_line2(cv, L, H - B, W - R, H - B, 0x8A93A0FF)
  C.loom_canvas_line2(cv, L, T, L, H - B, 0x8A93A0FF)
  for k = 0, 4 do
    local xv, yv = xlo + (xhi - xlo) * k / 4, ylo + (yhi - ylo) * k / 4
    C.loom_canvas_line2(cv, px(xv), H - B, px(xv), H - B + 5, 0x8A93A0FF)
    C.loom_canvas_text(cv, px(xv) - 20, H - B + 10, ("%.4g"):format(xv), 0xC8CDD4FF, 1.2)
    C.loom_canvas_line2(cv, L - 5, py(yv), L, py(yv), 0x8A93A0FF)
    C.loom_canvas_text(cv, 6, py(yv) - 5, ("%.4g"):format(yv), 0xC8CDD4FF, 1.2)
  end
  C.loom_canvas_text(cv, W / 2 - 40, H - 25, xname, 0xE6E6E6FF, 1.5)
  C.loom_canvas_text(cv, 10, 12, ("%s against %s (%s)"):format(yname, xname, path:match("[^/]+$")), 0xE6E6E6FF, 1.5)
  for si, key in ipairs(order) do
    local col = palette[(si - 1) % #palette + 1]
    local pts = series[key]
    -- the mean per x joined by a line, every point marked
    local byx, xs = {}, {}
    for _, p in ipairs(pts) do
      if not byx[p[1]] then byx[p[1]] = {} xs[#xs + 1] = p[1] end
      table.insert(byx[p[1]], p[2])
      C.loom_canvas_rect(cv, px(p[1]) - 2, py(p[2]) - 2, 5, 5, col)
    end
    table.sort(xs)
    local prev
    for _, x in ipairs(xs) do
      local sum = 0
      for _, y in ipairs(byx[x]) do sum = sum + y end
      local m = sum / #byx[x]
      if prev then C.loom_canvas_line2(cv, px(prev[1]), py(prev[2]), px(x), py(m), col) end
      prev = {x, m}
    end
    C.loom_canvas_rect(cv, W - 200, T + 18 * (si - 1) + 4, 10, 10, col)
    C.loom_canvas_text(cv, W - 184, T + 18 * (si - 1) + 2, key, 0xE6E6E6FF, 1.2)
  end
  local out = opts.out or (path:gsub("%.csv$", "") .. ("_%s_%s.png"):format(yname, xname))
  local okw = C.loom_canvas_write_png(cv, out)
  C.loom_canvas_destroy(cv)
  if okw ~= 0 then fail("cannot write '%s'", out) end
  return out
end

function M.main(args)
  local cli = require "loom.cli"
  return cli.run(function()
    local o = cli.options(args, {["--x"] = "value", ["--y"] = "value", ["--by"] = "value", ["--out"] = "value"}, fail)
    local usage = "usage: loom plot results.csv --x NAME --y NAME [--by NAME] [--out FILE.png]"
    if #o.rest ~= 1 or not (o.x and o.y) then fail(usage) end
    local out = M.plot(o.rest[1], o.x, o.y, {by = o.by, out = o.out})
    print("loom plot: wrote " .. out)
    return 0
  end, 2)
end

return M
