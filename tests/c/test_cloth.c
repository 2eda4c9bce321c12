/* test_cloth.c — cloth models (soft_springs.c, soft_baraff_witkin.c, soft_cloth.c): spring
 * topology and counts (001), zero force in the rest state, forces = -grad(energy) by central finite
 * differences, the dihedral angle and its gradient (Bridson et al. 2003) against geometry and
 * finite differences, momentum and angular momentum of internal forces, stiffness-proportional
 * damping (rigid motions free, dissipative, = damping x stiffness matrix at rest), analytic
 * energies of affine deformations (BW98), the position-based variant (001 behaviour 4), and
 * validation of cloth definitions. */
#include "kernel_fixtures.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

static int make_cloth(loom_world *w, const char *name, const loom_mesh *m, int model, double stretch, double shear,
                      double bend, double damping) {
  loom_cloth_def d = fx_def(model, name, m);
  d.stretch = stretch;
  d.shear = shear;
  d.bend = bend;
  d.damping = damping;
  d.drag = 0;
  int h = loom_cloth_create(w, &d);
  CHECK_MSG(h != 0, "cloth '%s' not created: %s", name, loom_last_error());
  return h;
}

/* n x n grid in the xy plane lifted onto a sphere of radius R (a spherical cap, curved rest
 * state); keeps the grid dimensions, so the springs model still sees a grid. */
static loom_mesh *curved_grid(int n, double size, double R) {
  loom_mesh *m = fx_grid(n, size, v3(0, 0, 0), LOOM_PLANE_XY);
  for (int i = 0; i < m->nv; i++) {
    vec3 p = m->v[i];
    m->v[i].z = sqrt(R * R - p.x * p.x - p.y * p.y) - R;
  }
  return m;
}

/* Random displacement of every vertex by up to `amp` metres per coordinate. */
static void perturb(vec3 *x, int n, double amp, fx_rng *r) {
  for (int i = 0; i < n; i++) x[i] = v3_add(x[i], v3_scale(fx_vec(r), amp));
}

static double mean_edge_length(const loom_mesh *m) {
  double s = 0;
  for (int e = 0; e < m->ne; e++) s += v3_dist(m->v[m->edge[2 * e]], m->v[m->edge[2 * e + 1]]);
  return s / m->ne;
}

/* Largest deviation between the model's forces at x (v = 0) and -dE/dx by central differences
 * with step h, relative to the largest force. */
static double gradient_error(const cloth_body *b, vec3 *x, double h) {
  int n = b->p.n;
  vec3 *F = calloc((size_t)n, sizeof *F), *v = calloc((size_t)n, sizeof *v);
  cloth_internal_forces(b, x, v, F);
  double err = 0, fmax_ = fx_max_norm(F, n);
  for (int i = 0; i < n; i++) {
    double *c = &x[i].x;
    for (int k = 0; k < 3; k++) {
      double keep = c[k];
      c[k] = keep + h;
      double ep = cloth_elastic_energy(b, x);
      c[k] = keep - h;
      double em = cloth_elastic_energy(b, x);
      c[k] = keep;
      double fd = -(ep - em) / (2 * h);
      err = fmax(err, fabs(fd - (&F[i].x)[k]));
    }
  }
  free(F);
  free(v);
  return fmax_ > 0 ? err / fmax_ : err;
}

/* Total force and total torque about the origin, with the scales they are compared to. */
static void momentum_sums(const vec3 *x, const vec3 *F, int n, double *force, double *force_scale, double *torque,
                          double *torque_scale) {
  vec3 fs = v3(0, 0, 0), ts = v3(0, 0, 0);
  double fsc = 0, tsc = 0;
  for (int i = 0; i < n; i++) {
    fs = v3_add(fs, F[i]);
    ts = v3_add(ts, v3_cross(x[i], F[i]));
    fsc += v3_len(F[i]);
    tsc += v3_len(x[i]) * v3_len(F[i]);
  }
  *force = v3_len(fs);
  *force_scale = fsc;
  *torque = v3_len(ts);
  *torque_scale = tsc;
}

/* ---- spring topology ------------------------------------------------------------------------ */

