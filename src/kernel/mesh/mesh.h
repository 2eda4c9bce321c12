/* mesh.h — the triangle mesh object behind loom_mesh (private to the kernel). */
#ifndef LOOM_MESH_H
#define LOOM_MESH_H

#include "core/core.h"
#include "math/math_vec.h"

struct loom_mesh {
  int nv, nt, ne, nh;
  vec3 *v;          /* nv vertex positions */
  int32_t *tri;     /* nt x 3 vertex indices, counter-clockwise seen from the front */
  int32_t *edge;    /* ne x 2, v0 < v1, sorted lexicographically */
  int32_t *edge_tri;/* ne x 2 adjacent triangles (-1 = none); non-manifold edges keep the first two */
  int32_t *hinge;   /* nh x 4: v0, v1 of an interior edge, opposite vertex in triangle 0, in triangle 1 */
  int grid_nx, grid_ny; /* vertices per side for meshes made by loom_mesh_grid, else 0 */
};

/* Grid indexing (loom_mesh_grid; the springs model relies on it):
 *   vertex (i, j), 0 <= i < grid_nx, 0 <= j < grid_ny, is v[j * grid_nx + i];
 *   i runs along the plane's first axis u and j along its second axis v
 *   (XY: u = x, v = y; XZ: u = x, v = z; YZ: u = y, v = z), from -w/2 to +w/2 and -h/2 to +h/2
 *   around the centre. Triangles are counter-clockwise seen from +n, n = u x v (XY: +z,
 *   XZ: -y, YZ: +x). Cell (i, j) with corners a = (i, j), b = (i+1, j), c = (i+1, j+1),
 *   d = (i, j+1) is triangles 2 (j (grid_nx - 1) + i) and that + 1:
 *     (i + j) even: diagonal a-c, triangles (a, b, c), (a, c, d);
 *     (i + j) odd:  diagonal b-d, triangles (a, b, d), (b, c, d).
 * Any operation that renumbers vertices or drops triangles resets grid_nx = grid_ny = 0. */

/* A tetrahedral mesh (loom_tet_mesh): every tet positively oriented, (b - a) . ((c - a) x (d - a)) > 0. */
struct loom_tet_mesh {
  int nv, nt, ne, nf;
  vec3 *v;            /* nv vertex positions */
  int32_t *tet;       /* nt x 4 */
  int32_t *edge;      /* ne x 2, lower index first, sorted */
  int32_t *face;      /* nf x 3 surface triangles, counter-clockwise seen from outside */
  int32_t *face_tet;  /* nf: the tet of each surface triangle */
  int flipped;        /* the input was written with the opposite orientation (every tet flipped) */
};

/* Signed volume of tet (a, b, c, d): (b - a) . ((c - a) x (d - a)) / 6. */
static inline double tet_signed_volume(vec3 a, vec3 b, vec3 c, vec3 d) {
  return v3_dot(v3_sub(b, a), v3_cross(v3_sub(c, a), v3_sub(d, a))) / 6.0;
}
/* Barycentric coordinates of p in tet (a, b, c, d) (w sums to 1; all >= 0 inside). */
void tet_barycentric(vec3 p, vec3 a, vec3 b, vec3 c, vec3 d, double w[4]);
/* The tet that contains p (the one whose smallest barycentric coordinate is largest), or when
 * none does the nearest one; its barycentric coordinates in w and the distance (0 inside) in
 * *dist. O(tets). -1 for an empty mesh. */
int tet_mesh_locate(const loom_tet_mesh *m, vec3 p, double w[4], double *dist);

/* A simplex-2 mesh (loom_simplex_mesh, mesh_simplex.c): three neighbours per vertex. */
struct loom_simplex_mesh {
  int nv, ne, nf, nt;
  vec3 *v;
  int32_t *nbr;        /* nv x 3 */
  int32_t *edge;       /* ne x 2, lower first, sorted */
  int32_t *face_start; /* nf + 1 */
  int32_t *face_v;     /* the faces' vertex cycles */
  int32_t *tri;        /* nt x 3 fan triangles */
  int shape;           /* LOOM_SIMPLEX_* of the generator (0: a dual of a user mesh) */
  double R, r;         /* sphere / cylinder radius in R; torus: skeleton radius R, tube radius r */
  vec3 center;
};

