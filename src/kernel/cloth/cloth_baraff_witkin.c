/* cloth_baraff_witkin.c — continuum cloth of Baraff & Witkin 1998 ("Large steps in cloth
 * simulation"): per-triangle stretch and shear conditions on the deformation map w(u, v), per-edge
 * bending on the dihedral angle, condition-based damping: forces and energy (the implicit
 * integrator's Jacobians are in cloth_implicit.c).
 *
 * Scaling: each condition is weighted so that the energy is proportional to rest area (stretch and
 * shear: E = k a C^2 / 2). Bending: E = D w (theta - theta0)^2 / 2 per hinge with the weight
 * w = |e|^2 / (A0 + A1) — the discrete-shell form (Grinspun et al. 2003) scaled so that `bend` is
 * the plate's bending rigidity D in N m: on isotropic meshes a sheet rolled onto a cylinder of
 * radius R stores D A / (2 R^2) (tests/lua/bending_test.lua measures it). Grids from
 * loom_mesh_grid need two corrections. A grid line's edge has a straight hinge (grid_hinge,
 * below: with the mesh's, a row can bend where no hinge measures it). And the four corners of a
 * dx x dy cell span a hinge across its diagonal; on four corners of a rectangle the only non-affine
 * mode is the twist z = b x y, so diagonal hinges measure z_xy only while the straight hinges across
 * grid lines measure z_xx and z_yy (each ~ hx (hy z_yy)^2 / hy per cell: D/2 z_yy^2 per area). The
 * plate energy of isometric bending is D/2 (z_xx^2 + z_yy^2 + 2 z_xy^2). Under the twist the two
 * triangles' planes are z = b dx y and z = b dy x: their slopes differ by b L across the diagonal
 * of length L, L^2 = dx^2 + dy^2, so the plain weight L^2 / (dx dy) stores D/2 b^2 L^4 / (dx dy) per
 * cell against the plate's D b^2 dx dy: 1/f times too much, f = 2 dx^2 dy^2 / L^4. The diagonal's
 * weight is scaled by f (diagonal_factor: 1/2 on squares, where the plain weight gave 1.5x the energy when
 * bent at 45 degrees; 0.32 at aspect 2, 0.18 at 3), and then every direction stores D A / (2 R^2).
 * Meshes of rectangles each cut by a diagonal but not from loom_mesh_grid (from_arrays, a grid read
 * from OBJ or STL) are recognised as lattices in bw_build and get both corrections by geometry and
 * connectivity (rectangle_diagonal, straighten). Other meshes keep the plain weight, and one
 * close to a grid without being one (a lattice with its vertices jittered) still depends on the
 * direction: tests/lua/bending_test.lua measures how much. Stiffnesses
 * are material constants (N/m, N m) that do not change with mesh resolution. BW98 weighted by a
 * (energy ~ a^2); the 001 seed by a^(3/4). */
#include <string.h>

#include "cloth/cloth.h"

/* Unit vector in the triangle's plane used as the warp (u) direction: the world x axis projected
 * onto the plane, or y when the plane is nearly perpendicular to x. Flat grids in any plane thus
 * get (u, v) aligned with their grid lines. */
static vec3 warp_direction(vec3 n) {
  vec3 ref = fabs(n.x) < 0.9 ? v3(1, 0, 0) : v3(0, 1, 0);
  return v3_normalize(v3_madd(ref, n, -v3_dot(ref, n)));
}

/* The weight factor of the hinge across a diagonal of a dx x dy rectangle (squared sides given),
 * so that it stores the plate's twist energy D z_xy^2 per unit area (see the file comment):
 * 2 dx^2 dy^2 / (dx^2 + dy^2)^2 — 1/2 on squares, 0.32 at aspect 2, 0.18 at aspect 3. */
