/* mesh_simplex.c — simplex-2 meshes (document 004): every vertex has exactly three neighbours.
 * A simplex mesh is the dual of a closed triangulation: one vertex per triangle (at its centroid,
 * or on the analytic surface for the generators), one edge per triangulation edge, one face per
 * triangulation vertex. Each vertex's neighbours are stored in the order that makes 004's normal
 * -normalize((n2 - n1) x (n3 - n2)) point outward; faces are vertex cycles counter-clockwise seen
 * from outside, fan-triangulated from their first vertex for drawing and collision. */
#include <stdlib.h>
#include <string.h>

#include "mesh/mesh.h"


static loom_simplex_mesh *simplex_alloc(int nv, int ne, int nf, int nfv, int nt) {
  loom_simplex_mesh *s = core_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nv = nv, s->ne = ne, s->nf = nf, s->nt = nt;
  s->v = core_alloc((size_t)nv, sizeof(vec3));
  s->nbr = core_alloc((size_t)nv * 3, sizeof(int32_t));
  s->edge = core_alloc((size_t)ne * 2, sizeof(int32_t));
  s->face_start = core_alloc((size_t)nf + 1, sizeof(int32_t));
  s->face_v = core_alloc((size_t)nfv + 1, sizeof(int32_t));
  s->tri = core_alloc((size_t)nt * 3 + 1, sizeof(int32_t));
  if (!s->v || !s->nbr || !s->edge || !s->face_start || !s->face_v || !s->tri) {
    loom_simplex_mesh_destroy(s);
    return NULL;
  }
  return s;
}

LOOM_API void loom_simplex_mesh_destroy(loom_simplex_mesh *s) {
  if (!s) return;
  core_free(s->v), core_free(s->nbr), core_free(s->edge), core_free(s->face_start), core_free(s->face_v);
  core_free(s->tri);
  core_free(s);
}

/* a directed half-edge of the triangulation: from a to b in triangle t */
typedef struct half {
  int32_t lo, hi, t, fwd; /* fwd: a < b */
} half;

static int half_cmp(const void *pa, const void *pb) {
  const half *a = pa, *b = pb;
  if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
  if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
  if (a->fwd != b->fwd) return a->fwd < b->fwd ? -1 : 1;
  return a->t < b->t ? -1 : a->t > b->t;
}

static int cmp_i64(const void *pa, const void *pb) {
  const int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : a > b;
}

