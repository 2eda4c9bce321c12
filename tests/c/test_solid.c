/* Solids (issue 10): the formulas taken from papers, each against finite differences — document
 * 002's constraint forces (Teschner et al. 2004) and the stable Neo-Hookean stress and Hessian
 * (Smith et al. 2018) — the tet lattices' counts, and document 002's spatial hash against brute
 * force. */
#include <string.h>

#include "harness.h"
#include "kernel_fixtures.h"
#include "solid/solid.h"

static loom_world *world0(double dt) {
  loom_world_def wd = {dt, {0, 0, 0}, {0, 0, 0}};
  return loom_world_create(&wd);
}

static int make_solid(loom_world *w, const char *name, loom_tet_mesh *m, int model, double kd, double kv, double dc) {
  loom_solid_def d;
  loom_solid_def_default(&d, model);
  d.name = name;
  d.mesh = m;
  d.node_mass = 0.05;
  d.distance = kd;
  d.volume = kv;
  d.damping = dc;
  return loom_solid_create(w, &d);
}

static solid_body *solid_at(loom_world *w, int h) { return solid_of(&w->bodies[world_slot(w, h, LOOM_KIND_SOLID, "test")]); }

TEST(solid_tet_box_has_002_counts_and_a_closed_outward_surface) {
  loom_vec3 size = {1, 2, 3}, c = {0, 0, 0};
  loom_tet_mesh *m = loom_tet_mesh_box(&size, 5, 5, 5, &c, 5);
  CHECK(m != NULL);
  CHECK_EQ_INT(loom_tet_mesh_vertex_count(m), 216);
  CHECK_EQ_INT(loom_tet_mesh_edge_count(m), 990);
  CHECK_EQ_INT(loom_tet_mesh_triangle_count(m), 300);
  CHECK_EQ_INT(loom_tet_mesh_tet_count(m), 625);
  CHECK_NEAR(loom_tet_mesh_volume(m), 6.0, 1e-12);
  /* divergence theorem over the surface: sum x . n A / 3 = volume when the normals point out */
  double v = 0;
  for (int t = 0; t < m->nf; t++) {
    const vec3 a = m->v[m->face[3 * t]], b = m->v[m->face[3 * t + 1]], d = m->v[m->face[3 * t + 2]];
    v += v3_dot(a, v3_cross(b, d)) / 6.0;
  }
  CHECK_NEAR(v, 6.0, 1e-12);
  loom_tet_mesh_destroy(m);
}

/* A random, mildly deformed 2 x 2 x 2 lattice. */
static loom_tet_mesh *deformed(fx_rng *r, double amount) {
  loom_vec3 size = {1, 1, 1}, c = {0, 0, 0};
  loom_tet_mesh *m = loom_tet_mesh_box(&size, 2, 2, 2, &c, 5);
  (void)r, (void)amount;
  return m;
}

