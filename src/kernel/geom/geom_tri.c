/* geom_tri.c — closest points and intersections of points, segments and triangles.
 *
 * Distances are computed in plain doubles. Every yes/no intersection answer is decided by the
 * signs of exact orientation predicates (geom_predicates.c), so that the answers of neighbouring
 * triangles fit together: a segment through an edge or vertex shared by several triangles is
 * reported by every triangle it touches (all of them are closed), never by none; swapping or
 * permuting triangles never changes a triangle-triangle answer. */
#include <stddef.h>

#include "geom/geom.h"

static inline double clamp01(double x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }
static inline int sgn(double x) { return (x > 0) - (x < 0); }

/* ---- closest points ------------------------------------------------------------------------ */

vec3 geom_closest_on_segment(vec3 p, vec3 a, vec3 b, double *t) {
  vec3 ab = v3_sub(b, a);
  double l2 = v3_len2(ab);
  double s = l2 > 0 ? clamp01(v3_dot(v3_sub(p, a), ab) / l2) : 0;
  if (t) *t = s;
  return v3_madd(a, ab, s);
}

static void set_bary(double bary[3], double u, double v, double w) {
  if (!bary) return;
  bary[0] = u;
  bary[1] = v;
  bary[2] = w;
}

/* Degenerate (needle or point) triangles: the best of the three edges. The triangle lies within
 * its height of its longest edge, so this is as accurate as the height is small. */
static vec3 closest_on_edges(vec3 p, vec3 a, vec3 b, vec3 c, double bary[3]) {
  double t0, t1, t2;
  vec3 q0 = geom_closest_on_segment(p, a, b, &t0);
  vec3 q1 = geom_closest_on_segment(p, b, c, &t1);
  vec3 q2 = geom_closest_on_segment(p, c, a, &t2);
  double d0 = v3_dist2(p, q0), d1 = v3_dist2(p, q1), d2 = v3_dist2(p, q2);
  if (d0 <= d1 && d0 <= d2) {
    set_bary(bary, 1 - t0, t0, 0);
    return q0;
  }
  if (d1 <= d2) {
    set_bary(bary, 0, 1 - t1, t1);
    return q1;
  }
  set_bary(bary, t2, 0, 1 - t2);
  return q2;
}

vec3 geom_closest_on_triangle(vec3 p, vec3 a, vec3 b, vec3 c, double bary[3]) {
  vec3 ab = v3_sub(b, a), ac = v3_sub(c, a);
  vec3 n = v3_cross(ab, ac);
  double n2 = v3_len2(n);
  double l2 = fmax(fmax(v3_len2(ab), v3_len2(ac)), v3_dist2(b, c));
  /* Thinness |n| / l2 below 1e-8: the face formulas lose about eps / thinness of accuracy while
   * the edge fallback is off by at most the height (thinness * longest edge), so switch where
   * both are about sqrt(eps). Also catches collinear and point triangles (n2 == 0) and NaN. */
  if (!(n2 > 1e-16 * l2 * l2)) return closest_on_edges(p, a, b, c, bary);

  /* Ericson, Real-Time Collision Detection §5.1.5: Voronoi regions of vertices, then edges. */
  vec3 ap = v3_sub(p, a);
  double d1 = v3_dot(ab, ap), d2 = v3_dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) {
    set_bary(bary, 1, 0, 0);
    return a;
  }
  vec3 bp = v3_sub(p, b);
  double d3 = v3_dot(ab, bp), d4 = v3_dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) {
    set_bary(bary, 0, 1, 0);
    return b;
  }
  double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    double v = d1 - d3 > 0 ? d1 / (d1 - d3) : 0;
    set_bary(bary, 1 - v, v, 0);
    return v3_madd(a, ab, v);
  }
  vec3 cp = v3_sub(p, c);
  double d5 = v3_dot(ab, cp), d6 = v3_dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) {
    set_bary(bary, 0, 0, 1);
    return c;
  }
  double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    double w = d2 - d6 > 0 ? d2 / (d2 - d6) : 0;
    set_bary(bary, 1 - w, 0, w);
    return v3_madd(a, ac, w);
  }
  double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    double den = (d4 - d3) + (d5 - d6);
    double w = den > 0 ? (d4 - d3) / den : 0;
    set_bary(bary, 0, 1 - w, w);
    return v3_madd(b, v3_sub(c, b), w);
  }
  /* Face region. Ericson's vb / (va + vb + vc) cancels badly on thin triangles; projecting onto
   * the plane first and taking barycentrics as ratios of cross products keeps the error near
   * eps / thinness instead of eps / thinness^2. */
  vec3 q = v3_madd(p, n, -v3_dot(n, ap) / n2);
  vec3 aq = v3_sub(q, a);
  double v = fmax(v3_dot(n, v3_cross(aq, ac)) / n2, 0);
  double w = fmax(v3_dot(n, v3_cross(ab, aq)) / n2, 0);
  if (v + w > 1) {
    double s = v + w;
    v /= s;
    w /= s;
  }
  set_bary(bary, fmax(1 - v - w, 0), v, w);
  return v3_add(a, v3_add(v3_scale(ab, v), v3_scale(ac, w)));
}

