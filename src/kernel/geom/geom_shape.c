/* geom_shape.c — convex primitive shapes in their own frame: signed distance, support mapping,
 * extent, and "does this triangle penetrate the shape by more than tol".
 *
 * Frames: every shape is centred at the origin; capsule and cylinder axes are along z.
 * Deterministic choices where the nearest surface point is not unique (medial set):
 *   sphere centre -> +z; capsule/cylinder axis -> +x for the radial direction; cylinder inside
 *   with equal distance to side and cap -> cap; cap side for z == 0 -> +z; box ties -> lowest
 *   axis index, and the + face when the coordinate is 0. */
#include <stddef.h>

#include "geom/geom.h"

static inline double sign_pos(double x) { return x < 0 ? -1.0 : 1.0; }
static inline int sgn_d(double x) { return (x > 0) - (x < 0); }

double geom_shape_sdf(const geom_shape *s, vec3 p, vec3 *n) {
  vec3 nn = {0, 0, 1};
  double d = NAN;
  if (!v3_isfinite(p)) {
    /* Documented: non-finite input gives NaN and the +z normal. */
    if (n) *n = nn;
    return NAN;
  }
  switch (s->type) {
  case GEOM_SPHERE: {
    double l = v3_len(p);
    d = l - s->radius;
    if (l > 0) nn = v3_scale(p, 1.0 / l);
    break;
  }
  case GEOM_BOX: {
    double q[3] = {fabs(p.x) - s->half.x, fabs(p.y) - s->half.y, fabs(p.z) - s->half.z};
    double sg[3] = {sign_pos(p.x), sign_pos(p.y), sign_pos(p.z)};
    int k = 0;
    if (q[1] > q[k]) k = 1;
    if (q[2] > q[k]) k = 2;
    if (q[k] > 0) {
      /* Outside: the nearest point clamps each coordinate to the box. */
      vec3 o = v3(fmax(q[0], 0) * sg[0], fmax(q[1], 0) * sg[1], fmax(q[2], 0) * sg[2]);
      d = v3_len(o);
      if (d > 0) {
        nn = v3_scale(o, 1.0 / d);
        break;
      }
      /* Underflowed length: fall through to the face rule. */
    }
    /* Inside (or on the surface): the nearest face. */
    d = q[k];
    double c[3] = {0, 0, 0};
    c[k] = sg[k];
    nn = v3(c[0], c[1], c[2]);
    break;
  }
  case GEOM_CAPSULE: {
    double cz = fmin(fmax(p.z, -s->half_h), s->half_h);
    vec3 v = v3(p.x, p.y, p.z - cz);
    double l = v3_len(v);
    d = l - s->radius;
    nn = l > 0 ? v3_scale(v, 1.0 / l) : v3(1, 0, 0);
    break;
  }
  case GEOM_CYLINDER: {
    double rho = sqrt(p.x * p.x + p.y * p.y);
    vec3 radial = rho > 0 ? v3(p.x / rho, p.y / rho, 0) : v3(1, 0, 0);
    vec3 cap = v3(0, 0, sign_pos(p.z));
    double dr = rho - s->radius, dz = fabs(p.z) - s->half_h;
    if (dr > 0 && dz > 0) {
      /* Outside both the side and the cap slab: nearest point on the rim circle. */
      d = sqrt(dr * dr + dz * dz);
      nn = d > 0 ? v3_scale(v3_add(v3_scale(radial, dr), v3_scale(cap, dz)), 1.0 / d) : radial;
    } else if (dr > 0) {
      d = dr;
      nn = radial;
    } else if (dz > 0) {
      d = dz;
      nn = cap;
    } else if (dz >= dr) {
      d = dz;
      nn = cap;
    } else {
      d = dr;
      nn = radial;
    }
    break;
  }
  default:
    break;
  }
  if (n) *n = nn;
  return d;
}

