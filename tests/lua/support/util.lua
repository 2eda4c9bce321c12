-- Helpers for the Lua tests: run the loom executable in a subprocess, temporary files.
local M = {}

local host_ok, host = pcall(require, "loom.host")
M.loom = host_ok and host.executable or "build/loom"
M.sleep = host_ok and host.sleep or function(s) os.execute("sleep " .. s) end

-- Runs a shell command; returns its combined stdout+stderr and exit status.
function M.sh(cmd)
  local p = io.popen("(" .. cmd .. ") 2>&1; echo \"__EXIT:$?\"")
  local out = p:read("*a")
  p:close()
  local body, code = out:match("^(.*)__EXIT:(%d+)%s*$")
  return body or out, tonumber(code)
end

-- Runs `loom ARGS` (a string of already-quoted arguments).
function M.loom_run(args) return M.sh(("%q %s"):format(M.loom, args)) end

-- Temporary directories: made under the system's temporary folder, removed with everything in
-- them when the Lua state closes (the end of `loom test`), so test runs leave nothing behind.
local counter, made = 0, {}
local sweeper = newproxy(true)
getmetatable(sweeper).__gc = function()
  for i = #made, 1, -1 do os.execute(("rm -rf %q"):format(made[i])) end
end
M._sweeper = sweeper

function M.tmpdir()
  counter = counter + 1
  local d = os.tmpname()
  os.remove(d)
  d = d .. "_loom" .. counter
  os.execute(("mkdir -p %q"):format(d))
  made[#made + 1] = d
  return d
end

function M.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- Atomic replace (what editors do), so a watcher never sees a half-written file.
function M.replace(path, text)
  M.write(path .. ".tmp", text)
  assert(os.rename(path .. ".tmp", path))
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- Parses a CSV written by --stats into an array of rows keyed by column name.
function M.csv(path)
  local text = M.read(path)
  if not text then return nil end
  local rows, cols = {}, nil
  for line in text:gmatch("[^\n]+") do
    local fields = {}
    for v in (line .. ","):gmatch("([^,]*),") do fields[#fields + 1] = v end
    if not cols then cols = fields
    else
      local r = {}
      for i, c in ipairs(cols) do r[c] = tonumber(fields[i]) or fields[i] end
      rows[#rows + 1] = r
    end
  end
  return rows
end

-- Current line of the caller (for checking that error messages point at the user's line).
function M.line() return debug.getinfo(2, "l").currentline end

return M