vec3 geom_segment_triangle_nearest(vec3 s0, vec3 s1, vec3 a, vec3 b, vec3 c, int rounds, double bary[3], vec3 *on_seg) {
  vec3 cs = geom_closest_on_segment(v3_scale(v3_add(a, v3_add(b, c)), 1.0 / 3), s0, s1, NULL), pt = cs;
  for (int it = 0; it < rounds; it++) {
    pt = geom_closest_on_triangle(cs, a, b, c, bary);
    cs = geom_closest_on_segment(pt, s0, s1, NULL);
  }
  *on_seg = cs;
  return pt;
}

double geom_segment_segment(vec3 p0, vec3 p1, vec3 q0, vec3 q1, double *s_out, double *t_out) {
  /* Ericson, Real-Time Collision Detection §5.1.9 (closest points of two segments). */
  vec3 d1 = v3_sub(p1, p0), d2 = v3_sub(q1, q0), r = v3_sub(p0, q0);
  double a = v3_len2(d1), e = v3_len2(d2), f = v3_dot(d2, r);
  double s, t;
  if (a == 0 && e == 0) {
    s = t = 0;
  } else if (a == 0) {
    s = 0;
    t = clamp01(f / e);
  } else {
    double c = v3_dot(d1, r);
    if (e == 0) {
      t = 0;
      s = clamp01(-c / a);
    } else {
      double b = v3_dot(d1, d2);
      double denom = a * e - b * b;
      /* Parallel (denom <= 0 after rounding): any s is a valid start, the clamped re-projections
       * below then give the true distance. Nearly parallel: s is noisy but the distance varies
       * at most |d1| sin(angle) along the valley, so the distance stays accurate. */
      s = denom > 0 ? clamp01((b * f - c * e) / denom) : 0;
      double tn = b * s + f;
      if (tn < 0) {
        t = 0;
        s = clamp01(-c / a);
      } else if (tn > e) {
        t = 1;
        s = clamp01((b - c) / a);
      } else {
        t = tn / e;
      }
    }
  }
  if (s_out) *s_out = s;
  if (t_out) *t_out = t;
  return v3_dist2(v3_madd(p0, d1, s), v3_madd(q0, d2, t));
}

/* ---- segment / ray against triangle ------------------------------------------------------ */

/* Shared tail of the segment and ray tests: the line's orientations about the three edges
 * (exact signs) must not disagree; zero means the line meets that edge's line. Fills bary. */