vec3 geom_shape_support(const geom_shape *s, vec3 d) {
  switch (s->type) {
  case GEOM_SPHERE: {
    double l = v3_len(d);
    return l > 0 ? v3_scale(d, s->radius / l) : v3(0, 0, s->radius);
  }
  case GEOM_BOX:
    return v3(sign_pos(d.x) * s->half.x, sign_pos(d.y) * s->half.y, sign_pos(d.z) * s->half.z);
  case GEOM_CAPSULE: {
    double l = v3_len(d);
    vec3 u = l > 0 ? v3_scale(d, 1.0 / l) : v3(0, 0, 1);
    return v3_madd(v3(0, 0, sign_pos(d.z) * s->half_h), u, s->radius);
  }
  case GEOM_CYLINDER: {
    double rho = sqrt(d.x * d.x + d.y * d.y);
    /* A direction along the axis: every cap point is a support point; take the centre. */
    double k = rho > 0 ? s->radius / rho : 0;
    return v3(d.x * k, d.y * k, sign_pos(d.z) * s->half_h);
  }
  default:
    return v3(0, 0, 0);
  }
}

vec3 geom_shape_extent(const geom_shape *s) {
  switch (s->type) {
  case GEOM_SPHERE:
    return v3(s->radius, s->radius, s->radius);
  case GEOM_BOX:
    return s->half;
  case GEOM_CAPSULE:
    return v3(s->radius, s->radius, s->half_h + s->radius);
  case GEOM_CYLINDER:
    return v3(s->radius, s->radius, s->half_h);
  default:
    return v3(0, 0, 0);
  }
}

/* ---- triangle against box: separating axes ------------------------------------------------- */

/* Projection interval test on one axis: the open box (projected radius r) and the triangle's
 * projections [lo, hi] are disjoint or only touch. A zero axis (parallel edges, degenerate
 * triangle) has r == 0 and is skipped: it separates nothing. */
static inline int separated(double lo, double hi, double r) { return r > 0 && (lo >= r || hi <= -r); }

static inline double min3(double a, double b, double c) { return fmin(a, fmin(b, c)); }
static inline double max3(double a, double b, double c) { return fmax(a, fmax(b, c)); }

/* Akenine-Moller 2001, "Fast 3D triangle-box overlap testing": 9 edge x box-axis axes, the 3 box
 * axes, the triangle normal. The triangle is in the box frame, h are the half extents. */
static int tri_box_overlap(vec3 h, vec3 v0, vec3 v1, vec3 v2) {
  vec3 e[3] = {v3_sub(v1, v0), v3_sub(v2, v1), v3_sub(v0, v2)};
  for (int i = 0; i < 3; i++) {
    vec3 f = e[i];
    /* Axes u_j x f for the box axes u_j, written out. u_x x f = (0, -f.z, f.y): */
    double p0 = -f.z * v0.y + f.y * v0.z, p1 = -f.z * v1.y + f.y * v1.z, p2 = -f.z * v2.y + f.y * v2.z;
    if (separated(min3(p0, p1, p2), max3(p0, p1, p2), h.y * fabs(f.z) + h.z * fabs(f.y))) return 0;
    /* u_y x f = (f.z, 0, -f.x): */
    p0 = f.z * v0.x - f.x * v0.z;
    p1 = f.z * v1.x - f.x * v1.z;
    p2 = f.z * v2.x - f.x * v2.z;
    if (separated(min3(p0, p1, p2), max3(p0, p1, p2), h.x * fabs(f.z) + h.z * fabs(f.x))) return 0;
    /* u_z x f = (-f.y, f.x, 0): */
    p0 = -f.y * v0.x + f.x * v0.y;
    p1 = -f.y * v1.x + f.x * v1.y;
    p2 = -f.y * v2.x + f.x * v2.y;
    if (separated(min3(p0, p1, p2), max3(p0, p1, p2), h.x * fabs(f.y) + h.y * fabs(f.x))) return 0;
  }
  if (separated(min3(v0.x, v1.x, v2.x), max3(v0.x, v1.x, v2.x), h.x)) return 0;
  if (separated(min3(v0.y, v1.y, v2.y), max3(v0.y, v1.y, v2.y), h.y)) return 0;
  if (separated(min3(v0.z, v1.z, v2.z), max3(v0.z, v1.z, v2.z), h.z)) return 0;
  /* All three vertices are projected (not just one): for a needle the normal is rounding
   * noise, and only a full projection keeps the test sound on an arbitrary axis. */
  vec3 nrm = v3_cross(e[0], e[1]);
  double p0 = v3_dot(nrm, v0), p1 = v3_dot(nrm, v1), p2 = v3_dot(nrm, v2);
  if (separated(min3(p0, p1, p2), max3(p0, p1, p2), h.x * fabs(nrm.x) + h.y * fabs(nrm.y) + h.z * fabs(nrm.z)))
    return 0;
  return 1;
}