/* 004's vertex normals -normalize((n2 - n1) x (n3 - n2)) of positions x (zero where degenerate). */
void simplex_vertex_normals(const vec3 *x, const int32_t *nbr, int nv, vec3 *out);

/* Hard limits that keep every index product (3 nt, 2 ne <= 6 nt) inside int32 and stop hostile
 * arguments or files from requesting absurd allocations. */
#define MESH_MAX_VERTICES (INT32_MAX / 3)
#define MESH_MAX_TRIANGLES (INT32_MAX / 6)
/* Largest segment / division count a generator accepts (grid: nx, ny; sphere: segments, rings). */
#define MESH_MAX_SEGMENTS 4096

/* Allocates a mesh with room for nv vertices and nt triangles (v and tri uninitialised,
 * adjacency empty). NULL on failure (message set). */
loom_mesh *mesh_alloc(int nv, int nt);
/* (Re)builds edges, edge_tri and hinges from tri. Deterministic (sorted), O(nt + nv). Hinge
 * (v0, v1, a, b): triangle 0 = edge_tri[2e] (the lower index) visits v0 then v1 in its cyclic
 * order (so v0 > v1 is possible), a is its third vertex, b the third vertex of triangle 1.
 * Fails (-1, mesh unchanged) on an index out of range or a triangle with repeated corners. */
int mesh_build_adjacency(loom_mesh *m);
/* Checks indices in range, finite coordinates and distinct corners in every triangle; the
 * message names the first problem. 0 or -1. */
int mesh_validate(const loom_mesh *m);
#define MESH_MAX_COORD 1.0e6 /* m: the world's reach (world.h: SOFT_MAX_COORD) */
/* A body's mesh must lie within the world's reach: fails naming the body ("cloth 'c'") and the
 * first vertex farther than MESH_MAX_COORD from the origin in any coordinate (the divergence
 * guard's limit, beyond which a body is stopped at its first step). 0 or -1. */
int mesh_check_reach(const vec3 *v, int n, const char *kind, const char *name);
/* Merges vertices closer than tol (absolute, metres; 0 = exact duplicates only) keeping the
 * first occurrence's position, remaps triangles, drops triangles whose corners coincide after
 * merging and vertices no triangle uses. Vertex i merges into the lowest-index earlier kept
 * vertex within tol (not transitive: a chain of points tol apart is not collapsed). Survivors
 * keep their relative order. Deterministic. Rebuilds adjacency. 0 or -1 (mesh unchanged). */
int mesh_merge_vertices(loom_mesh *m, double tol);
/* Twice the area of triangle t. */
double mesh_tri_area2(const loom_mesh *m, int t);
/* Whether the surface is closed: every directed edge of every triangle used once and its twin
 * (the same edge the other way) by exactly one other triangle, i.e. manifold, without holes and
 * consistently oriented. 0 when closed; 1 when an edge is used twice in the same direction (non-
 * manifold or inconsistently oriented), 2 when an edge belongs to one triangle only (open), with
 * that edge in *a, *b; -1 out of memory (message set). Deterministic. */
int mesh_open_edge(const loom_mesh *m, int32_t *a, int32_t *b);
/* The signed volume the triangles enclose (the divergence theorem): positive for a closed surface
 * wound counter-clockwise seen from outside, negative for one wound the other way. */
double mesh_signed_volume(const loom_mesh *m);
/* Parses OBJ or STL content held in memory (same rules and messages as loom_mesh_load, with
 * `name` standing for the path in messages). data need not be NUL-terminated. Caller owns. */
loom_mesh *mesh_load_memory(const char *name, const void *data, size_t size);

#endif