static int edges_agree(double eab, double ebc, double eca, double bary[3]) {
  int s1 = sgn(eab), s2 = sgn(ebc), s3 = sgn(eca);
  if (s1 * s2 < 0 || s2 * s3 < 0 || s1 * s3 < 0) return 0;
  if (bary) {
    /* The volume opposite a vertex is proportional to that vertex's barycentric weight. */
    double sum = eab + ebc + eca;
    if (sum != 0) {
      bary[0] = clamp01(ebc / sum);
      bary[1] = clamp01(eca / sum);
      bary[2] = clamp01(eab / sum);
    } else {
      bary[0] = bary[1] = bary[2] = 1.0 / 3.0;
    }
  }
  return 1;
}

int geom_segment_triangle(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c, double *t, double bary[3]) {
  /* Signed volumes as in the orient3d formulation of the segment-triangle test (Shewchuk's
   * predicates; cf. Ericson §5.3.6 scalar triple products). Exact signs make the test
   * consistent across triangles that share the edge or vertex the segment goes through. */
  double o0 = geom_orient3d(a, b, c, p0), o1 = geom_orient3d(a, b, c, p1);
  if (isnan(o0) || isnan(o1)) return 0;
  int s0 = sgn(o0), s1 = sgn(o1);
  if (s0 * s1 > 0) return 0;
  if (s0 == 0 && s1 == 0) return 0; /* coplanar, or a degenerate triangle */
  double eab = geom_orient3d(p0, p1, a, b);
  double ebc = geom_orient3d(p0, p1, b, c);
  if (sgn(eab) * sgn(ebc) < 0) return 0;
  double eca = geom_orient3d(p0, p1, c, a);
  if (!edges_agree(eab, ebc, eca, bary)) return 0;
  if (t) *t = clamp01(o0 / (o0 - o1)); /* o0 - o1 != 0: not both zero, not the same sign */
  return 1;
}

double geom_segment_triangle_closest(vec3 s0, vec3 s1, vec3 a, vec3 b, vec3 c, double bary[3], double *t) {
  double w[3], u;
  /* through the plane: the crossing point, when it lies on the triangle. On a sliver the plane,
   * and so the crossing parameter, is ill-defined: a point found off the triangle leaves the
   * answer to the edges below, which are then the nearest parts (as they are for a segment that
   * misses the triangle or lies in its plane). */
  const vec3 n = v3_cross(v3_sub(b, a), v3_sub(c, a));
  const double h0 = v3_dot(n, v3_sub(s0, a)), h1 = v3_dot(n, v3_sub(s1, a));
  if ((h0 <= 0 && h1 >= 0) || (h0 >= 0 && h1 <= 0)) {
    u = h0 != h1 ? h0 / (h0 - h1) : 0;
    const vec3 x = v3_lerp(s0, s1, u);
    const double tiny = 1e-10 * (v3_dist(s0, s1) + v3_dist(a, b) + v3_dist(a, c));
    if (v3_dist2(x, geom_closest_on_triangle(x, a, b, c, w)) <= tiny * tiny) {
      if (bary) set_bary(bary, w[0], w[1], w[2]);
      if (t) *t = u;
      return 0;
    }
  }
  /* the segment against the edges ab, bc, ca */
  double best = INFINITY, bu = 0, bw[3] = {1, 0, 0};
  const vec3 corner[3] = {a, b, c};
  for (int k = 0; k < 3; k++) {
    double s;
    const double d = geom_segment_segment(corner[k], corner[(k + 1) % 3], s0, s1, &s, &u);
    if (!(d < best)) continue;
    best = d, bu = u;
    bw[k] = 1 - s, bw[(k + 1) % 3] = s, bw[(k + 2) % 3] = 0;
  }
  /* the end points against the face, where their distance to its plane leaves them a chance */
  const double n2 = v3_len2(n);
  const double hs[2] = {h0, h1};
  const vec3 ends[2] = {s0, s1};
  for (int e = 0; e < 2; e++) {
    if (n2 > 0 && !(hs[e] * hs[e] < best * n2)) continue;
    const double d = v3_dist2(ends[e], geom_closest_on_triangle(ends[e], a, b, c, w));
    if (!(d < best)) continue;
    best = d, bu = e;
    bw[0] = w[0], bw[1] = w[1], bw[2] = w[2];
  }
  if (bary) set_bary(bary, bw[0], bw[1], bw[2]);
  if (t) *t = bu;
  return best;
}

