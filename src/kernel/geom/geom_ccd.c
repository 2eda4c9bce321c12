/* geom_ccd.c — continuous collision detection of point–triangle and edge–edge pairs moving
 * linearly over an interval (Bridson, Fedkiw & Anderson 2002 §6; Provot 1997).
 *
 * Four points x_k + t d_k (t in [0, 1]) are coplanar where
 *   p(t) = (x21 + t d21) x (x31 + t d31) . (x41 + t d41) = c0 + c1 t + c2 t^2 + c3 t^3 = 0,
 * and a point–triangle or edge–edge pair can only meet at such a time. We find every root in
 * [0, 1] in order and keep the first at which the two features are within eta of each other.
 *
 * Robustness, where the plain recipe fails:
 *   - the interval is split at the critical points of p (roots of p', solved in the stable form),
 *     so each piece is monotone and a sign change means exactly one root, found by bisection to
 *     the last bit — no Newton step can jump over a root;
 *   - |p| below a bound of its rounding error counts as zero, at the ends of the interval
 *     (a pair that touches at t = 0 or t = 1) and at critical points (a grazing, double root
 *     that rounding would turn into "no root");
 *   - when all four coefficients are below that bound the motion is coplanar throughout: the
 *     pair is then tested at nine evenly spaced times (an in-plane crossing between them is left
 *     to the proximity pass, which keeps such pairs apart by the thickness).
 * The inside test at a root uses distances (closest points), not signs, with tolerance eta: a
 * point crossing the plane outside the triangle, or edges that become coplanar without meeting,
 * stay more than eta apart and are not reported. */
#include <float.h>

#include "geom/geom.h"

static double poly(const double c[4], double t) { return ((c[3] * t + c[2]) * t + c[1]) * t + c[0]; }

void geom_coplanarity_cubic(const vec3 x[4], const vec3 d[4], double c[4], double *err) {
  const vec3 a = v3_sub(x[1], x[0]), b = v3_sub(x[2], x[0]), e = v3_sub(x[3], x[0]);
  const vec3 da = v3_sub(d[1], d[0]), db = v3_sub(d[2], d[0]), de = v3_sub(d[3], d[0]);
  const vec3 ab = v3_cross(a, b), mix = v3_add(v3_cross(a, db), v3_cross(da, b)), dd = v3_cross(da, db);
  c[0] = v3_dot(ab, e);
  c[1] = v3_dot(ab, de) + v3_dot(mix, e);
  c[2] = v3_dot(mix, de) + v3_dot(dd, e);
  c[3] = v3_dot(dd, de);
  if (err) {
    /* |p(t)| <= (|a|+|da|)(|b|+|db|)(|e|+|de|) on [0, 1]; the rounding of the coefficients and of
     * Horner's evaluation is a few dozen ulps of that */
    const double bound = (v3_len(a) + v3_len(da)) * (v3_len(b) + v3_len(db)) * (v3_len(e) + v3_len(de));
    *err = 64 * DBL_EPSILON * bound;
  }
}

/* Roots of 3 c3 t^2 + 2 c2 t + c1 strictly inside (0, 1), ascending; returns how many. */
static int critical_points(const double c[4], double r[2]) {
  const double A = 3 * c[3], B = 2 * c[2], C = c[1];
  double t[2];
  int n = 0;
  if (A == 0) {
    if (B != 0) t[n++] = -C / B;
  } else {
    const double disc = B * B - 4 * A * C;
    if (disc >= 0) {
      const double q = -0.5 * (B + copysign(sqrt(disc), B)); /* no cancellation */
      t[n++] = q / A;
      if (q != 0) t[n++] = C / q;
    }
  }
  int k = 0;
  for (int i = 0; i < n; i++)
    if (t[i] > 0 && t[i] < 1 && isfinite(t[i])) r[k++] = t[i];
  if (k == 2 && r[0] > r[1]) {
    const double s = r[0];
    r[0] = r[1];
    r[1] = s;
  }
  return k;
}

