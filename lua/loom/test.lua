-- loom.test — a small busted-style test runner: describe/it blocks, assert.equal, is_true,
-- is_false, near, error, not_nil. `loom test` runs each file in a fresh Lua state.
local caller = require "loom.caller"

local M = {}

-- wall time (tests that run subprocesses spend little CPU time of their own)
local ok_ffi, C = pcall(function() return require("loom.lib") end)
local clock = ok_ffi and function() return C.loom_clock() end or os.clock

-- The shortest decimal that reads back as the same number (0.865, not 0.86499999999999999), so
-- a message shows the value the test wrote.
local function number_text(x)
  for digits = 6, 17 do
    local s = ("%." .. digits .. "g"):format(x)
    if tonumber(s) == x then return s end
  end
  return tostring(x)
end

local function describe_value(v)
  if type(v) == "string" then return ("%q"):format(v) end
  if type(v) == "number" then return number_text(v) end
  return tostring(v)
end

local AssertionFailed = {}

local function fail(msg, level)
  error(setmetatable({msg = msg}, AssertionFailed), (level or 1) + 2)
end

local assert_mt = {}
local A = setmetatable({}, assert_mt)

-- assert(v, msg) still works like Lua's
assert_mt.__call = function(_, v, msg, ...)
  if not v then fail(msg or "assertion failed!") end
  return v, msg, ...
end

function A.equal(expected, actual, msg)
  if expected ~= actual then
    fail(("%sexpected %s, got %s"):format(msg and msg .. ": " or "", describe_value(expected), describe_value(actual)))
  end
end
A.equals = A.equal
A.are_equal = A.equal

function A.not_equal(a, b, msg)
  if a == b then fail(("%sexpected values to differ, both are %s"):format(msg and msg .. ": " or "", describe_value(a))) end
end

function A.is_true(v, msg)
  if v ~= true then fail(msg or ("expected true, got " .. describe_value(v))) end
end

function A.is_false(v, msg)
  if v ~= false then fail(msg or ("expected false, got " .. describe_value(v))) end
end

function A.truthy(v, msg)
  if not v then fail(msg or ("expected a true value, got " .. describe_value(v))) end
end

function A.is_nil(v, msg)
  if v ~= nil then fail(msg or ("expected nil, got " .. describe_value(v))) end
end

function A.not_nil(v, msg)
  if v == nil then fail(msg or "expected a value, got nil") end
end

-- assert.near(actual, expected, tol): |actual - expected| <= tol
function A.near(actual, expected, tol, msg)
  if type(actual) ~= "number" or type(expected) ~= "number" or type(tol) ~= "number" then
    fail(("assert.near(actual, expected, tolerance) needs three numbers, got %s, %s, %s"):format(
      describe_value(actual), describe_value(expected), describe_value(tol)))
  end
  if not (math.abs(actual - expected) <= tol) then
    fail(("%sexpected %s ± %s, got %s (off by %.3g)"):format(msg and msg .. ": " or "", number_text(expected),
      number_text(tol), number_text(actual), math.abs(actual - expected)))
  end
end

-- assert.error(fn [, pattern]): fn must raise an error whose message contains pattern (plain text)
function A.error(fn, pattern, msg)
  local ok, err = pcall(fn)
  if ok then fail(msg or "expected an error, none was raised") end
  if pattern then
    local text = type(err) == "table" and tostring(err.msg) or tostring(err)
    if not text:find(pattern, 1, true) then
      fail(("%serror %q does not contain %q"):format(msg and msg .. ": " or "", text, pattern))
    end
  end
  return err
end
A.has_error = A.error
A.errors = A.error

-- assert.matches(pattern, text): text must match the Lua pattern
function A.matches(pattern, text, msg)
  if type(text) ~= "string" or not text:find(pattern) then
    fail(("%s%s does not match %q"):format(msg and msg .. ": " or "", describe_value(text), pattern))
  end
end

function A.less(a, b, msg)
  if not (a < b) then fail(("%sexpected %s < %s"):format(msg and msg .. ": " or "", describe_value(a), describe_value(b))) end
end

M.assert = A

-- An error in a test as the user wants to read it (called in the message handler, with the stack of
-- the error still there): the message at the user's line — not at a line inside Loom — and, when the
-- error went through more than one of the user's functions, those frames only. LOOM_TRACEBACK=1
-- gives Loom's frames too.
local function user_error(e)
  local msg
  if type(e) == "string" then msg = e
  else
    local mt = getmetatable(e)
    msg = (mt and mt.__tostring) and tostring(e) or ("error object is a %s value"):format(type(e))
  end
  local frames = {}
  for level = 3, 200 do
    local i = debug.getinfo(level, "Sln")
    if not i then break end
    if caller.is_user(i) then
      frames[#frames + 1] = ("%s:%d: in %s"):format(i.short_src, i.currentline,
        i.name and ("function '" .. i.name .. "'") or (i.what == "main" and "the main chunk" or "a function"))
    end
  end
  msg = caller.relocate(msg)
  if #frames > 1 then
    msg = msg .. "\nyour code (LOOM_TRACEBACK=1 for every frame):\n\t" .. table.concat(frames, "\n\t")
  end
  return msg
end

-- Runs one test file; prints a line per test; returns passed, failed.
function M.run_file(path)
  local tests = {}
  local prefix = {}
  local env = setmetatable({}, {__index = _G})
  local function describe(name, fn)
    prefix[#prefix + 1] = tostring(name)
    fn()
    prefix[#prefix] = nil
  end
  local function it(name, fn)
    tests[#tests + 1] = {name = table.concat(prefix, " / ") .. (#prefix > 0 and " / " or "") .. tostring(name), fn = fn}
  end
  env.describe, env.it, env.assert = describe, it, A
  env.pending = function() end
  local chunk, err = loadfile(path)
  if not chunk then
    io.stderr:write("FAIL ", path, ": ", tostring(err), "\n")
    return 0, 1
  end
  setfenv(chunk, env)
  local ok, lerr = pcall(chunk)
  if not ok then
    io.stderr:write("FAIL ", path, ": ", tostring(lerr), "\n")
    return 0, 1
  end
  local passed, failed = 0, 0
  for _, t in ipairs(tests) do
    local t0 = clock()
    local tok, terr = xpcall(t.fn, function(e)
      if getmetatable(e) == AssertionFailed then
        local info = debug.getinfo(3, "Sl")
        -- find the test file's line that made the failing assertion
        for level = 2, 20 do
          local i = debug.getinfo(level, "Sl")
          if not i then break end
          if i.short_src and i.short_src:find(path:match("[^/]+$"), 1, true) then info = i break end
        end
        return (info and (info.short_src .. ":" .. info.currentline .. ": ") or "") .. e.msg
      end
      if os.getenv("LOOM_TRACEBACK") then return debug.traceback(tostring(e), 2) end
      return user_error(e)
    end)
    local dt = clock() - t0
    if tok then
      passed = passed + 1
      io.stdout:write(("ok   %s: %s (%.2f s)\n"):format(path, t.name, dt))
    else
      failed = failed + 1
      io.stdout:write(("FAIL %s: %s\n     %s\n"):format(path, t.name, tostring(terr):gsub("\n", "\n     ")))
    end
    io.stdout:flush()
    collectgarbage()
  end
  return passed, failed
end

return M
