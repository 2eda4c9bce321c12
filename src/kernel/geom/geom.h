/* geom.h — primitive geometric queries (closest points, intersections, shape distances). All in
 * double precision; tolerances are stated per function. */
#ifndef LOOM_GEOM_H
#define LOOM_GEOM_H

#include "math/math_vec.h"

/* ---- exact orientation predicates (geom_predicates.c) ----------------------------------------
 * The sign of the result is exact for finite inputs whose products cannot underflow or overflow:
 * every non-zero difference of coordinates above ~1e-90 in magnitude, every coordinate below
 * ~1e90 (any physical scene). Only the sign is guaranteed; the magnitude is the plain double
 * evaluation when that already decides the sign, else a more accurate one. A non-finite input
 * (or overflow) gives NaN. Three stages: a floating-point filter with Shewchuk's (1997) error
 * bound (~12 ns), a double-double evaluation with a proven bound (~50 ns; decides inputs that are
 * off a plane by rounding only), an exact expansion sum (~0.1-0.4 us; exactly degenerate inputs
 * whose coordinates are not simple). */

/* det [u1 - v1; u2 - v2; u3 - v3] (rows are differences of the given points; pass a zero vector
 * as v to use u itself). The building block of all predicates below. */
double geom_det3_diff(vec3 u1, vec3 v1, vec3 u2, vec3 v2, vec3 u3, vec3 v3);
/* ((b - a) x (c - a)) . (d - a): six times the signed volume of tetrahedron abcd; positive when
 * d lies on the side the normal (b - a) x (c - a) points to. */
double geom_orient3d(vec3 a, vec3 b, vec3 c, vec3 d);
/* ((b - a) x (c - a)) . z in the xy plane (z coordinates ignored): positive when abc turns
 * counter-clockwise. */
double geom_orient2d(vec3 a, vec3 b, vec3 c);

/* ---- closest points and intersections (geom_tri.c) ------------------------------------------ */

/* Closest point to p on segment ab; parameter in *t (may be NULL). a == b gives a, t = 0. */
vec3 geom_closest_on_segment(vec3 p, vec3 a, vec3 b, double *t);
/* Circumradius |ab| |bc| |ca| / (4 area) of triangle abc: how far it can sag below its corners
 * on a sphere. Infinite for a degenerate triangle (zero area). */
static inline double geom_circumradius(vec3 a, vec3 b, vec3 c) {
  const double la = v3_dist(a, b), lb = v3_dist(b, c), lc = v3_dist(c, a);
  const double area2 = v3_len(v3_cross(v3_sub(b, a), v3_sub(c, a)));
  return area2 > 0 ? la * lb * lc / (2 * area2) : INFINITY;
}

/* Closest point to p on triangle abc; barycentric weights (wa, wb, wc) in *bary (may be NULL),
 * each in [0, 1], summing to 1 and reproducing the point to rounding. Degenerate triangles
 * (collinear, coincident corners) and slivers thinner than 1e-8 (height / longest edge) use the
 * closest of the three edges. Accuracy: rounding level for ordinary triangles; for slivers about
 * eps |p - a| / thinness, never worse than ~1e-8 of the longest edge. NaN in, NaN out. */
vec3 geom_closest_on_triangle(vec3 p, vec3 a, vec3 b, vec3 c, double bary[3]);
/* Nearest points of segment s0s1 and triangle abc by alternating projections, `rounds` times from
 * the segment point nearest the triangle's centroid (both sets are convex: the distance falls
 * every round, exactly at once for a point segment). Returns the triangle point (barycentric
 * weights of the last projection in bary, may be NULL) and the segment point in *on_seg. */
vec3 geom_segment_triangle_nearest(vec3 s0, vec3 s1, vec3 a, vec3 b, vec3 c, int rounds, double bary[3], vec3 *on_seg);
/* Nearest points of segment s0s1 and closed triangle abc: 0 when the segment crosses the
 * triangle, else the nearest of the segment's end points to the triangle and of the segment to
 * the triangle's three edges (two disjoint convex sets are nearest there). Returns the squared
 * distance, accurate to rounding (a crossing near an edge may be found as a distance of that
 * order instead of 0); the triangle point's barycentric weights in bary and the segment
 * parameter in *t (both may be NULL). */
