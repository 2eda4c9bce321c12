// bullet_stack.cpp — Bullet's rigid bodies on Loom's stack benchmarks (loom bench tower_10,
// pyramid_210): 0.2 m cubes, density 1000 (8 kg), friction 0.5, restitution 0, on a static ground
// box; the pyramid's boxes 2 mm apart in a row. Bullet's defaults otherwise (sequential impulse
// solver, 10 iterations, split impulse for penetration, deactivation after 2 s of rest), one
// substep per step (maxSubSteps 0: the step is the given dt, as Loom's).
//
//   bullet_stack tower|pyramid DT_INVERSE [--runs R]
//
// Prints one JSON line: ms per step over the first 2 s (median of R runs after one warm-up, a
// fresh world each) and the largest distance any box moved from where it was placed after 10 s.
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

struct Stack {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  btBoxShape ground_shape{btVector3(20, 20, 0.5)};
  btBoxShape box_shape{btVector3(0.1, 0.1, 0.1)};
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<btVector3> start;

  btRigidBody *add(btCollisionShape *shape, double mass, btVector3 at) {
    btTransform t;
    t.setIdentity();
    t.setOrigin(at);
    states.emplace_back(new btDefaultMotionState(t));
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shape->calculateLocalInertia(mass, inertia);
    btRigidBody::btRigidBodyConstructionInfo info(mass, states.back().get(), shape, inertia);
    info.m_friction = 0.5;
    info.m_restitution = 0;
    bodies.emplace_back(new btRigidBody(info));
    world.addRigidBody(bodies.back().get());
    return bodies.back().get();
  }

  explicit Stack(bool tower) {
    world.setGravity(btVector3(0, 0, -9.81));
    add(&ground_shape, 0, btVector3(0, 0, -0.5));
    if (tower) {
      for (int i = 0; i < 10; i++) start.emplace_back(0, 0, 0.1 + 0.2 * i);
    } else {
      for (int row = 0; row < 20; row++)
        for (int i = 0; i < 20 - row; i++) start.emplace_back((i - (19 - row) / 2.0) * 0.202, 0, 0.1 + 0.2 * row);
    }
    for (const btVector3 &p : start) add(&box_shape, 8.0, p);
  }

  double drift() const {
    double worst = 0;
    for (size_t i = 0; i < start.size(); i++)
      worst = std::max(worst, (double)(bodies[i + 1]->getWorldTransform().getOrigin() - start[i]).length());
    return worst;
  }
};

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "tower") && strcmp(argv[1], "pyramid"))) {
    fprintf(stderr, "usage: bullet_stack tower|pyramid DT_INVERSE [--runs R]\n");
    return 2;
  }
  const bool tower = !strcmp(argv[1], "tower");
  const double dt = 1.0 / atof(argv[2]);
  int runs = 3;
  for (int i = 3; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
  const int steps2 = (int)std::lround(2 / dt), steps10 = (int)std::lround(10 / dt);
  std::vector<double> ms;
  double drift = 0;
  for (int r = 0; r <= runs; r++) {
    Stack s(tower);
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps2; k++) s.world.stepSimulation((btScalar)dt, 0);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int k = steps2; k < steps10; k++) s.world.stepSimulation((btScalar)dt, 0);
    drift = s.drift();
    if (r > 0) ms.push_back(el / steps2 * 1000); // run 0 is the warm-up
  }
  std::sort(ms.begin(), ms.end());
  printf("{\"engine\":\"bullet\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"drift_mm\":%.3f}\n",
         argv[1], 1 / dt, ms[ms.size() / 2], ms.front(), ms.back(), drift * 1000);
  return 0;
}
