/* kernel_fixtures.h — small helpers shared by the kernel unit tests (test_math.c, test_cloth.c,
 * test_integrate.c, test_pins.c, test_contact.c, test_world.c): a deterministic random source,
 * worlds and cloths with the fields the tests care about, and access to a body's private data.
 * Everything is static inline so each test file stays self-contained. */
#ifndef LOOM_KERNEL_FIXTURES_H
#define LOOM_KERNEL_FIXTURES_H

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "test_rng.h"
#include "cloth/cloth.h"
#include "rigid/rigid.h"

static const double FX_PI = 3.14159265358979323846;

typedef rng fx_rng;
static inline uint64_t fx_next(fx_rng *r) { return rng_next(r); }
/* Uniform in [0, 1). */
static inline double fx_unit(fx_rng *r) { return rng_unit(r); }
/* Uniform in [-1, 1). */
static inline double fx_sym(fx_rng *r) { return 2.0 * fx_unit(r) - 1.0; }
static inline vec3 fx_vec(fx_rng *r) { return v3(fx_sym(r), fx_sym(r), fx_sym(r)); }
/* Uniformly distributed unit quaternion (Shoemake 1992, "Uniform random rotations"). */
static inline quat fx_quat(fx_rng *r) {
  double u1 = fx_unit(r), u2 = 2 * FX_PI * fx_unit(r), u3 = 2 * FX_PI * fx_unit(r);
  double a = sqrt(1 - u1), b = sqrt(u1);
  quat q = {a * sin(u2), a * cos(u2), b * sin(u3), b * cos(u3)};
  return q;
}
static inline vec3 fx_unit_vec(fx_rng *r) {
  for (;;) {
    vec3 v = fx_vec(r);
    double l = v3_len(v);
    if (l > 0.1 && l <= 1) return v3_scale(v, 1.0 / l);
  }
}

/* World with the given step and default gravity (0, 0, -9.81). */
static inline loom_world *fx_world(double dt) {
  loom_world_def d;
  loom_world_def_default(&d);
  d.dt = dt;
  return loom_world_create(&d);
}

/* Square grid of n x n vertices, side `size` metres, centred at c, in `plane`. Caller owns. */
static inline loom_mesh *fx_grid(int n, double size, vec3 c, int plane) {
  return loom_mesh_grid(size, size, n - 1, n - 1, &c, plane);
}

/* Cloth definition with the model's defaults, a name and a mesh; the caller edits the rest. */
static inline loom_cloth_def fx_def(int model, const char *name, const loom_mesh *m) {
  loom_cloth_def d;
  loom_cloth_def_default(&d, model);
  d.name = name;
  d.mesh = m;
  return d;
}

/* Private soft body behind a cloth handle (NULL if the handle is not a live cloth). */
static inline cloth_body *fx_soft(loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_CLOTH, "fixture");
  return slot < 0 ? NULL : cloth_of(&w->bodies[slot]);
}

/* Hash of the world state as a string in out[17]. */
static inline void fx_hash(const loom_world *w, char out[17]) {
  if (loom_world_hash(w, out, 17) != 0) strcpy(out, "hash-failed");
}

/* Rigid obstacle of a given shape at `pos` with orientation q (identity if NULL). */
static inline int fx_rigid(loom_world *w, const char *name, int shape, vec3 pos, const quat *q) {
  loom_rigid_def d;
  loom_rigid_def_default(&d);
  d.name = name;
  d.shape = shape;
  d.position = pos;
  if (q) d.orientation = *q;
  return loom_rigid_create(w, &d);
}

/* Largest |v| over an array of n vectors. */
static inline double fx_max_norm(const vec3 *v, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, v3_len(v[i]));
  return m;
}

/* Every coordinate finite. */
static inline int fx_all_finite(const vec3 *v, int n) {
  for (int i = 0; i < n; i++)
    if (!v3_isfinite(v[i])) return 0;
  return 1;
}

#endif
