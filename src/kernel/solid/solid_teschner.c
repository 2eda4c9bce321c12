/* solid_teschner.c — document 002's model (Teschner, Heidelberger, Mueller, Gross 2004): energy
 * E = sum 1/2 k C^2 over edge distance constraints C_D = (|x_ij| - l0) / l0 and tet volume
 * constraints C_V = (V - V0) / V0, V = x_ij . (x_ik x x_il) / 6, forces
 * f_j = (-k C - d dC/dt) dC/dx_j. Distance constraints are damped (d_C; the sign that removes
 * energy, not 002's printed "+"), volume constraints are not (as 002). The volume gradient
 * carries the 1/(6 V0) factor, so that C_V is the relative volume change and k_V is in joules
 * like k_D (002's printed gradients omit it). Internal forces sum to zero and exert no torque. */
#include <string.h>

#include "solid/solid.h"

/* dV/dx of the four corners of tet (a, b, c, d) (their sum is zero). */
static inline void volume_gradient(vec3 a, vec3 b, vec3 c, vec3 d, vec3 g[4]) {
  const vec3 ab = v3_sub(b, a), ac = v3_sub(c, a), ad = v3_sub(d, a);
  g[1] = v3_scale(v3_cross(ac, ad), 1.0 / 6.0);
  g[2] = v3_scale(v3_cross(ad, ab), 1.0 / 6.0);
  g[3] = v3_scale(v3_cross(ab, ac), 1.0 / 6.0);
  g[0] = v3_scale(v3_add(g[1], v3_add(g[2], g[3])), -1.0);
}

void teschner_forces(const solid_body *b, const vec3 *x, const vec3 *v, vec3 *F) {
  teschner_forces_damped(b, x, v, F, b->params.damping);
}

void teschner_forces_damped(const solid_body *b, const vec3 *x, const vec3 *v, vec3 *F, double dc) {
  const double kd = b->params.distance, kv = b->params.volume;
  const int32_t *e = b->model.edge;
  for (int k = 0; k < b->model.ne; k++) {
    const int i = e[2 * k], j = e[2 * k + 1];
    const double l0 = b->restq.len0[k];
    const vec3 d = v3_sub(x[j], x[i]);
    const double l = v3_len(d);
    if (!(l > 0)) continue;
    const vec3 u = v3_scale(d, 1.0 / l);
    const double C = (l - l0) / l0;
    const double Cdot = dc != 0 ? v3_dot(u, v3_sub(v[j], v[i])) / l0 : 0;
    /* f_i = (-k C - d Cdot) dC/dx_i with dC/dx_i = -u / l0 */
    const vec3 fi = v3_scale(u, (kd * C + dc * Cdot) / l0);
    F[i] = v3_add(F[i], fi);
    F[j] = v3_sub(F[j], fi);
  }
  if (kv > 0) {
    const int32_t *t = b->model.tet;
    for (int k = 0; k < b->model.nt; k++) {
      const int32_t *q = t + 4 * k;
      vec3 g[4];
      volume_gradient(x[q[0]], x[q[1]], x[q[2]], x[q[3]], g);
      const double V0 = b->restq.vol0[k];
      /* the same expression as the rest volume's, so that a body at rest feels exactly nothing */
      const double V = tet_signed_volume(x[q[0]], x[q[1]], x[q[2]], x[q[3]]);
      const double C = (V - V0) / V0;
      const double s = -kv * C / V0;
      for (int c = 0; c < 4; c++) F[q[c]] = v3_madd(F[q[c]], g[c], s);
    }
  }
}

double teschner_energy(const solid_body *b, const vec3 *x) {
  double E = 0;
  const int32_t *e = b->model.edge;
  for (int k = 0; k < b->model.ne; k++) {
    const double l0 = b->restq.len0[k];
    const double C = (v3_len(v3_sub(x[e[2 * k + 1]], x[e[2 * k]])) - l0) / l0;
    E += 0.5 * b->params.distance * C * C;
  }
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    const double V = tet_signed_volume(x[q[0]], x[q[1]], x[q[2]], x[q[3]]);
    const double C = (V - b->restq.vol0[k]) / b->restq.vol0[k];
    E += 0.5 * b->params.volume * C * C;
  }
  return E;
}

