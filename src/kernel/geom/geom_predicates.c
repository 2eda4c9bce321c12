/* geom_predicates.c — orientation predicates whose signs are exact.
 *
 * Every predicate is the sign of a 3x3 determinant whose rows are differences of input points.
 * It is evaluated in up to three stages, each only when the previous one cannot decide:
 *   1. plain doubles with Shewchuk's static error bound (cheap; decides almost every call);
 *   2. double-double arithmetic (input differences are exact as double-doubles) with a bound
 *      proven below; decides inputs that are nearly but not exactly degenerate, which is what
 *      rounding produces for tilted flat cloth;
 *   3. an exact sum of triple products as a nonoverlapping expansion; reached in practice only
 *      by exactly degenerate inputs, whose differences are usually exact, so it stays short.
 * Exactness assumes no underflow of products of two differences and no overflow of products of
 * three (see geom.h). Products use fma(), which is exact whatever the -ffp-contract setting. */
#include <float.h>
#include <math.h>

#include "geom/geom.h"

/* Shewchuk 1997, "Adaptive precision floating-point arithmetic and fast robust geometric
 * predicates", orient3d: |error| <= (7 + 56 eps) eps * permanent, eps = 2^-53. */
#define PRED_EPS (DBL_EPSILON * 0.5)
#define O3D_BOUND_A ((7.0 + 56.0 * PRED_EPS) * PRED_EPS)
/* Stage 2 bound. Entries are exact double-doubles; a dd product below has absolute error
 * <= 8 eps^2 |x| |y| and a dd sum <= 3 eps^2 (|x| + |y|), so the determinant's error is at most
 * 25 eps^2 * permanent < 2^-101 * permanent. We use 2^-96: a 32x margin that also covers the
 * permanent itself being rounded. */
#define O3D_BOUND_DD 0x1p-96

typedef struct dd {
  double hi, lo;
} dd;

/* Knuth's TwoSum: hi + lo == a + b exactly, for any magnitudes. */
static inline dd two_sum(double a, double b) {
  double s = a + b;
  double bv = s - a;
  double av = s - bv;
  dd r = {s, (a - av) + (b - bv)};
  return r;
}

/* Exact product as hi + lo (fma gives the rounding error exactly). */
static inline dd two_prod(double a, double b) {
  double p = a * b;
  dd r = {p, fma(a, b, -p)};
  return r;
}

static inline dd dd_add(dd a, dd b) {
  dd s = two_sum(a.hi, b.hi);
  s.lo += a.lo + b.lo;
  return two_sum(s.hi, s.lo);
}

static inline dd dd_neg(dd a) {
  dd r = {-a.hi, -a.lo};
  return r;
}

static inline dd dd_mul(dd a, dd b) {
  dd p = two_prod(a.hi, b.hi);
  p.lo += a.hi * b.lo + a.lo * b.hi;
  return two_sum(p.hi, p.lo);
}

/* Shewchuk 1997 Grow-Expansion with zero elimination: adds b to the nonoverlapping expansion
 * e[0..n) (increasing magnitude) in place; returns the new length (<= n + 1). */
static int exp_grow(double *e, int n, double b) {
  double q = b;
  int m = 0;
  for (int i = 0; i < n; i++) {
    dd s = two_sum(q, e[i]);
    q = s.hi;
    if (s.lo != 0) e[m++] = s.lo;
  }
  if (q != 0 || m == 0) e[m++] = q;
  return m;
}

/* Adds sign * x * y * z exactly (four doubles) to the expansion. */
static int exp_add_triple(double *e, int n, double x, double y, double z, double sign) {
  if (x == 0 || y == 0 || z == 0) return n;
  dd xy = two_prod(x, y);
  dd h = two_prod(xy.hi, z);
  dd l = two_prod(xy.lo, z);
  n = exp_grow(e, n, sign * l.lo);
  n = exp_grow(e, n, sign * l.hi);
  n = exp_grow(e, n, sign * h.lo);
  return exp_grow(e, n, sign * h.hi);
}

static inline double comp(const double *v, int i) { return v[i]; }

/* Exact det [h1 + l1; h2 + l2; h3 + l3] where each row entry is an exact double-double
 * (hi[r][c] + lo[r][c]). Multilinear in the rows: 8 determinants of double rows, each six triple
 * products; rows whose lo part is zero are skipped. Returns the largest component of the exact
 * result, which has its sign and approximately its value. */
