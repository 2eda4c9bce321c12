// bullet_fold.cpp — the peers' self-collision benchmark in Bullet's soft-body cloth (BulletSoftBody,
// as packaged by Debian: libbullet-dev, single precision), the twin of scripts/peers/loom_fold.lua.
// Built and run by scripts/peers/fold.sh.
//
// Scene: the folded cloth loom_fold.lua --export writes (an N x N vertex sheet, 1 m x 1 m, 1 kg,
// folded in two, the upper half 5 cm above the lower one, 1 cm above a floor), the floor a static
// box whose top is z = 0; z up, gravity -9.81, dt = 1/240.
//
// Bullet settings: the cloth configuration of bullet_cloth.cpp (structural kLST 1, distance-2
// bending links with kLST 0.4, 10 position iterations, friction 0.5, margin 0.3 x grid spacing,
// sparse-SDF voxel 0.025 m), built from the same triangles (CreateFromTriMesh), and self-collision
// the way Bullet offers it for cloth: one cluster per triangle (generateClusters(0)) and the
// cluster soft-soft and self flags (CL_SS | CL_SELF, rigid contacts by SDF_RS), with the world
// subclass below that makes the step run it. --no-self leaves the clusters out.
//
// Usage: bullet_fold MESH.txt [--seconds T] [--runs R] [--no-self] [--dump STATES.txt] [--every K]
//
// One untimed run first (it warms caches; with --dump it writes the state every K steps (default
// 10) and at the end, for loom_fold.lua --check to count crossings with Loom's exact test), then R
// timed runs, each on a fresh world, timing only the stepping. Prints one JSON object; the exit
// status is 1 if any vertex position became NaN or infinite.
#include <btBulletDynamicsCommon.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyInternals.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr double kDt = 1.0 / 240.0;

struct Options {
  std::string mesh, dump;
  double seconds = 1;
  int runs = 3, every = 10;
  bool self = true;
};

struct Mesh {
  int n = 0;
  std::vector<btScalar> x;  // 3 per vertex
  std::vector<int> tri;     // 3 per triangle
};

[[noreturn]] void usage(const std::string &msg) {
  std::fprintf(stderr,
               "bullet_fold: %s\nusage: bullet_fold MESH.txt [--seconds T] [--runs R] [--no-self] [--dump STATES.txt] "
               "[--every K]\n",
               msg.c_str());
  std::exit(2);
}

Mesh read_mesh(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "r");
  if (!f) usage("cannot open " + path);
  Mesh m;
  int nv = 0, nt = 0;
  if (std::fscanf(f, "%d %d %d", &m.n, &nv, &nt) != 3 || m.n < 2 || nv != m.n * m.n || nt < 1)
    usage("bad mesh header in " + path);
  for (int i = 0; i < 3 * nv; i++) {
    double v;
    if (std::fscanf(f, "%lf", &v) != 1) usage("bad vertex in " + path);
    m.x.push_back(btScalar(v));
  }
  for (int i = 0; i < 3 * nt; i++) {
    int k;
    if (std::fscanf(f, "%d", &k) != 1 || k < 0 || k >= nv) usage("bad triangle in " + path);
    m.tri.push_back(k);
  }
  std::fclose(f);
  return m;
}

// Bullet 3.24's soft-rigid world calls each soft body's collision handler with the body itself at
// the end of its step, for cluster self-collision; but the handler switches on the soft-soft bits
// of the flags, which with CL_SELF set (CL_SS | CL_SELF) match none of its cases, so nothing
// happens. This world runs the cluster collider that case means to run, at the same point of the
// step (its contacts are solved with the next step's clusters, as the handler's would be).
class SelfCollidingWorld : public btSoftRigidDynamicsWorld {
 public:
  using btSoftRigidDynamicsWorld::btSoftRigidDynamicsWorld;