TEST(cloth_spring_counts_grid) {
  /* 001: N x N particles give 2N(N-1) structural, 2(N-1)^2 shear and 2N(N-2) bend springs. */
  const int Ns[] = {2, 3, 4, 10, 71};
  for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; k++) {
    const int N = Ns[k];
    for (int model = LOOM_MODEL_SPRINGS; model <= LOOM_MODEL_SPRINGS_PBD; model++) {
      loom_world *w = fx_world(1.0 / 240);
      loom_mesh *m = fx_grid(N, 1.0, v3(0, 0, 1), LOOM_PLANE_XY);
      int c = make_cloth(w, "grid", m, model, model == LOOM_MODEL_SPRINGS ? 500 : 1,
                         model == LOOM_MODEL_SPRINGS ? 50 : 1, model == LOOM_MODEL_SPRINGS ? 5 : 0.2, 0);
      int st = -1, sh = -1, be = -1;
      CHECK(loom_body_spring_counts(w, c, &st, &sh, &be) == 0);
      CHECK_EQ_INT(st, 2 * N * (N - 1));
      CHECK_EQ_INT(sh, 2 * (N - 1) * (N - 1));
      CHECK_EQ_INT(be, 2 * N * (N - 2));
      if (N == 71) {
        CHECK_EQ_INT(st, 9940);
        CHECK_EQ_INT(sh, 9800);
        CHECK_EQ_INT(be, 9798);
      }
      /* rest lengths: one grid spacing, a diagonal, two spacings */
      const cloth_body *b = fx_soft(w, c);
      const double dx = 1.0 / (N - 1);
      const double want[FAM_COUNT] = {dx, sqrt(2.0) * dx, 2 * dx};
      for (int f = 0; f < FAM_COUNT; f++)
        for (int q = b->model.fam_start[f]; q < b->model.fam_start[f + 1]; q++) {
          const spring *s = &b->model.springs[q];
          CHECK_MSG(fabs(s->rest - want[f]) <= 1e-14, "N %d family %d spring %d-%d rest %.17g, want %.17g", N, f, s->i,
                    s->j, s->rest, want[f]);
          /* the index difference says which neighbour it joins: +-1 / +-N (structural),
           * N +- 1 (shear), 2 / 2N (bend) */
          int d = abs(s->j - s->i);
          int ok = f == FAM_STRUCTURAL ? (d == 1 || d == N)
                   : f == FAM_SHEAR    ? (d == N + 1 || d == N - 1)
                                       : (d == 2 || d == 2 * N);
          CHECK_MSG(ok, "N %d family %d joins %d and %d", N, f, s->i, s->j);
        }
      loom_mesh_destroy(m);
      loom_world_destroy(w);
    }
  }
  /* rectangular grids: NY(NX-1) + NX(NY-1), 2(NX-1)(NY-1), NY(NX-2) + NX(NY-2) */
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = loom_mesh_grid(1.0, 2.0, 4, 7, NULL, LOOM_PLANE_XZ); /* 5 x 8 vertices */
  int c = make_cloth(w, "rect", m, LOOM_MODEL_SPRINGS, 500, 50, 5, 0);
  int st, sh, be;
  loom_body_spring_counts(w, c, &st, &sh, &be);
  CHECK_EQ_INT(st, 8 * 4 + 5 * 7);
  CHECK_EQ_INT(sh, 2 * 4 * 7);
  CHECK_EQ_INT(be, 8 * 3 + 5 * 6);
  /* Baraff-Witkin has no springs */
  int bw = make_cloth(w, "bw", m, LOOM_MODEL_BARAFF_WITKIN, 1000, 100, 1e-4, 0);
  loom_body_spring_counts(w, bw, &st, &sh, &be);
  CHECK(st == 0 && sh == 0 && be == 0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(cloth_spring_counts_general_mesh) {
  /* A hexagon fan: 7 vertices, 6 triangles, 12 edges, 6 interior edges (hinges). */
  vec3 v[7] = {v3(0, 0, 0)};
  int32_t t[18];
  for (int k = 0; k < 6; k++) {
    v[k + 1] = v3(cos(k * FX_PI / 3), sin(k * FX_PI / 3), 0);
    t[3 * k] = 0;
    t[3 * k + 1] = 1 + k;
    t[3 * k + 2] = 1 + (k + 1) % 6;
  }
  loom_mesh *hex = loom_mesh_from_arrays(v, 7, t, 6);
  CHECK(hex != NULL);
  /* the same grid as loom_mesh_grid, but passed as plain arrays: no grid dimensions */
  loom_mesh *g = fx_grid(6, 1.0, v3(0, 0, 0), LOOM_PLANE_XY);
  loom_mesh *plain = loom_mesh_from_arrays(loom_mesh_vertices(g), loom_mesh_vertex_count(g), loom_mesh_triangles(g),
                                           loom_mesh_triangle_count(g));
  CHECK(plain != NULL && plain->grid_nx == 0);
  const loom_mesh *meshes[2] = {hex, plain};
  for (int k = 0; k < 2; k++) {
    const loom_mesh *m = meshes[k];
    loom_world *w = fx_world(1.0 / 240);
    int c = make_cloth(w, "mesh", m, LOOM_MODEL_SPRINGS, 500, 50, 5, 0);
    int st, sh, be;
    CHECK(loom_body_spring_counts(w, c, &st, &sh, &be) == 0);
    /* edges become structural springs, no separate shear family, one bend spring per hinge
     * joining its two wing vertices */
    CHECK_EQ_INT(st, loom_mesh_edge_count(m));
    CHECK_EQ_INT(sh, 0);
    CHECK_EQ_INT(be, loom_mesh_hinge_count(m));
    if (k == 0) {
      CHECK_EQ_INT(st, 12);
      CHECK_EQ_INT(be, 6);
    } else {
      CHECK_EQ_INT(st, 5 * 6 * 2 + 25); /* 60 grid lines + 25 cell diagonals */
      CHECK_EQ_INT(be, 60 + 25 - 20);   /* interior edges = all edges - 20 boundary edges */
    }
    const cloth_body *b = fx_soft(w, c);
    const int32_t *hinge = loom_mesh_hinges(m);
    for (int q = 0; q < be; q++) {
      const spring *s = &b->model.springs[b->model.fam_start[FAM_BEND] + q];
      CHECK(s->i == hinge[4 * q + 2] && s->j == hinge[4 * q + 3]);
      CHECK_NEAR(s->rest, v3_dist(m->v[s->i], m->v[s->j]), 1e-15);
    }
    loom_world_destroy(w);
  }
  loom_mesh_destroy(hex);
  loom_mesh_destroy(plain);
  loom_mesh_destroy(g);
}

/* ---- rest state -------------------------------------------------------------------------------- */

TEST(cloth_zero_internal_force_at_rest) {
  /* 001 behaviour 2: a cloth in its rest shape feels no internal force (only gravity acts).
   * Checked for flat grids in two planes, a spherical cap (curved rest state) and a closed UV
   * sphere, with nonzero damping (velocities are zero), and again after a rigid motion of the
   * whole cloth (forces must not depend on position or orientation). Spring lengths and BW's
   * deformation gradients equal their rest values up to rounding, so the forces are bounded by
   * 1e-12 x (stiffness x mean edge length), the scale of one stretched edge's force;
   * springs_pbd has no forces (exactly 0). */
  loom_mesh *meshes[4] = {fx_grid(9, 0.6, v3(0.1, 0.2, 1.0), LOOM_PLANE_XY),
                          fx_grid(7, 0.5, v3(0, 0, 2), LOOM_PLANE_XZ), curved_grid(9, 0.4, 0.5),
                          loom_mesh_sphere(0.3, 16, 8)};
  const char *names[4] = {"flat xy", "flat xz", "cap", "sphere"};
  fx_rng r = {77};
  for (int k = 0; k < 4; k++) {
    const loom_mesh *m = meshes[k];
    const double L = mean_edge_length(m);
    for (int model = LOOM_MODEL_SPRINGS; model <= LOOM_MODEL_BARAFF_WITKIN; model++) {
      loom_world *w = fx_world(1.0 / 240);
      double ks = model == LOOM_MODEL_SPRINGS_PBD ? 1 : 1000, ksh = model == LOOM_MODEL_SPRINGS_PBD ? 1 : 100;
      double kb = model == LOOM_MODEL_BARAFF_WITKIN ? 1e-2 : (model == LOOM_MODEL_SPRINGS_PBD ? 1 : 10);
      int c = make_cloth(w, "c", m, model, ks, ksh, kb, 1e-3);
      int n = loom_body_vertex_count(w, c);
      vec3 *F = calloc((size_t)n, sizeof *F);
      CHECK(loom_body_internal_forces(w, c, F) == 0);
      /* springs_pbd has no forces at all: exactly 0 */
      double tol = model == LOOM_MODEL_SPRINGS_PBD ? 0.0 : 1e-12 * ks * L;
      CHECK_MSG(fx_max_norm(F, n) <= tol, "%s model %d: max |f| at rest %.3g > %.3g", names[k], model,
                fx_max_norm(F, n), tol);
      /* rigid motion of the rest shape */
      quat q = fx_quat(&r);
      vec3 t = v3_scale(fx_vec(&r), 3.0);
      vec3 *x = loom_body_x(w, c);
      for (int i = 0; i < n; i++) x[i] = v3_add(q_rotate(q, x[i]), t);
      CHECK(loom_body_internal_forces(w, c, F) == 0);
      /* rotation rounds the coordinates: relative 1e-12 of the same scale for every model */
      double tol2 = 1e-12 * (model == LOOM_MODEL_SPRINGS_PBD ? 1 : ks) * L;
      CHECK_MSG(fx_max_norm(F, n) <= tol2, "%s model %d: max |f| after a rigid motion %.3g > %.3g", names[k], model,
                fx_max_norm(F, n), tol2);
      CHECK_NEAR(cloth_elastic_energy(fx_soft(w, c), x), 0, 1e-20);
      free(F);
      loom_world_destroy(w);
    }
  }
  for (int k = 0; k < 4; k++) loom_mesh_destroy(meshes[k]);
}

/* ---- forces = -grad E ---------------------------------------------------------------------------- */

TEST(cloth_springs_forces_are_minus_energy_gradient) {
  /* f = k (|d| - L) d/|d| (001) must be -dE/dx of E = sum k (|d| - L)^2 / 2; each family alone and
   * all together, on a grid and on a general mesh, randomly deformed by up to 20 % of the spacing
   * in all three directions. Central differences with h = 1e-6 m have truncation error
   * ~ h^2 / L^2 ~ 1e-8 relative and rounding ~ eps E / (h F) ~ 1e-9: tolerance 1e-6 relative. */
  loom_mesh *grid = fx_grid(6, 0.5, v3(0, 0, 1), LOOM_PLANE_XY);
  loom_mesh *plain = loom_mesh_from_arrays(grid->v, grid->nv, grid->tri, grid->nt);
  const loom_mesh *meshes[2] = {grid, plain};
  const double ks[4][3] = {{500, 0, 0}, {0, 70, 0}, {0, 0, 30}, {500, 70, 30}};
  fx_rng r = {4242};
  for (int mk = 0; mk < 2; mk++)
    for (int f = 0; f < 4; f++) {
      if (mk == 1 && f == 1) continue; /* general meshes have no shear family */
      loom_world *w = fx_world(1.0 / 240);
      int c = make_cloth(w, "s", meshes[mk], LOOM_MODEL_SPRINGS, ks[f][0], ks[f][1], ks[f][2], 0);
      cloth_body *b = fx_soft(w, c);
      perturb(b->p.x, b->p.n, 0.2 * 0.1, &r);
      double e = gradient_error(b, b->p.x, 1e-6);
      CHECK_MSG(e <= 1e-6, "mesh %d family set %d: relative gradient error %.3g", mk, f, e);
      CHECK(cloth_elastic_energy(b, b->p.x) > 0);
      loom_world_destroy(w);
    }
  loom_mesh_destroy(grid);
  loom_mesh_destroy(plain);
}

TEST(cloth_bw_forces_are_minus_energy_gradient) {
  /* BW98 stretch, shear and bend conditions separately (damping 0), flat and curved rest states,
   * random deformations of up to 15 % of the spacing (well inside |w_u| > 0). Tolerance 1e-6
   * relative as for the springs (same error estimate). */
  loom_mesh *meshes[2] = {fx_grid(6, 0.5, v3(0, 0, 1), LOOM_PLANE_XY), curved_grid(6, 0.4, 0.5)};
  const double ks[4][3] = {{1000, 0, 0}, {0, 100, 0}, {0, 0, 0.5}, {1000, 100, 0.5}};
  const char *what[4] = {"stretch", "shear", "bend", "all"};
  fx_rng r = {99};
  for (int mk = 0; mk < 2; mk++)
    for (int f = 0; f < 4; f++) {
      loom_world *w = fx_world(1.0 / 240);
      int c = make_cloth(w, "bw", meshes[mk], LOOM_MODEL_BARAFF_WITKIN, ks[f][0], ks[f][1], ks[f][2], 0);
      cloth_body *b = fx_soft(w, c);
      /* one hinge per interior edge; on a grid line's edge a straight one, both opposite vertices
       * in the row (column) of the edge's end nearer the grid's border */
      CHECK(b->model.nbw == b->p.nt && b->model.nh == meshes[mk]->nh);
      const loom_mesh *m = meshes[mk];
      const int gx = m->grid_nx, gy = m->grid_ny;
      for (int h = 0; mk == 0 && h < b->model.nh; h++) {
        const bw_hinge *q = &b->model.hinges[h];
        const int c0 = q->v[0] % gx, r0 = q->v[0] / gx, c1 = q->v[1] % gx, r1 = q->v[1] / gx;
        const int c2 = q->v[2] % gx, r2 = q->v[2] / gx, c3 = q->v[3] % gx, r3 = q->v[3] / gx;
        if (c0 != c1 && r0 != r1) {
          /* |e|^2 / (A0 + A1) = 2 on square cells, halved */
          CHECK_MSG(fabs(q->weight - 1.0) < 1e-12, "diagonal hinge %d: weight %.17g, want 1", h, q->weight);
          continue;
        }
        const int lo = c0 == c1 ? (r0 < r1 ? r0 : r1) : (c0 < c1 ? c0 : c1), n = c0 == c1 ? gy : gx;
        const int want = lo < (n - 1) / 2 ? lo : lo + 1;
        const int ok = c0 == c1 ? r2 == want && r3 == want && c2 == c0 - 1 + 2 * (c2 > c0) && c3 != c2
                                : c2 == want && c3 == want && r2 != r3;
        CHECK_MSG(ok, "hinge %d (%d-%d): opposite vertices %d and %d are not in row/column %d", h, q->v[0], q->v[1],
                  q->v[2], q->v[3], want);
        CHECK_MSG(fabs(q->weight - 1.0) < 1e-12, "hinge %d: weight %.17g, want 1", h, q->weight);
      }
      double spacing = mk == 0 ? 0.1 : 0.08;
      perturb(b->p.x, b->p.n, 0.15 * spacing, &r);
      double e = gradient_error(b, b->p.x, 1e-6);
      CHECK_MSG(e <= 1e-6, "mesh %d %s: relative gradient error %.3g", mk, what[f], e);
      CHECK(cloth_elastic_energy(b, b->p.x) > 0);
      loom_world_destroy(w);
    }
  loom_mesh_destroy(meshes[0]);
  loom_mesh_destroy(meshes[1]);
}

/* ---- dihedral angle --------------------------------------------------------------------------- */

TEST(cloth_bw_hinge_angle_matches_geometry_and_its_gradient) {
  /* A hinge built with a known dihedral angle: edge x0 -> x1 along a unit vector e, wing a in the
   * direction d(alpha) around e, wing b in the direction d(beta). With n_A = e x (xa - x0) and
   * n_B = (xb - x0) x e the signed angle from n_A to n_B about e is beta - alpha - pi (0 when the
   * wings are on opposite sides of a flat sheet). The gradient (Bridson et al. 2003) is compared
   * with central differences of the angle (h = 1e-7, O(h^2) truncation on unit-size hinges:
   * tolerance 1e-6 relative to the largest gradient entry). Angles are drawn over
   * (-pi + 0.05, pi - 0.05), with extra samples near +-pi/2 and near 0. */
  fx_rng r = {1998};
  int tested = 0;
  for (int it = 0; it < 3000; it++) {
    vec3 e = fx_unit_vec(&r);
    vec3 p = v3_normalize(v3_cross(e, fx_unit_vec(&r)));
    vec3 q = v3_cross(e, p);
    double len = 0.2 + fx_unit(&r);
    double theta;
    if (it % 4 == 0)
      theta = (it % 8 == 0 ? 1 : -1) * (FX_PI / 2 + 0.05 * fx_sym(&r));
    else if (it % 4 == 1)
      theta = 0.01 * fx_sym(&r);
    else
      theta = (FX_PI - 0.05) * fx_sym(&r);
    double alpha = 2 * FX_PI * fx_unit(&r);
    double beta = alpha + FX_PI + theta;
    vec3 x[4];
    x[0] = v3_scale(fx_vec(&r), 2.0);
    x[1] = v3_madd(x[0], e, len);
    double ra = 0.1 + fx_unit(&r), rb = 0.1 + fx_unit(&r);
    vec3 da = v3_add(v3_scale(p, cos(alpha)), v3_scale(q, sin(alpha)));
    vec3 db = v3_add(v3_scale(p, cos(beta)), v3_scale(q, sin(beta)));
    /* wings project anywhere along the edge line, even beyond its ends */
    x[2] = v3_add(v3_madd(x[0], e, len * (1.6 * fx_unit(&r) - 0.3)), v3_scale(da, ra));
    x[3] = v3_add(v3_madd(x[0], e, len * (1.6 * fx_unit(&r) - 0.3)), v3_scale(db, rb));
    const int32_t v[4] = {0, 1, 2, 3};
    vec3 g[4];
    double ang = bw_hinge_angle(x, v, g);
    CHECK_MSG(fabs(ang - theta) <= 1e-12, "dihedral %.17g, built %.17g", ang, theta);
    /* swapping the wings flips the sign */
    const int32_t vs[4] = {0, 1, 3, 2};
    CHECK(fabs(bw_hinge_angle(x, vs, NULL) + ang) <= 1e-12);
    /* the gradient: translation and rotation invariance (sums) and finite differences */
    double gmax = 0;
    vec3 gs = v3(0, 0, 0), ts = v3(0, 0, 0);
    for (int k = 0; k < 4; k++) {
      gmax = fmax(gmax, v3_len(g[k]));
      gs = v3_add(gs, g[k]);
      ts = v3_add(ts, v3_cross(x[k], g[k]));
    }
    CHECK(v3_len(gs) <= 1e-12 * gmax);
    CHECK(v3_len(ts) <= 1e-12 * gmax * 4);
    const double h = 1e-7;
    double err = 0;
    for (int k = 0; k < 4; k++)
      for (int c = 0; c < 3; c++) {
        double *xc = &x[k].x;
        double keep = xc[c];
        xc[c] = keep + h;
        double ap = bw_hinge_angle(x, v, NULL);
        xc[c] = keep - h;
        double am = bw_hinge_angle(x, v, NULL);
        xc[c] = keep;
        err = fmax(err, fabs((ap - am) / (2 * h) - (&g[k].x)[c]));
      }
    CHECK_MSG(err <= 1e-6 * gmax, "theta %.6f: gradient error %.3g (max entry %.3g)", theta, err, gmax);
    tested++;
  }
  CHECK_EQ_INT(tested, 3000);
  /* degenerate hinges (zero-length edge, wing on the edge line) give angle 0 and a zero gradient */
  vec3 x[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0.5, 0, 0), v3(0.5, -1, 0)};
  const int32_t v[4] = {0, 1, 2, 3};
  vec3 g[4] = {v3(9, 9, 9), v3(9, 9, 9), v3(9, 9, 9), v3(9, 9, 9)};
  CHECK(bw_hinge_angle(x, v, g) == 0);
  CHECK(g[0].x == 0 && g[3].z == 0);
}

