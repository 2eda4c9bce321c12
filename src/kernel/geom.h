/* geom.h — primitive geometric queries (closest points, intersections, shape distances). All in
 * double precision; tolerances are stated per function. */
#ifndef LOOM_GEOM_H
#define LOOM_GEOM_H

#include "math_vec.h"

/* ---- exact orientation predicates (geom_predicates.c) ----------------------------------------
 * Signs are exact for finite inputs as long as no product of two input differences underflows
 * and no product of three overflows (roughly |coordinate| in [1e-90, 1e90] or 0). The returned
 * magnitude is an approximation (relative error about 2^-50) of the true value. A non-finite
 * input (or overflow) gives NaN. Three stages: a floating-point filter (Shewchuk 1997), a
 * double-double evaluation with a proven error bound, and an exact expansion sum. */

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
/* Closest point to p on triangle abc; barycentric weights (wa, wb, wc) in *bary (may be NULL).
 * Works for degenerate triangles (falls back to the closest edge/vertex). */
vec3 geom_closest_on_triangle(vec3 p, vec3 a, vec3 b, vec3 c, double bary[3]);
/* Closest points between segments p0p1 and q0q1: parameters s, t in [0, 1] in *s, *t;
 * returns the squared distance. Handles parallel and degenerate segments. */
double geom_segment_segment(vec3 p0, vec3 p1, vec3 q0, vec3 q1, double *s, double *t);
/* Segment p0p1 against triangle abc (two-sided). Returns 1 and the segment parameter in *t
 * (0..1) and barycentric weights in *bary (may be NULL) when the segment crosses or touches the
 * triangle, 0 otherwise. A segment lying in the triangle's plane does not count. Uses signed
 * volumes so that the answer is consistent for segments through an edge shared by two
 * triangles (reported by at least one of them). */
int geom_segment_triangle(vec3 p0, vec3 p1, vec3 a, vec3 b, vec3 c, double *t, double bary[3]);
/* Ray origin + s dir (s >= 0) against triangle abc (two-sided); returns 1 and *s on a hit. */
int geom_ray_triangle(vec3 origin, vec3 dir, vec3 a, vec3 b, vec3 c, double *s);
/* 1 if closed triangles a0a1a2 and b0b1b2 intersect (share at least one point), 0 otherwise.
 * Exact sign logic on double arithmetic (Moller 1997 interval test, coplanar case by 2D edge
 * tests). Triangles that only share a vertex or an edge of the mesh must be filtered by the
 * caller; see geom_tri_tri_shared_vertex. */
int geom_tri_tri_intersect(vec3 a0, vec3 a1, vec3 a2, vec3 b0, vec3 b1, vec3 b2);
/* Triangles (s, a1, a2) and (s, b1, b2) that share vertex s: 1 if they intersect anywhere other
 * than at s itself (the far edge of one crosses the other, or coplanar overlap). */
int geom_tri_tri_shared_vertex(vec3 s, vec3 a1, vec3 a2, vec3 b1, vec3 b2);

/* Convex shapes in their own frame (centred at the origin, axis along z where it matters). */
typedef enum geom_shape_type { GEOM_SPHERE = 1, GEOM_BOX = 2, GEOM_CAPSULE = 3, GEOM_CYLINDER = 4 } geom_shape_type;
typedef struct geom_shape {
  int type;        /* geom_shape_type */
  double radius;   /* sphere, capsule, cylinder */
  double half_h;   /* capsule, cylinder: half length of the axis segment / of the cylinder */
  vec3 half;       /* box half extents */
} geom_shape;

/* Signed distance from p (shape frame) to the shape's surface (negative inside) and the outward
 * unit normal of the nearest surface point in *n (never zero: inside points on a symmetry axis get
 * a deterministic choice). Exact for all four shapes. */
double geom_shape_sdf(const geom_shape *s, vec3 p, vec3 *n);
/* Support point of the shape in direction d (shape frame). */
vec3 geom_shape_support(const geom_shape *s, vec3 d);
/* Local AABB half extents of the shape. */
vec3 geom_shape_extent(const geom_shape *s);
/* 1 if triangle abc (shape frame) overlaps the interior of the solid shape by more than `tol`
 * (metres): GJK on the Minkowski difference (Gilbert, Johnson, Keerthi 1988), with exact fast paths
 * for the sphere (closest point) and the box (separating axes, Akenine-Moller 2001). */
int geom_triangle_overlaps_shape(const geom_shape *s, vec3 a, vec3 b, vec3 c, double tol);

#endif