/* ---- triangle against capsule / cylinder: boolean GJK ------------------------------------- */

/* Gilbert, Johnson, Keerthi 1988, "A fast procedure for computing the distance between complex
 * objects in three-dimensional space", run as a yes/no test on M = T - S (T the triangle, S the
 * shrunk shape): the shapes overlap iff the origin is in M. Following van den Bergen 1999
 * ("A fast and robust GJK implementation for collision detection of convex objects") and
 * Ericson §9.5: keep a simplex of support points of M and its point v closest to the origin;
 * stop with "separate" as soon as a support point w in direction -v has v.w >= 0 (v is then a
 * separating axis), with "overlap" when the simplex is a tetrahedron containing the origin or
 * |v| falls to rounding level. Robust termination: v must shrink strictly every iteration
 * (otherwise no progress is possible in floating point: stop), at most GJK_MAX_ITER iterations;
 * both limits are deterministic. The simplex sub-problem uses the exact orientation predicates
 * (origin inside the tetrahedron) and geom_closest_on_triangle (handles flat simplices). */
#define GJK_MAX_ITER 64

static vec3 tri_support(const vec3 t[3], vec3 d) {
  double b0 = v3_dot(t[0], d), b1 = v3_dot(t[1], d), b2 = v3_dot(t[2], d);
  if (b0 >= b1 && b0 >= b2) return t[0];
  return b1 >= b2 ? t[1] : t[2];
}

/* Closest point of conv(W) to the origin; shrinks W to the smallest sub-simplex containing it.
 * Returns 1 when W is a tetrahedron containing the origin. */
static int simplex_closest(vec3 *W, int *nW, vec3 *v) {
  vec3 o = {0, 0, 0};
  double bary[3];
  switch (*nW) {
  case 1:
    *v = W[0];
    return 0;
  case 2: {
    double t;
    *v = geom_closest_on_segment(o, W[0], W[1], &t);
    if (t <= 0) {
      *nW = 1;
    } else if (t >= 1) {
      W[0] = W[1];
      *nW = 1;
    }
    return 0;
  }
  case 3: {
    *v = geom_closest_on_triangle(o, W[0], W[1], W[2], bary);
    int m = 0;
    for (int i = 0; i < 3; i++)
      if (bary[i] > 0) W[m++] = W[i];
    if (m == 0) m = 1; /* cannot happen (weights sum to 1); keeps W non-empty */
    *nW = m;
    return 0;
  }
  default: {
    /* Origin inside the closed tetrahedron: on the same side of every face as the opposite
     * vertex (or on the face). A flat tetrahedron never contains it in this sense. */
    static const int face[4][4] = {{1, 2, 3, 0}, {0, 2, 3, 1}, {0, 1, 3, 2}, {0, 1, 2, 3}};
    int inside = geom_orient3d(W[0], W[1], W[2], W[3]) != 0;
    for (int f = 0; f < 4 && inside; f++) {
      const int *ix = face[f];
      int so = sgn_d(geom_orient3d(W[ix[0]], W[ix[1]], W[ix[2]], o));
      int sv = sgn_d(geom_orient3d(W[ix[0]], W[ix[1]], W[ix[2]], W[ix[3]]));
      if (so * sv < 0) inside = 0;
    }
    if (inside) return 1;
    double best = INFINITY;
    vec3 keep[3];
    int nkeep = 1;
    keep[0] = W[0];
    for (int f = 0; f < 4; f++) {
      const int *ix = face[f];
      double b[3];
      vec3 q = geom_closest_on_triangle(o, W[ix[0]], W[ix[1]], W[ix[2]], b);
      double d2 = v3_len2(q);
      if (d2 < best) {
        best = d2;
        *v = q;
        nkeep = 0;
        for (int i = 0; i < 3; i++)
          if (b[i] > 0) keep[nkeep++] = W[ix[i]];
        if (nkeep == 0) keep[nkeep++] = W[ix[0]];
      }
    }
    for (int i = 0; i < nkeep; i++) W[i] = keep[i];
    *nW = nkeep;
    return 0;
  }
  }
}

