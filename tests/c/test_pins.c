/* test_pins.c — pin groups (world_pins.c and the pin stage of integrate_explicit.c): pinned
 * vertices never move (001 behaviour 3), groups follow their targets exactly (000 behaviour 2),
 * release / hold re-bases, unpin restores the mass, set_offset teleports, bad arguments. */
#include "kernel_fixtures.h"

/* A 10 x 10 vertical cloth (xz plane), top row (vertices 90..99) at z = 1.5 + 0.45, no drag. */
static int hanging_cloth(loom_world *w, loom_mesh **mesh, int model, int integrator) {
  *mesh = fx_grid(10, 0.9, v3(0, 0, 1.5), LOOM_PLANE_XZ);
  loom_cloth_def d = fx_def(model, "cloth", *mesh);
  d.integrator = integrator;
  d.drag = 0;
  /* the tests teleport pins by 0.2 m through a 9 cm grid: the cloth crosses itself at once,
   * which is the collision pipeline's business (tests/lua/collide_test.lua), not the pins' */
  d.self_collision = 0;
  int c = loom_cloth_create(w, &d);
  CHECK_MSG(c != 0, "%s", loom_last_error());
  return c;
}

TEST(pins_pinned_vertices_never_move) {
  /* Two top corners pinned while the cloth falls and swings for 1000 steps: their positions stay
   * bitwise identical, their velocities and visible masses stay zero, for every model and
   * integrator (000 behaviour 2, 001 behaviour 3). */
  const int models[3] = {LOOM_MODEL_SPRINGS, LOOM_MODEL_SPRINGS_PBD, LOOM_MODEL_BARAFF_WITKIN};
  for (int mi = 0; mi < 3; mi++)
    for (int integ = LOOM_INTEGRATOR_SYMPLECTIC; integ <= LOOM_INTEGRATOR_RK4; integ++) {
      loom_world *w = fx_world(1.0 / 240);
      /* horizontal cloth held by two adjacent corners: it falls and swings down */
      loom_mesh *m = fx_grid(8, 0.7, v3(0, 0, 1.5), LOOM_PLANE_XY);
      loom_cloth_def d = fx_def(models[mi], "cloth", m);
      d.integrator = integ;
      int c = loom_cloth_create(w, &d);
      const int32_t corners[2] = {56, 63};
      int g = loom_pins_create(w, c, corners, 2);
      CHECK(g != 0);
      const vec3 *x = loom_body_x(w, c);
      vec3 keep[2] = {x[56], x[63]};
      vec3 start[64];
      memcpy(start, x, sizeof start);
      for (int s = 0; s < 1000; s++) {
        loom_world_step(w);
        if (memcmp(&keep[0], &x[56], sizeof(vec3)) || memcmp(&keep[1], &x[63], sizeof(vec3))) {
          harness_fail(__FILE__, __LINE__, "model %d integrator %d: pinned vertex moved at step %d", models[mi], integ,
                       s);
          break;
        }
      }
      const vec3 *v = loom_body_v(w, c);
      CHECK(v[56].x == 0 && v[56].y == 0 && v[56].z == 0 && v[63].z == 0);
      /* a pin is a constraint: inverse mass 0, the mass itself stays what it is */
      CHECK(loom_body_inv_mass(w, c)[56] == 0 && loom_body_inv_mass(w, c)[63] == 0);
      CHECK(loom_body_m(w, c)[56] > 0 && loom_body_m(w, c)[63] > 0);
      double moved = 0; /* the free part did fall */
      for (int i = 0; i < 56; i++) moved = fmax(moved, v3_dist(x[i], start[i]));
      CHECK_MSG(moved > 0.3, "model %d integrator %d: free vertices moved only %.3g m", models[mi], integ, moved);
      CHECK_EQ_INT(loom_world_message_count(w), 0);
      loom_mesh_destroy(m);
      loom_world_destroy(w);
    }
}