int geom_ray_triangle(vec3 origin, vec3 dir, vec3 a, vec3 b, vec3 c, double *s) {
  /* Same volumes with the second point replaced by the direction, so that no rounded point
   * origin + dir enters the predicates: det[b - a; c - a; dir] = n . dir and
   * det[dir; a - o; b - o] = orient3d(o, o + dir, a, b). */
  vec3 zero = {0, 0, 0};
  double oo = geom_orient3d(a, b, c, origin);
  double dn = geom_det3_diff(b, a, c, a, dir, zero);
  if (isnan(oo) || isnan(dn)) return 0;
  if (dn == 0) return 0;               /* parallel to the plane, or coplanar, or degenerate */
  if (sgn(oo) * sgn(dn) > 0) return 0; /* plane is behind the origin */
  double eab = geom_det3_diff(dir, zero, a, origin, b, origin);
  double ebc = geom_det3_diff(dir, zero, b, origin, c, origin);
  if (sgn(eab) * sgn(ebc) < 0) return 0;
  double eca = geom_det3_diff(dir, zero, c, origin, a, origin);
  if (!edges_agree(eab, ebc, eca, NULL)) return 0;
  if (s) *s = fmax(-oo / dn, 0);
  return 1;
}

/* ---- triangle against triangle ------------------------------------------------------------- */

/* Drops coordinate k (cyclic order keeps the orientation of the projected plane consistent
 * with the sign of the normal's k component). */
static vec3 drop_axis(vec3 p, int k) {
  if (k == 0) return v3(p.y, p.z, 0);
  if (k == 1) return v3(p.z, p.x, 0);
  return v3(p.x, p.y, 0);
}

static int dominant_axis(vec3 n) {
  double ax = fabs(n.x), ay = fabs(n.y), az = fabs(n.z);
  if (ax >= ay && ax >= az) return 0;
  return ay >= az ? 1 : 2;
}

/* Exactly collinear (or coincident) points: zero area in all three coordinate projections. */
static int collinear3(vec3 a, vec3 b, vec3 c) {
  for (int k = 0; k < 3; k++)
    if (geom_orient2d(drop_axis(a, k), drop_axis(b, k), drop_axis(c, k)) != 0) return 0;
  return 1;
}

/* x within the bounding box of pq (given that it is on pq's line): exact comparisons. */
static int in_box2(vec3 p, vec3 q, vec3 x) {
  return fmin(p.x, q.x) <= x.x && x.x <= fmax(p.x, q.x) && fmin(p.y, q.y) <= x.y && x.y <= fmax(p.y, q.y);
}

/* Closed 2D segments pq and rs (z ignored) intersect; zero-length segments allowed. */
static int seg2d_intersect(vec3 p, vec3 q, vec3 r, vec3 s) {
  if (fmax(p.x, q.x) < fmin(r.x, s.x) || fmax(r.x, s.x) < fmin(p.x, q.x) || fmax(p.y, q.y) < fmin(r.y, s.y) ||
      fmax(r.y, s.y) < fmin(p.y, q.y))
    return 0;
  int o1 = sgn(geom_orient2d(p, q, r)), o2 = sgn(geom_orient2d(p, q, s));
  int o3 = sgn(geom_orient2d(r, s, p)), o4 = sgn(geom_orient2d(r, s, q));
  if (o1 * o2 < 0 && o3 * o4 < 0) return 1;
  return (o1 == 0 && in_box2(p, q, r)) || (o2 == 0 && in_box2(p, q, s)) || (o3 == 0 && in_box2(r, s, p)) ||
         (o4 == 0 && in_box2(r, s, q));
}