TEST(solid_teschner_forces_are_minus_the_energy_gradient_and_conserve_momentum) {
  fx_rng r = {7};
  loom_world *w = world0(0.01);
  loom_tet_mesh *m = deformed(&r, 0);
  const int h = make_solid(w, "s", m, LOOM_SOLID_TESCHNER, 37, 13, 0);
  CHECK(h > 0);
  solid_body *b = solid_at(w, h);
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.08));
  vec3 *F = calloc((size_t)b->p.n, sizeof(vec3));
  vec3 *v0 = calloc((size_t)b->p.n, sizeof(vec3));
  teschner_forces(b, b->p.x, v0, F);
  vec3 sum = v3(0, 0, 0), torque = v3(0, 0, 0);
  double worst = 0, scale = 0;
  for (int i = 0; i < b->p.n; i++) {
    sum = v3_add(sum, F[i]);
    torque = v3_add(torque, v3_cross(b->p.x[i], F[i]));
    scale = fmax(scale, v3_len(F[i]));
    for (int k = 0; k < 3; k++) {
      const double e = 1e-6;
      double *c = &b->p.x[i].x + k;
      const double x0 = *c;
      *c = x0 + e;
      const double ep = teschner_energy(b, b->p.x);
      *c = x0 - e;
      const double em = teschner_energy(b, b->p.x);
      *c = x0;
      worst = fmax(worst, fabs(-(ep - em) / (2 * e) - (&F[i].x)[k]));
    }
  }
  CHECK_MSG(worst < 1e-6 * scale, "|F + dE/dx| = %g (forces up to %g)", worst, scale);
  CHECK(v3_len(sum) < 1e-10 * scale);
  CHECK(v3_len(torque) < 1e-10 * scale);
  /* the damping term takes energy out: sum f_d . v <= 0 for any velocities */
  b->params.distance = 0;
  b->params.volume = 0;
  b->params.damping = 2;
  for (int trial = 0; trial < 20; trial++) {
    for (int i = 0; i < b->p.n; i++) v0[i] = fx_vec(&r), F[i] = v3(0, 0, 0);
    teschner_forces(b, b->p.x, v0, F);
    double power = 0;
    for (int i = 0; i < b->p.n; i++) power += v3_dot(F[i], v0[i]);
    CHECK(power <= 0);
  }
  free(F);
  free(v0);
  loom_tet_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(solid_neohookean_stress_and_hessian_match_finite_differences) {
  fx_rng r = {11};
  double mu, la, al;
  neohookean_params(1e6, 0.3, &mu, &la, &al);
  for (int trial = 0; trial < 20; trial++) {
    double F[9];
    for (int i = 0; i < 9; i++) F[i] = (i % 4 == 0 ? 1.0 : 0.0) + 0.15 * fx_sym(&r);
    double P[9], H[81];
    neohookean_psi(F, mu, la, al, P, NULL, 0);
    /* P = dPsi/dF */
    for (int i = 0; i < 9; i++) {
      const double e = 1e-6, f0 = F[i];
      F[i] = f0 + e;
      const double pp = neohookean_psi(F, mu, la, al, NULL, NULL, 0);
      F[i] = f0 - e;
      const double pm = neohookean_psi(F, mu, la, al, NULL, NULL, 0);
      F[i] = f0;
      CHECK_NEAR((pp - pm) / (2 * e), P[i], 1e-6 * mu);
    }
    /* the exact Hessian equals dP/dF */
    double Hp[81];
    neohookean_psi(F, mu, la, al, NULL, H, 0);
    neohookean_psi(F, mu, la, al, NULL, Hp, 1);
    double fd[81];
    for (int j = 0; j < 9; j++) {
      /* column j: dP/dF_j, with vec(F) ordered by F's columns (index 3 r + c -> c * 3 + r) */
      const int fj = 3 * (j % 3) + j / 3;
      const double e = 1e-6, f0 = F[fj];
      double Pp[9], Pm[9];
      F[fj] = f0 + e;
      neohookean_psi(F, mu, la, al, Pp, NULL, 0);
      F[fj] = f0 - e;
      neohookean_psi(F, mu, la, al, Pm, NULL, 0);
      F[fj] = f0;
      for (int i = 0; i < 9; i++) {
        const int fi = 3 * (i % 3) + i / 3;
        fd[i * 9 + j] = (Pp[fi] - Pm[fi]) / (2 * e);
      }
    }
    double worst = 0;
    for (int i = 0; i < 81; i++) worst = fmax(worst, fabs(fd[i] - H[i]));
    CHECK_MSG(worst < 1e-4 * la, "trial %d: |H - dP/dF| = %g (lambda %g)", trial, worst, la);
    memcpy(H, Hp, sizeof H);
    /* symmetric, positive semi-definite: x^T H x >= 0 */
    for (int k = 0; k < 10; k++) {
      double x[9], q = 0;
      for (int i = 0; i < 9; i++) x[i] = fx_sym(&r);
      for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) q += x[i] * H[i * 9 + j] * x[j];
      CHECK(q >= -1e-9 * la);
    }
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < 9; j++) CHECK_NEAR(H[i * 9 + j], H[j * 9 + i], 1e-9 * la);
  }
  /* at rest: no stress, no energy */
  double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, P0[9];
  CHECK_NEAR(neohookean_psi(I, mu, la, al, P0, NULL, 0), 0, 1e-9);
  for (int i = 0; i < 9; i++) CHECK_NEAR(P0[i], 0, 1e-9);
}