double geom_segment_triangle_closest(vec3 s0, vec3 s1, vec3 a, vec3 b, vec3 c, double bary[3], double *t);
/* Closest points between segments p0p1 and q0q1: parameters s, t in [0, 1] in *s, *t (may be
 * NULL); returns the squared distance. Handles parallel and degenerate segments. For nearly
 * parallel segments the parameters are ill-conditioned but the distance stays accurate (error
 * below |p1 - p0| sin(angle) when the angle is under ~1e-8). */
double geom_segment_segment(vec3 p0, vec3 p1, vec3 q0, vec3 q1, double *s, double *t);
/* Segment p0p1 against closed triangle abc (two-sided). Returns 1 and the segment parameter in
 * *t (0..1) and barycentric weights in *bary (may be NULL) when the segment crosses or touches
 * the triangle, 0 otherwise. A segment lying in the triangle's plane does not count, nor does a
 * degenerate triangle. The decision uses exact signs of signed volumes (geom_orient3d), so
 * triangles sharing an edge or vertex give consistent answers: a segment through a shared edge
 * or vertex is reported by every triangle containing that point (so by at least one), a segment
 * near it by exactly one of the neighbours; a vertex path can never slip through a closed mesh.
 * Non-finite input: 0. */
int geom_segment_triangle(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c, double *t, double bary[3]);
/* Ray origin + s dir (s >= 0) against closed triangle abc (two-sided); returns 1 and *s on a hit
 * (may be NULL). Same exact predicates and conventions as geom_segment_triangle (the direction
 * enters the determinants directly; no rounded far point). Zero direction or non-finite: 0. */
int geom_ray_triangle(vec3 origin, vec3 dir, vec3 a, vec3 b, vec3 c, double *s);
/* 1 if closed triangles a0a1a2 and b0b1b2 intersect (share at least one point), 0 otherwise.
 * Exact for finite inputs: Moller 1997 (plane sides, then overlap of the intervals on the planes'
 * common line) with the interval ends compared by exact orientation signs (Guigue-Devillers
 * 2003), coplanar pairs by exact 2D edge / containment tests; degenerate (needle, point)
 * triangles are handled as the segments / points they are. Symmetric: swapping the triangles
 * or permuting vertices never changes the answer. Triangles that only share a vertex or an edge
 * of the mesh must be filtered by the caller; see geom_tri_tri_shared_vertex. Non-finite: 0. */
int geom_tri_tri_intersect(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2);
/* Triangles (s, a1, a2) and (s, b1, b2) that share vertex s: 1 if they intersect anywhere other
 * than at s itself: not coplanar and the far edge of one crosses or touches the other (this
 * includes an edge from s lying on the other triangle), or coplanar with an overlap of positive
 * area (open angular sectors at s overlap). Coplanar triangles that only touch along a ray from
 * s, and degenerate triangles, give 0. Exact, like geom_tri_tri_intersect. */
int geom_tri_tri_shared_vertex(vec3 s, vec3 a1, vec3 a2, vec3 b1, vec3 b2);

/* ---- continuous collision (geom_ccd.c) -------------------------------------------------------
 * Four points x[k] moving to x[k] + d[k] over t in [0, 1]. Point–triangle: x[0..2] the triangle,
 * x[3] the point. Edge–edge: edges x[0]x[1] and x[2]x[3]. */

/* Coefficients c[0] + c[1] t + c[2] t^2 + c[3] t^3 of p(t) = (x21 + t d21) x (x31 + t d31) .
 * (x41 + t d41) (zero where the four points are coplanar), and in *err (may be NULL) a bound on the
 * rounding error of evaluating p on [0, 1] from them. */
void geom_coplanarity_cubic(const vec3 x[4], const vec3 d[4], double c[4], double *err);
/* Roots of the cubic c in [0, 1], ascending, without repeats; |p| <= tol counts as zero (at the
 * ends and at critical points: touching and grazing roots are reported). Pieces between critical
 * points are monotone; a sign change on one is bisected to adjacent doubles. Degree may drop
 * (c[3] = 0, ...). Non-finite coefficients: none. Returns the count (at most 4). */
