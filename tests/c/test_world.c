/* test_world.c — worlds as a whole (world.c, world_state.c, world_query.c): snapshots continue
 * bit-identically, restoring into a different topology fails without side effects, transplants
 * copy matching bodies only, identical worlds stay identical (determinism), handles go stale
 * safely, NULL arguments and bad definitions are rejected with messages, energies are the
 * textbook sums, live parameters are validated. */
#include "kernel_fixtures.h"

/* A scene touching every part of the state: a springs cloth pinned by a moving group (Verlet, so
 * x_prev matters), a BW cloth with RK4 falling on a kinematic sphere, a static box. */
typedef struct scene {
  loom_world *w;
  loom_mesh *m1, *m2;
  int cloth, bw, ball, group;
} scene;

static scene scene_build_rows(int rows) {
  scene s;
  s.w = fx_world(1.0 / 240);
  s.m1 = loom_mesh_grid(0.6, 0.6 * (rows - 1) / 8.0, 8, rows - 1, &(vec3){0, 0, 1.2}, LOOM_PLANE_XZ);
  s.m2 = fx_grid(8, 0.5, v3(1.0, 0, 0.7), LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "flag", s.m1);
  d.integrator = LOOM_INTEGRATOR_VERLET;
  s.cloth = loom_cloth_create(s.w, &d);
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "sheet", s.m2);
  d.integrator = LOOM_INTEGRATOR_RK4;
  s.bw = loom_cloth_create(s.w, &d);
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "ball";
  rd.radius = 0.2;
  rd.position = v3(1.0, 0, 0.3);
  rd.motion = LOOM_KINEMATIC;
  s.ball = loom_rigid_create(s.w, &rd);
  fx_rigid(s.w, "floor", LOOM_SHAPE_BOX, v3(0, 0, -0.5), NULL);
  int32_t top[9];
  for (int i = 0; i < 9; i++) top[i] = 9 * (rows - 1) + i;
  s.group = loom_pins_create(s.w, s.cloth, top, 9);
  CHECK(s.cloth && s.bw && s.ball && s.group);
  return s;
}

static scene scene_build(void) { return scene_build_rows(9); }

/* Scripted inputs as a function of the step number only, so a replay feeds the same values. */
static void scene_drive(scene *s, int k) {
  double t = k / 240.0;
  vec3 off = v3(0.1 * sin(4 * t), 0.05 * t, 0.05 * sin(2 * t));
  loom_pins_set_target(s->w, s->group, &off);
  vec3 p = v3(1.0 + 0.2 * sin(3 * t), 0.1 * t, 0.3 + 0.1 * t);
  quat q = q_from_axis_angle(v3(0, 0, 1), t);
  loom_rigid_set_target(s->w, s->ball, &p, &q);
  vec3 a = v3(0.5 * sin(t), 0, 0);
  loom_world_clear_forces(s->w);
  loom_body_add_acceleration(s->w, s->bw, &a);
}

static void scene_run(scene *s, int from, int to) {
  for (int k = from; k < to; k++) {
    scene_drive(s, k);
    loom_world_step(s->w);
  }
}

static void scene_free(scene *s) {
  loom_mesh_destroy(s->m1);
  loom_mesh_destroy(s->m2);
  loom_world_destroy(s->w);
}

TEST(world_snapshot_restore_is_bit_identical) {
  /* run, save, run -> hash A; load, run the same inputs -> hash B; A == B. Positions are also
   * compared bitwise (the hash could in principle collide). Saved after the pins and the ball have
   * moved, mid-swing, with Verlet history and RK4 state. */
  scene s = scene_build();
  scene_run(&s, 0, 150);
  int size = loom_world_state_size(s.w);
  CHECK(size > 0);
  void *buf = malloc((size_t)size);
  CHECK_EQ_INT(loom_world_save_state(s.w, buf, size), size);
  char h0[17], ha[17], hb[17];
  fx_hash(s.w, h0);
  scene_run(&s, 150, 300);
  fx_hash(s.w, ha);
  const int n1 = loom_body_vertex_count(s.w, s.cloth);
  vec3 *xa = malloc(sizeof *xa * (size_t)n1);
  memcpy(xa, loom_body_x(s.w, s.cloth), sizeof *xa * (size_t)n1);
  CHECK(strcmp(h0, ha) != 0);
  CHECK_EQ_INT(loom_world_load_state(s.w, buf, size), 0);
  char hr[17];
  fx_hash(s.w, hr);
  CHECK_MSG(strcmp(hr, h0) == 0, "restored hash %s != saved %s", hr, h0);
  CHECK_NEAR(loom_world_time(s.w), 150 / 240.0, 1e-12);
  scene_run(&s, 150, 300);
  fx_hash(s.w, hb);
  CHECK_MSG(strcmp(ha, hb) == 0, "continuation differs: %s vs %s", ha, hb);
  CHECK(memcmp(xa, loom_body_x(s.w, s.cloth), sizeof *xa * (size_t)n1) == 0);
  /* a too small buffer is refused */
  CHECK_EQ_INT(loom_world_save_state(s.w, buf, size - 1), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "buffer");
  free(xa);
  free(buf);
  scene_free(&s);
}

