/* test_implicit.c — the implicit integrator (cloth_implicit.c, Baraff–Witkin 1998 §5): element
 * force Jacobians against central finite differences (stretch and shear, their damping, springs,
 * the bending hinge where its Gauss–Newton form is exact), the assembled matrix symmetric and
 * positive definite, the filtered CG converging with constrained vertices exact, and backward
 * Euler's behaviour on simple systems. */
#include "kernel_fixtures.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

static int implicit_cloth(loom_world *w, const char *name, const loom_mesh *m, int model, double stretch, double shear,
                          double bend, double damping) {
  loom_cloth_def d = fx_def(model, name, m);
  d.integrator = LOOM_INTEGRATOR_IMPLICIT;
  d.stretch = stretch;
  d.shear = shear;
  d.bend = bend;
  d.damping = damping;
  d.drag = 0;
  int h = loom_cloth_create(w, &d);
  CHECK_MSG(h != 0, "cloth '%s' not created: %s", name, loom_last_error());
  return h;
}

/* Dense 3n x 3n df/dx (or df/dv) of the whole cloth from its element Jacobians (exact forms). */
static void dense_jacobian(const cloth_body *b, const vec3 *x, int wrt_v, double *J) {
  const int n = b->p.n, N = 3 * n;
  memset(J, 0, sizeof(double) * (size_t)N * (size_t)N);
#define ADD_BLOCK(I, Jc, K)                                                                        \
  for (int r = 0; r < 3; r++)                                                                      \
    for (int c = 0; c < 3; c++) J[(size_t)(3 * (I) + r) * (size_t)N + (size_t)(3 * (Jc) + c)] += (K).m[r][c];
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN) {
    for (int t = 0; t < b->model.nbw; t++) {
      mat3 Kx[3][3], Kv[3][3];
      bw_tri_jacobian(b, &b->model.bw[t], x, 1, Kx, Kv);
      for (int k = 0; k < 3; k++)
        for (int l = 0; l < 3; l++) ADD_BLOCK(b->model.bw[t].v[k], b->model.bw[t].v[l], wrt_v ? Kv[k][l] : Kx[k][l]);
    }
    for (int h = 0; h < b->model.nh; h++) {
      mat3 Kx[4][4], Kv[4][4];
      bw_hinge_jacobian(b, &b->model.hinges[h], x, Kx, Kv);
      for (int k = 0; k < 4; k++)
        for (int l = 0; l < 4; l++)
          ADD_BLOCK(b->model.hinges[h].v[k], b->model.hinges[h].v[l], wrt_v ? Kv[k][l] : Kx[k][l]);
    }
  } else {
    for (int q = 0; q < b->model.fam_start[FAM_COUNT]; q++) {
      mat3 Kx, Kv, nK;
      spring_jacobian(b, q, x, 1, &Kx, &Kv);
      const mat3 K = wrt_v ? Kv : Kx;
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) nK.m[r][c] = -K.m[r][c];
      const int i = b->model.springs[q].i, j = b->model.springs[q].j;
      ADD_BLOCK(i, i, nK);
      ADD_BLOCK(i, j, K);
      ADD_BLOCK(j, i, K);
      ADD_BLOCK(j, j, nK);
    }
  }
#undef ADD_BLOCK
}

/* Largest |J - FD| over all entries, relative to the largest |J| entry; FD by central differences
 * of cloth_internal_forces in x (wrt_v = 0, at v = 0: the damping forces' dependence on x is
 * neglected by design, as in BW98) or v (1). */
static double fd_error(cloth_body *b, vec3 *x, vec3 *v, int wrt_v, double eps) {
  const int n = b->p.n, N = 3 * n;
  double *J = malloc(sizeof(double) * (size_t)N * (size_t)N);
  vec3 *Fp = malloc(sizeof(vec3) * (size_t)n), *Fm = malloc(sizeof(vec3) * (size_t)n);
  vec3 *v0 = calloc((size_t)n, sizeof(vec3));
  if (!wrt_v) v = v0;
  dense_jacobian(b, x, wrt_v, J);
  double err = 0, scale = 0;
  for (int k = 0; k < N * N; k++) scale = fmax(scale, fabs(J[k]));
  for (int col = 0; col < N; col++) {
    vec3 *y = wrt_v ? v : x;
    double *p = &y[col / 3].x + col % 3;
    const double keep = *p;
    *p = keep + eps;
    memset(Fp, 0, sizeof(vec3) * (size_t)n);
    cloth_internal_forces(b, x, v, Fp);
    *p = keep - eps;
    memset(Fm, 0, sizeof(vec3) * (size_t)n);
    cloth_internal_forces(b, x, v, Fm);
    *p = keep;
    for (int row = 0; row < N; row++) {
      const double fd = ((&Fp[row / 3].x)[row % 3] - (&Fm[row / 3].x)[row % 3]) / (2 * eps);
      err = fmax(err, fabs(fd - J[(size_t)row * (size_t)N + (size_t)col]));
    }
  }
  free(v0);
  free(J);
  free(Fp);
  free(Fm);
  return scale > 0 ? err / scale : err;
}

/* ---- Jacobians against finite differences ---------------------------------------------------- */

