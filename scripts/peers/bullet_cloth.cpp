// bullet_cloth.cpp — the peers cloth benchmark in Bullet's soft-body cloth (BulletSoftBody, as
// packaged by Debian: libbullet-dev, single precision). Built and run by scripts/peers/run.sh.
//
// Scene (the twin of scripts/peers/loom_cloth.lua): an N x N vertex cloth, 1 m x 1 m, flat at
// z = 1, pinned at (-0.5, -0.5, 1) and (0.5, -0.5, 1), total mass 1 kg, optionally falling on a
// static sphere r = 0.3 at (0, 0, 0.6); z up, gravity -9.81, dt = 1/240.
//
// Bullet settings (the fair configuration the reference peer figures used): CreatePatch with
// diagonal links, structural kLST 1, distance-2 bending links with kLST 0.4, 10 position
// iterations, friction 0.5, collision margin 0.3 x grid spacing, sparse-SDF voxel 0.025 m.
// Everything else is Bullet's default.
//
// Usage: bullet_cloth N sphere|free [--steps S] [--iterations I] [--runs R]
//
// One untimed run first (it warms caches and records the quality figures step by step), then R
// timed runs, each on a fresh world, timing only the stepping. Prints one JSON object; the exit
// status is 1 if any vertex position became NaN or infinite.
#include <btBulletDynamicsCommon.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
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
constexpr double kRadius = 0.3;
constexpr double kCenter[3] = {0, 0, 0.6};

struct Options {
  int n = 32;
  bool sphere = true;
  int steps = 500;
  int iterations = 10;
  int runs = 5;
};

// Vertex positions against the sphere, checked after every step of the untimed run.
struct Contact {
  double penetration = 0;  // max (r - |x - c|) over the vertices, 0 if none is inside the sphere
  double gap = HUGE_VAL;   // min (|x - c| - r): the closest approach to the sphere surface
  bool finite = true;      // every vertex position finite
};

// Edge strains |l / L - 1| over the triangle edges, at the end.
struct Strain {
  double max = 0, mean = 0, p99 = 0;
};

// Everything Bullet needs for one scene. The destructor takes the bodies out of the world; the
// members then go in reverse order of declaration (bodies, then the world, then its parts).
class Scene {
 public:
  explicit Scene(const Options &o) : opt_(o) {
    config_ = std::make_unique<btSoftBodyRigidBodyCollisionConfiguration>();
    dispatcher_ = std::make_unique<btCollisionDispatcher>(config_.get());
    broadphase_ = std::make_unique<btDbvtBroadphase>();
    solver_ = std::make_unique<btSequentialImpulseConstraintSolver>();
    world_ = std::make_unique<btSoftRigidDynamicsWorld>(dispatcher_.get(), broadphase_.get(), solver_.get(),
                                                        config_.get());
    const btVector3 g(0, 0, btScalar(-9.81));
    world_->setGravity(g);
    btSoftBodyWorldInfo &wi = world_->getWorldInfo();
    wi.m_gravity = g;  // soft bodies read gravity from here, not from the world
    // The default voxel (0.25 m) is coarse next to a 0.3 m sphere: the cloth sinks centimetres
    // into it. Reset() applies the default voxel size (assigning voxelsz alone does not survive
    // the next reset).
    wi.m_sparsesdf.setDefaultVoxelsz(btScalar(0.025));
    wi.m_sparsesdf.Reset();

    if (opt_.sphere) {
      sphere_shape_ = std::make_unique<btSphereShape>(btScalar(kRadius));
      btTransform t;
      t.setIdentity();
      t.setOrigin(btVector3(btScalar(kCenter[0]), btScalar(kCenter[1]), btScalar(kCenter[2])));
      motion_ = std::make_unique<btDefaultMotionState>(t);
      btRigidBody::btRigidBodyConstructionInfo ci(0, motion_.get(), sphere_shape_.get());
      // A cloth-rigid contact uses kDF x the body's friction: 1 here makes it the cloth's 0.5.
      ci.m_friction = 1;
      ball_ = std::make_unique<btRigidBody>(ci);
      world_->addRigidBody(ball_.get());
    }

    const int n = opt_.n;
    // Corners 00 and 10 are (-0.5, -0.5, 1) and (0.5, -0.5, 1); node (i, j) is j * n + i.
    cloth_.reset(btSoftBodyHelpers::CreatePatch(wi, btVector3(-0.5, -0.5, 1), btVector3(0.5, -0.5, 1),
                                                btVector3(-0.5, 0.5, 1), btVector3(0.5, 0.5, 1), n, n, 0, true));
    btSoftBody &c = *cloth_;
    c.m_materials[0]->m_kLST = 1;
    btSoftBody::Material *bend = c.appendMaterial();
    bend->m_kLST = btScalar(0.4);
    c.generateBendingConstraints(2, bend);
    c.m_cfg.piterations = opt_.iterations;
    c.m_cfg.kDF = btScalar(0.5);
    c.getCollisionShape()->setMargin(btScalar(0.3 / (n - 1)));
    // Area-weighted lumped masses summing to 1 kg (as Loom's), then the two corners pinned.
    c.setTotalMass(1, true);
    c.setMass(0, 0);
    c.setMass(n - 1, 0);
    world_->addSoftBody(cloth_.get());

    rest_.reserve(size_t(c.m_nodes.size()));
    for (int i = 0; i < c.m_nodes.size(); i++) rest_.push_back(c.m_nodes[i].m_x);
  }