 protected:
  void internalSingleStepSimulation(btScalar dt) override {
    btSoftRigidDynamicsWorld::internalSingleStepSimulation(dt);
    btSoftBodyArray &bodies = getSoftBodyArray();
    for (int i = 0; i < bodies.size(); i++) {
      btSoftBody *psb = bodies[i];
      if (!(psb->m_cfg.collisions & btSoftBody::fCollision::CL_SELF)) continue;
      btSoftColliders::CollideCL_SS collide;
      collide.ProcessSoftSoft(psb, psb);
    }
  }
};

class Scene {
 public:
  Scene(const Options &o, const Mesh &m) {
    config_ = std::make_unique<btSoftBodyRigidBodyCollisionConfiguration>();
    dispatcher_ = std::make_unique<btCollisionDispatcher>(config_.get());
    broadphase_ = std::make_unique<btDbvtBroadphase>();
    solver_ = std::make_unique<btSequentialImpulseConstraintSolver>();
    world_ = std::make_unique<SelfCollidingWorld>(dispatcher_.get(), broadphase_.get(), solver_.get(), config_.get());
    const btVector3 g(0, 0, btScalar(-9.81));
    world_->setGravity(g);
    btSoftBodyWorldInfo &wi = world_->getWorldInfo();
    wi.m_gravity = g;
    wi.m_sparsesdf.setDefaultVoxelsz(btScalar(0.025));
    wi.m_sparsesdf.Reset();

    floor_shape_ = std::make_unique<btBoxShape>(btVector3(1.5, 1.5, 0.05));
    btTransform t;
    t.setIdentity();
    t.setOrigin(btVector3(0, 0, btScalar(-0.05)));
    motion_ = std::make_unique<btDefaultMotionState>(t);
    btRigidBody::btRigidBodyConstructionInfo ci(0, motion_.get(), floor_shape_.get());
    ci.m_friction = 1;  // a cloth-rigid contact uses kDF x this: the cloth's 0.5
    floor_ = std::make_unique<btRigidBody>(ci);
    world_->addRigidBody(floor_.get());

    cloth_.reset(btSoftBodyHelpers::CreateFromTriMesh(wi, m.x.data(), m.tri.data(), int(m.tri.size() / 3)));
    btSoftBody &c = *cloth_;
    c.m_materials[0]->m_kLST = 1;
    btSoftBody::Material *bend = c.appendMaterial();
    bend->m_kLST = btScalar(0.4);
    c.generateBendingConstraints(2, bend);
    c.m_cfg.piterations = 10;
    c.m_cfg.kDF = btScalar(0.5);
    c.getCollisionShape()->setMargin(btScalar(0.3 / (m.n - 1)));
    c.setTotalMass(1, true);
    if (o.self) {
      c.m_cfg.collisions = btSoftBody::fCollision::SDF_RS | btSoftBody::fCollision::CL_SS | btSoftBody::fCollision::CL_SELF;
      c.generateClusters(0);
    }
    world_->addSoftBody(cloth_.get());
  }

  ~Scene() {
    world_->removeSoftBody(cloth_.get());
    world_->removeRigidBody(floor_.get());
  }

  Scene(const Scene &) = delete;
  Scene &operator=(const Scene &) = delete;

  void step() {
    world_->stepSimulation(btScalar(kDt), 0);  // one internal step of exactly dt
    world_->getWorldInfo().m_sparsesdf.GarbageCollect();
  }

  bool finite() const {
    const btSoftBody &c = *cloth_;
    for (int i = 0; i < c.m_nodes.size(); i++) {
      const btVector3 &x = c.m_nodes[i].m_x;
      if (!std::isfinite(x.x()) || !std::isfinite(x.y()) || !std::isfinite(x.z())) return false;
    }
    return true;
  }

  void dump(FILE *f, int step) const {
    const btSoftBody &c = *cloth_;
    std::fprintf(f, "state %d\n", step);
    for (int i = 0; i < c.m_nodes.size(); i++) {
      const btVector3 &x = c.m_nodes[i].m_x;
      std::fprintf(f, "%.9g %.9g %.9g\n", double(x.x()), double(x.y()), double(x.z()));
    }
  }