TEST(world_snapshot_keeps_pin_state) {
  /* Pins released, re-held and unpinned between save and load: the snapshot brings back the
   * group's held flag, offsets and masses, and the continuation matches. */
  scene s = scene_build();
  scene_run(&s, 0, 60);
  int size = loom_world_state_size(s.w);
  void *buf = malloc((size_t)size);
  loom_world_save_state(s.w, buf, size);
  char ha[17], hb[17];
  scene_run(&s, 60, 120);
  fx_hash(s.w, ha);
  loom_pins_release(s.w, s.group);
  scene_run(&s, 120, 140);
  CHECK(loom_body_m(s.w, s.cloth)[72] > 0);
  CHECK_EQ_INT(loom_world_load_state(s.w, buf, size), 0);
  CHECK_EQ_INT(loom_pins_held(s.w, s.group), 1);
  CHECK(loom_body_m(s.w, s.cloth)[72] > 0 && loom_body_inv_mass(s.w, s.cloth)[72] == 0);
  scene_run(&s, 60, 120);
  fx_hash(s.w, hb);
  CHECK_MSG(strcmp(ha, hb) == 0, "after release/load: %s vs %s", ha, hb);
  free(buf);
  scene_free(&s);
}

TEST(world_load_state_rejects_mismatches_without_side_effects) {
  /* A state written by one world cannot be loaded into a world of different topology (vertex
   * count, body count, names, pin groups) or from a damaged buffer: -1, a message naming the
   * mismatch, and the target world's hash unchanged. */
  scene s = scene_build();
  scene_run(&s, 0, 20);
  int size = loom_world_state_size(s.w);
  unsigned char *buf = malloc((size_t)size);
  loom_world_save_state(s.w, buf, size);

  struct {
    const char *what, *needle;
  } cases[5] = {{"vertex count", "vertices"},
                {"body count", "bodies"},
                {"names", "does not match"},
                {"pin groups", "pin group"},
                {"truncated", "truncated"}};
  for (int k = 0; k < 5; k++) {
    scene t = k == 0 ? scene_build_rows(10) : scene_build(); /* k = 0: one more row in the flag */
    scene_run(&t, 0, 5);
    if (k == 1) {
      fx_rigid(t.w, "extra", LOOM_SHAPE_SPHERE, v3(9, 9, 9), NULL);
    } else if (k == 2) {
      loom_body_destroy(t.w, t.ball);
      loom_rigid_def rd;
      loom_rigid_def_default(&rd);
      rd.name = "ball2";
      rd.motion = LOOM_KINEMATIC;
      loom_rigid_create(t.w, &rd);
    } else if (k == 3) {
      int32_t v = 0;
      loom_pins_create(t.w, t.bw, &v, 1);
    }
    char before[17], after[17];
    fx_hash(t.w, before);
    loom_clear_error();
    int rc = loom_world_load_state(t.w, buf, k == 4 ? size - 9 : size);
    fx_hash(t.w, after);
    CHECK_MSG(rc == -1, "%s: mismatched state was accepted", cases[k].what);
    CHECK_STR_CONTAINS(loom_last_error(), cases[k].needle);
    CHECK_MSG(strcmp(before, after) == 0, "%s: the failed load changed the world", cases[k].what);
    scene_free(&t);
  }
  /* not a state at all */
  scene t = scene_build();
  char before[17], after[17];
  fx_hash(t.w, before);
  unsigned char junk[64] = "definitely not a loom state";
  CHECK_EQ_INT(loom_world_load_state(t.w, junk, sizeof junk), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "not a Loom state");
  CHECK_EQ_INT(loom_world_load_state(t.w, buf, size + 0) == 0, 1); /* same topology: fine */
  CHECK_EQ_INT(loom_world_load_state(t.w, NULL, size), -1);
  /* trailing bytes */
  unsigned char *longer = calloc((size_t)size + 8, 1);
  memcpy(longer, buf, (size_t)size);
  fx_hash(t.w, before);
  CHECK_EQ_INT(loom_world_load_state(t.w, longer, size + 8), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "trailing");
  fx_hash(t.w, after);
  CHECK(strcmp(before, after) == 0);
  free(longer);
  free(buf);
  scene_free(&t);
  scene_free(&s);
}

