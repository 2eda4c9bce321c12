// bullet_scene.cpp — a Loom scene of rigid bodies (written by export_scene.lua) in Bullet: the same
// shapes, masses, inertias (the diagonal of Loom's), poses and friction (Bullet multiplies the two
// bodies' coefficients; Loom takes sqrt(mu_a mu_b), so each body gets the square root of its own).
// Cylinders are Bullet's exact ones (Loom's are 24-sided prisms), convex shapes btConvexHullShape
// over the hull's vertices with a 4 mm collision margin: Bullet's default 4 cm is added around a
// hull, which made the 8 cm rocks of hull_pile start inside each other and thrown out of the bin. Bullet's defaults otherwise: sequential impulses with 10 iterations,
// split impulse, deactivation after 2 s of rest; one substep per step.
//
//   bullet_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME]
//
// Prints one JSON line: ms per step over the first 2 s (median of R runs after a warm-up, a fresh
// world each), then, continuing the last run to 10 s, the bodies lost (centre below z = -1 m: out
// of the bin and falling; the scenes' floors are at z = 0) and, of the others, the largest
// distance one moved in the last second (creep), how many are still active, and the lowest and
// highest centre.
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

struct BodyDef {
  std::string name, kind, shape;
  double mass = 0, inertia[3] = {0, 0, 0}, friction = 0.3, restitution = 0, pos[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
  std::vector<double> params;
};

struct SceneDef {
  double gravity[3] = {0, 0, -9.81};
  std::vector<BodyDef> bodies;
};

static bool load(const char *path, SceneDef &s) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "gravity") {
      ls >> s.gravity[0] >> s.gravity[1] >> s.gravity[2];
    } else if (tag == "body") {
      BodyDef b;
      ls >> b.name >> b.kind >> b.mass >> b.inertia[0] >> b.inertia[1] >> b.inertia[2] >> b.friction >> b.restitution >>
          b.pos[0] >> b.pos[1] >> b.pos[2] >> b.q[0] >> b.q[1] >> b.q[2] >> b.q[3] >> b.shape;
      double x;
      while (ls >> x) b.params.push_back(x);
      if (!ls.eof() || b.shape.empty()) {
        fprintf(stderr, "bullet_scene: %s: bad line: %s\n", path, line.c_str());
        return false;
      }
      s.bodies.push_back(b);
    }
  }
  return !s.bodies.empty();
}

struct World {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<btRigidBody *> dynamic;

  explicit World(const SceneDef &s) {
    world.setGravity(btVector3(s.gravity[0], s.gravity[1], s.gravity[2]));
    for (const BodyDef &b : s.bodies) {
      btCollisionShape *shape = nullptr;
      const std::vector<double> &p = b.params;
      if (b.shape == "sphere") {
        shape = new btSphereShape(p[0]);
      } else if (b.shape == "box") {
        shape = new btBoxShape(btVector3(p[0], p[1], p[2]));
      } else if (b.shape == "cylinder") {
        shape = new btCylinderShapeZ(btVector3(p[0], p[0], p[1]));
      } else if (b.shape == "capsule") {
        shape = new btCapsuleShapeZ(p[0], 2 * p[1]);
      } else if (b.shape == "convex") {
        btConvexHullShape *h = new btConvexHullShape();
        const int n = (int)p[0]; // (the triangles after the vertices are not needed)
        for (int i = 0; i < n; i++) h->addPoint(btVector3(p[1 + 3 * i], p[2 + 3 * i], p[3 + 3 * i]), false);
        h->setMargin(0.004f); // (the default 4 cm, added around the hull, made the rocks start inside each other)
        h->recalcLocalAabb();
        shape = h;
      } else {
        fprintf(stderr, "bullet_scene: body %s: unknown shape %s\n", b.name.c_str(), b.shape.c_str());
        exit(1);
      }
      shapes.emplace_back(shape);
      const bool dyn = b.kind == "dynamic";
      btTransform t(btQuaternion(b.q[1], b.q[2], b.q[3], b.q[0]), btVector3(b.pos[0], b.pos[1], b.pos[2]));
      states.emplace_back(new btDefaultMotionState(t));
      btVector3 inertia = dyn ? btVector3(b.inertia[0], b.inertia[1], b.inertia[2]) : btVector3(0, 0, 0);
      btRigidBody::btRigidBodyConstructionInfo info(dyn ? b.mass : 0, states.back().get(), shape, inertia);
      info.m_friction = std::sqrt(b.friction);
      info.m_restitution = b.restitution;
      bodies.emplace_back(new btRigidBody(info));
      world.addRigidBody(bodies.back().get());
      if (dyn) dynamic.push_back(bodies.back().get());
    }
  }
};

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bullet_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME]\n");
    return 2;
  }
  const char *path = argv[1], *name = argv[1];
  const double dt = 1.0 / atof(argv[2]);
  int runs = 3;
  for (int i = 3; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--name")) name = argv[i + 1];
  }
  SceneDef s;
  if (!load(path, s)) {
    fprintf(stderr, "bullet_scene: cannot read %s\n", path);
    return 1;
  }
  const int steps2 = (int)std::lround(2 / dt), steps9 = (int)std::lround(9 / dt), steps10 = (int)std::lround(10 / dt);
  std::vector<double> ms;
  double creep = 0, low = 1e9, high = -1e9;
  int active = 0, lost = 0;
  for (int r = 0; r <= runs; r++) {
    World w(s);
    auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps2; k++) w.world.stepSimulation((btScalar)dt, 0);
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r > 0) ms.push_back(el / steps2 * 1000); // run 0 is the warm-up
    if (r < runs) continue;
    for (int k = steps2; k < steps9; k++) w.world.stepSimulation((btScalar)dt, 0);
    std::vector<btVector3> before;
    for (btRigidBody *b : w.dynamic) before.push_back(b->getWorldTransform().getOrigin());
    for (int k = steps9; k < steps10; k++) w.world.stepSimulation((btScalar)dt, 0);
    for (size_t i = 0; i < w.dynamic.size(); i++) {
      const double z = w.dynamic[i]->getWorldTransform().getOrigin().z();
      if (z < -1) { // fell out of the scene
        lost++;
        continue;
      }
      creep = std::max(creep, (double)(w.dynamic[i]->getWorldTransform().getOrigin() - before[i]).length());
      active += w.dynamic[i]->isActive();
      low = std::min(low, z), high = std::max(high, z);
    }
  }
  std::sort(ms.begin(), ms.end());
  printf("{\"engine\":\"bullet\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"lost\":%d,\"creep_mm_last_second\":%.3f,\"active_after_10s\":%d,\"centre_z_min\":%.4f,\"centre_z_max\":%.4f}\n",
         name, 1 / dt, ms[ms.size() / 2], ms.front(), ms.back(), lost, creep * 1000, active, low, high);
  return 0;
}