static double diagonal_factor(double dx2, double dy2) {
  const double s = dx2 + dy2;
  if (fabs(dx2 - dy2) <= 1e-9 * s) return 0.5;
  return 2 * dx2 * dy2 / (s * s);
}

/* A hinge of a grid from loom_mesh_grid (see the file comment) into out, and its weight factor.
 * On a grid line's edge the mesh's hinge takes its opposite vertices from the row (column) of one
 * end, and with alternating diagonals that row alternates from column to column: a row could then
 * bend, at every other column, where no hinge measured it — a soft mode a cantilever strip found,
 * sagging 1.48x beam theory. The hinge is made straight instead: both opposite vertices in the row
 * (column) of the edge's end nearer the grid's border, so every row but the middle one is measured
 * at every column (its neighbours hold that one: tests/lua/bending_test.lua). A diagonal's hinge
 * stays the mesh's, its weight scaled by diagonal_factor. */
static double grid_hinge(const loom_mesh *m, const vec3 *rest, const int32_t v[4], int32_t out[4]) {
  memcpy(out, v, 4 * sizeof *out);
  const int nx = m->grid_nx, ny = m->grid_ny;
  if (nx <= 1 || ny <= 1) return 1.0;
  const int c0 = v[0] % nx, r0 = v[0] / nx, c1 = v[1] % nx, r1 = v[1] / nx;
  if (c0 != c1 && r0 != r1) { /* a cell's diagonal */
    const double dx = v3_dist(rest[0], rest[1]), dy = v3_dist(rest[0], rest[nx]);
    return fabs(dx - dy) <= 1e-9 * (dx + dy) ? 0.5 : diagonal_factor(dx * dx, dy * dy);
  }
  const int c2 = v[2] % nx, r2 = v[2] / nx, c3 = v[3] % nx, r3 = v[3] / nx;
  if (c0 == c1) { /* along the second axis: the opposite vertices' columns, in one row */
    const int lo = r0 < r1 ? r0 : r1, row = lo < (ny - 1) / 2 ? lo : lo + 1;
    out[2] = row * nx + c2, out[3] = row * nx + c3;
  } else { /* along the first axis: the opposite vertices' rows, in one column */
    const int lo = c0 < c1 ? c0 : c1, col = lo < (nx - 1) / 2 ? lo : lo + 1;
    out[2] = r2 * nx + col, out[3] = r3 * nx + col;
  }
  return 1.0;
}

/* On a mesh not made by loom_mesh_grid: when the hinge's four vertices form a rectangle with its
 * edge as the diagonal (a half cell each side), the diagonal_factor of that rectangle, else 0. */
static double rectangle_diagonal(const vec3 *rest, const int32_t v[4]) {
  const vec3 x0 = rest[v[0]], x1 = rest[v[1]], a = rest[v[2]], c = rest[v[3]];
  const double e2 = v3_dist2(x0, x1);
  const vec3 mid = v3_sub(v3_add(a, c), v3_add(x0, x1)); /* zero on a parallelogram */
  const vec3 s0 = v3_sub(a, x0), s1 = v3_sub(a, x1);
  if (!(e2 > 0) || v3_len2(mid) > 1e-10 * e2 || fabs(v3_dot(s0, s1)) > 1e-5 * e2) return 0;
  return diagonal_factor(v3_len2(s0), v3_len2(s1));
}

/* The vertex of the triangle across edge (p, q) from the one holding r, or -1 (m->edge is sorted). */
static int32_t across(const loom_mesh *m, int32_t p, int32_t q, int32_t r) {
  const int32_t lo = p < q ? p : q, hi = p < q ? q : p;
  int i = 0, j = m->ne;
  while (i < j) {
    const int k = i + (j - i) / 2, *e = &m->edge[2 * k];
    if (e[0] < lo || (e[0] == lo && e[1] < hi)) i = k + 1;
    else j = k;
  }
  if (i == m->ne || m->edge[2 * i] != lo || m->edge[2 * i + 1] != hi) return -1;
  for (int s = 0; s < 2; s++) {
    const int t = m->edge_tri[2 * i + s];
    if (t < 0) continue;
    const int32_t *tv = &m->tri[3 * t];
    if (tv[0] == r || tv[1] == r || tv[2] == r) continue;
    for (int k = 0; k < 3; k++)
      if (tv[k] != lo && tv[k] != hi) return tv[k];
  }
  return -1;
}

