-- loom.replay — `loom replay FILE [--headless] [--recorded] [--frames DIR] [--every N] [--size WxH]`:
-- runs a session journal written by `loom run --record FILE` again, headless, and checks that it
-- ends in the same state (every hash the journal holds, the last one included). A scene file that
-- is not the version recorded last is refused with the first line that differs, unless --recorded
-- asks for the journal's own copies. See app.lua for the format.
local ffi = require "ffi"
local C = require "loom.lib"
local util = require "loom.util"
local world_mod = require "loom.world"
local caller = require "loom.caller"

local M = {}

local function fail(fmt, ...) error(("loom replay: " .. fmt):format(...), 0) end

local function unhex(s) return (s:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)) end

-- FILE → list of {kind, step, payload, line}
function M.read(path)
  local text, err = caller.read_all(path)
  if not text then fail("cannot open '%s': %s", path, tostring(err)) end
  local entries, n = {}, 0
  for line in caller.lines(text) do
    n = n + 1
    if n == 1 then
      if line ~= "loom-journal 1" then
        fail("%s is not a Loom session journal (its first line is not 'loom-journal 1')", path)
      end
    elseif line ~= "" then
      local kind, step, payload = line:match("^(%a+) (%d+) (%x*)$")
      if not kind or #payload % 2 == 1 then fail("%s:%d: malformed entry", path, n) end
      entries[#entries + 1] = {kind = kind, step = tonumber(step), payload = unhex(payload), line = n}
    end
  end
  if n == 0 then fail("%s is empty", path) end
  return entries
end

local function set_input(text)
  local input = require "loom.input"
  local d = util.decode(text)
  local st = input._state
  for k in pairs(st.keys) do st.keys[k] = nil end
  for k in (d.keys or ""):gmatch("[^\t]+") do st.keys[k] = true end
  for k in pairs(st.axes) do st.axes[k] = nil end
  for i, v in (d.axes or ""):gmatch("(%d+)=([^\t]+)") do st.axes[tonumber(i)] = tonumber(v) end
  st.mouse.x, st.mouse.y = d.mx or 0, d.my or 0
  st.mouse.left, st.mouse.right, st.mouse.middle = d.left or false, d.right or false, d.middle or false
  st.device = d.device
end

function M.replay(path, opts)
  opts = opts or {}
  local loom = require "loom"
  local scene_mod = require "loom.scene"
  local entries = M.read(path)
  local scene_path
  local last_step = 0
  for _, e in ipairs(entries) do
    if e.kind == "scene" then scene_path = scene_path or e.payload end
    last_step = math.max(last_step, e.step)
  end
  if not scene_path then fail("%s names no scene", path) end
  local last_source
  for _, e in ipairs(entries) do if e.kind == "source" then last_source = e end end
  if not last_source then fail("%s holds no scene source", path) end
  local text = caller.read_all(scene_path)
  if text then
    if text ~= last_source.payload and not opts.recorded then
      -- say what differs: the first line that does
      local a, b = {}, {}
      for l in (last_source.payload .. "\n"):gmatch("([^\n]*)\n") do a[#a + 1] = l end
      for l in (text .. "\n"):gmatch("([^\n]*)\n") do b[#b + 1] = l end
      local n = 1
      while a[n] == b[n] and n <= math.max(#a, #b) do n = n + 1 end
      fail("%s is not the version this journal recorded: line %d was %q and is %q now (%d lines then, %d now); " ..
        "--recorded replays the journal's own copy of the scene", scene_path, n, a[n] or "(end of file)",
        b[n] or "(end of file)", #a, #b)
    end
  end
  for _, e in ipairs(entries) do
    if e.kind == "version" and e.payload ~= ffi.string(C.loom_version()) then
      io.stderr:write(("loom replay: recorded with Loom %s, replaying with %s: the states may differ\n"):format(e.payload,
        ffi.string(C.loom_version())))
    end
  end
  local W, sc, pending
  local view, canvas, cam, frame = nil, nil, nil, 0
  local checked, k = 0, 1
  local function shot(step)
    if not opts.frames or step % (opts.every or 8) ~= 0 then return end
    if not canvas then
      view = require "loom.view"
      local host = require "loom.host"
      host.mkdir_p(opts.frames)
      canvas = C.loom_canvas_create(opts.width or 1280, opts.height or 720)
    end
    if not cam then cam = sc.camera and view.camera(sc.camera) or view.fit(W) end
    view.draw(canvas, W, cam, {})
    C.loom_canvas_write_png(canvas, ("%s/frame_%05d.png"):format(opts.frames, frame))
    frame = frame + 1
  end
  local step = 0
  while true do
    -- the entries of this step: its hashes are of the state before anything else at this step
    local group = {}
    while entries[k] and entries[k].step == step do
      group[#group + 1] = entries[k]
      k = k + 1
    end
    if entries[k] and entries[k].step < step then
      fail("%s:%d: entries out of order (step %d after step %d)", path, entries[k].line, entries[k].step, step)
    end
    for _, e in ipairs(group) do
      if e.kind == "hash" and W then
        local h = W:hash()
        if h ~= e.payload then
          fail("the replay diverged: after %d steps the state hash is %s, the journal says %s (line %d); a different " ..
            "Loom build, or files the scene loads (meshes, data) changed since the recording", step, h, e.payload, e.line)
        end
        checked = checked + 1
      end
    end
    for _, e in ipairs(group) do
      local kind = e.kind
      if kind == "source" then
        pending = scene_mod.load_scene_source(e.payload, scene_path)
      elseif kind == "params" then
        local target = pending or sc
        if not target then fail("%s:%d: parameters before any scene source", path, e.line) end
        for name, v in pairs(util.decode(e.payload)) do
          if target._defaults[name] ~= nil then target.params[name] = v end
        end
        if pending then
          local okb, nw = pcall(pending.instantiate, pending)
          if not okb then fail("%s:%d: the recorded scene version does not build: %s", path, e.line, tostring(nw)) end
          if W then
            nw:adopt(W:address())
            world_mod.carry_forces(nw, world_mod.runtime_forces(W)) -- (as the app does on a reload)
          end
          W, sc, pending = nw, pending, nil
          cam = nil
        end
      elseif kind == "input" then
        set_input(e.payload)
      elseif kind == "grab" then
        if e.payload == "none" then W:grab(nil)
        else
          local name, vertex, x, y, z, om = e.payload:match("^([^\t]*)\t(%d+)\t([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)$")
          local b = name and W:body(name)
          if not b then fail("%s:%d: a grab of a body this version does not have (%q)", path, e.line, tostring(name)) end
          W:grab(b, tonumber(vertex), {tonumber(x), tonumber(y), tonumber(z)}, tonumber(om))
        end
      elseif kind == "set" then
        local name, param, value = e.payload:match("^([^\t]*)\t([^\t]+)\t([^\t]+)$")
        local b = name and W:body(name)
        if not b then fail("%s:%d: a parameter of a body this version does not have (%q)", path, e.line, tostring(name)) end
        b:set(param, tonumber(value))
      elseif kind == "restart" then
        W = sc:instantiate()
      elseif kind ~= "hash" and kind ~= "scene" and kind ~= "version" then
        fail("%s:%d: unknown entry '%s'", path, e.line, kind)
      end
    end
    if not W then fail("%s: no scene version was started at step %d", path, step) end
    if step == 0 then shot(0) end
    if step >= last_step then break end
    W:step(1)
    step = step + 1
    shot(step)
  end
  if canvas then C.loom_canvas_destroy(canvas) end
  return W, step, checked
end

function M.main(args)
  local cli = require "loom.cli"
  return cli.run(function()
    local o = cli.options(args, {["--headless"] = "flag", ["--recorded"] = "flag", ["--frames"] = "value",
                                 ["--every"] = "value", ["--size"] = "value"}, fail)
    if #o.rest ~= 1 then fail("usage: loom replay FILE [--headless] [--recorded] [--frames DIR] [--every N] [--size WxH]") end
    if o.every then
      o.every = tonumber(o.every)
      if not o.every or o.every < 1 or o.every ~= math.floor(o.every) then fail("--every needs a whole number >= 1") end
    end
    if o.size then
      local w, h = o.size:match("^(%d+)x(%d+)$")
      if not w then fail("--size needs WxH") end
      o.width, o.height = tonumber(w), tonumber(h)
    end
    local path = o.rest[1]
    local W, steps, checked = M.replay(path, o)
    print(("loom replay: %s: %d steps, t = %.4f s, final hash %s (%d recorded hashes matched)"):format(path, steps,
      W.time, W:hash(), checked))
    return 0
  end, 1)
end

return M
