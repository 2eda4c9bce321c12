/* A body kind that exists only in this test: free particles (ballistic, no forces between them).
 * It plugs into the world through world_register_kind without a line changed in world/, and the
 * world's phases, pins, contacts with rigid bodies, snapshots, hash, checkpoints and parameters
 * all work for it. */
#include <stddef.h>
#include <string.h>

#include "harness.h"
#include "kernel_fixtures.h"

enum { KIND_TEST_PARTICLES = 99 };

typedef struct free_particles {
  particles p; /* the world's view */
  double restitution_unused;
  double spin; /* a live parameter and a state field, to exercise both tables */
} free_particles;

static const param_spec fp_params[] = {
  {"thickness", "m", "contact distance", 0, 1, PARAM_LIVE, offsetof(free_particles, p.thickness)},
  {"spin", "rad", "a state-like value the test changes", -10, 10, PARAM_LIVE, offsetof(free_particles, spin)},
};
static const state_field fp_state[] = {{"spin", offsetof(free_particles, spin), sizeof(double), 0}};

static void fp_free(void *data) {
  free_particles *f = data;
  if (!f) return;
  particles_free(&f->p);
  core_free(f);
}

typedef struct fp_def {
  const vec3 *x;
  int n;
} fp_def;

static int fp_create(loom_world *w, int slot, const void *vdef) {
  const fp_def *d = vdef;
  free_particles *f = core_calloc(1, sizeof *f);
  if (!f) return -1;
  w->bodies[slot].data = f;
  w->bodies[slot].pts = &f->p;
  if (particles_alloc(&f->p, d->n, 0) != 0) return -1;
  for (int i = 0; i < d->n; i++) {
    f->p.x[i] = f->p.rest[i] = d->x[i];
    f->p.m[i] = 0.01;
    f->p.inv_m[i] = 100;
  }
  f->p.total_mass = 0.01 * d->n;
  f->p.thickness = 0.01;
  f->p.friction = 0.5;
  return 0;
}

/* Exact ballistic motion over the substep: x += h v + h^2 g / 2, v += h g (pinned ones follow). */
static void fp_predict(loom_world *w, body_slot *b, const step_info *s) {
  particles *p = b->pts;
  for (int i = 0; i < p->n; i++) {
    if (p->inv_m[i] == 0) continue;
    p->x[i] = v3_madd(v3_madd(p->x[i], p->v[i], s->h), w->gravity, 0.5 * s->h * s->h);
    p->v[i] = v3_madd(p->v[i], w->gravity, s->h);
  }
  pins_apply(w, (int)(b - w->bodies), s->a1, s->dt);
}

static void fp_bounds(const loom_world *w, const body_slot *b, const step_info *s, vec3 *lo, vec3 *hi) {
  (void)w, (void)s;
  const particles *p = b->pts;
  *lo = v3(INFINITY, INFINITY, INFINITY);
  *hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < p->n; i++) {
    *lo = v3_min(*lo, v3_min(p->x[i], p->x_sub[i]));
    *hi = v3_max(*hi, v3_max(p->x[i], p->x_sub[i]));
  }
  *lo = v3_sub(*lo, v3(p->thickness, p->thickness, p->thickness));
  *hi = v3_add(*hi, v3(p->thickness, p->thickness, p->thickness));
}

static const body_kind fp_kind = {
  .name = "test_particles",
  .id = KIND_TEST_PARTICLES,
  .params = fp_params,
  .nparams = 2,
  .state = fp_state,
  .nstate = 1,
  .free = fp_free,
  .predict = fp_predict,
  .bounds = fp_bounds,
};

static int fp_add(loom_world *w, const char *name, const vec3 *x, int n) {
  static int registered = 0;
  if (!registered) registered = world_register_kind(&fp_kind) == 0;
  fp_def d = {x, n};
  return world_add_body(w, &fp_kind, name, fp_create, &d);
}

TEST(kinds_test_kind_plugs_in_falls_exactly_and_rests_on_a_rigid_box) {
  loom_world *w = fx_world(1.0 / 200);
  vec3 x[3] = {v3(0, 0, 1), v3(0.1, 0, 1), v3(5, 5, 1)}; /* the third falls past the box */
  int h = fp_add(w, "dust", x, 3);
  CHECK(h != 0);
  CHECK_EQ_INT(loom_body_kind(w, h), KIND_TEST_PARTICLES);
  CHECK(strcmp(loom_kind_name(KIND_TEST_PARTICLES), "test_particles") == 0);
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "table";
  rd.shape = LOOM_SHAPE_BOX;
  rd.half_extents = v3(1, 1, 0.25);
  rd.position = v3(0, 0, 0.25);
  CHECK(loom_rigid_create(w, &rd) != 0);
  /* free fall for 0.2 s: exact to rounding */
  for (int s = 0; s < 40; s++) loom_world_step(w);
  const vec3 *px = loom_body_x(w, h);
  CHECK_NEAR(px[0].z, 1 - 0.5 * 9.81 * 0.2 * 0.2, 1e-12);
  /* then it lands on the table (top at z = 0.5) and stays at its thickness */
  for (int s = 0; s < 400; s++) loom_world_step(w);
  CHECK_NEAR(px[0].z, 0.51, 1e-9);
  CHECK_NEAR(px[1].z, 0.51, 1e-9);
  CHECK(px[2].z < -5); /* nothing under it */
  int n = 0;
  const loom_contact *c = loom_world_contacts(w, &n);
  CHECK_EQ_INT(n, 2);
  if (n == 2) CHECK(c[0].body_a == h && c[0].type_a == LOOM_FEATURE_VERTEX && fabs(c[0].normal.z - 1) < 1e-12);
  loom_world_destroy(w);
}

