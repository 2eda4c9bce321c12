/*
 * loom.h — the public C API of Loom: kernel (meshes, worlds, bodies, queries) and renderer.
 *
 * The block between LOOM_FFI_BEGIN and LOOM_FFI_END is parsed by LuaJIT's FFI: it holds only
 * typedefs, enums and prototypes (no macros, no #if, no floating constants, no struct passed or
 * returned by value, no 64-bit integer a Lua number should hold). lua/loom/cdef.lua is generated
 * from it by scripts/gen_cdef.lua; a test fails if the two drift.
 *
 * Conventions: SI units, z up, double precision state. Arrays are flat and 0-based; "n x 3"
 * means n loom_vec3. World-owned objects are reached through integer handles (index +
 * generation; 0 = none), checked on every call. Functions that can fail on bad input return 0 /
 * NULL / -1 and set a per-thread message read with loom_last_error().
 */
#ifndef LOOM_H
#define LOOM_H

#include <stdint.h>

#if defined(__GNUC__)
#define LOOM_API __attribute__((visibility("default")))
#else
#define LOOM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* LOOM_FFI_BEGIN */

typedef struct loom_vec3 { double x, y, z; } loom_vec3;
typedef struct loom_quat { double w, x, y, z; } loom_quat;

typedef struct loom_world loom_world;
typedef struct loom_mesh loom_mesh;
typedef struct loom_tet_mesh loom_tet_mesh;
typedef struct loom_simplex_mesh loom_simplex_mesh;
typedef struct loom_canvas loom_canvas;

/* ---- library ------------------------------------------------------------------------------ */

/* Version string "major.minor.patch"; static storage. */
LOOM_API const char *loom_version(void);
/* Message of the last failed call on this thread ("" if none); valid until the next failing call. */
LOOM_API const char *loom_last_error(void);
/* Clears this thread's error message. */
LOOM_API void loom_clear_error(void);
/* Monotonic clock in seconds (arbitrary origin). */
LOOM_API double loom_clock(void);
/* Wall clock in seconds since the Unix epoch (comparable across processes). */
LOOM_API double loom_wall_clock(void);
/* sizeof of a public struct named as in this header ("loom_vec3", ...); -1 if unknown. */
LOOM_API int loom_abi_sizeof(const char *type);
/* offsetof of a field of a public struct; -1 if unknown. */
LOOM_API int loom_abi_offsetof(const char *type, const char *field);

/* ---- meshes (standalone objects, not owned by a world) ------------------------------------ */

typedef enum loom_plane { LOOM_PLANE_XY = 0, LOOM_PLANE_XZ = 1, LOOM_PLANE_YZ = 2 } loom_plane;

/* Regular grid of (nx + 1) x (ny + 1) vertices spanning w x h metres in `plane`, centred at
 * `center` (NULL = origin), cells split into two triangles with alternating diagonals.
 * Remembers its dimensions (loom_mesh_grid_dims). Caller owns; NULL on bad arguments. */
LOOM_API loom_mesh *loom_mesh_grid(double w, double h, int nx, int ny, const loom_vec3 *center, int plane);
/* Closed box with half extents hx, hy, hz centred at the origin, each face split into
 * `divisions` x `divisions` quads (>= 1). Caller owns. */
LOOM_API loom_mesh *loom_mesh_box(double hx, double hy, double hz, int divisions);
/* UV sphere of radius r at the origin: `segments` around z (>= 3), `rings` from pole to pole
 * (>= 2); the poles are single vertices. Caller owns. */
LOOM_API loom_mesh *loom_mesh_sphere(double r, int segments, int rings);
/* Closed cylinder along z, radius r, from -half_h to +half_h, `segments` around (>= 3), with
 * `rings` (>= 1) bands along the side and fan caps. Caller owns. */
LOOM_API loom_mesh *loom_mesh_cylinder(double r, double half_h, int segments, int rings);
/* Closed capsule along z: cylinder of radius r and half height half_h with hemispherical caps.
 * Caller owns. */
LOOM_API loom_mesh *loom_mesh_capsule(double r, double half_h, int segments, int rings);
/* Torus around z: tube centre radius R, tube radius r (0 < r < R), `major` segments around z
 * and `minor` around the tube (both >= 3). Caller owns. */
LOOM_API loom_mesh *loom_mesh_torus(double R, double r, int major, int minor);
/* Loads OBJ (v/f, polygons fan-triangulated, negative indices) or STL (ASCII or binary),
 * chosen by content; duplicate vertices merged; degenerate triangles dropped. NULL with a
 * message naming the file (and line for text formats) on any problem. Caller owns. */
LOOM_API loom_mesh *loom_mesh_load(const char *path);
/* Mesh from arrays: v is nv x 3, tri is nt x 3 vertex indices. Validates (indices in range,
 * finite coordinates). Copies the data. Caller owns. */
LOOM_API loom_mesh *loom_mesh_from_arrays(const loom_vec3 *v, int nv, const int32_t *tri, int nt);
/* Deep copy. Caller owns. */
LOOM_API loom_mesh *loom_mesh_copy(const loom_mesh *m);
/* A copy with the vertices within tol (m; 0: the same point) of a lower-numbered one merged into
 * it, triangles whose corners then coincide dropped and unused vertices removed (the survivors
 * keep their order, renumbered from 0): pieces whose borders share points become one surface.
 * Caller owns. */
LOOM_API loom_mesh *loom_mesh_weld(const loom_mesh *m, double tol);
/* Frees a mesh; NULL is a no-op. */
LOOM_API void loom_mesh_destroy(loom_mesh *m);
/* Applies x' = R (s x) + t to every vertex; rot (NULL = identity) need not be normalised;
 * scale (NULL = 1) per axis. Keeps topology. */
LOOM_API void loom_mesh_transform(loom_mesh *m, const loom_vec3 *scale, const loom_quat *rot, const loom_vec3 *t);
LOOM_API int loom_mesh_vertex_count(const loom_mesh *m);
LOOM_API int loom_mesh_triangle_count(const loom_mesh *m);
/* Number of unique undirected edges. */
LOOM_API int loom_mesh_edge_count(const loom_mesh *m);
/* Number of interior edges with exactly two adjacent triangles (bending hinges). */
LOOM_API int loom_mesh_hinge_count(const loom_mesh *m);
/* Vertex positions, nv x 3; valid until the mesh is destroyed. */
LOOM_API const loom_vec3 *loom_mesh_vertices(const loom_mesh *m);
/* Triangle vertex indices, nt x 3 (counter-clockwise seen from the front); valid until destroyed. */
LOOM_API const int32_t *loom_mesh_triangles(const loom_mesh *m);
/* Edge vertex pairs, ne x 2 with v0 < v1; valid until destroyed. */
LOOM_API const int32_t *loom_mesh_edges(const loom_mesh *m);
/* Hinges, nh x 4: edge vertices v0, v1, then the opposite vertex of each adjacent triangle. */
LOOM_API const int32_t *loom_mesh_hinges(const loom_mesh *m);
/* Vertices per side of a grid mesh in *nx, *ny; returns 1 for grids, 0 (and 0, 0) otherwise. */
LOOM_API int loom_mesh_grid_dims(const loom_mesh *m, int *nx, int *ny);
/* Axis-aligned bounding box of the vertices. */
LOOM_API void loom_mesh_aabb(const loom_mesh *m, loom_vec3 *lo, loom_vec3 *hi);
/* Writes the mesh as OBJ; x (NULL = the mesh's own vertices, else nv x 3) replaces positions. */
LOOM_API int loom_mesh_save_obj(const loom_mesh *m, const loom_vec3 *x, const char *path);

