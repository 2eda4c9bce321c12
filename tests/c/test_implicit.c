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

/* Dense 3n x 3n df/dx (or df/dv) of the whole cloth from its element Jacobians (exact = 1: the full
 * forms; 0: what the solver keeps). */
static void dense_jacobian(const cloth_body *b, const vec3 *x, int wrt_v, int exact, double *J) {
  const int n = b->p.n, N = 3 * n;
  memset(J, 0, sizeof(double) * (size_t)N * (size_t)N);
#define ADD_BLOCK(I, Jc, K)                                                                        \
  for (int r = 0; r < 3; r++)                                                                      \
    for (int c = 0; c < 3; c++) J[(size_t)(3 * (I) + r) * (size_t)N + (size_t)(3 * (Jc) + c)] += (K).m[r][c];
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN) {
    for (int t = 0; t < b->model.nbw; t++) {
      mat3 Kx[3][3], Kv[3][3];
      bw_tri_jacobian(b, &b->model.bw[t], x, exact, Kx, Kv);
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
      spring_jacobian(b, q, x, exact, &Kx, &Kv);
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
  dense_jacobian(b, x, wrt_v, 1, J);
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

/* The model error the Newton iterations watch (cloth_model_excess): E(x1) - Q(x1) with Q the
 * quadratic model about x0, checked against the energy, the forces and the assembled Jacobian
 * built independently (cloth_elastic_energy, cloth_internal_forces, bw_tri_jacobian /
 * spring_jacobian without their indefinite parts), on random deformations and displacements;
 * zero for a translation; positive for an unstretched sheet moved out of its plane (each edge
 * comes out longer than the linear model says). */
TEST(implicit_model_excess_is_the_energy_less_its_quadratic_model) {
  fx_rng r = {17};
  for (int model = 0; model < 2; model++) {
    loom_world *w = fx_world(1.0 / 60);
    loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
    const int mdl = model ? LOOM_MODEL_SPRINGS : LOOM_MODEL_BARAFF_WITKIN;
    int h = implicit_cloth(w, "c", m, mdl, 1000, 300, model ? 50 : 0, 0);
    cloth_body *b = fx_soft(w, h);
    const int n = 9, N = 27;
    double *J = malloc(sizeof(double) * N * N);
    for (int trial = 0; trial < 20; trial++) {
      vec3 x0[9], x1[9], F[9], v0[9];
      memset(F, 0, sizeof F);
      memset(v0, 0, sizeof v0);
      for (int i = 0; i < n; i++) {
        x0[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.03));
        x1[i] = v3_add(x0[i], v3_scale(fx_vec(&r), 0.05));
      }
      cloth_internal_forces(b, x0, v0, F);
      dense_jacobian(b, x0, 0, 0, J);
      double q = cloth_elastic_energy(b, x0), quad = 0;
      for (int i = 0; i < n; i++) q -= v3_dot(F[i], v3_sub(x1[i], x0[i]));
      for (int a = 0; a < N; a++)
        for (int c = 0; c < N; c++) /* (J is df/dx: minus the Hessian) */
          quad -= ((&x1[a / 3].x)[a % 3] - (&x0[a / 3].x)[a % 3]) * J[a * N + c] *
                  ((&x1[c / 3].x)[c % 3] - (&x0[c / 3].x)[c % 3]);
      q += 0.5 * quad;
      double e1;
      const double ex = cloth_model_excess(b, x0, x1, &e1), want = cloth_elastic_energy(b, x1) - q;
      const double e_ref = cloth_elastic_energy(b, x1);
      CHECK_MSG(fabs(e1 - e_ref) <= 1e-12 * fmax(1, e1), "model %d trial %d: E(x1) %.17g, not %.17g", mdl, trial, e1,
                e_ref);
      CHECK_MSG(fabs(ex - want) <= 1e-9 * fmax(fabs(want), e1), "model %d trial %d: excess %.12g, not %.12g", mdl,
                trial, ex, want);
    }
    /* a translation: the model is exact */
    vec3 x1[9], x0[9];
    for (int i = 0; i < n; i++) x1[i] = v3_add(m->v[i], v3(0.3, -0.2, 0.5));
    double e1;
    CHECK(fabs(cloth_model_excess(b, m->v, x1, &e1)) < 1e-12 && e1 < 1e-12);
    /* the flat sheet at rest bent out of its plane, z += 0.1 x: longer edges than the model's */
    for (int i = 0; i < n; i++) {
      x0[i] = m->v[i];
      x1[i] = v3_add(m->v[i], v3(0, 0, 0.5 * m->v[i].x));
    }
    CHECK(cloth_model_excess(b, x0, x1, &e1) > 0 && e1 > 0);
    free(J);
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
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

TEST(implicit_relative_damping_jacobian_matches_finite_differences) {
  /* 001's damping of the full relative velocity, -c (v_i - v_j) per spring: df/dv exact, momentum
   * kept (the forces sum to zero) */
  fx_rng r = {16};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_SPRINGS, 500, 50, 5, 0.01);
  CHECK_EQ_INT(loom_body_set_param(w, h, "relative_damping", 0.2), 0);
  cloth_body *b = fx_soft(w, h);
  for (int trial = 0; trial < 10; trial++) {
    vec3 x[9], v[9], F[9];
    for (int i = 0; i < 9; i++) {
      x[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.04));
      v[i] = fx_vec(&r);
    }
    double ex = fd_error(b, x, v, 0, 1e-6), ev = fd_error(b, x, v, 1, 1e-6);
    CHECK_MSG(ex < 1e-6, "trial %d: df/dx off by %.3g (relative)", trial, ex);
    CHECK_MSG(ev < 1e-6, "trial %d: df/dv off by %.3g (relative)", trial, ev);
    cloth_internal_forces(b, x, v, F);
    vec3 sum = v3(0, 0, 0);
    for (int i = 0; i < 9; i++) sum = v3_add(sum, F[i]);
    CHECK_MSG(v3_len(sum) < 1e-12, "trial %d: forces sum to %.3g", trial, v3_len(sum));
  }
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(implicit_area_exponent_jacobian_matches_finite_differences) {
  /* 001's a^(3/4) weighting of the stretch and shear conditions: forces, Jacobians and energy all
   * scale by a^(3/2) instead of a; the FD check covers the forces' and Jacobians' agreement, and
   * the energy ratio checks the weight itself */
  fx_rng r = {17};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(3, 0.2, v3(0, 0, 0), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 1000, 300, 0, 0.01);
  cloth_body *b = fx_soft(w, h);
  vec3 x[9], v[9];
  for (int i = 0; i < 9; i++) {
    x[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.04));
    v[i] = fx_vec(&r);
  }
  const double e_half = cloth_elastic_energy(b, x);
  CHECK_EQ_INT(loom_body_set_param(w, h, "area_exponent", 0.75), 0);
  const double e_34 = cloth_elastic_energy(b, x);
  /* every triangle of this grid has the area a = 0.1^2 / 2 */
  const double a = 0.005;
  CHECK_NEAR(e_34 / e_half, pow(a, 1.5) / a, 1e-12);
  for (int trial = 0; trial < 10; trial++) {
    for (int i = 0; i < 9; i++) {
      x[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.04));
      v[i] = fx_vec(&r);
    }
    double ex = fd_error(b, x, v, 0, 1e-6), ev = fd_error(b, x, v, 1, 1e-6);
    CHECK_MSG(ex < 1e-6, "trial %d: df/dx off by %.3g (relative)", trial, ex);
    CHECK_MSG(ev < 1e-6, "trial %d: df/dv off by %.3g (relative)", trial, ev);
  }
  CHECK(loom_body_set_param(w, h, "area_exponent", 0.4) != 0); /* out of [0.5, 1] */
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

TEST(implicit_assembly_matches_the_element_jacobians) {
  /* The solver assembles without forming element blocks (cloth_implicit.c); its matrix and
   * right-hand side equal M - h Kv - h^2 Kx and h (f0 + h Kx v0) built from the element Jacobians. */
  fx_rng r = {15};
  for (int model = 0; model < 2; model++) {
    loom_world *w = fx_world(1.0 / 60);
    loom_mesh *m = fx_grid(6, 0.5, v3(0, 0, 0), LOOM_PLANE_XY);
    const int mdl = model ? LOOM_MODEL_SPRINGS : LOOM_MODEL_BARAFF_WITKIN;
    int h = implicit_cloth(w, "c", m, mdl, 1000, 300, model ? 20 : 0.01, 0.01);
    cloth_body *b = fx_soft(w, h);
    const int n = b->p.n, N = 3 * n;
    vec3 *x0 = malloc(sizeof(vec3) * (size_t)n), *v0 = malloc(sizeof(vec3) * (size_t)n);
    vec3 *pin_v = malloc(sizeof(vec3) * (size_t)n), *f = malloc(sizeof(vec3) * (size_t)n);
    for (int i = 0; i < n; i++) {
      b->p.x[i] = x0[i] = v3_add(m->v[i], v3_scale(fx_vec(&r), 0.03));
      b->p.v[i] = v0[i] = pin_v[i] = fx_vec(&r);
    }
    const double dt = 1.0 / 60;
    cloth_implicit_ctx ctx = {dt, v3(0, 0, -9.81), v3(0, 0, 0), pin_v, -1, v3(0, 0, 0), 0, 0};
    cloth_implicit_substep(b, &ctx);
    double *Kx = malloc(sizeof(double) * (size_t)N * (size_t)N), *Kv = malloc(sizeof(double) * (size_t)N * (size_t)N);
    dense_jacobian(b, x0, 0, 0, Kx);
    dense_jacobian(b, x0, 1, 0, Kv);
    const cloth_solver *s = &b->solver;
    double err = 0, scale = 0;
    for (int i = 0; i < n; i++)
      for (int k = s->row[i]; k < s->row[i + 1]; k++)
        for (int a = 0; a < 3; a++)
          for (int c = 0; c < 3; c++) {
            const size_t at = (size_t)(3 * i + a) * (size_t)N + (size_t)(3 * s->col[k] + c);
            const double ref = (i == s->col[k] && a == c ? b->p.m[i] : 0) - dt * Kv[at] - dt * dt * Kx[at];
            err = fmax(err, fabs(cloth_solver_block(s, i, k).m[a][c] - ref));
            scale = fmax(scale, fabs(ref));
          }
    CHECK_MSG(err <= 1e-12 * scale, "model %d: matrix off by %.3g of %.3g", mdl, err, scale);
    cloth_internal_forces(b, x0, v0, f);
    double rerr = 0, rscale = 0;
    for (int row = 0; row < N; row++) {
      double kv = 0;
      for (int col = 0; col < N; col++) kv += Kx[(size_t)row * (size_t)N + (size_t)col] * (&v0[col / 3].x)[col % 3];
      const double fg = (&f[row / 3].x)[row % 3] + (row % 3 == 2 ? -9.81 * b->p.m[row / 3] : 0);
      const double ref = dt * (fg + dt * kv);
      rerr = fmax(rerr, fabs((&s->rhs[row / 3].x)[row % 3] - ref));
      rscale = fmax(rscale, fabs(ref));
    }
    CHECK_MSG(rerr <= 1e-11 * rscale, "model %d: right-hand side off by %.3g of %.3g", mdl, rerr, rscale);
    free(Kx);
    free(Kv);
    free(x0);
    free(v0);
    free(pin_v);
    free(f);
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
}

TEST(implicit_matrix_is_symmetric_positive_definite_and_cg_converges) {
  fx_rng r = {14};
  loom_world *w = fx_world(1.0 / 30);
  loom_mesh *m = fx_grid(12, 1.0, v3(0, 0, 1), LOOM_PLANE_XY);
  int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 20000, 2000, 1e-3, 2e-3);
  cloth_body *b = fx_soft(w, h);
  for (int i = 0; i < b->p.n; i++) b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.01));
  int32_t corner = 0;
  CHECK(loom_pins_create(w, h, &corner, 1) != 0);
  CHECK(loom_body_set_param(w, h, "preconditioner", CLOTH_PRECOND_JACOBI) == 0);
  CHECK(loom_world_step(w) >= 0);
  const cloth_solver *s = &b->solver;
  /* symmetric: only the blocks on and right of the diagonal are stored, so block (i, j) and block
   * (j, i) must both be in the pattern and name the same stored block, the one of the upper row */
  int bad = 0;
  for (int i = 0; i < b->p.n; i++)
    for (int k = s->row[i]; k < s->row[i + 1]; k++) {
      const int j = s->col[k];
      int kt = -1;
      for (int q = s->row[j]; q < s->row[j + 1]; q++)
        if (s->col[q] == i) kt = q;
      const int upper = i <= j ? i : j;
      bad += kt < 0 || s->ublk[k] != s->ublk[kt] || s->ublk[k] < s->urow[upper] || s->ublk[k] >= s->urow[upper + 1];
    }
  CHECK_MSG(bad == 0, "%d blocks without their mirror or stored elsewhere", bad);
  /* to the bit: a full matrix's mirrored blocks would be one term added as itself and transposed
   * (outer products a a^T formed as a_r a_q first), so each element's blocks (k, l) and (l, k) are
   * exact transposes: the stored block stands for both */
  double asym = 0;
  for (int t = 0; t < b->model.nbw; t++) {
    mat3 Kx[3][3], Kv[3][3];
    bw_tri_jacobian(b, &b->model.bw[t], b->p.x, 0, Kx, Kv);
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < 3; l++)
        for (int a = 0; a < 3; a++)
          for (int c = 0; c < 3; c++)
            asym = fmax(asym, fmax(fabs(Kx[k][l].m[a][c] - Kx[l][k].m[c][a]), fabs(Kv[k][l].m[a][c] - Kv[l][k].m[c][a])));
  }
  CHECK_MSG(asym == 0, "element Jacobian asymmetry %.3g", asym);
  /* block-Jacobi: pinv holds the inverses of the diagonal blocks */
  double inv_err = 0;
  for (int i = 0; i < b->p.n; i++) {
    const mat3 P = m3_mul(&s->pinv[i], cloth_solver_diag(s, i));
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
      for (int k = s->row[i]; k < s->row[i + 1]; k++) {
        const mat3 B = cloth_solver_block(s, i, k);
        Ap[i] = v3_add(Ap[i], m3_mulv(&B, p[s->col[k]]));
      }
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

/* ---- the multigrid preconditioner ---------------------------------------------------------------- */

/* A cloth of n x n vertices hanging from two pinned top corners, randomly displaced and moving, so
 * that its system has stretched and compressed elements and driven constrained vertices. */
static int random_system(loom_world *w, int model, int n, double stretch, uint64_t seed, loom_mesh **mesh) {
  fx_rng r = {seed};
  *mesh = fx_grid(n, 1.0, v3(0, 0, 1), LOOM_PLANE_XZ);
  const double bend = model == LOOM_MODEL_BARAFF_WITKIN ? 1e-3 : 5;
  const int h = implicit_cloth(w, "c", *mesh, model, stretch, stretch / 10, bend, 2e-3);
  cloth_body *b = fx_soft(w, h);
  for (int i = 0; i < b->p.n; i++) {
    b->p.x[i] = v3_add(b->p.x[i], v3_scale(fx_vec(&r), 0.2 / n));
    b->p.v[i] = v3_scale(fx_vec(&r), 0.5);
  }
  int32_t pins[2] = {(int32_t)(n * (n - 1)), (int32_t)(n * n - 1)};
  CHECK(loom_pins_create(w, h, pins, 2) != 0);
  /* the pins hold still: their vertices' velocity must change by z = -v */
  for (int k = 0; k < 2; k++) b->p.v[pins[k]] = fx_vec(&r);
  return h;
}

/* ||a||_A for the solver's matrix of the last substep */
static double a_norm(const cloth_solver *s, int n, const vec3 *a) {
  double d = 0;
  for (int i = 0; i < n; i++)
    for (int k = s->row[i]; k < s->row[i + 1]; k++) {
      const mat3 B = cloth_solver_block(s, i, k);
      d += v3_dot(a[i], m3_mulv(&B, a[s->col[k]]));
    }
  return sqrt(fmax(d, 0));
}

TEST(implicit_multigrid_cg_matches_a_tight_jacobi_solve_and_keeps_constrained_vertices_exact) {
  /* The same random system solved by block-Jacobi CG to 1e-10 and by multigrid CG to 1e-4: the
   * velocity changes agree within the tolerance (in the energy norm), and the pinned vertices take
   * exactly their prescribed change z, for both models and several sizes (one level up to four). */
  const int sizes[3] = {5, 17, 40};
  for (int model = 0; model < 2; model++)
    for (int k = 0; k < 3; k++) {
      const int mdl = model ? LOOM_MODEL_SPRINGS : LOOM_MODEL_BARAFF_WITKIN;
      loom_world *w[2];
      loom_mesh *m[2];
      cloth_body *b[2];
      for (int q = 0; q < 2; q++) {
        w[q] = fx_world(1.0 / 30);
        const int h = random_system(w[q], mdl, sizes[k], 20000, 21 + (uint64_t)k, &m[q]);
        CHECK(loom_body_set_param(w[q], h, "preconditioner", q ? CLOTH_PRECOND_MULTIGRID : CLOTH_PRECOND_JACOBI) == 0);
        CHECK(loom_body_set_param(w[q], h, "cg_tolerance", q ? 1e-4 : 1e-10) == 0);
        CHECK(loom_body_set_param(w[q], h, "cg_iterations", 100000) == 0);
        CHECK(loom_body_set_param(w[q], h, "newton_iterations", 1) == 0); /* (one linear solve: the CG's test) */
        b[q] = fx_soft(w[q], h);
        CHECK(loom_world_step(w[q]) >= 0);
      }
      const cloth_solver *s = &b[1]->solver;
      const int n = b[1]->p.n;
      if (k == 2) CHECK_MSG(s->mg.nlevels >= 3, "%d levels for %d vertices", s->mg.nlevels, n);
      CHECK(b[0]->solver.last_residual <= 1e-10 && s->last_residual <= 1e-4);
      vec3 *e = malloc(sizeof(vec3) * (size_t)n);
      for (int i = 0; i < n; i++) e[i] = v3_sub(s->dv[i], b[0]->solver.dv[i]);
      const double err = a_norm(s, n, e) / a_norm(&b[0]->solver, n, b[0]->solver.dv);
      CHECK_MSG(err < 1e-3, "model %d, %d^2: energy-norm error %.3g", mdl, sizes[k], err);
      int exact = 1, fixed = 0;
      for (int i = 0; i < n; i++)
        if (s->fixed[i]) {
          fixed++;
          exact &= memcmp(&s->dv[i], &s->z[i], sizeof(vec3)) == 0 && v3_len(s->z[i]) > 0;
        }
      CHECK_EQ_INT(fixed, 2);
      CHECK_MSG(exact, "model %d, %d^2: a constrained vertex's dv is not exactly its z", mdl, sizes[k]);
      free(e);
      for (int q = 0; q < 2; q++) {
        loom_mesh_destroy(m[q]);
        loom_world_destroy(w[q]);
      }
    }
}

TEST(implicit_multigrid_preconditioner_is_symmetric_positive_definite) {
  /* <B a, c> = <a, B c> to rounding and <B a, a> > 0 for random a, c: what CG needs of it. The
   * constrained vertices are in the vectors too (B is definite on the whole space). */
  fx_rng r = {31};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m;
  const int h = random_system(w, LOOM_MODEL_BARAFF_WITKIN, 36, 20000, 32, &m); /* 1296 vertices: level 0 in halves */
  cloth_body *b = fx_soft(w, h);
  CHECK(loom_world_step(w) >= 0);
  cloth_solver *s = &b->solver;
  const int n = b->p.n;
  CHECK(s->mg.nlevels >= 3);
  /* level 0 in the smoothing order of two halves and a band: a permutation, no coupling between
   * the halves' inner rows, and a band that is a small part of the rows on a grid */
  const cloth_mg *g = &s->mg;
  CHECK(g->perm != NULL && g->iperm != NULL);
  const int e0 = g->part_end[0], e1 = g->part_end[1];
  CHECK(e0 > 0 && e1 > e0 && e1 <= n);
  CHECK_MSG(n - e1 < n / 8, "band of %d rows out of %d", n - e1, n);
  int perm_ok = 1, crossing = 0;
  for (int p = 0; p < n; p++) perm_ok &= g->perm[p] >= 0 && g->perm[p] < n && g->iperm[g->perm[p]] == p;
  for (int p = 0; p < e1; p++)
    for (int k = g->lv[0].row[p]; k < g->lv[0].row[p + 1]; k++) {
      const int q = g->lv[0].col[k];
      crossing += q < e1 && (q < e0) != (p < e0);
    }
  CHECK(perm_ok);
  CHECK_EQ_INT(crossing, 0);
  vec3 *a = malloc(sizeof(vec3) * (size_t)n), *c = malloc(sizeof(vec3) * (size_t)n);
  vec3 *Ba = malloc(sizeof(vec3) * (size_t)n), *Bc = malloc(sizeof(vec3) * (size_t)n);
  for (int trial = 0; trial < 20; trial++) {
    for (int i = 0; i < n; i++) {
      a[i] = fx_vec(&r);
      /* smooth and rough vectors alike */
      c[i] = trial % 2 ? v3_scale(v3(1, 2, 3), sin(0.05 * i) + fx_sym(&r) * 0.01) : fx_vec(&r);
    }
    cloth_mg_apply(&s->mg, a, Ba);
    cloth_mg_apply(&s->mg, c, Bc);
    double bac = 0, abc = 0, baa = 0, scale = 0;
    for (int i = 0; i < n; i++) {
      bac += v3_dot(Ba[i], c[i]);
      abc += v3_dot(a[i], Bc[i]);
      baa += v3_dot(Ba[i], a[i]);
      scale += v3_len(Ba[i]) * v3_len(c[i]);
    }
    CHECK_MSG(fabs(bac - abc) <= 1e-12 * scale, "trial %d: <Ba, c> = %.17g, <a, Bc> = %.17g", trial, bac, abc);
    CHECK_MSG(baa > 0, "trial %d: <Ba, a> = %.3g", trial, baa);
  }
  free(a);
  free(c);
  free(Ba);
  free(Bc);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}

TEST(implicit_multigrid_needs_far_fewer_iterations_than_jacobi_at_64x64) {
  /* A 64 x 64 cloth, stretch 20000 N/m, hanging from two corners: three steps from the same
   * state with each preconditioner at the default tolerance. Block-Jacobi's count grows with the
   * resolution (about 600 per step here), the V-cycle's hardly (about 20). */
  int its[2];
  for (int q = 0; q < 2; q++) {
    loom_world *w = fx_world(1.0 / 60);
    loom_mesh *m = fx_grid(64, 1.0, v3(0, 0, 1), LOOM_PLANE_XZ);
    const int h = implicit_cloth(w, "c", m, LOOM_MODEL_BARAFF_WITKIN, 20000, 100, 1e-4, 2e-5);
    int32_t pins[2] = {64 * 63, 64 * 64 - 1};
    CHECK(loom_pins_create(w, h, pins, 2) != 0);
    CHECK(loom_body_set_param(w, h, "preconditioner", q ? CLOTH_PRECOND_MULTIGRID : CLOTH_PRECOND_JACOBI) == 0);
    CHECK(loom_body_set_param(w, h, "cg_iterations", 100000) == 0);
    its[q] = 0;
    for (int s = 0; s < 3; s++) {
      CHECK(loom_world_step(w) >= 0);
      loom_stats st;
      loom_world_stats(w, &st);
      its[q] += st.iterations;
      CHECK(st.cg_residual <= 1e-3);
    }
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
  CHECK_MSG(4 * its[1] <= its[0], "multigrid %d iterations, block-Jacobi %d", its[1], its[0]);
}

TEST(implicit_multigrid_is_deterministic_and_allocates_nothing_in_a_step) {
  /* Two identical worlds give bit-identical states; after the first step, steps (with the
   * preconditioner switched back and forth) call no allocator. */
  char hash[2][17];
  for (int q = 0; q < 2; q++) {
    loom_world *w = fx_world(1.0 / 60);
    loom_mesh *m;
    const int h = random_system(w, LOOM_MODEL_BARAFF_WITKIN, 24, 5000, 41, &m);
    CHECK(loom_world_step(w) >= 0);
    const long before = harness_alloc_count();
    for (int s = 0; s < 60; s++) {
      if (s == 20 || s == 40) loom_body_set_param(w, h, "preconditioner", s == 20 ? 1 : 2);
      CHECK(loom_world_step(w) >= 0);
    }
    CHECK_EQ_INT(harness_alloc_count() - before, 0);
    fx_hash(w, hash[q]);
    loom_mesh_destroy(m);
    loom_world_destroy(w);
  }
  CHECK_MSG(!strcmp(hash[0], hash[1]), "states differ: %s vs %s", hash[0], hash[1]);
}

/* An implicit cloth does not need the explicit integrators' stable-substep estimate to step, so it
 * is made without it; reading stable_substep or lambda_* makes it then, with the values an explicit
 * cloth of the same mesh and material reports. */
TEST(implicit_cloth_estimates_its_spectrum_when_read) {
  static const char *names[4] = {"lambda_stretch", "lambda_shear", "lambda_bend", "stable_substep"};
  loom_world *w = fx_world(1.0 / 60);
  loom_mesh *m = fx_grid(12, 1.0, v3(0, 0, 1), LOOM_PLANE_XZ);
  const int hi = implicit_cloth(w, "implicit", m, LOOM_MODEL_BARAFF_WITKIN, 5000, 500, 1e-3, 0.01);
  loom_cloth_def d = fx_def(LOOM_MODEL_BARAFF_WITKIN, "explicit", m);
  d.integrator = LOOM_INTEGRATOR_SYMPLECTIC;
  d.stretch = 5000;
  d.shear = 500;
  d.bend = 1e-3;
  d.damping = 0.01;
  d.drag = 0;
  const int he = loom_cloth_create(w, &d);
  CHECK(hi > 0 && he > 0);
  cloth_body *bi = fx_soft(w, hi), *be = fx_soft(w, he);
  CHECK(be->model.spectrum_ok);
  CHECK(!bi->model.spectrum_ok && bi->model.spectrum_due);
  for (int k = 0; k < 4; k++) {
    double vi = 0, ve = 0;
    CHECK(loom_body_get_param(w, hi, names[k], &vi) == 0);
    CHECK(loom_body_get_param(w, he, names[k], &ve) == 0);
    CHECK_MSG(vi > 0 && vi == ve, "%s: implicit %.17g, explicit %.17g", names[k], vi, ve);
  }
  CHECK(bi->model.spectrum_ok && !bi->model.spectrum_due);
  loom_mesh_destroy(m);
  loom_world_destroy(w);
}
