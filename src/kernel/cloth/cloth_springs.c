/* cloth_springs.c — mass–spring cloth (document 001): structural, shear and bend springs with
 * damping along the spring and optionally 001's damping of the full relative velocity (force variant), and the same springs as position constraints
 * (constraint variant, springs_pbd). */
#include <stdlib.h>
#include <string.h>

#include "cloth/cloth.h"

static double family_k(const cloth_body *b, int fam) {
  return fam == FAM_STRUCTURAL ? b->params.stretch : fam == FAM_SHEAR ? b->params.shear : b->params.bend;
}

static void add_spring(cloth_body *b, int *count, int i, int j) {
  spring *s = &b->model.springs[(*count)++];
  s->i = i;
  s->j = j;
  s->rest = v3_dist(b->p.rest[i], b->p.rest[j]);
}

int springs_build(cloth_body *b, const loom_mesh *m) {
  const int NX = m->grid_nx, NY = m->grid_ny;
  const int grid = NX > 0 && NY > 0 && (long long)NX * NY == b->p.n;
  size_t cap;
  if (grid) {
    /* 001: for an N x N grid, 2N(N-1) structural, 2(N-1)^2 shear, 2N(N-2) bend springs. */
    cap = (size_t)NY * (size_t)(NX - 1) + (size_t)NX * (size_t)(NY - 1) + 2 * (size_t)(NX - 1) * (size_t)(NY - 1) +
          (size_t)NY * (size_t)(NX > 2 ? NX - 2 : 0) + (size_t)NX * (size_t)(NY > 2 ? NY - 2 : 0);
  } else {
    cap = (size_t)m->ne + (size_t)m->nh;
  }
  b->model.springs = core_alloc(cap ? cap : 1, sizeof(spring));
  if (!b->model.springs) return -1;
  int c = 0;
#define ID(i, j) ((j) * NX + (i))
  b->model.fam_start[FAM_STRUCTURAL] = c;
  if (grid) {
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        if (i + 1 < NX) add_spring(b, &c, ID(i, j), ID(i + 1, j));
        if (j + 1 < NY) add_spring(b, &c, ID(i, j), ID(i, j + 1));
      }
  } else {
    for (int e = 0; e < m->ne; e++) add_spring(b, &c, m->edge[2 * e], m->edge[2 * e + 1]);
  }
  b->model.fam_start[FAM_SHEAR] = c;
  if (grid) {
    for (int j = 0; j + 1 < NY; j++)
      for (int i = 0; i + 1 < NX; i++) {
        add_spring(b, &c, ID(i, j), ID(i + 1, j + 1));
        add_spring(b, &c, ID(i + 1, j), ID(i, j + 1));
      }
  }
  /* General meshes: their edges already include the diagonals, so there is no shear family. */
  b->model.fam_start[FAM_BEND] = c;
  if (grid) {
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        if (i + 2 < NX) add_spring(b, &c, ID(i, j), ID(i + 2, j));
        if (j + 2 < NY) add_spring(b, &c, ID(i, j), ID(i, j + 2));
      }
  } else {
    /* Bend springs join the two wing vertices of every interior edge. */
    for (int h = 0; h < m->nh; h++) {
      int a = m->hinge[4 * h + 2], bb = m->hinge[4 * h + 3];
      if (a != bb) add_spring(b, &c, a, bb);
    }
  }
#undef ID
  b->model.fam_start[FAM_COUNT] = c;
  return 0;
}

void springs_forces(const cloth_body *b, const vec3 *restrict x, const vec3 *restrict v, vec3 *restrict F) {
  for (int fam = 0; fam < FAM_COUNT; fam++) {
    const double k = family_k(b, fam);
    const double c = b->params.damping * k; /* Rayleigh: damping coefficient proportional to stiffness */
    if (k == 0) continue;
    const spring *s = b->model.springs + b->model.fam_start[fam];
    const int count = b->model.fam_start[fam + 1] - b->model.fam_start[fam];
    for (int q = 0; q < count; q++) {
      const int i = s[q].i, j = s[q].j;
      const double dx = x[j].x - x[i].x, dy = x[j].y - x[i].y, dz = x[j].z - x[i].z;
      const double l2 = dx * dx + dy * dy + dz * dz;
      if (!(l2 > 1e-24)) continue; /* coincident ends: no direction */
      const double l = sqrt(l2), il = 1.0 / l;
      const double ux = dx * il, uy = dy * il, uz = dz * il;
      /* 001 force variant: f = k (|d| - L) d/|d|, plus damping of the relative velocity along d. */
      const double vrel = (v[j].x - v[i].x) * ux + (v[j].y - v[i].y) * uy + (v[j].z - v[i].z) * uz;
      const double mag = k * (l - s[q].rest) + c * vrel;
      const double fx = mag * ux, fy = mag * uy, fz = mag * uz;
      F[i].x += fx;
      F[i].y += fy;
      F[i].z += fz;
      F[j].x -= fx;
      F[j].y -= fy;
      F[j].z -= fz;
    }
  }
  /* 001's damping of the full relative velocity, -c (v_i - v_j) on i, on every spring (it damps
   * shear and rotation of each spring as well as its stretching; momentum is kept) */
  const double cr = b->params.relative_damping;
  if (cr > 0) {
    const spring *s = b->model.springs;
    for (int q = 0; q < b->model.fam_start[FAM_COUNT]; q++) {
      const int i = s[q].i, j = s[q].j;
      const vec3 f = v3_scale(v3_sub(v[j], v[i]), cr);
      F[i] = v3_add(F[i], f);
      F[j] = v3_sub(F[j], f);
    }
  }
}