/* A grid-line hinge of a lattice (see bw_build) made straight as grid_hinge makes a grid's: both
 * opposite vertices square to the edge's end farther from the mesh's centroid along the edge (on a
 * rectangular lattice, the end nearer the border; on a tie, v[0]), each moved there, when it is not, to the fourth
 * corner of its rectangle. The mesh's own hinge takes them from whichever ends its cells'
 * diagonals give: at different ends (a "Z", as where every cell has the same diagonal) it measures
 * z_yy + z_xy, twist with curvature, and at ends alternating along a row it leaves the soft mode
 * grid_hinge describes. */
static void straighten(const loom_mesh *m, const vec3 *rest, vec3 centroid, int32_t v[4]) {
  const vec3 x0 = rest[v[0]], x1 = rest[v[1]], e = v3_sub(x1, x0);
  const double e2 = v3_len2(e);
  if (!(e2 > 0)) return;
  /* the end farther from the centroid; on a tie (a middle line, or a ring of a closed tube) the first */
  const int end = v3_dot(v3_sub(v3_scale(v3_add(x0, x1), 0.5), centroid), e) > 1e-9 * e2;
  for (int k = 2; k < 4; k++) {
    /* the end this opposite vertex is square to: (p - x0) . e is 0 there, e2 at x1 */
    const int at = fabs(v3_dot(v3_sub(rest[v[k]], x0), e)) < 0.5 * e2 ? 0 : 1;
    if (at == end) continue;
    const int32_t w = across(m, v[end], v[k], v[at]);
    if (w < 0) continue;
    const vec3 want = v3_add(rest[v[end]], v3_sub(rest[v[k]], rest[v[at]]));
    if (v3_dist2(rest[w], want) <= 1e-10 * e2) v[k] = w;
  }
}