TEST(kinds_test_kind_pins_parameters_snapshots_and_checkpoints) {
  loom_world *w = fx_world(1.0 / 200);
  vec3 x[2] = {v3(0, 0, 1), v3(1, 0, 1)};
  int h = fp_add(w, "dust", x, 2);
  int32_t one = 1;
  int g = loom_pins_create(w, h, &one, 1);
  CHECK(g != 0);
  CHECK(loom_body_set_param(w, h, "spin", 2.5) == 0);
  CHECK(loom_body_set_param(w, h, "spin", 11) != 0); /* out of the table's range */
  CHECK_STR_CONTAINS(loom_last_error(), "'spin' must be a number in [-10, 10]");
  for (int s = 0; s < 20; s++) loom_world_step(w);
  CHECK(loom_body_x(w, h)[1].z == 1); /* pinned */
  int size = loom_world_checkpoint_size(w, 0);
  CHECK(size > 0);
  unsigned char *buf = malloc((size_t)size);
  CHECK(loom_world_checkpoint_write(w, NULL, 0, buf, size) == size);
  for (int s = 0; s < 20; s++) loom_world_step(w);
  char want[17], got[17];
  fx_hash(w, want);
  CHECK(loom_body_set_param(w, h, "spin", -1) == 0);
  CHECK(loom_world_checkpoint_read(w, buf, size, 0) == 0);
  double spin = 0;
  CHECK(loom_body_get_param(w, h, "spin", &spin) == 0 && spin == 2.5);
  for (int s = 0; s < 20; s++) loom_world_step(w);
  fx_hash(w, got);
  CHECK(strcmp(want, got) == 0);
  free(buf);
  loom_world_destroy(w);
}

/* Found by the checkpoint fuzzer: a state naming a grabbed vertex that does not exist crashed the
 * next step. Such a state is refused and the world left as it was. */
TEST(kinds_state_with_an_invalid_grab_or_nan_is_refused) {
  loom_world *w = fx_world(1.0 / 200);
  vec3 x[2] = {v3(0, 0, 1), v3(1, 0, 1)};
  int h = fp_add(w, "dust", x, 2);
  vec3 target = v3(0, 0, 2);
  CHECK(loom_world_set_grab(w, h, 1, &target, 5) == 0);
  int size = loom_world_state_size(w);
  unsigned char *buf = malloc((size_t)size);
  CHECK(loom_world_save_state(w, buf, size) == size);
  char before[17], after[17];
  fx_hash(w, before);
  /* the grab is 40 bytes (slot, vertex, target, omega) before the rigid solver's impulse count and
   * the count of pairs world:pair set to collide = false (4 bytes each; none of either here) at the
   * end of the state */
  int bad_vertex = 1000000;
  memcpy(buf + size - 44, &bad_vertex, sizeof bad_vertex);
  CHECK(loom_world_load_state(w, buf, size) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "mouse grab");
  int one = 1;
  memcpy(buf + size - 44, &one, sizeof one);
  /* a count of such pairs that the state does not hold, then one that names no two bodies */
  int pairs = 3;
  memcpy(buf + size - 4, &pairs, sizeof pairs);
  CHECK(loom_world_load_state(w, buf, size) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "pairs that do not collide are damaged");
  int zero = 0;
  memcpy(buf + size - 4, &zero, sizeof zero);
  unsigned char *longer = malloc((size_t)size + 8);
  memcpy(longer, buf, (size_t)size);
  int pair[2] = {0, 5};
  memcpy(longer + size - 4, &one, sizeof one);
  memcpy(longer + size, pair, sizeof pair);
  CHECK(loom_world_load_state(w, longer, size + 8) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "name no two bodies");
  free(longer);
  double nan = NAN;
  /* a NaN position: particles come right after the header, the bodies' name and counts */
  CHECK(loom_world_load_state(w, buf, size) == 0);
  loom_body_x(w, h)[0].x = nan;
  CHECK(loom_world_save_state(w, buf, size) == size);
  loom_body_x(w, h)[0].x = 0;
  fx_hash(w, before);
  CHECK(loom_world_load_state(w, buf, size) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "non-finite position");
  fx_hash(w, after);
  CHECK(strcmp(before, after) == 0);
  loom_world_step(w);
  free(buf);
  loom_world_destroy(w);
}
