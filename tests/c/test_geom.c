/* test_geom.c — primitive geometric queries: exact predicates, closest points, segment/ray/
 * triangle intersections, triangle-triangle, shape SDFs, support points, triangle-shape overlap.
 * References are independent: dense sampling with Lipschitz bounds, brute-force formulas, exact
 * integer arithmetic (__int128) and separating-axis tests on integer lattices. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "test_rng.h"
#include "geom/geom.h"

/* ---- deterministic random numbers (splitmix64) --------------------------------------------- */

/* Random dyadic number k * 2^-bits with |k| < 2^bits * lim: sums of a few stay exact. */
static double rng_dyadic(rng *r, double lim, int bits) {
  double k = floor(rng_range(r, -lim, lim) * ldexp(1.0, bits));
  return ldexp(k, -bits);
}
static vec3 rng_dyadic_vec(rng *r, double lim, int bits) {
  double x = rng_dyadic(r, lim, bits), y = rng_dyadic(r, lim, bits);
  return v3(x, y, rng_dyadic(r, lim, bits));
}

static int sgn(double x) { return (x > 0) - (x < 0); }

/* ---- exact predicates --------------------------------------------------------------------- */

/* Kettner et al. 2008 "Classroom examples of robustness problems": orient2d of
 * (0.5 + i u, 0.5 + j u), (12, 12), (24, 24), u = 2^-53, is wrong in plain doubles for many
 * (i, j). Scaled by 2^53 every coordinate is an integer, so __int128 gives the exact sign. */
TEST(orient2d_exact_on_kettner_grid) {
  long long wrong_naive = 0;
  const __int128 S = (__int128)1 << 53;
  for (int i = 0; i < 256; i++) {
    for (int j = 0; j < 256; j++) {
      vec3 p = v3(0.5 + ldexp(i, -53), 0.5 + ldexp(j, -53), 0), q = v3(12, 12, 0), r = v3(24, 24, 0);
      __int128 px = S / 2 + i, py = S / 2 + j, qx = 12 * S, qy = 12 * S, rx = 24 * S, ry = 24 * S;
      __int128 ex = (qx - px) * (ry - py) - (qy - py) * (rx - px);
      int want = (ex > 0) - (ex < 0);
      CHECK_EQ_INT(sgn(geom_orient2d(p, q, r)), want);
      double naive = (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
      if (sgn(naive) != want) wrong_naive++;
    }
  }
  /* The grid is only a hard test if plain doubles get it wrong somewhere. */
  CHECK(wrong_naive > 0);
}

static __int128 det3_i128(const long long a[3], const long long b[3], const long long c[3], const long long d[3]) {
  __int128 r[3][3];
  for (int k = 0; k < 3; k++) {
    r[0][k] = (__int128)b[k] - a[k];
    r[1][k] = (__int128)c[k] - a[k];
    r[2][k] = (__int128)d[k] - a[k];
  }
  return r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
         r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
}

/* Nearly and exactly coplanar integer configurations (coordinates < 2^25), placed at a dyadic
 * offset and scaled by a power of two so that the doubles are exact but not small integers:
 * the sign must match __int128 arithmetic, and be antisymmetric / invariant under permutations. */
TEST(orient3d_exact_and_permutation_consistent) {
  rng r = {11};
  int zeros = 0, nonzeros = 0;
  for (int it = 0; it < 20000; it++) {
    long long P[4][3];
    for (int k = 0; k < 3; k++) {
      P[0][k] = (long long)(rng_next(&r) % (1u << 24));
      P[1][k] = (long long)(rng_next(&r) % (1u << 24));
      P[2][k] = (long long)(rng_next(&r) % (1u << 24));
    }
    /* d = a + i (b - a) + j (c - a) / 2^m + small perturbation: coplanar up to the perturbation */
    long long i = rng_int(&r, 5) - 2, j = rng_int(&r, 5) - 2;
    for (int k = 0; k < 3; k++) P[3][k] = P[0][k] + i * (P[1][k] - P[0][k]) + j * (P[2][k] - P[0][k]);
    if (it % 3 == 1) P[3][rng_int(&r, 3)] += rng_int(&r, 3) - 1;
    __int128 ex = det3_i128(P[0], P[1], P[2], P[3]);
    int want = (ex > 0) - (ex < 0);
    want ? nonzeros++ : zeros++;
    double scale = ldexp(1.0, -rng_int(&r, 40));
    vec3 off = v3(ldexp(12345.0, 0) + 0.375, -2048.0 + 0x1p-12, 0x1p-20);
    vec3 v[4];
    for (int p = 0; p < 4; p++)
      v[p] = v3(P[p][0] * scale + off.x * scale * 0x1p20, P[p][1] * scale + off.y * scale * 0x1p20,
                P[p][2] * scale + off.z * scale * 0x1p20);
    CHECK_EQ_INT(sgn(geom_orient3d(v[0], v[1], v[2], v[3])), want);
    CHECK_EQ_INT(sgn(geom_orient3d(v[1], v[0], v[2], v[3])), -want);
    CHECK_EQ_INT(sgn(geom_orient3d(v[1], v[2], v[0], v[3])), want);
    CHECK_EQ_INT(sgn(geom_orient3d(v[0], v[1], v[3], v[2])), -want);
    CHECK_EQ_INT(sgn(geom_orient3d(v[3], v[0], v[1], v[2])), -want);
  }
  CHECK(zeros > 1000 && nonzeros > 1000);
  /* 50-bit coordinates on the plane x + y + z = 0 (z = -(x + y) is exact on a common grid):
   * the triple products need ~150 bits, so double-double evaluation leaves residuals and only
   * the exact stage can return 0. Also full-precision points on x + y = 0 (inexact differences). */
  for (int it = 0; it < 5000; it++) {
    vec3 v[4];
    for (int p = 0; p < 4; p++) {
      double x = ldexp((double)(int64_t)(rng_next(&r) >> 14) - 0x1p49, -30);
      double y = ldexp((double)(int64_t)(rng_next(&r) >> 14) - 0x1p49, -30);
      double w = rng_range(&r, -1, 1) * 1e3, z = rng_range(&r, -1, 1) * 1e-3;
      v[p] = it % 2 ? v3(x, y, -(x + y)) : v3(w, -w, z);
    }
    CHECK_EQ_INT(sgn(geom_orient3d(v[0], v[1], v[2], v[3])), 0);
    CHECK_EQ_INT(sgn(geom_orient3d(v[2], v[0], v[3], v[1])), 0);
    /* one ulp off the plane: the sign follows the side (normal of v0 v1 v2 decides which) */
    vec3 off = v[3];
    off.z = nextafter(off.z, INFINITY);
    double base = geom_orient3d(v[0], v[1], v[2], v3(off.x, off.y, off.z + 1.0));
    CHECK_EQ_INT(sgn(geom_orient3d(v[0], v[1], v[2], off)), sgn(base));
    /* collinear in 2D: points on y = -x */
    CHECK_EQ_INT(sgn(geom_orient2d(v3(v[0].x, -v[0].x, 0), v3(v[1].x, -v[1].x, 0), v3(v[2].x, -v[2].x, 0))), 0);
  }
}

TEST(orient_values_and_nonfinite) {
  vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  /* 6 x volume of the unit corner tetrahedron, positive on the normal (+z) side */
  CHECK_NEAR(geom_orient3d(a, b, c, v3(0, 0, 1)), 1.0, 1e-15);
  CHECK_NEAR(geom_orient3d(a, b, c, v3(5, -3, -2)), -2.0, 1e-15);
  CHECK_NEAR(geom_orient2d(a, b, c), 1.0, 1e-15);
  CHECK_EQ_INT(sgn(geom_orient2d(a, c, b)), -1);
  CHECK(isnan(geom_orient3d(a, b, c, v3(NAN, 0, 0))));
  CHECK(isnan(geom_orient3d(a, b, v3(INFINITY, 0, 0), v3(0, 0, 1))));
}

/* ---- closest point on a triangle ------------------------------------------------------------ */

static vec3 ref_closest_on_segment(vec3 p, vec3 a, vec3 b) {
  vec3 d = v3_sub(b, a);
  double l2 = v3_dot(d, d);
  if (l2 == 0) return a;
  double t = v3_dot(v3_sub(p, a), d) / l2;
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  return v3_add(a, v3_scale(d, t));
}

/* Independent formula: the nearest point is the plane projection when it falls inside,
 * otherwise on an edge. */
static double ref_tri_dist2(vec3 p, vec3 a, vec3 b, vec3 c) {
  double best = v3_dist2(p, ref_closest_on_segment(p, a, b));
  best = fmin(best, v3_dist2(p, ref_closest_on_segment(p, b, c)));
  best = fmin(best, v3_dist2(p, ref_closest_on_segment(p, c, a)));
  vec3 e0 = v3_sub(b, a), e1 = v3_sub(c, a), w = v3_sub(p, a);
  double d00 = v3_dot(e0, e0), d01 = v3_dot(e0, e1), d11 = v3_dot(e1, e1);
  double d20 = v3_dot(w, e0), d21 = v3_dot(w, e1), den = d00 * d11 - d01 * d01;
  if (den > 1e-12 * d00 * d11) {
    double v = (d11 * d20 - d01 * d21) / den, u = (d00 * d21 - d01 * d20) / den;
    if (v >= 0 && u >= 0 && v + u <= 1)
      best = fmin(best, v3_dist2(p, v3_add(a, v3_add(v3_scale(e0, v), v3_scale(e1, u)))));
  }
  return best;
}

/* Minimum distance over a barycentric grid of (N+1)(N+2)/2 samples; every triangle point is
 * within maxedge / N of a sample. */
static double sampled_tri_dist(vec3 p, vec3 a, vec3 b, vec3 c, int N) {
  double best = INFINITY;
  for (int i = 0; i <= N; i++)
    for (int j = 0; i + j <= N; j++) {
      double u = (double)i / N, v = (double)j / N;
      vec3 q = v3_add(v3_scale(a, 1 - u - v), v3_add(v3_scale(b, u), v3_scale(c, v)));
      best = fmin(best, v3_dist2(p, q));
    }
  return sqrt(best);
}

static double max_edge(vec3 a, vec3 b, vec3 c) { return fmax(v3_dist(a, b), fmax(v3_dist(b, c), v3_dist(c, a))); }

/* Triangle families: generic, needle (collinear), two coincident corners, a point, slivers. */
static void random_triangle(rng *r, int kind, vec3 *a, vec3 *b, vec3 *c) {
  *a = rng_vec(r, -1, 1);
  *b = rng_vec(r, -1, 1);
  *c = rng_vec(r, -1, 1);
  switch (kind) {
  case 3:
    *c = v3_lerp(*a, *b, rng_range(r, -0.5, 1.5));
    break;
  case 4:
    *b = *a;
    break;
  case 5:
    *b = *a;
    *c = *a;
    break;
  case 6: {
    vec3 off = v3_scale(rng_vec(r, -1, 1), pow(10.0, -rng_range(r, 4, 12)));
    *c = v3_add(v3_lerp(*a, *b, rng_range(r, -0.5, 1.5)), off);
    break;
  }
  default:
    break;
  }
}

TEST(closest_on_triangle_matches_sampling_and_formula) {
  rng r = {1};
  const int N = 48;
  for (int it = 0; it < 3500; it++) {
    vec3 a, b, c;
    random_triangle(&r, it % 7, &a, &b, &c);
    vec3 p = rng_vec(&r, -2, 2);
    if (it % 5 == 0) p = v3_lerp(a, c, 0.3); /* points on the triangle too */
    double w[3];
    vec3 q = geom_closest_on_triangle(p, a, b, c, w);
    double d = v3_dist(p, q);
    /* 1. never worse than any sample; never better than the samples minus the covering radius */
    double ds = sampled_tri_dist(p, a, b, c, N);
    CHECK_MSG(d <= ds + 1e-12, "it %d: closest %.17g worse than a sample %.17g", it, d, ds);
    CHECK_MSG(d >= ds - max_edge(a, b, c) / N - 1e-12, "it %d: closest %.17g below sampling bound %.17g", it, d, ds);
    /* 2. the independent formula. Slivers (kind 6) of thinness th = |n| / maxedge^2 have the
     * accuracy documented in geom.h: about eps |p - a| / th on the face, th * maxedge when they
     * fall back to their edges (th < 1e-8); at worst ~1e-8 relative. */
    double dr = sqrt(ref_tri_dist2(p, a, b, c));
    double L = max_edge(a, b, c), th = L > 0 ? v3_len(v3_cross(v3_sub(b, a), v3_sub(c, a))) / (L * L) : 0;
    double tol = th > 0 && th < 1e-4 ? 1e-15 * (v3_dist(p, a) + L) / th + th * L : 1e-12;
    CHECK_MSG(fabs(d - dr) <= tol, "it %d (kind %d): %.17g vs reference %.17g", it, it % 7, d, dr);
    if (it % 7 == 6) CHECK(fabs(d - dr) <= 2e-8);
    /* 3. barycentrics: in [0, 1], sum to 1, reproduce the point */
    CHECK(w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[0] <= 1 && w[1] <= 1 && w[2] <= 1);
    CHECK_NEAR(w[0] + w[1] + w[2], 1.0, 1e-12);
    vec3 rq = v3_add(v3_scale(a, w[0]), v3_add(v3_scale(b, w[1]), v3_scale(c, w[2])));
    CHECK_MSG(v3_dist(rq, q) <= 1e-12, "it %d: barycentrics give a point %.3g away", it, v3_dist(rq, q));
  }
}

TEST(closest_on_triangle_regions_analytic) {
  vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  struct {
    vec3 p, q;
    double w[3];
  } cases[] = {
      {{0.25, 0.25, 2}, {0.25, 0.25, 0}, {0.5, 0.25, 0.25}}, /* face */
      {{-1, -1, 0.5}, {0, 0, 0}, {1, 0, 0}},                 /* vertex a */
      {{2, -1, 0}, {1, 0, 0}, {0, 1, 0}},                    /* vertex b */
      {{-1, 3, -1}, {0, 1, 0}, {0, 0, 1}},                   /* vertex c */
      {{0.5, -1, 3}, {0.5, 0, 0}, {0.5, 0.5, 0}},            /* edge ab */
      {{1, 1, 0}, {0.5, 0.5, 0}, {0, 0.5, 0.5}},             /* edge bc */
      {{-1, 0.25, 0}, {0, 0.25, 0}, {0.75, 0, 0.25}},        /* edge ca */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double w[3];
    vec3 q = geom_closest_on_triangle(cases[i].p, a, b, c, w);
    CHECK_MSG(v3_dist(q, cases[i].q) <= 1e-15, "case %zu", i);
    for (int k = 0; k < 3; k++) CHECK_NEAR(w[k], cases[i].w[k], 1e-15);
  }
  /* point triangle and needle */
  double w[3];
  vec3 q = geom_closest_on_triangle(v3(1, 2, 3), v3(1, 1, 1), v3(1, 1, 1), v3(1, 1, 1), w);
  CHECK(v3_dist(q, v3(1, 1, 1)) == 0);
  q = geom_closest_on_triangle(v3(0.5, 3, 0), v3(0, 0, 0), v3(2, 0, 0), v3(1, 0, 0), w);
  CHECK_NEAR(v3_dist(q, v3(0.5, 0, 0)), 0, 1e-15);
  CHECK_NEAR(w[0] + w[1] + w[2], 1, 1e-15);
  /* closest point on a segment */
  double t;
  q = geom_closest_on_segment(v3(3, 1, 0), v3(0, 0, 0), v3(2, 0, 0), &t);
  CHECK(t == 1 && q.x == 2);
  q = geom_closest_on_segment(v3(3, 1, 0), v3(1, 1, 1), v3(1, 1, 1), &t);
  CHECK(t == 0 && q.x == 1);
}

/* ---- segment-triangle nearest points ------------------------------------------------------- */

/* distance from the point at parameter u of s0s1 to the triangle: convex in u */
static double seg_point_tri_dist(double u, vec3 s0, vec3 s1, vec3 a, vec3 b, vec3 c) {
  const vec3 p = v3_lerp(s0, s1, u);
  return v3_dist(p, geom_closest_on_triangle(p, a, b, c, NULL));
}

TEST(segment_triangle_closest_matches_convex_search) {
  rng r = {5};
  for (int it = 0; it < 3000; it++) {
    vec3 a, b, c;
    random_triangle(&r, it % 6, &a, &b, &c); /* (slivers: the point-triangle test's own accuracy) */
    vec3 s0 = rng_vec(&r, -2, 2), s1 = rng_vec(&r, -2, 2);
    if (it % 4 == 1) {
      /* through an inner point of the triangle */
      const double u = rng_range(&r, 0.05, 0.9), v = rng_range(&r, 0.05, 0.95 - u);
      const vec3 q = v3_add(v3_scale(a, 1 - u - v), v3_add(v3_scale(b, u), v3_scale(c, v)));
      const vec3 d = rng_vec(&r, -1, 1);
      s0 = v3_madd(q, d, -rng_range(&r, 0.1, 1));
      s1 = v3_madd(q, d, rng_range(&r, 0.1, 1));
    } else if (it % 4 == 2) {
      /* parallel to the triangle's plane */
      const vec3 n = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a)));
      if (v3_len2(n) > 0) s1 = v3_madd(s1, n, v3_dot(n, v3_sub(s0, s1)));
    }
    double w[3], t;
    const double d = sqrt(geom_segment_triangle_closest(s0, s1, a, b, c, w, &t));
    /* the reference: a golden-section search of the convex distance along the segment */
    double lo = 0, hi = 1;
    for (int k = 0; k < 200; k++) {
      const double m1 = lo + (hi - lo) * 0.381966, m2 = hi - (hi - lo) * 0.381966;
      if (seg_point_tri_dist(m1, s0, s1, a, b, c) < seg_point_tri_dist(m2, s0, s1, a, b, c)) hi = m2;
      else lo = m1;
    }
    const double ref = fmin(seg_point_tri_dist(0.5 * (lo + hi), s0, s1, a, b, c),
                            fmin(seg_point_tri_dist(0, s0, s1, a, b, c), seg_point_tri_dist(1, s0, s1, a, b, c)));
    CHECK_MSG(fabs(d - ref) <= 1e-9, "it %d (kind %d): %.17g vs search %.17g", it, it % 6, d, ref);
    if (it % 4 == 1 && it % 6 < 3) CHECK_MSG(d == 0, "it %d: a segment through the face at %.3g", it, d);
    /* the weights and the parameter give the two nearest points */
    CHECK(t >= 0 && t <= 1 && w[0] >= 0 && w[1] >= 0 && w[2] >= 0);
    CHECK_NEAR(w[0] + w[1] + w[2], 1.0, 1e-12);
    const vec3 q = v3_add(v3_scale(a, w[0]), v3_add(v3_scale(b, w[1]), v3_scale(c, w[2])));
    CHECK_MSG(fabs(v3_dist(q, v3_lerp(s0, s1, t)) - d) <= 1e-9, "it %d: the points are %.17g apart, not %.17g", it,
              v3_dist(q, v3_lerp(s0, s1, t)), d);
  }
}