LOOM_API loom_simplex_mesh *loom_simplex_mesh_dual(const loom_mesh *m) {
  if (!m) return loom_fail("simplex_dual: mesh is NULL"), NULL;
  if (m->nt < 4) return loom_fail("simplex_dual: a closed triangle mesh needs at least 4 triangles, got %d", m->nt), NULL;
  if (mesh_validate(m) != 0) return NULL;
  const int nt = m->nt, nv = m->nv;
  half *H = core_alloc((size_t)nt * 3, sizeof *H);
  int32_t *across = core_alloc((size_t)nt * 3, sizeof(int32_t)); /* triangle across edge (c, c+1) of t */
  int32_t *deg = core_calloc((size_t)nv + 1, sizeof(int32_t));
  loom_simplex_mesh *s = NULL;
  if (!H || !across || !deg) goto done;
  for (int t = 0; t < nt; t++)
    for (int c = 0; c < 3; c++) {
      const int32_t a = m->tri[3 * t + c], b = m->tri[3 * t + (c + 1) % 3];
      H[3 * t + c] = (half){a < b ? a : b, a < b ? b : a, 3 * t + c, a < b};
      deg[a]++;
    }
  qsort(H, (size_t)nt * 3, sizeof *H, half_cmp);
  int ne = 0;
  for (int k = 0; k < 3 * nt;) {
    int e = k + 1;
    while (e < 3 * nt && H[e].lo == H[k].lo && H[e].hi == H[k].hi) e++;
    const int cnt = e - k;
    if (cnt == 1) {
      loom_fail("simplex_dual: the mesh is open (edge %d-%d belongs to one triangle, %d); a simplex mesh is the dual "
                "of a closed surface, so every vertex would not get three neighbours",
                H[k].lo, H[k].hi, H[k].t / 3);
      goto done;
    }
    if (cnt > 2) {
      loom_fail("simplex_dual: edge %d-%d is shared by %d triangles (non-manifold); its dual would not be 3-regular",
                H[k].lo, H[k].hi, cnt);
      goto done;
    }
    if (H[k].fwd == H[k + 1].fwd) {
      loom_fail("simplex_dual: triangles %d and %d run edge %d-%d in the same direction (inconsistent orientation); "
                "orient the mesh's triangles consistently",
                H[k].t / 3, H[k + 1].t / 3, H[k].lo, H[k].hi);
      goto done;
    }
    across[H[k].t] = H[k + 1].t / 3;
    across[H[k + 1].t] = H[k].t / 3;
    ne++;
    k = e;
  }
  int nf = 0;
  for (int i = 0; i < nv; i++) nf += deg[i] > 0;
  /* Each vertex i of the triangulation becomes a face: its triangles in counter-clockwise order
   * seen from outside. A vertex whose triangles form more than one fan (a pinched surface) is
   * refused: its face would not be one polygon. */
  s = simplex_alloc(nt, ne, nf, 3 * nt, 3 * nt - 2 * nf);
  if (!s) goto done;
  for (int t = 0; t < nt; t++) {
    const vec3 a = m->v[m->tri[3 * t]], b = m->v[m->tri[3 * t + 1]], c = m->v[m->tri[3 * t + 2]];
    s->v[t] = v3_scale(v3_add(a, v3_add(b, c)), 1.0 / 3.0);
    /* across (a,b), (b,c), (c,a) run counter-clockwise seen from outside; 004's order is the reverse */
    s->nbr[3 * t] = across[3 * t];
    s->nbr[3 * t + 1] = across[3 * t + 2];
    s->nbr[3 * t + 2] = across[3 * t + 1];
  }
  {
    int k = 0;
    for (int i = 0; i < 3 * nt - 1; i++) {
      if (H[i].lo != H[i + 1].lo || H[i].hi != H[i + 1].hi) continue;
      const int ta = H[i].t / 3, tb = H[i + 1].t / 3;
      s->edge[2 * k] = ta < tb ? ta : tb;
      s->edge[2 * k + 1] = ta < tb ? tb : ta;
      k++;
    }
    /* sorted edges (deterministic, independent of the triangulation's numbering of its vertices) */
    int64_t *key = core_alloc((size_t)ne, sizeof(int64_t));
    if (!key) {
      loom_simplex_mesh_destroy(s);
      s = NULL;
      goto done;
    }
    for (int e = 0; e < ne; e++) key[e] = (int64_t)s->edge[2 * e] * nt + s->edge[2 * e + 1];
    qsort(key, (size_t)ne, sizeof(int64_t), cmp_i64);
    for (int e = 0; e < ne; e++) s->edge[2 * e] = (int32_t)(key[e] / nt), s->edge[2 * e + 1] = (int32_t)(key[e] % nt);
    core_free(key);
  }
  /* corner slot of vertex i in each triangle: first triangle per vertex, then walk */
  int32_t *first = core_alloc((size_t)nv, sizeof(int32_t));
  if (!first) {
    loom_simplex_mesh_destroy(s);
    s = NULL;
    goto done;
  }
  for (int i = 0; i < nv; i++) first[i] = -1;
  for (int t = 0; t < nt; t++)
    for (int c = 0; c < 3; c++)
      if (first[m->tri[3 * t + c]] < 0) first[m->tri[3 * t + c]] = t;
  int f = 0, fv = 0, ntri = 0;
  for (int i = 0; i < nv; i++) {
    if (deg[i] == 0) continue;
    s->face_start[f] = fv;
    int t = first[i], count = 0;
    do {
      if (count >= deg[i]) break;
      s->face_v[fv + count++] = t;
      /* t = (i, q, r) counter-clockwise: the next triangle counter-clockwise around i is across (r, i) */
      int c = 0;
      while (m->tri[3 * t + c] != i) c++;
      t = across[3 * t + (c + 2) % 3];
    } while (t != first[i]);
    if (count != deg[i] || t != first[i]) {
      loom_fail("simplex_dual: vertex %d is pinched (its %d triangles form more than one fan); its face would not be "
                "one polygon",
                i, deg[i]);
      core_free(first);
      loom_simplex_mesh_destroy(s);
      s = NULL;
      goto done;
    }
    for (int k = 1; k + 1 < count; k++) {
      s->tri[3 * ntri] = s->face_v[fv];
      s->tri[3 * ntri + 1] = s->face_v[fv + k];
      s->tri[3 * ntri + 2] = s->face_v[fv + k + 1];
      ntri++;
    }
    fv += count;
    f++;
  }
  s->face_start[f] = fv;
  s->nt = ntri;
  core_free(first);
done:
  core_free(H), core_free(across), core_free(deg);
  return s;
}

