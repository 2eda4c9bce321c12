-- loom.world — worlds and bodies as seen from Lua.
--
-- A world is a Lua table holding the kernel world (freed by the GC) and the Lua-side state that a
-- cdata cannot hold: force fields, trajectory closures, body wrappers. Body wrappers keep the
-- kernel's arrays as plain fields (body.x, body.v, body.f, body.m, body.rest: 0-based
-- bounds-checked views from loom.array, no copies), so a force field's inner loop compiles to
-- direct loads and stores plus two compares per access.
local ffi = require "ffi"
local C = require "loom.lib"
local check = require "loom.check"
local mesh_mod = require "loom.mesh"
local shape_mod = require "loom.shape"
local params_mod = require "loom.params"
local array = require "loom.array"
local select_mod = require "loom.select"
local input_mod = require "loom.input"
local caller = require "loom.caller"
local util = require "loom.util"

-- What Body.pin refused, without where (the caller's check.raise says that): "bad argument #1 to
-- 'pin' (reason)" or "file:line: pin: reason" become "reason".
local function pin_reason(e)
  e = tostring(e)
  local r = e:match("bad argument #1 to 'pin' %((.*)%)$")
  if r then return r end
  return (e:gsub("^[^\n]-:%d+: ", ""):gsub("^pin: ", ""))
end

local M = {}

local function last_error() return ffi.string(C.loom_last_error()) end

-- Where callback errors and kernel messages go. The host replaces these to show them in the window.
M.report = function(msg) io.stderr:write(msg, "\n") end
-- The host sets this to mark time spent in user callbacks (its watchdog aborts endless ones).
M.busy = function(_) end

local World, Body, Group = {}, {}, {}
local WorldMT, BodyMT, GroupMT = {}, {}, {}
M.World, M.Body, M.Group = World, Body, Group

local tmp = ffi.new("loom_vec3[2]")
local tmpq = ffi.new("loom_quat[1]")
local apply_rigid_forces -- (defined with the rigid body methods)

local function is_world(w) return getmetatable(w) == WorldMT end
M.is_world = is_world

----------------------------------------------------------------------------------------------------
-- construction

-- loom.world{dt = 1/240, gravity = {0, 0, -9.81}, wind = {0, 0, 0}, threads = 1 | 2}
-- threads: 2 (the default with two cores or more) splits the implicit cloth's matrix work in two
-- halves, one on a helper thread; the results are bit-identical to threads = 1. A program may set
-- require("loom.world").default_threads for the worlds it makes without the field (loom bench
-- --threads does); the environment variable LOOM_THREADS = 1 or 2 sets it for a whole process
-- (several processes sharing two cores run faster with one thread each: make test does that).
M.default_threads = nil
do
  local env = os.getenv("LOOM_THREADS")
  if env and env ~= "" then
    local t = tonumber(env)
    if t == 1 or t == 2 then M.default_threads = t
    else io.stderr:write(("loom: LOOM_THREADS must be 1 or 2 (got %q); ignored\n"):format(env)) end
  end
end
function M.new(def)
  local d, err = check.fields(def or {}, {
    dt = {"number", default = 1 / 240, min = 0, open_min = true, max = 1},
    gravity = {"vec3", default = {0, 0, -9.81}},
    wind = {"vec3", default = {0, 0, 0}},
    threads = {"number", integer = true, min = 1, max = 2},
  })
  if not d then check.raise("loom.world", err) end
  local wd = ffi.new("loom_world_def")
  C.loom_world_def_default(wd)
  wd.dt = d.dt
  wd.gravity.x, wd.gravity.y, wd.gravity.z = d.gravity[1], d.gravity[2], d.gravity[3]
  wd.wind.x, wd.wind.y, wd.wind.z = d.wind[1], d.wind[2], d.wind[3]
  local ptr = C.loom_world_create(wd)
  if ptr == nil then caller.error("loom.world: " .. last_error()) end
  local threads = d.threads or M.default_threads
  if threads then C.loom_world_set_threads(ptr, threads) end
  local W = {
    _w = ffi.gc(ptr, C.loom_world_destroy),
    _bodies = {},        -- name -> wrapper
    _groups = {},        -- pin groups with trajectories, in creation order
    _kinematic = {},     -- rigid bodies with trajectories
    _fields = {},        -- force fields of a world without a scene
    _disabled = {},      -- callbacks turned off after an error
    _errors = {},        -- callback error messages
    _seen = 0,           -- kernel messages already reported
    _field_names = {},
    _labels = {},
  }
  return setmetatable(W, WorldMT)
end

WorldMT.__index = function(W, k)
  local m = World[k]
  if m ~= nil then return m end
  if k == "time" then return C.loom_world_time(W._w) end
  if k == "dt" then return C.loom_world_dt(W._w) end
  if k == "threads" then return C.loom_world_threads(W._w) end
  if k == "brute_obstacles" then return C.loom_world_brute_obstacles(W._w) ~= 0 end
  if k == "gravity" then
    C.loom_world_gravity(W._w, tmp)
    return {tmp[0].x, tmp[0].y, tmp[0].z}
  end
  if k == "wind" then
    C.loom_world_wind(W._w, tmp)
    return {tmp[0].x, tmp[0].y, tmp[0].z}
  end
  return nil
end

WorldMT.__newindex = function(W, k, v)
  if k == "dt" then
    if not (check.is_finite(v) and v > 0 and v <= 1) then
      caller.error(("bad value for 'dt' (must be a number in (0, 1], got %s)"):format(check.describe(v)))
    end
    C.loom_world_set_dt(W._w, v)
  elseif k == "threads" then
    if v ~= 1 and v ~= 2 then caller.error(("bad value for 'threads' (must be 1 or 2, got %s)"):format(check.describe(v))) end
    C.loom_world_set_threads(W._w, v)
  elseif k == "brute_obstacles" then
    -- a testing aid: mesh obstacles answer the vertex queries by testing every triangle (the
    -- brute-force reference of stats.obstacle_tests), not through their trees
    if type(v) ~= "boolean" then caller.error(("bad value for 'brute_obstacles' (must be a boolean, got %s)"):format(check.describe(v))) end
    C.loom_world_set_brute_obstacles(W._w, v and 1 or 0)
  elseif k == "gravity" or k == "wind" then
    local x, y, z = check.vec3(v, k)
    if not x then caller.error("bad value for '" .. k .. "' (" .. y .. ")") end
    tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
    local rc = k == "gravity" and C.loom_world_set_gravity(W._w, tmp) or C.loom_world_set_wind(W._w, tmp)
    if rc ~= 0 then caller.error("bad value for '" .. k .. "' (" .. last_error():gsub("^[%w_]+: ", "") .. ")") end
  elseif k == "time" then
    caller.error("world.time is read-only")
  else
    rawset(W, k, v)
  end
end

WorldMT.__tostring = function(W)
  return ("loom.world (t = %.4f s, %d bodies)"):format(C.loom_world_time(W._w), C.loom_world_body_count(W._w))
end

-- Address of the kernel world as a number (hot reload hands it from one Lua state to the next).
function World:address() return tonumber(ffi.cast("uintptr_t", self._w)) end
function World:ptr() return self._w end

----------------------------------------------------------------------------------------------------
-- bodies

local function wrap(W, h)
  local w = W._w
  local name = ffi.string(C.loom_body_name(w, h))
  local kind = C.loom_body_kind(w, h)
  local b = {world = W, handle = h, name = name}
  if kind == C.LOOM_KIND_CLOTH or kind == C.LOOM_KIND_SOLID or kind == C.LOOM_KIND_SIMPLEX then
    b.kind = kind == C.LOOM_KIND_CLOTH and "cloth" or (kind == C.LOOM_KIND_SOLID and "solid" or "simplex")
    local n = C.loom_body_vertex_count(w, h)
    local owner = ("%s '%s'"):format(b.kind, name)
    b.n = n
    b._raw = {x = C.loom_body_x(w, h), v = C.loom_body_v(w, h), f = C.loom_body_f(w, h), m = C.loom_body_m(w, h),
              inv_m = C.loom_body_inv_mass(w, h), rest = C.loom_body_rest(w, h), damping = C.loom_body_damping(w, h)}
    for _, k in ipairs {"x", "v", "f"} do b[k] = array.vec3(b._raw[k], n, owner, k) end
    b.m = array.double(b._raw.m, n, owner, "m")
    b.inv_m = array.const_double(b._raw.inv_m, n, owner, "inv_m")
    b.rest = array.const_vec3(b._raw.rest, n, owner, "rest")
  else
    b.kind = "rigid"
    b.n = 0
    local mo = C.loom_rigid_motion(w, h)
    b.motion = mo == C.LOOM_DYNAMIC and "dynamic" or (mo == C.LOOM_KINEMATIC and "kinematic" or "static")
  end
  setmetatable(b, BodyMT)
  W._bodies[name] = b
  return b
end

local models = {springs = C.LOOM_MODEL_SPRINGS, springs_pbd = C.LOOM_MODEL_SPRINGS_PBD,
                baraff_witkin = C.LOOM_MODEL_BARAFF_WITKIN}
local integrators = {symplectic = C.LOOM_INTEGRATOR_SYMPLECTIC, verlet = C.LOOM_INTEGRATOR_VERLET,
                     verlet_001 = C.LOOM_INTEGRATOR_VERLET_001,
                     rk4 = C.LOOM_INTEGRATOR_RK4, implicit = C.LOOM_INTEGRATOR_IMPLICIT}

-- Creation arguments; the live parameters (stretch ... iterations) come from the kernel's table.
local cloth_spec = params_mod.add_checks({
  name = {"string", required = true},
  mesh = {"any", required = true},
  model = {"string", default = "springs", choices = {"springs", "springs_pbd", "baraff_witkin"}},
  -- default: "implicit" for baraff_witkin, "symplectic" otherwise (the kernel's default per model)
  integrator = {"string", choices = {"symplectic", "verlet", "verlet_001", "rk4", "implicit"}},
  density = {"number", min = 0, open_min = true}, mass = {"number", min = 0, open_min = true},
  fixed = {"any"},
}, C.LOOM_KIND_CLOTH)
-- a switch: true or false here (the kernel's live parameter is 0 or 1; body:set takes either)
cloth_spec.self_collision = {"boolean", default = true}

-- world:cloth{name, mesh, model, integrator, stretch, shear, bend, damping, drag, density | mass,
--             thickness, friction, substeps, iterations, cg_tolerance, cg_iterations, preconditioner,
--             self_collision, fixed = {0-based vertex indices}} → body
function World:cloth(def)
  local d, err = check.fields(def, cloth_spec)
  if not d then check.raise("cloth", err) end
  if not mesh_mod.is_mesh(d.mesh) then
    check.raise("cloth", "'mesh' must be a mesh (loom.mesh.grid, loom.mesh.load, ...), got " .. check.describe(d.mesh))
  end
  if d.model == "springs_pbd" then
    for _, k in ipairs {"stretch", "shear", "bend"} do
      if d[k] and d[k] > 1 then
        check.raise("cloth", ("'%s' must be in [0, 1] for model 'springs_pbd' (fraction of the violation corrected per iteration), got %s"):format(k, d[k]))
      end
    end
  end
  local cd = ffi.new("loom_cloth_def")
  C.loom_cloth_def_default(cd, models[d.model])
  cd.name = d.name
  cd.mesh = d.mesh
  if d.integrator then cd.integrator = integrators[d.integrator] end
  for _, k in ipairs {"stretch", "shear", "bend", "damping", "drag", "density", "mass", "thickness", "friction",
                      "substeps", "iterations", "cg_tolerance", "cg_iterations", "compliance"} do
    if d[k] ~= nil then cd[k] = d[k] end
  end
  if d.substeps == nil and rawget(self, "_default_substeps") then cd.substeps = self._default_substeps end
  cd.self_collision = d.self_collision and 1 or 0
  local h = C.loom_cloth_create(self._w, cd)
  if h == 0 then caller.error(last_error()) end
  -- live parameters the definition struct does not carry are set once the body exists
  for _, k in ipairs {"preconditioner", "relative_damping", "area_exponent", "strain_limit", "newton_iterations",
                      "newton_tolerance", "self_friction"} do
    if d[k] ~= nil and C.loom_body_set_param(self._w, h, k, d[k]) ~= 0 then caller.error(last_error()) end
  end
  self._body_serial = (rawget(self, "_body_serial") or 0) + 1
  local b = wrap(self, h)
  if d.fixed ~= nil then
    -- a pin group without a trajectory: the listed vertices stay where the mesh put them
    if type(d.fixed) ~= "table" and type(d.fixed) ~= "number" then
      self:remove(b)
      check.raise("cloth", "'fixed' must be a table of 0-based vertex indices, got " .. check.describe(d.fixed))
    end
    local ok, e = pcall(Body.pin, b, d.fixed)
    if not ok then
      self:remove(b)
      check.raise("cloth", "'fixed': " .. pin_reason(e))
    end
    b.fixed = e
  end
  local gx, gy = ffi.new("int[1]"), ffi.new("int[1]")
  if C.loom_mesh_grid_dims(d.mesh, gx, gy) == 1 and gx[0] * gy[0] == b.n then b._grid = {gx[0], gy[0]} end
  return b
end

local solid_models = {teschner = C.LOOM_SOLID_TESCHNER, neohookean = C.LOOM_SOLID_NEOHOOKEAN}
local solid_spec = params_mod.add_checks({
  name = {"string", required = true},
  mesh = {"any", required = true},
  model = {"string", default = "teschner", choices = {"teschner", "neohookean"}},
  -- default: "verlet" for teschner (document 002), "implicit" for neohookean
  integrator = {"string", choices = {"verlet", "implicit"}},
  density = {"number", min = 0, open_min = true}, mass = {"number", min = 0, open_min = true},
  node_mass = {"number", min = 0, open_min = true},
  surface = {"any"}, fixed = {"any"},
  contact = {"string", default = "pipeline", choices = {"pipeline", "penetration"}},
}, C.LOOM_KIND_SOLID)
solid_spec.self_collision = {"boolean", default = false}

-- world:solid{name, mesh = tet mesh, model = "teschner" | "neohookean", integrator, density | mass |
--             node_mass, distance, volume, damping (teschner: k_D, k_V, d_C), young, poisson,
--             rayleigh (neohookean), thickness, friction, substeps, self_collision, yield, creep,
--             cg_tolerance, cg_iterations, surface = fine triangle mesh, fixed = {indices}} → body
function World:solid(def)
  local d, err = check.fields(def, solid_spec)
  if not d then check.raise("solid", err) end
  if not mesh_mod.is_tet_mesh(d.mesh) then
    check.raise("solid", "'mesh' must be a tetrahedral mesh (loom.mesh.tet_box, loom.mesh.tet_fill, loom.mesh.load " ..
      "of a .node or .msh file), got " .. check.describe(d.mesh))
  end
  if d.surface ~= nil and not mesh_mod.is_mesh(d.surface) then
    check.raise("solid", "'surface' must be a triangle mesh to embed, got " .. check.describe(d.surface))
  end
  local sd = ffi.new("loom_solid_def")
  C.loom_solid_def_default(sd, solid_models[d.model])
  sd.name = d.name
  sd.mesh = d.mesh
  if d.integrator then sd.integrator = integrators[d.integrator] end
  for _, k in ipairs {"density", "mass", "node_mass", "distance", "volume", "damping", "young", "poisson", "rayleigh",
                      "thickness", "friction", "substeps", "yield", "creep", "cg_tolerance", "cg_iterations"} do
    if d[k] ~= nil then sd[k] = d[k] end
  end
  sd.self_collision = d.self_collision and 1 or 0
  sd.depth_contact = d.contact == "penetration" and 1 or 0
  local h = C.loom_solid_create(self._w, sd)
  if h == 0 then caller.error(last_error()) end
  self._body_serial = (rawget(self, "_body_serial") or 0) + 1
  local b = wrap(self, h)
  if d.surface ~= nil then b:embed(d.surface) end
  if d.fixed ~= nil then
    local ok, e = pcall(Body.pin, b, d.fixed)
    if not ok then
      self:remove(b)
      check.raise("solid", "'fixed': " .. pin_reason(e))
    end
    b.fixed = e
  end
  return b
end

local simplex_models = {simplex_mra = C.LOOM_SIMPLEX_MRA, simplex_shape = C.LOOM_SIMPLEX_SHAPE}
local simplex_integrators = {central = C.LOOM_INTEGRATOR_CENTRAL, euler = C.LOOM_INTEGRATOR_EULER,
                             heun = C.LOOM_INTEGRATOR_HEUN, rk4 = C.LOOM_INTEGRATOR_RK4,
                             -- other names for the same
                             central_difference = C.LOOM_INTEGRATOR_CENTRAL,
                             central_differences = C.LOOM_INTEGRATOR_CENTRAL,
                             explicit_euler = C.LOOM_INTEGRATOR_EULER}
local simplex_spec = params_mod.add_checks({
  name = {"string", required = true},
  mesh = {"any", required = true},
  model = {"string", default = "simplex_mra", choices = {"simplex_mra", "simplex_shape"}},
  integrator = {"string", default = "central", choices = {"central", "euler", "heun", "rk4", "central_difference",
                                                          "central_differences", "explicit_euler"}},
  mass = {"number", min = 0, open_min = true},
  fixed = {"any"},
}, C.LOOM_KIND_SIMPLEX)
simplex_spec.self_collision = {"boolean", default = false}
simplex_spec.hold = {"boolean", default = true}
simplex_spec.response = {"string", default = "project", choices = {"project", "pd"}}

-- world:simplex{name, mesh = simplex mesh, model = "simplex_mra" | "simplex_shape", k, k_anchor,
--               mass (kg per vertex, 004's m), damping (b), integrator = "central" | "euler" |
--               "heun" | "rk4", thickness, friction, substeps, response = "project" | "pd", kp, kd,
--               hold, passes, self_collision, fixed = {indices}} → body
function World:simplex(def)
  local d, err = check.fields(def, simplex_spec)
  if not d then check.raise("simplex", err) end
  if not mesh_mod.is_simplex_mesh(d.mesh) then
    check.raise("simplex", "'mesh' must be a simplex mesh (loom.mesh.simplex_sphere, simplex_torus, simplex_cylinder, " ..
      "simplex_dual), got " .. check.describe(d.mesh))
  end
  local sd = ffi.new("loom_simplex_def")
  C.loom_simplex_def_default(sd)
  sd.name = d.name
  sd.mesh = d.mesh
  sd.model = simplex_models[d.model]
  sd.integrator = simplex_integrators[d.integrator]
  for _, k in ipairs {"k", "k_anchor", "mass", "damping", "thickness", "friction", "substeps", "kp", "kd", "passes"} do
    if d[k] ~= nil then sd[k] = d[k] end
  end
  sd.self_collision = d.self_collision and 1 or 0
  sd.hold = d.hold and 1 or 0
  sd.response = d.response == "pd" and C.LOOM_RESPONSE_PD or C.LOOM_RESPONSE_PROJECT
  local h = C.loom_simplex_create(self._w, sd)
  if h == 0 then caller.error(last_error()) end
  self._body_serial = (rawget(self, "_body_serial") or 0) + 1
  local b = wrap(self, h)
  b.mesh = d.mesh
  if d.fixed ~= nil then
    local ok, e = pcall(Body.pin, b, d.fixed)
    if not ok then
      self:remove(b)
      check.raise("simplex", "'fixed': " .. pin_reason(e))
    end
    b.fixed = e
  end
  return b
end

local shape_kinds = {sphere = C.LOOM_SHAPE_SPHERE, box = C.LOOM_SHAPE_BOX, capsule = C.LOOM_SHAPE_CAPSULE,
                     cylinder = C.LOOM_SHAPE_CYLINDER, mesh = C.LOOM_SHAPE_MESH, convex = C.LOOM_SHAPE_CONVEX}

local rigid_spec = {
  name = {"string", required = true},
  shape = {"any", required = true},
  mass = {"number", min = 0, open_min = true}, density = {"number", min = 0, open_min = true},
  position = {"vec3", default = {0, 0, 0}},
  orientation = {"table"},
  velocity = {"vec3"}, angular_velocity = {"vec3"},
  static = {"boolean", default = false}, kinematic = {"boolean", default = false},
  integrator = {"string"}, altitude_gravity = {"boolean"}, sleep = {"boolean"},
}
params_mod.add_checks(rigid_spec, C.LOOM_KIND_RIGID)
rigid_spec.linear = {"boolean"}
rigid_spec.angular = {"boolean"}
local rigid_integrators = {symplectic = 0, rk4 = 1, euler = 2}

-- world:rigid{name, shape, position, orientation = {w, x, y, z}, static | kinematic (default:
--             dynamic), mass | density, velocity, angular_velocity, linear, angular, integrator =
--             "symplectic" | "rk4" | "euler", linear_damping, angular_damping, gravity_scale,
--             altitude_gravity, sleep, friction, restitution, thickness} → body
function World:rigid(def)
  local d, err = check.fields(def, rigid_spec)
  if not d then check.raise("rigid", err) end
  if not shape_mod.is_shape(d.shape) then
    check.raise("rigid", "'shape' must be a loom.shape (sphere, box, capsule, cylinder, convex, mesh, plane), got " .. check.describe(d.shape))
  end
  if d.static and d.kinematic then check.raise("rigid", "a body cannot be both 'static' and 'kinematic'") end
  if d.shape.kind == "plane" then
    -- a half-space: the box below its top face, turned so that its +z is the normal
    if not d.static then check.raise("rigid", ("'%s': a plane is an infinite floor or wall; give it static = true"):format(d.name)) end
    if def.position ~= nil or def.orientation ~= nil then
      check.raise("rigid", ("'%s': a plane takes no position or orientation (its normal and point give them)"):format(d.name))
    end
    local n, p, H = d.shape.normal, d.shape.point, shape_mod.PLANE_HALF
    -- the rotation of +z onto n: about z x n by the angle between them (half-angle quaternion)
    local w, x, y, z = 1 + n[3], -n[2], n[1], 0
    if w < 1e-12 then w, x, y, z = 0, 1, 0, 0 end -- n = -z: half a turn about x
    local l = math.sqrt(w * w + x * x + y * y + z * z)
    d.orientation = {w / l, x / l, y / l, z / l}
    d.position = {p[1] - H * n[1], p[2] - H * n[2], p[3] - H * n[3]}
    d.shape = shape_mod.box(H, H, H)
  end
  local rd = ffi.new("loom_rigid_def")
  C.loom_rigid_def_default(rd)
  rd.name = d.name
  local s = d.shape
  rd.shape = shape_kinds[s.kind]
  if s.radius then rd.radius = s.radius end
  if s.half_height then rd.half_height = s.half_height end
  if s.half_extents then
    rd.half_extents.x, rd.half_extents.y, rd.half_extents.z = s.half_extents[1], s.half_extents[2], s.half_extents[3]
  end
  if s.mesh then rd.mesh = s.mesh end
  rd.motion = d.static and C.LOOM_STATIC or (d.kinematic and C.LOOM_KINEMATIC or C.LOOM_DYNAMIC)
  rd.position.x, rd.position.y, rd.position.z = d.position[1], d.position[2], d.position[3]
  if d.orientation then
    local q = d.orientation
    for i = 1, 4 do
      if not check.is_finite(q[i]) then check.raise("rigid", "'orientation' must be a quaternion {w, x, y, z}") end
    end
    rd.orientation.w, rd.orientation.x, rd.orientation.y, rd.orientation.z = q[1], q[2], q[3], q[4]
  end
  if rd.motion ~= C.LOOM_DYNAMIC then
    for _, k in ipairs{"velocity", "angular_velocity", "mass", "density", "linear", "angular", "integrator",
                       "linear_damping", "angular_damping", "gravity_scale", "altitude_gravity", "sleep"} do
      if d[k] ~= nil then
        check.raise("rigid", ("'%s' applies to dynamic bodies; '%s' is %s%s"):format(k, tostring(d.name),
          d.static and "static" or "kinematic", d.kinematic and " (it moves with :follow)" or ""))
      end
    end
  else
    if d.mass and d.density then check.raise("rigid", "give 'mass' or 'density', not both") end
    if d.mass then rd.mass = d.mass end
    if d.density then rd.density = d.density end
    if d.velocity then rd.velocity.x, rd.velocity.y, rd.velocity.z = d.velocity[1], d.velocity[2], d.velocity[3] end
    if d.angular_velocity then
      local a = d.angular_velocity
      rd.angular_velocity.x, rd.angular_velocity.y, rd.angular_velocity.z = a[1], a[2], a[3]
    end
    if d.linear == false then rd.linear = 0 end
    if d.angular == false then rd.angular = 0 end
    if d.integrator then
      local k = rigid_integrators[d.integrator]
      if not k then
        check.raise("rigid", ("'integrator' must be \"symplectic\", \"rk4\" or \"euler\", got %q"):format(d.integrator))
      end
      rd.integrator = k
    end
    if d.linear_damping then rd.linear_damping = d.linear_damping end
    if d.angular_damping then rd.angular_damping = d.angular_damping end
    if d.gravity_scale then rd.gravity_scale = d.gravity_scale end
    if d.altitude_gravity then rd.altitude_gravity = 1 end
    if d.sleep == false then rd.can_sleep = 0 end
  end
  if d.friction then rd.friction = d.friction end
  if d.restitution then rd.restitution = d.restitution end
  if d.thickness then rd.thickness = d.thickness end
  local h = C.loom_rigid_create(self._w, rd)
  if h == 0 then caller.error(last_error()) end
  for _, k in ipairs {"rolling", "torsion", "layers", "mask"} do -- live parameters the definition does not carry
    if d[k] ~= nil and C.loom_body_set_param(self._w, h, k, d[k]) ~= 0 then
      local msg = last_error()
      C.loom_body_destroy(self._w, h)
      check.raise("rigid", msg)
    end
  end
  self._body_serial = (rawget(self, "_body_serial") or 0) + 1
  self:_report_messages()   -- pins already inside the new body's contact margin are warned about
  return wrap(self, h)
end

-- world:body(name) → body (error if there is none)
function World:body(name)
  local b = self._bodies[name]
  if b then return b end
  if type(name) ~= "string" then check.raise_n(1, "body", "expected a body name, got " .. check.describe(name)) end
  local h = C.loom_world_find(self._w, name)
  if h == 0 then
    local names = {}
    for _, bb in ipairs(self:bodies()) do names[#names + 1] = bb.name end
    caller.error(("world:body: no body named '%s' (bodies: %s)"):format(name, #names > 0 and table.concat(names, ", ") or "none"))
  end
  return wrap(self, h)
end

-- world:bodies() → array of bodies in creation order
function World:bodies()
  local out = {}
  for i = 0, C.loom_world_body_count(self._w) - 1 do
    local h = C.loom_world_body_at(self._w, i)
    local name = ffi.string(C.loom_body_name(self._w, h))
    out[#out + 1] = self._bodies[name] or wrap(self, h)
  end
  return out
end

-- world:remove(body)
function World:remove(b)
  if getmetatable(b) ~= BodyMT or b.world ~= self then check.raise_n(1, "remove", "expected a body of this world") end
  if C.loom_body_destroy(self._w, b.handle) ~= 0 then caller.error(last_error()) end
  self._body_serial = (rawget(self, "_body_serial") or 0) + 1
  self._bodies[b.name] = nil
  -- views kept by user code refuse every index from now on instead of reading freed memory
  for _, k in ipairs {"x", "v", "f", "m", "inv_m", "rest"} do
    if b[k] then array.invalidate(b[k]) end
  end
  b.x, b.v, b.f, b.m, b.inv_m, b.rest, b._raw, b.n, b.dead = nil, nil, nil, nil, nil, nil, nil, 0, true
end

----------------------------------------------------------------------------------------------------
-- stepping

local function error_text(err)
  if type(err) == "string" then return err end
  local mt = getmetatable(err)
  if mt and mt.__tostring then return tostring(err) end
  return ("error object is a %s value (raise a string to get a message here)"):format(type(err))
end

function World:_callback_error(key, where, err)
  self._disabled[key] = true
  local msg = error_text(err) .. " (in " .. where .. "; disabled until the scene is reloaded)"
  self._errors[#self._errors + 1] = msg
  M.report(msg, "error")
end

-- The names of the force fields that ran in the last step (not disabled), sorted.
local function active_fields(W)
  local names = {}
  local scene = rawget(W, "_scene")
  for _, fields in ipairs {scene and scene.forces or {}, W._fields} do
    for name, fn in pairs(fields) do
      if type(fn) == "function" and not W._disabled[fn] then names[#names + 1] = ("'%s'"):format(tostring(name)) end
    end
  end
  table.sort(names)
  return names
end

-- Force fields are Lua's, so the kernel's divergence report cannot name them: when the external
-- force the fields left on some vertex of the diverged body is far above that vertex's weight, the
-- message names the fields and the vertex they pushed hardest (relative to its weight).
local function field_cause(W, seq, msg)
  if not msg:find("diverged at t = ", 1, true) then return msg end
  local h = C.loom_world_message_body(W._w, seq)
  if h <= 0 then return msg end
  local n = C.loom_body_vertex_count(W._w, h)
  local f, m = C.loom_body_f(W._w, h), C.loom_body_m(W._w, h)
  if n <= 0 or f == nil or m == nil then return msg end
  local worst, vertex, force = 0, -1, 0
  for i = 0, n - 1 do
    local fv = f[i]
    local big = math.max(math.abs(fv.x), math.abs(fv.y), math.abs(fv.z))
    local s = big > 0 and big * math.sqrt((fv.x / big) ^ 2 + (fv.y / big) ^ 2 + (fv.z / big) ^ 2) or 0 -- (no overflow)
    local r = s / (m[i] * 9.81)
    if r > worst then worst, vertex, force = r, i, s end
  end
  local names = active_fields(W)
  if #names == 0 or not (worst > 100) then return msg end
  local times = worst < math.huge and ("%.3g times"):format(worst) or "over 1e308 times" -- (the ratio overflowed)
  local cause = ("force field%s %s pushed vertex %d with %.3g N, %s its weight: check what %s"):format(
    #names > 1 and "s" or "", table.concat(names, ", "), vertex, force, times,
    #names > 1 and "they compute" or "it computes")
  -- the kernel's generic advice gives way to the cause found here
  local generic = ": reduce dt or stiffness, or look for forces that grow without bound"
  if msg:sub(-#generic) == generic then return msg:sub(1, -#generic - 1) .. ": " .. cause end
  return msg .. "; " .. cause
end

function World:_report_messages()
  local count = C.loom_world_message_count(self._w)
  for seq = self._seen + 1, count do
    local m = C.loom_world_message(self._w, seq)
    if m ~= nil then
      local msg = ffi.string(m)
      if C.loom_world_message_severity(self._w, seq) == C.LOOM_ERROR then msg = field_cause(self, seq, msg) end
      self._errors[#self._errors + 1] = msg
      -- the kernel says how serious it is (a divergence that froze a body is an error: a batch run
      -- ends with status 1)
      M.report(msg, C.loom_world_message_severity(self._w, seq) == C.LOOM_ERROR and "error" or "warning")
    end
  end
  self._seen = count
end

local function label(W, kind, name)
  local key = kind .. "\0" .. name
  local l = W._labels[key]
  if not l then
    l = ("%s '%s'"):format(kind, name)
    W._labels[key] = l
  end
  return l
end

local function finite3(x, y, z) return check.is_finite(x) and check.is_finite(y) and check.is_finite(z) end

local function drive_pins(W, t)
  local w = W._w
  for i = 1, #W._groups do
    local g = W._groups[i]
    if g.traj and not g.dead then
      local lbl = g.label
      M.busy(lbl)
      local ok, x, y, z = xpcall(g.traj, caller.relocate, t)
      M.busy(nil)
      if not ok then
        g.traj = nil
        W:_callback_error(g, lbl, x)
      elseif x == nil or x == false then
        C.loom_pins_release(w, g.handle)
      elseif not finite3(x, y, z) then
        g.traj = nil
        W:_callback_error(g, lbl, ("trajectory returned %s, %s, %s at t = %.4f; expected three finite numbers"):format(
          check.describe(x), check.describe(y), check.describe(z), t))
      else
        if C.loom_pins_held(w, g.handle) == 0 then C.loom_pins_hold(w, g.handle) end
        tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
        if C.loom_pins_set_target(w, g.handle, tmp) ~= 0 then
          g.traj = nil
          W:_callback_error(g, lbl, ("%s at t = %.4f"):format(last_error():gsub("^pins:set_target: ", "trajectory: "), t))
        end
      end
    end
  end
  for i = 1, #W._kinematic do
    local b = W._kinematic[i]
    if b.traj and not b.dead then
      local lbl = b._traj_label
      M.busy(lbl)
      local ok, x, y, z, qw, qx, qy, qz = xpcall(b.traj, caller.relocate, t)
      M.busy(nil)
      if not ok then
        b.traj = nil
        W:_callback_error(b, lbl, x)
      elseif x ~= nil then
        if not finite3(x, y, z) then
          b.traj = nil
          W:_callback_error(b, lbl, ("trajectory returned %s, %s, %s at t = %.4f; expected three finite numbers (a position), optionally followed by a quaternion w, x, y, z"):format(
            check.describe(x), check.describe(y), check.describe(z), t))
        else
          tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
          local q = nil
          if qw ~= nil then
            tmpq[0].w, tmpq[0].x, tmpq[0].y, tmpq[0].z = qw, qx or 0, qy or 0, qz or 0
            q = tmpq
          end
          if C.loom_rigid_set_target(W._w, b.handle, tmp, q) ~= 0 then
            b.traj = nil
            W:_callback_error(b, lbl, last_error())
          end
        end
      end
    end
  end
end

-- The force fields in effect: the scene's (read each step, so edits to scene.forces apply at once)
-- plus any added with world:force.
local function field_names(fields, names)
  local n = 0
  for k in pairs(fields) do
    n = n + 1
    names[n] = k
  end
  for i = n + 1, #names do names[i] = nil end
  if n > 1 then table.sort(names, function(a, b) return tostring(a) < tostring(b) end) end
  return n
end

-- What a force field wrote is checked when it returns (one pass over f per particle body): a
-- non-finite force is the field's error, not a divergence of the body. The forces from before the
-- field ran are put back (also when the field raised an error halfway) and the field is disabled.
local function particle_bodies(W)
  local list = rawget(W, "_particle_list")
  local count = C.loom_world_body_count(W._w)
  local serial = rawget(W, "_body_serial") or 0
  if list and list.count == count and list.serial == serial then return list end
  list = {count = count, serial = serial}
  for _, b in ipairs(W:bodies()) do
    if b.kind ~= "rigid" and b.n > 0 then
      list[#list + 1] = {body = b, f = C.loom_body_f(W._w, b.handle), n = b.n, backup = ffi.new("loom_vec3[?]", b.n)}
    end
  end
  W._particle_list = list
  return list
end

local function number_text(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  return ("%.6g"):format(x)
end

-- The first vertex of f[0..n-1] with a non-finite component, or nil. x * 0 is 0 for finite x and
-- NaN for NaN or ±inf; each vertex's test is independent of the others, so the loop is not bound
-- by a chain of additions (about 10 µs for 16 384 vertices).
local function first_non_finite(f, n, from)
  for i = from or 0, n - 1 do
    local fi = f[i]
    local d = fi.x * 0 + fi.y * 0 + fi.z * 0
    if d ~= d then return i end
  end
  return nil
end

-- The message for the first body with a non-finite force, or nil: field, body, vertex, value and
-- how many vertices of that body were bad.
local function bad_force_message(bodies, lbl, t)
  for k = 1, #bodies do
    local e = bodies[k]
    local v = first_non_finite(e.f, e.n)
    if v then
      local count, i = 0, v
      while i do
        count = count + 1
        i = first_non_finite(e.f, e.n, i + 1)
      end
      local fv = e.f[v]
      return ("%s wrote a non-finite force on %s '%s' at vertex %d at t = %.4f s: f = (%s, %s, %s)%s")
        :format(lbl, e.body.kind, e.body.name, v, t, number_text(fv.x), number_text(fv.y), number_text(fv.z),
          count > 1 and (" (%d vertices in all)"):format(count) or "")
    end
  end
  return nil
end

local function restore_forces(bodies)
  for k = 1, #bodies do
    local e = bodies[k]
    ffi.copy(e.f, e.backup, e.n * 24)
  end
end

local function run_fields(W, fields, t)
  if not fields then return end
  local names = W._field_names
  local n = field_names(fields, names)
  for i = 1, n do
    local name = names[i]
    local fn = fields[name]
    if fn and not W._disabled[fn] and not check.is_callable(fn) then
      -- (scene.forces is read every step, so an edit can put anything there)
      W:_callback_error(fn, label(W, "force field", tostring(name)), ("force field '%s' is %s, not a function(world, t)")
        :format(tostring(name), check.describe(fn)))
    elseif fn and not W._disabled[fn] then
      local lbl = label(W, "force field", tostring(name))
      local bodies = particle_bodies(W)
      for k = 1, #bodies do
        local e = bodies[k]
        ffi.copy(e.backup, e.f, e.n * 24)
      end
      M.busy(lbl)
      local ok, err = xpcall(fn, caller.relocate, W, t)
      M.busy(nil)
      local bad = not ok and err or bad_force_message(bodies, lbl, t)
      if bad then
        restore_forces(bodies)
        W:_callback_error(fn, lbl, bad)
      end
    end
  end
end

-- world:step([n]) advances n fixed steps (default 1): trajectories, force fields, kernel step,
-- on_step. Errors in callbacks are reported and that callback is disabled; the step goes on.
function World:step(n)
  n = n or 1
  if not (check.is_finite(n) and n >= 0 and n == math.floor(n)) then
    check.raise_n(1, "step", "expected a whole number of steps, got " .. check.describe(n))
  end
  local w = self._w
  local scene = rawget(self, "_scene")
  for _ = 1, n do
    local t = C.loom_world_time(w)
    local t1 = t + C.loom_world_dt(w)
    input_mod._now = t1 -- what a replayed recording reads when no time is given (loom.input)
    drive_pins(self, t1)
    C.loom_world_clear_forces(w)
    if scene then run_fields(self, scene.forces, t) end
    run_fields(self, self._fields, t)
    apply_rigid_forces(self, t, t1)
    if C.loom_world_step(w) > 0 then self:_report_messages() end
    local on_step = scene and scene.on_step or rawget(self, "on_step")
    if on_step and not self._disabled[on_step] then
      M.busy("on_step")
      local ok, err = xpcall(on_step, caller.relocate, self, C.loom_world_time(w))
      M.busy(nil)
      if not ok then self:_callback_error(on_step, "on_step", err) end
    end
  end
  return self
end

-- world:run(seconds): steps round(seconds / dt) times
function World:run(seconds)
  if not (check.is_finite(seconds) and seconds >= 0) then
    check.raise_n(1, "run", "expected a duration in seconds, got " .. check.describe(seconds))
  end
  return self:step(math.floor(seconds / self.dt + 0.5))
end

-- world:force(name, fn): adds (or with fn = nil removes) a force field fn(world, t).
function World:force(name, fn)
  if type(name) ~= "string" then check.raise_n(1, "force", "expected a name") end
  if fn ~= nil and type(fn) ~= "function" then check.raise_n(2, "force", "expected a function or nil") end
  self._fields[name] = fn
end

function World:errors() return self._errors end

function World:messages()
  local out = {}
  local count = C.loom_world_message_count(self._w)
  for seq = math.max(1, count - 63), count do
    local m = C.loom_world_message(self._w, seq)
    if m ~= nil then out[#out + 1] = ffi.string(m) end
  end
  return out
end

-- world:contacts() → a read-only view of the contact buffer of the last substep: #view contacts,
-- view[i] for 0 <= i < #view (a loom_contact: body_a, body_b, type_a, feature_a, type_b,
-- feature_b, id, solver, point, normal, depth, toi, impulse). It is checked: reading it after
-- the world stepped again, or out of range, is an error naming the index.
local feature_names = {[0] = "shape", "vertex", "edge", "triangle", "corner", "segment", "tet"}
M.feature_names = feature_names
ffi.cdef [[ typedef struct loom_contacts_view { const loom_contact *items; int n; double time; loom_world *w; } loom_contacts_view; ]]
local view_owner = setmetatable({}, {__mode = "k"}) -- keeps the world alive while a view is
ffi.metatype("loom_contacts_view", {
  __len = function(v) return v.n end,
  __index = function(v, i)
    if type(i) ~= "number" or i ~= math.floor(i) or i < 0 or i >= v.n then
      error(("world:contacts(): index %s out of range (0 .. %d)"):format(tostring(i), v.n - 1), 2)
    end
    if C.loom_world_time(v.w) ~= v.time then
      error("world:contacts(): this view was taken before the world stepped again; call world:contacts() anew", 2)
    end
    return v.items[i]
  end,
  __newindex = function() error("world:contacts() is read only", 2) end,
})
function World:contacts()
  local count = ffi.new("int[1]")
  local items = C.loom_world_contacts(self._w, count)
  local v = ffi.new("loom_contacts_view", items, count[0], C.loom_world_time(self._w), self._w)
  view_owner[v] = self
  return v
end

----------------------------------------------------------------------------------------------------
-- queries

local stats_buf = ffi.new("loom_stats")
-- stats.interpenetrations, the residual interpenetration (world:interpenetrations(): crossing
-- triangle pairs in the current state), is counted when the field is first read: an exact count
-- costs a tree traversal, which a caller that does not read it should not pay every step (one
-- metatable per world, made on the first call). pairs(stats) lists it only once read: this LuaJIT
-- ignores __pairs.
local function lazy_stats(world)
  local mt = rawget(world, "_stats_mt")
  if not mt then
    mt = {__index = function(t, k)
      if k ~= "interpenetrations" then return nil end
      local n = world:interpenetrations()
      rawset(t, k, n)
      return n
    end}
    rawset(world, "_stats_mt", mt)
  end
  return mt
end

function World:stats()
  C.loom_world_stats(self._w, stats_buf)
  local s = stats_buf
  return setmetatable({
    time = s.time, steps = s.steps, contacts = s.contacts, collisions = s.collisions,
    impact_zones = s.impact_zones, iterations = s.iterations, substeps = s.substeps,
    max_penetration = s.max_penetration, frozen = s.frozen, bodies = s.bodies,
    messages = s.messages, step_ms = s.step_seconds * 1000, cg_residual = s.cg_residual,
    cloth_contacts = s.cloth_contacts, contact_resolves = s.contact_resolves, solid_points = s.solid_points, tool_contacts = s.tool_contacts, tool_unresolved = s.tool_unresolved,
    proximity = s.proximity, ccd_collisions = s.ccd_collisions, candidates = s.candidates,
    collision_iterations = s.collision_iterations, largest_zone = s.largest_zone,
    unresolved = s.unresolved, tangled = s.tangled, strain_limited = s.strain_limited,
    passed_through = s.passed_through, obstacle_crossings = s.obstacle_crossings,
    obstacle_tests = s.obstacle_tests, obstacle_tests_brute = s.obstacle_tests_brute,
    newton_iterations = s.newton_iterations,
  }, lazy_stats(self))
end

-- world:interpenetrations() → count of crossing triangle pairs (cloth with itself, other cloth and
-- obstacle solids); world:interpenetrations(true) → count, list of the crossings as
-- {a = body, ta = triangle, b = body, tb = triangle or -1 for an analytic solid} (0-based triangles).
function World:interpenetrations(list)
  if not list then
    local n = C.loom_world_interpenetrations(self._w)
    if n < 0 then caller.error("interpenetrations: " .. last_error()) end
    return n
  end
  local n = C.loom_world_interpenetration_pairs(self._w, nil, 0)
  if n < 0 then caller.error("interpenetrations: " .. last_error()) end
  local buf = ffi.new("int32_t[?]", 4 * math.max(n, 1))
  n = C.loom_world_interpenetration_pairs(self._w, buf, n)
  if n < 0 then caller.error("interpenetrations: " .. last_error()) end
  local out, by = {}, {}
  for _, b in ipairs(self:bodies()) do by[b.handle] = b end
  for k = 0, n - 1 do
    out[#out + 1] = {a = by[buf[4 * k]], ta = buf[4 * k + 1], b = by[buf[4 * k + 2]], tb = buf[4 * k + 3]}
  end
  return n, out
end

-- world:energy() → {kinetic, potential, elastic, total} in J of the bodies that are not frozen
local energy_buf = ffi.new("double[3]")
function World:energy()
  C.loom_world_energy(self._w, energy_buf, energy_buf + 1, energy_buf + 2)
  local k, p, e = energy_buf[0], energy_buf[1], energy_buf[2]
  return {kinetic = k, potential = p, elastic = e, total = k + p + e}
end

local hash_buf = ffi.new("char[17]")
function World:hash()
  C.loom_world_hash(self._w, hash_buf, 17)
  return ffi.string(hash_buf)
end

-- world:raycast(origin, dir) → body, vertex, distance (nil if nothing is hit)
function World:raycast(origin, dir)
  local ox, oy, oz = check.vec3(origin, "origin")
  if not ox then check.raise_n(1, "raycast", oy) end
  local dx, dy, dz = check.vec3(dir, "dir")
  if not dx then check.raise_n(2, "raycast", dy) end
  tmp[0].x, tmp[0].y, tmp[0].z = ox, oy, oz
  tmp[1].x, tmp[1].y, tmp[1].z = dx, dy, dz
  local hb, hv, hs = ffi.new("int[1]"), ffi.new("int[1]"), ffi.new("double[1]")
  if C.loom_world_raycast(self._w, tmp, tmp + 1, hb, hv, hs) == 0 then return nil end
  local name = ffi.string(C.loom_body_name(self._w, hb[0]))
  return self._bodies[name] or wrap(self, hb[0]), hv[0], hs[0]
end

-- world:grab(body, vertex, target [, omega = 8]) / world:grab(nil) to release: a spring of stiffness
-- M omega^2 (M = the body's mass) pulls the vertex towards target
function World:grab(b, vertex, target, omega)
  if b == nil then
    C.loom_world_set_grab(self._w, 0, 0, nil, 0)
    return
  end
  if type(b) == "string" then b = self:body(b) end
  if getmetatable(b) ~= BodyMT or b.world ~= self then
    check.raise_n(1, "grab", "expected a body of this world or its name, got " .. check.describe(b))
  end
  if b.kind == "rigid" then caller.error(("grab: '%s' is a rigid body: the grab holds a vertex of a cloth, solid or simplex body"):format(b.name)) end
  if not (check.is_finite(vertex) and vertex == math.floor(vertex) and vertex >= 0 and vertex < (b.n or 0)) then
    check.raise_n(2, "grab", ("expected a vertex index 0..%d of '%s', got %s"):format((b.n or 0) - 1, b.name, check.describe(vertex)))
  end
  local x, y, z = check.vec3(target, "target")
  if not x then check.raise_n(3, "grab", y) end
  if omega ~= nil and not (check.is_finite(omega) and omega > 0) then
    check.raise_n(4, "grab", "'omega' must be a positive number (rad/s), got " .. check.describe(omega))
  end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  if C.loom_world_set_grab(self._w, b.handle, vertex, tmp, omega or 8) ~= 0 then caller.error(last_error()) end
end

-- world:snapshot() → string; world:restore(s) continues bit-identically from it. Besides the
-- kernel's state a snapshot holds the rigid forces in effect or to come (world:rigid_forces()):
-- "LOOMRF1 <bytes>\n", that many bytes of forces (M.encode_forces), then the kernel's state.
function World:snapshot()
  local n = C.loom_world_state_size(self._w)
  if n < 0 then caller.error(last_error()) end
  local buf = ffi.new("uint8_t[?]", n)
  if C.loom_world_save_state(self._w, buf, n) < 0 then caller.error(last_error()) end
  local forces = M.encode_forces(self)
  return ("LOOMRF1 %d\n"):format(#forces) .. forces .. ffi.string(buf, n)
end

function World:restore(s)
  if type(s) ~= "string" then check.raise_n(1, "restore", "expected a snapshot string") end
  local head, len = s:match("^(LOOMRF1 (%d+)\n)")
  len = tonumber(len)
  if not head or #s < #head + len then caller.error("restore: not a snapshot of a Loom world (or a damaged one)") end
  local forces, err = M.decode_forces(s:sub(#head + 1, #head + len))
  if not forces then caller.error("restore: " .. err) end
  local state = s:sub(#head + len + 1)
  if C.loom_world_load_state(self._w, state, #state) ~= 0 then caller.error("restore: " .. last_error()) end
  local ok, ferr = M.set_forces(self, forces) -- (the state named the same bodies: this holds)
  if not ok then caller.error("restore: " .. ferr) end
  return self
end

-- Carries the state of matching bodies from another world (hot reload). Returns the count.
function World:transplant_from(old_ptr)
  return C.loom_world_transplant(self._w, ffi.cast("loom_world*", old_ptr))
end

-- world:adopt(old_address) takes over the state of an older world (hot reload; a journal's replay of
-- one): transplants what matches, re-bases pin groups, puts kinematic bodies where their
-- trajectories say at the current time. Returns the number of bodies kept.
function World:adopt(old_ptr)
  local n = self:transplant_from(old_ptr)
  for _, g in ipairs(self._groups) do g:resync() end
  for _, b in ipairs(self._kinematic) do
    if b.traj then
      local ok, x, y, z = pcall(b.traj, self.time)
      if ok and x then
        -- (a body carried to where its trajectory puts it keeps its motion: set_pose would stop it)
        local p = b.position
        if p.x ~= x or p.y ~= y or p.z ~= z then pcall(b.set_pose, b, {x, y, z}) end
      end
    end
  end
  return n
end

----------------------------------------------------------------------------------------------------
-- bodies

local body_props = {
  position = function(b)
    local p = ffi.new("loom_vec3")
    C.loom_rigid_pose(b.world._w, b.handle, p, nil)
    return p
  end,
  orientation = function(b)
    local q = ffi.new("loom_quat")
    C.loom_rigid_pose(b.world._w, b.handle, nil, q)
    return q
  end,
  velocity = function(b)
    local v = ffi.new("loom_vec3")
    C.loom_rigid_velocity(b.world._w, b.handle, v, nil)
    return v
  end,
  angular_velocity = function(b)
    local v = ffi.new("loom_vec3")
    C.loom_rigid_velocity(b.world._w, b.handle, nil, v)
    return v
  end,
  frozen = function(b) return C.loom_body_frozen(b.world._w, b.handle) == 1 end,
  mass = function(b)
    local m = ffi.new("double[1]")
    C.loom_rigid_mass(b.world._w, b.handle, m, nil, nil)
    return m[0]
  end,
  inertia = function(b)
    local I = ffi.new("double[9]")
    C.loom_rigid_mass(b.world._w, b.handle, nil, I, nil)
    return {{I[0], I[1], I[2]}, {I[3], I[4], I[5]}, {I[6], I[7], I[8]}}
  end,
  asleep = function(b)
    local a = ffi.new("int[1]")
    C.loom_rigid_mass(b.world._w, b.handle, nil, nil, a)
    return a[0] == 1
  end,
}

BodyMT.__index = function(b, k)
  local m = Body[k]
  if m ~= nil then return m end
  local p = body_props[k]
  if p then
    if b.dead then caller.error("body '" .. b.name .. "' was removed") end
    if k ~= "frozen" and b.kind ~= "rigid" then return nil end
    return p(b)
  end
  return nil
end
-- The live properties are read-only: a write would only hide them behind a plain field (the body
-- would go on moving while body.position kept the written table). Other fields are the user's.
local prop_setter = {position = "set_pose", orientation = "set_pose", velocity = "set_velocity",
                     angular_velocity = "set_velocity", mass = "density or mass when it is made"}
BodyMT.__newindex = function(b, k, v)
  if body_props[k] then
    local how = prop_setter[k]
    caller.error(("body '%s': '%s' is read-only%s"):format(b.name, k,
      how and (how:find(" ") and (" (give its " .. how .. ")") or (" (use body:" .. how .. ")")) or ""))
  end
  rawset(b, k, v)
end
BodyMT.__tostring = function(b) return ("loom.body %s '%s'"):format(b.kind, b.name) end

local function alive(b, fname)
  if b.dead then caller.error(fname .. ": body '" .. b.name .. "' was removed") end
end

-- cloth and solids: bodies made of particles
local function need_cloth(b, fname)
  alive(b, fname)
  if b.kind == "rigid" then caller.error(("%s: '%s' is a rigid body, not a cloth, solid or simplex body"):format(fname, b.name)) end
end

local function need_only_cloth(b, fname)
  alive(b, fname)
  if b.kind ~= "cloth" then caller.error(("%s: '%s' is a %s body, not a cloth"):format(fname, b.name, b.kind)) end
end

local function need_solid(b, fname)
  alive(b, fname)
  if b.kind ~= "solid" then caller.error(("%s: '%s' is a %s body, not a solid"):format(fname, b.name, b.kind)) end
end

-- solid:volume() → the current total volume of its tets (m^3)
function Body:volume()
  need_solid(self, "volume")
  return C.loom_solid_volume(self.world._w, self.handle)
end

-- solid:tets() → FFI int32 array (4 per tet, 0-based) and the count
function Body:tets()
  need_solid(self, "tets")
  local n = ffi.new("int[1]")
  local t = C.loom_solid_tets(self.world._w, self.handle, n)
  return t, n[0]
end

-- solid:depth(p) → how deep point p lies inside the solid now: its distance to the nearest surface
-- triangle when a tet contains it, 0 outside (m)
local depth_p = ffi.new("loom_vec3[1]")
function Body:depth(p)
  need_solid(self, "depth")
  local x, y, z = check.vec3(p, "p")
  if not x then check.raise_n(1, "depth", y) end
  depth_p[0].x, depth_p[0].y, depth_p[0].z = x, y, z
  local d = C.loom_solid_depth(self.world._w, self.handle, depth_p)
  if d < 0 then caller.error("depth: " .. last_error()) end
  return d
end

-- solid:embed(fine_mesh) → the number of its vertices outside every tet (they follow the nearest)
function Body:embed(m)
  need_solid(self, "embed")
  if not mesh_mod.is_mesh(m) then check.raise_n(1, "embed", "expected a triangle mesh, got " .. check.describe(m)) end
  local out = C.loom_solid_embed(self.world._w, self.handle, m)
  if out < 0 then caller.error("embed: " .. last_error()) end
  local nv = ffi.new("int[1]")
  local x = C.loom_solid_surface_vertices(self.world._w, self.handle, nv)
  rawset(self, "surface", array.const_vec3(x, nv[0], ("solid '%s'"):format(self.name), "surface"))
  self.world:_report_messages()
  return out
end

-- solid:surface_triangles() → FFI int32 array and count of the embedded surface (nil without one)
function Body:surface_triangles()
  need_solid(self, "surface_triangles")
  local n = ffi.new("int[1]")
  local t = C.loom_solid_surface_triangles(self.world._w, self.handle, n)
  if n[0] == 0 then return nil, 0 end
  return t, n[0]
end

-- solid:set_rest() / simplex:set_rest() makes the current shape the rest shape (plastic: 004's
-- "update initial conditions"); solid:reset_rest() puts back the mesh's rest shape; simplex:reset()
-- puts the body back to its original shape (positions and rest shape, velocities zero)
function Body:set_rest()
  alive(self, "set_rest")
  if self.kind == "simplex" then
    if C.loom_simplex_set_rest(self.world._w, self.handle, 0) ~= 0 then caller.error("set_rest: " .. last_error()) end
    return
  end
  need_solid(self, "set_rest")
  if C.loom_solid_set_rest(self.world._w, self.handle, 0) ~= 0 then caller.error("set_rest: " .. last_error()) end
end
function Body:reset()
  alive(self, "reset")
  if self.kind ~= "simplex" then caller.error(("reset: '%s' is a %s body, not a simplex body"):format(self.name, self.kind)) end
  if C.loom_simplex_set_rest(self.world._w, self.handle, 1) ~= 0 then caller.error("reset: " .. last_error()) end
end

-- simplex:neighbors(i) → {j1, j2, j3} in 004's rotational order (0-based)
function Body:neighbors(i)
  alive(self, "neighbors")
  if self.kind ~= "simplex" then caller.error(("neighbors: '%s' is a %s body, not a simplex body"):format(self.name, self.kind)) end
  if type(i) ~= "number" or i ~= math.floor(i) or i < 0 or i >= self.n then
    check.raise_n(1, "neighbors", ("expected a vertex index in [0, %d], got %s"):format(self.n - 1, check.describe(i)))
  end
  local nb = C.loom_simplex_neighbors(self.world._w, self.handle)
  return {nb[3 * i], nb[3 * i + 1], nb[3 * i + 2]}
end

-- simplex:penetrations([tol]) → how many (tool, surface triangle) pairs overlap now: a kinematic or
-- static sphere or capsule closer than its radius minus tol to a triangle, or with its axis behind it
function Body:penetrations(tol)
  alive(self, "penetrations")
  if self.kind ~= "simplex" then caller.error(("penetrations: '%s' is a %s body, not a simplex body"):format(self.name, self.kind)) end
  if tol ~= nil and not (check.is_finite(tol) and tol >= 0) then check.raise_n(1, "penetrations", "'tol' must be a number >= 0") end
  return C.loom_simplex_penetrations(self.world._w, self.handle, tol or 0)
end
function Body:reset_rest()
  need_solid(self, "reset_rest")
  if C.loom_solid_set_rest(self.world._w, self.handle, 1) ~= 0 then caller.error("reset_rest: " .. last_error()) end
end

-- body:vertex_near{x, y, z} → 0-based index of the nearest vertex
function Body:vertex_near(p)
  need_cloth(self, "vertex_near")
  local x, y, z = check.vec3(p, "point")
  if not x then check.raise_n(1, "vertex_near", y) end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  return C.loom_body_vertex_near(self.world._w, self.handle, tmp)
end

local function index_list(b, fname, list)
  if type(list) == "number" then list = {list} end
  if type(list) ~= "table" then
    check.raise_n(1, fname, "expected a vertex index or a table of 0-based vertex indices, got " .. check.describe(list))
  end
  if #list == 0 then
    check.raise_n(1, fname, "the list of vertices is empty (did the selection match nothing?)")
  end
  local keys = 0
  for _ in pairs(list) do keys = keys + 1 end
  if keys ~= #list then -- ({1, nil, 3}: ipairs would stop at the hole and leave the rest unread)
    check.raise_n(1, fname, ("the list of vertices must be a sequence 1..n without holes or other keys (%d keys, length %d)"):format(keys, #list))
  end
  local arr = ffi.new("int32_t[?]", #list)
  for i, v in ipairs(list) do
    if not (check.is_finite(v) and v == math.floor(v) and v >= 0 and v < b.n) then
      check.raise_n(1, fname, ("index %d is %s; vertices are 0..%d"):format(i, check.describe(v), b.n - 1))
    end
    arr[i - 1] = v
  end
  return arr, #list
end

-- body:pin(indices) → pin group (the vertices keep their positions until the group follows a
-- trajectory)
function Body:pin(list)
  need_cloth(self, "pin")
  local arr, n = index_list(self, "pin", list)
  local h = C.loom_pins_create(self.world._w, self.handle, arr, n)
  if h == 0 then caller.error(last_error()) end
  self.world:_report_messages()   -- pins inside an obstacle's contact margin are warned about
  local idx = {}
  for i = 0, n - 1 do idx[i + 1] = arr[i] end
  local g = setmetatable({world = self.world, body = self, handle = h, count = n, indices = idx,
                          label = ("trajectory of a pin group of '%s'"):format(self.name)}, GroupMT)
  return g
end

-- body:unpin(indices) → number of vertices freed
function Body:unpin(list)
  need_cloth(self, "unpin")
  local arr, n = index_list(self, "unpin", list)
  local r = C.loom_pins_unpin(self.world._w, self.handle, arr, n)
  if r < 0 then caller.error(last_error()) end
  return r
end

-- Selections: tables of 0-based vertex indices in increasing order, for pin, unpin and loops.

-- body:select(pred) → indices i with pred(x[i], i) true (x[i]: the current position, .x .y .z)
function Body:select(pred)
  need_cloth(self, "select")
  if not check.is_callable(pred) then
    check.raise_n(1, "select", "expected a function(p, i) returning true for the vertices to select, got " .. check.describe(pred))
  end
  return select_mod.predicate(self, pred)
end

-- body:select_box(lo, hi) → indices of the vertices with lo <= x <= hi (component-wise)
function Body:select_box(lo, hi)
  need_cloth(self, "select_box")
  local lx, ly, lz = check.vec3(lo, "lo")
  if not lx then check.raise_n(1, "select_box", ly) end
  local hx, hy, hz = check.vec3(hi, "hi")
  if not hx then check.raise_n(2, "select_box", hy) end
  if lx > hx or ly > hy or lz > hz then
    check.raise_n(2, "select_box", ("'hi' must be >= 'lo' in every component, got lo = {%g, %g, %g}, hi = {%g, %g, %g}"):format(
      lx, ly, lz, hx, hy, hz))
  end
  return select_mod.box(self, lx, ly, lz, hx, hy, hz)
end

-- body:select_near(point, radius) → indices of the vertices at most radius from point
function Body:select_near(p, r)
  need_cloth(self, "select_near")
  local x, y, z = check.vec3(p, "point")
  if not x then check.raise_n(1, "select_near", y) end
  if not (check.is_finite(r) and r >= 0) then
    check.raise_n(2, "select_near", "expected a radius >= 0 in metres, got " .. check.describe(r))
  end
  return select_mod.near(self, x, y, z, r)
end

-- body:boundary() → indices of the vertices on the mesh's open rim (edges with one triangle)
function Body:boundary()
  need_cloth(self, "boundary")
  return select_mod.boundary(self)
end

-- body:edge(name) → the vertices along a side of a grid cloth: "left", "right", "bottom", "top"
function Body:edge(name)
  need_only_cloth(self, "edge")
  local valid = false
  for _, e in ipairs(select_mod.edge_names) do if e == name then valid = true end end
  if not valid then
    check.raise_n(1, "edge", "expected \"left\", \"right\", \"bottom\" or \"top\", got " .. check.describe(name))
  end
  local g = rawget(self, "_grid")
  if not g then
    caller.error(("edge: cloth '%s' was not made from loom.mesh.grid, so it has no named edges; use body:boundary(), " ..
      "body:select_box or body:select"):format(self.name))
  end
  return select_mod.edge(g[1], g[2], name)
end

-- body:raw(name) → the unchecked kernel pointer behind body[name] ("x", "v", "f", "m", "inv_m", "rest"), or
-- "damping" (double*, n x 6: the blocks body:add_damping adds to, xx yy zz xy xz yz): loom_vec3* (double*
-- for "m", "inv_m" and "damping"), valid until the body is removed. Indexing it does no bounds check.
local raw_names = {x = true, v = true, f = true, m = true, inv_m = true, rest = true, damping = true}
function Body:raw(name)
  need_cloth(self, "raw")
  if not raw_names[name] then
    check.raise_n(1, "raw", "expected \"x\", \"v\", \"f\", \"m\", \"inv_m\", \"rest\" or \"damping\", got " ..
      check.describe(name))
  end
  return self._raw[name]
end

-- body:aabb() → {xmin, ymin, zmin}, {xmax, ymax, zmax}
function Body:aabb()
  alive(self, "aabb")
  C.loom_body_aabb(self.world._w, self.handle, tmp, tmp + 1)
  return {tmp[0].x, tmp[0].y, tmp[0].z}, {tmp[1].x, tmp[1].y, tmp[1].z}
end

-- body:set(name, value) changes a live parameter (stretch, shear, bend, damping, drag, thickness,
-- friction, substeps, iterations; rigid: friction, restitution, thickness)
function Body:set(name, value)
  alive(self, "set")
  if type(name) ~= "string" then check.raise_n(1, "set", "expected a parameter name") end
  if type(value) == "boolean" then value = value and 1 or 0 end -- switches (self_collision)
  if not check.is_finite(value) then
    check.raise_n(2, "set", ("%s '%s': '%s' must be a finite number (or true/false for a switch), got %s"):format(
      self.kind, self.name, name, check.describe(value)))
  end
  if C.loom_body_set_param(self.world._w, self.handle, name, value) ~= 0 then caller.error(last_error()) end
  if M.on_set then M.on_set(self, name, value) end -- a session journal records live changes
  return self
end

function Body:get(name)
  alive(self, "get")
  if type(name) ~= "string" then check.raise_n(1, "get", "expected a parameter name, got " .. check.describe(name)) end
  local out = ffi.new("double[1]")
  if C.loom_body_get_param(self.world._w, self.handle, name, out) ~= 0 then caller.error(last_error()) end
  return out[0]
end

-- body:triangles() → int32 pointer (3 per triangle), count
-- body:pinned(i) → true while vertex i is held by a pin (its inverse mass is 0; its mass stays)
function Body:pinned(i)
  need_cloth(self, "pinned")
  if not (check.is_finite(i) and i == math.floor(i) and i >= 0 and i < self.n) then
    check.raise_n(1, "pinned", ("vertex index %s out of range (0 .. %d)"):format(check.describe(i), self.n - 1))
  end
  return self.inv_m[i] == 0
end

-- body:shape_mesh() → the rigid body's shape tessellated for drawing (made once, kept by the body)
function Body:shape_mesh()
  if self.kind ~= "rigid" then caller.error(("shape_mesh: '%s' is a %s body, not a rigid body"):format(self.name, self.kind)) end
  if not self._shape_mesh then
    local m = C.loom_rigid_shape_mesh(self.world._w, self.handle)
    if m == nil then caller.error("shape_mesh: " .. last_error()) end
    self._shape_mesh = ffi.gc(m, C.loom_mesh_destroy)
  end
  return self._shape_mesh
end

function Body:triangles()
  need_cloth(self, "triangles")
  local c = ffi.new("int[1]")
  local p = C.loom_body_triangles(self.world._w, self.handle, c)
  return p, c[0]
end

function Body:contacts()
  need_cloth(self, "contacts")
  return C.loom_body_contacts(self.world._w, self.handle)
end

-- body:impact_zones() → per vertex (0-based, n entries, read only until the next step) the
-- number of the collision pipeline's impact zone it was in (0, 1, ...), or -1: the zones of the
-- last step's last pipeline run that made any; nil before the pipeline first ran for the body.
function Body:impact_zones()
  need_cloth(self, "impact_zones")
  local z = C.loom_body_impact_zones(self.world._w, self.handle)
  if z == nil then return nil end
  return z
end

-- body:collision_boxes([depth]) → {{lo = {x, y, z}, hi = {x, y, z}}, ...}: the boxes of the collision
-- pipeline's triangle tree at that depth (0, the root, by default; a leaf above it stands for
-- itself), each the space its triangles take over the substep that last updated them (their start
-- and end boxes together) inflated by the thickness; {} before the pipeline first ran for the body.
function Body:collision_boxes(depth)
  need_cloth(self, "collision_boxes")
  depth = depth == nil and 0 or depth
  if not (check.is_finite(depth) and depth == math.floor(depth) and depth >= 0 and depth <= 64) then
    check.raise_n(1, "collision_boxes", "depth must be an integer in [0, 64]")
  end
  local w = self.world._w
  local n = C.loom_body_collision_boxes(w, self.handle, depth, nil, nil, 0)
  if n < 0 then caller.error("collision_boxes: " .. last_error()) end
  local lo, hi = ffi.new("loom_vec3[?]", math.max(n, 1)), ffi.new("loom_vec3[?]", math.max(n, 1))
  n = C.loom_body_collision_boxes(w, self.handle, depth, lo, hi, n)
  local out = {}
  for i = 0, n - 1 do
    out[i + 1] = {lo = {lo[i].x, lo[i].y, lo[i].z}, hi = {hi[i].x, hi[i].y, hi[i].z}}
  end
  return out
end

function Body:spring_counts()
  need_only_cloth(self, "spring_counts")
  local a, b, c = ffi.new("int[1]"), ffi.new("int[1]"), ffi.new("int[1]")
  C.loom_body_spring_counts(self.world._w, self.handle, a, b, c)
  return {structural = a[0], shear = b[0], bend = c[0]}
end

-- body:add_damping(i, c [, nx, ny, nz]): declares that the force a field wrote on vertex i falls by
-- c (N s/m) per m/s of the vertex's velocity — along the direction n if given (c n̂ n̂ᵀ), in every
-- direction if not (c I). The implicit integrator then treats that dependence backward, which keeps
-- velocity-dependent fields (air pressure, drag) stable at large steps; explicit integrators ignore
-- it. Cleared with f every step, like the forces.
function Body:add_damping(i, c, nx, ny, nz)
  need_only_cloth(self, "add_damping")
  if type(i) ~= "number" or i ~= math.floor(i) or i < 0 or i >= self.n then
    check.raise_n(1, "add_damping", ("expected a vertex index 0..%d, got %s"):format(self.n - 1, check.describe(i)))
  end
  if not check.is_finite(c) or c < 0 then
    check.raise_n(2, "add_damping", "expected a finite coefficient >= 0 (N s/m), got " .. check.describe(c))
  end
  local d = self._raw.damping + 6 * i
  if nx == nil and ny == nil and nz == nil then
    d[0], d[1], d[2] = d[0] + c, d[1] + c, d[2] + c
    return
  end
  if not (check.is_finite(nx) and check.is_finite(ny) and check.is_finite(nz)) then
    check.raise_n(3, "add_damping", "expected a direction nx, ny, nz of three finite numbers")
  end
  local l2 = nx * nx + ny * ny + nz * nz
  if l2 == 0 then return end
  local s = c / l2
  d[0], d[1], d[2] = d[0] + s * nx * nx, d[1] + s * ny * ny, d[2] + s * nz * nz
  d[3], d[4], d[5] = d[3] + s * nx * ny, d[4] + s * nx * nz, d[5] + s * ny * nz
end

-- body:add_acceleration{ax, ay, az}: f += m a for every vertex (the C twin of a simple force field)
function Body:add_acceleration(a)
  need_cloth(self, "add_acceleration")
  local x, y, z = check.vec3(a, "acceleration")
  if not x then check.raise_n(1, "add_acceleration", y) end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  C.loom_body_add_acceleration(self.world._w, self.handle, tmp)
end

-- body:internal_forces([out]) → loom_vec3 array (n) of model forces at the current state
function Body:internal_forces(out)
  alive(self, "internal_forces")
  if self.kind ~= "simplex" then need_only_cloth(self, "internal_forces") end
  if out ~= nil and not (type(out) == "cdata") then
    check.raise_n(1, "internal_forces", "'out' must be an FFI loom_vec3 array of " .. self.n .. " entries")
  end
  out = out or ffi.new("loom_vec3[?]", self.n)
  if self.kind == "simplex" then
    if C.loom_simplex_internal_forces(self.world._w, self.handle, out) ~= 0 then caller.error("internal_forces: " .. last_error()) end
    return out
  end
  need_only_cloth(self, "internal_forces")
  C.loom_body_internal_forces(self.world._w, self.handle, out)
  return out
end

function Body:unfreeze()
  alive(self, "unfreeze")
  C.loom_body_unfreeze(self.world._w, self.handle)
end

-- rigid:follow(traj): traj(t) returns the position x, y, z (optionally a quaternion w, x, y, z
-- after it) the kinematic body reaches at time t.
function Body:follow(traj)
  alive(self, "follow")
  if self.kind ~= "rigid" then caller.error("follow: pin vertices of a cloth with cloth:pin{...}, then group:follow(traj)") end
  if not check.is_callable(traj) then
    check.raise_n(1, "follow", "expected a trajectory function, got " .. check.describe(traj))
  end
  self.traj = traj
  self._traj_label = ("trajectory of '%s'"):format(self.name)
  local list = self.world._kinematic
  for i = 1, #list do if list[i] == self then return self end end
  list[#list + 1] = self
  return self
end

function Body:set_pose(pos, q)
  alive(self, "set_pose")
  local x, y, z = check.vec3(pos, "position")
  if not x then check.raise_n(1, "set_pose", y) end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  local qq = nil
  if q ~= nil then
    local w, qx, qy, qz
    if type(q) == "table" then w, qx, qy, qz = q[1] or q.w, q[2] or q.x, q[3] or q.y, q[4] or q.z end
    if not (check.is_finite(w) and check.is_finite(qx) and check.is_finite(qy) and check.is_finite(qz)) then
      check.raise_n(2, "set_pose", "'orientation' must be a quaternion {w, x, y, z} of finite numbers, got " .. check.describe(q))
    end
    tmpq[0].w, tmpq[0].x, tmpq[0].y, tmpq[0].z = w, qx, qy, qz
    qq = tmpq
  end
  if C.loom_rigid_set_pose(self.world._w, self.handle, tmp, qq) ~= 0 then caller.error(last_error()) end
end

-- rigid:distance{x, y, z} → signed distance (m), outward normal {x, y, z}
function Body:distance(p)
  alive(self, "distance")
  local x, y, z = check.vec3(p, "point")
  if not x then check.raise_n(1, "distance", y) end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  local d = ffi.new("double[1]")
  if C.loom_rigid_distance(self.world._w, self.handle, tmp, d, tmp + 1) ~= 0 then caller.error(last_error()) end
  return d[0], {tmp[1].x, tmp[1].y, tmp[1].z}
end

local function need_rigid(b, fname)
  alive(b, fname)
  if b.kind ~= "rigid" then caller.error(("%s: '%s' is a %s, not a rigid body"):format(fname, b.name, b.kind)) end
end

local function vec_arg(fname, n, v, what)
  local x, y, z = check.vec3(v, what)
  if not x then check.raise_n(n, fname, y) end
  return x, y, z
end

-- rigid:apply_impulse(j [, point]): an impulse (N s) now, at a world point (torque) or the centre
-- of mass.
function Body:apply_impulse(j, point)
  need_rigid(self, "apply_impulse")
  tmp[0].x, tmp[0].y, tmp[0].z = vec_arg("apply_impulse", 1, j, "impulse")
  local pp = nil
  if point ~= nil then
    tmp[1].x, tmp[1].y, tmp[1].z = vec_arg("apply_impulse", 2, point, "point")
    pp = tmp + 1
  end
  if C.loom_rigid_apply(self.world._w, self.handle, tmp, pp, 1) ~= 0 then caller.error(last_error()) end
end

-- rigid:apply_force(f [, point] [, {from = t0, to = t1}]) → force id. Without an interval the
-- force acts over the next step only; with one it acts exactly over [from, to] (a step that holds
-- part of the interval gets f times that part / dt, so the impulse is f (to - from)); without
-- `to` it never ends. The point (world, at the call) is fixed to the body from then on.
function Body:apply_force(f, point, interval)
  need_rigid(self, "apply_force")
  if interval == nil and type(point) == "table" and point[1] == nil and (point.from ~= nil or point.to ~= nil) then
    point, interval = nil, point
  end
  local fx, fy, fz = vec_arg("apply_force", 1, f, "force")
  local W = self.world
  local local_point
  if point ~= nil then
    local px, py, pz = vec_arg("apply_force", 2, point, "point")
    local p, q = self.position, self.orientation
    tmp[0].x, tmp[0].y, tmp[0].z = px - p.x, py - p.y, pz - p.z
    -- into the body frame: q^-1 (p - x)
    local ql = {q.w, -q.x, -q.y, -q.z}
    local_point = {M.rotate(ql, tmp[0].x, tmp[0].y, tmp[0].z)}
  end
  local t = C.loom_world_time(W._w)
  local from, to = t, nil
  if interval ~= nil then
    if type(interval) ~= "table" then check.raise_n(3, "apply_force", "the interval must be a table {from = t0, to = t1}") end
    from = interval.from or t
    to = interval.to
    if not check.is_finite(from) or (to ~= nil and not check.is_finite(to)) then
      check.raise_n(3, "apply_force", "'from' and 'to' must be finite times in seconds")
    end
    if to ~= nil and to < from then check.raise_n(3, "apply_force", ("'to' (%g) is before 'from' (%g)"):format(to, from)) end
  else
    to = t + C.loom_world_dt(W._w)
  end
  W._force_serial = (rawget(W, "_force_serial") or 0) + 1
  local id = W._force_serial
  local list = rawget(W, "_rforces")
  if not list then
    list = {}
    W._rforces = list
  end
  -- (runtime: added while the world runs, not by the scene's build; a hot reload carries it)
  list[#list + 1] = {id = id, body = self, f = {fx, fy, fz}, point = local_point, from = from, to = to,
                     kind = interval == nil and "step" or (to == nil and "perpetual" or "temporal"),
                     runtime = not rawget(W, "_building")}
  return id
end

-- rigid:set_velocity(v [, omega])
function Body:set_velocity(v, omega)
  need_rigid(self, "set_velocity")
  local pv, pw = nil, nil
  if v ~= nil then
    tmp[0].x, tmp[0].y, tmp[0].z = vec_arg("set_velocity", 1, v, "velocity")
    pv = tmp
  end
  if omega ~= nil then
    tmp[1].x, tmp[1].y, tmp[1].z = vec_arg("set_velocity", 2, omega, "angular velocity")
    pw = tmp + 1
  end
  if C.loom_rigid_set_velocity(self.world._w, self.handle, pv, pw) ~= 0 then caller.error(last_error()) end
end

-- Rotates (x, y, z) by the unit quaternion q = {w, x, y, z}.
function M.rotate(q, x, y, z)
  local w, a, b, c = q[1], q[2], q[3], q[4]
  local tx, ty, tz = 2 * (b * z - c * y), 2 * (c * x - a * z), 2 * (a * y - b * x)
  return x + w * tx + (b * tz - c * ty), y + w * ty + (c * tx - a * tz), z + w * tz + (a * ty - b * tx)
end

-- world:pair(a, b, {friction =, restitution =, collide = false}): what bodies a and b (bodies or
-- names) do when they touch, instead of the combination of their own values; each call replaces
-- the pair's earlier settings. collide = false lets the two pass through each other (no contact
-- of any kind, and their crossings are not counted or reported; docs/api.md).
function World:pair(a, b, opts)
  local function body_of(v, n)
    if type(v) == "string" then return self:body(v) end
    if type(v) == "table" and v.handle then return v end
    check.raise_n(n, "pair", "expected a body or a body's name, got " .. check.describe(v))
  end
  local A, B = body_of(a, 1), body_of(b, 2)
  opts = opts or {}
  if type(opts) ~= "table" then check.raise_n(3, "pair", "expected a table {friction =, restitution =, collide =}") end
  for k in pairs(opts) do
    if k ~= "friction" and k ~= "restitution" and k ~= "collide" then
      check.raise_n(3, "pair", ("unknown field '%s' (friction, restitution, collide)"):format(tostring(k)))
    end
  end
  local f, e = opts.friction, opts.restitution
  if f ~= nil and not (check.is_finite(f) and f >= 0) then check.raise_n(3, "pair", "'friction' must be a number >= 0") end
  if e ~= nil and not (check.is_finite(e) and e >= 0) then check.raise_n(3, "pair", "'restitution' must be a number >= 0") end
  if opts.collide ~= nil and type(opts.collide) ~= "boolean" then check.raise_n(3, "pair", "'collide' must be true or false") end
  if C.loom_world_pair(self._w, A.handle, B.handle, f or -1, e or -1, opts.collide == false and 0 or 1) ~= 0 then
    caller.error(last_error())
  end
end

-- world:rigid_forces() → the rigid forces in effect or to come: {id, body, kind, from, to, f, point}
function World:rigid_forces()
  local out = {}
  for i, e in ipairs(rawget(self, "_rforces") or {}) do
    out[i] = {id = e.id, body = e.body.name, kind = e.kind, from = e.from, to = e.to, f = {e.f[1], e.f[2], e.f[3]},
              point = e.point and {e.point[1], e.point[2], e.point[3]} or nil}
  end
  return out
end

-- world:remove_force(id) → true if a force with that id was in effect
function World:remove_force(id)
  local list = rawget(self, "_rforces") or {}
  for i, e in ipairs(list) do
    if e.id == id then
      table.remove(list, i)
      return true
    end
  end
  return false
end

-- The rigid forces as text (snapshots, checkpoints): "serial N", then one line per force: id,
-- kind, the body's name in hex, f, the point in the body's frame or "-", from, to or "-". Numbers
-- with 17 digits come back as the same doubles.
local function g17(v) return v == nil and "-" or ("%.17g"):format(v) end
function M.encode_forces(W, runtime_only)
  local out = {"serial " .. g17(rawget(W, "_force_serial") or 0)}
  for _, e in ipairs(rawget(W, "_rforces") or {}) do
    if not e.body.dead and (e.runtime or not runtime_only) then
      local p = e.point or {}
      out[#out + 1] = table.concat({g17(e.id), e.kind, util.hex(e.body.name), g17(e.f[1]), g17(e.f[2]), g17(e.f[3]),
                                    g17(p[1]), g17(p[2]), g17(p[3]), g17(e.from), g17(e.to)}, " ")
    end
  end
  return table.concat(out, "\n")
end

-- decode_forces(text) → {serial =, list}, or nil and what is wrong; nothing is changed.
function M.decode_forces(text)
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = line end
  local serial = tonumber((lines[1] or ""):match("^serial (%d+)$"))
  if not serial then return nil, "the rigid forces are damaged (no serial)" end
  local list, kinds = {}, {step = true, perpetual = true, temporal = true}
  for i = 2, #lines do
    local w = {}
    for word in lines[i]:gmatch("%S+") do w[#w + 1] = word end
    local function num(k) local v = tonumber(w[k]); return v and check.is_finite(v) and v or nil end
    local name = #w == 11 and w[3]:match("^%x*$") and #w[3] % 2 == 0 and
                 util.unhex(w[3]) or nil
    local id, f1, f2, f3, from = num(1), num(4), num(5), num(6), num(10)
    local p1, p2, p3, to = num(7), num(8), num(9), num(11)
    local point_ok = (w[7] == "-" and w[8] == "-" and w[9] == "-") or (p1 and p2 and p3)
    if not (name and id and kinds[w[2]] and f1 and f2 and f3 and from and point_ok and (w[11] == "-" or to)) then
      return nil, ("the rigid forces are damaged (line %d)"):format(i)
    end
    list[#list + 1] = {id = id, body = name, f = {f1, f2, f3}, point = p1 and {p1, p2, p3} or nil, from = from,
                       to = to, kind = w[2]}
  end
  return {serial = serial, list = list}
end

-- set_forces(W, decoded) → true, or nil and what is wrong (a body that is not a rigid body of W:
-- nothing is changed then).
local function body_named(W, name)
  local b = W._bodies[name]
  if b then return b end
  local h = C.loom_world_find(W._w, name)
  return h ~= 0 and wrap(W, h) or nil
end

function M.set_forces(W, forces)
  for _, e in ipairs(forces.list) do
    local b = body_named(W, e.body)
    if not b or b.kind ~= "rigid" then return nil, ("force %d acts on '%s', which is not a rigid body of this world"):format(e.id, e.body) end
  end
  for _, e in ipairs(forces.list) do e.body = body_named(W, e.body) end
  W._force_serial = forces.serial
  W._rforces = forces.list
  return true
end

-- Hot reload: the forces added while the old world ran (the force panel, a scene's on_step) as
-- text, M.runtime_forces(W_old), and their carrying into the new world after it adopted the old
-- one's state, M.carry_forces(W_new, text). The new build's own forces stay (an edited force in the
-- file takes effect); a carried force whose id the new world already uses gets the next free one,
-- and one on a body the new world has no dynamic rigid body of that name for is dropped. Returns
-- the number carried and the names of the bodies whose forces were dropped.
function M.runtime_forces(W) return M.encode_forces(W, true) end

function M.carry_forces(W, text)
  local decoded = text and M.decode_forces(text)
  if not decoded then return 0, {} end -- (nothing handed over)
  local list = rawget(W, "_rforces") or {}
  local used, serial = {}, math.max(rawget(W, "_force_serial") or 0, decoded.serial)
  for _, e in ipairs(list) do used[e.id] = true end
  local carried, dropped = 0, {}
  for _, e in ipairs(decoded.list) do
    local b = body_named(W, e.body)
    if b and b.kind == "rigid" and b.motion == "dynamic" then
      if used[e.id] then
        serial = serial + 1
        e.id = serial
      end
      serial = math.max(serial, e.id)
      used[e.id] = true
      e.body, e.runtime = b, true
      list[#list + 1] = e
      carried = carried + 1
    else
      dropped[#dropped + 1] = e.body
    end
  end
  W._rforces = list
  W._force_serial = serial
  return carried, dropped
end

-- The rigid forces' share of the step [t, t1]: each active force times the part of the step it
-- covers / dt; finished ones are dropped.
apply_rigid_forces = function(W, t, t1)
  local list = rawget(W, "_rforces")
  if not list or #list == 0 then return end
  local dt = t1 - t
  local keep = {}
  for _, e in ipairs(list) do
    local b = e.body
    if not b.dead then
      local a0 = math.max(t, e.from)
      local a1 = e.to and math.min(t1, e.to) or t1
      if a1 > a0 then
        local k = (a1 - a0) / dt
        tmp[0].x, tmp[0].y, tmp[0].z = e.f[1] * k, e.f[2] * k, e.f[3] * k
        local pp = nil
        if e.point then
          local p, q = b.position, b.orientation
          local x, y, z = M.rotate({q.w, q.x, q.y, q.z}, e.point[1], e.point[2], e.point[3])
          tmp[1].x, tmp[1].y, tmp[1].z = p.x + x, p.y + y, p.z + z
          pp = tmp + 1
        end
        if C.loom_rigid_apply(W._w, b.handle, tmp, pp, 0) ~= 0 then W:_callback_error(e, "force " .. e.id, last_error()) end
      end
      if e.to == nil or e.to > t1 then keep[#keep + 1] = e end
    end
  end
  W._rforces = keep
end

----------------------------------------------------------------------------------------------------
-- pin groups

GroupMT.__index = Group
GroupMT.__tostring = function(g) return ("loom.pin_group (%d vertices of '%s')"):format(g.count, g.body.name) end

-- group:follow(traj): traj(t) returns the offset x, y, z from the pinned rest positions at time t,
-- or nil/false to release the vertices (they are held again, where they are, when it returns
-- numbers again).
function Group:follow(traj)
  if not check.is_callable(traj) then
    check.raise_n(1, "follow", "expected a trajectory function, got " .. check.describe(traj))
  end
  local W = self.world
  self.traj = traj
  -- Start on the trajectory now so the first step does not jump.
  local ok, x, y, z = pcall(traj, W.time)
  if not ok then error(x, 0) end
  if x ~= nil and x ~= false then
    if not finite3(x, y, z) then check.raise_n(1, "follow", "the trajectory must return three finite numbers") end
    tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
    if C.loom_pins_set_offset(W._w, self.handle, tmp) ~= 0 then
      self.traj = nil
      check.raise_n(1, "follow", ("at t = %.4f the trajectory's %s"):format(W.time, last_error():gsub("^pins:set_offset: ", "")))
    end
  else
    C.loom_pins_release(W._w, self.handle)
  end
  local list = W._groups
  for i = 1, #list do if list[i] == self then return self end end
  list[#list + 1] = self
  return self
end

-- Re-evaluates the trajectory at the current time and moves the group there (after a reload).
function Group:resync()
  if not self.traj then return end
  local ok, x, y, z = pcall(self.traj, self.world.time)
  if ok and x ~= nil and x ~= false and finite3(x, y, z) then
    -- (a group carried over where its trajectory still puts it keeps its vertices' motion)
    C.loom_pins_offset(self.world._w, self.handle, tmp)
    if tmp[0].x == x and tmp[0].y == y and tmp[0].z == z then return end
    tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
    C.loom_pins_set_offset(self.world._w, self.handle, tmp)
  end
end

function Group:stop() self.traj = nil return self end
function Group:release() C.loom_pins_release(self.world._w, self.handle) return self end
function Group:hold() C.loom_pins_hold(self.world._w, self.handle) return self end
function Group:held() return C.loom_pins_held(self.world._w, self.handle) == 1 end
function Group:offset()
  C.loom_pins_offset(self.world._w, self.handle, tmp)
  return tmp[0].x, tmp[0].y, tmp[0].z
end
-- group:reaction() → x, y, z: the force (N) the pins exert on the cloth to hold it where it is: the
-- opposite of the model forces and weights of the pinned vertices at the current state (exact for
-- a cloth at rest; contact forces on pinned vertices are not included).
function Group:reaction()
  local b = self.body
  local f = b:internal_forces()
  local g = self.world.gravity
  local rx, ry, rz = 0, 0, 0
  for _, i in ipairs(self.indices) do
    local m = b.m[i]
    rx = rx - f[i].x - m * g[1]
    ry = ry - f[i].y - m * g[2]
    rz = rz - f[i].z - m * g[3]
  end
  return rx, ry, rz
end

function Group:set_offset(x, y, z)
  if not finite3(x, y, z) then check.raise("set_offset", "expected three finite numbers") end
  tmp[0].x, tmp[0].y, tmp[0].z = x, y, z
  if C.loom_pins_set_offset(self.world._w, self.handle, tmp) ~= 0 then
    check.raise("set_offset", (last_error():gsub("^pins:set_offset: ", "")))
  end
  return self
end

----------------------------------------------------------------------------------------------------
-- grips: pick up vertices at a time, carry them along a trajectory, let go at another

local GripMT = {}
local Grip = {}
GripMT.__index = Grip
GripMT.__tostring = function(g)
  return ("loom.grip (%d vertices of '%s', %s)"):format(g.count, g.body.name, g:state())
end
M.Grip = Grip

local grip_spec = {
  body = {"any", required = true},
  vertices = {"any", required = true},
  trajectory = {"callable", required = true},
  at = {"number"},
  release = {"number"},
}

-- world:grip{body = b | "name", vertices = {…}, trajectory = traj, at = t0, release = t2} → grip
-- From the step that ends at t0 (default: now) to the one that ends at t2 (default: never) the
-- vertices are held and carried: their positions are where they were picked up plus
-- traj(t) - traj(t0), and their velocities exactly its rate of change; after t2 they are free and
-- keep the velocity they had. Until t0 they move freely. Built on a pin group, so checkpoints and
-- hot reload keep it (the trajectory is a function of t only).
function World:grip(def)
  local d, err = check.fields(def, grip_spec)
  if not d then check.raise("grip", err) end
  local b = d.body
  if type(b) == "string" then
    b = self._bodies[b]
    if not b then check.raise("grip", ("'body': no body named %q"):format(d.body)) end
  end
  if getmetatable(b) ~= BodyMT or b.world ~= self or b.kind ~= "cloth" or b.dead then
    check.raise("grip", "'body' must be a cloth of this world (or its name), got " .. check.describe(d.body))
  end
  local now = self.time
  local t0 = d.at or now
  local t2 = d.release or math.huge
  if t0 < now - 1e-12 then
    check.raise("grip", ("'at' (%g s) is in the past (the world is at t = %g s)"):format(t0, now))
  end
  if not (t2 > t0) then
    check.raise("grip", ("'release' (%g s) must come after the pick-up 'at' (%g s)"):format(t2, t0))
  end
  local traj = d.trajectory
  local ok, x0, y0, z0 = pcall(traj, t0)
  if not ok then check.raise("grip", "'trajectory' failed at t = " .. t0 .. ": " .. tostring(x0)) end
  if not finite3(x0, y0, z0) then
    check.raise("grip", ("'trajectory' must return three finite numbers (an offset in m), got %s, %s, %s at t = %g"):format(
      check.describe(x0), check.describe(y0), check.describe(z0), t0))
  end
  -- pinning stops the vertices; a grip that waits gives them their velocities back
  local saved
  if type(d.vertices) == "table" then
    saved = {}
    for k, i in ipairs(d.vertices) do
      if type(i) == "number" and i >= 0 and i < b.n and i == math.floor(i) then
        local v = b.v[i]
        saved[k] = {i, v.x, v.y, v.z}
      end
    end
  end
  local okp, group = pcall(Body.pin, b, d.vertices)
  if not okp then check.raise("grip", "'vertices': " .. tostring(group):gsub("^.-bad argument #1 to 'pin' %((.*)%)$", "%1")) end
  -- steps end on multiples of dt: a tolerance of a thousandth of a step absorbs the rounding
  local eps = 1e-3 * C.loom_world_dt(self._w)
  local function carried(t)
    if t < t0 - eps or t > t2 + eps then return nil end
    local x, y, z = traj(t)
    if x == nil then return nil end
    if not finite3(x, y, z) then return x, y, z end -- drive_pins reports it
    return x - x0, y - y0, z - z0
  end
  group.label = ("trajectory of a grip on '%s'"):format(b.name)
  if t0 > now + eps then
    group:release()
    for _, e in ipairs(saved or {}) do b.v[e[1]].x, b.v[e[1]].y, b.v[e[1]].z = e[2], e[3], e[4] end
  end
  group:follow(carried)
  return setmetatable({world = self, body = b, group = group, count = group.count, at = t0, release_at = t2}, GripMT)
end

-- grip:state() → "waiting" (before at), "holding" or "released"
function Grip:state()
  if self.group:held() then return "holding" end
  return self.world.time < self.at - 1e-3 * C.loom_world_dt(self.world._w) and "waiting" or "released"
end

-- grip:release(): lets go now (the vertices keep their velocity)
function Grip:release()
  self.group:stop()
  self.group:release()
  self.release_at = math.min(self.release_at, self.world.time)
  return self
end

return M