TEST(solid_neohookean_analytic_projection_equals_the_numeric_eigen_clamp) {
  /* Smith et al. 2019's closed-form eigensystem (project = 1) against the 9 x 9 Jacobi clamp
   * (project = 2) on compressed, stretched, sheared, inverted and nearly flat elements: the same
   * positive semi-definite matrix. */
  fx_rng r = {23};
  const double nus[3] = {0.3, 0.45, 0.49};
  int clamped = 0;
  for (int trial = 0; trial < 300; trial++) {
    double mu, la, al;
    neohookean_params(1e6, nus[trial % 3], &mu, &la, &al);
    double F[9];
    const double amp = trial < 100 ? 0.3 : trial < 200 ? 0.8 : 1.5;
    for (int i = 0; i < 9; i++) F[i] = (i % 4 == 0 ? (trial % 5 == 0 ? 0.4 : 1.0) : 0.0) + amp * fx_sym(&r);
    if (trial % 7 == 0) /* inverted */
      for (int c = 0; c < 3; c++) F[c] = -F[c];
    if (trial % 11 == 0) /* nearly flat: the third row almost a combination of the others */
      for (int c = 0; c < 3; c++) F[6 + c] = 0.5 * F[c] - 0.25 * F[3 + c] + 1e-7 * fx_sym(&r);
    double Ha[81], Hn[81], H[81];
    neohookean_psi(F, mu, la, al, NULL, H, 0);
    neohookean_psi(F, mu, la, al, NULL, Ha, 1);
    neohookean_psi(F, mu, la, al, NULL, Hn, 2);
    double worst = 0, scale = 0, moved = 0;
    for (int i = 0; i < 81; i++) {
      worst = fmax(worst, fabs(Ha[i] - Hn[i]));
      scale = fmax(scale, fabs(Hn[i]));
      moved = fmax(moved, fabs(Hn[i] - H[i]));
    }
    if (moved > 1e-6 * scale) clamped++;
    CHECK_MSG(worst <= 1e-8 * scale, "trial %d: analytic and numeric projections differ by %.3g of %.3g", trial, worst,
              scale);
  }
  CHECK_MSG(clamped > 100, "only %d of 300 elements needed the projection", clamped);
}

TEST(solid_neohookean_forces_are_minus_the_energy_gradient) {
  fx_rng r = {5};
  loom_world *w = world0(0.01);
  loom_tet_mesh *m = deformed(&r, 0);
  loom_solid_def d;
  loom_solid_def_default(&d, LOOM_SOLID_NEOHOOKEAN);
  d.name = "nh";
  d.mesh = m;
  const int h = loom_solid_create(w, &d);
  CHECK(h > 0);
  solid_body *b = solid_at(w, h);
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.05));
  vec3 *F = calloc((size_t)b->p.n, sizeof(vec3));
  neohookean_forces(b, b->p.x, F);
  double worst = 0, scale = 0;
  for (int i = 0; i < b->p.n; i++) {
    scale = fmax(scale, v3_len(F[i]));
    for (int k = 0; k < 3; k++) {
      const double e = 1e-7;
      double *c = &b->p.x[i].x + k;
      const double x0 = *c;
      *c = x0 + e;
      const double ep = neohookean_energy(b, b->p.x);
      *c = x0 - e;
      const double em = neohookean_energy(b, b->p.x);
      *c = x0;
      worst = fmax(worst, fabs(-(ep - em) / (2 * e) - (&F[i].x)[k]));
    }
  }
  CHECK_MSG(worst < 1e-5 * scale, "|F + dE/dx| = %g (forces up to %g)", worst, scale);
  free(F);
  loom_tet_mesh_destroy(m);
  loom_world_destroy(w);
}

/* Document 002's spatial hash reports exactly the points brute force finds inside another solid's
 * tets: two lattices pushed into each other, randomly jiggled; the response is switched off (zero
 * stiffness, so shares are equal, and the points' contact flags are read before anything moves
 * them: the flags mark every colliding point). */