/* ---- tetrahedral meshes ---------------------------------------------------------------------- */

/* A tetrahedral mesh from arrays (copied): v is nv x 3, tet is nt x 4 vertex indices. Refuses,
 * naming the index, an index out of range, a repeated corner, a non-finite coordinate, a vertex
 * no tet uses, a tet of zero volume, a face shared by more than two tets, and a tet inverted
 * against the others; a mesh written entirely in the opposite orientation is flipped
 * (loom_tet_mesh_flipped). Caller owns. */
LOOM_API loom_tet_mesh *loom_tet_mesh_create(const loom_vec3 *v, int nv, const int32_t *tet, int nt);
/* The regular lattice of a box of size (m) centred at center (NULL = origin) with nx x ny x nz
 * cells, each split into 5 tets (document 002: a central tet and four corner tets, mirrored in
 * alternate cells so that faces match) or 6 (around the cell diagonal). Caller owns. */
LOOM_API loom_tet_mesh *loom_tet_mesh_box(const loom_vec3 *size, int nx, int ny, int nz, const loom_vec3 *center,
                                          int per_cell);
/* The lattice of cubic cells of edge `cell` (m) that fills a closed, manifold triangle mesh: the
 * cells whose centre is inside (winding number) or that a triangle crosses, each split into
 * per_cell (5 or 6) tets. Open or non-manifold surfaces are refused naming an edge. Caller owns. */
LOOM_API loom_tet_mesh *loom_tet_mesh_fill(const loom_mesh *surface, double cell, int per_cell);
LOOM_API loom_tet_mesh *loom_tet_mesh_copy(const loom_tet_mesh *m);
LOOM_API void loom_tet_mesh_destroy(loom_tet_mesh *m);
LOOM_API int loom_tet_mesh_vertex_count(const loom_tet_mesh *m);
LOOM_API int loom_tet_mesh_tet_count(const loom_tet_mesh *m);
LOOM_API int loom_tet_mesh_edge_count(const loom_tet_mesh *m);
/* Number of surface triangles (faces of exactly one tet). */
LOOM_API int loom_tet_mesh_triangle_count(const loom_tet_mesh *m);
/* Vertex positions (nv x 3, writable: a transform may move them; loom_tet_mesh_check then says
 * whether every tet is still positive); tets (nt x 4, positively oriented); edges (ne x 2, lower
 * index first); surface triangles (count x 3, counter-clockwise seen from outside). Valid until
 * the mesh is destroyed. */
LOOM_API loom_vec3 *loom_tet_mesh_vertices(loom_tet_mesh *m);
LOOM_API const int32_t *loom_tet_mesh_tets(const loom_tet_mesh *m);
LOOM_API const int32_t *loom_tet_mesh_edges(const loom_tet_mesh *m);
LOOM_API const int32_t *loom_tet_mesh_triangles(const loom_tet_mesh *m);
/* 1 if the input was written in the opposite orientation and every tet was flipped. */
LOOM_API int loom_tet_mesh_flipped(const loom_tet_mesh *m);
/* Total signed volume, m^3. */
LOOM_API double loom_tet_mesh_volume(const loom_tet_mesh *m);
/* 0 if every tet has positive volume and every coordinate is finite; -1 naming the first tet. */
LOOM_API int loom_tet_mesh_check(const loom_tet_mesh *m);
/* The surface as a triangle mesh (same vertex indices; interior vertices unused). Caller owns. */
LOOM_API loom_mesh *loom_tet_mesh_surface(const loom_tet_mesh *m);

/* ---- simplex meshes (document 004) ----------------------------------------------------------- */

/* The surface a simplex generator made (loom_simplex_mesh_shape): 0 for a dual of a user mesh. */
typedef enum loom_simplex_shape {
  LOOM_SIMPLEX_DUAL = 0,
  LOOM_SIMPLEX_SPHERE = 1,
  LOOM_SIMPLEX_TORUS = 2,
  LOOM_SIMPLEX_CYLINDER = 3
} loom_simplex_shape;

/* The simplex-2 mesh dual to a closed, manifold, consistently oriented triangle mesh: a vertex at
 * each triangle's centroid with the three triangles across its edges as neighbours, an edge per
 * triangulation edge, a face per triangulation vertex (its triangles counter-clockwise seen from
 * outside). Open, non-manifold, pinched or inconsistently oriented meshes are refused, naming the
 * edge or vertex. Caller owns. */
LOOM_API loom_simplex_mesh *loom_simplex_mesh_dual(const loom_mesh *m);
/* The dual of a UV sphere with `rings` circles of `segments` vertices between its poles (rings x
 * segments + 2 vertices; 18 x 36 gives 004's 1296 V / 1944 E / 650 F), vertices on the sphere. */
LOOM_API loom_simplex_mesh *loom_simplex_sphere(double radius, const loom_vec3 *center, int rings, int segments);
/* The dual of a torus grid around z (skeleton radius R, tube radius r < R) with `segments` around
 * the axis and `rings` around the tube (30 x 31 gives 004's 1860 V / 2790 E / 930 F), vertices
 * on the torus. */
LOOM_API loom_simplex_mesh *loom_simplex_torus(double R, double r, const loom_vec3 *center, int rings, int segments);
/* The dual of a closed cylinder along z (`rings` bands along the side, fan caps), vertices on the
 * side or on the caps. */
LOOM_API loom_simplex_mesh *loom_simplex_cylinder(double radius, double height, const loom_vec3 *center, int rings,
                                                   int segments);
LOOM_API loom_simplex_mesh *loom_simplex_mesh_copy(const loom_simplex_mesh *m);
LOOM_API void loom_simplex_mesh_destroy(loom_simplex_mesh *m);
LOOM_API int loom_simplex_mesh_vertex_count(const loom_simplex_mesh *m);
LOOM_API int loom_simplex_mesh_edge_count(const loom_simplex_mesh *m);
LOOM_API int loom_simplex_mesh_face_count(const loom_simplex_mesh *m);
/* Triangles of the faces' fans (2 E - 2 F). */
LOOM_API int loom_simplex_mesh_triangle_count(const loom_simplex_mesh *m);
/* Vertex positions (nv x 3, writable); valid until the mesh is destroyed. */
LOOM_API loom_vec3 *loom_simplex_mesh_vertices(loom_simplex_mesh *m);
/* nv x 3 neighbours in 004's rotational order (the normal formula below points outward). */
LOOM_API const int32_t *loom_simplex_mesh_neighbors(const loom_simplex_mesh *m);
LOOM_API const int32_t *loom_simplex_mesh_edges(const loom_simplex_mesh *m);
LOOM_API const int32_t *loom_simplex_mesh_triangles(const loom_simplex_mesh *m);
/* Faces: vertices face_vertices[offsets[f] .. offsets[f + 1]), counter-clockwise from outside. */
LOOM_API const int32_t *loom_simplex_mesh_face_offsets(const loom_simplex_mesh *m);
LOOM_API const int32_t *loom_simplex_mesh_face_vertices(const loom_simplex_mesh *m);
/* The generator's surface (loom_simplex_shape) and its radii and centre (any may be NULL). */
LOOM_API int loom_simplex_mesh_shape(const loom_simplex_mesh *m, double *R, double *r, loom_vec3 *center);
/* 004's vertex normals -normalize((n2 - n1) x (n3 - n2)) of positions x (NULL = the mesh's) into
 * out (nv x 3; zero where the neighbours are collinear). */