TEST(world_transplant_copies_matching_bodies_only) {
  /* Hot reload: time, step count and the state of bodies with the same name, kind and topology
   * are carried over; a body whose mesh changed, a body missing from the old world and static
   * obstacles keep their new state. Pinned vertices of the new scene start at rest. */
  scene old = scene_build();
  scene_run(&old, 0, 100);
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *same = fx_grid(9, 0.6, v3(0, 0, 1.2), LOOM_PLANE_XZ); /* like "flag" */
  /* "sheet" with the old vertex and triangle counts but one cell's diagonal flipped */
  loom_mesh *g8 = fx_grid(8, 0.5, v3(1.0, 0, 0.7), LOOM_PLANE_XY);
  int32_t *tri = malloc(sizeof(int32_t) * 3 * (size_t)g8->nt);
  memcpy(tri, g8->tri, sizeof(int32_t) * 3 * (size_t)g8->nt);
  /* cell (0, 0), corners a = 0, b = 1, c = 9, d = 8: (a, b, c), (a, c, d) -> (a, b, d), (b, c, d) */
  const int32_t flipped[6] = {0, 1, 8, 1, 9, 8};
  memcpy(tri, flipped, sizeof flipped);
  loom_mesh *other = loom_mesh_from_arrays(g8->v, g8->nv, tri, g8->nt);
  free(tri);
  loom_mesh_destroy(g8);
  loom_mesh *fresh = fx_grid(4, 0.3, v3(-2, 0, 1), LOOM_PLANE_XY); /* new body */
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "flag", same);
  int flag = loom_cloth_create(w, &d);
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "sheet", other);
  int sheet = loom_cloth_create(w, &d);
  d = fx_def(LOOM_MODEL_SPRINGS, "new", fresh);
  int nb = loom_cloth_create(w, &d);
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "ball";
  rd.motion = LOOM_KINEMATIC;
  rd.radius = 0.2;
  int ball = loom_rigid_create(w, &rd);
  int32_t pin = 0;
  loom_pins_create(w, flag, &pin, 1);
  vec3 sheet_x0 = loom_body_x(w, sheet)[3], new_x0 = loom_body_x(w, nb)[2];
  int carried = loom_world_transplant(w, old.w);
  CHECK_EQ_INT(carried, 2); /* flag (cloth) and ball (kinematic) */
  CHECK_NEAR(loom_world_time(w), loom_world_time(old.w), 0);
  const vec3 *xo = loom_body_x(old.w, old.cloth), *xn = loom_body_x(w, flag);
  CHECK(memcmp(xo + 1, xn + 1, sizeof(vec3) * 80) == 0);
  CHECK(v3_len(loom_body_v(w, flag)[0]) == 0); /* newly pinned vertex holds still */
  CHECK(memcmp(&sheet_x0, &loom_body_x(w, sheet)[3], sizeof(vec3)) == 0);
  CHECK(memcmp(&new_x0, &loom_body_x(w, nb)[2], sizeof(vec3)) == 0);
  vec3 pb_old, pb_new;
  loom_rigid_pose(old.w, old.ball, &pb_old, NULL);
  loom_rigid_pose(w, ball, &pb_new, NULL);
  CHECK(memcmp(&pb_old, &pb_new, sizeof pb_old) == 0);
  loom_stats st;
  loom_world_stats(w, &st);
  CHECK(st.steps == 100);
  CHECK_EQ_INT(loom_world_transplant(NULL, old.w), -1);
  loom_mesh_destroy(same);
  loom_mesh_destroy(other);
  loom_mesh_destroy(fresh);
  loom_world_destroy(w);
  scene_free(&old);
}

