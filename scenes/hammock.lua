-- A ball dropped into a hammock: a square cloth pinned at its four corners catches a 2 kg ball,
-- which comes to rest in it. The cloth carries the ball (its contacts are constraints of the
-- implicit solve, the ball one of its unknowns), so the pins hold the weight of ball and cloth.
--   --param mass=2 (kg), --param cells=24, --param stretch=20000 (N/m), --param friction=0.5
local loom = require "loom"

local scene = loom.scene {
  title  = "Hammock",
  dt     = 1 / 240,
  params = { mass = 2, cells = 24, stretch = 20000, friction = 0.5, drop = 0.3 },
  camera = { target = {0, 0, 0.9}, distance = 2.2, azimuth = 30, elevation = 20 },
}

local pins -- the corners' pin group (its reaction is the load the hammock hangs from)

function scene.build(world, p)
  local cloth = world:cloth {
    name = "hammock", model = "baraff_witkin", integrator = "implicit", density = 0.3,
    stretch = p.stretch, shear = p.stretch / 10, damping = 0.01, thickness = 0.01, friction = p.friction,
    mesh = loom.mesh.grid { size = {1, 1}, cells = {p.cells, p.cells}, center = {0, 0, 1} },
  }
  local corners = {}
  for _, c in ipairs { {-0.5, -0.5}, {0.5, -0.5}, {-0.5, 0.5}, {0.5, 0.5} } do
    corners[#corners + 1] = cloth:vertex_near { c[1], c[2], 1 }
  end
  pins = cloth:pin(corners)
  world:rigid { name = "ball", shape = loom.shape.sphere(0.12), mass = p.mass, friction = p.friction,
                angular_damping = 0.5, position = {0, 0, 1 + 0.12 + p.drop} }
end

function scene.ui(ui, world)
  local ball = world:body "ball"
  local cloth = world:body "hammock"
  local _, _, rz = pins:reaction()
  local weight = ball.mass
  for i = 0, cloth.n - 1 do weight = weight + cloth.m[i] end
  weight = weight * 9.81
  ui.text(("t = %.2f s   ball at z = %.3f m, |v| = %.3f m/s   pins carry %.1f N of %.1f N"):format(
    world.time, ball.position.z, math.sqrt(ball.velocity.x ^ 2 + ball.velocity.y ^ 2 + ball.velocity.z ^ 2), rz, weight))
end

return scene