int bw_build(cloth_body *b, const loom_mesh *m) {
  b->model.bw = core_alloc((size_t)m->nt, sizeof(bw_tri));
  b->model.hinges = core_alloc((size_t)(m->nh ? m->nh : 1), sizeof(bw_hinge));
  if (!b->model.bw || !b->model.hinges) return -1;
  int c = 0;
  for (int t = 0; t < m->nt; t++) {
    const int32_t *tv = &m->tri[3 * t];
    vec3 r0 = b->p.rest[tv[0]], r1 = b->p.rest[tv[1]], r2 = b->p.rest[tv[2]];
    if (cloth_tri_flat(r0, r1, r2)) continue; /* degenerate: no deformation map */
    vec3 nrm = v3_cross(v3_sub(r1, r0), v3_sub(r2, r0));
    double a2 = v3_len(nrm);
    vec3 n = v3_scale(nrm, 1.0 / a2);
    vec3 uh = warp_direction(n), vh = v3_cross(n, uh);
    /* BW98 §4.2: w_u = (dx1 dv2 - dx2 dv1)/D, w_v = (-dx1 du2 + dx2 du1)/D */
    double du1 = v3_dot(v3_sub(r1, r0), uh), dv1 = v3_dot(v3_sub(r1, r0), vh);
    double du2 = v3_dot(v3_sub(r2, r0), uh), dv2 = v3_dot(v3_sub(r2, r0), vh);
    double D = du1 * dv2 - du2 * dv1;
    bw_tri *q = &b->model.bw[c++];
    memcpy(q->v, tv, sizeof q->v);
    q->area = 0.5 * fabs(D);
    q->wa = q->area;
    q->du[1] = dv2 / D;
    q->du[2] = -dv1 / D;
    q->du[0] = -(q->du[1] + q->du[2]);
    q->dv[1] = -du2 / D;
    q->dv[2] = du1 / D;
    q->dv[0] = -(q->dv[1] + q->dv[2]);
  }
  b->model.nbw = c;
  /* A mesh of rectangles each split by a diagonal, though not from loom_mesh_grid (from_arrays, an
   * OBJ or STL grid): every triangle is half of one, so its diagonals get the grid's factor. */
  int lattice = 0;
  if (m->grid_nx <= 1 || m->grid_ny <= 1) {
    int nrect = 0;
    for (int h = 0; h < m->nh; h++) nrect += rectangle_diagonal(b->p.rest, &m->hinge[4 * h]) > 0;
    lattice = nrect > 0 && 2 * nrect == b->model.nbw;
  }
  vec3 centroid = v3(0, 0, 0);
  if (lattice) {
    for (int i = 0; i < m->nv; i++) centroid = v3_add(centroid, b->p.rest[i]);
    centroid = v3_scale(centroid, 1.0 / m->nv);
  }
  c = 0;
  for (int h = 0; h < m->nh; h++) {
    bw_hinge *q = &b->model.hinges[c];
    double f = grid_hinge(m, b->p.rest, &m->hinge[4 * h], q->v);
    if (lattice) {
      const double fr = rectangle_diagonal(b->p.rest, q->v);
      if (fr > 0) f = fr;
      else straighten(m, b->p.rest, centroid, q->v);
    }
    vec3 e = v3_sub(b->p.rest[q->v[1]], b->p.rest[q->v[0]]);
    double a0 = 0.5 * v3_len(v3_cross(e, v3_sub(b->p.rest[q->v[2]], b->p.rest[q->v[0]])));
    double a1 = 0.5 * v3_len(v3_cross(v3_sub(b->p.rest[q->v[3]], b->p.rest[q->v[0]]), e));
    if (!(a0 + a1 > 0) || !(a0 > 0) || !(a1 > 0)) continue;
    q->weight = v3_len2(e) / (a0 + a1) * f;
    q->rest = bw_hinge_angle(b->p.rest, q->v, NULL);
    c++;
  }
  b->model.nh = c;
  return 0;
}

double bw_hinge_angle(const vec3 *x, const int32_t v[4], vec3 grad[4]) {
  vec3 x0 = x[v[0]], x1 = x[v[1]], xa = x[v[2]], xb = x[v[3]];
  vec3 e = v3_sub(x1, x0);
  double le2 = v3_len2(e);
  vec3 nA = v3_cross(e, v3_sub(xa, x0));
  vec3 nB = v3_cross(v3_sub(xb, x0), e);
  double lA2 = v3_len2(nA), lB2 = v3_len2(nB);
  if (!(le2 > 1e-30) || !(lA2 > 1e-30 * le2 * le2) || !(lB2 > 1e-30 * le2 * le2)) {
    if (grad) memset(grad, 0, 4 * sizeof(vec3));
    return 0;
  }
  double le = sqrt(le2);
  vec3 eh = v3_scale(e, 1.0 / le);
  double lA = sqrt(lA2), lB = sqrt(lB2);
  vec3 nAh = v3_scale(nA, 1.0 / lA), nBh = v3_scale(nB, 1.0 / lB);
  /* 001: theta = atan2(sin, cos) between the face normals, sin from (nA x nB) . e */
  double s = v3_dot(v3_cross(nAh, nBh), eh);
  double c = v3_dot(nAh, nBh);
  double theta = atan2(s, c);
  if (grad) {
    /* Bridson, Marino, Fedkiw 2003 (bending), gradient of the dihedral angle; our angle has the
     * opposite sign to their u vectors. */
    vec3 gA = v3_scale(nA, 1.0 / lA2), gB = v3_scale(nB, 1.0 / lB2);
    grad[2] = v3_scale(gA, -le);
    grad[3] = v3_scale(gB, -le);
    double pa1 = v3_dot(v3_sub(xa, x1), eh), pb1 = v3_dot(v3_sub(xb, x1), eh);
    double pa0 = v3_dot(v3_sub(xa, x0), eh), pb0 = v3_dot(v3_sub(xb, x0), eh);
    grad[0] = v3_neg(v3_add(v3_scale(gA, pa1), v3_scale(gB, pb1)));
    grad[1] = v3_add(v3_scale(gA, pa0), v3_scale(gB, pb0));
  }
  return theta;
}

