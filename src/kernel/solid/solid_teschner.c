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
  const double kd = b->params.distance, dc = b->params.damping, kv = b->params.volume;
  const int32_t *e = b->model.edge;
  for (int k = 0; k < b->model.ne; k++) {
    const int i = e[2 * k], j = e[2 * k + 1];
    const double l0 = b->restq.len0[k];
    const vec3 d = v3_sub(x[j], x[i]);
    const double l = v3_len(d);
    if (!(l > 0)) continue;
    const vec3 u = v3_scale(d, 1.0 / l);
    const double C = (l - l0) / l0;
    const double Cdot = v3_dot(u, v3_sub(v[j], v[i])) / l0;
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
