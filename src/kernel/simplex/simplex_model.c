/* simplex_model.c — document 004's deformation model and its rotation-invariant variant, and the
 * exact 1-D oscillator 004 compared its integrators against.
 *
 * simplex_mra (004, Eq. 6.3), per vertex i with rest positions P0 and neighbours j:
 *   F_i = -k_r (P_i - P0_i) - k sum_j ((P_i - P_j) - (P0_i - P0_j)),
 * the gradient of E = k_r/2 sum_i |P_i - P0_i|^2 + k/2 sum_edges |(P_i - P_j) - (P0_i - P0_j)|^2.
 * Linear and cheap; zero at rest; one vertex displaced by d feels -(k_r + 3k) d and each neighbour
 * +k d. It is not rotation invariant: a rigidly turned body feels forces back to its old pose.
 *
 * simplex_shape: the same energy with every rest offset turned by a rotation fitted to the current
 * shape, E = k_r/2 sum_i |P_i - g_i|^2 + k/2 sum_edges |(P_i - P_j) - R_ij (P0_i - P0_j)|^2, where
 * g_i = c + R (P0_i - c0) is the whole body shape-matched (Mueller et al. 2005: c, c0 the centroids,
 * R the rotation of sum (P - c)(P0 - c0)^T) and R_ij = (R_i + R_j) / 2 with R_i the rotation of
 * vertex i's neighbourhood (its three offsets plus its normal). A rigid motion gives R_i = R_j = R:
 * zero force. Forces are computed with the rotations held fixed (the usual corotational
 * approximation); the pair terms are equal and opposite, and the anchors sum to zero, so the
 * internal forces carry no net force. */
#include <string.h>

#include "simplex/simplex.h"

static void quat_to_m(const double q[4], mat3 *R) {
  const quat u = {q[0], q[1], q[2], q[3]};
  *R = q_to_mat3(u);
}

void simplex_extract_rotation(const mat3 *A, double q[4], int iterations) {
  /* Newton steps on tr(R^T A): with M = R^T A, S its symmetric part, g its skew part as a vector,
   * the turn (in R's frame) is (tr(S) I - S)^-1 g; where that matrix is not positive definite
   * (far from the optimum) Mueller et al.'s step g / |tr S| instead. Converges in a few steps. */
  quat u = {q[0], q[1], q[2], q[3]};
  for (int it = 0; it < iterations; it++) {
    const mat3 R = q_to_mat3(u);
    mat3 M;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++)
        M.m[r][c] = R.m[0][r] * A->m[0][c] + R.m[1][r] * A->m[1][c] + R.m[2][r] * A->m[2][c];
    const vec3 g = v3(M.m[2][1] - M.m[1][2], M.m[0][2] - M.m[2][0], M.m[1][0] - M.m[0][1]);
    const double tr = M.m[0][0] + M.m[1][1] + M.m[2][2];
    mat3 H;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) H.m[r][c] = (r == c ? tr : 0) - 0.5 * (M.m[r][c] + M.m[c][r]);
    vec3 d;
    mat3 Hi;
    const double h0 = H.m[0][0], h1 = H.m[0][0] * H.m[1][1] - H.m[0][1] * H.m[1][0], h2 = m3_det(&H);
    if (h0 > 0 && h1 > 0 && h2 > 0 && m3_inverse(&H, &Hi))
      d = m3_mulv(&Hi, g);
    else
      d = v3_scale(g, 1.0 / (fabs(tr) + 1e-300));
    const double w = v3_len(d);
    if (!(w > 1e-9) || !isfinite(w)) break; /* radians: converged (or degenerate) */
    const vec3 om = m3_mulv(&R, d);          /* the turn in the world frame */
    u = q_normalize(q_mul(q_from_axis_angle(v3_scale(om, 1.0 / w), w > 1 ? 1 : w), u));
  }
  q[0] = u.w, q[1] = u.x, q[2] = u.y, q[3] = u.z;
}