#define GEOM_CUBIC_MAX_ROOTS 4
int geom_cubic_roots01(const double c[4], double tol, double out[GEOM_CUBIC_MAX_ROOTS]);
/* What a collision found: the first time t in [0, 1] at which the features are within eta; the
 * weights w (relative point = sum w[k] x[k](t): point–triangle (-a, -b, -c, 1) with the point's
 * barycentric weights, edge–edge (1 - s, s, -(1 - u), -u)); the unit normal n at that time (plane
 * normal pointing to the side the first feature — the point, the first edge — started on; where
 * the plane is degenerate, the start separation or against the motion); the distance then. */
typedef struct geom_ccd_hit {
  double t, w[4], distance;
  vec3 n;
} geom_ccd_hit;
/* 1 and *hit (may be NULL) if the features meet within eta during the motion, 0 otherwise.
 * Coplanar motion throughout (all coefficients within rounding of zero) is tested at nine evenly
 * spaced times. Non-finite input: 0. */
int geom_ccd_point_triangle(const vec3 x[4], const vec3 d[4], double eta, geom_ccd_hit *hit);
int geom_ccd_edge_edge(const vec3 x[4], const vec3 d[4], double eta, geom_ccd_hit *hit);
/* Proximity of a pair at positions y (same layouts): the distance, the weights w as above and in
 * *n (may be NULL) the unit direction from the second feature to the first (touching: the plane
 * normal, sign arbitrary). */
double geom_proximity(int edge_edge, const vec3 y[4], double w[4], vec3 *n);

/* Convex shapes in their own frame (centred at the origin, axis along z where it matters). */
typedef enum geom_shape_type { GEOM_SPHERE = 1, GEOM_BOX = 2, GEOM_CAPSULE = 3, GEOM_CYLINDER = 4 } geom_shape_type;
typedef struct geom_shape {
  int type;      /* geom_shape_type */
  double radius; /* sphere, capsule, cylinder */
  double half_h; /* capsule, cylinder: half length of the axis segment / of the cylinder */
  vec3 half;     /* box half extents */
} geom_shape;

/* Signed distance from p (shape frame) to the shape's surface (negative inside) and the outward
 * unit normal of the nearest surface point in *n (may be NULL). Exact for all four shapes
 * (cylinder: flat caps, sharp rims). The normal is never zero; where the nearest point is not
 * unique a deterministic choice is made: sphere centre -> +z; points on the capsule or cylinder
 * axis -> +x; box and cylinder interior ties -> the lowest axis / the cap, + side for a zero
 * coordinate. Non-finite p: returns NaN, *n = +z. */
double geom_shape_sdf(const geom_shape *s, vec3 p, vec3 *n);
/* Support point of the shape in direction d (shape frame): a surface point maximising dot(x, d).
 * Ties (d on a symmetry axis, zero components) resolve deterministically to the + side / the
 * cap centre. */
vec3 geom_shape_support(const geom_shape *s, vec3 d);
/* Local AABB half extents of the shape. */
vec3 geom_shape_extent(const geom_shape *s);
/* 1 if triangle abc (shape frame) penetrates the solid shape by more than `tol` (metres), i.e.
 * some point of the triangle has sdf < -tol (equivalently: it meets the open shape shrunk by
 * tol, which is again a sphere / box / capsule / cylinder). tol < 0 or NaN is taken as 0.
 * Sphere: closest point; box: separating axes (Akenine-Moller 2001); capsule and cylinder:
 * boolean GJK on the Minkowski difference (Gilbert, Johnson, Keerthi 1988; van den Bergen 1999),
 * at most 64 iterations, deterministic; touching within ~1e-12 of the problem size may go
 * either way. Degenerate triangles work. Non-finite vertices: 0. */
int geom_triangle_overlaps_shape(const geom_shape *s, vec3 a, vec3 b, vec3 c, double tol);

#endif