static void add_root(double *out, int *n, double t) {
  if (*n > 0 && out[*n - 1] >= t) return; /* ascending, no repeats */
  out[(*n)++] = t;
}

int geom_cubic_roots01(const double c[4], double tol, double out[GEOM_CUBIC_MAX_ROOTS]) {
  for (int i = 0; i < 4; i++)
    if (!isfinite(c[i])) return 0;
  if (!(tol >= 0)) tol = 0;
  double knots[4];
  int nk = 0;
  knots[nk++] = 0;
  double cp[2];
  const int ncp = critical_points(c, cp);
  for (int i = 0; i < ncp; i++) knots[nk++] = cp[i];
  knots[nk++] = 1;
  int n = 0;
  for (int k = 0; k + 1 < nk; k++) {
    double lo = knots[k], hi = knots[k + 1];
    double plo = poly(c, lo), phi = poly(c, hi);
    if (fabs(plo) <= tol) {
      add_root(out, &n, lo);
      continue; /* a zero at a knot: the piece's only root when p is monotone on it */
    }
    if (fabs(phi) <= tol) continue; /* the next piece (or the end) reports it */
    if ((plo < 0) == (phi < 0)) continue;
    /* exactly one sign change on a monotone piece, narrowed to adjacent doubles: regula falsi with
     * the Illinois rule (the end that stays has its value halved, so neither end sticks), a
     * bisection whenever the secant's point is not strictly inside or the bracket did not halve
     * over two steps. The bracket keeps the sign change, as bisection alone did, in about a third
     * of its 53 evaluations (a fast-turning impact zone spent 45 % of its step here). */
    double flo = plo, fhi = phi;
    int stay = 0; /* -1: lo stayed last time, 1: hi did */
    double width = hi - lo;
    for (int it = 0; it < 200; it++) {
      const double mid = 0.5 * (lo + hi);
      if (mid <= lo || mid >= hi) break;
      double x = lo + (hi - lo) * (flo / (flo - fhi));
      if ((it & 1) && hi - lo > 0.5 * width) x = mid; /* (slow progress) */
      if (it & 1) width = hi - lo;
      if (!(x > lo && x < hi)) x = mid;
      const double px = poly(c, x);
      if (px == 0) {
        lo = hi = x;
        break;
      }
      if ((px < 0) == (plo < 0)) {
        lo = x, flo = px;
        if (stay == 1) fhi *= 0.5;
        stay = 1;
      } else {
        hi = x, fhi = px;
        if (stay == -1) flo *= 0.5;
        stay = -1;
      }
    }
    add_root(out, &n, lo);
  }
  if (fabs(poly(c, 1)) <= tol) add_root(out, &n, 1);
  return n;
}

/* Positions at time t. */
static void at_time(const vec3 x[4], const vec3 d[4], double t, vec3 y[4]) {
  for (int k = 0; k < 4; k++) y[k] = v3_madd(x[k], d[k], t);
}

/* Distance of the pair at positions y, with weights (relative point = sum w_k y_k). */
static double pair_distance(int edge_edge, const vec3 y[4], double w[4]) {
  if (edge_edge) {
    double s, u;
    const double d2 = geom_segment_segment(y[0], y[1], y[2], y[3], &s, &u);
    w[0] = 1 - s, w[1] = s, w[2] = -(1 - u), w[3] = -u;
    return sqrt(d2);
  }
  double b[3];
  const vec3 q = geom_closest_on_triangle(y[3], y[0], y[1], y[2], b);
  w[0] = -b[0], w[1] = -b[1], w[2] = -b[2], w[3] = 1;
  return v3_dist(q, y[3]);
}

static vec3 weighted(const double w[4], const vec3 y[4]) {
  vec3 r = v3(0, 0, 0);
  for (int k = 0; k < 4; k++) r = v3_madd(r, y[k], w[k]);
  return r;
}