/* ---- generators: duals of the triangle generators, vertices moved onto the analytic surface ---- */

static loom_simplex_mesh *finish(loom_mesh *tri, int shape, double R, double r, const loom_vec3 *center) {
  if (!tri) return NULL;
  loom_simplex_mesh *s = loom_simplex_mesh_dual(tri);
  loom_mesh_destroy(tri);
  if (!s) return NULL;
  s->shape = shape, s->R = R, s->r = r;
  const vec3 c = center ? *center : v3(0, 0, 0);
  s->center = c;
  for (int i = 0; i < s->nv; i++) {
    vec3 p = s->v[i];
    if (shape == LOOM_SIMPLEX_SPHERE) {
      p = v3_scale(p, R / v3_len(p));
    } else if (shape == LOOM_SIMPLEX_TORUS) {
      const double rho = sqrt(p.x * p.x + p.y * p.y);
      const vec3 pc = v3(p.x * R / rho, p.y * R / rho, 0); /* nearest point of the skeleton circle */
      p = v3_madd(pc, v3_normalize(v3_sub(p, pc)), r);
    } else if (shape == LOOM_SIMPLEX_CYLINDER) {
      /* side vertices onto the side; cap vertices stay on their cap plane */
      const double rho = sqrt(p.x * p.x + p.y * p.y);
      if (fabs(fabs(p.z) - r) > 1e-9 * (r + R)) p.x *= R / rho, p.y *= R / rho;
    }
    s->v[i] = v3_add(p, c);
  }
  return s;
}

static int check_size(const char *fn, const char *what, double v) {
  if (!isfinite(v) || !(v > 0) || v > 1e6) return loom_fail("%s: '%s' must be a number in (0, 1e6], got %g", fn, what, v);
  return 0;
}

LOOM_API loom_simplex_mesh *loom_simplex_sphere(double radius, const loom_vec3 *center, int rings, int segments) {
  if (check_size("simplex_sphere", "radius", radius)) return NULL;
  if (rings < 2 || rings > 2048 || segments < 3 || segments > 2048)
    return loom_fail("simplex_sphere: 'rings' must be in [2, 2048] and 'segments' in [3, 2048], got %d, %d", rings,
                     segments), NULL;
  /* `rings` circles of vertices between the poles */
  return finish(loom_mesh_sphere(radius, segments, rings + 1), LOOM_SIMPLEX_SPHERE, radius, 0, center);
}

LOOM_API loom_simplex_mesh *loom_simplex_torus(double R, double r, const loom_vec3 *center, int rings, int segments) {
  if (check_size("simplex_torus", "R", R) || check_size("simplex_torus", "r", r)) return NULL;
  if (!(r < R)) return loom_fail("simplex_torus: 'r' must be smaller than 'R' (got r = %g, R = %g)", r, R), NULL;
  if (rings < 3 || rings > 2048 || segments < 3 || segments > 2048)
    return loom_fail("simplex_torus: 'rings' and 'segments' must be in [3, 2048], got %d, %d", rings, segments), NULL;
  /* `segments` around the axis, `rings` around the tube */
  return finish(loom_mesh_torus(R, r, segments, rings), LOOM_SIMPLEX_TORUS, R, r, center);
}

LOOM_API loom_simplex_mesh *loom_simplex_cylinder(double radius, double height, const loom_vec3 *center, int rings,
                                                   int segments) {
  if (check_size("simplex_cylinder", "radius", radius) || check_size("simplex_cylinder", "height", height)) return NULL;
  if (rings < 1 || rings > 2048 || segments < 3 || segments > 2048)
    return loom_fail("simplex_cylinder: 'rings' must be in [1, 2048] and 'segments' in [3, 2048], got %d, %d", rings,
                     segments), NULL;
  return finish(loom_mesh_cylinder(radius, 0.5 * height, segments, rings), LOOM_SIMPLEX_CYLINDER, radius, 0.5 * height,
                center);
}