  ~Scene() {
    world_->removeSoftBody(cloth_.get());
    if (ball_) world_->removeRigidBody(ball_.get());
  }

  Scene(const Scene &) = delete;
  Scene &operator=(const Scene &) = delete;

  void step() {
    // maxSubSteps = 0: one internal step of exactly dt per call (no fixed-step accumulator).
    world_->stepSimulation(btScalar(kDt), 0);
    world_->getWorldInfo().m_sparsesdf.GarbageCollect();  // as Bullet's soft-body demos do per step
  }

  Contact contact() const {
    Contact q;
    const btSoftBody &c = *cloth_;
    for (int i = 0; i < c.m_nodes.size(); i++) {
      const btVector3 &x = c.m_nodes[i].m_x;
      if (!std::isfinite(x.x()) || !std::isfinite(x.y()) || !std::isfinite(x.z())) q.finite = false;
      if (opt_.sphere) {
        const double dx = x.x() - kCenter[0], dy = x.y() - kCenter[1], dz = x.z() - kCenter[2];
        const double d = std::sqrt(dx * dx + dy * dy + dz * dz) - kRadius;
        q.penetration = std::max(q.penetration, -d);
        q.gap = std::min(q.gap, d);
      }
    }
    return q;
  }

  Strain strain() const {
    const btSoftBody &c = *cloth_;
    const btSoftBody::Node *base = &c.m_nodes[0];
    std::vector<double> s;
    s.reserve(3 * size_t(c.m_faces.size()));
    for (int f = 0; f < c.m_faces.size(); f++) {
      for (int k = 0; k < 3; k++) {
        const btSoftBody::Node *a = c.m_faces[f].m_n[k], *b = c.m_faces[f].m_n[(k + 1) % 3];
        const double L = length(rest_[size_t(a - base)], rest_[size_t(b - base)]);
        s.push_back(std::fabs(length(a->m_x, b->m_x) / L - 1));
      }
    }
    Strain out;
    double sum = 0;
    for (double v : s) {
      out.max = std::max(out.max, v);
      sum += v;
    }
    out.mean = sum / double(s.size());
    const size_t k = size_t(0.99 * double(s.size() - 1));
    std::nth_element(s.begin(), s.begin() + long(k), s.end());
    out.p99 = s[k];
    return out;
  }

 private:
  static double length(const btVector3 &a, const btVector3 &b) {
    const double dx = double(a.x()) - b.x(), dy = double(a.y()) - b.y(), dz = double(a.z()) - b.z();
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  }

  Options opt_;
  std::unique_ptr<btSoftBodyRigidBodyCollisionConfiguration> config_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btDbvtBroadphase> broadphase_;
  std::unique_ptr<btSequentialImpulseConstraintSolver> solver_;
  std::unique_ptr<btSoftRigidDynamicsWorld> world_;
  std::unique_ptr<btSphereShape> sphere_shape_;
  std::unique_ptr<btDefaultMotionState> motion_;
  std::unique_ptr<btRigidBody> ball_;
  std::unique_ptr<btSoftBody> cloth_;
  std::vector<btVector3> rest_;
};