/* Gershgorin bounds on lambda_max(M^-1/2 K M^-1/2) at the rest shape for unit k_D and k_V, and on
 * the damping rate for unit d_C: per vertex, the sum over its elements of |block| row sums. */
void teschner_unit_bounds(solid_body *b) {
  const int n = b->p.n;
  double *rd = core_calloc((size_t)n * 2, sizeof(double));
  if (!rd) {
    b->model.omega2_unit[0] = b->model.omega2_unit[1] = b->model.omega2_unit[2] = 1e12;
    return;
  }
  double *rv = rd + n;
  const double *m = b->p.m;
  const int32_t *e = b->model.edge;
  for (int k = 0; k < b->model.ne; k++) {
    const int i = e[2 * k], j = e[2 * k + 1];
    const double s = 1.0 / (b->restq.len0[k] * b->restq.len0[k]);
    rd[i] += s * (1.0 / m[i] + 1.0 / sqrt(m[i] * m[j]));
    rd[j] += s * (1.0 / m[j] + 1.0 / sqrt(m[i] * m[j]));
  }
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    vec3 g[4];
    volume_gradient(b->state.rest[q[0]], b->state.rest[q[1]], b->state.rest[q[2]], b->state.rest[q[3]], g);
    const double V0 = b->restq.vol0[k];
    for (int a = 0; a < 4; a++)
      for (int c = 0; c < 4; c++)
        rv[q[a]] += v3_len(g[a]) * v3_len(g[c]) / (V0 * V0 * sqrt(m[q[a]] * m[q[c]]));
  }
  double md = 0, mv = 0;
  for (int i = 0; i < n; i++) md = fmax(md, rd[i]), mv = fmax(mv, rv[i]);
  b->model.omega2_unit[0] = md;
  b->model.omega2_unit[1] = mv;
  b->model.omega2_unit[2] = md; /* the damping matrix has the stiffness's pattern and scale */
  core_free(rd);
}

/* Baraff-Witkin's filter: a vertex on an obstacle keeps its normal velocity in the solve. */
static inline vec3 damp_filter(const solid_body *b, int i, vec3 a) {
  const vec3 n = b->state.cn[i];
  if (n.x == 0 && n.y == 0 && n.z == 0) return a;
  return v3_madd(a, n, -v3_dot(a, n));
}

/* y = (M + h D) p over the free vertices (pinned ones: y = p, they do not take part), D the
 * damping matrix of the distance constraints: sum over edges of (d / l0^2) u u^T on the edge's
 * difference; ew holds each edge's u scaled by the square root of its h d / l0^2. `held`: some
 * vertex is pinned (without, the loop needs no mask). */
static void damp_apply(const solid_body *b, const vec3 *ew, int held, const vec3 *p, vec3 *y) {
  const double *im = b->p.inv_m;
  for (int i = 0; i < b->p.n; i++) y[i] = im[i] > 0 ? v3_scale(p[i], b->p.m[i]) : p[i];
  const int32_t *e = b->model.edge;
  if (!held) {
    for (int k = 0; k < b->model.ne; k++) {
      const int i = e[2 * k], j = e[2 * k + 1];
      const vec3 w = ew[k];
      const double c = w.x * (p[j].x - p[i].x) + w.y * (p[j].y - p[i].y) + w.z * (p[j].z - p[i].z);
      y[j] = v3_madd(y[j], w, c);
      y[i] = v3_madd(y[i], w, -c);
    }
    return;
  }
  for (int k = 0; k < b->model.ne; k++) {
    const int i = e[2 * k], j = e[2 * k + 1];
    const double pi = im[i] > 0, pj = im[j] > 0;
    const vec3 dp = v3_sub(v3_scale(p[j], pj), v3_scale(p[i], pi));
    const double c = v3_dot(ew[k], dp);
    y[j] = v3_madd(y[j], ew[k], c * pj);
    y[i] = v3_madd(y[i], ew[k], -c * pi);
  }
}