/* ---- momentum, damping ---------------------------------------------------------------------------- */

TEST(cloth_internal_forces_conserve_momentum) {
  /* Internal forces come from an energy (and a damping potential) invariant under translations
   * and rotations, so they sum to zero and exert no net torque — with damping and random
   * velocities too. Tolerance 1e-13 of the sum of |f| (resp. |x| |f|): rounding only. */
  loom_mesh *m = fx_grid(8, 0.7, v3(0.3, -0.2, 1.5), LOOM_PLANE_XY);
  fx_rng r = {5};
  for (int model = LOOM_MODEL_SPRINGS; model <= LOOM_MODEL_BARAFF_WITKIN; model += 2) {
    loom_world *w = fx_world(1.0 / 240);
    int c = make_cloth(w, "c", m, model, 800, 80, model == LOOM_MODEL_SPRINGS ? 20 : 0.05, 0.01);
    cloth_body *b = fx_soft(w, c);
    for (int trial = 0; trial < 5; trial++) {
      memcpy(b->p.x, b->p.rest, sizeof(vec3) * (size_t)b->p.n);
      perturb(b->p.x, b->p.n, 0.03, &r);
      for (int i = 0; i < b->p.n; i++) b->p.v[i] = v3_scale(fx_vec(&r), 2.0);
      vec3 *F = calloc((size_t)b->p.n, sizeof *F);
      CHECK(loom_body_internal_forces(w, c, F) == 0);
      double f, fs, t, ts;
      momentum_sums(b->p.x, F, b->p.n, &f, &fs, &t, &ts);
      CHECK(fs > 0);
      CHECK_MSG(f <= 1e-13 * fs, "model %d: |sum f| = %.3g (scale %.3g)", model, f, fs);
      CHECK_MSG(t <= 1e-13 * ts, "model %d: |sum x x f| = %.3g (scale %.3g)", model, t, ts);
      free(F);
    }
    loom_world_destroy(w);
  }
  loom_mesh_destroy(m);
}