LOOM_API int loom_simplex_mesh_normals(const loom_simplex_mesh *m, const loom_vec3 *x, loom_vec3 *out);
/* 0, or -1 naming a vertex with a non-finite coordinate. */
LOOM_API int loom_simplex_mesh_check(const loom_simplex_mesh *m);

/* ---- worlds --------------------------------------------------------------------------------- */

typedef struct loom_world_def {
  double dt;            /* s, fixed step, > 0 */
  loom_vec3 gravity;    /* m/s^2 */
  loom_vec3 wind;       /* m/s, air velocity used by the cloth drag term */
} loom_world_def;

typedef struct loom_stats {
  double time;            /* s, simulated time */
  double steps;           /* steps taken since t = 0 (exact integer) */
  double max_penetration; /* m, deepest obstacle penetration found (before correction) in the last step */
  double step_seconds;    /* wall time of the last loom_world_step (not part of the state) */
  int contacts;           /* soft-body vertices in contact with an obstacle after the last step */
  int collisions;         /* vertex paths through mesh obstacles caught by the segment test, last step */
  int impact_zones;       /* rigid impact zones of the collision pipeline, most in one substep of the last step */
  int iterations;         /* substeps x solver iterations performed in the last step, all bodies */
  int substeps;           /* largest substep count among soft bodies in the last step */
  int frozen;             /* bodies frozen after a divergence */
  int bodies;             /* live bodies */
  int messages;           /* messages emitted since the world was created */
  double cg_residual;     /* largest relative CG residual of the implicit cloths in the last step (0: none) */
  /* the collision pipeline between and within particle bodies (self_collision, cloth on cloth) */
  int proximity;            /* proximity pairs that received repulsion, last step */
  int ccd_collisions;       /* pairs found colliding by the first CCD pass of each substep, last step */
  int collision_iterations; /* CCD passes and impact-zone passes performed, last step */
  int largest_zone;         /* vertices in the largest impact zone, last step */
  int unresolved;           /* vertices stopped by the last-resort fallback, last step (0 normally) */
  int solid_points;         /* solid vertices found inside another solid's tets (002's contacts), last step */
  int tool_contacts;        /* simplex triangles pushed by a tool (004's response), last step */
  int tool_unresolved;      /* tool-triangle pairs still penetrating when the response's passes ran out, last step */
  int tangled;              /* vertices of triangles found crossing at the start of collision handling,
                             * left out of it until they come apart, last step (0 normally) */
  /* implicit cloth's contacts with rigid bodies (constraints of its solve), last step */
  int cloth_contacts;       /* constraints in effect at the end of the solves, summed over substeps */
  int contact_resolves;     /* solves repeated because a contact pulled or left its friction cone */
  int candidates;           /* feature pairs in the collision pipeline's candidate list, largest in the last step */
  int strain_limited;       /* cloth edges the strain limit (strain_limit) shortened, last step */
  int passed_through;       /* dynamic rigid bodies whose core (a sphere's centre, a capsule's or a cylinder's
                             * axis) crossed a cloth, pairs summed over the substeps of the last step */
  int obstacle_crossings;   /* cloth triangles found across a rigid body at the end of the last step (0
                             * normally; docs/api.md, "Cloth") */
  /* exact triangle tests (segment–triangle, point–triangle) of soft-body vertices against the
   * triangles of mesh obstacles, summed over the substeps of the last step, and how many a scan of
   * every triangle would have made for the same queries (exact integers) */
  double obstacle_tests;
  double obstacle_tests_brute;
  int newton_iterations;    /* implicit cloth: Newton iterations beyond the first, summed over substeps and
                             * bodies, last step (docs/api.md, "Implicit cloth") */
} loom_stats;

/* Fills a definition with defaults: dt = 1/240 s, gravity (0, 0, -9.81), no wind. */
LOOM_API void loom_world_def_default(loom_world_def *def);
/* Creates an empty world at t = 0; def NULL = defaults. NULL with a message on a bad field. */
LOOM_API loom_world *loom_world_create(const loom_world_def *def);
/* Destroys a world and everything it owns; NULL is a no-op. */
LOOM_API void loom_world_destroy(loom_world *w);
/* Simulated time in seconds. */
LOOM_API double loom_world_time(const loom_world *w);
LOOM_API double loom_world_dt(const loom_world *w);
/* The world's reach: values beyond these are refused where they enter (bodies, meshes, gravity,
 * wind, vertex masses) and a body found beyond them at the end of a step is stopped. SPEED is m/s
 * (also the largest spin in rad/s), REACH m from the origin, VERTEX_MASS kg, GRAVITY m/s^2. */
typedef enum loom_limit { LOOM_LIMIT_SPEED = 0, LOOM_LIMIT_REACH = 1, LOOM_LIMIT_VERTEX_MASS = 2, LOOM_LIMIT_GRAVITY = 3 } loom_limit;
/* One of them; NaN for an unknown `which`. */
LOOM_API double loom_world_limit(int which);
/* Sets the step (s, finite, > 0). Returns 0 or -1. */
LOOM_API int loom_world_set_dt(loom_world *w, double dt);
LOOM_API void loom_world_gravity(const loom_world *w, loom_vec3 *out);
LOOM_API int loom_world_set_gravity(loom_world *w, const loom_vec3 *g);
/* Overrides what a pair of bodies does when they touch: friction and restitution (negative: the
 * combination of the two bodies' own values) and whether they collide at all (collide = 0: their
 * contacts are never made). Replaces an earlier override of the same pair. Returns 0 or -1. */
LOOM_API int loom_world_pair(loom_world *w, int body_a, int body_b, double friction, double restitution, int collide);
/* Threads a step may use: 1, or 2 (the default on a machine with two cores or more): the implicit
 * cloth's matrix assembly and products are split in two halves, the second on a helper thread.
 * The results are bit-identical either way. Returns 0 or -1. */
LOOM_API int loom_world_set_threads(loom_world *w, int threads);
LOOM_API int loom_world_threads(const loom_world *w);
LOOM_API void loom_world_wind(const loom_world *w, loom_vec3 *out);
LOOM_API int loom_world_set_wind(loom_world *w, const loom_vec3 *wind);
/* Zeroes every soft body's external force accumulator f (the first stage of a step). */
LOOM_API void loom_world_clear_forces(loom_world *w);
/* Advances by dt: pins to their targets, integration with substeps, obstacle contacts, divergence
 * guards, t += dt. External forces in f are held constant over the step. Returns the number of
 * new messages (divergences) produced by this step (0 normally). */
LOOM_API int loom_world_step(loom_world *w);
/* Statistics of the last step; see loom_stats. */
LOOM_API void loom_world_stats(const loom_world *w, loom_stats *out);
/* A testing aid: on != 0 makes the queries of soft-body vertices against mesh obstacles test
 * every triangle of the mesh instead of descending its tree (the brute-force reference of
 * stats.obstacle_tests; the same results up to triangles at exactly the same distance). Off by
 * default; not part of the state. Returns 0 or -1. */
LOOM_API int loom_world_set_brute_obstacles(loom_world *w, int on);
LOOM_API int loom_world_brute_obstacles(const loom_world *w);
typedef enum loom_severity { LOOM_INFO = 0, LOOM_WARNING = 1, LOOM_ERROR = 2 } loom_severity;

/* Total number of messages emitted so far (sequence numbers are 1..count). */
LOOM_API int loom_world_message_count(const loom_world *w);
/* Message with sequence number seq, or NULL if it is older than the last 64. Valid until the next
 * step. */