TEST(pins_follow_targets_exactly) {
  /* A group following a scripted offset reaches rest + offset exactly at the end of every step
   * (the pins move linearly over the substeps and land on the target), with velocity
   * (target - previous offset) / dt, and loom_pins_offset reports the target. */
  for (int integ = LOOM_INTEGRATOR_SYMPLECTIC; integ <= LOOM_INTEGRATOR_RK4; integ++) {
    const double dt = 1.0 / 100;
    loom_world *w = fx_world(dt);
    loom_mesh *m;
    int c = hanging_cloth(w, &m, LOOM_MODEL_SPRINGS, integ);
    int32_t top[10];
    for (int i = 0; i < 10; i++) top[i] = 90 + i;
    int g = loom_pins_create(w, c, top, 10);
    CHECK_EQ_INT(loom_pins_count(w, g), 10);
    CHECK_EQ_INT(loom_pins_held(w, g), 1);
    vec3 rest[10];
    for (int i = 0; i < 10; i++) rest[i] = loom_body_x(w, c)[90 + i];
    vec3 prev = v3(0, 0, 0);
    int exact = 1;
    double worst_v = 0;
    for (int s = 1; s <= 300; s++) {
      double t = s * dt;
      vec3 off = v3(0.2 * sin(3 * t), 0.1 * t, 0.15 * (1 - cos(2 * t)));
      CHECK(loom_pins_set_target(w, g, &off) == 0);
      loom_world_step(w);
      const vec3 *x = loom_body_x(w, c), *v = loom_body_v(w, c);
      for (int i = 0; i < 10; i++) {
        vec3 want = v3_add(rest[i], off);
        if (memcmp(&want, &x[90 + i], sizeof want)) exact = 0;
        worst_v = fmax(worst_v, v3_dist(v[90 + i], v3_scale(v3_sub(off, prev), 1.0 / dt)));
      }
      vec3 o;
      CHECK(loom_pins_offset(w, g, &o) == 0);
      CHECK(o.x == off.x && o.y == off.y && o.z == off.z);
      prev = off;
    }
    /* a jump between offsets of very different magnitude (rest.y = 0 in the xz plane): the end
     * of the step must land on the target itself, not on offset + (target - offset) */
    vec3 big = v3(0, 1.0, 0), tiny = v3(0, 1e-17, 0);
    loom_pins_set_target(w, g, &big);
    loom_world_step(w);
    loom_pins_set_target(w, g, &tiny);
    loom_world_step(w);
    for (int i = 0; i < 10; i++) {
      vec3 want = v3_add(rest[i], tiny);
      if (memcmp(&want, &loom_body_x(w, c)[90 + i], sizeof want)) exact = 0;
    }
    CHECK_MSG(exact, "integrator %d: pins missed rest + offset (bitwise)", integ);
    CHECK_MSG(worst_v <= 1e-12, "integrator %d: pin velocity error %.3g m/s", integ, worst_v);
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
}

/* Total momentum and mass of a soft body (real masses). */
static vec3 momentum(loom_world *w, int c, double *mass_out) {
  const cloth_body *b = fx_soft(w, c);
  vec3 p = v3(0, 0, 0);
  double M = 0;
  for (int i = 0; i < b->p.n; i++) {
    p = v3_madd(p, b->p.v[i], b->p.m[i]);
    M += b->p.m[i];
  }
  *mass_out = M;
  return p;
}

TEST(pins_release_hold_rebases) {
  /* Releasing gives the vertices their masses back: with nothing held, the cloth's momentum then
   * changes by exactly M g t (internal forces cancel; no drag), 1e-12 relative. Holding again
   * keeps the vertices where they are (the group's rest positions are re-based so that
   * rest + offset = x) and a later target moves them relative to that place. */
  const double dt = 1.0 / 120;
  loom_world *w = fx_world(dt);
  loom_mesh *m;
  int c = hanging_cloth(w, &m, LOOM_MODEL_SPRINGS, LOOM_INTEGRATOR_SYMPLECTIC);
  const double *mass = fx_soft(w, c)->p.m;
  const int32_t pins[2] = {90, 99};
  int g = loom_pins_create(w, c, pins, 2);
  vec3 off = v3(0.1, 0, 0.2);
  CHECK(loom_pins_set_target(w, g, &off) == 0);
  for (int s = 0; s < 30; s++) loom_world_step(w);
  CHECK(loom_pins_release(w, g) == 0);
  CHECK_EQ_INT(loom_pins_held(w, g), 0);
  CHECK(loom_body_m(w, c)[90] == mass[90] && loom_body_m(w, c)[99] == mass[99]);
  double M;
  vec3 p0 = momentum(w, c, &M);
  vec3 x90 = loom_body_x(w, c)[90];
  for (int s = 0; s < 30; s++) loom_world_step(w);
  vec3 p1 = momentum(w, c, &M);
  vec3 want = v3_add(p0, v3(0, 0, -9.81 * M * 30 * dt));
  CHECK_MSG(v3_dist(p1, want) <= 1e-12 * v3_len(want), "momentum after release %.17g, want %.17g", p1.z, want.z);
  CHECK(v3_dist(loom_body_x(w, c)[90], x90) > 1e-3); /* released: it moves */
  vec3 here[2] = {loom_body_x(w, c)[90], loom_body_x(w, c)[99]};
  CHECK(loom_pins_hold(w, g) == 0);
  CHECK_EQ_INT(loom_pins_held(w, g), 1);
  CHECK(loom_body_inv_mass(w, c)[90] == 0 && loom_body_m(w, c)[90] > 0);
  vec3 o;
  loom_pins_offset(w, g, &o);
  CHECK(o.x == off.x && o.z == off.z); /* holding keeps the offset... */
  for (int s = 0; s < 30; s++) loom_world_step(w);
  /* ...and the vertices where they were: (x - offset) + offset is x within an ulp or two */
  for (int k = 0; k < 2; k++) CHECK(v3_dist(loom_body_x(w, c)[pins[k]], here[k]) <= 1e-15);
  vec3 off2 = v3_add(off, v3(0, 0.3, 0));
  loom_pins_set_target(w, g, &off2);
  loom_world_step(w);
  for (int k = 0; k < 2; k++) CHECK(v3_dist(loom_body_x(w, c)[pins[k]], v3_add(here[k], v3(0, 0.3, 0))) <= 1e-15);
  /* release and hold twice in a row are no-ops */
  CHECK(loom_pins_hold(w, g) == 0);
  CHECK(loom_pins_release(w, g) == 0);
  CHECK(loom_pins_release(w, g) == 0);
  CHECK(loom_body_m(w, c)[99] == mass[99]);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(pins_unpin_restores_mass) {
  loom_world *w = fx_world(1.0 / 120);
  loom_mesh *m;
  int c = hanging_cloth(w, &m, LOOM_MODEL_BARAFF_WITKIN, LOOM_INTEGRATOR_SYMPLECTIC);
  double m0[100];
  memcpy(m0, loom_body_m(w, c), sizeof m0);
  const int32_t three[3] = {90, 95, 99};
  int g = loom_pins_create(w, c, three, 3);
  CHECK(loom_body_m(w, c)[95] == m0[95] && loom_body_inv_mass(w, c)[95] == 0);
  int32_t one = 95;
  CHECK_EQ_INT(loom_pins_unpin(w, c, &one, 1), 1);
  CHECK(loom_body_m(w, c)[95] == m0[95]); /* bitwise: the mass never changed */
  CHECK(fx_soft(w, c)->p.inv_m[95] == 1.0 / m0[95]);
  CHECK_EQ_INT(loom_pins_count(w, g), 2);
  CHECK_EQ_INT(loom_pins_unpin(w, c, &one, 1), 0); /* not pinned any more */
  /* the freed vertex moves with the cloth, the others stay */
  vec3 p90 = loom_body_x(w, c)[90];
  double z95 = loom_body_x(w, c)[95].z;
  for (int s = 0; s < 20; s++) loom_world_step(w);
  CHECK(loom_body_x(w, c)[95].z < z95 - 1e-3);
  CHECK(memcmp(&p90, &loom_body_x(w, c)[90], sizeof p90) == 0);
  /* emptying the group kills its handle */
  const int32_t rest[2] = {90, 99};
  CHECK_EQ_INT(loom_pins_unpin(w, c, rest, 2), 2);
  CHECK_EQ_INT(loom_pins_count(w, g), -1);
  CHECK_EQ_INT(loom_pins_held(w, g), -1);
  vec3 z = v3(0, 0, 0);
  CHECK(loom_pins_set_target(w, g, &z) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "stale");
  CHECK(memcmp(loom_body_m(w, c), m0, sizeof m0) == 0);
  /* a vertex can be pinned again afterwards */
  CHECK(loom_pins_create(w, c, rest, 2) != 0);
  int32_t bad = 100;
  CHECK_EQ_INT(loom_pins_unpin(w, c, &bad, 1), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "out of range");
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(pins_set_offset_teleports) {
  loom_world *w = fx_world(1.0 / 120);
  loom_mesh *m;
  int c = hanging_cloth(w, &m, LOOM_MODEL_SPRINGS, LOOM_INTEGRATOR_VERLET);
  const int32_t pins[2] = {90, 99};
  int g = loom_pins_create(w, c, pins, 2);
  vec3 r90 = loom_body_x(w, c)[90];
  for (int s = 0; s < 10; s++) loom_world_step(w);
  vec3 off = v3(-0.5, 0.25, 1.0);
  CHECK(loom_pins_set_offset(w, g, &off) == 0);
  vec3 want = v3_add(r90, off);
  CHECK(memcmp(&want, &loom_body_x(w, c)[90], sizeof want) == 0);
  CHECK(v3_len(loom_body_v(w, c)[90]) == 0);
  loom_world_step(w);
  CHECK(memcmp(&want, &loom_body_x(w, c)[90], sizeof want) == 0); /* target = offset: stays */
  CHECK(v3_len(loom_body_v(w, c)[90]) == 0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(pins_argument_validation) {
  loom_world *w = fx_world(1.0 / 120);
  loom_mesh *m;
  int c = hanging_cloth(w, &m, LOOM_MODEL_SPRINGS, LOOM_INTEGRATOR_SYMPLECTIC);
  int32_t bad[2] = {3, 100};
  CHECK(loom_pins_create(w, c, bad, 2) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "vertex 100 out of range");
  int32_t dup[2] = {3, 3};
  CHECK(loom_pins_create(w, c, dup, 2) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "listed twice");
  CHECK(loom_pins_create(w, c, dup, 0) == 0);
  CHECK(loom_pins_create(w, c, NULL, 1) == 0);
  int32_t one = 3;
  int g = loom_pins_create(w, c, &one, 1);
  CHECK(g != 0);
  CHECK(loom_pins_create(w, c, &one, 1) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "already pinned");
  /* a failed creation pinned nothing */
  CHECK(loom_body_m(w, c)[100 - 1] > 0 && fx_soft(w, c)->p.pin_group[99] == -1);
  vec3 nan = v3(NAN, 0, 0);
  CHECK(loom_pins_set_target(w, g, &nan) == -1);
  CHECK(loom_pins_set_target(w, g, NULL) == -1);
  CHECK(loom_pins_set_offset(w, g, &nan) == -1);
  CHECK(loom_pins_set_target(NULL, g, &nan) == -1);
  /* offsets that put a vertex beyond the world's reach: refused, the vertex where it was */
  const vec3 x3 = loom_body_x(w, c)[3];
  vec3 far = v3(1e300, 0, 0), edge = v3(0, 0, 2e6), near = v3(0, 0, 0.5);
  CHECK(loom_pins_set_offset(w, g, &far) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "beyond the world's reach");
  CHECK(loom_pins_set_target(w, g, &edge) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "puts vertex 3");
  CHECK(loom_body_x(w, c)[3].x == x3.x && loom_body_x(w, c)[3].z == x3.z);
  CHECK(loom_pins_set_offset(w, g, &near) == 0);
  CHECK(loom_body_x(w, c)[3].z == x3.z + 0.5);
  CHECK(loom_pins_count(w, 0) == -1 && loom_pins_count(w, 12345) == -1);
  /* pins on a rigid body or a stale body */
  int r = fx_rigid(w, "ball", LOOM_SHAPE_SPHERE, v3(5, 5, 5), NULL);
  CHECK(loom_pins_create(w, r, &one, 1) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "not a soft body");
  CHECK(loom_body_destroy(w, c) == 0);
  CHECK(loom_pins_count(w, g) == -1); /* groups die with their body */
  CHECK(loom_pins_create(w, c, &one, 1) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "stale");
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}