TEST(segment_triangle_closest_analytic) {
  const vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  double w[3], t;
  /* above the face, parallel: the height, anywhere along the part over the face */
  CHECK_NEAR(geom_segment_triangle_closest(v3(0.1, 0.1, 0.5), v3(0.3, 0.2, 0.5), a, b, c, w, &t), 0.25, 1e-15);
  /* beside edge bc, leaving it at a right angle in the plane z = 0.3 */
  CHECK_NEAR(geom_segment_triangle_closest(v3(1, 1, 0.3), v3(2, 2, 0.3), a, b, c, w, &t), 0.5 + 0.09, 1e-15);
  CHECK_NEAR(t, 0, 1e-15);
  CHECK_NEAR(w[1], 0.5, 1e-15);
  CHECK_NEAR(w[2], 0.5, 1e-15);
  /* piercing the face at (0.25, 0.25, 0): distance 0 at t = 0.5 */
  CHECK(geom_segment_triangle_closest(v3(0.25, 0.25, -1), v3(0.25, 0.25, 1), a, b, c, w, &t) == 0);
  CHECK_NEAR(t, 0.5, 1e-15);
  CHECK_NEAR(w[0], 0.5, 1e-15);
  /* skew over edge ab, which the segment passes 0.2 above: no end point is the nearest */
  CHECK_NEAR(geom_segment_triangle_closest(v3(0.5, -1, 0.2), v3(0.5, 1, 0.2), a, b, c, w, &t), 0.04, 1e-15);
}

/* ---- segment-segment ------------------------------------------------------------------------ */