LOOM_API const char *loom_world_message(const loom_world *w, int seq);
/* Severity (loom_severity) of message seq; -1 if it is not available. */
LOOM_API int loom_world_message_severity(const loom_world *w, int seq);
/* Handle of the body message seq is about; 0 for none (or a body destroyed since). */
LOOM_API int loom_world_message_body(const loom_world *w, int seq);
/* Kinetic, gravitational potential (relative to z = 0 along -gravity) and elastic energy in J of
 * the bodies that are not frozen. */
LOOM_API void loom_world_energy(const loom_world *w, double *kinetic, double *potential, double *elastic);
/* 64-bit hash of the state (time, positions, velocities, pins, rigid poses) as 16 hex digits
 * plus NUL into out (cap >= 17). Returns 0 or -1. */
LOOM_API int loom_world_hash(const loom_world *w, char *out, int cap);
/* Exact number of intersecting triangle pairs right now: cloth vs cloth (including self, pairs
 * sharing an edge excluded) and cloth triangles vs obstacle solids. -1 on failure. */
LOOM_API int loom_world_interpenetrations(loom_world *w);
/* The same count; the first cap crossings go to out, 4 integers each: the particle body's handle
 * and triangle, the other body's handle and triangle (-1: an analytic solid). */
LOOM_API int loom_world_interpenetration_pairs(loom_world *w, int32_t *out, int cap);
/* Nearest soft-body triangle hit by the ray origin + s dir (s > 0). Returns 1 and fills *body,
 * *vertex (the hit triangle's vertex nearest the hit point) and *s; 0 if nothing is hit. */
LOOM_API int loom_world_raycast(const loom_world *w, const loom_vec3 *origin, const loom_vec3 *dir, int *body, int *vertex, double *s);
/* Mouse grab: a spring pulls `vertex` of `body` towards `target` during the following steps, with
 * stiffness M omega^2 and damping 2 omega M (M = the body's mass: it would move the whole body
 * with angular frequency omega, 1/s), both limited to what one vertex can take stably.
 * body = 0 releases. Returns 0 or -1. */
LOOM_API int loom_world_set_grab(loom_world *w, int body, int vertex, const loom_vec3 *target, double omega);

/* Contacts of the last substep of the last step, in the order the solvers met them. */
typedef enum loom_feature {
  LOOM_FEATURE_SHAPE = 0,    /* the whole shape of a rigid body (analytic distance) */
  LOOM_FEATURE_VERTEX = 1,   /* a particle */
  LOOM_FEATURE_EDGE = 2,     /* an edge of a particle body (index into its edges) */
  LOOM_FEATURE_TRIANGLE = 3, /* a triangle (of a particle body, or of a rigid mesh) */
  LOOM_FEATURE_CORNER = 4,   /* a sharp feature point of a rigid shape (box corner, rim point) */
  LOOM_FEATURE_SEGMENT = 5,  /* a sharp feature edge of a rigid shape (box edge, rim segment) */
  LOOM_FEATURE_TET = 6       /* a tetrahedron of a solid */
} loom_feature;

typedef struct loom_contact {
  int body_a, body_b;       /* handles; a is the body whose feature the normal points out of b towards */
  int type_a, type_b;       /* loom_feature */
  int feature_a, feature_b; /* index of the vertex, edge, triangle or feature; -1 for SHAPE */
  int id;                   /* persistent: the same pair of features keeps its id from step to step */
  int solver;               /* 1 vertex against shape, 2 shape feature against cloth element, 3 and 4 the
                             * cloth pipeline (proximity, CCD), 5 rigid against rigid, 6 a solid's
                             * vertex inside another solid's tet (document 002's penetration depth) */
  loom_vec3 point;          /* m, world: where the contact was resolved (on a's side) */
  loom_vec3 normal;         /* unit, world: from b towards a */
  double depth;             /* m, how far a was inside b (below the contact distance) when found */
  double toi;               /* fraction of the substep at which a path crossed b's surface, or -1 */
  loom_vec3 impulse;        /* N s given to a (b receives the opposite) */
} loom_contact;

/* The contact buffer: *count contacts; valid until the next step or body change. */
LOOM_API const loom_contact *loom_world_contacts(const loom_world *w, int *count);

/* State snapshots: time, step count, per-body positions, velocities, previous positions, frozen
 * flags, pin group offsets and rigid poses. Sizes in bytes. */
LOOM_API int loom_world_state_size(const loom_world *w);
/* Writes the state into buf (size >= loom_world_state_size); returns bytes written or -1. */
LOOM_API int loom_world_save_state(const loom_world *w, void *buf, int size);
/* Restores a state written by loom_world_save_state into a world of identical topology; the
 * world is unchanged on failure (-1, message names the first mismatch). */
LOOM_API int loom_world_load_state(loom_world *w, const void *buf, int size);
/* Hot-reload transplant: copies time and step count, and the state of every body of src whose
 * name, kind and topology match a body of dst. Returns the number of bodies carried over. */
LOOM_API int loom_world_transplant(loom_world *dst, const loom_world *src);

/* Checkpoints: everything that decides the world's future (dt, gravity, wind, every live parameter,
 * the state with pins, trajectories' offsets and the mouse grab) with a format version, the model
 * hash of every body and a checksum. `extra` is the caller's (the Lua layer stores the scene path
 * and parameters there). Size in bytes of a checkpoint with extra_len bytes of extra data. */
LOOM_API int loom_world_checkpoint_size(const loom_world *w, int extra_len);
/* Writes the checkpoint into buf (size >= loom_world_checkpoint_size); returns bytes or -1. */
LOOM_API int loom_world_checkpoint_write(const loom_world *w, const void *extra, int extra_len, void *buf, int size);
/* Where the extra data of a checkpoint is (*offset, *len) after checking its frame (magic,
 * version, size, checksum). Returns 0 or -1 with a message. */
LOOM_API int loom_world_checkpoint_extra(const void *buf, int size, int *offset, int *len);
/* Loads a checkpoint into a world built from the same scene. Refuses (-1, the world unchanged,
 * the message says what differs) a truncated or corrupted checkpoint, other bodies or vertex
 * counts, and — unless force is 1 — another model or an unknown parameter. */
LOOM_API int loom_world_checkpoint_read(loom_world *w, const void *buf, int size, int force);

/* ---- bodies (common) --------------------------------------------------------------------------- */

typedef enum loom_kind { LOOM_KIND_NONE = 0, LOOM_KIND_CLOTH = 1, LOOM_KIND_RIGID = 2, LOOM_KIND_SOLID = 3, LOOM_KIND_SIMPLEX = 4 } loom_kind;

/* Number of live bodies and the handle of the i-th in creation order (0 if out of range). */
LOOM_API int loom_world_body_count(const loom_world *w);
LOOM_API int loom_world_body_at(const loom_world *w, int i);
/* Handle of the body with this name, 0 if none. */
LOOM_API int loom_world_find(const loom_world *w, const char *name);
/* Kind of a body (LOOM_KIND_NONE for a stale or invalid handle). */
LOOM_API int loom_body_kind(const loom_world *w, int body);
/* Name; valid until the body is destroyed. NULL for an invalid handle. */
LOOM_API const char *loom_body_name(const loom_world *w, int body);
/* Destroys a body (its arrays become invalid). Returns 0 or -1. */
LOOM_API int loom_body_destroy(loom_world *w, int body);
/* Axis-aligned bounding box (current positions / posed shape). Returns 0 or -1. */
LOOM_API int loom_body_aabb(const loom_world *w, int body, loom_vec3 *lo, loom_vec3 *hi);
/* 1 if the body was frozen by the divergence guard. */
LOOM_API int loom_body_frozen(const loom_world *w, int body);
/* Unfreezes a frozen body (velocities stay zero); its next step looks for what crosses it, as a
 * new body's does. Returns 0 or -1. */
