-- loom.caller — the user's side of a call into Loom: the innermost stack frame that runs a file
-- outside Loom's own modules (a scene, a test, a script). Errors name that frame's file:line, and
-- relative paths given to loaders resolve against that file's directory. Walking the stack instead
-- of counting levels keeps both right through tail calls and Loom's internal helpers.
local M = {}

-- Loom's module directory as it appears in chunk names ("@/…/lua/loom/"), from this file's own.
local own = debug.getinfo(1, "S").source
local loom_prefix = own:match("^(@.*/)[^/]+$") or "@lua/loom/"

local function is_user(info)
  local src = info.source
  return info.what ~= "C" and src ~= nil and src:sub(1, 1) == "@" and src:sub(1, #loom_prefix) ~= loom_prefix
    and info.currentline and info.currentline > 0
end

M.is_user = is_user

-- The debug info of the innermost user frame, or nil when Loom was not called from a user file
-- (command line, host). Every frame of Loom's modules, this one included, is skipped.
function M.frame()
  local level = 2
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then return nil end
    if is_user(info) then return info end
    level = level + 1
  end
end

-- "file:line: " of the user's frame, or "".
function M.where()
  local info = M.frame()
  if not info then return "" end
  return info.short_src .. ":" .. info.currentline .. ": "
end

-- Raises msg at the user's line (the innermost frame outside Loom).
function M.error(msg)
  error(M.where() .. msg, 0)
end

-- True when the message starts with a location inside Loom's modules ("/…/lua/loom/scene.lua:100:").
function M.in_loom(msg)
  local file = type(msg) == "string" and msg:match("^([^\n:]+):%d+: ")
  return file ~= nil and ("@" .. file):sub(1, #loom_prefix) == loom_prefix
end

-- A message handler for xpcall: an error whose message points inside Loom is moved to the user's
-- innermost frame on the stack (which is still there when a handler runs). Other values pass as
-- they are. LOOM_TRACEBACK=1 keeps the message as raised.
local traceback_wanted = os.getenv("LOOM_TRACEBACK") ~= nil
function M.relocate(msg)
  if traceback_wanted or not M.in_loom(msg) then return msg end
  local info = M.frame()
  if not info then return msg end
  return info.short_src .. ":" .. info.currentline .. ": " .. msg:gsub("^[^\n:]+:%d+: ", "")
end

-- true when path can be opened for reading
local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end
M.exists = exists

-- The whole file at path → text, or nil and why not (a directory opens but does not read: "Is a
-- directory").
function M.read_all(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text, rerr = f:read("*a")
  f:close()
  if not text then return nil, ("%s: %s"):format(path, tostring(rerr)) end
  return text
end

-- The lines of a text, as file:lines() gives them (no empty line after a final newline).
function M.lines(text)
  if text ~= "" and text:sub(-1) ~= "\n" then text = text .. "\n" end
  return text:gmatch("([^\n]*)\n")
end

-- A path as the user meant it: absolute paths unchanged; a relative path is taken relative to the
-- directory of the user's file that made the call when the file exists there, else relative to the
-- current directory (as before, so scripts that relied on it keep working).
function M.resolve(path)
  if type(path) ~= "string" or path:sub(1, 1) == "/" then return path end
  local info = M.frame()
  local dir = info and info.source:match("^@(.*/)[^/]*$")
  if dir and dir ~= "./" then
    local candidate = dir .. path
    if exists(candidate) then return candidate end
  end
  return path
end

return M