TEST(segment_segment_matches_sampling) {
  rng r = {2};
  const int N = 120;
  for (int it = 0; it < 600; it++) {
    vec3 p0 = rng_vec(&r, -1, 1), p1 = rng_vec(&r, -1, 1), q0 = rng_vec(&r, -1, 1), q1 = rng_vec(&r, -1, 1);
    switch (it % 6) {
    case 1:
      q1 = v3_add(q0, v3_scale(v3_sub(p1, p0), rng_range(&r, -2, 2)));
      break; /* parallel */
    case 2:
      p1 = p0;
      break; /* point */
    case 3:
      p1 = p0;
      q1 = q0;
      break; /* two points */
    case 4:  /* collinear */
      q0 = v3_lerp(p0, p1, rng_range(&r, -1, 2));
      q1 = v3_lerp(p0, p1, rng_range(&r, -1, 2));
      break;
    case 5:
      q1 = v3_add(q0, v3_add(v3_sub(p1, p0), v3_scale(rng_vec(&r, -1, 1), 1e-9)));
      break; /* near-parallel */
    default:
      break;
    }
    double s, t;
    double d2 = geom_segment_segment(p0, p1, q0, q1, &s, &t);
    CHECK(s >= 0 && s <= 1 && t >= 0 && t <= 1);
    CHECK_NEAR(d2, v3_dist2(v3_lerp(p0, p1, s), v3_lerp(q0, q1, t)), 1e-14);
    double best = INFINITY;
    for (int i = 0; i <= N; i++)
      for (int j = 0; j <= N; j++)
        best = fmin(best, v3_dist2(v3_lerp(p0, p1, (double)i / N), v3_lerp(q0, q1, (double)j / N)));
    double d = sqrt(d2), ds = sqrt(best);
    double h = (v3_dist(p0, p1) + v3_dist(q0, q1)) / (2.0 * N);
    CHECK_MSG(d <= ds + 1e-9, "it %d: %.17g worse than sample %.17g", it, d, ds);
    CHECK_MSG(d >= ds - h - 1e-12, "it %d: %.17g below sampling bound %.17g", it, d, ds - h);
  }
}

TEST(segment_segment_analytic) {
  double s, t;
  /* crossing skew segments, 1 apart */
  CHECK_NEAR(geom_segment_segment(v3(-1, 0, 0), v3(1, 0, 0), v3(0, -1, 1), v3(0, 1, 1), &s, &t), 1, 1e-15);
  CHECK_NEAR(s, 0.5, 1e-15);
  CHECK_NEAR(t, 0.5, 1e-15);
  /* parallel, overlapping in x over [0.5, 1]: distance 1 */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(1, 0, 0), v3(0.5, 1, 0), v3(2, 1, 0), &s, &t), 1, 1e-15);
  CHECK(s >= 0.5 - 1e-15);
  /* parallel, disjoint in x: from (1,0,0) to (2,1,0) */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(1, 0, 0), v3(2, 1, 0), v3(3, 1, 0), &s, &t), 2, 1e-15);
  CHECK(s == 1 && t == 0);
  /* anti-parallel, disjoint */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(1, 0, 0), v3(3, 1, 0), v3(2, 1, 0), &s, &t), 2, 1e-15);
  CHECK(s == 1 && t == 1);
  /* collinear overlapping: 0 */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(2, 0, 0), v3(1, 0, 0), v3(3, 0, 0), &s, &t), 0, 1e-15);
  /* collinear disjoint: gap 1 */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(1, 0, 0), v3(2, 0, 0), v3(3, 0, 0), &s, &t), 1, 1e-15);
  CHECK(s == 1 && t == 0);
  /* point against segment, point against point */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(0, 0, 0), v3(1, -1, 0), v3(1, 1, 0), &s, &t), 1, 1e-15);
  CHECK(s == 0 && fabs(t - 0.5) < 1e-15);
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(0, 0, 0), v3(3, 4, 0), v3(3, 4, 0), &s, &t), 25, 1e-13);
  /* endpoint to interior */
  CHECK_NEAR(geom_segment_segment(v3(0, 0, 0), v3(1, 0, 0), v3(2, -1, 0), v3(2, 1, 0), &s, &t), 1, 1e-15);
  CHECK(s == 1 && fabs(t - 0.5) < 1e-15);
}

/* ---- segment / ray against triangle --------------------------------------------------------- */

TEST(segment_triangle_analytic) {
  vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  double t, w[3];
  CHECK(geom_segment_triangle(v3(0.2, 0.2, 1), v3(0.2, 0.2, -1), a, b, c, &t, w));
  CHECK_NEAR(t, 0.5, 1e-15);
  CHECK_NEAR(w[0], 0.6, 1e-15);
  CHECK_NEAR(w[1], 0.2, 1e-15);
  CHECK_NEAR(w[2], 0.2, 1e-15);
  CHECK(geom_segment_triangle(v3(0.2, 0.2, -3), v3(0.2, 0.2, 1), a, b, c, &t, w)); /* two-sided */
  CHECK_NEAR(t, 0.75, 1e-15);
  CHECK(!geom_segment_triangle(v3(0.2, 0.2, 1), v3(0.2, 0.2, 0.5), a, b, c, &t, w)); /* short */
  CHECK(geom_segment_triangle(v3(0.2, 0.2, 1), v3(0.2, 0.2, 0), a, b, c, &t, w));    /* ends on it */
  CHECK(t == 1);
  CHECK(geom_segment_triangle(v3(0.2, 0.3, 0), v3(0.2, 0.2, 2), a, b, c, &t, w)); /* starts on it */
  CHECK(t == 0);
  CHECK(!geom_segment_triangle(v3(0.8, 0.8, 1), v3(0.8, 0.8, -1), a, b, c, &t, w)); /* outside */
  CHECK(geom_segment_triangle(v3(0.5, 0.5, 1), v3(0.5, 0.5, -1), a, b, c, &t, w));  /* edge bc */
  CHECK_NEAR(w[0], 0, 1e-15);
  CHECK(geom_segment_triangle(v3(0, 0, 1), v3(0, 0, -1), a, b, c, &t, w)); /* vertex a */
  CHECK_NEAR(w[0], 1, 1e-15);
  CHECK(geom_segment_triangle(v3(0, 0, 1), v3(1, 1, -1), a, b, c, &t, w)); /* oblique, edge bc */
  CHECK_NEAR(t, 0.5, 1e-15);
  CHECK(!geom_segment_triangle(v3(-1, 0.2, 0), v3(2, 0.2, 0), a, b, c, &t, w)); /* coplanar */
  CHECK(!geom_segment_triangle(v3(0.1, 0.1, 0), v3(0.2, 0.2, 0), a, b, c, &t, w));
  CHECK(!geom_segment_triangle(v3(0, 0, 1), v3(0, 0, -1), a, b, v3(2, 0, 0), &t, w)); /* needle */
  CHECK(!geom_segment_triangle(v3(NAN, 0, 1), v3(0, 0, -1), a, b, c, &t, w));
}

/* Hinge of two triangles (a, b, c), (b, a, d) sharing edge ab. 1 if it is a graph over the
 * plane normal to dir (both keep their orientation when projected along dir): then every line
 * with direction dir near the edge crosses the hinge surface. */
static int hinge_is_graph(vec3 a, vec3 b, vec3 c, vec3 d, vec3 dir) {
  vec3 zero = {0, 0, 0};
  return sgn(geom_det3_diff(b, a, c, a, dir, zero)) * sgn(geom_det3_diff(a, b, d, b, dir, zero)) > 0;
}

static int fan_is_graph(vec3 v, const vec3 *ring, int k, vec3 dir) {
  vec3 zero = {0, 0, 0};
  int pos = 0, neg = 0;
  for (int i = 0; i < k; i++) {
    double o = geom_det3_diff(ring[i], v, ring[(i + 1) % k], v, dir, zero);
    pos += o > 0;
    neg += o < 0;
  }
  return pos == k || neg == k;
}

/* 1. Exactly through a shared edge point / a shared fan vertex (dyadic coordinates, so the
 *    constructions are exact): closed triangles all contain the point, so every one of them must
 *    report the segment.
 * 2. Full-precision random hinges and umbrellas with segments through a rounded point of the
 *    shared edge or through the shared vertex (the rounded endpoints put the line within an ulp
 *    or so of it): at least one triangle must report it. Plain double determinants let about 1 %
 *    of the umbrella segments through (all triangles say "outside"); exact signs never do. */