LOOM_API int loom_body_unfreeze(loom_world *w, int body);
/* Parameters of a kind, from the kind's one table (what body_set/get accept, with ranges and
 * units; docs/api.md is generated from it). flags: 1 live, 2 integer, 4 read only, 8 minimum
 * excluded. */
typedef struct loom_param_info {
  const char *name, *unit, *doc; /* static storage */
  double min, max;
  int flags;
} loom_param_info;

/* Name of a kind ("cloth", "rigid"); NULL when unknown. */
LOOM_API const char *loom_kind_name(int kind);
/* Number of parameters of a kind (-1 when unknown). */
LOOM_API int loom_kind_param_count(int kind);
/* The i-th parameter of a kind into *out. Returns 0 or -1. */
LOOM_API int loom_kind_param_info(int kind, int i, loom_param_info *out);
/* Live-tunable parameter by name (see loom_kind_param_info; read-only ones are refused).
 * Returns 0 or -1. */
LOOM_API int loom_body_set_param(loom_world *w, int body, const char *name, double value);
/* Current value of a parameter in *out. Returns 0 or -1 (unknown name). */
LOOM_API int loom_body_get_param(const loom_world *w, int body, const char *name, double *out);

/* ---- cloth (soft triangle bodies) ---------------------------------------------------------- */

typedef enum loom_model {
  LOOM_MODEL_SPRINGS = 1,        /* mass-spring, forces (001 force variant) */
  LOOM_MODEL_SPRINGS_PBD = 2,    /* mass-spring as position constraints (001 constraint variant) */
  LOOM_MODEL_BARAFF_WITKIN = 3   /* continuum stretch/shear/bend conditions (Baraff-Witkin 1998) */
} loom_model;

typedef enum loom_integrator {
  LOOM_INTEGRATOR_SYMPLECTIC = 1, /* symplectic Euler, exact for constant external acceleration */
  LOOM_INTEGRATOR_VERLET = 2,     /* Stormer-Verlet: second order, exact for constant acceleration */
  LOOM_INTEGRATOR_RK4 = 3,        /* classical Runge-Kutta on (x, v) */
  LOOM_INTEGRATOR_IMPLICIT = 4,   /* backward Euler, one Newton step, filtered PCG (Baraff-Witkin 1998) */
  LOOM_INTEGRATOR_VERLET_001 = 5, /* Verlet with 001's damping form x' = x + (1 - kd)(x - x_prev) + a h^2 */
  LOOM_INTEGRATOR_CENTRAL = 6,    /* central differences m (x+ - 2x + x-)/h^2 + b (x+ - x-)/2h = F (004) */
  LOOM_INTEGRATOR_EULER = 7,      /* explicit (forward) Euler on (x, v) */
  LOOM_INTEGRATOR_HEUN = 8        /* Heun's method (explicit trapezoid) on (x, v) */
} loom_integrator;

typedef struct loom_cloth_def {
  const char *name;       /* unique in the world, non-empty, copied */
  const loom_mesh *mesh;  /* rest and initial shape, copied */
  int model;              /* loom_model */
  int integrator;         /* loom_integrator */
  double stretch;         /* springs: structural k (N/m); BW: stretch stiffness (N/m) */
  double shear;           /* springs: shear-spring k (N/m); BW: shear stiffness (N/m) */
  double bend;            /* springs: bend-spring k (N/m); BW: bending stiffness (N m) */
  double damping;         /* s; internal damping coefficient = damping x stiffness (Rayleigh) */
  double drag;            /* 1/s; air drag per unit mass against the world's wind */
  double density;         /* kg/m^2, used when mass <= 0 */
  double mass;            /* kg, total; > 0 overrides density */
  double thickness;       /* m; obstacles keep vertices at least this far */
  double friction;        /* Coulomb coefficient against obstacles */
  int substeps;           /* per step; 0 = automatic from a stability estimate */
  int iterations;         /* springs_pbd constraint iterations per substep */
  int self_collision;     /* 1 = the cloth's triangles never pass through each other (0 or 1) */
  double cg_tolerance;    /* implicit: relative (preconditioned) residual at which CG stops */
  double compliance;      /* springs_pbd: 0 = 001's fractions per iteration; > 0 = XPBD compliance (m/N) */
  int cg_iterations;      /* implicit: CG iteration cap per substep */
} loom_cloth_def;

/* Defaults for a model: springs stretch 500, shear 50, bend 5 N/m; springs_pbd 1, 1, 0.2; BW
 * stretch 1000 N/m, shear 100 N/m, bend 1e-4 N m; damping 2e-5 s, drag 0.2 /s, density
 * 0.2 kg/m^2, thickness 0.004 m, friction 0.3, automatic substeps, 20 PBD iterations; integrator
 * implicit for BW, symplectic otherwise; CG tolerance 1e-3 and at most 1000 iterations. */
LOOM_API void loom_cloth_def_default(loom_cloth_def *def, int model);
/* Creates a cloth body; returns its handle, or 0 with a message naming the first bad field. */
LOOM_API int loom_cloth_create(loom_world *w, const loom_cloth_def *def);

/* Particle arrays, 0-based, valid until the body is destroyed (never reallocated):
 * positions, velocities, external forces (n x 3) and masses (n, kg; a pinned vertex keeps its
 * mass). NULL for invalid handles. */
LOOM_API int loom_body_vertex_count(const loom_world *w, int body);
LOOM_API loom_vec3 *loom_body_x(loom_world *w, int body);
LOOM_API loom_vec3 *loom_body_v(loom_world *w, int body);
LOOM_API loom_vec3 *loom_body_f(loom_world *w, int body);
LOOM_API double *loom_body_m(loom_world *w, int body);
/* Velocity Jacobian of the external forces (n x 6, N s/m), cleared with f each step: a force field
 * that writes f_i(v_i) may add D_i = -df_i/dv_i, a symmetric positive semi-definite 3x3 block
 * stored as (xx, yy, zz, xy, xz, yz). The implicit integrator then treats that dependence
 * backward (D_i h joins the diagonal of its matrix), which keeps velocity-dependent fields such as
 * air pressure stable at large steps; explicit integrators ignore it. NULL for invalid handles. */
LOOM_API double *loom_body_damping(loom_world *w, int body);
/* Inverse masses (n, 1/kg): 0 while the vertex is pinned (read only). */
LOOM_API const double *loom_body_inv_mass(const loom_world *w, int body);
/* Rest positions (n x 3, read only). */
LOOM_API const loom_vec3 *loom_body_rest(const loom_world *w, int body);
/* Triangles (count x 3) of a soft body; *count receives the number of triangles. */
LOOM_API const int32_t *loom_body_triangles(const loom_world *w, int body, int *count);
/* Per-vertex contact flags of the last step (n bytes, 1 = in a contact in some substep), derived
 * from the contact buffer. */
LOOM_API const uint8_t *loom_body_contacts(const loom_world *w, int body);
/* The collision pipeline's impact zones of the last step (docs/architecture.md, collisions): those
 * of the step's last pipeline run that made any (the pipeline runs once per substep, and again
 * when the obstacle passes moved vertices after it). Per vertex (n) the zone's number, 0, 1, ... in
 * the order of the zones' first vertices over the bodies of that run, or -1 for none. NULL
 * for a body that has not met the pipeline yet (or an invalid handle). Read only, valid until the
 * next step. */
