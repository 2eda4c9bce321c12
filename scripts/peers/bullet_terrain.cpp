// bullet_terrain.cpp — Bullet's rigid bodies on Loom's terrain benchmark (loom bench terrain_60,
// scenes/terrain.lua): a static triangle mesh of 40 x 40 cells over 8 m (height 0.06 (x^2 + y^2)
// + 0.15 sin 2.1x cos 1.7y, each cell split along the same diagonal as Loom's), and 60 bodies of
// density 800 dropped on it along a sunflower spiral: boxes of half extents 0.15, 0.1, 0.08,
// cylinders of radius 0.1 and half height 0.12 (Bullet's exact cylinder; Loom's is a 24-sided
// prism) and rocks, the hull of a 7-segment, 4-ring sphere of radius 0.14 scaled by (1, 0.8, 0.6),
// with Loom's masses. Friction 0.5 as Loom combines it (sqrt(mu_a mu_b)): Bullet multiplies the
// two, so each body gets sqrt(0.5). Bullet's defaults otherwise (btBvhTriangleMeshShape, sequential
// impulse solver, 10 iterations, deactivation after 2 s of rest), one substep per 1/60 s step.
//
//   bullet_terrain [--runs R]
//
// Prints one JSON line: ms per step over the first 2 s (median of R runs after one warm-up, a
// fresh world each), how many bodies are still awake after 20 s, and the lowest body centre above
// the ground under it.
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

static double height(double x, double y) { return 0.06 * (x * x + y * y) + 0.15 * std::sin(2.1 * x) * std::cos(1.7 * y); }

struct Terrain {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  btTriangleMesh mesh;
  std::unique_ptr<btBvhTriangleMeshShape> ground_shape;
  btBoxShape box_shape{btVector3(0.15, 0.1, 0.08)};
  btCylinderShapeZ cylinder_shape{btVector3(0.1, 0.1, 0.12)};
  btConvexHullShape rock_shape;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> bodies;

  btRigidBody *add(btCollisionShape *shape, double mass, btVector3 at, btQuaternion q, double friction) {
    btTransform t(q, at);
    states.emplace_back(new btDefaultMotionState(t));
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shape->calculateLocalInertia(mass, inertia);
    btRigidBody::btRigidBodyConstructionInfo info(mass, states.back().get(), shape, inertia);
    info.m_friction = friction;
    info.m_restitution = 0;
    bodies.emplace_back(new btRigidBody(info));
    world.addRigidBody(bodies.back().get());
    return bodies.back().get();
  }

  Terrain() {
    world.setGravity(btVector3(0, 0, -9.81));
    const int n = 40;
    const double size = 8;
    std::vector<btVector3> v;
    for (int j = 0; j <= n; j++)
      for (int i = 0; i <= n; i++) {
        double x = (double(i) / n - 0.5) * size, y = (double(j) / n - 0.5) * size;
        v.emplace_back(x, y, height(x, y));
      }
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        int a = j * (n + 1) + i, b = a + 1, c = a + n + 1, d = b + n + 1;
        mesh.addTriangle(v[a], v[b], v[d]);
        mesh.addTriangle(v[a], v[d], v[c]);
      }
    ground_shape.reset(new btBvhTriangleMeshShape(&mesh, true));
    add(ground_shape.get(), 0, btVector3(0, 0, 0), btQuaternion(0, 0, 0, 1), std::sqrt(0.5));
    // the rock: loom.mesh.sphere{radius = 0.14, segments = 7, rings = 4} scaled (1, 0.8, 0.6)
    const double r = 0.14, pi = std::acos(-1.0);
    rock_shape.addPoint(btVector3(0, 0, 0.6 * r), false);
    rock_shape.addPoint(btVector3(0, 0, -0.6 * r), false);
    for (int k = 1; k < 4; k++)
      for (int j = 0; j < 7; j++) {
        double th = pi * k / 4, phi = 2 * pi * j / 7;
        rock_shape.addPoint(btVector3(r * std::sin(th) * std::cos(phi), 0.8 * r * std::sin(th) * std::sin(phi),
                                      0.6 * r * std::cos(th)),
                            false);
      }
    rock_shape.recalcLocalAabb();
    const double mass[3] = {7.68, 6.0318578948924, 3.2814512649673}; // Loom's (body:mass)
    btCollisionShape *shapes[3] = {&box_shape, &cylinder_shape, &rock_shape};
    const int count = 60;
    for (int k = 0; k < count; k++) {
      double a = 2.39996 * k, rr = 3.3 * std::sqrt((k + 0.5) / count);
      double x = rr * std::cos(a), y = rr * std::sin(a);
      btQuaternion q(std::sin(a / 2) * 0.6, std::sin(a / 2) * 0.8, 0, std::cos(a / 2)); // (x, y, z, w)
      add(shapes[k % 3], mass[k % 3], btVector3(x, y, height(x, y) + 0.4 + 0.05 * (k % 5)), q, std::sqrt(0.5));
    }
  }
};

int main(int argc, char **argv) {
  int runs = 3;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
  const double dt = 1.0 / 60;
  std::vector<double> ms;
  int awake = 0;
  double lowest = 0;
  for (int r = 0; r <= runs; r++) {
    Terrain s;
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < 120; k++) s.world.stepSimulation((btScalar)dt, 0);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int k = 120; k < 1200; k++) s.world.stepSimulation((btScalar)dt, 0);
    awake = 0;
    lowest = 1e9;
    for (size_t i = 1; i < s.bodies.size(); i++) {
      const btVector3 p = s.bodies[i]->getWorldTransform().getOrigin();
      awake += s.bodies[i]->isActive();
      lowest = std::min(lowest, (double)p.z() - height(p.x(), p.y()));
    }
    if (r > 0) ms.push_back(el / 120 * 1000); // run 0 is the warm-up
  }
  std::sort(ms.begin(), ms.end());
  printf("{\"engine\":\"bullet\",\"case\":\"terrain_60\",\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"awake_after_20s\":%d,\"lowest_centre_m\":%.4f}\n",
         ms[ms.size() / 2], ms.front(), ms.back(), awake, lowest);
  return 0;
}