/* The damping of the distance constraints over a substep h, backward Euler:
 * (M + h D) u' = M u (vertices on an obstacle keep their normal velocity: the filter), solved by conjugate gradients (Jacobi preconditioner, relative residual
 * 1e-3, at most 50 iterations; the matrix is M plus h times a positive semi-definite D, so CG
 * converges in a few iterations when h D is not much larger than M). The exact solution keeps
 * linear and angular momentum (D's rows sum to zero, its terms are central); the iterate's drift
 * is given back (evenly, and as a rigid rotation), so both hold to rounding. Energy is only taken; stable at any h, so the stable substep comes from the
 * stiffness alone. */
void teschner_damp(const solid_body *b, const vec3 *x, vec3 *v, double h) {
  const double dc = b->params.damping;
  if (!(dc > 0)) return;
  const int n = b->p.n;
  const solid_scratch *sc = &b->scratch;
  vec3 *r = sc->r, *p = sc->d, *q = sc->q, *z = sc->s;
  const double *im = b->p.inv_m;
  /* the edges' directions and coefficients; Jacobi: m_i + h sum over i's edges of d / l0^2 (the
   * diagonal of D, bounded by that) */
  double *dg = sc->row_bound;
  vec3 *ew = sc->edge_u;
  int held = 0;
  for (int i = 0; i < n; i++) {
    dg[i] = b->p.m[i];
    held |= im[i] == 0;
  }
  const int32_t *e = b->model.edge;
  const double shd = sqrt(h * dc);
  for (int k = 0; k < b->model.ne; k++) {
    const vec3 d = v3_sub(x[e[2 * k + 1]], x[e[2 * k]]);
    const double l = v3_len(d), s = shd / b->restq.len0[k], c = s * s; /* c = h d_C / l0^2 */
    ew[k] = l > 0 ? v3_scale(d, s / l) : v3(0, 0, 0);
    dg[e[2 * k]] += c;
    dg[e[2 * k + 1]] += c;
  }
  for (int i = 0; i < n; i++) dg[i] = 1.0 / dg[i]; /* the preconditioner: the inverse */
  /* the momentum before, when nothing holds a vertex */
  int all_free = 1;
  vec3 p0 = v3(0, 0, 0);
  vec3 *v0 = sc->v0, *dp = b->state.damp_prev;
  for (int i = 0; i < n; i++) {
    v0[i] = v[i];
    const vec3 cn = b->state.cn[i];
    if (im[i] == 0 || cn.x != 0 || cn.y != 0 || cn.z != 0) all_free = 0;
    p0 = v3_madd(p0, v[i], b->p.m[i]);
  }
  /* the first guess: u, or u plus the last substep's change when that leaves the smaller
   * residual (the change is state, so a restored checkpoint goes on bit-identically). The damping
   * field changes little from one substep to the next, so the solve usually starts near its
   * answer; a motion without relative velocity (u's residual -h D u vanishes) stays exact. The
   * stopping test stays relative to M u. */
  damp_apply(b, ew, held, v, q);
  double rr0 = 0, rr = 0;
  for (int i = 0; i < n; i++) {
    r[i] = im[i] > 0 ? damp_filter(b, i, v3_sub(v3_scale(v[i], b->p.m[i]), q[i])) : v3(0, 0, 0);
    rr += v3_len2(r[i]);
    rr0 += im[i] > 0 ? b->p.m[i] * b->p.m[i] * v3_len2(v[i]) : 0;
  }
  if (rr > 1e-6 * rr0) {
    for (int i = 0; i < n; i++) p[i] = im[i] > 0 ? damp_filter(b, i, dp[i]) : v3(0, 0, 0);
    damp_apply(b, ew, held, p, z);
    double rw = 0;
    for (int i = 0; i < n; i++) {
      q[i] = im[i] > 0 ? v3_sub(r[i], damp_filter(b, i, z[i])) : v3(0, 0, 0);
      rw += v3_len2(q[i]);
    }
    if (rw < rr) {
      for (int i = 0; i < n; i++) {
        v[i] = v3_add(v[i], p[i]);
        r[i] = q[i];
      }
      rr = rw;
    }
  }
  double rz = 0;
  for (int i = 0; i < n; i++) {
    z[i] = damp_filter(b, i, v3_scale(r[i], dg[i]));
    p[i] = z[i];
    rz += v3_dot(r[i], z[i]);
  }
  for (int it = 0; it < 50 && rr > 1e-6 * rr0 && rz > 0; it++) {
    damp_apply(b, ew, held, p, q);
    double pq = 0;
    for (int i = 0; i < n; i++) {
      q[i] = damp_filter(b, i, q[i]);
      if (im[i] > 0) pq += v3_dot(p[i], q[i]);
    }
    if (!(pq > 0)) break;
    const double alpha = rz / pq;
    double rz1 = 0;
    rr = 0;
    for (int i = 0; i < n; i++) {
      if (im[i] == 0) continue;
      v[i] = v3_madd(v[i], p[i], alpha);
      r[i] = v3_madd(r[i], q[i], -alpha);
      z[i] = damp_filter(b, i, v3_scale(r[i], dg[i]));
      rz1 += v3_dot(r[i], z[i]);
      rr += v3_len2(r[i]);
    }
    const double beta = rz1 / rz;
    rz = rz1;
    for (int i = 0; i < n; i++) p[i] = im[i] > 0 ? v3_madd(z[i], p[i], beta) : v3(0, 0, 0);
  }
  for (int i = 0; i < n; i++) dp[i] = v3_sub(v[i], v0[i]);
  /* the exact solution keeps the momentum of the free vertices (D's rows sum to zero); the
   * iterate keeps it to the tolerance, so the drift goes back evenly (none when a vertex is held:
   * pins and obstacles take momentum) */
  if (!all_free) return;
  /* linear momentum: the drift goes back evenly */
  vec3 p1 = v3(0, 0, 0);
  for (int i = 0; i < n; i++) p1 = v3_madd(p1, v[i], b->p.m[i]);
  const vec3 fix = v3_scale(v3_sub(p0, p1), 1.0 / b->p.total_mass);
  for (int i = 0; i < n; i++) v[i] = v3_add(v[i], fix);
  /* angular momentum about the centre of mass: the drift goes back as a rigid rotation,
   * dv = w x (x - c), I w = L0 - L1 */
  vec3 c = v3(0, 0, 0);
  for (int i = 0; i < n; i++) c = v3_madd(c, x[i], b->p.m[i]);
  c = v3_scale(c, 1.0 / b->p.total_mass);
  vec3 L = v3(0, 0, 0);
  double I[9] = {0};
  for (int i = 0; i < n; i++) {
    const vec3 ri = v3_sub(x[i], c), dv = v3_sub(v0[i], v[i]);
    L = v3_madd(L, v3_cross(ri, dv), b->p.m[i]);
    const double m = b->p.m[i], r2 = v3_len2(ri);
    I[0] += m * (r2 - ri.x * ri.x), I[4] += m * (r2 - ri.y * ri.y), I[8] += m * (r2 - ri.z * ri.z);
    I[1] -= m * ri.x * ri.y, I[2] -= m * ri.x * ri.z, I[5] -= m * ri.y * ri.z;
  }
  I[3] = I[1], I[6] = I[2], I[7] = I[5];
  const double c00 = I[4] * I[8] - I[5] * I[7], c01 = I[5] * I[6] - I[3] * I[8], c02 = I[3] * I[7] - I[4] * I[6];
  const double det = I[0] * c00 + I[1] * c01 + I[2] * c02;
  if (!(fabs(det) > 0)) return;
  const double id = 1.0 / det;
  const double J[9] = {c00 * id, (I[2] * I[7] - I[1] * I[8]) * id, (I[1] * I[5] - I[2] * I[4]) * id,
                       c01 * id, (I[0] * I[8] - I[2] * I[6]) * id, (I[2] * I[3] - I[0] * I[5]) * id,
                       c02 * id, (I[1] * I[6] - I[0] * I[7]) * id, (I[0] * I[4] - I[1] * I[3]) * id};
  const vec3 w = v3(J[0] * L.x + J[1] * L.y + J[2] * L.z, J[3] * L.x + J[4] * L.y + J[5] * L.z,
                    J[6] * L.x + J[7] * L.y + J[8] * L.z);
  for (int i = 0; i < n; i++) v[i] = v3_add(v[i], v3_cross(w, v3_sub(x[i], c)));
}

