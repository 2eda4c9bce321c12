/* Simplex meshes and bodies (issue 11): document 004's counts and neighbour order, its model's
 * force (Eq. 6.3) against its closed-form single-vertex response and against the gradient of its
 * energy by finite differences, the exact oscillator against the equation, and the rotation fit of
 * the rotation-invariant model. */
#include <string.h>

#include "harness.h"
#include "kernel_fixtures.h"
#include "simplex/simplex.h"

static loom_world *world0(double dt) {
  loom_world_def wd = {dt, {0, 0, 0}, {0, 0, 0}};
  return loom_world_create(&wd);
}

static simplex_body *simplex_at(loom_world *w, int h) {
  return simplex_of(&w->bodies[world_slot(w, h, LOOM_KIND_SIMPLEX, "test")]);
}

TEST(simplex_generators_have_004_counts_and_three_symmetric_neighbours) {
  loom_vec3 c = {0, 0, 0};
  loom_simplex_mesh *s = loom_simplex_sphere(0.08, &c, 18, 36);
  loom_simplex_mesh *t = loom_simplex_torus(0.1, 0.035, &c, 30, 31);
  CHECK(s && t);
  CHECK_EQ_INT(loom_simplex_mesh_vertex_count(s), 1296);
  CHECK_EQ_INT(loom_simplex_mesh_edge_count(s), 1944);
  CHECK_EQ_INT(loom_simplex_mesh_face_count(s), 650);
  CHECK_EQ_INT(loom_simplex_mesh_vertex_count(t), 1860);
  CHECK_EQ_INT(loom_simplex_mesh_edge_count(t), 2790);
  CHECK_EQ_INT(loom_simplex_mesh_face_count(t), 930);
  const loom_simplex_mesh *ms[2] = {s, t};
  for (int k = 0; k < 2; k++) {
    const int n = loom_simplex_mesh_vertex_count(ms[k]);
    const int32_t *nb = loom_simplex_mesh_neighbors(ms[k]);
    for (int i = 0; i < n; i++)
      for (int a = 0; a < 3; a++) {
        const int j = nb[3 * i + a];
        CHECK(j >= 0 && j < n && j != i);
        CHECK(nb[3 * j] == i || nb[3 * j + 1] == i || nb[3 * j + 2] == i);
      }
  }
  loom_simplex_mesh_destroy(s);
  loom_simplex_mesh_destroy(t);
}

TEST(simplex_mra_force_is_eq_6_3_and_the_gradient_of_its_energy) {
  loom_world *w = world0(1.0 / 30);
  loom_vec3 c = {0, 0, 0};
  loom_simplex_mesh *m = loom_simplex_sphere(0.1, &c, 6, 10);
  loom_simplex_def d;
  loom_simplex_def_default(&d);
  d.name = "s";
  d.mesh = m;
  d.k = 0.3;
  d.k_anchor = 0.07;
  const int h = loom_simplex_create(w, &d);
  CHECK(h > 0);
  simplex_body *b = simplex_at(w, h);
  const int n = b->p.n;
  /* one vertex displaced by d: -(k_r + 3k) d on it, +k d on each neighbour */
  const vec3 dd = v3(1e-3, -2e-3, 3e-3);
  b->p.x[4] = v3_add(b->p.x[4], dd);
  vec3 *F = calloc((size_t)n, sizeof(vec3));
  double *rot = calloc((size_t)n * 4, sizeof(double)), rb[4] = {1, 0, 0, 0};
  simplex_forces(b, b->p.x, F, rot, rb);
  CHECK_NEAR(F[4].x, -(0.07 + 0.9) * dd.x, 1e-15);
  CHECK_NEAR(F[4].z, -(0.07 + 0.9) * dd.z, 1e-15);
  for (int a = 0; a < 3; a++) {
    const int j = b->model.nbr[3 * 4 + a];
    CHECK_NEAR(F[j].x, 0.3 * dd.x, 1e-15);
    CHECK_NEAR(F[j].y, 0.3 * dd.y, 1e-15);
  }
  /* a random deformation: F = -dE/dx by central differences */
  uint64_t seed = 7;
  for (int i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b->p.x[i] = v3_add(b->p.x[i], v3(((seed >> 11) % 1000) * 1e-5, ((seed >> 23) % 1000) * 1e-5, ((seed >> 37) % 1000) * 1e-5));
  }
  simplex_forces(b, b->p.x, F, rot, rb);
  for (int i = 0; i < n; i += 5) {
    for (int a = 0; a < 3; a++) {
      const double eps = 1e-6;
      double *xi = &b->p.x[i].x + a, keep = *xi;
      *xi = keep + eps;
      const double ep = simplex_energy(b, b->p.x);
      *xi = keep - eps;
      const double em = simplex_energy(b, b->p.x);
      *xi = keep;
      CHECK_NEAR(v3_comp(F[i], a), -(ep - em) / (2 * eps), 1e-9);
    }
  }
  free(F), free(rot);
  loom_simplex_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(simplex_oscillator_exact_solves_the_equation_in_all_three_regimes) {
  const double cases[3][3] = {{0.001, 0.01, 0.1}, {0.001, 0.02, 0.1}, {0.001, 0.1, 0.1}}; /* under, critical, over */
  for (int k = 0; k < 3; k++) {
    const double m = cases[k][0], b = cases[k][1], kk = cases[k][2];
    double x, v;
    oscillator_exact(m, b, kk, 0.01, -0.3, 0, &x, &v);
    CHECK_NEAR(x, 0.01, 1e-15);
    CHECK_NEAR(v, -0.3, 1e-13);
    for (double t = 0.05; t < 1.0; t += 0.2) {
      const double hh = 1e-5;
      double xm, xp, vm, vp;
      oscillator_exact(m, b, kk, 0.01, -0.3, t, &x, &v);
      oscillator_exact(m, b, kk, 0.01, -0.3, t - hh, &xm, &vm);
      oscillator_exact(m, b, kk, 0.01, -0.3, t + hh, &xp, &vp);
      CHECK_NEAR((xp - xm) / (2 * hh), v, 1e-6);
      CHECK_NEAR(m * (vp - vm) / (2 * hh) + b * v + kk * x, 0, 1e-8);
    }
  }
}

TEST(simplex_rotation_fit_recovers_a_rotation_from_a_poor_start) {
  /* A = R0 S with S symmetric positive definite: the fit must give R0 */
  const quat q0 = q_normalize((quat){0.3, -0.5, 0.7, 0.2});
  const mat3 R0 = q_to_mat3(q0);
  mat3 S = {{{2.0, 0.3, 0.1}, {0.3, 1.5, -0.2}, {0.1, -0.2, 0.4}}};
  const mat3 A = m3_mul(&R0, &S);
  double q[4] = {1, 0, 0, 0};
  simplex_extract_rotation(&A, q, 40);
  const mat3 R = q_to_mat3((quat){q[0], q[1], q[2], q[3]});
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) CHECK_NEAR(R.m[r][c], R0.m[r][c], 1e-8);
}