/* The contact normal at the time of impact: the plane's normal (triangle normal, or the cross
 * product of the edges), turned to the side the first feature started on; where that is not
 * defined, against the relative motion. */
static vec3 impact_normal(int edge_edge, const vec3 x[4], const vec3 d[4], const vec3 y[4], const double w[4],
                          double p0) {
  vec3 n = edge_edge ? v3_cross(v3_sub(y[1], y[0]), v3_sub(y[3], y[2])) : v3_cross(v3_sub(y[1], y[0]), v3_sub(y[2], y[0]));
  double len = v3_len(n);
  if (!(len > 1e-12 * (v3_len2(v3_sub(y[1], y[0])) + v3_len2(v3_sub(y[2], y[0]))))) {
    /* degenerate plane: the direction between the features at the start, else against the motion */
    n = weighted(w, x);
    len = v3_len(n);
    if (!(len > 0)) {
      n = v3_neg(weighted(w, d));
      len = v3_len(n);
    }
    return len > 0 ? v3_scale(n, 1 / len) : v3(0, 0, 1);
  }
  n = v3_scale(n, 1 / len);
  /* side at the start: for point–triangle sign(p(0)) is the point's side of this very normal;
   * for edges, the side of the start separation along it */
  double side = edge_edge ? v3_dot(weighted(w, x), n) : p0;
  if (side == 0) side = -v3_dot(weighted(w, d), n); /* started in the plane: against the approach */
  return side < 0 ? v3_neg(n) : n;
}

static int ccd(int edge_edge, const vec3 x[4], const vec3 d[4], double eta, geom_ccd_hit *hit) {
  for (int k = 0; k < 4; k++)
    if (!v3_isfinite(x[k]) || !v3_isfinite(d[k])) return 0;
  double c[4], err;
  geom_coplanarity_cubic(x, d, c, &err);
  double roots[9];
  int nr = 0;
  if (fabs(c[0]) <= err && fabs(c[1]) <= err && fabs(c[2]) <= err && fabs(c[3]) <= err) {
    for (int i = 0; i <= 8; i++) roots[nr++] = i / 8.0; /* coplanar motion */
  } else {
    nr = geom_cubic_roots01(c, err, roots); /* knots include the critical points: grazing roots */
  }
  for (int i = 0; i < nr; i++) {
    vec3 y[4];
    double w[4];
    at_time(x, d, roots[i], y);
    const double dist = pair_distance(edge_edge, y, w);
    if (dist <= eta) {
      if (hit) {
        hit->t = roots[i];
        for (int k = 0; k < 4; k++) hit->w[k] = w[k];
        hit->n = impact_normal(edge_edge, x, d, y, w, c[0]);
        hit->distance = dist;
      }
      return 1;
    }
  }
  return 0;
}

int geom_ccd_point_triangle(const vec3 x[4], const vec3 d[4], double eta, geom_ccd_hit *hit) {
  return ccd(0, x, d, eta, hit);
}

int geom_ccd_edge_edge(const vec3 x[4], const vec3 d[4], double eta, geom_ccd_hit *hit) {
  return ccd(1, x, d, eta, hit);
}

double geom_proximity(int edge_edge, const vec3 y[4], double w[4], vec3 *n) {
  const double dist = pair_distance(edge_edge, y, w);
  if (n) {
    vec3 r = weighted(w, y);
    if (dist > 0 && v3_len(r) > 0) {
      *n = v3_scale(r, 1 / v3_len(r));
    } else {
      /* touching: the plane's normal (either side; the caller orients it by the motion) */
      vec3 m = edge_edge ? v3_cross(v3_sub(y[1], y[0]), v3_sub(y[3], y[2])) : v3_cross(v3_sub(y[1], y[0]), v3_sub(y[2], y[0]));
      *n = v3_len(m) > 0 ? v3_scale(m, 1 / v3_len(m)) : v3(0, 0, 1);
    }
  }
  return dist;
}