/* A Gershgorin bound on lambda_max(M^-1/2 K M^-1/2) at the current shape, with the geometric
 * stiffness the rest-shape estimate does not see: an edge compressed or stretched by C adds
 * k |C| / (l0 l) across it (large when a collapsing lattice crushes an edge), and the tets'
 * terms at their current gradients. */
double teschner_omega2_now(const solid_body *b) {
  const int n = b->p.n;
  double *row = b->scratch.row_bound, *ism = b->scratch.ism;
  if (!row || !ism) return 0;
  memset(row, 0, sizeof(double) * (size_t)n);
  const double kd = b->params.distance, kv = b->params.volume;
  const vec3 *x = b->p.x;
  const double *m = b->p.m;
  for (int i = 0; i < n; i++) ism[i] = 1.0 / sqrt(m[i]); /* (the mass weights below as products) */
  const int32_t *e = b->model.edge;
  for (int k = 0; k < b->model.ne; k++) {
    const int i = e[2 * k], j = e[2 * k + 1];
    const double l0 = b->restq.len0[k], l = fmax(v3_len(v3_sub(x[j], x[i])), 1e-3 * l0);
    const double C = (l - l0) / l0;
    const double s = kd / (l0 * l0) + kd * fabs(C) / (l0 * l);
    const double c = s * ism[i] * ism[j];
    row[i] += s * ism[i] * ism[i] + c;
    row[j] += s * ism[j] * ism[j] + c;
  }
  /* the volume terms at the current shape: k_V |dV/dx_a| |dV/dx_c| / V0^2 (the gradients grow as
   * a tet is crushed flat) plus the geometric part of a tet whose volume is off by C:
   * k_V |C| / V0 times the size of dV's second derivative (edge lengths / 6) */
  if (kv > 0)
    for (int k = 0; k < b->model.nt; k++) {
      const int32_t *q = b->model.tet + 4 * k;
      vec3 g[4];
      volume_gradient(x[q[0]], x[q[1]], x[q[2]], x[q[3]], g);
      const double V0 = b->restq.vol0[k];
      const double V = tet_signed_volume(x[q[0]], x[q[1]], x[q[2]], x[q[3]]);
      const double geo = kv * fabs(V - V0) / (V0 * V0) *
                         (v3_len(v3_sub(x[q[1]], x[q[0]])) + v3_len(v3_sub(x[q[2]], x[q[0]])) + v3_len(v3_sub(x[q[3]], x[q[0]]))) / 6.0;
      /* row a: sum over c of (k_V/V0^2 |g_a| |g_c| + geo [a != c]) / sqrt(m_a m_c) */
      double gl[4], sg = 0, sm = 0;
      for (int a = 0; a < 4; a++) {
        gl[a] = v3_len(g[a]);
        sg += gl[a] * ism[q[a]];
        sm += ism[q[a]];
      }
      const double kv0 = kv / (V0 * V0);
      for (int a = 0; a < 4; a++) row[q[a]] += (kv0 * gl[a] * sg + geo * (sm - ism[q[a]])) * ism[q[a]];
    }
  double mx = 0;
  for (int i = 0; i < n; i++)
    if (b->p.inv_m[i] > 0) mx = fmax(mx, row[i]);
  return mx;
}