TEST(cloth_damping_ignores_rigid_motion_and_dissipates) {
  /* Stiffness-proportional damping acts on the rate of change of each condition (spring length,
   * BW conditions, hinge angle), so a rigid translation or rotation of a deformed cloth adds no
   * force, any velocity field dissipates (sum f_d . v <= 0), and a stretching velocity is
   * opposed. f_d is isolated as f(x, v) - f(x, 0). */
  loom_mesh *m = fx_grid(7, 0.6, v3(0, 0, 1), LOOM_PLANE_XY);
  fx_rng r = {123};
  for (int model = LOOM_MODEL_SPRINGS; model <= LOOM_MODEL_BARAFF_WITKIN; model += 2) {
    loom_world *w = fx_world(1.0 / 240);
    int c = make_cloth(w, "c", m, model, 1000, 100, model == LOOM_MODEL_SPRINGS ? 10 : 0.01, 0.05);
    cloth_body *b = fx_soft(w, c);
    const int n = b->p.n;
    perturb(b->p.x, n, 0.02, &r);
    vec3 *F0 = calloc((size_t)n, sizeof *F0), *F = calloc((size_t)n, sizeof *F), *Fd = calloc((size_t)n, sizeof *Fd);
    vec3 *v = calloc((size_t)n, sizeof *v);
    cloth_internal_forces(b, b->p.x, v, F0);
    /* the scale of a damping force: damping x stiffness x (speed / length) x length */
    const double scale = 0.05 * 1000 * 1.0;
    /* rigid motions: v = u + omega x x */
    vec3 u = fx_vec(&r), om = v3_scale(fx_vec(&r), 3.0);
    for (int kind = 0; kind < 2; kind++) {
      for (int i = 0; i < n; i++) v[i] = kind == 0 ? u : v3_add(u, v3_cross(om, b->p.x[i]));
      cloth_internal_forces(b, b->p.x, v, F);
      double worst = 0;
      for (int i = 0; i < n; i++) worst = fmax(worst, v3_len(v3_sub(F[i], F0[i])));
      /* the elastic part (~1e2 N) is recomputed identically, so only damping rounding remains */
      CHECK_MSG(worst <= 1e-11 * scale, "model %d %s: damping force of a rigid motion %.3g", model,
                kind == 0 ? "translation" : "rotation", worst);
    }
    /* random velocities dissipate energy */
    for (int trial = 0; trial < 20; trial++) {
      for (int i = 0; i < n; i++) v[i] = fx_vec(&r);
      cloth_internal_forces(b, b->p.x, v, F);
      double power = 0;
      for (int i = 0; i < n; i++) power += v3_dot(v3_sub(F[i], F0[i]), v[i]);
      CHECK_MSG(power < 0, "model %d: damping power %.3g >= 0", model, power);
    }
    /* uniform expansion about the centre: every corner is pulled back */
    vec3 ctr = v3(0, 0, 1);
    for (int i = 0; i < n; i++) v[i] = v3_scale(v3_sub(b->p.x[i], ctr), 0.5);
    cloth_internal_forces(b, b->p.x, v, F);
    const int corners[4] = {0, 6, 42, 48};
    for (int k = 0; k < 4; k++) {
      int i = corners[k];
      Fd[i] = v3_sub(F[i], F0[i]);
      CHECK_MSG(v3_dot(Fd[i], v[i]) < 0, "model %d corner %d: damping force does not oppose the stretch", model, i);
    }
    free(F0);
    free(F);
    free(Fd);
    free(v);
    loom_world_destroy(w);
  }
  loom_mesh_destroy(m);
}