  int clusters() const { return cloth_->m_clusters.size(); }

 private:
  std::unique_ptr<btSoftBodyRigidBodyCollisionConfiguration> config_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btDbvtBroadphase> broadphase_;
  std::unique_ptr<btSequentialImpulseConstraintSolver> solver_;
  std::unique_ptr<SelfCollidingWorld> world_;
  std::unique_ptr<btBoxShape> floor_shape_;
  std::unique_ptr<btDefaultMotionState> motion_;
  std::unique_ptr<btRigidBody> floor_;
  std::unique_ptr<btSoftBody> cloth_;
};

double parse_num(const char *s, double lo, double hi, const char *what) {
  char *end = nullptr;
  const double v = std::strtod(s, &end);
  if (!*s || *end || !(v >= lo && v <= hi)) usage(std::string("bad ") + what + " '" + s + "'");
  return v;
}

Options parse(int argc, char **argv) {
  if (argc < 2) usage("need the mesh file (loom_fold.lua N --export MESH.txt)");
  Options o;
  o.mesh = argv[1];
  for (int i = 2; i < argc; i++) {
    const std::string k = argv[i];
    if (k == "--no-self") {
      o.self = false;
      continue;
    }
    if (i + 1 >= argc) usage("option " + k + " needs a value");
    if (k == "--seconds") o.seconds = parse_num(argv[++i], 1e-3, 60, "--seconds");
    else if (k == "--runs") o.runs = int(parse_num(argv[++i], 1, 100, "--runs"));
    else if (k == "--every") o.every = int(parse_num(argv[++i], 1, 1000000, "--every"));
    else if (k == "--dump") o.dump = argv[++i];
    else usage("unknown option " + k);
  }
  return o;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

}  // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  const Mesh m = read_mesh(o.mesh);
  const int steps = std::max(1, int(std::lround(o.seconds / kDt)));

  // Untimed run: warm-up, NaN check after every step, the states for Loom's crossing test.
  bool finite = true;
  int nan_step = -1, clusters = 0;
  {
    FILE *f = o.dump.empty() ? nullptr : std::fopen(o.dump.c_str(), "w");
    if (!o.dump.empty() && !f) usage("cannot write " + o.dump);
    Scene s(o, m);
    clusters = s.clusters();
    for (int k = 1; k <= steps; k++) {
      s.step();
      if (finite && !s.finite()) {
        finite = false;
        nan_step = k;
      }
      if (f && finite && (k % o.every == 0 || k == steps)) s.dump(f, k);
    }
    if (f) std::fclose(f);
  }

  // Timed runs: a fresh world each, only the stepping timed.
  std::vector<double> ms;
  for (int r = 0; r < o.runs && finite; r++) {
    Scene s(o, m);
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < steps; k++) s.step();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / steps);
  }

  char version[16];
  std::snprintf(version, sizeof version, "%d.%02d", btGetVersion() / 100, btGetVersion() % 100);
  std::printf("{\"engine\":\"bullet\",\"version\":\"%s\",\"n\":%d,\"self\":%s,\"clusters\":%d,\"dt\":%.9g,\"steps\":%d,"
              "\"runs\":%d",
              version, m.n, o.self ? "true" : "false", clusters, kDt, steps, int(ms.size()));
  if (!ms.empty())
    std::printf(",\"ms_per_step_median\":%.6g,\"min\":%.6g,\"max\":%.6g,\"ms_per_simulated_s\":%.1f", median(ms),
                *std::min_element(ms.begin(), ms.end()), *std::max_element(ms.begin(), ms.end()), median(ms) / kDt);
  std::printf(",\"nan\":%s,\"nan_step\":%d}\n", finite ? "false" : "true", nan_step);
  return finite ? 0 : 1;
}