/* lambda_max(M^-1/2 K M^-1/2) at the rest shape for unit k_D (edges) and unit k_V (tets) by power
 * iteration (60 products from a fixed pseudo-random start; the Rayleigh quotient approaches the
 * largest eigenvalue from below, so the substep rule keeps a margin). Gershgorin's bound is
 * 1.5 to 2 times larger on these lattices: the step it allows is that much shorter. */
void teschner_spectrum(solid_body *b) {
  const int n = b->p.n;
  double *x = core_alloc((size_t)n * 6, sizeof(double));
  if (!x) {
    b->model.lambda_unit[0] = b->model.omega2_unit[0];
    b->model.lambda_unit[1] = b->model.omega2_unit[1];
    return;
  }
  double *y = x + 3 * n;
  const double *m = b->p.m;
  const vec3 *X = b->state.rest;
  for (int fam = 0; fam < 2; fam++) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3 * n; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    double lambda = 0;
    for (int it = 0; it < 60; it++) {
      double nx = 0;
      for (int i = 0; i < 3 * n; i++) nx += x[i] * x[i];
      nx = sqrt(nx);
      if (!(nx > 0)) break;
      for (int i = 0; i < 3 * n; i++) x[i] /= nx, y[i] = 0;
      if (fam == 0) {
        for (int k = 0; k < b->model.ne; k++) {
          const int i = b->model.edge[2 * k], j = b->model.edge[2 * k + 1];
          const double l0 = b->restq.len0[k];
          const vec3 u = v3_scale(v3_sub(X[j], X[i]), 1.0 / l0);
          const double si = 1.0 / sqrt(m[i]), sj = 1.0 / sqrt(m[j]);
          const vec3 zi = v3(x[3 * i] * si, x[3 * i + 1] * si, x[3 * i + 2] * si);
          const vec3 zj = v3(x[3 * j] * sj, x[3 * j + 1] * sj, x[3 * j + 2] * sj);
          const double c = v3_dot(u, v3_sub(zj, zi)) / (l0 * l0);
          y[3 * j] += c * u.x * sj, y[3 * j + 1] += c * u.y * sj, y[3 * j + 2] += c * u.z * sj;
          y[3 * i] -= c * u.x * si, y[3 * i + 1] -= c * u.y * si, y[3 * i + 2] -= c * u.z * si;
        }
      } else {
        for (int k = 0; k < b->model.nt; k++) {
          const int32_t *q = b->model.tet + 4 * k;
          vec3 g[4];
          volume_gradient(X[q[0]], X[q[1]], X[q[2]], X[q[3]], g);
          const double V0 = b->restq.vol0[k];
          double c = 0;
          for (int a = 0; a < 4; a++) {
            const double sa = 1.0 / sqrt(m[q[a]]);
            c += (g[a].x * x[3 * q[a]] + g[a].y * x[3 * q[a] + 1] + g[a].z * x[3 * q[a] + 2]) * sa;
          }
          c /= V0 * V0;
          for (int a = 0; a < 4; a++) {
            const double sa = 1.0 / sqrt(m[q[a]]);
            y[3 * q[a]] += c * g[a].x * sa, y[3 * q[a] + 1] += c * g[a].y * sa, y[3 * q[a] + 2] += c * g[a].z * sa;
          }
        }
      }
      double xy = 0;
      for (int i = 0; i < 3 * n; i++) xy += x[i] * y[i];
      lambda = xy;
      memcpy(x, y, sizeof(double) * 3 * (size_t)n);
    }
    b->model.lambda_unit[fam] = lambda > 0 ? lambda : b->model.omega2_unit[fam];
  }
  core_free(x);
}