LOOM_API const int32_t *loom_body_impact_zones(const loom_world *w, int body);
/* The boxes of the collision pipeline's triangle tree of a soft body at depth `depth` (0: the root;
 * a leaf above that depth stands for itself): each the space its triangles take over the
 * substep that last updated it — the union of their start and end boxes (the swept box for slowly
 * moving vertices), inflated by the body's thickness — in world coordinates at the
 * world's time (the boxes are kept in a frame moving with the cloth, and moved with it; a body the
 * pipeline has left alone since keeps its last boxes). Writes up to cap boxes (m) into lo[] and hi[]; returns how many there are (0 before
 * the pipeline first ran for the body), -1 on an invalid handle or depth (0..64) or cap < 0. */
LOOM_API int loom_body_collision_boxes(const loom_world *w, int body, int depth, loom_vec3 *lo, loom_vec3 *hi, int cap);
/* The edges (count x 2, lower vertex first, sorted) the collision pipeline numbers a soft body's
 * edge features by (world contacts of solvers 3 and 4); NULL with *count 0 before the pipeline
 * first ran for the body. Read only. */
LOOM_API const int32_t *loom_body_collision_edges(const loom_world *w, int body, int *count);
/* Index of the vertex nearest p; -1 on an invalid handle. */
LOOM_API int loom_body_vertex_near(const loom_world *w, int body, const loom_vec3 *p);
/* Number of springs of each family (structural, shear, bend) of a springs/springs_pbd body. */
LOOM_API int loom_body_spring_counts(const loom_world *w, int body, int *structural, int *shear, int *bend);
/* Adds m_i a to f_i for every vertex: the C twin of the simplest Lua force field. */
LOOM_API int loom_body_add_acceleration(loom_world *w, int body, const loom_vec3 *a);
/* Internal (model) forces at the current positions and velocities into out (n x 3, caller's
 * array), without gravity, drag or external forces. Returns 0 or -1. */
LOOM_API int loom_body_internal_forces(loom_world *w, int body, loom_vec3 *out);

/* ---- solids (tetrahedral soft bodies) --------------------------------------------------------- */

typedef enum loom_solid_model {
  LOOM_SOLID_TESCHNER = 1,  /* document 002: edge distance and tet volume constraints (Teschner et al. 2004) */
  LOOM_SOLID_NEOHOOKEAN = 2 /* stable Neo-Hookean FEM on linear tets (Smith, de Goes, Kim 2018) */
} loom_solid_model;

typedef struct loom_solid_def {
  const char *name;           /* unique in the world, non-empty, copied */
  const loom_tet_mesh *mesh;  /* rest and initial shape, copied */
  int model;                  /* loom_solid_model */
  int integrator;             /* LOOM_INTEGRATOR_VERLET (explicit, automatic substeps) or _IMPLICIT */
  double density;             /* kg/m^3, used when mass and node_mass are 0 */
  double mass;                /* kg, total (> 0 overrides density) */
  double node_mass;           /* kg per node, document 002's Mass (> 0 overrides mass and density) */
  double distance;            /* teschner: k_D, J */
  double volume;              /* teschner: k_V, J */
  double damping;             /* teschner: d_C, J s (damps edge length changes) */
  double young;               /* neohookean: Young's modulus, Pa */
  double poisson;             /* neohookean: Poisson's ratio, [0, 0.5) */
  double rayleigh;            /* neohookean: stiffness-proportional damping, s */
  double thickness;           /* m: other bodies keep this far from the surface */
  double friction;            /* Coulomb coefficient against other bodies */
  int substeps;               /* explicit: per step, 0 = automatic; implicit: solves per step, 0 = 1 */
  int self_collision;         /* 1: the surface never passes through itself (0 or 1) */
  int depth_contact;          /* 1: against solids that set it too, document 002's penetration-depth
                               * contacts (spatial hash) instead of the collision pipeline */
  double yield;               /* plasticity: strain past which the rest shape follows (0 = elastic) */
  double creep;               /* plasticity: fraction of the excess strain absorbed per step, (0, 1] */
  double cg_tolerance;        /* implicit: relative residual at which CG stops */
  int cg_iterations;          /* implicit: CG iteration cap per solve */
} loom_solid_def;

/* Defaults per model: teschner k_D 20 J, k_V 10 J, d_C 1 J s (002's), Verlet; neohookean E 1 MPa,
 * nu 0.45, Rayleigh 0.001 s, implicit; both density 1000 kg/m^3, thickness 0.002 m, friction 0.5,
 * automatic substeps, no self-collision, no plasticity (creep 0.5 when yield is set), CG 1e-4
 * and 500 iterations. */
LOOM_API void loom_solid_def_default(loom_solid_def *def, int model);
/* Creates a solid; returns its handle, or 0 with a message naming the first bad field. */
LOOM_API int loom_solid_create(loom_world *w, const loom_solid_def *def);
/* Current total volume (m^3) of a solid's tets. -1 on an invalid handle. */
LOOM_API double loom_solid_volume(const loom_world *w, int body);
/* Tets of a solid (count x 4) and their number in *count; valid until the body is destroyed. */
LOOM_API const int32_t *loom_solid_tets(const loom_world *w, int body, int *count);
/* How deep point p lies inside the solid now: its distance to the nearest surface triangle when a
 * tet contains it, 0 outside; -1 with a message for a bad body or a non-finite point. */
LOOM_API double loom_solid_depth(const loom_world *w, int body, const loom_vec3 *p);
/* Embeds a fine triangle mesh (copied) in the solid: each vertex gets barycentric coordinates in
 * the tet that contains it (or the nearest tet, counted in the return value and warned about) and
 * follows the lattice from then on. Returns the number of vertices outside every tet, or -1. */
LOOM_API int loom_solid_embed(loom_world *w, int body, const loom_mesh *surface);
/* The embedded surface's vertices (moved at the end of every step) and triangles; *nv, *nt get
 * their counts (0 and NULL when the solid has none). */
LOOM_API const loom_vec3 *loom_solid_surface_vertices(const loom_world *w, int body, int *nv);
LOOM_API const int32_t *loom_solid_surface_triangles(const loom_world *w, int body, int *nt);
/* Makes the current shape the rest shape (plastic reset of the reference) or, with reset = 1,
 * puts back the mesh's original rest shape. */
LOOM_API int loom_solid_set_rest(loom_world *w, int body, int reset);

/* ---- simplex bodies (document 004) ----------------------------------------------------------- */

typedef enum loom_simplex_model {
  LOOM_SIMPLEX_MRA = 1,   /* 004's "new scheme" (Eq. 6.3): anchors and neighbour offset vectors, linear */
  LOOM_SIMPLEX_SHAPE = 2  /* rotation invariant: each vertex's neighbourhood and the whole body shape-matched */
} loom_simplex_model;

typedef enum loom_simplex_response {
  LOOM_RESPONSE_PROJECT = 0, /* penetrated triangles moved out at once, re-queried until none */
  LOOM_RESPONSE_PD = 1       /* 004's: the penetration depth vector is a target tracked by a PD controller */
} loom_simplex_response;