TEST(segment_triangle_shared_edge_and_fan_vertex) {
  rng r = {3};
  for (int it = 0; it < 1000; it++) {
    vec3 a = rng_dyadic_vec(&r, 1, 20), b = rng_dyadic_vec(&r, 1, 20);
    vec3 mid = v3_scale(v3_add(a, b), 0.5);
    vec3 e = v3_sub(b, a), u = v3_normalize(v3_cross(e, v3(0.3, -0.7, 0.6)));
    vec3 side = v3_normalize(v3_cross(u, e));
    vec3 c = v3_add(mid, v3_add(v3_scale(side, rng_range(&r, 0.2, 1)), v3_scale(u, rng_range(&r, -0.5, 0.5))));
    vec3 d = v3_add(mid, v3_add(v3_scale(side, -rng_range(&r, 0.2, 1)), v3_scale(u, rng_range(&r, -0.5, 0.5))));
    vec3 dir = v3(ldexp(floor(u.x * 1024), -10), ldexp(floor(u.y * 1024), -10), ldexp(floor(u.z * 1024), -10));
    if (v3_len(dir) < 0.5) continue;
    vec3 p0 = v3_add(mid, dir), p1 = v3_sub(mid, dir);
    int h1 = geom_segment_triangle(p0, p1, a, b, c, NULL, NULL),
        h2 = geom_segment_triangle(p0, p1, b, a, d, NULL, NULL);
    CHECK_MSG(h1 && h2, "it %d: exact edge point reported by %d + %d", it, h1, h2);

    vec3 v = rng_dyadic_vec(&r, 1, 20), ring[10];
    int k = 3 + rng_int(&r, 7);
    double phase = rng_range(&r, 0, 6.283);
    for (int i = 0; i < k; i++) {
      double ang = phase + 6.283185307179586 * (i + rng_range(&r, -0.3, 0.3)) / k, rad = rng_range(&r, 0.3, 1.5);
      ring[i] = v3_add(v, v3(rad * cos(ang), rad * sin(ang), rng_range(&r, -0.4, 0.4)));
    }
    vec3 vd = v3(rng_dyadic(&r, 0.3, 10), rng_dyadic(&r, 0.3, 10), ldexp(floor(rng_range(&r, 0.5, 1) * 1024), -10));
    int hits = 0;
    for (int i = 0; i < k; i++)
      hits += geom_segment_triangle(v3_add(v, vd), v3_sub(v, vd), v, ring[i], ring[(i + 1) % k], NULL, NULL);
    CHECK_MSG(hits == k, "it %d: exact vertex reported by %d of %d triangles", it, hits, k);
  }
  int hinges = 0, fans = 0;
  for (int it = 0; it < 40000; it++) {
    vec3 a = rng_vec(&r, -1, 1), b = rng_vec(&r, -1, 1), mid = v3_lerp(a, b, 0.5);
    vec3 e = v3_sub(b, a), u = v3_normalize(v3_cross(e, rng_vec(&r, -1, 1))), side = v3_normalize(v3_cross(u, e));
    vec3 c = v3_add(mid, v3_add(v3_scale(side, rng_range(&r, 0.2, 1.2)), v3_scale(u, rng_range(&r, -0.5, 0.5))));
    vec3 d = v3_add(mid, v3_add(v3_scale(side, -rng_range(&r, 0.2, 1.2)), v3_scale(u, rng_range(&r, -0.5, 0.5))));
    vec3 m = v3_lerp(a, b, rng_range(&r, 0.05, 0.95)), dir = v3_add(u, v3_scale(rng_vec(&r, -1, 1), 0.5));
    vec3 p0 = v3_madd(m, dir, -rng_range(&r, 0.2, 1.2)), p1 = v3_madd(m, dir, rng_range(&r, 0.2, 1.2));
    if (hinge_is_graph(a, b, c, d, dir)) {
      hinges++;
      int h = geom_segment_triangle(p0, p1, a, b, c, NULL, NULL) + geom_segment_triangle(p0, p1, b, a, d, NULL, NULL);
      CHECK_MSG(h >= 1, "it %d: segment slipped through the shared edge", it);
    }
    vec3 v = rng_vec(&r, -1, 1), ring[5];
    double ph = rng_range(&r, 0, 6.283);
    for (int i = 0; i < 5; i++) {
      double an = ph + 6.283185307179586 * (i + rng_range(&r, -0.15, 0.15)) / 5;
      ring[i] = v3_add(
          v, v3(cos(an) * rng_range(&r, 0.3, 1.3), sin(an) * rng_range(&r, 0.3, 1.3), rng_range(&r, -0.15, 0.15)));
    }
    vec3 vd = v3(rng_range(&r, -0.15, 0.15), rng_range(&r, -0.15, 0.15), 1);
    vec3 q0 = v3_madd(v, vd, -rng_range(&r, 0.3, 1.3)), q1 = v3_madd(v, vd, rng_range(&r, 0.3, 1.3));
    if (fan_is_graph(v, ring, 5, vd)) {
      fans++;
      int f = 0;
      for (int i = 0; i < 5; i++) f += geom_segment_triangle(q0, q1, v, ring[i], ring[(i + 1) % 5], NULL, NULL);
      CHECK_MSG(f >= 1, "it %d: segment slipped through the fan vertex", it);
    }
  }
  CHECK(hinges > 30000 && fans > 30000);
}

/* Closed meshes: a tessellated cube (each face an n x n grid, diagonals alternating) and an
 * octahedron. A segment from outside to inside crosses the surface an odd number of times,
 * outside-outside and inside-inside an even number. Lattice-aligned segments (through exact grid
 * vertices and edges) must be reported at least once. */
typedef struct tri_mesh {
  vec3 v[512];
  int t[1024][3];
  int nv, nt;
} tri_mesh;

static int mesh_vertex(tri_mesh *m, vec3 p) {
  for (int i = 0; i < m->nv; i++)
    if (m->v[i].x == p.x && m->v[i].y == p.y && m->v[i].z == p.z) return i;
  m->v[m->nv] = p;
  return m->nv++;
}

static void build_cube(tri_mesh *m, int n) {
  m->nv = m->nt = 0;
  for (int axis = 0; axis < 3; axis++)
    for (int sidei = 0; sidei < 2; sidei++) {
      double s = sidei ? 1 : -1;
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          int id[4];
          for (int c = 0; c < 4; c++) {
            double u = -1 + 2.0 * (i + (c == 1 || c == 2)) / n, w = -1 + 2.0 * (j + (c >= 2)) / n;
            double q[3];
            q[axis] = s;
            q[(axis + 1) % 3] = u;
            q[(axis + 2) % 3] = w;
            id[c] = mesh_vertex(m, v3(q[0], q[1], q[2]));
          }
          /* quad 0-1-2-3 is counter-clockwise about +axis ((axis+1) x (axis+2) = axis); the
           * diagonal alternates; triangles are reversed on the - side to face outwards */
          int tris[2][3];
          if ((i + j) % 2) {
            int t1[3] = {id[0], id[1], id[2]}, t2[3] = {id[0], id[2], id[3]};
            memcpy(tris[0], t1, sizeof t1);
            memcpy(tris[1], t2, sizeof t2);
          } else {
            int t1[3] = {id[0], id[1], id[3]}, t2[3] = {id[1], id[2], id[3]};
            memcpy(tris[0], t1, sizeof t1);
            memcpy(tris[1], t2, sizeof t2);
          }
          for (int k = 0; k < 2; k++) {
            int *t = m->t[m->nt++];
            t[0] = tris[k][0];
            t[1] = sidei ? tris[k][1] : tris[k][2];
            t[2] = sidei ? tris[k][2] : tris[k][1];
          }
        }
    }
}

static void build_octahedron(tri_mesh *m) {
  m->nv = m->nt = 0;
  vec3 P[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  for (int i = 0; i < 6; i++) mesh_vertex(m, P[i]);
  int T[8][3] = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4}, {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  memcpy(m->t, T, sizeof T);
  m->nt = 8;
}

static int mesh_crossings(const tri_mesh *m, vec3 p0, vec3 p1) {
  int n = 0;
  for (int i = 0; i < m->nt; i++)
    n += geom_segment_triangle(p0, p1, m->v[m->t[i][0]], m->v[m->t[i][1]], m->v[m->t[i][2]], NULL, NULL);
  return n;
}

static vec3 random_outside(rng *r, int octa) {
  for (;;) {
    vec3 p = rng_vec(r, -3, 3);
    double l = octa ? fabs(p.x) + fabs(p.y) + fabs(p.z) : fmax(fabs(p.x), fmax(fabs(p.y), fabs(p.z)));
    if (l > 1.05) return p;
  }
}

static vec3 random_inside(rng *r, int octa) {
  for (;;) {
    vec3 p = rng_vec(r, -1, 1);
    double l = octa ? fabs(p.x) + fabs(p.y) + fabs(p.z) : fmax(fabs(p.x), fmax(fabs(p.y), fabs(p.z)));
    if (l < 0.95) return p;
  }
}

TEST(segment_triangle_closed_mesh_parity) {
  static tri_mesh m;
  rng r = {4};
  for (int shape = 0; shape < 3; shape++) {
    int octa = shape == 2;
    if (octa)
      build_octahedron(&m);
    else
      build_cube(&m, shape ? 4 : 1);
    for (int it = 0; it < 3000; it++) {
      vec3 out = random_outside(&r, octa), in = random_inside(&r, octa), out2 = random_outside(&r, octa);
      vec3 in2 = random_inside(&r, octa);
      int a = mesh_crossings(&m, out, in), b = mesh_crossings(&m, in, out), c = mesh_crossings(&m, out, out2);
      int d = mesh_crossings(&m, in, in2);
      CHECK_MSG(a % 2 == 1 && b % 2 == 1, "shape %d it %d: out->in crossings %d / %d", shape, it, a, b);
      CHECK_MSG(c % 2 == 0, "shape %d it %d: out->out crossings %d", shape, it, c);
      CHECK_MSG(d == 0, "shape %d it %d: in->in crossings %d", shape, it, d);
    }
    /* through lattice points of the tessellation: vertices, edge points, face centres */
    for (int i = 0; i <= 8; i++)
      for (int j = 0; j <= 8; j++) {
        double x = -1 + 0.25 * i, y = -1 + 0.25 * j;
        if (octa && fabs(x) + fabs(y) > 1) continue;
        for (int axis = 0; axis < 3; axis++) {
          double q0[3], q1[3];
          q0[axis] = -2;
          q1[axis] = 0.25;
          q0[(axis + 1) % 3] = q1[(axis + 1) % 3] = x;
          q0[(axis + 2) % 3] = q1[(axis + 2) % 3] = y;
          vec3 p0 = v3(q0[0], q0[1], q0[2]), p1 = v3(q1[0], q1[1], q1[2]);
          if (!octa && (fabs(x) == 1 || fabs(y) == 1)) continue; /* along a face: coplanar */
          CHECK_MSG(mesh_crossings(&m, p0, p1) >= 1, "shape %d: lattice segment (%g, %g) axis %d missed", shape, x, y,
                    axis);
        }
      }
  }
}

TEST(ray_triangle_analytic_and_matches_segment) {
  vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  double s;
  CHECK(geom_ray_triangle(v3(0.2, 0.2, 2), v3(0, 0, -4), a, b, c, &s));
  CHECK_NEAR(s, 0.5, 1e-15);
  CHECK(!geom_ray_triangle(v3(0.2, 0.2, 2), v3(0, 0, 4), a, b, c, &s)); /* pointing away */
  CHECK(geom_ray_triangle(v3(0.2, 0.2, -2), v3(0, 0, 1), a, b, c, &s)); /* two-sided */
  CHECK_NEAR(s, 2, 1e-15);
  CHECK(geom_ray_triangle(v3(0.2, 0.2, 0), v3(0, 0, 1), a, b, c, &s)); /* origin on it */
  CHECK(s == 0);
  CHECK(!geom_ray_triangle(v3(-1, 0.2, 0), v3(1, 0, 0), a, b, c, &s));  /* coplanar */
  CHECK(!geom_ray_triangle(v3(0.2, 0.2, 1), v3(1, 0, 0), a, b, c, &s)); /* parallel */
  CHECK(geom_ray_triangle(v3(0, 0, 1), v3(0.5, 0.5, -1), a, b, c, &s)); /* through edge bc */
  CHECK_NEAR(s, 1, 1e-15);
  CHECK(!geom_ray_triangle(v3(0, 0, 1), v3(0, 0, 0), a, b, c, &s)); /* zero direction */
  rng r = {5};
  int hits = 0;
  for (int it = 0; it < 20000; it++) {
    vec3 ta = rng_vec(&r, -1, 1), tb = rng_vec(&r, -1, 1), tc = rng_vec(&r, -1, 1);
    vec3 o = rng_vec(&r, -2, 2), d = v3_normalize(rng_vec(&r, -1, 1));
    if (it % 2)
      d = v3_normalize(v3_sub(v3_add(v3_scale(v3_add(ta, v3_add(tb, tc)), 1.0 / 3), rng_vec(&r, -0.5, 0.5)), o));
    int hr = geom_ray_triangle(o, d, ta, tb, tc, &s);
    int hs = geom_segment_triangle(o, v3_madd(o, d, 16.0), ta, tb, tc, NULL, NULL);
    CHECK_MSG(hr == hs, "it %d: ray %d segment %d", it, hr, hs);
    if (hr) {
      hits++;
      vec3 x = v3_madd(o, d, s);
      CHECK_MSG(v3_dist(x, geom_closest_on_triangle(x, ta, tb, tc, NULL)) < 1e-9, "it %d: hit point off the triangle",
                it);
    }
  }
  CHECK_MSG(hits > 2000, "only %d hits", hits);
}

/* ---- triangle-triangle ------------------------------------------------------------------------ */

/* Calls the test with both triangle orders and all 6 x 6 vertex orders; all must agree. */
static int tri_tri_all_orders(const vec3 A[3], const vec3 B[3], int *consistent) {
  static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
  int first = -1;
  *consistent = 1;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      const int *p = perm[i], *q = perm[j];
      int x = geom_tri_tri_intersect(A[p[0]], A[p[1]], A[p[2]], B[q[0]], B[q[1]], B[q[2]]);
      int y = geom_tri_tri_intersect(B[q[0]], B[q[1]], B[q[2]], A[p[0]], A[p[1]], A[p[2]]);
      if (first < 0) first = x;
      if (x != first || y != first) *consistent = 0;
    }
  return first;
}