LOOM_API loom_simplex_mesh *loom_simplex_mesh_copy(const loom_simplex_mesh *m) {
  if (!m) return loom_fail("simplex_mesh:copy: mesh is NULL"), NULL;
  loom_simplex_mesh *s = simplex_alloc(m->nv, m->ne, m->nf, m->face_start[m->nf], m->nt);
  if (!s) return NULL;
  memcpy(s->v, m->v, sizeof(vec3) * (size_t)m->nv);
  memcpy(s->nbr, m->nbr, sizeof(int32_t) * 3 * (size_t)m->nv);
  memcpy(s->edge, m->edge, sizeof(int32_t) * 2 * (size_t)m->ne);
  memcpy(s->face_start, m->face_start, sizeof(int32_t) * ((size_t)m->nf + 1));
  memcpy(s->face_v, m->face_v, sizeof(int32_t) * (size_t)m->face_start[m->nf]);
  memcpy(s->tri, m->tri, sizeof(int32_t) * 3 * (size_t)m->nt);
  s->shape = m->shape, s->R = m->R, s->r = m->r, s->center = m->center;
  return s;
}

LOOM_API int loom_simplex_mesh_vertex_count(const loom_simplex_mesh *m) { return m ? m->nv : 0; }
LOOM_API int loom_simplex_mesh_edge_count(const loom_simplex_mesh *m) { return m ? m->ne : 0; }
LOOM_API int loom_simplex_mesh_face_count(const loom_simplex_mesh *m) { return m ? m->nf : 0; }
LOOM_API int loom_simplex_mesh_triangle_count(const loom_simplex_mesh *m) { return m ? m->nt : 0; }
LOOM_API loom_vec3 *loom_simplex_mesh_vertices(loom_simplex_mesh *m) { return m ? m->v : NULL; }
LOOM_API const int32_t *loom_simplex_mesh_neighbors(const loom_simplex_mesh *m) { return m ? m->nbr : NULL; }
LOOM_API const int32_t *loom_simplex_mesh_edges(const loom_simplex_mesh *m) { return m ? m->edge : NULL; }
LOOM_API const int32_t *loom_simplex_mesh_triangles(const loom_simplex_mesh *m) { return m ? m->tri : NULL; }
LOOM_API const int32_t *loom_simplex_mesh_face_offsets(const loom_simplex_mesh *m) { return m ? m->face_start : NULL; }
LOOM_API const int32_t *loom_simplex_mesh_face_vertices(const loom_simplex_mesh *m) { return m ? m->face_v : NULL; }

LOOM_API int loom_simplex_mesh_shape(const loom_simplex_mesh *m, double *R, double *r, loom_vec3 *center) {
  if (!m) return 0;
  if (R) *R = m->R;
  if (r) *r = m->r;
  if (center) *center = m->center;
  return m->shape;
}

void simplex_vertex_normals(const vec3 *x, const int32_t *nbr, int nv, vec3 *out) {
  for (int i = 0; i < nv; i++) {
    const vec3 a = x[nbr[3 * i]], b = x[nbr[3 * i + 1]], c = x[nbr[3 * i + 2]];
    const vec3 n = v3_cross(v3_sub(b, a), v3_sub(c, b));
    const double l = v3_len(n);
    out[i] = l > 0 ? v3_scale(n, -1.0 / l) : v3(0, 0, 0);
  }
}

LOOM_API int loom_simplex_mesh_normals(const loom_simplex_mesh *m, const loom_vec3 *x, loom_vec3 *out) {
  if (!m || !out) return loom_fail("simplex_mesh:normals: NULL argument");
  simplex_vertex_normals(x ? x : m->v, m->nbr, m->nv, out);
  return 0;
}

LOOM_API int loom_simplex_mesh_check(const loom_simplex_mesh *m) {
  if (!m) return loom_fail("simplex mesh is NULL");
  for (int i = 0; i < m->nv; i++)
    if (!v3_isfinite(m->v[i])) return loom_fail("simplex mesh: vertex %d has a non-finite coordinate", i);
  return 0;
}