static vec3 normal_at(const vec3 *x, const int32_t *nb) {
  const vec3 a = x[nb[0]], b = x[nb[1]], c = x[nb[2]];
  return v3_normalize(v3_neg(v3_cross(v3_sub(b, a), v3_sub(c, b))));
}

void simplex_forces(const simplex_body *b, const vec3 *x, vec3 *F, double *rot, double *rot_body) {
  const int n = b->p.n;
  const vec3 *X = b->state.rest;
  const double k = b->params.k, kr = b->params.k_anchor;
  const int32_t *E = b->model.edge;
  if (b->params.model == LOOM_SIMPLEX_MRA) {
    for (int i = 0; i < n; i++) F[i] = v3_scale(v3_sub(x[i], X[i]), -kr);
    for (int e = 0; e < b->model.ne; e++) {
      const int i = E[2 * e], j = E[2 * e + 1];
      const vec3 f = v3_scale(v3_sub(v3_sub(x[i], x[j]), v3_sub(X[i], X[j])), -k);
      F[i] = v3_add(F[i], f);
      F[j] = v3_sub(F[j], f);
    }
    return;
  }
  /* shape model: the body's rotation and each neighbourhood's */
  vec3 c = v3(0, 0, 0), c0 = v3(0, 0, 0);
  for (int i = 0; i < n; i++) c = v3_add(c, x[i]), c0 = v3_add(c0, X[i]);
  c = v3_scale(c, 1.0 / n), c0 = v3_scale(c0, 1.0 / n);
  mat3 A;
  memset(&A, 0, sizeof A);
  for (int i = 0; i < n; i++) {
    const vec3 d = v3_sub(x[i], c), D = v3_sub(X[i], c0);
    for (int r = 0; r < 3; r++)
      for (int s = 0; s < 3; s++) A.m[r][s] += v3_comp(d, r) * v3_comp(D, s);
  }
  simplex_extract_rotation(&A, rot_body, 30);
  mat3 Rg;
  quat_to_m(rot_body, &Rg);
  for (int i = 0; i < n; i++) {
    const vec3 g = v3_add(c, m3_mulv(&Rg, v3_sub(X[i], c0)));
    F[i] = v3_scale(v3_sub(x[i], g), -kr);
  }
  const double s2 = b->model.scale2;
  for (int i = 0; i < n; i++) {
    const int32_t *nb = b->model.nbr + 3 * i;
    const vec3 nx = normal_at(x, nb), nX = normal_at(X, nb);
    mat3 Ai;
    for (int r = 0; r < 3; r++)
      for (int s = 0; s < 3; s++) Ai.m[r][s] = s2 * v3_comp(nx, r) * v3_comp(nX, s);
    for (int q = 0; q < 3; q++) {
      const vec3 d = v3_sub(x[nb[q]], x[i]), D = v3_sub(X[nb[q]], X[i]);
      for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) Ai.m[r][s] += v3_comp(d, r) * v3_comp(D, s);
    }
    simplex_extract_rotation(&Ai, rot + 4 * i, 30);
  }
  for (int e = 0; e < b->model.ne; e++) {
    const int i = E[2 * e], j = E[2 * e + 1];
    mat3 Ri, Rj;
    quat_to_m(rot + 4 * i, &Ri);
    quat_to_m(rot + 4 * j, &Rj);
    const vec3 D = v3_sub(X[i], X[j]);
    const vec3 RD = v3_scale(v3_add(m3_mulv(&Ri, D), m3_mulv(&Rj, D)), 0.5);
    const vec3 f = v3_scale(v3_sub(v3_sub(x[i], x[j]), RD), -k);
    F[i] = v3_add(F[i], f);
    F[j] = v3_sub(F[j], f);
  }
}