TEST(implicit_bw_stretch_shear_jacobian_matches_finite_differences) {
  /* random deformations of a 3 x 3 grid: some triangles stretched, some compressed, sheared */
  fx_rng r = {11};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 1000, 300, 0, 0.01);
  cloth_body *b = fx_soft(w, h);
  for (int trial = 0; trial < 20; trial++) {
    vec3 x[9], v[9];
    for (int i = 0; i < 9; i++) {
      x[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.04));
      v[i] = fx_vec(&r);
    }
    double ex = fd_error(b, x, v, 0, 1e-6), ev = fd_error(b, x, v, 1, 1e-6);
    CHECK_MSG(ex < 1e-6, "trial %d: df/dx off by %.3g (relative)", trial, ex);
    CHECK_MSG(ev < 1e-6, "trial %d: df/dv off by %.3g (relative)", trial, ev);
  }
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(implicit_spring_jacobian_matches_finite_differences) {
  fx_rng r = {12};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_SPRINGS, 500, 50, 5, 0.01);
  cloth_body *b = fx_soft(w, h);
  for (int trial = 0; trial < 20; trial++) {
    vec3 x[9], v[9];
    for (int i = 0; i < 9; i++) {
      x[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.04));
      v[i] = fx_vec(&r);
    }
    double ex = fd_error(b, x, v, 0, 1e-6), ev = fd_error(b, x, v, 1, 1e-6);
    CHECK_MSG(ex < 1e-6, "trial %d: df/dx off by %.3g (relative)", trial, ex);
    CHECK_MSG(ev < 1e-6, "trial %d: df/dv off by %.3g (relative)", trial, ev);
  }
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(implicit_hinge_jacobian_is_exact_at_the_rest_angle) {
  /* The Gauss–Newton bending Jacobian -kb w grad(theta) grad(theta)^T is the exact one where
   * theta = theta0 (the dropped term is proportional to theta - theta0): check it on curved rest
   * shapes, evaluated at rest, against finite differences; its damping part is exact anywhere. */
  fx_rng r = {13};
  for (int trial = 0; trial < 10; trial++) {
    loom_world *w = fx_world(1.0 / 60);
    loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
    for (int i = 0; i < m->nv; i++) m->v[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.03));
    int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 0, 0, 0.01, 0.05);
    cloth_body *b = fx_soft(w, h);
    vec3 x[9], v[9];
    for (int i = 0; i < 9; i++) {
      x[i] = m->v[i];
      v[i] = fx_vec(&r);
    }
    double ex = fd_error(b, x, v, 0, 1e-7), ev = fd_error(b, x, v, 1, 1e-6);
    CHECK_MSG(ex < 1e-5, "trial %d: df/dx off by %.3g (relative)", trial, ex);
    CHECK_MSG(ev < 1e-6, "trial %d: df/dv off by %.3g (relative)", trial, ev);
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
}

/* ---- the assembled system ------------------------------------------------------------------------ */

TEST(implicit_matrix_is_symmetric_positive_definite_and_cg_converges) {
  fx_rng r = {14};
  loom_world *w = fx_world(1.0 / 30);
  loom_mesh *m = fx_grid(12, 1.0, v3(0, 0, 1), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 20000, 2000, 1e-3, 2e-3);
  cloth_body *b = fx_soft(w, h);
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.01));
  int32_t corner = 0;
  CHECK(loom_pins_create(w, h, &corner, 1) != 0);
  CHECK(loom_world_step(w) >= 0);
  const cloth_solver *s = &b->solver;
  /* symmetric: block (i, j) = block (j, i)^T */
  double asym = 0, scale = 0;
  for (int i = 0; i < b->p.n; i++)
    for (int k = s->row[i]; k < s->row[i + 1]; k++) {
      const int j = s->col[k];
      int kt = -1;
      for (int q = s->row[j]; q < s->row[j + 1]; q++)
        if (s->col[q] == i) kt = q;
      CHECK(kt >= 0);
      if (kt < 0) continue;
      for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
          asym = fmax(asym, fabs(s->val[k].m[a][c] - s->val[kt].m[c][a]));
          scale = fmax(scale, fabs(s->val[k].m[a][c]));
        }
    }
  CHECK_MSG(asym <= 1e-12 * scale, "asymmetry %.3g of %.3g", asym, scale);
  /* block-Jacobi: pinv holds the inverses of the diagonal blocks */
  double inv_err = 0;
  for (int i = 0; i < b->p.n; i++) {
    const mat3 P = m3_mul(&s->pinv[i], &s->val[s->diag[i]]);
    for (int a = 0; a < 3; a++)
      for (int c = 0; c < 3; c++) inv_err = fmax(inv_err, fabs(P.m[a][c] - (a == c)));
  }
  CHECK_MSG(inv_err < 1e-9, "pinv D - I off by %.3g", inv_err);
  /* positive definite: p^T A p > 0 for random p */
  const int n = b->p.n;
  vec3 *p = malloc(sizeof(vec3) * (size_t)n), *Ap = malloc(sizeof(vec3) * (size_t)n);
  for (int trial = 0; trial < 50; trial++) {
    for (int i = 0; i < n; i++) p[i] = fx_vec(&r);
    for (int i = 0; i < n; i++) {
      Ap[i] = v3(0, 0, 0);
      for (int k = s->row[i]; k < s->row[i + 1]; k++) Ap[i] = v3_add(Ap[i], m3_mulv(&s->val[k], p[s->col[k]]));
    }
    double pAp = 0;
    for (int i = 0; i < n; i++) pAp += v3_dot(p[i], Ap[i]);
    CHECK(pAp > 0);
  }
  free(p);
  free(Ap);
  CHECK_MSG(s->last_residual <= b->params.cg_tolerance, "residual %.3g after %d iterations", s->last_residual,
            s->last_iterations);
  CHECK(s->last_iterations > 0 && s->last_iterations < b->params.cg_iterations);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}