TEST(tri_tri_known_cases_and_symmetry) {
  struct {
    const char *name;
    vec3 A[3], B[3];
    int want;
  } cases[] = {
      {"piercing", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{0.5, 0.5, -1}, {0.5, 0.5, 1}, {1.5, 0.2, 0}}, 1},
      {"parallel planes", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}, 0},
      {"crossing planes, apart", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{3, 3, -1}, {3, 3, 1}, {4, 3, 0}}, 0},
      {"vertex on face", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{0.5, 0.5, 0}, {0.5, 0.5, 1}, {1, 0.5, 1}}, 1},
      {"vertex on edge", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{1, 0, 0}, {1, -1, 1}, {1, 1, 1}}, 1},
      {"edge on edge, crossing", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{1, -1, 0}, {1, 1, 0}, {1, 0, 1}}, 1},
      {"edge touches edge", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{1, 1, 0}, {2, 2, 0}, {1.5, 1.5, 1}}, 1},
      {"edge misses edge", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{1.25, 1, 0}, {2, 2, 0}, {1.5, 1.5, 1}}, 0},
      {"shared vertex only", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, 0}, {-1, 0, 1}, {0, -1, 1}}, 1},
      {"coplanar overlap", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{1, 1, 0}, {-1, 1, 0}, {1, -1, 0}}, 1},
      {"coplanar disjoint", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{2, 2, 0}, {3, 2, 0}, {2, 3, 0}}, 0},
      {"coplanar touching corner", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{1, 0, 0}, {2, 0, 0}, {2, 1, 0}}, 1},
      {"coplanar contained", {{0, 0, 0}, {4, 0, 0}, {0, 4, 0}}, {{1, 1, 0}, {2, 1, 0}, {1, 2, 0}}, 1},
      {"coplanar near miss", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0.5, 0.5 + 1e-15, 0}, {2, 2, 0}, {1, 3, 0}}, 0},
      {"identical", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 1},
      {"tilted coplanar overlap",
       {{0, 0, 0}, {1, 1, 1}, {1, 0, 0.5}},
       {{0.5, 0.25, 0.375}, {2, 2, 2}, {0.5, 2, 1.25}},
       1},
      {"needle piercing", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{0.5, 0.5, -1}, {0.5, 0.5, 1}, {0.5, 0.5, 0.25}}, 1},
      {"needle above", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{0.5, 0.5, 1}, {0.5, 0.5, 2}, {0.5, 0.5, 3}}, 0},
      {"needle in plane crossing", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{-1, 0.5, 0}, {3, 0.5, 0}, {1, 0.5, 0}}, 1},
      {"needle in plane outside", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{-1, 3, 0}, {3, 3, 0}, {1, 3, 0}}, 0},
      {"point inside", {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}}, {{0.5, 0.5, 0}, {0.5, 0.5, 0}, {0.5, 0.5, 0}}, 1},
      {"point outside",
       {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}},
       {{0.5, 0.5, 1e-300}, {0.5, 0.5, 1e-300}, {0.5, 0.5, 1e-300}},
       0},
      {"skew needles", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{1, -1, 1}, {1, 1, 1}, {1, 0, 1}}, 0},
      {"crossing needles", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{1, -1, 0}, {1, 1, 0}, {1, 0, 0}}, 1},
      {"collinear needles apart", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{3, 0, 0}, {4, 0, 0}, {5, 0, 0}}, 0},
      {"collinear needles touching", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {{2, 0, 0}, {4, 0, 0}, {3, 0, 0}}, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int consistent;
    int got = tri_tri_all_orders(cases[i].A, cases[i].B, &consistent);
    CHECK_MSG(got == cases[i].want, "%s: got %d", cases[i].name, got);
    CHECK_MSG(consistent, "%s: answer depends on vertex / triangle order", cases[i].name);
  }
}

/* Reference for non-coplanar pairs: they intersect iff some edge of one meets the other. */
static int tri_tri_by_edges(const vec3 A[3], const vec3 B[3]) {
  for (int i = 0; i < 3; i++) {
    if (geom_segment_triangle(A[i], A[(i + 1) % 3], B[0], B[1], B[2], NULL, NULL)) return 1;
    if (geom_segment_triangle(B[i], B[(i + 1) % 3], A[0], A[1], A[2], NULL, NULL)) return 1;
  }
  return 0;
}

TEST(tri_tri_random_matches_edge_reference) {
  rng r = {6};
  int yes = 0, no = 0;
  for (int it = 0; it < 20000; it++) {
    vec3 A[3], B[3];
    for (int k = 0; k < 3; k++) {
      A[k] = rng_vec(&r, -1, 1);
      B[k] = v3_add(rng_vec(&r, -1, 1), v3(0.6, 0, 0));
    }
    int got = geom_tri_tri_intersect(A[0], A[1], A[2], B[0], B[1], B[2]);
    CHECK_EQ_INT(got, tri_tri_by_edges(A, B));
    CHECK_EQ_INT(geom_tri_tri_intersect(B[2], B[0], B[1], A[1], A[0], A[2]), got);
    got ? yes++ : no++;
  }
  CHECK(yes > 2000 && no > 2000);
}

/* Exact reference on integer points: two convex hulls of point sets are disjoint iff some axis
 * separates their projections strictly, and the direction between their closest features is
 * always one of: a difference d of two points (vertex-vertex), d_i x d_j (vertex-face,
 * edge-edge) or d_i x (d_j x d_k) (vertex-edge). Works for degenerate triangles too. */