double simplex_energy(const simplex_body *b, const vec3 *x) {
  const int n = b->p.n;
  const vec3 *X = b->state.rest;
  const int32_t *E = b->model.edge;
  double e_anchor = 0, e_edge = 0;
  if (b->params.model == LOOM_SIMPLEX_MRA) {
    for (int i = 0; i < n; i++) e_anchor += v3_dist2(x[i], X[i]);
    for (int e = 0; e < b->model.ne; e++) {
      const int i = E[2 * e], j = E[2 * e + 1];
      e_edge += v3_len2(v3_sub(v3_sub(x[i], x[j]), v3_sub(X[i], X[j])));
    }
  } else {
    /* the fitted rotations of the last step (state) */
    mat3 Rg;
    quat_to_m(b->state.rot_body, &Rg);
    vec3 c = v3(0, 0, 0), c0 = v3(0, 0, 0);
    for (int i = 0; i < n; i++) c = v3_add(c, x[i]), c0 = v3_add(c0, X[i]);
    c = v3_scale(c, 1.0 / n), c0 = v3_scale(c0, 1.0 / n);
    for (int i = 0; i < n; i++) e_anchor += v3_dist2(x[i], v3_add(c, m3_mulv(&Rg, v3_sub(X[i], c0))));
    for (int e = 0; e < b->model.ne; e++) {
      const int i = E[2 * e], j = E[2 * e + 1];
      mat3 Ri, Rj;
      quat_to_m(b->state.rot + 4 * i, &Ri);
      quat_to_m(b->state.rot + 4 * j, &Rj);
      const vec3 D = v3_sub(X[i], X[j]);
      const vec3 RD = v3_scale(v3_add(m3_mulv(&Ri, D), m3_mulv(&Rj, D)), 0.5);
      e_edge += v3_len2(v3_sub(v3_sub(x[i], x[j]), RD));
    }
  }
  return 0.5 * b->params.k_anchor * e_anchor + 0.5 * b->params.k * e_edge;
}

double simplex_omega2(const simplex_body *b) {
  double mmin = INFINITY;
  for (int i = 0; i < b->p.n; i++)
    if (b->p.m[i] > 0) mmin = fmin(mmin, b->p.m[i]);
  if (!isfinite(mmin)) return 0;
  /* the graph Laplacian of a 3-regular mesh has eigenvalues <= 6 */
  return (b->params.k_anchor + 6.0 * b->params.k) / mmin;
}

/* m x'' + b x' + k x = 0 from x0, v0: roots of m s^2 + b s + k = 0 are -b/2m +- sqrt(b^2/4m^2 - k/m)
 * (the closed forms printed in 004 are wrong; these are the textbook ones). */
void oscillator_exact(double m, double b, double k, double x0, double v0, double t, double *x, double *v) {
  const double al = b / (2 * m), w02 = k / m, disc = al * al - w02;
  if (disc < -1e-14 * w02) { /* underdamped */
    const double wd = sqrt(-disc), e = exp(-al * t), cs = cos(wd * t), sn = sin(wd * t);
    const double B = (v0 + al * x0) / wd;
    *x = e * (x0 * cs + B * sn);
    *v = e * (-al * (x0 * cs + B * sn) + (-x0 * wd * sn + B * wd * cs));
  } else if (disc > 1e-14 * w02) { /* overdamped: x = c1 e^{s1 t} + c2 e^{s2 t} */
    const double r = sqrt(disc), s1 = -al + r, s2 = -al - r;
    const double c1 = (v0 - s2 * x0) / (s1 - s2), c2 = x0 - c1;
    *x = c1 * exp(s1 * t) + c2 * exp(s2 * t);
    *v = c1 * s1 * exp(s1 * t) + c2 * s2 * exp(s2 * t);
  } else { /* critical: x = (x0 + (v0 + al x0) t) e^{-al t} */
    const double e = exp(-al * t), B = v0 + al * x0;
    *x = (x0 + B * t) * e;
    *v = (B - al * (x0 + B * t)) * e;
  }
}

LOOM_API int loom_oscillator_exact(double m, double b, double k, double x0, double v0, double t, double *x, double *v) {
  if (!(m > 0) || !(b >= 0) || !(k >= 0) || !isfinite(m + b + k + x0 + v0 + t) || !x || !v)
    return loom_fail("oscillator_exact: needs m > 0, b >= 0, k >= 0 and finite x0, v0, t");
  oscillator_exact(m, b, k, x0, v0, t, x, v);
  return 0;
}