TEST(solid_spatial_hash_finds_the_same_points_as_brute_force) {
  fx_rng r = {21};
  for (int trial = 0; trial < 4; trial++) {
    loom_world *w = world0(1e-4);
    loom_vec3 size = {1, 1, 1}, ca = {0, 0, 0}, cb = {0.55 + 0.1 * trial, 0.13 * trial, -0.07 * trial};
    loom_tet_mesh *ma = loom_tet_mesh_box(&size, 4, 4, 4, &ca, 5), *mb = loom_tet_mesh_box(&size, 3, 5, 4, &cb, 6);
    loom_solid_def d;
    loom_solid_def_default(&d, LOOM_SOLID_TESCHNER);
    d.node_mass = 1;
    d.distance = d.volume = d.damping = 0;
    d.depth_contact = 1;
    d.name = "a";
    d.mesh = ma;
    const int ha = loom_solid_create(w, &d);
    d.name = "b";
    d.mesh = mb;
    const int hb = loom_solid_create(w, &d);
    CHECK(ha > 0 && hb > 0);
    solid_body *A = solid_at(w, ha), *B = solid_at(w, hb);
    for (int i = 0; i < A->p.n; i++) A->p.x[i] = v3_add(A->p.x[i], v3_scale(fx_vec(&r), 0.03));
    for (int i = 0; i < B->p.n; i++) B->p.x[i] = v3_add(B->p.x[i], v3_scale(fx_vec(&r), 0.03));
    /* brute force at the positions the step will test (nothing moves them before: no forces) */
    int expect_a = 0, expect_b = 0;
    uint8_t *in_a = calloc(256, 1), *in_b = calloc(256, 1);
    CHECK(A->p.n <= 256 && B->p.n <= 256);
    for (int side = 0; side < 2; side++) {
      solid_body *P = side ? B : A, *T = side ? A : B;
      uint8_t *in = side ? in_b : in_a;
      for (int i = 0; i < P->p.n; i++)
        for (int t = 0; t < T->model.nt && !in[i]; t++) {
          const int32_t *q = T->model.tet + 4 * t;
          double wt[4];
          tet_barycentric(P->p.x[i], T->p.x[q[0]], T->p.x[q[1]], T->p.x[q[2]], T->p.x[q[3]], wt);
          if (wt[0] >= 0 && wt[1] >= 0 && wt[2] >= 0 && wt[3] >= 0) in[i] = 1;
        }
      for (int i = 0; i < P->p.n; i++) *(side ? &expect_b : &expect_a) += in[i];
    }
    CHECK(expect_a > 10 && expect_b > 10);
    loom_world_step(w);
    CHECK_EQ_INT(w->stats.solid_points, expect_a + expect_b);
    for (int i = 0; i < A->p.n; i++) CHECK(A->p.contact[i] == in_a[i]);
    for (int i = 0; i < B->p.n; i++) CHECK(B->p.contact[i] == in_b[i]);
    /* every depth finite: the response moved the points by finite amounts */
    for (int i = 0; i < A->p.n; i++) CHECK(v3_isfinite(A->p.x[i]));
    free(in_a);
    free(in_b);
    loom_tet_mesh_destroy(ma);
    loom_tet_mesh_destroy(mb);
    loom_world_destroy(w);
  }
}

/* The implicit damping of the distance constraints solves (M + h D) u' = M u: momentum kept,
 * kinetic energy taken, uniform motion untouched, and the residual small. */
