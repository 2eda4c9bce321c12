-- loom.app — the runtime the host drives, one per Lua state: loads a scene, steps it in real time
-- (window, or headless with --watch) or as fast as possible (headless batch), handles keys and
-- mouse, draws the world and the scene's UI, writes PNG frames, meshes and a stats CSV, and hands
-- its state to the next Lua state on hot reload (export → init → adopt).
local ffi = require "ffi"
local C = require "loom.lib"
local host = require "loom.host"
local world_mod = require "loom.world"
local scene_mod = require "loom.scene"
local view = require "loom.view"
local ui_mod = require "loom.ui"
local input = require "loom.input"
local util = require "loom.util"
local mesh_mod = require "loom.mesh"
local check = require "loom.check"

local App = {}

local S = {notes = {}, errors = 0, watched = {}}

----------------------------------------------------------------------------------------------------
-- messages

local NOTE_SECONDS = 8

-- Shows a message in the window (if any) and on stderr. kind: "error", "warning", "info".
function App.notify(msg, kind)
  kind = kind or "info"
  if kind == "error" then S.errors = S.errors + 1 end
  if S.progress_shown then
    io.stderr:write("\n")
    S.progress_shown = false
  end
  if kind ~= "info" or not S.opts or not S.opts.quiet then
    io.stderr:write(kind == "info" and "" or "loom: ", msg, "\n")
    io.stderr:flush()
  end
  table.insert(S.notes, {msg = msg, kind = kind, until_t = C.loom_clock() + NOTE_SECONDS})
  if #S.notes > 6 then table.remove(S.notes, 1) end
end

-- input messages (a gamepad came or went, the key fallback, a clamped recording) in the window too
input.on_message = function(msg) App.notify(msg, "info") end

-- A reload failed: the old scene keeps running and shows the error until the next good save.
function App.show_error(msg)
  S.banner = msg
end