void bw_tri_forces(const cloth_body *b, const vec3 *restrict x, const vec3 *restrict v, vec3 *restrict F) {
  const double ks = b->params.stretch, ksh = b->params.shear;
  const double ds = b->params.damping * ks, dsh = b->params.damping * ksh;
  for (int t = 0; t < b->model.nbw; t++) {
    const bw_tri *q = &b->model.bw[t];
    const int i0 = q->v[0], i1 = q->v[1], i2 = q->v[2];
    vec3 wu = v3_add(v3_add(v3_scale(x[i0], q->du[0]), v3_scale(x[i1], q->du[1])), v3_scale(x[i2], q->du[2]));
    vec3 wv = v3_add(v3_add(v3_scale(x[i0], q->dv[0]), v3_scale(x[i1], q->dv[1])), v3_scale(x[i2], q->dv[2]));
    vec3 vu = v3_add(v3_add(v3_scale(v[i0], q->du[0]), v3_scale(v[i1], q->du[1])), v3_scale(v[i2], q->du[2]));
    vec3 vv = v3_add(v3_add(v3_scale(v[i0], q->dv[0]), v3_scale(v[i1], q->dv[1])), v3_scale(v[i2], q->dv[2]));
    vec3 gu = v3(0, 0, 0), gv = v3(0, 0, 0); /* force = sum_k (du_k gu + dv_k gv) */
    if (ks > 0) {
      /* Stretch: C = a^p (|w_u| - 1, |w_v| - 1), p = area_exponent (BW98: 1/2, so the energy is per
       * unit area; 001's code 3/4); f = -(k C + kd dC/dt) dC/dx (BW98 §4.1–4.3); wa = a^(2p). */
      double lu = v3_len(wu), lv = v3_len(wv);
      if (lu > 1e-12) {
        vec3 uh = v3_scale(wu, 1.0 / lu);
        double s = -q->wa * (ks * (lu - 1.0) + ds * v3_dot(uh, vu));
        gu = v3_madd(gu, uh, s);
      }
      if (lv > 1e-12) {
        vec3 vh = v3_scale(wv, 1.0 / lv);
        double s = -q->wa * (ks * (lv - 1.0) + ds * v3_dot(vh, vv));
        gv = v3_madd(gv, vh, s);
      }
    }
    if (ksh > 0) {
      /* Shear: C = a^p w_u . w_v, dC/dx_k = a^p (du_k w_v + dv_k w_u). */
      double C = v3_dot(wu, wv);
      double Cdot = v3_dot(wv, vu) + v3_dot(wu, vv);
      double s = -q->wa * (ksh * C + dsh * Cdot);
      gu = v3_madd(gu, wv, s);
      gv = v3_madd(gv, wu, s);
    }
    for (int k = 0; k < 3; k++) {
      vec3 fk = v3_add(v3_scale(gu, q->du[k]), v3_scale(gv, q->dv[k]));
      F[q->v[k]] = v3_add(F[q->v[k]], fk);
    }
  }
}

void bw_set_area_exponent(cloth_body *b) {
  const double e = 2 * b->params.area_exponent;
  for (int t = 0; t < b->model.nbw; t++) {
    bw_tri *q = &b->model.bw[t];
    q->wa = e == 1 ? q->area : pow(q->area, e);
  }
}