double springs_relative_damping_bound(const cloth_body *b) {
  const double c = b->params.relative_damping;
  if (!(c > 0)) return 0;
  double *r = core_calloc((size_t)b->p.n, sizeof(double));
  if (!r) return 0;
  const double *m = b->p.m;
  const spring *s = b->model.springs;
  for (int q = 0; q < b->model.fam_start[FAM_COUNT]; q++) {
    const int i = s[q].i, j = s[q].j;
    const double off = c / sqrt(m[i] * m[j]);
    r[i] += c / m[i] + off;
    r[j] += c / m[j] + off;
  }
  double worst = 0;
  for (int i = 0; i < b->p.n; i++) worst = fmax(worst, r[i]);
  core_free(r);
  return worst;
}

double springs_energy(const cloth_body *b, const vec3 *x) {
  double e = 0;
  for (int fam = 0; fam < FAM_COUNT; fam++) {
    const double k = family_k(b, fam);
    for (int q = b->model.fam_start[fam]; q < b->model.fam_start[fam + 1]; q++) {
      const spring *s = &b->model.springs[q];
      double d = v3_dist(x[s->i], x[s->j]) - s->rest;
      e += 0.5 * k * d * d;
    }
  }
  return e;
}

void springs_project(const cloth_body *b, vec3 *x) {
  /* 001 constraint variant, order shear, structural, bend; each end moves by its share of the
   * length violation — half each for equal masses, all of it on the free end when the other is
   * pinned — weighted here by inverse mass so unequal masses keep momentum. */
  static const int order[FAM_COUNT] = {FAM_SHEAR, FAM_STRUCTURAL, FAM_BEND};
  const double *w = b->p.inv_m;
  for (int o = 0; o < FAM_COUNT; o++) {
    const int fam = order[o];
    const double stiff = family_k(b, fam);
    if (stiff == 0) continue;
    for (int q = b->model.fam_start[fam]; q < b->model.fam_start[fam + 1]; q++) {
      const spring *s = &b->model.springs[q];
      const int i = s->i, j = s->j;
      const double wsum = w[i] + w[j];
      if (wsum == 0) continue;
      vec3 d = v3_sub(x[j], x[i]);
      double l = v3_len(d);
      if (!(l > 1e-12)) continue;
      double corr = stiff * (l - s->rest) / (l * wsum);
      x[i] = v3_madd(x[i], d, w[i] * corr);
      x[j] = v3_madd(x[j], d, -w[j] * corr);
    }
  }
}

void springs_project_xpbd(const cloth_body *b, vec3 *x, double hh, double *lambda) {
  /* XPBD (Macklin, Mueller, Chentanez 2016): each spring is a constraint C = |d| - L with
   * compliance alpha = compliance / fraction (m/N); lambda accumulates over the iterations of a
   * substep (the caller zeroes it), dlambda = (-C - a lambda) / (w_i + w_j + a), a = alpha / hh.
   * hh is what a force f over the substep moves a vertex of mass m, divided by f / m: h^2 after
   * a symplectic or Verlet prediction, h^2 / 2 after RK4's (cloth_predict). The projection
   * converges to the same stiffness 1 / alpha whatever the iteration count. Same family order as
   * springs_project. */
  static const int order[FAM_COUNT] = {FAM_SHEAR, FAM_STRUCTURAL, FAM_BEND};
  const double *w = b->p.inv_m;
  for (int o = 0; o < FAM_COUNT; o++) {
    const int fam = order[o];
    const double frac = family_k(b, fam);
    if (frac == 0) continue;
    const double at = b->params.compliance / frac / hh;
    for (int q = b->model.fam_start[fam]; q < b->model.fam_start[fam + 1]; q++) {
      const spring *s = &b->model.springs[q];
      const int i = s->i, j = s->j;
      const double wsum = w[i] + w[j];
      if (wsum == 0) continue;
      vec3 d = v3_sub(x[j], x[i]);
      double l = v3_len(d);
      if (!(l > 1e-12)) continue;
      const double dl = (-(l - s->rest) - at * lambda[q]) / (wsum + at);
      lambda[q] += dl;
      const vec3 u = v3_scale(d, 1.0 / l);
      x[i] = v3_madd(x[i], u, -w[i] * dl);
      x[j] = v3_madd(x[j], u, w[j] * dl);
    }
  }
}

double springs_omega2_bound(const cloth_body *b) {
  /* Gershgorin on M^-1/2 K M^-1/2 at rest: each spring contributes a block k u u^T (norm k) to
   * both diagonal entries and -k u u^T to the two off-diagonal ones, so
   * lambda_max <= max_i sum_springs k (1/m_i + 1/sqrt(m_i m_j)). */
  double *r = core_calloc((size_t)b->p.n, sizeof(double));
  if (!r) return 0;
  for (int fam = 0; fam < FAM_COUNT; fam++) {
    const double k = family_k(b, fam);
    if (k == 0) continue;
    for (int q = b->model.fam_start[fam]; q < b->model.fam_start[fam + 1]; q++) {
      const int i = b->model.springs[q].i, j = b->model.springs[q].j;
      const double off = k / sqrt(b->p.m[i] * b->p.m[j]);
      r[i] += k / b->p.m[i] + off;
      r[j] += k / b->p.m[j] + off;
    }
  }
  double best = 0;
  for (int i = 0; i < b->p.n; i++)
    if (r[i] > best) best = r[i];
  core_free(r);
  return best;
}