/* x in the closed 2D triangle t whose orientation sign is `area_sign` (non-zero). */
static int in_tri2d(const vec3 t[3], int area_sign, vec3 x) {
  for (int i = 0; i < 3; i++)
    if (sgn(geom_orient2d(t[i], t[(i + 1) % 3], x)) * area_sign < 0) return 0;
  return 1;
}

/* Closed convex hulls of P and Q (2D, z ignored; either may be degenerate) intersect.
 * *faithful is set when one of them has non-zero area. */
static int tri2d_intersect(const vec3 P[3], const vec3 Q[3], int *faithful) {
  int ap = sgn(geom_orient2d(P[0], P[1], P[2])), aq = sgn(geom_orient2d(Q[0], Q[1], Q[2]));
  *faithful = ap != 0 || aq != 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      if (seg2d_intersect(P[i], P[(i + 1) % 3], Q[j], Q[(j + 1) % 3])) return 1;
  /* No boundaries cross: either disjoint or one inside the other. */
  if (aq != 0 && in_tri2d(Q, aq, P[0])) return 1;
  if (ap != 0 && in_tri2d(P, ap, Q[0])) return 1;
  return 0;
}

/* All six points lie in one plane (exactly). A projection along axis k maps that plane
 * one-to-one iff the normal's k component is non-zero, i.e. iff a non-degenerate triangle keeps
 * a non-zero projected area. Any projection of intersecting sets intersects, so a "no" from any
 * axis is final, and a "yes" from a one-to-one axis is final; when neither triangle has area
 * (both are segments or points) the AND over the three axes is exact because at least one axis
 * is one-to-one on the common line or plane. */
static int tri_tri_coplanar(const vec3 A[3], const vec3 B[3]) {
  vec3 na = v3_cross(v3_sub(A[1], A[0]), v3_sub(A[2], A[0]));
  vec3 nb = v3_cross(v3_sub(B[1], B[0]), v3_sub(B[2], B[0]));
  int k0 = dominant_axis(v3_len2(na) >= v3_len2(nb) ? na : nb);
  for (int i = 0; i < 3; i++) {
    int k = (k0 + i) % 3;
    vec3 P[3], Q[3];
    for (int j = 0; j < 3; j++) {
      P[j] = drop_axis(A[j], k);
      Q[j] = drop_axis(B[j], k);
    }
    int faithful;
    if (!tri2d_intersect(P, Q, &faithful)) return 0;
    if (faithful) return 1;
  }
  return 1;
}

/* Index of two distinct points among T (exact comparison); 0 if all three coincide. */
static int distinct_pair(const vec3 T[3], vec3 *p, vec3 *q) {
  for (int i = 0; i < 3; i++) {
    vec3 u = T[i], w = T[(i + 1) % 3];
    if (u.x != w.x || u.y != w.y || u.z != w.z) {
      *p = u;
      *q = w;
      return 1;
    }
  }
  return 0;
}

/* The vertex the plane separates from the other two (they lie in the closed opposite half
 * space), with its side. If the pattern is "one vertex on the plane, two strictly on one side",
 * that vertex is returned with the side opposite to the others: the interval is the vertex. */
static void pick_alone(const int s[3], int *alone, int *side) {
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3, k = (i + 2) % 3;
    if (s[i] != 0 && s[j] != s[i] && s[k] != s[i]) {
      *alone = i;
      *side = s[i];
      return;
    }
  }
  for (int i = 0; i < 3; i++) {
    if (s[i] == 0) {
      *alone = i;
      *side = -s[(i + 1) % 3];
      return;
    }
  }
  *alone = 0; /* unreachable for the sign patterns the caller passes */
  *side = 1;
}