TEST(cloth_damping_is_damping_times_stiffness_matrix_at_rest) {
  /* Rayleigh damping: at the rest state (every condition C = 0) the damping force is
   * f_d = -damping K v with K the stiffness matrix (Hessian of E), i.e. damping times the
   * directional derivative of the elastic force along v: f_d(v) = damping d/de f(x + e v).
   * Central difference with e = 1e-6 (truncation ~e^2 relative; the elastic force is
   * O(e) so rounding is ~eps |f| / e): tolerance 1e-6 relative to |f_d|. Flat and curved rest
   * states, both force models, every term active. */
  loom_mesh *meshes[2] = {fx_grid(6, 0.5, v3(0, 0, 1), LOOM_PLANE_XZ), curved_grid(6, 0.4, 0.5)};
  fx_rng r = {808};
  const double beta = 0.02;
  for (int mk = 0; mk < 2; mk++)
    for (int model = LOOM_MODEL_SPRINGS; model <= LOOM_MODEL_BARAFF_WITKIN; model += 2) {
      loom_world *w = fx_world(1.0 / 240);
      int c = make_cloth(w, "c", meshes[mk], model, 1000, 100, model == LOOM_MODEL_SPRINGS ? 10 : 0.05, beta);
      cloth_body *b = fx_soft(w, c);
      const int n = b->p.n;
      vec3 *v = calloc((size_t)n, sizeof *v), *zero = calloc((size_t)n, sizeof *zero);
      vec3 *Fd = calloc((size_t)n, sizeof *Fd), *Fp = calloc((size_t)n, sizeof *Fp),
           *Fm = calloc((size_t)n, sizeof *Fm);
      vec3 *xp = calloc((size_t)n, sizeof *xp), *xm = calloc((size_t)n, sizeof *xm);
      for (int i = 0; i < n; i++) v[i] = fx_vec(&r);
      cloth_internal_forces(b, b->p.rest, v, Fd);
      const double e = 1e-6;
      for (int i = 0; i < n; i++) {
        xp[i] = v3_madd(b->p.rest[i], v[i], e);
        xm[i] = v3_madd(b->p.rest[i], v[i], -e);
      }
      cloth_internal_forces(b, xp, zero, Fp);
      cloth_internal_forces(b, xm, zero, Fm);
      double err = 0;
      for (int i = 0; i < n; i++) {
        vec3 pred = v3_scale(v3_sub(Fp[i], Fm[i]), beta / (2 * e));
        err = fmax(err, v3_len(v3_sub(pred, Fd[i])));
      }
      double fdm = fx_max_norm(Fd, n);
      CHECK(fdm > 0);
      CHECK_MSG(err <= 1e-6 * fdm, "mesh %d model %d: |f_d - damping K v| = %.3g (|f_d| %.3g)", mk, model, err, fdm);
      free(v);
      free(zero);
      free(Fd);
      free(Fp);
      free(Fm);
      free(xp);
      free(xm);
      loom_world_destroy(w);
    }
  loom_mesh_destroy(meshes[0]);
  loom_mesh_destroy(meshes[1]);
}

/* ---- analytic energies ---------------------------------------------------------------------------- */

TEST(cloth_bw_energy_of_affine_deformations) {
  /* Under an affine map x = rest + (a u + b v) the deformation gradient is the same in every
   * triangle, so the BW energy is exact and independent of the resolution (conditions weighted by
   * rest area): stretching u by s_u and v by s_v gives E = k_s A ((s_u - 1)^2 + (s_v - 1)^2) / 2;
   * a simple shear u += gamma v gives w_u . w_v = gamma, E = k_sh A gamma^2 / 2, and no stretch
   * in u. Tolerance 1e-12 relative (sums of a few hundred terms). */
  const int Ns[3] = {3, 6, 17};
  const double A = 0.8 * 0.5;
  for (int k = 0; k < 3; k++) {
    loom_mesh *m = loom_mesh_grid(0.8, 0.5, Ns[k] - 1, Ns[k] - 1, NULL, LOOM_PLANE_XY);
    loom_world *w = fx_world(1.0 / 240);
    int c = make_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 1000, 100, 1e-3, 0);
    cloth_body *b = fx_soft(w, c);
    const double su = 1.1, sv = 0.95;
    for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3(su * b->p.rest[i].x, sv * b->p.rest[i].y, 0);
    double want = 0.5 * 1000 * A * ((su - 1) * (su - 1) + (sv - 1) * (sv - 1));
    CHECK_NEAR(cloth_elastic_energy(b, b->p.x), want, 1e-12 * want);
    /* simple shear along u: x = u + gamma v; |w_u| = 1, |w_v| = sqrt(1 + gamma^2) */
    const double gamma = 0.07;
    for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3(b->p.rest[i].x + gamma * b->p.rest[i].y, b->p.rest[i].y, 0);
    double lv = sqrt(1 + gamma * gamma);
    want = 0.5 * 100 * A * gamma * gamma + 0.5 * 1000 * A * (lv - 1) * (lv - 1);
    CHECK_NEAR(cloth_elastic_energy(b, b->p.x), want, 1e-12 * want);
    /* a rigid rotation of the stretched state changes nothing */
    quat q = q_from_axis_angle(v3(1, 2, 3), 0.7);
    for (int i = 0; i < b->p.n; i++) b->p.x[i] = q_rotate(q, v3(su * b->p.rest[i].x, sv * b->p.rest[i].y, 0));
    want = 0.5 * 1000 * A * ((su - 1) * (su - 1) + (sv - 1) * (sv - 1));
    CHECK_NEAR(cloth_elastic_energy(b, b->p.x), want, 1e-12 * want);
    loom_world_destroy(w);
    loom_mesh_destroy(m);
  }
}

TEST(cloth_springs_energy_of_uniform_scaling) {
  /* Scaling the grid by s stretches every spring by (s - 1) L: E = (s - 1)^2 / 2 sum_f k_f sum L^2,
   * and each structural spring pulls with k (s - 1) L: a corner of a square grid feels
   * k_st (s - 1) dx along each edge and k_sh (s - 1) sqrt(2) dx along the diagonal, plus the bend
   * springs' 2 k_b (s - 1) dx. */
  const int N = 5;
  const double dx = 0.1, s = 1.03, kst = 500, ksh = 50, kb = 5;
  loom_mesh *m = fx_grid(N, dx * (N - 1), v3(0, 0, 0), LOOM_PLANE_XY);
  loom_world *w = fx_world(1.0 / 240);
  int c = make_cloth(w, "c", m, LOOM_MODEL_SPRINGS, kst, ksh, kb, 0);
  cloth_body *b = fx_soft(w, c);
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_scale(b->p.rest[i], s);
  double L2 =
      2 * N * (N - 1) * kst * dx * dx + 2 * (N - 1) * (N - 1) * ksh * 2 * dx * dx + 2 * N * (N - 2) * kb * 4 * dx * dx;
  double want = 0.5 * (s - 1) * (s - 1) * L2;
  CHECK_NEAR(cloth_elastic_energy(b, b->p.x), want, 1e-12 * want);
  vec3 F[25];
  CHECK(loom_body_internal_forces(w, c, F) == 0);
  /* corner 0 at (-0.2, -0.2): pulled towards +x and +y */
  double fc = (s - 1) * dx * (kst + ksh + 2 * kb);
  CHECK_NEAR(F[0].x, fc, 1e-12 * fc);
  CHECK_NEAR(F[0].y, fc, 1e-12 * fc);
  CHECK_NEAR(F[0].z, 0, 1e-15);
  loom_world_destroy(w);
  loom_mesh_destroy(m);
}

