-- loom.sweep — `loom sweep`: a scene run over the product of parameter lists and seeds, each job a
-- headless run in its own process (`loom sweep --run-job DIR`), on existing engines: a local pool
-- (xargs -P), GNU parallel, or a Slurm job array. Results: one folder per job (result, stats CSV,
-- metrics CSV, final checkpoint, optional frames) and a merged results.csv / results.jsonl.
-- Resumable: a job whose result says ok for the same parameters, seed and scene hash is not run again.
local C = require "loom.lib"
local util = require "loom.util"
local host = require "loom.host"

local M = {}

local function fail(fmt, ...) error(("loom sweep: " .. fmt):format(...), 0) end

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, text)
  local f, err = io.open(path, "wb")
  if not f then fail("cannot write '%s': %s", path, tostring(err)) end
  f:write(text)
  f:close()
end

local exists = require("loom.caller").exists

local function shq(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- FNV-1a (32 bit) of a string, as 8 hex digits
local function fnv(s)
  local h = 2166136261
  for i = 1, #s do
    h = bit.bxor(h, s:byte(i))
    h = bit.tobit(h * 16777619 % 4294967296)
  end
  return bit.tohex(h)
end
M.fnv = fnv

local function sleep(s) host.sleep(s) end

----------------------------------------------------------------------------------------------------
-- JSON and CSV

local function json_value(v)
  local t = type(v)
  if t == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return "null" end
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%d"):format(v) end
    return ("%.17g"):format(v)
  elseif t == "boolean" then return tostring(v)
  elseif v == nil then return "null" end
  return '"' .. tostring(v):gsub('[%c"\\]', function(c)
    return ({['"'] = '\\"', ['\\'] = '\\\\', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t'})[c] or ("\\u%04x"):format(c:byte())
  end) .. '"'
end

local function json_object(keys, row)
  local out = {}
  for _, k in ipairs(keys) do
    if row[k] ~= nil then out[#out + 1] = json_value(k) .. ": " .. json_value(row[k]) end
  end
  return "{" .. table.concat(out, ", ") .. "}"
end

local function csv_cell(v)
  if v == nil then return "" end
  if type(v) == "number" then
    if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return ("%d"):format(v) end
    return ("%.17g"):format(v)
  end
  local s = tostring(v)
  if s:find('[,"\n\r]') then s = '"' .. s:gsub('"', '""') .. '"' end
  return s
end

----------------------------------------------------------------------------------------------------
-- the jobs

-- "1..10", "1,4,9" or "7" → list of integer seeds
local function parse_seeds(s)
  local a, b = tostring(s):match("^%s*(%-?%d+)%s*%.%.%s*(%-?%d+)%s*$")
  if a then
    a, b = tonumber(a), tonumber(b)
    if b < a then fail("--seeds %s is an empty range", s) end
    if b - a >= 1000000 then fail("--seeds %s: more than a million seeds", s) end
    local out = {}
    for k = a, b do out[#out + 1] = k end
    return out
  end
  local out = {}
  for item in (tostring(s) .. ","):gmatch("([^,]*),") do
    item = item:match("^%s*(.-)%s*$")
    local n = tonumber(item)
    if not n or n ~= math.floor(n) then fail("--seeds: %q is not an integer (use A..B or a,b,c)", item) end
    out[#out + 1] = n
  end
  if #out == 0 then fail("--seeds is empty") end
  return out
end

-- the jobs of the product: {params = {name = value (string from the command line or a scene value)}, seed}
local function expand(names, lists, seeds)
  local jobs = {{}}
  for _, name in ipairs(names) do
    local nxt = {}
    for _, base in ipairs(jobs) do
      for _, v in ipairs(lists[name]) do
        local p = util.copy(base)
        p[name] = v
        nxt[#nxt + 1] = p
      end
    end
    jobs = nxt
  end
  local out = {}
  for _, p in ipairs(jobs) do
    for _, s in ipairs(seeds) do out[#out + 1] = {params = p, seed = s} end
  end
  return out
end

-- A job's folder name: from its parameters and seed (the same job keeps its folder when the lists
-- around it change, so a widened sweep resumes).
local function job_key(params, seed)
  return "job-" .. fnv(util.encode(params) .. "\nseed=" .. tostring(seed))
end

----------------------------------------------------------------------------------------------------
-- one job (`loom sweep --run-job DIR`): runs in its own process

function M.run_job(dir)
  local spec = util.decode(read_file(dir .. "/job.txt") or "")
  if not spec.scene then
    io.stderr:write(("loom sweep: %s/job.txt is missing or malformed\n"):format(dir))
    return 1
  end
  local loom = require "loom"
  local params = {}
  for k, v in pairs(spec) do
    local name = k:match("^p%.(.+)$")
    if name then params[name] = v end
  end
  local seed = spec.seed
  local result = {job = spec.key, seed = seed, scene_hash = spec.scene_hash, status = "ok"}
  for k, v in pairs(params) do result["p." .. k] = v end
  local t0 = C.loom_clock()
  local steps_done = 0
  local ok, err = pcall(function()
    local sc = loom.load_scene(spec.scene)
    local p = util.copy(params)
    if sc._defaults.seed ~= nil then p.seed = seed end
    loom.seed = seed
    local W = sc:instantiate(p)
    local every = spec.every or 0
    local total = spec.steps or math.floor((spec.time or 1) / W.dt + 0.5)
    if every <= 0 then every = math.max(1, math.floor(total / 100)) end
    local stats = assert(io.open(dir .. "/stats.csv", "wb"))
    stats:write("t,steps,step_ms,contacts,substeps,iterations,frozen,interpenetrations_checked\n")
    local metrics_file = nil
    local function sample()
      local s = W:stats()
      stats:write(("%.9g,%d,%.6g,%d,%d,%d,%d,0\n"):format(W.time, s.steps, s.step_ms or 0, s.contacts, s.substeps,
        s.iterations, s.frozen))
      if sc.metrics then
        local m = sc.metrics(W)
        if type(m) ~= "table" then error("scene.metrics must return a table of numbers", 0) end
        local keys = {}
        for k, v in pairs(m) do if type(v) == "number" then keys[#keys + 1] = k end end
        table.sort(keys)
        if not metrics_file then
          metrics_file = assert(io.open(dir .. "/metrics.csv", "wb"))
          metrics_file:write("t," .. table.concat(keys, ",") .. "\n")
        end
        local row = {("%.9g"):format(W.time)}
        for _, k in ipairs(keys) do row[#row + 1] = csv_cell(m[k]) end
        metrics_file:write(table.concat(row, ",") .. "\n")
      end
    end
    local view, canvas, cam
    if spec.frames then
      view = require "loom.view"
      canvas = C.loom_canvas_create(640, 400)
      local c = sc.camera or {}
      cam = c.target and view.camera(c) or view.fit(W)
      host.mkdir_p(dir .. "/frames")
    end
    local frame = 0
    local function shot()
      if not canvas then return end
      view.draw(canvas, W, cam, {})
      C.loom_canvas_write_png(canvas, ("%s/frames/frame_%05d.png"):format(dir, frame))
      frame = frame + 1
    end
    sample()
    shot()
    while steps_done < total do
      local n = math.min(every, total - steps_done)
      W:step(n)
      steps_done = steps_done + n
      sample()
      shot()
    end
    stats:close()
    if metrics_file then metrics_file:close() end
    if canvas then C.loom_canvas_destroy(canvas) end
    W:save(dir .. "/final.ckpt")
    result.hash = W:hash()
    result.sim_time = W.time
    if sc.metrics then
      for k, v in pairs(sc.metrics(W)) do if type(v) == "number" then result["m." .. k] = v end end
    end
    local errs = W:errors()
    if type(errs) == "table" and #errs > 0 then
      result.status = "error"
      result.error = tostring(errs[1])
    end
  end)
  local wall = C.loom_clock() - t0
  if not ok then
    result.status = "error"
    result.error = tostring(err):gsub("\n.*", "")
  end
  result.wall_s = wall
  result.steps = steps_done
  result.steps_per_s = wall > 0 and steps_done / wall or 0
  write_file(dir .. "/result.txt", util.encode(result))
  return 0
end

----------------------------------------------------------------------------------------------------
-- merging

local function merge(out)
  local plan = util.decode(read_file(out .. "/sweep.txt") or "")
  if not plan.count then fail("%s is not a sweep folder (no sweep.txt)", out) end
  local rows, pnames, mnames, seen_p, seen_m = {}, {}, {}, {}, {}
  local failed, missing = {}, 0
  for i = 1, plan.count do
    local key = plan["job." .. i]
    local r = util.decode(read_file(out .. "/jobs/" .. key .. "/result.txt") or "")
    if not r.status then
      missing = missing + 1
      r = util.decode(read_file(out .. "/jobs/" .. key .. "/job.txt") or "")
      r.status, r.job = "missing", key
    end
    r.index = i
    for k in pairs(r) do
      local pn, mn = k:match("^p%.(.+)$"), k:match("^m%.(.+)$")
      if pn and not seen_p[pn] then seen_p[pn] = true pnames[#pnames + 1] = pn end
      if mn and not seen_m[mn] then seen_m[mn] = true mnames[#mnames + 1] = mn end
    end
    if r.status == "error" then failed[#failed + 1] = r end
    rows[#rows + 1] = r
  end
  table.sort(mnames)
  -- parameters in the sweep's order
  local porder = {}
  for k = 1, plan.nparams or 0 do porder[#porder + 1] = plan["param." .. k] end
  for _, n in ipairs(pnames) do
    local found = false
    for _, q in ipairs(porder) do if q == n then found = true end end
    if not found then porder[#porder + 1] = n end
  end
  local cols = {"job"}
  for _, n in ipairs(porder) do cols[#cols + 1] = n end
  cols[#cols + 1] = "seed"
  for _, n in ipairs(mnames) do cols[#cols + 1] = n end
  for _, n in ipairs {"wall_s", "steps", "steps_per_s", "hash", "status", "error"} do cols[#cols + 1] = n end
  local csv, jsonl = {table.concat(cols, ",")}, {}
  for _, r in ipairs(rows) do
    local flat = {job = r.job, seed = r.seed, wall_s = r.wall_s, steps = r.steps, steps_per_s = r.steps_per_s,
                  hash = r.hash, status = r.status, error = r.error}
    for _, n in ipairs(porder) do flat[n] = r["p." .. n] end
    for _, n in ipairs(mnames) do flat[n] = r["m." .. n] end
    local cells = {}
    for k, c in ipairs(cols) do cells[k] = csv_cell(flat[c]) end
    csv[#csv + 1] = table.concat(cells, ",")
    jsonl[#jsonl + 1] = json_object(cols, flat)
  end
  write_file(out .. "/results.csv", table.concat(csv, "\n") .. "\n")
  write_file(out .. "/results.jsonl", table.concat(jsonl, "\n") .. "\n")
  return rows, failed, missing
end

local function report(out, rows, failed, missing)
  local ok = #rows - #failed - missing
  print(("loom sweep: %d jobs: %d ok, %d failed%s; %s/results.csv, %s/results.jsonl"):format(#rows, ok, #failed,
    missing > 0 and (", %d not run"):format(missing) or "", out, out))
  for _, r in ipairs(failed) do
    print(("  failed %s (seed %s): %s"):format(r.job, tostring(r.seed), tostring(r.error)))
  end
  return (#failed > 0 or missing > 0) and 1 or 0
end

----------------------------------------------------------------------------------------------------
-- back ends

local function count_done(out, pending)
  local done, failed = 0, 0
  for _, key in ipairs(pending) do
    local r = read_file(out .. "/jobs/" .. key .. "/result.txt")
    if r then
      done = done + 1
      if util.decode(r).status ~= "ok" then failed = failed + 1 end
    end
  end
  return done, failed
end

-- runs cmd in the background and shows progress until its marker file appears
local function run_with_progress(out, pending, cmd, label)
  local marker = out .. "/.backend_done"
  os.remove(marker)
  local logf = out .. "/backend.log"
  os.execute(("{ (%s) > %s 2>&1; echo $? > %s.tmp; mv %s.tmp %s; } &"):format(cmd, shq(logf), shq(marker), shq(marker),
    shq(marker)))
  local t0, last = C.loom_clock(), -1
  local tty = host.isatty and host.isatty(2)
  while true do
    local finished = exists(marker)
    local done, failed = count_done(out, pending)
    if done ~= last or finished then
      local rate = done / math.max(1e-9, C.loom_clock() - t0)
      io.stderr:write(("%s  %s: %d/%d jobs done, %d failed, %.2f jobs/s   %s"):format(tty and "\r" or "", label, done,
        #pending, failed, rate, tty and "" or "\n"))
      last = done
    end
    if finished then break end
    sleep(0.2)
  end
  if tty then io.stderr:write("\n") end
  local code = tonumber((read_file(marker) or ""):match("%d+")) or 0
  os.remove(marker)
  return code, read_file(logf) or ""
end

local function which(prog)
  local p = io.popen("command -v " .. prog .. " 2>/dev/null")
  local s = p:read("*l")
  p:close()
  return s and s ~= "" and s or nil
end

local function ncores()
  local p = io.popen("nproc 2>/dev/null")
  local n = tonumber(p and p:read("*l") or "")
  if p then p:close() end
  return n or 1
end

local function backend_local(out, pending, o)
  local jobs = o.jobs or ncores()
  local list = out .. "/pending.txt"
  local cmd = ("xargs -P %d -I{} %s sweep --run-job %s/jobs/{} < %s"):format(jobs, shq(host.executable), shq(out),
    shq(list))
  return run_with_progress(out, pending, cmd, ("local, %d processes"):format(jobs))
end

local function backend_parallel(out, pending, o)
  if not which("parallel") then
    fail("GNU parallel is not installed (Debian: apt-get install parallel); or use --on local")
  end
  local jobs = o.jobs or ncores()
  local extra = o.sshloginfile and (" --sshloginfile " .. shq(o.sshloginfile)) or ""
  local cmd = ("parallel --will-cite --halt never --jobs %d%s %s sweep --run-job %s/jobs/{} :::: %s"):format(jobs, extra,
    shq(host.executable), shq(out), shq(out .. "/pending.txt"))
  return run_with_progress(out, pending, cmd, ("GNU parallel, %d jobs at a time"):format(jobs))
end

local function sbatch_script(out, n, o)
  local lines = {
    "#!/bin/sh",
    "# written by loom sweep: one Slurm array task per job listed in pending.txt",
    "#SBATCH --job-name=loom-sweep",
    ("#SBATCH --array=0-%d%s"):format(n - 1, o.max_running and ("%%%d"):format(o.max_running) or ""),
    ("#SBATCH --output=%s/slurm/%%A_%%a.out"):format(out),
    "#SBATCH --ntasks=1",
    "#SBATCH --cpus-per-task=1",
  }
  if o.time_limit then lines[#lines + 1] = "#SBATCH --time=" .. o.time_limit end
  if o.mem then lines[#lines + 1] = "#SBATCH --mem=" .. o.mem end
  if o.partition then lines[#lines + 1] = "#SBATCH --partition=" .. o.partition end
  lines[#lines + 1] = ('JOB=$(sed -n "$((SLURM_ARRAY_TASK_ID + 1))p" %s)'):format(shq(out .. "/pending.txt"))
  lines[#lines + 1] = ('exec %s sweep --run-job %s/jobs/"$JOB"'):format(shq(host.executable), shq(out))
  return table.concat(lines, "\n") .. "\n"
end

local function backend_slurm(out, pending, o)
  local script = out .. "/sweep.sbatch"
  host.mkdir_p(out .. "/slurm")
  write_file(script, sbatch_script(out, #pending, o))
  if o.dry_run then
    print(("loom sweep: wrote %s (%d array tasks); submit it with: sbatch %s"):format(script, #pending, script))
    return nil
  end
  if not which("sbatch") then
    fail("Slurm is not installed or not on PATH (no sbatch); scripts/slurm-local.sh start sets up a single-node " ..
      "Slurm, --dry-run only writes %s, or use --on local", script)
  end
  local p = io.popen(("sbatch --parsable %s 2>&1"):format(shq(script)))
  local text = p:read("*a")
  local okc = p:close()
  local id = text:match("^(%d+)")
  if not okc or not id then fail("sbatch refused %s: %s", script, (text:gsub("%s+$", ""))) end
  write_file(out .. "/slurm_job.txt", id .. "\n")
  if o.detach then
    print(("loom sweep: submitted Slurm array %s (%d tasks); when it ends: loom sweep --merge %s"):format(id, #pending, out))
    return nil
  end
  -- wait: until every task left the queue
  local cmd = ("while squeue -h -j %s 2>/dev/null | grep -q .; do sleep 1; done"):format(id)
  return run_with_progress(out, pending, cmd, "Slurm array " .. id)
end

----------------------------------------------------------------------------------------------------
-- the command

local usage = [[
usage: loom sweep SCENE.lua [options]     run SCENE over the product of parameter lists and seeds
  --param name=a,b,c      values of a declared scene parameter (repeatable)
  --seeds A..B | a,b,c    seeds (the scene's 'seed' parameter if it declares one, and loom.seed)
  --time T | --steps N    length of each run (default: the scene's sweep.time, else 1 s)
  --every N               stats and metrics every N steps (default: 100 samples a run)
  --frames                PNG frames in each job's folder (every N steps)
  --out DIR               results folder (default: sweeps/SCENE)
  --on local|parallel|slurm   the engine (default local: a pool of --jobs processes)
  --jobs N                processes at a time (local, parallel; default: the cores)
  --sshloginfile FILE     parallel: run on the machines it lists (shared file system)
  --time-limit T, --mem M, --max-running K, --partition P   slurm: limits of each array task
  --dry-run               slurm: write the sbatch script only
  --detach                slurm: return once submitted (then: loom sweep --merge DIR)
  --fresh                 run every job again (default: jobs already done are skipped)
loom sweep --merge DIR    merge a sweep's results (after a detached Slurm array)
]]

local function parse(args)
  local o = {params = {}, order = {}}
  local i = 1
  local function val(name)
    i = i + 1
    if args[i] == nil then fail("%s needs a value", name) end
    return args[i]
  end
  while i <= #args do
    local a = args[i]
    if a == "--param" then
      local v = val(a)
      local name, list = v:match("^([%w_]+)=(.*)$")
      if not name then fail("--param %s: expected name=a,b,c", v) end
      local items = {}
      for item in (list .. ","):gmatch("([^,]*),") do
        item = item:match("^%s*(.-)%s*$")
        if item ~= "" then items[#items + 1] = item end
      end
      if #items == 0 then fail("--param %s has no values (an empty range)", name) end
      if not o.params[name] then o.order[#o.order + 1] = name end
      o.params[name] = items
    elseif a == "--seeds" then o.seeds = parse_seeds(val(a))
    elseif a == "--time" then o.time = tonumber(val(a)) or fail("--time needs seconds")
    elseif a == "--steps" then o.steps = tonumber(val(a)) or fail("--steps needs a number")
    elseif a == "--every" then o.every = tonumber(val(a)) or fail("--every needs a number")
    elseif a == "--frames" then o.frames = true
    elseif a == "--out" then o.out = val(a)
    elseif a == "--on" then
      o.on = val(a)
      if o.on ~= "local" and o.on ~= "parallel" and o.on ~= "slurm" then fail("--on must be local, parallel or slurm, got %q", o.on) end
    elseif a == "--jobs" then
      o.jobs = tonumber(val(a))
      if not o.jobs or o.jobs < 1 or o.jobs ~= math.floor(o.jobs) then fail("--jobs needs a whole number >= 1") end
    elseif a == "--sshloginfile" then o.sshloginfile = val(a)
    elseif a == "--time-limit" then o.time_limit = val(a)
    elseif a == "--mem" then o.mem = val(a)
    elseif a == "--max-running" then
      o.max_running = tonumber(val(a))
      if not o.max_running or o.max_running < 1 then fail("--max-running needs a whole number >= 1") end
    elseif a == "--partition" then o.partition = val(a)
    elseif a == "--dry-run" then o.dry_run = true
    elseif a == "--detach" then o.detach = true
    elseif a == "--fresh" then o.fresh = true
    elseif a == "--merge" then o.merge = val(a)
    elseif a == "--run-job" then o.run_job = val(a)
    elseif a == "--help" or a == "-h" then o.help = true
    elseif a:sub(1, 2) == "--" then fail("unknown option '%s' (see loom sweep --help)", a)
    else
      if o.scene then fail("one scene at a time (got %s and %s)", o.scene, a) end
      o.scene = a
    end
    i = i + 1
  end
  return o
end

local function sweep(o)
  local loom = require "loom"
  local path = exists(o.scene) and host.realpath(o.scene)
  if not path then fail("cannot find the scene '%s'", o.scene) end
  local source = read_file(path) or fail("cannot read '%s'", path)
  local sc = loom.load_scene(path)
  -- the scene's own sweep = { name = {...}, seeds = ..., time = ..., every = ... } fills what the
  -- command line does not give
  local decl = rawget(sc, "sweep") or {}
  if type(decl) ~= "table" then fail("%s: scene.sweep must be a table", o.scene) end
  if #o.order == 0 then
    local names = {}
    for k, v in pairs(decl) do
      if k ~= "seeds" and k ~= "time" and k ~= "steps" and k ~= "every" then
        if type(v) ~= "table" or #v == 0 then fail("%s: scene.sweep.%s must be a non-empty list of values", o.scene, k) end
        names[#names + 1] = k
      end
    end
    table.sort(names)
    for _, k in ipairs(names) do
      local items = {}
      for _, v in ipairs(decl[k]) do items[#items + 1] = tostring(v) end
      o.order[#o.order + 1] = k
      o.params[k] = items
    end
  end
  o.seeds = o.seeds or (decl.seeds and parse_seeds(type(decl.seeds) == "table" and table.concat(decl.seeds, ",") or decl.seeds)) or {1}
  o.time = o.time or (not o.steps and decl.time) or nil
  o.steps = o.steps or decl.steps
  o.every = o.every or decl.every
  if not o.time and not o.steps then o.time = 1 end
  -- every parameter must be declared, and every value must fit its type (checked here, once)
  for _, name in ipairs(o.order) do
    if sc._defaults[name] == nil then
      local names = {}
      for n in pairs(sc._defaults) do names[#names + 1] = n end
      table.sort(names)
      fail("%s does not declare a parameter '%s' (it declares: %s)", o.scene, name,
        #names > 0 and table.concat(names, ", ") or "none")
    end
    for k, v in ipairs(o.params[name]) do
      local okp, err = pcall(sc.set_params, sc, {[name] = v})
      if not okp then fail("--param %s=%s: %s", name, v, tostring(err):gsub("^.-: ", "")) end
      o.params[name][k] = sc.params[name] -- as the scene's type: 500 the number, true the boolean
    end
  end
  local out = o.out or ("sweeps/" .. (path:match("([^/]+)%.lua$") or "scene"))
  local okm, merr = host.mkdir_p(out .. "/jobs")
  if not okm then fail("cannot make '%s': %s", out, tostring(merr)) end
  out = host.realpath(out)
  local scene_hash = fnv(source)
  local jobs = expand(o.order, o.params, o.seeds)
  local plan = {count = #jobs, scene = path, scene_hash = scene_hash, nparams = #o.order}
  for k, name in ipairs(o.order) do plan["param." .. k] = name end
  local pending, skipped = {}, 0
  for i, job in ipairs(jobs) do
    local key = job_key(job.params, job.seed)
    plan["job." .. i] = key
    local dir = out .. "/jobs/" .. key
    host.mkdir_p(dir)
    local spec = {key = key, scene = path, scene_hash = scene_hash, seed = job.seed, time = o.time, steps = o.steps,
                  every = o.every, frames = o.frames or nil}
    for k, v in pairs(job.params) do spec["p." .. k] = v end
    local prev = util.decode(read_file(dir .. "/result.txt") or "")
    local same = read_file(dir .. "/job.txt") == util.encode(spec)
    if not o.fresh and same and prev.status == "ok" and prev.scene_hash == scene_hash then
      skipped = skipped + 1
    else
      os.remove(dir .. "/result.txt")
      write_file(dir .. "/job.txt", util.encode(spec))
      pending[#pending + 1] = key
    end
  end
  write_file(out .. "/sweep.txt", util.encode(plan))
  write_file(out .. "/pending.txt", table.concat(pending, "\n") .. (#pending > 0 and "\n" or ""))
  io.stderr:write(("loom sweep: %d jobs (%s x %d seeds), %d to run, %d already done; results in %s\n"):format(#jobs,
    #o.order > 0 and table.concat(o.order, " x ") or "no parameters", #o.seeds, #pending, skipped, out))
  if #pending > 0 then
    local on = o.on or "local"
    local code, log
    if on == "local" then code, log = backend_local(out, pending, o)
    elseif on == "parallel" then code, log = backend_parallel(out, pending, o)
    else code, log = backend_slurm(out, pending, o) end
    if code == nil then return 0 end -- slurm: written or submitted only
    if code ~= 0 and log ~= "" then io.stderr:write(log) end
  end
  return report(out, merge(out))
end

function M.main(args)
  return require("loom.cli").run(function()
    local o = parse(args)
    if o.help then io.write(usage) return 0 end
    if o.run_job then return M.run_job(o.run_job) end
    if o.merge then return report(o.merge, merge(host.realpath(o.merge) or o.merge)) end
    if not o.scene then fail("which scene? (loom sweep SCENE.lua --param name=a,b ...; see --help)") end
    return sweep(o)
  end, 2)
end

M.merge = merge
M.parse_seeds = parse_seeds
M.sbatch_script = sbatch_script
return M