typedef struct loom_simplex_def {
  const char *name;               /* unique in the world, non-empty, copied */
  const loom_simplex_mesh *mesh;  /* rest and initial shape, copied */
  int model;                      /* loom_simplex_model */
  int integrator;                 /* LOOM_INTEGRATOR_CENTRAL (004's), _EULER, _HEUN, _RK4 */
  double k;                       /* neighbour coupling, N/m */
  double k_anchor;                /* anchor to the rest position (k_r), N/m */
  double mass;                    /* kg per vertex (004's m) */
  double damping;                 /* b, N s/m per vertex */
  double thickness;               /* m: tools and other bodies keep this far from the surface */
  double friction;                /* 004's tool friction mu (tangential mu |PDV| along the tool's motion) */
  int substeps;                   /* per step; 0 = automatic from the stability estimate */
  int self_collision;             /* 1: the surface never passes through itself (0 or 1) */
  int response;                   /* loom_simplex_response */
  double kp, kd;                  /* PD response gains (004's k_p, k_d) */
  int hold;                       /* 1: 004's contact hold (a vertex touching a tool that did not move stays) */
  int passes;                     /* project response: re-query passes per substep (cap) */
} loom_simplex_def;

/* Defaults: simplex_mra, central differences, k = 0.1 N/m, k_anchor = 0.05 N/m, m = 0.001 kg,
 * b = 0.01 N s/m (004's parameter set), project response with 16 passes, hold on. */
LOOM_API void loom_simplex_def_default(loom_simplex_def *def);
/* Creates a simplex body; returns its handle, or 0 with a message naming the first bad field. */
LOOM_API int loom_simplex_create(loom_world *w, const loom_simplex_def *def);
/* The model's internal forces at the current positions (no damping, gravity or external forces)
 * into out (n x 3). 0 or -1. */
LOOM_API int loom_simplex_internal_forces(const loom_world *w, int body, loom_vec3 *out);
/* Makes the current shape the rest shape (004's "update initial conditions"), or with reset = 1
 * puts the body back to its original shape: positions and rest shape, velocities zero. */
LOOM_API int loom_simplex_set_rest(loom_world *w, int body, int reset);
/* Neighbours (n x 3, 004's order) and fan triangles (count x 3) of a simplex body. */
LOOM_API const int32_t *loom_simplex_neighbors(const loom_world *w, int body);
/* Pairs of a kinematic or static sphere or capsule and a surface triangle of the body that are
 * closer than the shape's radius minus tol (or cross), now. -1 on a bad handle. */
LOOM_API int loom_simplex_penetrations(const loom_world *w, int body, double tol);
/* The exact state (x, v) at time t of 004's 1-D oscillator m x'' + b x' + k x = 0 from x0, v0
 * (under-, critically and over-damped). 0 or -1. */
LOOM_API int loom_oscillator_exact(double m, double b, double k, double x0, double v0, double t, double *x, double *v);

/* ---- pin groups (kinematic vertices) -------------------------------------------------------- */

/* Pins vertices of a particle body (inverse mass 0, mass kept) at their current positions, which become the
 * group's rest positions; returns a group handle or 0 (bad index, vertex already pinned). */
LOOM_API int loom_pins_create(loom_world *w, int body, const int32_t *vertices, int count);
/* Offset from the rest positions that the group reaches at the end of the next step; the pins
 * move linearly across the substeps with velocity offset change / dt. Returns 0 or -1. */
LOOM_API int loom_pins_set_target(loom_world *w, int group, const loom_vec3 *offset);
/* Moves the group to rest + offset now (positions set, velocities zeroed). Returns 0 or -1. */
LOOM_API int loom_pins_set_offset(loom_world *w, int group, const loom_vec3 *offset);
/* Current offset of the group. Returns 0 or -1. */
LOOM_API int loom_pins_offset(const loom_world *w, int group, loom_vec3 *out);
/* Releases the group's vertices (their masses come back) or holds them again; holding re-bases
 * the rest positions so that the vertices stay where they are at the current offset. */
LOOM_API int loom_pins_release(loom_world *w, int group);
LOOM_API int loom_pins_hold(loom_world *w, int group);
/* 1 if held, 0 if released, -1 for an invalid handle. */
LOOM_API int loom_pins_held(const loom_world *w, int group);
/* Number of vertices in a group (-1 invalid). */
LOOM_API int loom_pins_count(const loom_world *w, int group);
/* Removes vertices from whatever group holds them and gives them back their masses. Returns the
 * number of vertices unpinned or -1. */
LOOM_API int loom_pins_unpin(loom_world *w, int body, const int32_t *vertices, int count);

/* ---- rigid bodies --------------------------------------------------------------------------- */

typedef enum loom_shape_type {
  LOOM_SHAPE_SPHERE = 1,   /* radius */
  LOOM_SHAPE_BOX = 2,      /* half_extents */
  LOOM_SHAPE_CAPSULE = 3,  /* radius, half_height along local z */
  LOOM_SHAPE_CYLINDER = 4, /* radius, half_height along local z */
  LOOM_SHAPE_MESH = 5,     /* triangle mesh (static or kinematic only) */
  LOOM_SHAPE_CONVEX = 6    /* the convex hull of a mesh's vertices (any motion); a dynamic body's
                            * origin is the hull's centre of mass */
} loom_shape_type;

typedef enum loom_motion { LOOM_STATIC = 0, LOOM_KINEMATIC = 1, LOOM_DYNAMIC = 2 } loom_motion;

typedef struct loom_rigid_def {
  const char *name;        /* unique in the world, non-empty, copied */
  int shape;               /* loom_shape_type */
  double radius;           /* m (sphere, capsule, cylinder) */
  double half_height;      /* m (capsule, cylinder) */
  loom_vec3 half_extents;  /* m (box) */
  const loom_mesh *mesh;   /* shape mesh (LOOM_SHAPE_MESH), copied, in the body frame */
  int motion;              /* loom_motion */
  loom_vec3 position;      /* m, world position of the body frame */
  loom_quat orientation;   /* body frame rotation, normalised on creation */
  double friction;         /* Coulomb coefficient; a contact uses sqrt(cloth's x this one's) */
  double restitution;      /* [0, 1] */
  double thickness;        /* m, extra skin added to the cloth's own thickness */
  /* dynamic bodies */
  double mass;             /* kg; 0 = from the density */
  double density;          /* kg/m^3, used when mass is 0 (default 1000) */
  loom_vec3 velocity, angular_velocity; /* m/s, rad/s (world frame) */
  int linear, angular;     /* translation / rotation enabled (003's particle, rotational, rigid) */
  int integrator;          /* 0 symplectic Euler, 1 RK4, 2 explicit Euler (free flight) */
  double linear_damping, angular_damping; /* 1/s */
  double gravity_scale;    /* 1 */
  int altitude_gravity;    /* 1: g (1 - 2 z / 6371 km) as document 003 */
  int can_sleep;           /* 1: a resting island falls asleep */
} loom_rigid_def;

/* Defaults: sphere of radius 0.5 at the origin, static, identity orientation, friction 0.3,
 * restitution 0, thickness 0; for dynamic bodies density 1000, both motions enabled, symplectic
 * Euler, no damping, gravity scale 1, sleeping allowed. */
LOOM_API void loom_rigid_def_default(loom_rigid_def *def);
/* Creates a rigid body; returns its handle, or 0 with a message naming the first bad field. */
LOOM_API int loom_rigid_create(loom_world *w, const loom_rigid_def *def);
/* Pose of a rigid body now. Returns 0 or -1. */
LOOM_API int loom_rigid_pose(const loom_world *w, int body, loom_vec3 *position, loom_quat *orientation);
/* Linear (m/s) and angular (rad/s, world frame) velocity over the last step. */
LOOM_API int loom_rigid_velocity(const loom_world *w, int body, loom_vec3 *v, loom_vec3 *omega);
/* Kinematic target: the pose the body reaches at the end of the next step (moving linearly,
 * rotating along the shortest arc); orientation NULL keeps the current one. Static bodies
 * cannot move (-1). */