void bw_hinge_forces(const cloth_body *b, const vec3 *restrict x, const vec3 *restrict v, vec3 *restrict F) {
  const double kb = b->params.bend, db = b->params.damping * kb;
  if (kb > 0) {
    for (int h = 0; h < b->model.nh; h++) {
      const bw_hinge *q = &b->model.hinges[h];
      vec3 g[4];
      double theta = bw_hinge_angle(x, q->v, g);
      double Cdot = 0;
      for (int k = 0; k < 4; k++) Cdot += v3_dot(g[k], v[q->v[k]]);
      double s = -q->weight * (kb * (theta - q->rest) + db * Cdot);
      for (int k = 0; k < 4; k++) F[q->v[k]] = v3_madd(F[q->v[k]], g[k], s);
    }
  }
}

void bw_forces(const cloth_body *b, const vec3 *restrict x, const vec3 *restrict v, vec3 *restrict F) {
  bw_tri_forces(b, x, v, F);
  bw_hinge_forces(b, x, v, F);
}

double bw_energy(const cloth_body *b, const vec3 *x) {
  double e = 0;
  for (int t = 0; t < b->model.nbw; t++) {
    const bw_tri *q = &b->model.bw[t];
    vec3 wu = v3(0, 0, 0), wv = v3(0, 0, 0);
    for (int k = 0; k < 3; k++) {
      wu = v3_madd(wu, x[q->v[k]], q->du[k]);
      wv = v3_madd(wv, x[q->v[k]], q->dv[k]);
    }
    double cu = v3_len(wu) - 1, cv = v3_len(wv) - 1, cs = v3_dot(wu, wv);
    e += 0.5 * q->wa * (b->params.stretch * (cu * cu + cv * cv) + b->params.shear * cs * cs);
  }
  for (int h = 0; h < b->model.nh; h++) {
    const bw_hinge *q = &b->model.hinges[h];
    double d = bw_hinge_angle(x, q->v, NULL) - q->rest;
    e += 0.5 * b->params.bend * q->weight * d * d;
  }
  return e;
}

double bw_omega2_bound(const cloth_body *b) {
  /* Gershgorin on M^-1/2 K M^-1/2 with the Gauss–Newton blocks of each condition at rest:
   * |K_ij| <= a (ks (|du_i du_j| + |dv_i dv_j|) + ksh g_i g_j), g = sqrt(du^2 + dv^2); bending
   * kb w |grad_i| |grad_j|. */
  double *r = core_calloc((size_t)b->p.n, sizeof(double));
  if (!r) return 0;
  const double *m = b->p.m;
  for (int t = 0; t < b->model.nbw; t++) {
    const bw_tri *q = &b->model.bw[t];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double gi = sqrt(q->du[i] * q->du[i] + q->dv[i] * q->dv[i]);
        double gj = sqrt(q->du[j] * q->du[j] + q->dv[j] * q->dv[j]);
        double kij = q->wa * (b->params.stretch * (fabs(q->du[i] * q->du[j]) + fabs(q->dv[i] * q->dv[j])) +
                                b->params.shear * gi * gj);
        r[q->v[i]] += kij / sqrt(m[q->v[i]] * m[q->v[j]]);
      }
  }
  if (b->params.bend > 0) {
    for (int h = 0; h < b->model.nh; h++) {
      const bw_hinge *q = &b->model.hinges[h];
      vec3 g[4];
      bw_hinge_angle(b->p.rest, q->v, g);
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
          r[q->v[i]] += b->params.bend * q->weight * v3_len(g[i]) * v3_len(g[j]) / sqrt(m[q->v[i]] * m[q->v[j]]);
    }
  }
  double best = 0;
  for (int i = 0; i < b->p.n; i++)
    if (r[i] > best) best = r[i];
  core_free(r);
  return best;
}