[[noreturn]] void usage(const std::string &msg) {
  std::fprintf(stderr, "bullet_cloth: %s\nusage: bullet_cloth N sphere|free [--steps S] [--iterations I] [--runs R]\n",
               msg.c_str());
  std::exit(2);
}

int parse_int(const char *s, int lo, int hi, const char *what) {
  char *end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi)
    usage(std::string("bad ") + what + " '" + s + "' (expected " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return int(v);
}

Options parse(int argc, char **argv) {
  if (argc < 3) usage("need N and sphere|free");
  Options o;
  o.n = parse_int(argv[1], 2, 1024, "N");
  if (!std::strcmp(argv[2], "sphere")) o.sphere = true;
  else if (!std::strcmp(argv[2], "free")) o.sphere = false;
  else usage("the second argument must be 'sphere' or 'free'");
  for (int i = 3; i < argc; i += 2) {
    if (i + 1 >= argc) usage(std::string("option ") + argv[i] + " needs a value");
    if (!std::strcmp(argv[i], "--steps")) o.steps = parse_int(argv[i + 1], 1, 1000000, "--steps");
    else if (!std::strcmp(argv[i], "--iterations")) o.iterations = parse_int(argv[i + 1], 1, 1000, "--iterations");
    else if (!std::strcmp(argv[i], "--runs")) o.runs = parse_int(argv[i + 1], 1, 1000, "--runs");
    else usage(std::string("unknown option ") + argv[i]);
  }
  return o;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

// A JSON object written field by field; non-finite numbers become null.
class Json {
 public:
  Json &field(const char *key, const std::string &raw) {
    out_ += (out_.empty() ? "{\"" : ",\"") + std::string(key) + "\":" + raw;
    return *this;
  }
  Json &str(const char *key, const std::string &v) { return field(key, "\"" + v + "\""); }
  Json &integer(const char *key, long v) { return field(key, std::to_string(v)); }
  Json &boolean(const char *key, bool v) { return field(key, v ? "true" : "false"); }
  Json &number(const char *key, double v, const char *fmt = "%.6g") {
    if (!std::isfinite(v)) return field(key, "null");
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return field(key, buf);
  }
  std::string text() const { return out_ + "}"; }

 private:
  std::string out_;
};

}  // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);

  // Untimed run: warm-up, and the quality figures (the sphere checked after every step).
  double max_pen = 0;
  bool finite = true;
  int nan_step = -1;
  Contact end;
  Strain strain;
  {
    Scene s(o);
    for (int k = 0; k < o.steps; k++) {
      s.step();
      const Contact q = s.contact();
      max_pen = std::max(max_pen, q.penetration);
      if (!q.finite && finite) {
        finite = false;
        nan_step = k + 1;
      }
    }
    end = s.contact();
    if (end.finite) strain = s.strain();
  }

  // Timed runs: a fresh world each, only the stepping timed.
  std::vector<double> ms;
  for (int r = 0; r < o.runs; r++) {
    Scene s(o);
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < o.steps; k++) s.step();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / o.steps);
    if (!s.contact().finite) finite = false;
  }

  const double nan = std::nan("");
  char version[16];
  std::snprintf(version, sizeof version, "%d.%02d", btGetVersion() / 100, btGetVersion() % 100);
  Json j;
  j.str("engine", "bullet").str("version", version).str("case", o.sphere ? "sphere" : "free").integer("n", o.n);
  j.number("ms_per_step_median", median(ms))
      .number("min", *std::min_element(ms.begin(), ms.end()))
      .number("max", *std::max_element(ms.begin(), ms.end()));
  j.integer("runs", o.runs).integer("steps", o.steps).integer("iterations", o.iterations);
  j.number("max_strain", end.finite ? strain.max : nan)
      .number("mean_strain", end.finite ? strain.mean : nan)
      .number("p99_strain", end.finite ? strain.p99 : nan);
  j.number("max_penetration_mm", o.sphere ? 1000 * max_pen : nan, "%.3f")
      .number("end_penetration_mm", o.sphere ? 1000 * end.penetration : nan, "%.3f")
      .number("end_min_gap_mm", o.sphere ? 1000 * end.gap : nan, "%.3f");
  j.boolean("nan", !finite).integer("nan_step", nan_step);
  std::printf("%s\n", j.text().c_str());
  return finite ? 0 : 1;
}