static double det3_exact(const double hi[3][3], const double lo[3][3]) {
  /* 8 row choices x 6 triple products x 4 doubles, plus one for the grow step. */
  double e[8 * 6 * 4 + 1];
  int n = 0;
  int lo_zero[3];
  for (int r = 0; r < 3; r++) lo_zero[r] = lo[r][0] == 0 && lo[r][1] == 0 && lo[r][2] == 0;
  for (int mask = 0; mask < 8; mask++) {
    const double *x[3];
    int skip = 0;
    for (int r = 0; r < 3; r++) {
      int use_lo = (mask >> r) & 1;
      if (use_lo && lo_zero[r]) skip = 1;
      x[r] = use_lo ? lo[r] : hi[r];
    }
    if (skip) continue;
    /* det [x0; x1; x2] = x0 . (x1 x x2) */
    n = exp_add_triple(e, n, comp(x[0], 0), comp(x[1], 1), comp(x[2], 2), 1.0);
    n = exp_add_triple(e, n, comp(x[0], 0), comp(x[1], 2), comp(x[2], 1), -1.0);
    n = exp_add_triple(e, n, comp(x[0], 1), comp(x[1], 2), comp(x[2], 0), 1.0);
    n = exp_add_triple(e, n, comp(x[0], 1), comp(x[1], 0), comp(x[2], 2), -1.0);
    n = exp_add_triple(e, n, comp(x[0], 2), comp(x[1], 0), comp(x[2], 1), 1.0);
    n = exp_add_triple(e, n, comp(x[0], 2), comp(x[1], 1), comp(x[2], 0), -1.0);
  }
  return n > 0 ? e[n - 1] : 0.0;
}

double geom_det3_diff(vec3 u1, vec3 v1, vec3 u2, vec3 v2, vec3 u3, vec3 v3) {
  /* Stage 1. The expansion along the third column is the one Shewchuk's bound is proven for. */
  double r1x = u1.x - v1.x, r1y = u1.y - v1.y, r1z = u1.z - v1.z;
  double r2x = u2.x - v2.x, r2y = u2.y - v2.y, r2z = u2.z - v2.z;
  double r3x = u3.x - v3.x, r3y = u3.y - v3.y, r3z = u3.z - v3.z;
  double m2x3y = r2x * r3y, m3x2y = r3x * r2y;
  double m3x1y = r3x * r1y, m1x3y = r1x * r3y;
  double m1x2y = r1x * r2y, m2x1y = r2x * r1y;
  double det = r1z * (m2x3y - m3x2y) + r2z * (m3x1y - m1x3y) + r3z * (m1x2y - m2x1y);
  double perm = (fabs(m2x3y) + fabs(m3x2y)) * fabs(r1z) + (fabs(m3x1y) + fabs(m1x3y)) * fabs(r2z) +
                (fabs(m1x2y) + fabs(m2x1y)) * fabs(r3z);
  if (!(perm <= DBL_MAX)) return NAN; /* non-finite input or overflow */
  /* Every monomial has a factor that is an exactly-zero difference (a zero column, e.g. points
   * on an axis-aligned plane): the determinant is exactly zero. */
  if (perm == 0) return 0.0;
  double bound = O3D_BOUND_A * perm;
  if (det > bound || -det > bound) return det;

  /* Stage 2: the differences are exact as double-doubles. */
  double hi[3][3], lo[3][3];
  const vec3 *u[3] = {&u1, &u2, &u3}, *v[3] = {&v1, &v2, &v3};
  dd q[3][3];
  for (int r = 0; r < 3; r++) {
    q[r][0] = two_sum(u[r]->x, -v[r]->x);
    q[r][1] = two_sum(u[r]->y, -v[r]->y);
    q[r][2] = two_sum(u[r]->z, -v[r]->z);
    for (int c = 0; c < 3; c++) {
      hi[r][c] = q[r][c].hi;
      lo[r][c] = q[r][c].lo;
    }
  }
  dd c1 = dd_add(dd_mul(q[1][0], q[2][1]), dd_neg(dd_mul(q[2][0], q[1][1])));
  dd c2 = dd_add(dd_mul(q[2][0], q[0][1]), dd_neg(dd_mul(q[0][0], q[2][1])));
  dd c3 = dd_add(dd_mul(q[0][0], q[1][1]), dd_neg(dd_mul(q[1][0], q[0][1])));
  dd ddet = dd_add(dd_add(dd_mul(q[0][2], c1), dd_mul(q[1][2], c2)), dd_mul(q[2][2], c3));
  double bound2 = O3D_BOUND_DD * perm;
  if (ddet.hi > bound2 || -ddet.hi > bound2) return ddet.hi;

  /* Stage 3: exact. */
  return det3_exact((const double(*)[3])hi, (const double(*)[3])lo);
}

double geom_orient3d(vec3 a, vec3 b, vec3 c, vec3 d) { return geom_det3_diff(b, a, c, a, d, a); }

double geom_orient2d(vec3 a, vec3 b, vec3 c) {
  /* The 2x2 determinant as a 3x3 one with a unit third row; the stage-1 bound still holds. */
  vec3 zero = {0, 0, 0}, ez = {0, 0, 1};
  return geom_det3_diff(v3(b.x, b.y, 0), v3(a.x, a.y, 0), v3(c.x, c.y, 0), v3(a.x, a.y, 0), ez, zero);
}
