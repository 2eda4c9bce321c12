-- loom.cli — what the subcommands written in Lua (sweep, plot, replay) share: options parsed from
-- argv against a table, and a main that turns an error into a message on stderr and a status.
local M = {}

-- options(args, spec, fail) → table: spec[name] = "flag" (true when present) or "value" (the next
-- argument); anything else starting with "--" is an unknown option; the other arguments are
-- collected in order in .rest.
function M.options(args, spec, fail)
  local o, i = {rest = {}}, 1
  while i <= #args do
    local a = args[i]
    local kind = spec[a]
    if kind == "flag" then
      o[a:sub(3)] = true
    elseif kind == "value" then
      i = i + 1
      if args[i] == nil then fail("%s needs a value", a) end
      o[a:sub(3)] = args[i]
    elseif a:sub(1, 2) == "--" then
      fail("unknown option '%s'", a)
    else
      o.rest[#o.rest + 1] = a
    end
    i = i + 1
  end
  return o
end

-- run(fn, status) → fn's status, or `status` after writing the error to stderr
function M.run(fn, status)
  local ok, res = pcall(fn)
  if not ok then
    io.stderr:write(tostring(res), "\n")
    return status
  end
  return res
end

return M