-- The notes the window shows now (newest last): {msg =, kind =} tables.
function App.notes()
  local now, out = C.loom_clock(), {}
  for _, n in ipairs(S.notes) do
    if n.until_t > now then out[#out + 1] = {msg = n.msg, kind = n.kind} end
  end
  return out
end

-- Shows msg in the window only (the host has already printed it on the terminal).
local function toast(msg, kind)
  table.insert(S.notes, {msg = msg, kind = kind or "info", until_t = C.loom_clock() + NOTE_SECONDS})
  if #S.notes > 6 then table.remove(S.notes, 1) end
end

----------------------------------------------------------------------------------------------------
-- watching the files a scene loads

local function watch(path)
  if type(path) ~= "string" then return end
  for _, p in ipairs(S.watched) do if p == path then return end end
  S.watched[#S.watched + 1] = path
end

local function install_watchers()
  local lua_dir = host.lua_dir or ""
  local searcher = package.loaders[2]
  package.loaders[2] = function(name)
    local path = package.searchpath and package.searchpath(name, package.path)
    if path and (lua_dir == "" or path:sub(1, #lua_dir) ~= lua_dir) then watch(path) end
    return searcher(name)
  end
  local lf, df = loadfile, dofile
  loadfile = function(path, ...)
    watch(path)
    return lf(path, ...)
  end
  dofile = function(path, ...)
    watch(path)
    return df(path, ...)
  end
end

function App.watched()
  for _, p in ipairs(mesh_mod.loaded_files) do watch(p) end
  return S.watched
end

----------------------------------------------------------------------------------------------------
-- loading

local function camera_key(def)
  if not def then return "" end
  local t = def.target or {}
  return table.concat({tostring(t[1]), tostring(t[2]), tostring(t[3]), tostring(def.distance),
    tostring(def.azimuth or def.azimuth_deg), tostring(def.elevation or def.elevation_deg), tostring(def.fov)}, ",")
end

-- --param names are checked here, before the scene's own check, to suggest the declared name a typo
-- was meant to be (as unknown fields do).
local function check_params(sc, params)
  local names = {}
  for n in pairs(sc._defaults) do names[#names + 1] = n end
  table.sort(names)
  for k in pairs(params) do
    if sc._defaults[k] == nil then
      local hint = check.suggest(k, names)
      return ("unknown parameter '%s' (%sthe scene declares: %s)"):format(k,
        hint and ("did you mean '" .. hint .. "'? ") or "", #names > 0 and table.concat(names, ", ") or "none")
    end
  end
end

local function params_text(params)
  local t = {}
  for k, v in pairs(params) do t[#t + 1] = ("--param %s=%s"):format(k, v) end
  table.sort(t)
  return table.concat(t, " ")
end

-- --track body:index → {body = name, vertex = index} after checking both against the world; returns
-- nil and a message for a bad one (the host exits with status 2, as for any bad option).
local function parse_tracks(W, specs)
  local by_body, order = {}, {}
  for _, spec in ipairs(specs or {}) do
    local name, idx = spec:match("^(.*):(%d+)$")
    idx = tonumber(idx)
    local b = name and W._bodies[name]
    if not b then
      local names = {}
      for _, bb in ipairs(W:bodies()) do names[#names + 1] = bb.name end
      local hint = name and check.suggest(name, names)
      return nil, ("--track %s: no body '%s' (%sbodies: %s)"):format(spec, tostring(name),
        hint and ("did you mean '" .. hint .. "'? ") or "", #names > 0 and table.concat(names, ", ") or "none")
    end
    if b.kind ~= "cloth" then
      return nil, ("--track %s: '%s' is a %s body; tracks follow cloth vertices"):format(spec, name, b.kind)
    end
    if idx >= b.n then
      return nil, ("--track %s: vertex %d out of range (cloth '%s' has %d vertices, 0 to %d)"):format(spec, idx, name, b.n, b.n - 1)
    end
    if not by_body[name] then
      by_body[name] = {body = name, vertices = {}}
      order[#order + 1] = by_body[name]
    end
    table.insert(by_body[name].vertices, idx)
  end
  return order
end

-- opts (from the host): scene, mode ("window" | "headless"), canvas (lightuserdata), time, steps,
-- frames, every, export, format ("obj" | "ply"), tracks ({"body:index", …}), stats, params
-- (name → string), watch, realtime, quiet, progress, carry, budget (seconds of stepping a real-time
-- frame may take before the run falls behind real time instead of spiralling; 0.05).
-- Returns nothing, or a message when an option does not fit the scene (the host's status 2).
function App.init(opts)
  S.opts = opts
  S.mode = opts.mode or "headless"
  S.canvas = opts.canvas and ffi.cast("loom_canvas*", opts.canvas) or nil
  world_mod.report = function(msg, kind) App.notify(msg, kind or "error") end
  world_mod.busy = host.busy or world_mod.busy
  install_watchers()
  watch(opts.scene)

  local sc = scene_mod.load_scene(opts.scene)
  if opts.params then
    local perr = check_params(sc, opts.params)
    if perr then error(opts.scene .. ": " .. perr, 0) end
    local ok, err = pcall(sc.set_params, sc, opts.params)
    if not ok then error(opts.scene .. ": " .. tostring(err):gsub("^[^:]*:%d+: ", ""), 0) end
  end
  local carry = opts.carry and util.decode(opts.carry) or nil
  local view_state = {}
  if carry then
    -- keep values tuned in the UI unless the file changed that parameter's default
    local values, defaults = util.decode(carry.params or ""), util.decode(carry.defaults or "")
    for k, v in pairs(values) do
      local d = sc._defaults[k]
      if d ~= nil and defaults[k] == d and type(v) == type(d) and v ~= d then sc.params[k] = v end
    end
    view_state = util.decode(carry.view or "")
  end
  S.carry_forces = carry and carry.forces or nil
  S.scene = sc
  local ok, w = pcall(sc.instantiate, sc)
  if not ok then
    -- a value from the command line that build cannot use: say which values were given
    if opts.params and next(opts.params) then error(tostring(w) .. " (with " .. params_text(opts.params) .. ")", 0) end
    error(w, 0)
  end
  S.world = w
  S.dt = S.world.dt
  local tracks, terr = parse_tracks(S.world, opts.tracks)
  if not tracks then return terr end

  if carry and view_state.camera_key == camera_key(sc.camera) and view_state.distance then
    S.cam = view.camera {target = {view_state.tx, view_state.ty, view_state.tz}, distance = view_state.distance,
                         azimuth = view_state.azimuth, elevation = view_state.elevation, fov = view_state.fov}
  else
    S.cam = sc.camera and view.camera(sc.camera) or view.fit(S.world)
  end
  S.paused = view_state.paused or false
  S.show = {wireframe = view_state.wireframe or false, contacts = view_state.contacts or false,
            velocities = view_state.velocities or false, pins = view_state.pins ~= false,
            grid = view_state.grid ~= false, lattice = view_state.lattice or false, help = false,
            pairs = view_state.pairs or false, zones = view_state.zones or false, boxes = view_state.boxes or false}
  S.acc = 0
  S.start_wall = view_state.start_wall or C.loom_clock()
  S.start_time = S.world.time
  S.frame_index = view_state.frame_index or 0
  S.steps_done = view_state.steps_done or 0
  if S.canvas ~= nil then
    S.ui, S.uictx = ui_mod.new(S.canvas)
    -- a press on the panel drawn last frame belongs to the UI, not to the camera or the grab
    S.uictx.wants_mouse_at = function(x, y)
      local p = S.uictx.panel
      return x >= p[1] and x < p[1] + p[3] and y >= p[2] and y < p[2] + p[4]
    end
  end
  S.rate = 0
  S.rate_steps, S.rate_t = 0, C.loom_clock()
  S.every = opts.every or math.max(1, math.floor(1 / (30 * S.dt) + 0.5))
  S.format = opts.format or "obj"
  -- headless frames: plots take every step's value, not only the drawn frames' (the UI runs after
  -- each step without drawing)
  S.sample_ui = S.mode ~= "window" and opts.frames ~= nil and S.uictx ~= nil
  if S.uictx then S.uictx.record_in_draw = not S.sample_ui end
  if opts.stats then App.open_stats(opts.stats, carry ~= nil) end
  if opts.video then
    local verr = App.open_video(opts.video, carry)
    if verr then return verr end
  end
  if opts.record then App.open_journal(opts.record, carry) end
  if #tracks > 0 then App.open_tracks(opts.export, tracks, carry ~= nil) end
  for _, dir in ipairs {opts.frames or false, opts.export or false} do
    if dir then
      local mok, merr = host.mkdir_p(dir)
      if not mok then error(merr, 0) end
    end
  end
end

----------------------------------------------------------------------------------------------------
-- the session journal (--record FILE; lua/loom/replay.lua reads it)
--
-- Lines "KIND STEP HEX": what changes the simulation from outside, with the number of steps taken
-- when it took effect, its payload hex-encoded. source (the scene file's text, at the start and at
-- every reload), params (the scene's parameters when they change: command line, UI, reload),
-- input (keys held, axes, mouse, when they change), grab (the mouse grab: body, vertex, target,
-- omega, or none), set (a body parameter changed from the UI), restart, and hash (the state after
-- STEP steps, when a version closes: at the end of the run and at each reload).

local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end

local function jwrite(kind, payload)
  if not S.journal then return end
  S.journal:write(("%s %d %s\n"):format(kind, S.steps_done, hex(payload or "")))
  S.journal:flush()
end

local function input_text()
  local st = input._state
  local keys = {}
  for k, v in pairs(st.keys) do if v then keys[#keys + 1] = k end end
  table.sort(keys)
  local axes = {}
  for i, v in pairs(st.axes) do axes[#axes + 1] = ("%d=%.17g"):format(i, v) end
  table.sort(axes)
  local m = st.mouse
  return util.encode {keys = table.concat(keys, "\t"), axes = table.concat(axes, "\t"), mx = m.x, my = m.y,
                      left = m.left, right = m.right, middle = m.middle, device = st.device}
end

function App.open_journal(path, carry)
  if not carry then
    -- a new journal; then every version appends (after a reload the old version's last words land
    -- after the new one's first)
    local t, terr = io.open(path, "w")
    if not t then error("--record: " .. tostring(terr), 0) end
    t:close()
  end
  local f, err = io.open(path, "a")
  if not f then error("--record: " .. tostring(err), 0) end
  S.journal = f
  local sf = io.open(S.opts.scene, "rb")
  local src = sf and sf:read("*a") or ""
  if sf then sf:close() end
  if not carry then
    f:write("loom-journal 1\n")
    jwrite("scene", host.realpath(S.opts.scene) or S.opts.scene)
    jwrite("version", ffi.string(C.loom_version()))
  end
  jwrite("source", src)
  S.jlast = {params = util.encode(S.scene.params)}
  jwrite("params", S.jlast.params)
  world_mod.on_set = function(b, name, value)
    if S.in_ui then jwrite("set", ("%s\t%s\t%.17g"):format(b.name, name, value)) end
  end
end

-- before each step: what changed since the last one (and every 240 steps the state's hash, so a
-- replay that goes astray says where)
local function journal_step()
  local last = S.jlast
  if S.steps_done > 0 and S.steps_done % 240 == 0 then jwrite("hash", S.world:hash()) end
  local p = util.encode(S.scene.params)
  if p ~= last.params then jwrite("params", p) last.params = p end
  local it = input_text()
  if it ~= last.input then jwrite("input", it) last.input = it end
  local g = "none"
  if S.grab_state then
    local gs = S.grab_state
    g = ("%s\t%d\t%.17g\t%.17g\t%.17g\t%.17g"):format(gs.body.name, gs.vertex, gs.target[1], gs.target[2], gs.target[3], gs.omega)
  end
  if g ~= last.grab then jwrite("grab", g) last.grab = g end
end

-- State handed to the next Lua state on reload.
function App.export()
  local c = S.cam
  return util.encode {
    params = util.encode(S.scene.params),
    defaults = util.encode(S.scene._defaults),
    view = util.encode {
      tx = c.target[1], ty = c.target[2], tz = c.target[3], distance = c.distance, azimuth = c.azimuth,
      elevation = c.elevation, fov = c.fov, camera_key = camera_key(S.scene.camera), paused = S.paused,
      wireframe = S.show.wireframe, contacts = S.show.contacts, velocities = S.show.velocities,
      pins = S.show.pins, grid = S.show.grid, lattice = S.show.lattice, frame_index = S.frame_index,
      pairs = S.show.pairs, zones = S.show.zones, boxes = S.show.boxes,
      steps_done = S.steps_done, start_wall = S.start_wall,
    },
    forces = world_mod.runtime_forces(S.world),
  }
end

function App.world_address() return S.world:address() end

-- Takes over the state of the previous Lua state's world (hot reload).
function App.adopt(old_address)
  local n = S.world:adopt(old_address)
  -- the rigid forces added while the old version ran (the force panel, on_step) go on acting
  local carried, dropped = world_mod.carry_forces(S.world, S.carry_forces)
  S.carry_forces = nil
  local extra = carried > 0 and (", %d rigid force%s carried"):format(carried, carried == 1 and "" or "s") or ""
  App.notify(("reloaded %s at t = %.2f s (%d bod%s kept%s)"):format(S.opts.scene, S.world.time, n, n == 1 and "y" or "ies",
    extra), "info")
  if #dropped > 0 then
    App.notify(("reload: %d rigid force%s dropped: no dynamic rigid body %s in the new version"):format(#dropped,
      #dropped == 1 and "" or "s", table.concat(dropped, ", ")), "warning")
  end
  return n
end

function App.error_count() return S.errors end

----------------------------------------------------------------------------------------------------
-- outputs

local write_stats

function App.open_stats(path, append)
  local dir = path:match("^(.*)/[^/]*$")
  if dir and dir ~= "" then
    local ok, merr = host.mkdir_p(dir)
    if not ok then error("--stats: " .. merr, 0) end
  end
  local f, err = io.open(path, append and "a" or "w")
  if not f then error("--stats: " .. tostring(err), 0) end
  S.stats_file = f
  S.stats_bodies = {}
  for _, b in ipairs(S.world:bodies()) do
    if b.kind ~= "rigid" then S.stats_bodies[#S.stats_bodies + 1] = b.name end
  end
  if not append then
    local cols = {"step", "time", "kinetic", "potential", "elastic", "contacts", "collisions", "max_penetration",
                  "substeps", "frozen"}
    for _, name in ipairs(S.stats_bodies) do
      for _, c in ipairs {"cx", "cy", "cz", "vx", "vy", "vz"} do cols[#cols + 1] = name .. "_" .. c end
    end
    f:write(table.concat(cols, ","), "\n")
    write_stats() -- the first row is the initial state, t = 0
  end
end

function write_stats()
  local W = S.world
  local st, e = W:stats(), W:energy()
  local row = {("%d"):format(st.steps), ("%.6f"):format(st.time), ("%.9g"):format(e.kinetic), ("%.9g"):format(e.potential),
               ("%.9g"):format(e.elastic), st.contacts, st.collisions, ("%.6g"):format(st.max_penetration), st.substeps, st.frozen}
  for _, name in ipairs(S.stats_bodies) do
    local b = W._bodies[name]
    if not b then
      local ok, bb = pcall(W.body, W, name)
      b = ok and bb or nil
    end
    if b and b.kind ~= "rigid" then
      local m, cx, cy, cz, vx, vy, vz = 0, 0, 0, 0, 0, 0, 0
      local mass = b:raw "m"
      for i = 0, b.n - 1 do
        local mi = mass[i] > 0 and mass[i] or 1e-300
        local x, v = b.x[i], b.v[i]
        m = m + mi
        cx, cy, cz = cx + mi * x.x, cy + mi * x.y, cz + mi * x.z
        vx, vy, vz = vx + mi * v.x, vy + mi * v.y, vz + mi * v.z
      end
      for _, v in ipairs {cx / m, cy / m, cz / m, vx / m, vy / m, vz / m} do row[#row + 1] = ("%.9g"):format(v) end
    else
      for _ = 1, 6 do row[#row + 1] = "nan" end
    end
  end
  S.stats_file:write(table.concat(row, ","), "\n")
end

-- --track: one CSV per cloth, DIR/NAME_track.csv, a row per step from t = 0 with the position and
-- velocity of each tracked vertex.
function App.open_tracks(dir, tracks, append)
  S.tracks = {}
  for _, tr in ipairs(tracks) do
    local path = ("%s/%s_track.csv"):format(dir, tr.body)
    local f, err = io.open(path, append and "a" or "w")
    if not f then error("--track: " .. tostring(err), 0) end
    tr.file = f
    S.tracks[#S.tracks + 1] = tr
    if not append then
      local cols = {"t"}
      for _, i in ipairs(tr.vertices) do
        for _, c in ipairs {"x", "y", "z", "vx", "vy", "vz"} do cols[#cols + 1] = c .. "_" .. i end
      end
      f:write(table.concat(cols, ","), "\n")
    end
  end
  if not append then App.write_tracks() end
end

function App.write_tracks()
  local W = S.world
  for _, tr in ipairs(S.tracks) do
    local b = W._bodies[tr.body]
    local row = {("%.6f"):format(W.time)}
    for _, i in ipairs(tr.vertices) do
      if b then
        local x, v = b.x[i], b.v[i]
        row[#row + 1] = ("%.9g,%.9g,%.9g,%.9g,%.9g,%.9g"):format(x.x, x.y, x.z, v.x, v.y, v.z)
      else
        row[#row + 1] = "nan,nan,nan,nan,nan,nan"
      end
    end
    tr.file:write(table.concat(row, ","), "\n")
  end
end

pcall(ffi.cdef, "typedef struct __attribute__((packed)) { uint8_t n; int32_t v[3]; } loom_ply_face;")
local PLY_FORMAT = ffi.abi("le") and "binary_little_endian" or "binary_big_endian"

-- Binary PLY: positions and velocities as doubles per vertex, triangles as a list property.
local function save_ply(b, path, cache)
  local n = b.n
  if not cache.faces then
    local tri, nt = b:triangles()
    local faces = ffi.new("loom_ply_face[?]", nt)
    for t = 0, nt - 1 do
      faces[t].n = 3
      faces[t].v[0], faces[t].v[1], faces[t].v[2] = tri[3 * t], tri[3 * t + 1], tri[3 * t + 2]
    end
    cache.faces, cache.nt = faces, nt
    cache.verts = ffi.new("double[?]", 6 * n)
  end
  local vb = cache.verts
  for i = 0, n - 1 do
    local x, v = b.x[i], b.v[i]
    vb[6 * i], vb[6 * i + 1], vb[6 * i + 2] = x.x, x.y, x.z
    vb[6 * i + 3], vb[6 * i + 4], vb[6 * i + 5] = v.x, v.y, v.z
  end
  local f, err = io.open(path, "wb")
  if not f then return nil, err end
  f:write("ply\nformat ", PLY_FORMAT, " 1.0\n",
    ("comment Loom cloth '%s' at t = %.9g s\n"):format(b.name, S.world.time),
    ("element vertex %d\n"):format(n),
    "property double x\nproperty double y\nproperty double z\n",
    "property double vx\nproperty double vy\nproperty double vz\n",
    ("element face %d\n"):format(cache.nt),
    "property list uchar int vertex_indices\nend_header\n")
  f:write(ffi.string(vb, 48 * n))
  local ok, werr = f:write(ffi.string(cache.faces, ffi.sizeof("loom_ply_face") * cache.nt))
  f:close()
  if not ok then return nil, werr end
  return true
end

local export_meshes = {}
local function export_frame(dir, index)
  for _, b in ipairs(S.world:bodies()) do
    if b.kind == "cloth" then
      local cache = export_meshes[b]
      if not cache then
        cache = {}
        export_meshes[b] = cache
      end
      local ok, err
      if S.format == "ply" then
        ok, err = save_ply(b, ("%s/%s_%05d.ply"):format(dir, b.name, index), cache)
      else
        if not cache.mesh then
          local tri, nt = b:triangles()
          cache.mesh = ffi.gc(C.loom_mesh_from_arrays(b:raw "rest", b.n, tri, nt), C.loom_mesh_destroy)
        end
        ok = C.loom_mesh_save_obj(cache.mesh, b:raw "x", ("%s/%s_%05d.obj"):format(dir, b.name, index)) == 0
        if not ok then err = ffi.string(C.loom_last_error()) end
      end
      if not ok then return nil, err end
    end
  end
  return true
end

----------------------------------------------------------------------------------------------------
-- drawing

local function draw_hud()
  local cv = S.canvas
  local w = C.loom_canvas_width(cv)
  local W = S.world
  local line = ("%s   t = %.2f s   %s"):format(S.scene.title, W.time,
    S.paused and "paused" or ("%d steps/s"):format(S.rate))
  local tw = C.loom_text_width(line, 1.5)
  C.loom_canvas_rect(cv, w - tw - 20, 8, tw + 12, 26, 0x161A22C0)
  C.loom_canvas_text(cv, w - tw - 14, 12, line, 0xE6E6E6FF, 1.5)
  if S.recording then C.loom_canvas_text(cv, w - 110, 40, "REC", 0xFF4D4DFF, 2) end
  local h = C.loom_canvas_height(cv)
  local y = h - 10
  local now = C.loom_clock()
  if S.banner then
    local lines = {}
    for l in (S.banner .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
    local bh = 18 * #lines + 12
    C.loom_canvas_rect(cv, 0, y - bh, w, bh, 0x8A1C1CE0)
    for i, l in ipairs(lines) do C.loom_canvas_text(cv, 10, y - bh + 6 + 18 * (i - 1), l, 0xFFFFFFFF, 1.5) end
    y = y - bh - 4
  end
  for i = #S.notes, 1, -1 do
    local n = S.notes[i]
    if n.until_t > now then
      local col = n.kind == "error" and 0xFF7A7AFF or n.kind == "warning" and 0xFFD866FF or 0xD0D0D0FF
      local tw2 = C.loom_text_width(n.msg, 1.5)
      C.loom_canvas_rect(cv, 6, y - 22, tw2 + 12, 22, 0x161A22C8)
      C.loom_canvas_text(cv, 12, y - 19, n.msg, col, 1.5)
      y = y - 26
    end
  end
  if S.show.help then
    local help = "space  pause / run\n.      one step\nr      restart from t = 0\nw      wireframe\nc      contacts\n" ..
                 "v      velocities\np      pins\ng      grid\nl      solids: lattice / embedded surface\n" ..
                 "k      collision pairs (proximity / continuous)\nz      impact zones\n" ..
                 "b      collision tree boxes (depth 0, 2, ... 8, off)\n" ..
                 "f      record frames\nF12    screenshot\n" ..
                 "mouse  drag: orbit (on cloth: grab), right: pan, wheel: zoom\nh      this help"
    local hw, hh = C.loom_text_width(help, 1.5) + 24, C.loom_text_height(help, 1.5) + 20
    C.loom_canvas_rect(cv, (w - hw) / 2, (h - hh) / 2, hw, hh, 0x161A22E8)
    C.loom_canvas_text(cv, (w - hw) / 2 + 12, (h - hh) / 2 + 10, help, 0xE6E6E6FF, 1.5)
  elseif not S.banner then
    C.loom_canvas_text(cv, w - 170, h - 20, "h: keys and mouse", 0x8A93A0FF, 1.5)
  end
end

-- The scene's ui under pcall (an error disables it until the next reload).
local function call_ui()
  world_mod.busy("ui")
  S.in_ui = true
  local ok, err = pcall(S.scene.ui, S.ui, S.world)
  S.in_ui = false
  world_mod.busy(nil)
  if not ok then
    S.ui_disabled = true
    App.notify(tostring(err) .. " (in ui; disabled until the scene is reloaded)", "error")
  end
end

local function sample_ui()
  if not (S.sample_ui and S.scene.ui) or S.ui_disabled then return end
  S.uictx.begin_sample()
  call_ui()
  S.uictx.end_sample()
end

local function render()
  local cv = S.canvas
  if cv == nil then return end
  local disp = rawget(S.world, "display")
  if disp and (disp.stereo == "anaglyph" or disp.stereo == "side_by_side") then
    view.draw_stereo(cv, S.world, S.cam, S.show, disp.stereo)
  else
    view.draw(cv, S.world, S.cam, S.show)
  end
  if S.uictx and S.scene.ui and not S.ui_disabled then
    local m = input._state.mouse
    S.uictx.begin_frame(m)
    call_ui()
    S.uictx.end_frame()
  end
  if S.mode == "window" then draw_hud() end
end

----------------------------------------------------------------------------------------------------
-- input

local grab = nil

local function ray_at(x, y)
  local o, d = ffi.new("loom_vec3"), ffi.new("loom_vec3")
  C.loom_canvas_ray(S.canvas, x, y, o, d)
  return o, d
end

local function start_grab(x, y)
  local o, d = ray_at(x, y)
  local b, v = S.world:raycast({o.x, o.y, o.z}, {d.x, d.y, d.z})
  if not b or b.inv_m[v] == 0 then return false end
  local p = b.x[v]
  grab = {body = b, vertex = v, plane = {p.x, p.y, p.z}, normal = {d.x, d.y, d.z}, target = {p.x, p.y, p.z}}
  return true
end

local function update_grab(x, y)
  local o, d = ray_at(x, y)
  local n, p = grab.normal, grab.plane
  local den = d.x * n[1] + d.y * n[2] + d.z * n[3]
  if math.abs(den) < 1e-9 then return end
  local s = ((p[1] - o.x) * n[1] + (p[2] - o.y) * n[2] + (p[3] - o.z) * n[3]) / den
  grab.target = {o.x + s * d.x, o.y + s * d.y, o.z + s * d.z}
end

local function restart()
  if S.journal then jwrite("restart", "") end
  local ok, w = pcall(S.scene.instantiate, S.scene)
  if ok then
    S.world = w
    S.acc = 0
    S.ui_disabled = false
    S.start_time, S.start_wall = 0, C.loom_clock()
    App.notify("restarted at t = 0", "info")
  else
    App.notify(tostring(w), "error")
  end
  grab = nil
end

local function step_world(n)
  local W = S.world
  for _ = 1, n do
    if S.journal then journal_step() end
    W:step(1)
    S.steps_done = S.steps_done + 1
    S.rate_steps = S.rate_steps + 1
    if S.stats_file then write_stats() end
    if S.tracks then App.write_tracks() end
    sample_ui()
  end
end

local drag = nil
local function handle_event(e)
  local st = input._state
  if e.type == "key" then
    st.keys[e.key] = e.down
    if not e.down then return end
    local k = e.key
    if k == "space" then S.paused = not S.paused
    elseif k == "." or k == "period" then S.paused = true step_world(1)
    elseif k == "r" then restart()
    elseif k == "w" then S.show.wireframe = not S.show.wireframe
    elseif k == "c" then S.show.contacts = not S.show.contacts
    elseif k == "v" then S.show.velocities = not S.show.velocities
    elseif k == "p" then S.show.pins = not S.show.pins
    elseif k == "g" then S.show.grid = not S.show.grid
    elseif k == "l" then S.show.lattice = not S.show.lattice
    elseif k == "k" then S.show.pairs = not S.show.pairs
    elseif k == "z" then S.show.zones = not S.show.zones
    elseif k == "b" then
      -- the collision tree's boxes: off, then depths 0, 2, 4, 6, 8, then off
      local d = S.show.boxes
      S.show.boxes = not d and 0 or (d < 8 and d + 2 or false)
      App.notify(S.show.boxes and ("collision tree boxes at depth %d"):format(S.show.boxes) or "collision tree boxes off", "info")
    elseif k == "h" then S.show.help = not S.show.help
    elseif k == "f" then
      if not S.recording then
        local dir = ("out/record-%d"):format(os.time())
        local ok, err = host.mkdir_p(dir)
        if ok then
          S.recording, S.rec_dir, S.rec_index = true, host.realpath(dir), 0
          App.notify("recording frames to " .. S.rec_dir .. "/", "info")
        else
          App.notify("cannot record: " .. err, "error")
        end
      else
        S.recording = false
        App.notify(("recorded %d frames in %s/"):format(S.rec_index, S.rec_dir), "info")
      end
    end
  elseif e.type == "mouse_move" then
    st.mouse.x, st.mouse.y = e.x, e.y
    if grab then update_grab(e.x, e.y)
    elseif drag == "orbit" then
      S.cam.azimuth = S.cam.azimuth - 0.3 * e.dx
      S.cam.elevation = math.max(-89, math.min(89, S.cam.elevation + 0.3 * e.dy))
    elseif drag == "pan" then
      local az, el = math.rad(S.cam.azimuth), math.rad(S.cam.elevation)
      local s = S.cam.distance * 0.0015
      local rx, ry = math.cos(az), math.sin(az)
      local ux, uy, uz = -math.sin(el) * math.sin(az), math.sin(el) * math.cos(az), math.cos(el)
      local t = S.cam.target
      t[1] = t[1] - s * (e.dx * rx - e.dy * ux)
      t[2] = t[2] - s * (e.dx * ry - e.dy * uy)
      t[3] = t[3] + s * e.dy * uz
    end
  elseif e.type == "mouse_button" then
    st.mouse.x, st.mouse.y = e.x, e.y
    local name = e.button == 1 and "left" or e.button == 3 and "right" or "middle"
    st.mouse[name] = e.down
    st.mouse.down = st.mouse.left
    if e.down then
      if S.uictx and S.uictx.wants_mouse_at and S.uictx.wants_mouse_at(e.x, e.y) then return end
      if e.button == 1 then
        if not start_grab(e.x, e.y) then drag = "orbit" end
      else
        drag = "pan"
      end
    else
      if grab then
        S.world:grab(nil)
        grab = nil
      end
      drag = nil
    end
  elseif e.type == "wheel" then
    S.cam.distance = math.max(0.05, S.cam.distance * (0.9 ^ e.dy))
  elseif e.type == "axis" then
    st.axes[e.index] = e.value
  elseif e.type == "note" then
    toast(e.text, "info")
  elseif e.type == "device" then
    input._device_event(e.down and e.text or nil)
  end
end

----------------------------------------------------------------------------------------------------
-- the frame

local function progress(final)
  if not S.opts.progress then return end
  local now = C.loom_clock()
  if not final and S.last_progress and now - S.last_progress < 0.25 then return end
  S.last_progress = now
  local wall = now - S.start_wall
  local rate = wall > 0 and S.steps_done / wall or 0
  local total = S.opts.time and ("/ %.2f "):format(S.opts.time) or ""
  io.stderr:write(("\r  t = %.2f %ss   %d steps/s   "):format(S.world.time, total, rate))
  S.progress_shown = true
  if final then
    io.stderr:write("\n")
    S.progress_shown = false
  end
end

local function finished()
  local o, W = S.opts, S.world
  if o.steps and S.steps_done >= o.steps then return true end
  if o.time and W.time >= o.time - 0.5 * S.dt then return true end
  return false
end

-- Frame k shows the state after k × every steps: frame 0 is the initial state. An output that
-- stops working (disk full, directory removed) is reported once and switched off.
local function output_frame()
  local o = S.opts
  if (o.frames or o.export or S.video) and S.steps_done % S.every == 0 then
    if S.video and S.canvas ~= nil then
      render()
      local w, h = C.loom_canvas_width(S.canvas), C.loom_canvas_height(S.canvas)
      local ok = S.video:write(ffi.string(C.loom_canvas_pixels(S.canvas), w * h * 4))
      if not ok then
        App.notify("--video: ffmpeg stopped taking frames (see its message above); no more are written", "error")
        pcall(S.video.close, S.video)
        S.video = nil
      end
    end
    if o.frames and S.canvas ~= nil and not S.frames_failed then
      if not S.video then render() end
      local path = ("%s/frame_%05d.png"):format(o.frames, S.frame_index)
      if C.loom_canvas_write_png(S.canvas, path) ~= 0 then
        S.frames_failed = true
        App.notify("--frames: " .. ffi.string(C.loom_last_error()) .. "; no more frames are written", "error")
      end
    end
    if o.export and not S.export_failed then
      local ok, err = export_frame(o.export, S.frame_index)
      if not ok then
        S.export_failed = true
        App.notify("--export: " .. tostring(err) .. "; no more meshes are written", "error")
      end
    end
    S.frame_index = S.frame_index + 1
  end
end

-- Advances and draws one frame. wall_dt: seconds since the last frame; events: array of input
-- events. Returns "run" or "done".
function App.frame(wall_dt, events)
  if events then for i = 1, #events do handle_event(events[i]) end end
  if not S.started then
    S.started = true
    if S.steps_done == 0 and S.mode ~= "window" then
      sample_ui()
      output_frame()
    end
  end
  if grab then S.world:grab(grab.body, grab.vertex, grab.target, 8) end
  S.grab_state = grab and {body = grab.body, vertex = grab.vertex, target = grab.target, omega = 8} or nil
  -- tilt (004's glove tilt sensors): gamepad axes 6 and 7 turn the view, up to 90 degrees a second
  local axes = input._state.axes
  if input._state.device and S.cam and (axes[6] or axes[7]) then
    local dtw = math.min(wall_dt or 0, 0.1)
    local function dz(a) return a and math.abs(a) > 0.15 and a or 0 end
    S.cam.azimuth = S.cam.azimuth + 90 * dz(axes[6]) * dtw
    S.cam.elevation = math.max(-89, math.min(89, S.cam.elevation - 90 * dz(axes[7]) * dtw))
  end

  local realtime = S.mode == "window" or S.opts.realtime
  if realtime then
    if not S.paused then
      S.acc = S.acc + math.min(wall_dt or 0, 0.1)
      local t0 = C.loom_clock()
      while S.acc >= S.dt do
        if S.mode ~= "window" and finished() then break end
        step_world(1)
        if S.mode ~= "window" then output_frame() end
        S.acc = S.acc - S.dt
        if C.loom_clock() - t0 > (S.opts.budget or 0.05) then
          S.acc = 0 -- cannot keep up: run slower than real time rather than spiral
          break
        end
      end
    end
  else
    -- batch: as fast as possible, in chunks of about 50 ms so the host stays responsive
    local t0 = C.loom_clock()
    repeat
      if finished() then break end
      step_world(1)
      output_frame()
    until C.loom_clock() - t0 > 0.05
  end
  local now = C.loom_clock()
  if now - S.rate_t > 0.5 then
    S.rate = S.rate_steps / (now - S.rate_t)
    S.rate_steps, S.rate_t = 0, now
  end
  if S.mode == "window" then
    render()
    if S.recording then
      local path = ("%s/frame_%05d.png"):format(S.rec_dir, S.rec_index)
      if C.loom_canvas_write_png(S.canvas, path) ~= 0 then
        S.recording = false
        App.notify(("recording stopped after %d frames: %s"):format(S.rec_index, ffi.string(C.loom_last_error())), "error")
      else
        S.rec_index = S.rec_index + 1
      end
    end
    return "run"
  end
  progress(false)
  if finished() then
    progress(true)
    return "done"
  end
  return "run"
end

function App.time() return S.world and S.world.time or 0 end
function App.paused() return S.paused == true end

-- One line for the end of a headless run.
function App.summary()
  local wall = C.loom_clock() - S.start_wall
  local rate = wall > 0 and S.steps_done / wall or 0
  return ("%s: %d steps, %.3f s simulated in %.2f s wall (%.0f steps/s)"):format(
    S.opts.scene, S.steps_done, S.world.time, wall, rate)
end

-- --video FILE: frames piped to ffmpeg (H.264 in an MP4, the scene's frame rate: one frame every
-- `every` steps); after a hot reload the new version's frames go to FILE-2.mp4, -3, ... (the encoder
-- of the previous version has finished its file). Returns a message when it cannot start.
function App.open_video(path, carry)
  if S.mode == "window" then return "--video works with --headless (the frames come at the scene's rate, not the screen's)" end
  local found = os.execute("command -v ffmpeg >/dev/null 2>&1")
  if found ~= 0 and found ~= true then
    return "--video needs ffmpeg, which is not installed (Debian: apt-get install ffmpeg, or make deps-video); " ..
      "--frames DIR writes PNG frames without it"
  end
  if carry then
    S.video_part = (S.video_part or 1) + 1
    path = path:gsub("(%.%w+)$", "-" .. S.video_part .. "%1")
  end
  local w, h = C.loom_canvas_width(S.canvas), C.loom_canvas_height(S.canvas)
  local fps = 1 / (S.every * S.dt)
  local cmd = ("ffmpeg -y -loglevel error -f rawvideo -pix_fmt rgba -s %dx%d -r %.9g -i - " ..
    "-vf 'scale=trunc(iw/2)*2:trunc(ih/2)*2' -c:v libx264 -pix_fmt yuv420p %q"):format(w, h, fps, path)
  local p = io.popen(cmd, "w")
  if not p then return "--video: cannot start ffmpeg" end
  S.video = p
  S.video_path = path
end

function App.close()
  if S.journal then
    jwrite("hash", S.world:hash())
    S.journal:close()
    S.journal = nil
  end
  if S.video then S.video:close() S.video = nil end
  if S.stats_file then S.stats_file:close() S.stats_file = nil end
  for _, tr in ipairs(S.tracks or {}) do tr.file:close() end
  S.tracks = nil
end

return App