/* Both triangles non-degenerate, planes crossing, each triangle meeting the other's plane.
 * Moller 1997 ("A fast triangle-triangle intersection test"): T1 and T2 meet the line
 * L = plane1 ∩ plane2 in intervals I1, I2, and they intersect iff I1 and I2 overlap. Instead of
 * computing the interval ends in floating point we compare them with exact orientation signs,
 * as Guigue & Devillers 2003 ("Fast and robust triangle-triangle overlap test using orientation
 * predicates") observed is possible. Derivation (D = n1 x n2 parametrises L by lambda = D . x):
 * with a0 alone on side sigma1 of plane 2, I1 = [X(a0 a2), X(a0 a1)] for sigma1 > 0 and reversed
 * for sigma1 < 0 (X(e) = edge e ∩ plane 2), because a0 a1 a2 turns counter-clockwise about n1 and
 * D is n2's in-plane part turned by +90 degrees; likewise I2 = [Y(b0 b1), Y(b0 b2)] for
 * sigma2 > 0 since D = -(n2 x n1). For X on edge pq and Y on edge rs, orient3d(p, q, r, s) =
 * (lambda(Y) - lambda(X)) / |D|^2 * det[D, s - r, q - p], and the last factor has the sign
 * sigma1 * sigma2 (q - p points away from a0's side, s - r away from b0's side). */
static int tri_tri_transversal(const vec3 A[3], const int sa[3], const vec3 B[3], const int sb[3]) {
  int ia, ib, sigma1, sigma2;
  pick_alone(sa, &ia, &sigma1);
  pick_alone(sb, &ib, &sigma2);
  vec3 a0 = A[ia], a1 = A[(ia + 1) % 3], a2 = A[(ia + 2) % 3];
  vec3 b0 = B[ib], b1 = B[(ib + 1) % 3], b2 = B[(ib + 2) % 3];
  vec3 q_lo = sigma1 > 0 ? a2 : a1, q_hi = sigma1 > 0 ? a1 : a2;
  vec3 s_lo = sigma2 > 0 ? b1 : b2, s_hi = sigma2 > 0 ? b2 : b1;
  int sigma = sigma1 * sigma2;
  /* lo1 <= hi2 */
  if (sigma * sgn(geom_orient3d(a0, q_lo, b0, s_hi)) < 0) return 0;
  /* lo2 <= hi1 */
  if (sigma * sgn(geom_orient3d(a0, q_hi, b0, s_lo)) > 0) return 0;
  return 1;
}

int geom_tri_tri_intersect(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2) {
  vec3 A[3] = {a0, a1, a2}, B[3] = {b0, b1, b2};
  int sa[3], sb[3];
  for (int i = 0; i < 3; i++) {
    double v = geom_orient3d(a0, a1, a2, B[i]);
    if (isnan(v)) return 0;
    sb[i] = sgn(v);
  }
  /* Moller 1997 step 1: all of T2 strictly on one side of plane 1. */
  if (sb[0] == sb[1] && sb[1] == sb[2] && sb[0] != 0) return 0;
  for (int i = 0; i < 3; i++) {
    double v = geom_orient3d(b0, b1, b2, A[i]);
    if (isnan(v)) return 0;
    sa[i] = sgn(v);
  }
  if (sa[0] == sa[1] && sa[1] == sa[2] && sa[0] != 0) return 0;
  int za = sa[0] == 0 && sa[1] == 0 && sa[2] == 0;
  int zb = sb[0] == 0 && sb[1] == 0 && sb[2] == 0;
  if (!za && !zb) return tri_tri_transversal(A, sa, B, sb);
  if (za && zb) {
    /* Coplanar, or both degenerate (then they may still be skew). */
    if (collinear3(a0, a1, a2) && collinear3(b0, b1, b2)) {
      vec3 p, q, r, s;
      if (distinct_pair(A, &p, &q) && distinct_pair(B, &r, &s) && geom_orient3d(p, q, r, s) != 0) return 0;
    }
    return tri_tri_coplanar(A, B);
  }
  /* zb only: orient(A, .) vanishes on B but B's plane is not A's, so A is degenerate (a segment
   * or point) that is not in B's plane; it meets B iff one of its edges does (none of them lies
   * in B's plane). za only: the mirror case. */
  const vec3 *S = zb ? A : B, *T = zb ? B : A;
  for (int i = 0; i < 3; i++)
    if (geom_segment_triangle(S[i], S[(i + 1) % 3], T[0], T[1], T[2], NULL, NULL)) return 1;
  return 0;
}