TEST(cloth_bw_bend_energy_is_resolution_independent) {
  /* Rolling a strip into a cylinder of radius R (rows on the cylinder, cells stay planar) bends
   * only the ny - 1 interior rows of edges along the axis, each by the angle Ly / (ny R) between
   * neighbouring rows. With the weight |e|^2 / (A0 + A1) = dx / dy (rectangular cells: no grid
   * correction) the total is E = (1/2) k_b A / R^2 (1 - 1/ny) — the plate energy D A / (2 R^2)
   * with D = bend, independent of the cell size except for the boundary rows (without the weight
   * it would fall like 1/ny). Checked exactly (1e-9 relative: rounding of the angles) at 10 and 30
   * cells per side. */
  const double R = 0.3, Lx = 0.4, Ly = 0.5, kb = 0.01;
  const int Ns[2] = {11, 31};
  for (int k = 0; k < 2; k++) {
    loom_mesh *m = loom_mesh_grid(Lx, Ly, Ns[k] - 1, Ns[k] - 1, NULL, LOOM_PLANE_XY);
    loom_world *w = fx_world(1.0 / 240);
    int c = make_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 0, 0, kb, 0);
    cloth_body *b = fx_soft(w, c);
    for (int i = 0; i < b->p.n; i++) {
      double phi = b->p.rest[i].y / R;
      b->p.x[i] = v3(b->p.rest[i].x, R * sin(phi), R * (1 - cos(phi)));
    }
    double E = cloth_elastic_energy(b, b->p.x);
    double ny = Ns[k] - 1, want = 0.5 * kb * Lx * Ly / (R * R) * (1 - 1 / ny);
    CHECK_MSG(fabs(E - want) <= 1e-9 * want, "%d cells: bend energy %.12g, want %.12g", Ns[k] - 1, E, want);
    loom_world_destroy(w);
    loom_mesh_destroy(m);
  }
}

/* ---- springs_pbd ------------------------------------------------------------------------------------ */

/* Largest structural strain |d| / L - 1 of a cloth. */
static double max_structural_strain(const cloth_body *b) {
  double s = 0;
  for (int q = b->model.fam_start[FAM_STRUCTURAL]; q < b->model.fam_start[FAM_STRUCTURAL + 1]; q++) {
    const spring *sp = &b->model.springs[q];
    s = fmax(s, v3_dist(b->p.x[sp->i], b->p.x[sp->j]) / sp->rest - 1);
  }
  return s;
}

/* Strain of a cloth of n x n vertices hanging from its top row after `steps` frames of 1/60 s
 * with 10 substeps (001's setting) and `iters` projection iterations. */
static double hanging_strain(int n, int iters, int steps) {
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(n, 1.0, v3(0, 0, 2), LOOM_PLANE_XZ);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS_PBD, "hang", m);
  d.substeps = 10;
  d.iterations = iters;
  int c = loom_cloth_create(w, &d);
  CHECK(c != 0);
  int32_t top[64];
  for (int i = 0; i < n; i++) top[i] = (n - 1) * n + i; /* j = n - 1 is the highest row (z = +size/2) */
  CHECK(loom_pins_create(w, c, top, n) != 0);
  for (int s = 0; s < steps; s++) loom_world_step(w);
  double strain = max_structural_strain(fx_soft(w, c));
  CHECK(fx_all_finite(loom_body_x(w, c), n * n));
  loom_mesh_destroy(m);
  loom_world_destroy(w);
  return strain;
}

TEST(cloth_pbd_strain_decreases_with_iterations) {
  /* 001 behaviour 4: with the constraint variant few iterations leave the cloth visibly stretched;
   * the strain of a hanging cloth falls from 1 to 5 to 10 iterations, and at a fixed iteration
   * count grows with the resolution. */
  double s1 = hanging_strain(20, 1, 60), s5 = hanging_strain(20, 5, 60), s10 = hanging_strain(20, 10, 60);
  CHECK_MSG(s1 > s5 && s5 > s10, "strain 1/5/10 iterations: %.4g %.4g %.4g", s1, s5, s10);
  CHECK_MSG(s1 > 2 * s10, "strain 1 iteration %.4g not clearly above 10 iterations %.4g", s1, s10);
  CHECK(s10 > 0);
  double r10 = hanging_strain(10, 5, 60), r30 = hanging_strain(30, 5, 60);
  CHECK_MSG(r10 < s5 && s5 < r30, "strain at 5 iterations for 10/20/30 per side: %.4g %.4g %.4g", r10, s5, r30);
}

