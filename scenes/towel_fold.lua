-- A robot folds a towel in half (document 000's manipulation): the towel settles on a table, two
-- grips pick up its near corners at `at`, carry them over an arc about the fold line and lay them
-- on the far corners, and let go. Baraff–Witkin cloth with the implicit integrator at one step per
-- frame (dt = 1/60 s); the grips are world:grip, so they are exact velocity constraints in the
-- solve and survive checkpoints and hot reload.
-- Self-collision (on by default) keeps the folded half a thickness above the half below it; the
-- table keeps both above it.
--   --param at=0.5 (s, pick-up), --param carry=2 (s, duration of the arc), --param cells=24
local loom = require "loom"

local scene = loom.scene {
  title  = "Towel fold",
  dt     = 1 / 60,
  params = { at = 0.5, carry = 2.0, cells = 24, size = 0.5 },
  camera = { target = {0, 0, 0.8}, distance = 1.6, azimuth = 35, elevation = 35 },
}

local TABLE_TOP = 0.75

-- Minimum-jerk progress s(t) from 0 at t0 to 1 at t1 (zero velocity and acceleration at both ends).
local function progress(t, t0, t1)
  local u = (t - t0) / (t1 - t0)
  if u <= 0 then return 0 elseif u >= 1 then return 1 end
  return u * u * u * (10 - 15 * u + 6 * u * u)
end

function scene.build(world, p)
  world:rigid { name = "table", shape = loom.shape.box(0.45, 0.45, 0.05), position = {0, 0, TABLE_TOP - 0.05},
                static = true, friction = 0.6 }
  local half, thick = p.size / 2, 0.004
  local towel = world:cloth {
    name = "towel", model = "baraff_witkin", integrator = "implicit",
    mesh = loom.mesh.grid { size = {p.size, p.size}, cells = {p.cells, p.cells}, center = {0, 0, TABLE_TOP + thick + 0.002} },
    stretch = 5000, shear = 500, bend = 5e-5, density = 0.35, thickness = thick, friction = 0.6,
  }
  -- each near corner turns half a circle about the fold line y = 0 and lands a layer above the far one
  local t0, t1 = p.at, p.at + p.carry
  local function arc(t)
    local s = progress(t, t0, t1)
    local a = math.pi * s
    return 0, half - half * math.cos(a), half * math.sin(a) + 2 * thick * s
  end
  for _, x in ipairs {-half, half} do
    world:grip { body = towel, vertices = {towel:vertex_near {x, -half, TABLE_TOP}}, trajectory = arc,
                 at = t0, release = t1 + 0.2 }
  end
end

function scene.ui(ui, world)
  local st = world:stats()
  ui.text(("t = %.2f s   %d CG iterations   %d contacts"):format(world.time, st.iterations, st.contacts))
end

return scene
