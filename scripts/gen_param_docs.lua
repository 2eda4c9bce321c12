-- Writes the parameter tables of docs/api.md from the kernel's parameter tables (the blocks
-- between "<!-- params KIND -->" and "<!-- /params -->"). With --check it only compares and exits
-- 1 when the docs are out of date.   build/loom exec scripts/gen_param_docs.lua [--check]
local params = require "loom.params"
local check = arg and arg[1] == "--check"
local path = "docs/api.md"
local f = assert(io.open(path))
local text = f:read("*a")
f:close()
local count = 0
local new = text:gsub("(<!%-%- params (%a+) %-%->\n)(.-)(<!%-%- /params %-%->)", function(open, kind, _, close)
  local id = params.kinds[kind]
  if not id then error("docs/api.md: unknown kind '" .. kind .. "' in a params block") end
  count = count + 1
  return open .. params.markdown(id) .. "\n" .. close
end)
if count == 0 then
  io.stderr:write("gen_param_docs: no <!-- params KIND --> blocks in docs/api.md\n")
  os.exit(1)
end
if check then
  if new ~= text then
    io.stderr:write("docs/api.md: parameter tables are out of date; run build/loom exec scripts/gen_param_docs.lua\n")
    os.exit(1)
  end
  print("parameter tables in sync: docs/api.md")
else
  local out = assert(io.open(path, "w"))
  out:write(new)
  out:close()
  print(("docs/api.md: %d parameter tables written"):format(count))
end