typedef struct ivec {
  long long x, y, z;
} ivec;
static ivec isub(ivec a, ivec b) { return (ivec){a.x - b.x, a.y - b.y, a.z - b.z}; }
static ivec icross(ivec a, ivec b) {
  return (ivec){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static long long idot(ivec a, ivec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

static int separates(ivec ax, const ivec A[3], const ivec B[3]) {
  long long amin = idot(ax, A[0]), amax = amin, bmin = idot(ax, B[0]), bmax = bmin;
  for (int i = 1; i < 3; i++) {
    long long a = idot(ax, A[i]), b = idot(ax, B[i]);
    amin = a < amin ? a : amin;
    amax = a > amax ? a : amax;
    bmin = b < bmin ? b : bmin;
    bmax = b > bmax ? b : bmax;
  }
  return amax < bmin || bmax < amin;
}

static int int_hulls_intersect(const ivec A[3], const ivec B[3]) {
  ivec P[6] = {A[0], A[1], A[2], B[0], B[1], B[2]};
  ivec d[15];
  int nd = 0;
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++) d[nd++] = isub(P[j], P[i]);
  for (int i = 0; i < nd; i++) {
    if (separates(d[i], A, B)) return 0;
    for (int j = 0; j < nd; j++) {
      ivec c = icross(d[i], d[j]);
      if (i < j && separates(c, A, B)) return 0;
      for (int k = 0; k < nd; k++)
        if (separates(icross(d[k], c), A, B)) return 0;
    }
  }
  return 1;
}

TEST(tri_tri_integer_lattice_matches_exact_sat) {
  rng r = {7};
  int yes = 0, no = 0, coplanar = 0, degenerate = 0;
  for (int it = 0; it < 4000; it++) {
    ivec A[3], B[3];
    int lim = it % 2 ? 3 : 5;
    for (int k = 0; k < 3; k++) {
      A[k] = (ivec){rng_int(&r, lim), rng_int(&r, lim), rng_int(&r, lim)};
      B[k] = (ivec){rng_int(&r, lim), rng_int(&r, lim), rng_int(&r, lim)};
    }
    if (it % 4 == 0) /* force coplanar pairs */
      for (int k = 0; k < 3; k++) A[k].z = B[k].z = 1;
    int want = int_hulls_intersect(A, B);
    /* exact doubles, but with a dyadic offset and scale so that the predicates see non-trivial
     * values */
    double sc = it % 3 == 0 ? 1.0 : 0x1p-7, off = it % 3 == 2 ? 4096.0 + 0x1p-20 : 0.0;
    vec3 fa[3], fb[3];
    for (int k = 0; k < 3; k++) {
      fa[k] = v3(A[k].x * sc + off, A[k].y * sc - off, A[k].z * sc + off * 0.5);
      fb[k] = v3(B[k].x * sc + off, B[k].y * sc - off, B[k].z * sc + off * 0.5);
    }
    int consistent;
    int got = tri_tri_all_orders(fa, fb, &consistent);
    CHECK_MSG(got == want,
              "it %d: got %d want %d: A (%lld %lld %lld)(%lld %lld %lld)(%lld %lld %lld) B (%lld %lld %lld)(%lld %lld "
              "%lld)(%lld %lld %lld)",
              it, got, want, A[0].x, A[0].y, A[0].z, A[1].x, A[1].y, A[1].z, A[2].x, A[2].y, A[2].z, B[0].x, B[0].y,
              B[0].z, B[1].x, B[1].y, B[1].z, B[2].x, B[2].y, B[2].z);
    CHECK_MSG(consistent, "it %d: order-dependent answer", it);
    want ? yes++ : no++;
    ivec na = icross(isub(A[1], A[0]), isub(A[2], A[0])), nb = icross(isub(B[1], B[0]), isub(B[2], B[0]));
    if (idot(na, na) == 0 || idot(nb, nb) == 0)
      degenerate++;
    else if (idot(icross(na, nb), icross(na, nb)) == 0 && idot(na, isub(B[0], A[0])) == 0)
      coplanar++;
  }
  CHECK(yes > 500 && no > 500 && coplanar > 200 && degenerate > 100);
}

/* Triangles sharing a vertex s. Reference (independent, floating point, only used away from
 * ties): in each triangle's plane the line L = plane1 ∩ plane2 through s meets the triangle in
 * s + lambda D for lambda in an interval starting at 0; they intersect beyond s iff both
 * intervals extend to the same side. */
static int shared_vertex_reference(vec3 s, vec3 a1, vec3 a2, vec3 b1, vec3 b2, int *clear) {
  vec3 n1 = v3_cross(v3_sub(a1, s), v3_sub(a2, s)), n2 = v3_cross(v3_sub(b1, s), v3_sub(b2, s));
  vec3 D = v3_normalize(v3_cross(n1, n2));
  double side[2];
  *clear = 1;
  for (int t = 0; t < 2; t++) {
    vec3 e0 = v3_sub(t ? b1 : a1, s), e1 = v3_sub(t ? b2 : a2, s);
    /* D = al e0 + be e1 (D lies in the plane) */
    double g00 = v3_dot(e0, e0), g01 = v3_dot(e0, e1), g11 = v3_dot(e1, e1);
    double r0 = v3_dot(D, e0), r1 = v3_dot(D, e1), den = g00 * g11 - g01 * g01;
    double al = (g11 * r0 - g01 * r1) / den, be = (g00 * r1 - g01 * r0) / den;
    if (fabs(al) < 1e-6 || fabs(be) < 1e-6) *clear = 0;
    side[t] = al > 0 && be > 0 ? 1 : (al < 0 && be < 0 ? -1 : 0);
  }
  return side[0] != 0 && side[0] == side[1];
}

TEST(tri_tri_shared_vertex_fans) {
  vec3 s = v3(0, 0, 0), a1 = v3(1, 0, 0), a2 = v3(0, 1, 0);
  /* coplanar: opposite sector, overlapping sector, sectors sharing a ray (on either side),
   * containing sector, the same triangle, a needle, sectors just under / over pi wide; every
   * case in both vertex orders and both roles */
  struct {
    vec3 b1, b2;
    int want;
  } cop[] = {{{-1, 0, 0}, {0, -1, 0}, 0}, {{1, 1, 0}, {-1, 2, 0}, 1},        {{0, 2, 0}, {-1, 1, 0}, 0},
             {{2, 0, 0}, {1, -1, 0}, 0},  {{0.1, 0.2, 0}, {0.2, 0.1, 0}, 1}, {{0, 1, 0}, {1, 0, 0}, 1},
             {{-1, 1, 0}, {1, -1, 0}, 0}, {{-1, 1.01, 0}, {1, -1, 0}, 1},    {{-1, 0.99, 0}, {1, -1, 0}, 0}};
  for (size_t i = 0; i < sizeof cop / sizeof cop[0]; i++) {
    vec3 b1 = cop[i].b1, b2 = cop[i].b2;
    int w = cop[i].want;
    CHECK_MSG(geom_tri_tri_shared_vertex(s, a1, a2, b1, b2) == w, "coplanar case %zu", i);
    CHECK_MSG(geom_tri_tri_shared_vertex(s, a2, a1, b1, b2) == w, "coplanar case %zu", i);
    CHECK_MSG(geom_tri_tri_shared_vertex(s, a1, a2, b2, b1) == w, "coplanar case %zu", i);
    CHECK_MSG(geom_tri_tri_shared_vertex(s, b1, b2, a1, a2) == w, "coplanar case %zu", i);
    CHECK_MSG(geom_tri_tri_shared_vertex(s, b2, b1, a2, a1) == w, "coplanar case %zu", i);
  }
  /* folded over: the far edge of T2 pierces T1 */
  CHECK(geom_tri_tri_shared_vertex(s, a1, a2, v3(0.3, 0.2, 0.3), v3(0.2, 0.3, -0.3)));
  /* T2 folded down onto T1's plane only at s: separated */
  CHECK(!geom_tri_tri_shared_vertex(s, a1, a2, v3(1, 0, 1), v3(0, 1, 1)));
  CHECK(!geom_tri_tri_shared_vertex(s, a1, a2, v3(-1, 0.1, 0.5), v3(-0.5, -1, -0.5)));
  /* an edge of T2 from s lying inside T1: they share a segment */
  CHECK(geom_tri_tri_shared_vertex(s, a1, a2, v3(0.2, 0.2, 0), v3(0, 0, 1)));
  /* an edge of T2 from s running along T1's edge s-a1 (out of plane otherwise): shared segment */
  CHECK(geom_tri_tri_shared_vertex(s, a1, a2, v3(0.5, 0, 0), v3(0, -1, 1)));
  /* degenerate triangles never count */
  CHECK(!geom_tri_tri_shared_vertex(s, a1, a2, v3(0.2, 0.2, 0), v3(0.4, 0.4, 0)));
  /* a flat fan around s: neighbours share only s, sectors touch along rays */
  for (int k = 4; k <= 8; k++) {
    vec3 ring[8];
    for (int i = 0; i < k; i++) ring[i] = v3(cos(6.283185307179586 * i / k), sin(6.283185307179586 * i / k), 0);
    for (int i = 0; i < k; i++)
      for (int j = i + 2; j < k; j++) {
        if ((j + 1) % k == i) continue; /* these two share an edge */
        CHECK(!geom_tri_tri_shared_vertex(s, ring[i], ring[(i + 1) % k], ring[j], ring[(j + 1) % k]));
      }
    /* fold triangle 2 over onto triangle 0: its far edge now pierces triangle 0 */
    vec3 mid = v3_scale(v3_add(ring[0], ring[1]), 0.4);
    vec3 up = v3_add(mid, v3(0.1 * ring[0].x, 0.1 * ring[0].y, 0.2)),
         down = v3_add(mid, v3(0.1 * ring[1].x, 0.1 * ring[1].y, -0.2));
    CHECK(geom_tri_tri_shared_vertex(s, ring[0], ring[1], up, down));
    CHECK(geom_tri_tri_shared_vertex(s, up, down, ring[0], ring[1]));
    /* folded up by 90 degrees over the same sector: touches only at s */
    CHECK(!geom_tri_tri_shared_vertex(s, ring[0], ring[1], v3(0, 0, 1), v3_add(mid, v3(0, 0, 1))));
  }
  /* random non-coplanar pairs against the interval reference */
  rng r = {8};
  int yes = 0, no = 0;
  for (int it = 0; it < 20000; it++) {
    vec3 S = rng_vec(&r, -1, 1);
    vec3 A1 = v3_add(S, rng_vec(&r, -1, 1)), A2 = v3_add(S, rng_vec(&r, -1, 1));
    vec3 B1 = v3_add(S, rng_vec(&r, -1, 1)), B2 = v3_add(S, rng_vec(&r, -1, 1));
    int clear;
    int want = shared_vertex_reference(S, A1, A2, B1, B2, &clear);
    if (!clear) continue;
    int got = geom_tri_tri_shared_vertex(S, A1, A2, B1, B2);
    CHECK_MSG(got == want, "it %d: got %d want %d", it, got, want);
    CHECK_EQ_INT(geom_tri_tri_shared_vertex(S, B2, B1, A1, A2), got);
    got ? yes++ : no++;
  }
  CHECK(yes > 1000 && no > 1000);
  /* random coplanar pairs (exactly in z = 1/2) against angular sectors */
  yes = no = 0;
  for (int it = 0; it < 20000; it++) {
    vec3 S = v3(rng_range(&r, -1, 1), rng_range(&r, -1, 1), 0.5), P[4];
    double ang[4];
    for (int k = 0; k < 4; k++) {
      ang[k] = rng_range(&r, 0, 6.283185307179586);
      P[k] = v3(S.x + rng_range(&r, 0.2, 1) * cos(ang[k]), S.y + rng_range(&r, 0.2, 1) * sin(ang[k]), 0.5);
      ang[k] = atan2(P[k].y - S.y, P[k].x - S.x);
    }
    /* sector of (u, w): from the smaller-angle-gap start, width < pi */
    double st[2], wd[2];
    int clear = 1;
    for (int t = 0; t < 2; t++) {
      double d = fmod(ang[2 * t + 1] - ang[2 * t] + 4 * 3.141592653589793, 2 * 3.141592653589793);
      if (d < 3.141592653589793) {
        st[t] = ang[2 * t];
        wd[t] = d;
      } else {
        st[t] = ang[2 * t + 1];
        wd[t] = 2 * 3.141592653589793 - d;
      }
      if (wd[t] < 1e-6 || fabs(wd[t] - 3.141592653589793) < 1e-6) clear = 0;
    }
    /* open intervals on the circle overlap iff either start lies strictly inside the other */
    double o1 = fmod(st[1] - st[0] + 4 * 3.141592653589793, 2 * 3.141592653589793);
    double o2 = fmod(st[0] - st[1] + 4 * 3.141592653589793, 2 * 3.141592653589793);
    if (fabs(o1) < 1e-6 || fabs(o2) < 1e-6 || fabs(o1 - wd[0]) < 1e-6 || fabs(o2 - wd[1]) < 1e-6) clear = 0;
    if (!clear) continue;
    int want = o1 < wd[0] || o2 < wd[1];
    int got = geom_tri_tri_shared_vertex(S, P[0], P[1], P[2], P[3]);
    CHECK_MSG(got == want, "coplanar it %d: got %d want %d", it, got, want);
    got ? yes++ : no++;
  }
  CHECK(yes > 1000 && no > 1000);
}

/* ---- shapes: signed distance, normals, support -------------------------------------------- */

static geom_shape make_sphere(double r) { return (geom_shape){GEOM_SPHERE, r, 0, {0, 0, 0}}; }
static geom_shape make_box(double x, double y, double z) { return (geom_shape){GEOM_BOX, 0, 0, {x, y, z}}; }
static geom_shape make_capsule(double r, double h) { return (geom_shape){GEOM_CAPSULE, r, h, {0, 0, 0}}; }
static geom_shape make_cylinder(double r, double h) { return (geom_shape){GEOM_CYLINDER, r, h, {0, 0, 0}}; }

static void check_sdf(const geom_shape *s, vec3 p, double want, vec3 want_n, int line) {
  vec3 n;
  double d = geom_shape_sdf(s, p, &n);
  if (!(fabs(d - want) <= 1e-14) || !(v3_dist(n, want_n) <= 1e-14))
    harness_fail(__FILE__, line, "type %d at (%g %g %g): d %.17g n (%g %g %g), want %.17g (%g %g %g)", s->type, p.x,
                 p.y, p.z, d, n.x, n.y, n.z, want, want_n.x, want_n.y, want_n.z);
}
#define CHECK_SDF(s, p, d, n) check_sdf(&(s), p, d, n, __LINE__)

TEST(sdf_exact_values) {
  const double r2 = sqrt(0.5);
  geom_shape sp = make_sphere(1);
  CHECK_SDF(sp, v3(2, 0, 0), 1, v3(1, 0, 0));
  CHECK_SDF(sp, v3(0, 0.5, 0), -0.5, v3(0, 1, 0));
  CHECK_SDF(sp, v3(0, 0, 0), -1, v3(0, 0, 1));
  CHECK_SDF(sp, v3(0, -3, 4), 4, v3(0, -0.6, 0.8));
  geom_shape bx = make_box(1, 2, 3);
  CHECK_SDF(bx, v3(2, 0, 0), 1, v3(1, 0, 0));
  CHECK_SDF(bx, v3(2, -3, 0), sqrt(2), v3(r2, -r2, 0));
  CHECK_SDF(bx, v3(-2, 3, 4), sqrt(3), v3(-1 / sqrt(3), 1 / sqrt(3), 1 / sqrt(3)));
  CHECK_SDF(bx, v3(0.5, 0, 0), -0.5, v3(1, 0, 0));
  CHECK_SDF(bx, v3(-0.9, 0, 0), -0.1, v3(-1, 0, 0));
  CHECK_SDF(bx, v3(0, 0, -2.5), -0.5, v3(0, 0, -1));
  CHECK_SDF(bx, v3(0, 1.8, 2.9), -0.1, v3(0, 0, 1));
  CHECK_SDF(bx, v3(0, 0, 0), -1, v3(1, 0, 0)); /* centre: tie rule */
  CHECK_SDF(bx, v3(1, 0, 0), 0, v3(1, 0, 0));  /* on a face */
  geom_shape cp = make_capsule(0.5, 1);
  CHECK_SDF(cp, v3(1, 0, 0), 0.5, v3(1, 0, 0));
  CHECK_SDF(cp, v3(0, 0, 2), 0.5, v3(0, 0, 1));
  CHECK_SDF(cp, v3(0, 0, -1.25), -0.25, v3(0, 0, -1));
  CHECK_SDF(cp, v3(0.3, 0.4, 1.5), sqrt(0.5) - 0.5, v3(0.3 / r2, 0.4 / r2, 0.5 / r2));
  CHECK_SDF(cp, v3(0, 0.25, 0.7), -0.25, v3(0, 1, 0));
  CHECK_SDF(cp, v3(0, 0, 0.3), -0.5, v3(1, 0, 0)); /* on the axis */
  geom_shape cy = make_cylinder(1, 2);
  CHECK_SDF(cy, v3(2, 0, 0), 1, v3(1, 0, 0));
  CHECK_SDF(cy, v3(0, 0, 3), 1, v3(0, 0, 1));
  CHECK_SDF(cy, v3(0, 0, -2.5), 0.5, v3(0, 0, -1));
  CHECK_SDF(cy, v3(0, 2, 3), sqrt(2), v3(0, r2, r2));              /* rim */
  CHECK_SDF(cy, v3(-1.3, 0, -2.4), 0.5, v3(-0.6, 0, -0.8));        /* rim, below */
  CHECK_SDF(cy, v3(0.6, 0.8, 1), 0, v3(0.6, 0.8, 0));              /* side surface */
  CHECK_SDF(cy, v3(0.5, 0, 0), -0.5, v3(1, 0, 0));                 /* nearest: side */
  CHECK_SDF(cy, v3(0, 0, 1.8), -0.2, v3(0, 0, 1));                 /* nearest: cap */
  CHECK_SDF(cy, v3(0.9, 0, 1.95), -0.05, v3(0, 0, 1));             /* near the rim inside */
  CHECK_SDF(cy, v3(0, 0, 0), -1, v3(1, 0, 0));                     /* centre */
  CHECK_SDF(cy, v3(0.5, 0.5, -1.5), sqrt(0.5) - 1, v3(r2, r2, 0)); /* side vs cap -0.5 */
  geom_shape flat = make_cylinder(1, 0.25);
  CHECK_SDF(flat, v3(0, 0, 0), -0.25, v3(0, 0, 1)); /* centre of a disc: cap */
  CHECK_SDF(flat, v3(0, 0, -0.1), -0.15, v3(0, 0, -1));
  /* non-finite input: NaN, no hang */
  vec3 n;
  CHECK(isnan(geom_shape_sdf(&cy, v3(NAN, 0, 0), &n)));
  CHECK(isnan(geom_shape_sdf(&bx, v3(INFINITY, 0, 0), &n)));
  CHECK(v3_len(n) == 1);
}

static geom_shape test_shapes[] = {
    {GEOM_SPHERE, 0.8, 0, {0, 0, 0}},     {GEOM_BOX, 0, 0, {0.5, 0.9, 0.3}},    {GEOM_CAPSULE, 0.4, 0.7, {0, 0, 0}},
    {GEOM_CYLINDER, 0.6, 0.5, {0, 0, 0}}, {GEOM_CYLINDER, 0.3, 1.1, {0, 0, 0}}, {GEOM_CAPSULE, 0.5, 0, {0, 0, 0}},
};
#define N_TEST_SHAPES ((int)(sizeof test_shapes / sizeof test_shapes[0]))

/* The normal is the gradient of the distance wherever the nearest surface point is unique
 * (medial set excluded: there the normal jumps, detected by comparing normals around p); the
 * gradient has unit length; sdf(p - d n) == 0 for the nearest point. */
TEST(sdf_normal_is_unit_gradient) {
  rng r = {9};
  for (int si = 0; si < N_TEST_SHAPES; si++) {
    const geom_shape *s = &test_shapes[si];
    int checked = 0, skipped = 0;
    for (int it = 0; it < 3000; it++) {
      vec3 p = rng_vec(&r, -1.6, 1.6), n;
      double d = geom_shape_sdf(s, p, &n);
      CHECK_NEAR(v3_len(n), 1, 1e-14);
      int medial = 0;
      for (int k = 0; k < 6 && !medial; k++) {
        vec3 e = v3(k / 2 == 0, k / 2 == 1, k / 2 == 2), m;
        geom_shape_sdf(s, v3_madd(p, e, k % 2 ? 1e-3 : -1e-3), &m);
        if (v3_dist(m, n) > 0.05) medial = 1;
      }
      if (medial) {
        skipped++;
        continue;
      }
      checked++;
      const double h = 1e-6;
      vec3 g = v3(
          (geom_shape_sdf(s, v3_add(p, v3(h, 0, 0)), NULL) - geom_shape_sdf(s, v3_sub(p, v3(h, 0, 0)), NULL)) / (2 * h),
          (geom_shape_sdf(s, v3_add(p, v3(0, h, 0)), NULL) - geom_shape_sdf(s, v3_sub(p, v3(0, h, 0)), NULL)) / (2 * h),
          (geom_shape_sdf(s, v3_add(p, v3(0, 0, h)), NULL) - geom_shape_sdf(s, v3_sub(p, v3(0, 0, h)), NULL)) /
              (2 * h));
      CHECK_MSG(v3_dist(g, n) < 1e-6, "shape %d at (%g %g %g): gradient (%g %g %g) vs normal (%g %g %g)", si, p.x, p.y,
                p.z, g.x, g.y, g.z, n.x, n.y, n.z);
      CHECK_NEAR(v3_len(g), 1, 1e-6);
      /* the nearest surface point is on the surface */
      CHECK_NEAR(geom_shape_sdf(s, v3_madd(p, n, -d), NULL), 0, 1e-12);
    }
    CHECK_MSG(checked > 2500, "shape %d: only %d points away from the medial set (%d skipped)", si, checked, skipped);
  }
}

/* Dense surface samples of each shape. */
static int surface_samples(const geom_shape *s, vec3 *out, int max) {
  int n = 0;
  const int M = 60;
  const double PI = 3.141592653589793;
  for (int i = 0; i <= M && n < max; i++)
    for (int j = 0; j < 2 * M && n < max; j++) {
      double u = (double)i / M, phi = PI * j / M, th = PI * u;
      switch (s->type) {
      case GEOM_SPHERE:
        out[n++] = v3_scale(v3(sin(th) * cos(phi), sin(th) * sin(phi), cos(th)), s->radius);
        break;
      case GEOM_CAPSULE: {
        vec3 q = v3_scale(v3(sin(th) * cos(phi), sin(th) * sin(phi), cos(th)), s->radius);
        q.z += q.z >= 0 ? s->half_h : -s->half_h;
        out[n++] = q;
        out[n++] = v3(s->radius * cos(phi), s->radius * sin(phi), (2 * u - 1) * s->half_h);
        break;
      }
      case GEOM_CYLINDER:
        out[n++] = v3(s->radius * cos(phi), s->radius * sin(phi), (2 * u - 1) * s->half_h);
        out[n++] = v3(u * s->radius * cos(phi), u * s->radius * sin(phi), s->half_h);
        out[n++] = v3(u * s->radius * cos(phi), u * s->radius * sin(phi), -s->half_h);
        break;
      case GEOM_BOX: {
        double a = 2 * u - 1, b = 2.0 * j / (2 * M - 1) - 1;
        vec3 h = s->half;
        vec3 f[6] = {{h.x, a * h.y, b * h.z},  {-h.x, a * h.y, b * h.z}, {a * h.x, h.y, b * h.z},
                     {a * h.x, -h.y, b * h.z}, {a * h.x, b * h.y, h.z},  {a * h.x, b * h.y, -h.z}};
        for (int k = 0; k < 6; k++) out[n++] = f[k];
        break;
      }
      default:
        break;
      }
    }
  return n;
}

TEST(support_maximises_over_surface_and_extent) {
  static vec3 pts[60000];
  rng r = {10};
  for (int si = 0; si < N_TEST_SHAPES; si++) {
    const geom_shape *s = &test_shapes[si];
    int n = surface_samples(s, pts, 60000);
    for (int it = 0; it < 300; it++) {
      vec3 d = rng_vec(&r, -1, 1);
      if (it < 6)
        d = v3(it / 2 == 0 ? (it % 2 ? -1 : 1) : 0, it / 2 == 1 ? (it % 2 ? -1 : 1) : 0,
               it / 2 == 2 ? (it % 2 ? -1 : 1) : 0);
      vec3 sp = geom_shape_support(s, d);
      double best = -INFINITY;
      for (int i = 0; i < n; i++) best = fmax(best, v3_dot(pts[i], d));
      double hs = v3_dot(sp, d);
      CHECK_MSG(hs >= best - 1e-12, "shape %d: support %.17g below a surface sample %.17g", si, hs, best);
      CHECK_MSG(hs <= best + 2e-3 * v3_len(d), "shape %d: support %.17g far above the samples %.17g", si, hs, best);
      CHECK_NEAR(geom_shape_sdf(s, sp, NULL), 0, 1e-12);
    }
    vec3 e = geom_shape_extent(s);
    CHECK_NEAR(geom_shape_support(s, v3(1, 0, 0)).x, e.x, 1e-15);
    CHECK_NEAR(geom_shape_support(s, v3(0, -1, 0)).y, -e.y, 1e-15);
    CHECK_NEAR(geom_shape_support(s, v3(0, 0, 1)).z, e.z, 1e-15);
    for (int i = 0; i < n; i++)
      CHECK(fabs(pts[i].x) <= e.x + 1e-12 && fabs(pts[i].y) <= e.y + 1e-12 && fabs(pts[i].z) <= e.z + 1e-12);
  }
}

/* ---- triangle overlapping a shape ----------------------------------------------------------- */

/* Exact capsule reference: distance between the axis segment and the triangle. */
static double segment_triangle_distance(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c) {
  if (geom_segment_triangle(p0, p1, a, b, c, NULL, NULL)) return 0;
  double best = fmin(v3_dist(p0, geom_closest_on_triangle(p0, a, b, c, NULL)),
                     v3_dist(p1, geom_closest_on_triangle(p1, a, b, c, NULL)));
  vec3 T[3] = {a, b, c};
  for (int i = 0; i < 3; i++) best = fmin(best, sqrt(geom_segment_segment(p0, p1, T[i], T[(i + 1) % 3], NULL, NULL)));
  return best;
}

TEST(triangle_overlaps_shape_matches_sampled_sdf) {
  rng r = {12};
  const int N = 40;
  const double tols[3] = {0, 0.05, 0.2};
  for (int si = 0; si < N_TEST_SHAPES; si++) {
    const geom_shape *s = &test_shapes[si];
    int yes = 0, no = 0;
    for (int it = 0; it < 2500; it++) {
      double size = it % 3 == 0 ? 0.2 : (it % 3 == 1 ? 1.0 : 3.0);
      vec3 ext = geom_shape_extent(s), rp = rng_vec(&r, -1.6, 1.6);
      vec3 ctr = v3(rp.x * ext.x, rp.y * ext.y, rp.z * ext.z);
      vec3 a = v3_add(ctr, rng_vec(&r, -size, size)), b = v3_add(ctr, rng_vec(&r, -size, size));
      vec3 c = v3_add(ctr, rng_vec(&r, -size, size));
      if (it % 17 == 0) c = v3_lerp(a, b, 0.3); /* needles */
      double tol = tols[it % 3];
      int got = geom_triangle_overlaps_shape(s, a, b, c, tol);
      double mins = INFINITY;
      for (int i = 0; i <= N; i++)
        for (int j = 0; i + j <= N; j++) {
          double u = (double)i / N, v = (double)j / N;
          mins = fmin(mins,
                      geom_shape_sdf(s, v3_add(v3_scale(a, 1 - u - v), v3_add(v3_scale(b, u), v3_scale(c, v))), NULL));
        }
      double h = max_edge(a, b, c) / N; /* the SDF is 1-Lipschitz */
      if (mins < -tol - 1e-12) {
        CHECK_MSG(got == 1, "shape %d it %d: sample %.6g deeper than tol %g but no overlap", si, it, mins, tol);
        yes++;
      } else if (mins - h > -tol + 1e-12) {
        CHECK_MSG(got == 0, "shape %d it %d: all samples >= %.6g (> -tol %g + %g) but overlap", si, it, mins, tol, h);
        no++;
      }
      if (s->type == GEOM_CAPSULE) {
        double dd = segment_triangle_distance(v3(0, 0, -s->half_h), v3(0, 0, s->half_h), a, b, c);
        double margin = dd - (s->radius - tol);
        if (fabs(margin) > 1e-9)
          CHECK_MSG(got == (margin < 0), "capsule it %d: distance margin %.3g but got %d", it, margin, got);
      }
      if (s->type == GEOM_SPHERE) {
        double dd = v3_len(geom_closest_on_triangle(v3(0, 0, 0), a, b, c, NULL)) - (s->radius - tol);
        if (fabs(dd) > 1e-12) CHECK_EQ_INT(got, dd < 0);
      }
    }
    CHECK_MSG(yes > 300 && no > 300, "shape %d: %d overlapping, %d separated decided cases", si, yes, no);
  }
}

TEST(triangle_overlaps_shape_edge_cases) {
  geom_shape bx = make_box(1, 1, 1), cy = make_cylinder(1, 1), cp = make_capsule(0.5, 1), sp = make_sphere(1);
  /* a large triangle slicing through the middle: no vertex inside any shape */
  vec3 a = v3(-10, -10, 0.1), b = v3(10, -10, 0.1), c = v3(0, 20, 0.1);
  CHECK(geom_triangle_overlaps_shape(&bx, a, b, c, 0));
  CHECK(geom_triangle_overlaps_shape(&cy, a, b, c, 0.5));
  CHECK(geom_triangle_overlaps_shape(&cp, a, b, c, 0.1));
  CHECK(geom_triangle_overlaps_shape(&sp, a, b, c, 0.5));
  /* tol larger than the shape: nothing is deep enough */
  CHECK(!geom_triangle_overlaps_shape(&bx, a, b, c, 1));
  CHECK(!geom_triangle_overlaps_shape(&cy, a, b, c, 1));
  CHECK(!geom_triangle_overlaps_shape(&cp, a, b, c, 0.5));
  CHECK(!geom_triangle_overlaps_shape(&sp, a, b, c, 1.5));
  /* depth 0.1 into a face: overlaps with tol 0.05, not with 0.15 */
  vec3 d = v3(0.9, -5, -5), e = v3(0.9, 5, -5), f = v3(0.9, 0, 5);
  CHECK(geom_triangle_overlaps_shape(&bx, d, e, f, 0.05) && !geom_triangle_overlaps_shape(&bx, d, e, f, 0.15));
  CHECK(geom_triangle_overlaps_shape(&cy, d, e, f, 0.05) && !geom_triangle_overlaps_shape(&cy, d, e, f, 0.15));
  CHECK(geom_triangle_overlaps_shape(&sp, d, e, f, 0.05) && !geom_triangle_overlaps_shape(&sp, d, e, f, 0.15));
  /* a cylinder rim: a triangle cutting the corner by 0.1 (normal direction (1,0,1)/sqrt2) */
  double k = 1 + 1 - 0.1 * sqrt(2.0); /* plane x + z = k */
  vec3 g = v3(k - 1.2, -3, 1.2), h = v3(k - 1.2, 3, 1.2), i = v3(k + 1.5, 0, -1.5);
  /* deepest point: x = z = k / 2, depth 0.1 / sqrt2 = 0.0707 */
  CHECK(geom_triangle_overlaps_shape(&cy, g, h, i, 0.0));
  CHECK(geom_triangle_overlaps_shape(&cy, g, h, i, 0.069));
  CHECK(!geom_triangle_overlaps_shape(&cy, g, h, i, 0.072));
  /* degenerate triangles: needle through the box, point inside / outside */
  CHECK(geom_triangle_overlaps_shape(&bx, v3(-3, 0.2, 0.3), v3(3, 0.2, 0.3), v3(0, 0.2, 0.3), 0));
  CHECK(geom_triangle_overlaps_shape(&cy, v3(-3, 0.2, 0.3), v3(3, 0.2, 0.3), v3(0, 0.2, 0.3), 0));
  CHECK(geom_triangle_overlaps_shape(&cy, v3(0.2, 0.2, 0.3), v3(0.2, 0.2, 0.3), v3(0.2, 0.2, 0.3), 0));
  CHECK(!geom_triangle_overlaps_shape(&cy, v3(2, 0.2, 0.3), v3(2, 0.2, 0.3), v3(2, 0.2, 0.3), 0));
  /* non-finite input: 0, no hang */
  CHECK(!geom_triangle_overlaps_shape(&cy, v3(NAN, 0, 0), b, c, 0));
  CHECK(!geom_triangle_overlaps_shape(&bx, v3(INFINITY, 0, 0), b, c, 0));
  CHECK(geom_triangle_overlaps_shape(&cp, a, b, c, NAN) == geom_triangle_overlaps_shape(&cp, a, b, c, 0));
}

/* Alternating projections between a segment and a triangle find their nearest points: a segment
 * level with the triangle above it at height h (distance h, the triangle point below the
 * segment), one through it (distance 0), one beside a corner (the corner), a point segment. */
TEST(geom_segment_triangle_nearest_points) {
  const vec3 a = v3(0, 0, 0), b = v3(1, 0, 0), c = v3(0, 1, 0);
  double bary[3];
  vec3 s;
  vec3 t = geom_segment_triangle_nearest(v3(0.1, 0.2, 0.3), v3(0.5, 0.2, 0.3), a, b, c, 8, bary, &s);
  CHECK_NEAR(v3_dist(t, s), 0.3, 1e-12);
  CHECK_NEAR(t.z, 0, 1e-15);
  CHECK_NEAR(bary[0] + bary[1] + bary[2], 1, 1e-12);
  t = geom_segment_triangle_nearest(v3(0.2, 0.2, -1), v3(0.2, 0.2, 1), a, b, c, 8, NULL, &s);
  CHECK_NEAR(v3_dist(t, s), 0, 1e-12);
  CHECK_NEAR(s.x, 0.2, 1e-12);
  t = geom_segment_triangle_nearest(v3(-1, -0.5, 0), v3(-0.5, -1, 0), a, b, c, 8, NULL, &s);
  CHECK_NEAR(v3_dist(t, a), 0, 1e-12);
  CHECK_NEAR(v3_dist(s, v3(-0.75, -0.75, 0)), 0, 1e-12);
  t = geom_segment_triangle_nearest(v3(2, 2, 2), v3(2, 2, 2), a, b, c, 1, NULL, &s);
  CHECK_NEAR(v3_dist(t, v3(0.5, 0.5, 0)), 0, 1e-12);
}
