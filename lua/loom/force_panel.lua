-- loom.force_panel — document 003's force manager as a UI panel written in Lua: the rigid forces
-- in effect (body, kind, interval, vector, point) with a button to remove each, and a line to
-- add one to a chosen dynamic body while the world runs.
--   function scene.ui(ui, world) require("loom.force_panel").draw(ui, world) end
local M = {}

-- What the add line edits, per world (kept between frames).
local forms = setmetatable({}, {__mode = "k"})

local function dynamic_bodies(world)
  local out = {}
  for _, b in ipairs(world:bodies()) do
    if b.kind == "rigid" and b.motion == "dynamic" then out[#out + 1] = b end
  end
  return out
end

function M.draw(ui, world)
  local form = forms[world]
  if not form then
    form = {body = 1, fx = 0, fy = 0, fz = 10, duration = 0.5}
    forms[world] = form
  end
  ui.text("forces (id  body  kind  from..to  vector)")
  for _, f in ipairs(world:rigid_forces()) do
    ui.text(("#%d  %s  %s  %.2f..%s  (%.1f, %.1f, %.1f)%s"):format(f.id, f.body, f.kind, f.from,
      f.to and ("%.2f"):format(f.to) or "inf", f.f[1], f.f[2], f.f[3], f.point and " at a point" or ""))
    if ui.button("remove #" .. f.id) then world:remove_force(f.id) end
  end
  local bodies = dynamic_bodies(world)
  if #bodies == 0 then return end
  if form.body > #bodies then form.body = 1 end
  if ui.button("body: " .. bodies[form.body].name) then form.body = form.body % #bodies + 1 end
  ui.slider("fx (N)", form, "fx", -100, 100)
  ui.slider("fy (N)", form, "fy", -100, 100)
  ui.slider("fz (N)", form, "fz", -100, 100)
  ui.slider("for (s)", form, "duration", 0, 5)
  if ui.button("add force") then
    local t = world.time
    bodies[form.body]:apply_force({form.fx, form.fy, form.fz}, {from = t, to = t + form.duration})
  end
end

return M