TEST(world_identical_worlds_stay_identical) {
  /* Determinism: two worlds built and driven identically hash the same after 500 steps (and at
   * every 100th step on the way); a world with one input differing by one ulp does not. */
  scene a = scene_build(), b = scene_build(), c = scene_build();
  loom_body_x(c.w, c.bw)[5].z = nextafter(loom_body_x(c.w, c.bw)[5].z, 10.0);
  for (int k = 0; k < 500; k += 100) {
    scene_run(&a, k, k + 100);
    scene_run(&b, k, k + 100);
    scene_run(&c, k, k + 100);
    char ha[17], hb[17], hc[17];
    fx_hash(a.w, ha);
    fx_hash(b.w, hb);
    fx_hash(c.w, hc);
    CHECK_MSG(strcmp(ha, hb) == 0, "step %d: %s vs %s", k + 100, ha, hb);
    CHECK(strcmp(ha, hc) != 0);
  }
  CHECK(fx_all_finite(loom_body_x(a.w, a.bw), 64));
  scene_free(&a);
  scene_free(&b);
  scene_free(&c);
}

TEST(world_stale_handles_are_rejected) {
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = fx_grid(4, 0.3, v3(0, 0, 1), LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "a", m);
  int a = loom_cloth_create(w, &d);
  int32_t v = 0;
  int g = loom_pins_create(w, a, &v, 1);
  CHECK(loom_body_destroy(w, a) == 0);
  /* every entry point refuses the old handle without touching freed memory */
  CHECK(loom_body_x(w, a) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "stale");
  CHECK(loom_body_v(w, a) == NULL && loom_body_f(w, a) == NULL && loom_body_m(w, a) == NULL);
  CHECK(loom_body_rest(w, a) == NULL && loom_body_contacts(w, a) == NULL);
  int cnt = 7;
  CHECK(loom_body_triangles(w, a, &cnt) == NULL && cnt == 0);
  CHECK_EQ_INT(loom_body_vertex_count(w, a), -1);
  CHECK_EQ_INT(loom_body_kind(w, a), LOOM_KIND_NONE);
  CHECK(loom_body_name(w, a) == NULL);
  CHECK_EQ_INT(loom_body_destroy(w, a), -1);
  CHECK_EQ_INT(loom_body_set_param(w, a, "stretch", 1), -1);
  vec3 F[16];
  CHECK_EQ_INT(loom_body_internal_forces(w, a, F), -1);
  CHECK_EQ_INT(loom_body_spring_counts(w, a, NULL, NULL, NULL), -1);
  CHECK_EQ_INT(loom_pins_count(w, g), -1);
  CHECK_EQ_INT(loom_body_frozen(w, a), 0);
  vec3 t = v3(0, 0, 0);
  CHECK_EQ_INT(loom_world_set_grab(w, a, 0, &t, 10), -1);
  /* a new body reuses the slot with a new generation: the old handle stays stale */
  d.name = "b";
  int b = loom_cloth_create(w, &d);
  CHECK(b != 0 && b != a);
  CHECK((b & 0xffff) == (a & 0xffff));
  CHECK(loom_body_x(w, a) == NULL);
  CHECK(loom_body_x(w, b) != NULL);
  CHECK_EQ_INT(loom_world_body_count(w), 1);
  CHECK_EQ_INT(loom_world_find(w, "a"), 0);
  CHECK_EQ_INT(loom_world_find(w, "b"), b);
  CHECK_EQ_INT(loom_world_body_at(w, 0), b);
  CHECK_EQ_INT(loom_world_body_at(w, 1), 0);
  /* made-up and wrong-kind handles */
  const int junk[5] = {0, -1, 12345, 0x7fffffff, b + (1 << 16)};
  for (int k = 0; k < 5; k++) {
    CHECK(loom_body_x(w, junk[k]) == NULL);
    CHECK_EQ_INT(loom_body_kind(w, junk[k]), LOOM_KIND_NONE);
  }
  int r = fx_rigid(w, "r", LOOM_SHAPE_SPHERE, v3(5, 0, 0), NULL);
  CHECK(loom_body_x(w, r) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "not a soft body");
  vec3 p;
  CHECK_EQ_INT(loom_rigid_pose(w, b, &p, NULL), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "not a rigid body");
  /* the world keeps stepping after all this */
  CHECK_EQ_INT(loom_world_step(w), 0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(world_null_and_bad_arguments) {
  /* NULL worlds are no-ops or failures with a message, never crashes. */
  loom_clear_error();
  CHECK_EQ_INT(loom_world_step(NULL), 0);
  loom_world_destroy(NULL);
  loom_world_clear_forces(NULL);
  CHECK_EQ_INT(loom_world_time(NULL), 0);
  CHECK_EQ_INT(loom_world_set_dt(NULL, 0.01), -1);
  CHECK_EQ_INT(loom_world_body_count(NULL), 0);
  CHECK_EQ_INT(loom_world_find(NULL, "x"), 0);
  CHECK_EQ_INT(loom_world_message_count(NULL), 0);
  CHECK(loom_world_message(NULL, 1) == NULL);
  char h[17];
  CHECK_EQ_INT(loom_world_hash(NULL, h, 17), -1);
  CHECK_EQ_INT(loom_world_state_size(NULL), -1);
  CHECK_EQ_INT(loom_world_save_state(NULL, h, 17), -1);
  CHECK_EQ_INT(loom_world_load_state(NULL, h, 17), -1);
  CHECK(loom_body_x(NULL, 1) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "world is NULL");
  double ke = 1, pe = 1, el = 1;
  loom_world_energy(NULL, &ke, &pe, &el);
  CHECK(ke == 0 && pe == 0 && el == 0);
  loom_stats st;
  loom_world_stats(NULL, &st);
  CHECK_EQ_INT(loom_rigid_create(NULL, NULL), 0);
  CHECK_EQ_INT(loom_pins_create(NULL, 1, NULL, 0), 0);

  /* world definitions */
  loom_world_def d;
  loom_world_def_default(&d);
  d.dt = 0;
  CHECK(loom_world_create(&d) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "'dt'");
  d.dt = NAN;
  CHECK(loom_world_create(&d) == NULL);
  loom_world_def_default(&d);
  d.gravity.y = INFINITY;
  CHECK(loom_world_create(&d) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "'gravity'");
  loom_world_def_default(&d);
  d.wind.x = NAN;
  CHECK(loom_world_create(&d) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "'wind'");
  loom_world *w = loom_world_create(NULL); /* defaults */
  CHECK(w != NULL);
  CHECK_NEAR(loom_world_dt(w), 1.0 / 240, 0);
  vec3 g;
  loom_world_gravity(w, &g);
  CHECK(g.x == 0 && g.y == 0 && g.z == -9.81);
  CHECK_EQ_INT(loom_world_set_dt(w, -1), -1);
  CHECK_EQ_INT(loom_world_set_gravity(w, NULL), -1);
  CHECK_NEAR(loom_world_dt(w), 1.0 / 240, 0);
  CHECK_EQ_INT(loom_world_hash(w, h, 16), -1); /* buffer too small */

  /* rigid definitions name the bad field */
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.radius = -1;
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "'radius'");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.shape = LOOM_SHAPE_BOX;
  rd.half_extents.y = 0;
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "'half_extents.y'");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.motion = LOOM_DYNAMIC;
  rd.mass = -1;
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "'mass'");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.velocity.x = 1; /* a static body has no velocity */
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "dynamic bodies");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.orientation = (quat){0, 0, 0, 0};
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "'orientation'");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.shape = LOOM_SHAPE_MESH;
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "needs a mesh");
  loom_rigid_def_default(&rd);
  rd.name = "r";
  rd.friction = -0.1;
  CHECK_EQ_INT(loom_rigid_create(w, &rd), 0);
  CHECK_STR_CONTAINS(loom_last_error(), "'friction'");
  CHECK_EQ_INT(loom_world_body_count(w), 0);
  loom_world_destroy(w);
}