static int gjk_overlap(const geom_shape *s, const vec3 t[3]) {
  vec3 W[4];
  int nW = 0;
  /* t[0] - 0 is a point of M: the shrunk shape contains its centre. */
  vec3 v = t[0];
  vec3 ext = geom_shape_extent(s);
  double scale2 = fmax(fmax(v3_len2(t[0]), v3_len2(t[1])), fmax(v3_len2(t[2]), v3_len2(ext)));
  /* |v| below 1e-12 of the problem's size: the origin is in M up to rounding. */
  double eps2 = 1e-24 * scale2;
  for (int it = 0; it < GJK_MAX_ITER; it++) {
    double vv = v3_len2(v);
    if (vv <= eps2) return 1;
    vec3 w = v3_sub(tri_support(t, v3_neg(v)), geom_shape_support(s, v));
    if (v3_dot(v, w) >= 0) return 0; /* separating axis v */
    for (int i = 0; i < nW; i++)
      if (W[i].x == w.x && W[i].y == w.y && W[i].z == w.z) return 0; /* no progress possible */
    W[nW++] = w;
    if (simplex_closest(W, &nW, &v)) return 1;
    /* From the second iteration on v lies in conv(W) before w is added and v.w < 0, so |v|
     * must shrink strictly; if rounding prevents that, the origin is outside up to rounding.
     * (The first v is an arbitrary point of M, not of the simplex.) */
    if (it > 0 && !(v3_len2(v) < vv)) return 0;
  }
  return v3_len2(v) <= eps2;
}

int geom_triangle_overlaps_shape(const geom_shape *s, vec3 a, vec3 b, vec3 c, double tol) {
  if (!v3_isfinite(a) || !v3_isfinite(b) || !v3_isfinite(c)) return 0;
  if (!(tol > 0)) tol = 0; /* also maps NaN to 0 */
  switch (s->type) {
  case GEOM_SPHERE: {
    double r = s->radius - tol;
    if (!(r > 0)) return 0;
    vec3 q = geom_closest_on_triangle(v3(0, 0, 0), a, b, c, NULL);
    return v3_len2(q) < r * r;
  }
  case GEOM_BOX: {
    /* Shrinking a box by tol gives a box. */
    vec3 h = v3(s->half.x - tol, s->half.y - tol, s->half.z - tol);
    if (!(h.x > 0 && h.y > 0 && h.z > 0)) return 0;
    return tri_box_overlap(h, a, b, c);
  }
  case GEOM_CAPSULE:
  case GEOM_CYLINDER: {
    /* The shrunk capsule is a capsule of radius r - tol; the shrunk cylinder a cylinder of
     * radius r - tol and half height h - tol. */
    geom_shape e = *s;
    e.radius = s->radius - tol;
    if (s->type == GEOM_CYLINDER) e.half_h = s->half_h - tol;
    if (!(e.radius > 0) || !(e.half_h >= 0) || (s->type == GEOM_CYLINDER && !(e.half_h > 0))) return 0;
    vec3 t[3] = {a, b, c};
    return gjk_overlap(&e, t);
  }
  default:
    return 0;
  }
}