LOOM_API int loom_rigid_set_target(loom_world *w, int body, const loom_vec3 *position, const loom_quat *orientation);
/* loom_motion of a rigid body, or -1. */
LOOM_API int loom_rigid_motion(const loom_world *w, int body);
/* Teleports a body now (velocities zeroed; a dynamic body wakes). Returns 0 or -1. */
LOOM_API int loom_rigid_set_pose(loom_world *w, int body, const loom_vec3 *position, const loom_quat *orientation);
/* Shape of a rigid body in the body frame, tessellated for drawing (the body keeps no drawing
 * data). Caller owns. */
LOOM_API loom_mesh *loom_rigid_shape_mesh(const loom_world *w, int body);
/* The convex hull of a mesh's vertices as a closed mesh with outward triangles; *was_convex (may be
 * NULL) says whether every vertex of the mesh lies on its hull. NULL with a message for fewer than
 * 4 points or points without volume (coincident, collinear, coplanar). Caller owns. */
LOOM_API loom_mesh *loom_mesh_convex_hull(const loom_mesh *m, int *was_convex);
/* Dynamic bodies: a force (N) at world point p (NULL: at the centre of mass, no torque) for the
 * next step, or (impulse = 1) an impulse (N s) applied now. Wakes the body. Static and kinematic
 * bodies refuse. Returns 0 or -1. */
LOOM_API int loom_rigid_apply(loom_world *w, int body, const loom_vec3 *f, const loom_vec3 *p, int impulse);
/* A torque (N m) for the next step. */
LOOM_API int loom_rigid_apply_torque(loom_world *w, int body, const loom_vec3 *torque);
/* Sets a dynamic body's velocities (NULL keeps one). Wakes the body. */
LOOM_API int loom_rigid_set_velocity(loom_world *w, int body, const loom_vec3 *v, const loom_vec3 *omega);
/* Mass (kg) and world inertia about the centre of mass (kg m^2, row major), and whether the body
 * sleeps. */
LOOM_API int loom_rigid_mass(const loom_world *w, int body, double *mass, double inertia[9], int *asleep);
/* Mass, centre of mass and inertia about it (row major) of a closed mesh of the given density:
 * exact polyhedral integrals. -1 with a message for open or inside-out meshes. */
LOOM_API int loom_mesh_mass_properties(const loom_mesh *mesh, double density, double *mass, loom_vec3 *com,
                                       double inertia[9]);
/* Signed distance (m) from p (world) to the surface of a rigid body's shape, outward normal in
 * *normal (may be NULL). Triangle meshes: signed when closed and wound counter-clockwise from
 * outside (negative inside), else unsigned. Returns 0 or -1. */
LOOM_API int loom_rigid_distance(const loom_world *w, int body, const loom_vec3 *p, double *distance, loom_vec3 *normal);

/* ---- renderer ------------------------------------------------------------------------------- */

typedef struct loom_camera {
  loom_vec3 eye;      /* m */
  loom_vec3 target;   /* m */
  loom_vec3 up;       /* world up, usually (0, 0, 1) */
  double fov_deg;     /* vertical field of view, degrees */
  double znear;       /* m, > 0 */
  double zfar;        /* m, > znear */
} loom_camera;

typedef enum loom_draw_flags {
  LOOM_DRAW_WIREFRAME = 1,  /* overlay triangle edges */
  LOOM_DRAW_FLAT = 2,       /* one normal per triangle instead of smooth vertex normals */
  LOOM_DRAW_NO_FILL = 4     /* edges only */
} loom_draw_flags;

/* RGBA8 canvas with a depth buffer; w, h in pixels (1..16384). NULL on failure. */
LOOM_API loom_canvas *loom_canvas_create(int w, int h);
LOOM_API void loom_canvas_destroy(loom_canvas *c);
/* Resizes (contents undefined afterwards). Returns 0 or -1. */
LOOM_API int loom_canvas_resize(loom_canvas *c, int w, int h);
LOOM_API int loom_canvas_width(const loom_canvas *c);
LOOM_API int loom_canvas_height(const loom_canvas *c);
/* Pixels, h rows of w RGBA bytes, top row first; valid until resize or destroy. */
LOOM_API uint8_t *loom_canvas_pixels(loom_canvas *c);
/* Fills colour (0xRRGGBBAA) and resets depth. */
LOOM_API void loom_canvas_clear(loom_canvas *c, uint32_t rgba);
/* Sets the 3D camera used by the *3 calls and projections. */
LOOM_API void loom_canvas_set_camera(loom_canvas *c, const loom_camera *cam);
/* Direction towards the light (world frame, need not be unit). */
LOOM_API void loom_canvas_set_light(loom_canvas *c, const loom_vec3 *dir);
/* Z-buffered triangles with two-sided Lambert shading: front faces (counter-clockwise as seen)
 * in `front`, back faces in `back`. x is nv x 3, tri nt x 3; pose (position, rotation) may be
 * NULL for identity; colors (nv RGBA, may be NULL) replace the front/back colours per vertex. */
LOOM_API void loom_canvas_mesh(loom_canvas *c, const loom_vec3 *x, int nv, const int32_t *tri, int nt,
                               const loom_vec3 *position, const loom_quat *rotation,
                               uint32_t front, uint32_t back, const uint32_t *colors, int flags);
/* Depth-tested 3D line and point (size in pixels). */
LOOM_API void loom_canvas_line3(loom_canvas *c, const loom_vec3 *a, const loom_vec3 *b, uint32_t rgba);
LOOM_API void loom_canvas_point3(loom_canvas *c, const loom_vec3 *p, double size, uint32_t rgba);
/* 2D overlay primitives in pixels (origin top left), alpha blended, no depth. */
LOOM_API void loom_canvas_rect(loom_canvas *c, double x, double y, double w, double h, uint32_t rgba);
LOOM_API void loom_canvas_line2(loom_canvas *c, double x0, double y0, double x1, double y1, uint32_t rgba);
/* Draws text (ASCII; '\n' starts a new line) with its top-left corner at x, y; at scale 1 a line
 * is 12 px high. Returns the width in pixels of the widest line. */
LOOM_API double loom_canvas_text(loom_canvas *c, double x, double y, const char *s, uint32_t rgba, double scale);
/* Width and height in pixels that loom_canvas_text would cover. */
LOOM_API double loom_text_width(const char *s, double scale);
LOOM_API double loom_text_height(const char *s, double scale);
/* Projects p to pixel coordinates; *depth is the view-space distance. Returns 1 if p is in
 * front of the camera, 0 otherwise. */
LOOM_API int loom_canvas_project(const loom_canvas *c, const loom_vec3 *p, double *sx, double *sy, double *depth);
/* World-space ray through pixel (sx, sy): origin at the eye, unit direction. */
LOOM_API void loom_canvas_ray(const loom_canvas *c, double sx, double sy, loom_vec3 *origin, loom_vec3 *dir);
/* Writes the canvas as PNG. Returns 0 or -1. */
LOOM_API int loom_canvas_write_png(const loom_canvas *c, const char *path);
/* Reads a PNG into a new canvas (for tests and screenshots). NULL on failure. */
LOOM_API loom_canvas *loom_canvas_read_png(const char *path);

/* LOOM_FFI_END */

#ifdef __cplusplus
}
#endif

#endif /* LOOM_H */