TEST(world_live_parameters) {
  /* Parameters can be read and changed by name; bad names and values are refused with a message
   * and leave the value unchanged; a stiffer cloth needs more automatic substeps. */
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(6, 0.5, v3(0, 0, 1), LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "c", m);
  int c = loom_cloth_create(w, &d);
  double v, s1, s2;
  CHECK(loom_body_get_param(w, c, "stretch", &v) == 0 && v == 500);
  CHECK(loom_body_get_param(w, c, "substeps", &s1) == 0 && s1 >= 1);
  CHECK(loom_body_set_param(w, c, "stretch", 50000) == 0);
  CHECK(loom_body_get_param(w, c, "substeps", &s2) == 0);
  /* omega scales with sqrt(k): 100 x stiffer needs about 10 x the substeps */
  CHECK_MSG(s2 >= 5 * s1, "substeps %g -> %g for 100 x the stiffness", s1, s2);
  CHECK_EQ_INT(loom_body_set_param(w, c, "stretch", -1), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "'stretch'");
  CHECK_EQ_INT(loom_body_set_param(w, c, "substeps", 2.5), -1);
  CHECK_EQ_INT(loom_body_set_param(w, c, "iterations", 0), -1);
  CHECK_EQ_INT(loom_body_set_param(w, c, "density", 1), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "unknown parameter 'density'");
  CHECK_EQ_INT(loom_body_set_param(w, c, NULL, 1), -1);
  CHECK(loom_body_get_param(w, c, "stretch", &v) == 0 && v == 50000);
  CHECK(loom_body_set_param(w, c, "substeps", 3) == 0);
  CHECK(loom_body_get_param(w, c, "substeps", &v) == 0 && v == 3);
  int r = fx_rigid(w, "r", LOOM_SHAPE_SPHERE, v3(3, 0, 0), NULL);
  CHECK(loom_body_set_param(w, r, "restitution", 0.5) == 0);
  CHECK(loom_body_get_param(w, r, "restitution", &v) == 0 && v == 0.5);
  CHECK_EQ_INT(loom_body_set_param(w, r, "restitution", 2), -1);
  CHECK_EQ_INT(loom_body_set_param(w, r, "friction", NAN), -1);
  CHECK_EQ_INT(loom_body_set_param(w, r, "stretch", 1), -1);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(world_energy_is_the_textbook_sum) {
  /* loom_world_energy: kinetic sum m v^2 / 2 and potential -sum m g . x over soft bodies (real
   * masses, pinned vertices included), elastic from the model. Checked against sums computed
   * here, 1e-14 relative. */
  loom_world *w = fx_world(1.0 / 240);
  vec3 g = v3(0.5, -1, -9.81);
  loom_world_set_gravity(w, &g);
  loom_mesh *m = fx_grid(5, 0.4, v3(0.3, 0.2, 1.1), LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "c", m);
  int c = loom_cloth_create(w, &d);
  int32_t pin = 3;
  loom_pins_create(w, c, &pin, 1);
  fx_rng r = {8};
  vec3 *x = loom_body_x(w, c), *v = loom_body_v(w, c);
  for (int i = 0; i < 25; i++) {
    x[i] = v3_add(x[i], v3_scale(fx_vec(&r), 0.01));
    if (i != pin) v[i] = fx_vec(&r);
  }
  const double *mass = fx_soft(w, c)->p.m;
  double ke = 0, pe = 0;
  for (int i = 0; i < 25; i++) {
    ke += 0.5 * mass[i] * v3_len2(v[i]);
    pe -= mass[i] * v3_dot(g, x[i]);
  }
  double k2, p2, e2;
  loom_world_energy(w, &k2, &p2, &e2);
  CHECK_NEAR(k2, ke, 1e-14 * ke);
  CHECK_NEAR(p2, pe, 1e-14 * fabs(pe));
  CHECK_NEAR(e2, cloth_elastic_energy(fx_soft(w, c), x), 0);
  CHECK(e2 > 0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(world_message_ring_keeps_the_last_64) {
  /* Messages carry sequence numbers 1..count; only the last 64 are kept. */
  loom_world *w = fx_world(1.0 / 240);
  for (int k = 1; k <= 70; k++) world_message(w, k % 2 ? LOOM_WARNING : LOOM_INFO, -1, "message %d", k);
  CHECK_EQ_INT(loom_world_message_count(w), 70);
  CHECK(loom_world_message(w, 6) == NULL);
  CHECK(loom_world_message(w, 71) == NULL && loom_world_message(w, 0) == NULL);
  CHECK_STR_CONTAINS(loom_world_message(w, 7), "message 7");
  CHECK_STR_CONTAINS(loom_world_message(w, 70), "message 70");
  loom_stats st;
  loom_world_stats(w, &st);
  CHECK_EQ_INT(st.messages, 70);
  loom_world_destroy(w);
}

/* world:pair overrides: found by binary search whatever order they were set in, counted per body
 * while collide is off, and dropped with a destroyed body (a new body in its slot pairs with
 * nothing); turning collide back on has the particle bodies look for crossings at the next step. */
TEST(world_pair_overrides_are_found_counted_and_dropped) {
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = fx_grid(2, 0.3, v3(0, 0, 1), LOOM_PLANE_XY);
  int h[6];
  char name[16];
  for (int i = 0; i < 6; i++) {
    snprintf(name, sizeof name, "b%d", i);
    loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, name, m);
    h[i] = loom_cloth_create(w, &d);
    CHECK(h[i] != 0);
  }
  const int order[][2] = {{4, 1}, {0, 5}, {2, 3}, {1, 0}, {5, 3}, {3, 1}, {0, 2}};
  for (int k = 0; k < 7; k++)
    CHECK_EQ_INT(loom_world_pair(w, h[order[k][0]], h[order[k][1]], -1, -1, k % 2 == 0 ? 0 : 1), 0);
  CHECK_EQ_INT(w->noverrides, 7);
  CHECK_EQ_INT(w->npairs_off, 4);
  for (int k = 1; k < 7; k++)
    CHECK(w->overrides[k - 1].a < w->overrides[k].a ||
          (w->overrides[k - 1].a == w->overrides[k].a && w->overrides[k - 1].b < w->overrides[k].b));
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      int set = -1;
      for (int k = 0; k < 7; k++)
        if ((order[k][0] == i && order[k][1] == j) || (order[k][0] == j && order[k][1] == i)) set = k;
      const pair_override *o = world_pair_override(w, handle_slot(h[i]), handle_slot(h[j]));
      CHECK((o != NULL) == (set >= 0));
      CHECK_EQ_INT(world_pair_off(w, handle_slot(h[i]), handle_slot(h[j])), set >= 0 && set % 2 == 0);
    }
  /* off pairs: (4,1) (2,3) (5,3) (0,2) */
  const int counts[6] = {1, 1, 2, 2, 1, 1};
  for (int i = 0; i < 6; i++) CHECK_EQ_INT(w->bodies[handle_slot(h[i])].pairs_off, counts[i]);
  /* setting it again changes nothing; collide back on has both look */
  CHECK_EQ_INT(loom_world_pair(w, h[1], h[4], 0.5, -1, 0), 0);
  CHECK_EQ_INT(w->npairs_off, 4);
  CHECK(loom_world_step(w) >= 0); /* (the six overlap: messages) */
  particles *p1 = w->bodies[handle_slot(h[1])].pts, *p4 = w->bodies[handle_slot(h[4])].pts;
  p1->col.check_tangles = p4->col.check_tangles = 0;
  CHECK_EQ_INT(loom_world_pair(w, h[1], h[4], -1, -1, 1), 0);
  CHECK(p1->col.check_tangles && p4->col.check_tangles);
  CHECK_EQ_INT(w->npairs_off, 3);
  CHECK_EQ_INT(w->bodies[handle_slot(h[4])].pairs_off, 0);
  /* destroying b3 drops (2,3), (5,3), (3,1) */
  CHECK_EQ_INT(loom_body_destroy(w, h[3]), 0);
  CHECK_EQ_INT(w->noverrides, 4);
  CHECK_EQ_INT(w->npairs_off, 1);
  CHECK_EQ_INT(w->bodies[handle_slot(h[2])].pairs_off, 1);
  CHECK_EQ_INT(w->bodies[handle_slot(h[5])].pairs_off, 0);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "new", m);
  const int n = loom_cloth_create(w, &d);
  CHECK_EQ_INT(handle_slot(n), handle_slot(h[3]));
  CHECK_EQ_INT(w->bodies[handle_slot(n)].pairs_off, 0);
  for (int i = 0; i < 6; i++)
    if (i != 3) CHECK(world_pair_override(w, handle_slot(n), handle_slot(h[i])) == NULL);
  CHECK(loom_world_step(w) >= 0); /* (the six overlap: messages) */
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}