TEST(solid_teschner_implicit_damping_solves_its_system) {
  fx_rng r = {17};
  loom_world *w = world0(0.01);
  loom_tet_mesh *m = deformed(&r, 0);
  const int h = make_solid(w, "s", m, LOOM_SOLID_TESCHNER, 10, 5, 3);
  solid_body *b = solid_at(w, h);
  const int n = b->p.n;
  vec3 *u = calloc((size_t)n, sizeof(vec3)), *u0 = calloc((size_t)n, sizeof(vec3));
  vec3 *work = calloc((size_t)n * 4, sizeof(vec3));
  vec3 *eu = calloc((size_t)b->model.ne, sizeof(vec3));
  b->scratch.edge_u = eu;
  vec3 *v0buf = calloc((size_t)n, sizeof(vec3));
  b->scratch.v0 = v0buf;
  memset(b->state.cn, 0, sizeof(vec3) * (size_t)n);
  b->scratch.r = work, b->scratch.d = work + n, b->scratch.q = work + 2 * n, b->scratch.s = work + 3 * n;
  for (int i = 0; i < n; i++) u0[i] = u[i] = fx_vec(&r);
  teschner_damp(b, b->p.x, u, 0.05);
  vec3 p0 = v3(0, 0, 0), p1 = v3(0, 0, 0);
  double k0 = 0, k1 = 0;
  for (int i = 0; i < n; i++) {
    p0 = v3_madd(p0, u0[i], b->p.m[i]), p1 = v3_madd(p1, u[i], b->p.m[i]);
    k0 += b->p.m[i] * v3_len2(u0[i]), k1 += b->p.m[i] * v3_len2(u[i]);
  }
  CHECK(v3_len(v3_sub(p0, p1)) < 1e-9 * v3_len(p0) + 1e-12);
  CHECK_MSG(k1 < k0 && k1 > 0.01 * k0, "kinetic energy %g -> %g", k0, k1);
  /* the residual of (M + h D) u' = M u along every edge: recompute it */
  double worst = 0, scale = 0;
  vec3 *y = calloc((size_t)n, sizeof(vec3));
  for (int i = 0; i < n; i++) y[i] = v3_scale(u[i], b->p.m[i]);
  for (int k = 0; k < b->model.ne; k++) {
    const int i = b->model.edge[2 * k], j = b->model.edge[2 * k + 1];
    const vec3 d = v3_sub(b->p.x[j], b->p.x[i]);
    const double c = 0.05 * 3 / (b->restq.len0[k] * b->restq.len0[k]) * v3_dot(d, v3_sub(u[j], u[i])) / v3_len2(d);
    y[j] = v3_madd(y[j], d, c), y[i] = v3_madd(y[i], d, -c);
  }
  for (int i = 0; i < n; i++) {
    worst = fmax(worst, v3_len(v3_sub(y[i], v3_scale(u0[i], b->p.m[i]))));
    scale = fmax(scale, v3_len(u0[i]) * b->p.m[i]);
  }
  CHECK_MSG(worst < 2e-3 * scale, "residual %g of %g", worst, scale);
  /* the same system again: the first guess is now the last change (state.damp_prev), and the
   * answer is the same to the tolerance */
  vec3 *first = calloc((size_t)n, sizeof(vec3));
  memcpy(first, u, sizeof(vec3) * (size_t)n);
  /* (the solve's change: the momentum's drift, within the tolerance, is given back after it) */
  for (int i = 0; i < n; i++) CHECK(v3_dist(b->state.damp_prev[i], v3_sub(u[i], u0[i])) * b->p.m[i] < 2e-3 * scale);
  memcpy(u, u0, sizeof(vec3) * (size_t)n);
  teschner_damp(b, b->p.x, u, 0.05);
  double diff = 0;
  for (int i = 0; i < n; i++) diff = fmax(diff, v3_dist(u[i], first[i]) * b->p.m[i]);
  CHECK_MSG(diff < 2e-3 * scale, "warm solve differs by %g of %g", diff, scale);
  free(first);
  /* a uniform velocity is not damped (the last change is not taken as the guess: u's own
   * residual vanishes) */
  for (int i = 0; i < n; i++) u[i] = v3(0.3, -0.2, 0.1);
  teschner_damp(b, b->p.x, u, 0.05);
  for (int i = 0; i < n; i++) CHECK(v3_len(v3_sub(u[i], v3(0.3, -0.2, 0.1))) < 1e-12);
  b->scratch.r = b->scratch.d = b->scratch.q = b->scratch.s = NULL;
  b->scratch.edge_u = NULL, b->scratch.v0 = NULL;
  free(v0buf);
  free(u), free(u0), free(work), free(y), free(eu);
  loom_tet_mesh_destroy(m);
  loom_world_destroy(w);
}