TEST(cloth_pbd_projection_keeps_centre_of_mass_and_converges) {
  /* Each projection moves the two ends by amounts weighted by inverse mass, so the centre of mass
   * of a free cloth does not move (rounding: 1e-15 m); repeated full-stiffness projections drive
   * every spring to its rest length; a pinned vertex is never moved. */
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = fx_grid(8, 0.7, v3(0, 0, 1), LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS_PBD, "pbd", m);
  d.stretch = 1;
  d.shear = 1;
  d.bend = 1;
  int c = loom_cloth_create(w, &d);
  cloth_body *b = fx_soft(w, c);
  fx_rng r = {3};
  /* in-plane perturbation: the flat rest shape is reachable without passing through a fold */
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_add(b->p.x[i], v3(0.02 * fx_sym(&r), 0.02 * fx_sym(&r), 0));
  vec3 com0 = v3(0, 0, 0), com1 = v3(0, 0, 0);
  double M = 0;
  for (int i = 0; i < b->p.n; i++) {
    com0 = v3_madd(com0, b->p.x[i], b->p.m[i]);
    M += b->p.m[i];
  }
  double before = max_structural_strain(b);
  springs_project(b, b->p.x);
  for (int i = 0; i < b->p.n; i++) com1 = v3_madd(com1, b->p.x[i], b->p.m[i]);
  CHECK(v3_len(v3_sub(com0, com1)) / M <= 1e-15);
  for (int it = 0; it < 2000; it++) springs_project(b, b->p.x);
  double after = 0;
  for (int q = 0; q < b->model.fam_start[FAM_COUNT]; q++) {
    const spring *sp = &b->model.springs[q];
    after = fmax(after, fabs(v3_dist(b->p.x[sp->i], b->p.x[sp->j]) / sp->rest - 1));
  }
  CHECK_MSG(before > 1e-2 && after < 1e-9, "strain before %.3g, after 2000 projections %.3g", before, after);
  /* with vertex 0 pinned */
  int32_t v0 = 0;
  perturb(b->p.x, b->p.n, 0.02, &r);
  CHECK(loom_pins_create(w, c, &v0, 1) != 0);
  vec3 p0 = b->p.x[0];
  for (int it = 0; it < 50; it++) springs_project(b, b->p.x);
  CHECK(memcmp(&p0, &b->p.x[0], sizeof p0) == 0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

/* ---- the strain limit (Provot 1995) ---------------------------------------------------------------- */

/* Largest l / L - 1 over the cloth's edges (L from the rest positions). */
static double max_edge_stretch(const cloth_body *b) {
  double worst = -1;
  for (int e = 0; e < b->model.ne; e++) {
    const int i = b->model.edge[2 * e], j = b->model.edge[2 * e + 1];
    worst = fmax(worst, v3_dist(b->p.x[i], b->p.x[j]) / v3_dist(b->p.rest[i], b->p.rest[j]) - 1);
  }
  return worst;
}

/* The strain limit's moves from (x0, v0) keep the centre of mass and the momentum (free vertices,
 * any masses) and change each velocity by the displacement / h. */
static void check_strain_moves(const cloth_body *b, const vec3 *x0, const vec3 *v0, double h) {
  vec3 dcom = v3(0, 0, 0), dmom = v3(0, 0, 0);
  double M = 0, worst_v = 0, moved = 0;
  for (int i = 0; i < b->p.n; i++) {
    const double mi = 1.0 / b->p.inv_m[i];
    const vec3 dx = v3_sub(b->p.x[i], x0[i]);
    dcom = v3_madd(dcom, dx, mi);
    dmom = v3_madd(dmom, v3_sub(b->p.v[i], v0[i]), mi);
    M += mi;
    moved = fmax(moved, v3_len(dx));
    worst_v = fmax(worst_v, v3_len(v3_sub(v3_sub(b->p.v[i], v0[i]), v3_scale(dx, 1 / h))));
  }
  CHECK_MSG(moved > 0 && v3_len(dcom) / M <= 1e-15 && v3_len(dmom) / M <= 1e-13 && worst_v <= 1e-12,
            "centre of mass moved %.3g m, momentum changed %.3g, dv - dx / h up to %.3g", v3_len(dcom) / M,
            v3_len(dmom) / M, worst_v);
}

TEST(cloth_strain_limit_shortens_edges_to_the_limit) {
  /* Provot's deformation constraint: every edge longer than (1 + s) L ends at most (1 + s) L
   * (shortened to just below it), its ends moved along it in inverse proportion to their masses
   * (the centre of mass stays, the momentum m dx / h it adds sums to zero), the velocity of each
   * vertex changed by its displacement / h; a pinned end stays; a cloth within the limit is left
   * bit for bit. */
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(10, 0.5, v3(0, 0, 1), LOOM_PLANE_XY);
  const double h = 1.0 / 60, s = 0.02;
  int c = make_cloth(w, "limited", m, LOOM_MODEL_SPRINGS, 100, 100, 0, 0);
  cloth_body *b = fx_soft(w, c);
  const int n = b->p.n;
  CHECK_EQ_INT(loom_body_set_param(w, c, "strain_limit", s), 0);
  CHECK(loom_body_set_param(w, c, "strain_limit", -0.1) != 0);
  CHECK_STR_CONTAINS(loom_last_error(), "strain_limit");
  void *mem = malloc(cloth_strain_work_bytes(n, b->model.ne));
  strain_work wk, *seen = &wk;
  cloth_strain_work_bind(&wk, mem, n, b->model.ne);
  vec3 *x0 = calloc((size_t)n, sizeof *x0), *v0 = calloc((size_t)n, sizeof *v0);
  /* within the limit (a 1 % stretch, random velocities): nothing changes */
  fx_rng r = {11};
  for (int i = 0; i < n; i++) {
    b->p.x[i] = v3_add(v3(0, 0, 1), v3_scale(v3_sub(b->p.rest[i], v3(0, 0, 1)), 1.01));
    b->p.v[i] = fx_vec(&r);
  }
  memcpy(x0, b->p.x, sizeof(vec3) * (size_t)n);
  memcpy(v0, b->p.v, sizeof(vec3) * (size_t)n);
  double none = -1;
  CHECK_EQ_INT(cloth_strain_limit(b, h, seen, &none), 0);
  CHECK(none == 0);
  CHECK(memcmp(x0, b->p.x, sizeof(vec3) * (size_t)n) == 0 && memcmp(v0, b->p.v, sizeof(vec3) * (size_t)n) == 0);
  /* a dozen vertices thrown up to 3 cm (about half an edge) out, unequal masses */
  for (int i = 0; i < n; i++) {
    b->p.x[i] = b->p.rest[i];
    b->p.inv_m[i] = 1.0 / (b->p.m[i] * (1 + fx_unit(&r)));
  }
  for (int k = 0; k < 12; k++) {
    const int i = (int)(fx_unit(&r) * n) % n;
    b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.03));
  }
  memcpy(x0, b->p.x, sizeof(vec3) * (size_t)n);
  memcpy(v0, b->p.v, sizeof(vec3) * (size_t)n);
  const double before = max_edge_stretch(b);
  double left = -1;
  const int shortened = cloth_strain_limit(b, h, seen, &left);
  const double after = max_edge_stretch(b);
  CHECK_MSG(before > 0.2 && shortened > 0 && after <= s && after > s * (1 - 2e-3) && left == 0,
            "stretch %.4g -> %.9g (%d edges, %.3g left)", before, after, shortened, left);
  check_strain_moves(b, x0, v0, h);
  /* the whole free cloth stretched 10 % (more edges over the limit than the sweeps take alone: the
   * fast projection): within the limit, the same centre of mass and momentum */
  for (int i = 0; i < n; i++) b->p.x[i] = v3_add(v3_scale(b->p.rest[i], 1.1), v3_scale(fx_vec(&r), 0.002));
  memcpy(x0, b->p.x, sizeof(vec3) * (size_t)n);
  memcpy(v0, b->p.v, sizeof(vec3) * (size_t)n);
  CHECK(cloth_strain_limit(b, h, seen, &left) > 16);
  CHECK_MSG(left == 0 && max_edge_stretch(b) <= s, "free, stretched as a whole: %.6g left, stretch %.9g", left,
            max_edge_stretch(b));
  check_strain_moves(b, x0, v0, h);
  /* one edge alone: its ends move in inverse proportion to their masses */
  const int e0 = 7, i0 = b->model.edge[2 * e0], j0 = b->model.edge[2 * e0 + 1];
  for (int i = 0; i < n; i++) b->p.x[i] = b->p.rest[i];
  const vec3 dir = v3_normalize(v3_sub(b->p.rest[j0], b->p.rest[i0]));
  b->p.x[j0] = v3_madd(b->p.x[j0], dir, 0.2 * v3_dist(b->p.rest[i0], b->p.rest[j0]));
  memcpy(x0, b->p.x, sizeof(vec3) * (size_t)n);
  cloth_strain_limit(b, h, seen, &left);
  const double mi = v3_dist(b->p.x[i0], x0[i0]) * (1 / b->p.inv_m[i0]), mj = v3_dist(b->p.x[j0], x0[j0]) * (1 / b->p.inv_m[j0]);
  CHECK_MSG(fabs(mi - mj) <= 1e-12 * mi && mi > 0, "m_i |dx_i| %.6g vs m_j |dx_j| %.6g", mi, mj);
  /* pinned vertex 0, its neighbours thrown out: it never moves, they come back within the limit */
  for (int i = 0; i < n; i++) b->p.x[i] = b->p.rest[i];
  for (int i = 1; i < 12; i++) b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.03));
  int32_t pin = 0;
  CHECK(loom_pins_create(w, c, &pin, 1) != 0);
  const vec3 p0 = b->p.x[0];
  cloth_strain_limit(b, h, seen, &left);
  CHECK(memcmp(&p0, &b->p.x[0], sizeof p0) == 0);
  CHECK_MSG(max_edge_stretch(b) <= s && left == 0, "stretch %.9g with a pin (%.3g left)", max_edge_stretch(b), left);
  /* the whole cloth stretched 10 % (a taut region as large as the mesh): the fast projection
   * shrinks it within the limit */
  for (int i = 0; i < n; i++) b->p.x[i] = v3_add(v3_scale(b->p.rest[i], 1.1), v3_scale(fx_vec(&r), 0.002));
  const vec3 p1 = b->p.x[0];
  cloth_strain_limit(b, h, seen, &left);
  CHECK_MSG(left == 0 && max_edge_stretch(b) <= s, "stretched as a whole: %.6g left, stretch %.9g", left,
            max_edge_stretch(b));
  CHECK(memcmp(&p1, &b->p.x[0], sizeof p1) == 0);
  /* two opposite corners pinned 10 % further apart than the rest: no position satisfies the
   * limit; what is left is said */
  for (int i = 0; i < n; i++) b->p.x[i] = v3_scale(b->p.rest[i], 1.1);
  b->p.inv_m[n - 1] = 0;
  cloth_strain_limit(b, h, seen, &left);
  CHECK_MSG(left > s && left == max_edge_stretch(b), "left %.6g, stretch %.6g", left, max_edge_stretch(b));
  free(mem);
  free(x0);
  free(v0);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

