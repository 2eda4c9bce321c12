/* cloth_stability.c — the stable substep of the explicit integrators.
 *
 * Symplectic Euler on M x'' = -K x is stable while h * omega_max < 2, omega_max^2 the largest
 * eigenvalue of M^-1/2 K M^-1/2. At creation we estimate, for each stiffness family f (stretch,
 * shear, bend) at unit stiffness, lambda_f = lambda_max(M^-1/2 K_f M^-1/2) by a Lanczos iteration
 * whose matrix-vector products are central differences of the model's own forces at the rest
 * state — so every model gets an estimate without a hand-written Hessian. By Weyl's inequality
 * lambda_max(sum k_f K_f) <= sum k_f lambda_f, which lets live stiffness changes rescale the bound
 * without recomputing it. The Gershgorin bounds (springs_omega2_bound, bw_omega2_bound) remain a
 * fallback; they are about 2-3 times looser on grids (corner vertices dominate them). */
#include <string.h>

#include "cloth/cloth.h"

#define LANCZOS_STEPS 32

/* Largest eigenvalue of the symmetric tridiagonal matrix (alpha on the diagonal, beta beside it)
 * by bisection on Sturm sequence counts. */
static double tridiag_max_eig(const double *alpha, const double *beta, int m) {
  double lo = INFINITY, hi = -INFINITY;
  for (int k = 0; k < m; k++) {
    double r = (k > 0 ? fabs(beta[k - 1]) : 0) + (k + 1 < m ? fabs(beta[k]) : 0);
    lo = fmin(lo, alpha[k] - r);
    hi = fmax(hi, alpha[k] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-12 * fmax(fabs(hi), 1e-300); it++) {
    double mid = 0.5 * (lo + hi);
    /* number of eigenvalues below mid = number of negative pivots of T - mid I */
    int below = 0;
    double d = 1;
    for (int k = 0; k < m; k++) {
      double b2 = k > 0 ? beta[k - 1] * beta[k - 1] : 0;
      d = alpha[k] - mid - (k > 0 ? b2 / d : 0);
      if (d == 0) d = -1e-300;
      if (d < 0) below++;
    }
    if (below == m)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

static double dotv(const vec3 *a, const vec3 *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i].x * b[i].x + a[i].y * b[i].y + a[i].z * b[i].z;
  return s;
}

/* lambda_max of M^-1/2 K_f M^-1/2 at rest for family f at unit stiffness. */
static double family_lambda(const cloth_body *b, int fam, vec3 *q, vec3 *qp, vec3 *w, vec3 *xp, vec3 *Fp, vec3 *Fm,
                            const double *ism, double eps) {
  cloth_body t = *b; /* shallow copy: same topology, other parameters */
  t.params.damping = 0;
  t.params.stretch = fam == FAM_STRUCTURAL ? 1.0 : 0.0;
  t.params.shear = fam == FAM_SHEAR ? 1.0 : 0.0;
  t.params.bend = fam == FAM_BEND ? 1.0 : 0.0;
  const int n = b->p.n;
  uint64_t s = 0x9E3779B97F4A7C15ull; /* fixed seed: the estimate is deterministic */
  for (int i = 0; i < n; i++) {
    double c[3];
    for (int k = 0; k < 3; k++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      c[k] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
    q[i] = v3(c[0], c[1], c[2]);
  }
  double qn = sqrt(dotv(q, q, n));
  for (int i = 0; i < n; i++) q[i] = v3_scale(q[i], 1.0 / qn);
  memset(qp, 0, sizeof(vec3) * (size_t)n);
  double alpha[LANCZOS_STEPS], beta[LANCZOS_STEPS];
  int m = 0;
  double beta_prev = 0;
  for (int j = 0; j < LANCZOS_STEPS; j++) {
    for (int i = 0; i < n; i++) xp[i] = v3_madd(b->p.rest[i], q[i], eps * ism[i]);
    cloth_internal_forces(&t, xp, b->p.v, Fp);
    for (int i = 0; i < n; i++) xp[i] = v3_madd(b->p.rest[i], q[i], -eps * ism[i]);
    cloth_internal_forces(&t, xp, b->p.v, Fm);
    for (int i = 0; i < n; i++) w[i] = v3_scale(v3_sub(Fm[i], Fp[i]), ism[i] / (2 * eps));
    double a = dotv(q, w, n);
    for (int i = 0; i < n; i++) w[i] = v3_sub(v3_sub(w[i], v3_scale(q[i], a)), v3_scale(qp[i], beta_prev));
    double bnorm = sqrt(dotv(w, w, n));
    alpha[m] = a;
    beta[m] = bnorm;
    m++;
    if (!(bnorm > 1e-12 * fabs(a))) break;
    for (int i = 0; i < n; i++) {
      qp[i] = q[i];
      q[i] = v3_scale(w[i], 1.0 / bnorm);
    }
    beta_prev = bnorm;
  }
  double lam = tridiag_max_eig(alpha, beta, m);
  return isfinite(lam) && lam > 0 ? lam : 0;
}

int cloth_estimate_spectrum(cloth_body *b) {
  memset(b->model.lambda_unit, 0, sizeof b->model.lambda_unit);
  b->model.spectrum_ok = 0;
  if (b->params.model == LOOM_MODEL_SPRINGS_PBD) return 0;
  const int n = b->p.n;
  vec3 *buf = core_alloc((size_t)n * 6, sizeof(vec3));
  double *ism = core_alloc((size_t)n, sizeof(double));
  if (!buf || !ism) {
    core_free(buf);
    core_free(ism);
    return -1;
  }
  double mmin = INFINITY, edge = 0;
  for (int i = 0; i < n; i++) {
    ism[i] = 1.0 / sqrt(b->p.m[i]);
    mmin = fmin(mmin, b->p.m[i]);
  }
  for (int t = 0; t < b->p.nt; t++) edge += v3_dist(b->p.rest[b->p.tri[3 * t]], b->p.rest[b->p.tri[3 * t + 1]]);
  edge /= b->p.nt;
  /* displacements of at most 1e-7 of an edge: far inside the linear range, far above rounding */
  double eps = 1e-7 * edge * sqrt(mmin);
  for (int f = 0; f < FAM_COUNT; f++)
    b->model.lambda_unit[f] =
      family_lambda(b, f, buf, buf + n, buf + 2 * n, buf + 3 * n, buf + 4 * n, buf + 5 * n, ism, eps);
  core_free(buf);
  core_free(ism);
  b->model.spectrum_ok = 1;
  return 0;
}