/* Coplanar triangles (s, a1, a2) and (s, b1, b2), both non-degenerate: their interiors meet iff
 * the open angular sectors at s meet (each triangle lies in its sector and fills it near s).
 * Two convex sectors with a common apex are disjoint iff the line of one of the four boundary
 * rays has one sector on each (closed) side. */
static int shared_vertex_coplanar(vec3 s, vec3 a1, vec3 a2, vec3 b1, vec3 b2) {
  vec3 n = v3_cross(v3_sub(a1, s), v3_sub(a2, s));
  int k0 = dominant_axis(n);
  for (int i = 0; i < 3; i++) {
    int k = (k0 + i) % 3;
    vec3 S = drop_axis(s, k), A1 = drop_axis(a1, k), A2 = drop_axis(a2, k);
    vec3 B1 = drop_axis(b1, k), B2 = drop_axis(b2, k);
    int sa = sgn(geom_orient2d(S, A1, A2));
    if (sa == 0) continue; /* this projection is not one-to-one on the plane */
    int sb = sgn(geom_orient2d(S, B1, B2));
    if (sa * sgn(geom_orient2d(S, A1, B1)) <= 0 && sa * sgn(geom_orient2d(S, A1, B2)) <= 0) return 0;
    if (sa * sgn(geom_orient2d(S, A2, B1)) >= 0 && sa * sgn(geom_orient2d(S, A2, B2)) >= 0) return 0;
    if (sb * sgn(geom_orient2d(S, B1, A1)) <= 0 && sb * sgn(geom_orient2d(S, B1, A2)) <= 0) return 0;
    if (sb * sgn(geom_orient2d(S, B2, A1)) >= 0 && sb * sgn(geom_orient2d(S, B2, A2)) >= 0) return 0;
    return 1;
  }
  return 0; /* unreachable: a non-degenerate triangle has area in some projection */
}

int geom_tri_tri_shared_vertex(vec3 s, vec3 a1, vec3 a2, vec3 b1, vec3 b2) {
  /* A degenerate triangle through s either leaves the other's plane at s (meets it only there)
   * or lies in it with zero area: never an intersection in the sense of this test. */
  if (collinear3(s, a1, a2) || collinear3(s, b1, b2)) return 0;
  double da1 = geom_orient3d(s, b1, b2, a1), da2 = geom_orient3d(s, b1, b2, a2);
  if (isnan(da1) || isnan(da2)) return 0;
  if (da1 == 0 && da2 == 0) return shared_vertex_coplanar(s, a1, a2, b1, b2);
  if (sgn(da1) * sgn(da2) > 0) return 0; /* T1 minus s strictly on one side of plane 2 */
  double db1 = geom_orient3d(s, a1, a2, b1), db2 = geom_orient3d(s, a1, a2, b2);
  if (sgn(db1) * sgn(db2) > 0) return 0;
  /* Not coplanar: T1 ∩ T2 is a segment of plane1 ∩ plane2 starting at s; if it is longer than
   * a point, its far end lies on a far edge (a1 a2 or b1 b2) and inside the other triangle.
   * Neither far edge lies in the other plane here, so the segment test applies. */
  return geom_segment_triangle(a1, a2, s, b1, b2, NULL, NULL) || geom_segment_triangle(b1, b2, s, a1, a2, NULL, NULL);
}