/* ---- definitions ------------------------------------------------------------------------------------- */

/* loom_cloth_create must fail (0), name the field in the message and leave no body behind. */
static void expect_cloth_fails(loom_world *w, const loom_cloth_def *d, const char *needle) {
  int before = loom_world_body_count(w);
  loom_clear_error();
  int h = loom_cloth_create(w, d);
  CHECK_MSG(h == 0, "cloth with bad '%s' was accepted", needle);
  CHECK_STR_CONTAINS(loom_last_error(), needle);
  CHECK_EQ_INT(loom_world_body_count(w), before);
}

TEST(cloth_definition_validation) {
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = fx_grid(4, 1.0, v3(0, 0, 1), LOOM_PLANE_XY);
  loom_cloth_def d;

  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.stretch = -1;
  expect_cloth_fails(w, &d, "'stretch'");
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "bad", m);
  d.shear = NAN;
  expect_cloth_fails(w, &d, "'shear'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.density = NAN;
  expect_cloth_fails(w, &d, "'density'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.density = -0.2;
  expect_cloth_fails(w, &d, "'density'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.model = 17;
  expect_cloth_fails(w, &d, "model");
  d = fx_def(LOOM_MODEL_SPRINGS_PBD, "bad", m);
  d.integrator = LOOM_INTEGRATOR_IMPLICIT;
  expect_cloth_fails(w, &d, "'implicit' needs forces");
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "bad", m);
  d.cg_tolerance = 0;
  expect_cloth_fails(w, &d, "'cg_tolerance'");
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "bad", m);
  d.cg_iterations = 0;
  expect_cloth_fails(w, &d, "'cg_iterations'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.integrator = 0;
  expect_cloth_fails(w, &d, "integrator");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.self_collision = 2;
  expect_cloth_fails(w, &d, "'self_collision'");
  d = fx_def(LOOM_MODEL_SPRINGS_PBD, "bad", m);
  d.bend = 1.5; /* PBD stiffness is a fraction */
  expect_cloth_fails(w, &d, "'bend'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.damping = -1e-3;
  expect_cloth_fails(w, &d, "'damping'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.drag = INFINITY;
  expect_cloth_fails(w, &d, "'drag'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.thickness = -0.01;
  expect_cloth_fails(w, &d, "'thickness'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.friction = NAN;
  expect_cloth_fails(w, &d, "'friction'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.substeps = -2;
  expect_cloth_fails(w, &d, "'substeps'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", m);
  d.iterations = 0;
  expect_cloth_fails(w, &d, "'iterations'");
  d = fx_def(LOOM_MODEL_SPRINGS, "bad", NULL);
  expect_cloth_fails(w, &d, "'mesh'");
  d = fx_def(LOOM_MODEL_SPRINGS, "", m);
  expect_cloth_fails(w, &d, "'name'");
  d = fx_def(LOOM_MODEL_SPRINGS, NULL, m);
  expect_cloth_fails(w, &d, "'name'");

  /* duplicate names */
  d = fx_def(LOOM_MODEL_SPRINGS, "sheet", m);
  int a = loom_cloth_create(w, &d);
  CHECK(a != 0);
  expect_cloth_fails(w, &d, "already exists");
  loom_rigid_def rd;
  loom_rigid_def_default(&rd);
  rd.name = "sheet";
  loom_clear_error();
  CHECK(loom_rigid_create(w, &rd) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "already exists");

  /* NULL world or definition */
  loom_clear_error();
  CHECK(loom_cloth_create(NULL, &d) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "world is NULL");
  loom_clear_error();
  CHECK(loom_cloth_create(w, NULL) == 0);
  CHECK_STR_CONTAINS(loom_last_error(), "definition is NULL");
  loom_cloth_def_default(NULL, LOOM_MODEL_SPRINGS); /* no-op, no crash */

  /* a failed creation leaves the world usable: the name is free for a good definition */
  d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "bad", m);
  int ok = loom_cloth_create(w, &d);
  CHECK(ok != 0);
  CHECK_EQ_INT(loom_world_body_count(w), 2);
  CHECK(loom_world_find(w, "bad") == ok);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(cloth_masses_from_density_and_total_mass) {
  /* Lumped masses: each triangle gives a third of density x area to each corner (001), so the
   * total is density x area; mass > 0 overrides the density. */
  loom_world *w = fx_world(1.0 / 240);
  loom_mesh *m = loom_mesh_grid(0.6, 0.4, 6, 4, NULL, LOOM_PLANE_XY);
  loom_cloth_def d = fx_def(LOOM_MODEL_SPRINGS, "a", m);
  d.density = 0.3;
  int a = loom_cloth_create(w, &d);
  d.name = "b";
  d.mass = 2.5;
  int b = loom_cloth_create(w, &d);
  double sa = 0, sb = 0;
  const double *ma = loom_body_m(w, a), *mb = loom_body_m(w, b);
  for (int i = 0; i < m->nv; i++) {
    sa += ma[i];
    sb += mb[i];
  }
  CHECK_NEAR(sa, 0.3 * 0.6 * 0.4, 1e-15);
  CHECK_NEAR(sb, 2.5, 1e-14);
  /* with alternating diagonals every corner of this 6 x 4 grid touches both triangles of its
   * cell: 2 x (cell area / 2) / 3 each */
  const double cell = 0.1 * 0.1;
  const int corners[4] = {0, 6, 28, 34};
  for (int k = 0; k < 4; k++) CHECK_NEAR(ma[corners[k]], 0.3 * cell / 3, 1e-16);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}
