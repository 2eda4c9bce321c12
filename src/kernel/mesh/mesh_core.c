/* mesh_core.c — the loom_mesh object: allocation, copies, accessors, transform, bounds,
 * validation, adjacency (edges, edge-triangle incidence, bending hinges), vertex merging and
 * OBJ output. Generators live in mesh_gen.c, file loaders in mesh_io.c. */
#define _POSIX_C_SOURCE 200809L
#include "mesh/mesh.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* ---- allocation ------------------------------------------------------------------------------ */

loom_mesh *mesh_alloc(int nv, int nt) {
  if (nv < 0 || nv > MESH_MAX_VERTICES) {
    loom_fail("vertex count %d out of range [0, %d]", nv, (int)MESH_MAX_VERTICES);
    return NULL;
  }
  if (nt < 0 || nt > MESH_MAX_TRIANGLES) {
    loom_fail("triangle count %d out of range [0, %d]", nt, (int)MESH_MAX_TRIANGLES);
    return NULL;
  }
  loom_mesh *m = core_calloc(1, sizeof *m);
  if (!m) return NULL;
  m->v = core_alloc((size_t)nv, sizeof *m->v);
  m->tri = core_alloc((size_t)nt * 3, sizeof *m->tri);
  /* Empty adjacency is still a valid pointer so that accessors never hand out NULL for a live
   * mesh (FFI code indexes them without checking). */
  m->edge = core_alloc(0, sizeof *m->edge);
  m->edge_tri = core_alloc(0, sizeof *m->edge_tri);
  m->hinge = core_alloc(0, sizeof *m->hinge);
  if (!m->v || !m->tri || !m->edge || !m->edge_tri || !m->hinge) {
    loom_mesh_destroy(m);
    return NULL;
  }
  m->nv = nv;
  m->nt = nt;
  return m;
}

LOOM_API void loom_mesh_destroy(loom_mesh *m) {
  if (!m) return;
  core_free(m->v);
  core_free(m->tri);
  core_free(m->edge);
  core_free(m->edge_tri);
  core_free(m->hinge);
  core_free(m);
}

LOOM_API loom_mesh *loom_mesh_weld(const loom_mesh *m, double tol) {
  if (!m) {
    loom_fail("weld: mesh is NULL");
    return NULL;
  }
  if (!(tol >= 0) || !isfinite(tol)) {
    loom_fail("weld: the tolerance must be a finite number >= 0 (m), got %g", tol);
    return NULL;
  }
  loom_mesh *c = loom_mesh_copy(m);
  if (!c) return NULL;
  if (mesh_merge_vertices(c, tol)) {
    loom_mesh_destroy(c);
    return NULL;
  }
  if (c->nt == 0) {
    loom_mesh_destroy(c);
    loom_fail("weld: no triangles left (every one has corners within %g m of each other)", tol);
    return NULL;
  }
  return c;
}

LOOM_API loom_mesh *loom_mesh_copy(const loom_mesh *m) {
  if (!m) {
    loom_fail("mesh is NULL");
    return NULL;
  }
  loom_mesh *c = mesh_alloc(m->nv, m->nt);
  if (!c) return NULL;
  int32_t *e = core_alloc((size_t)m->ne * 2, sizeof *e);
  int32_t *et = core_alloc((size_t)m->ne * 2, sizeof *et);
  int32_t *h = core_alloc((size_t)m->nh * 4, sizeof *h);
  if (!e || !et || !h) {
    core_free(e);
    core_free(et);
    core_free(h);
    loom_mesh_destroy(c);
    return NULL;
  }
  core_free(c->edge);
  core_free(c->edge_tri);
  core_free(c->hinge);
  c->edge = e;
  c->edge_tri = et;
  c->hinge = h;
  if (m->nv) memcpy(c->v, m->v, (size_t)m->nv * sizeof *c->v);
  if (m->nt) memcpy(c->tri, m->tri, (size_t)m->nt * 3 * sizeof *c->tri);
  if (m->ne) {
    memcpy(c->edge, m->edge, (size_t)m->ne * 2 * sizeof *c->edge);
    memcpy(c->edge_tri, m->edge_tri, (size_t)m->ne * 2 * sizeof *c->edge_tri);
  }
  if (m->nh) memcpy(c->hinge, m->hinge, (size_t)m->nh * 4 * sizeof *c->hinge);
  c->ne = m->ne;
  c->nh = m->nh;
  c->grid_nx = m->grid_nx;
  c->grid_ny = m->grid_ny;
  return c;
}

/* ---- accessors ------------------------------------------------------------------------------- */

LOOM_API int loom_mesh_vertex_count(const loom_mesh *m) { return m ? m->nv : 0; }
LOOM_API int loom_mesh_triangle_count(const loom_mesh *m) { return m ? m->nt : 0; }
LOOM_API int loom_mesh_edge_count(const loom_mesh *m) { return m ? m->ne : 0; }
LOOM_API int loom_mesh_hinge_count(const loom_mesh *m) { return m ? m->nh : 0; }
LOOM_API const loom_vec3 *loom_mesh_vertices(const loom_mesh *m) { return m ? m->v : NULL; }
LOOM_API const int32_t *loom_mesh_triangles(const loom_mesh *m) { return m ? m->tri : NULL; }
LOOM_API const int32_t *loom_mesh_edges(const loom_mesh *m) { return m ? m->edge : NULL; }
LOOM_API const int32_t *loom_mesh_hinges(const loom_mesh *m) { return m ? m->hinge : NULL; }

LOOM_API int loom_mesh_grid_dims(const loom_mesh *m, int *nx, int *ny) {
  int is_grid = m && m->grid_nx > 0 && m->grid_ny > 0;
  if (nx) *nx = is_grid ? m->grid_nx : 0;
  if (ny) *ny = is_grid ? m->grid_ny : 0;
  return is_grid;
}

LOOM_API void loom_mesh_aabb(const loom_mesh *m, loom_vec3 *lo, loom_vec3 *hi) {
  vec3 a = v3(0, 0, 0), b = v3(0, 0, 0);
  if (m && m->nv > 0) {
    a = b = m->v[0];
    for (int i = 1; i < m->nv; i++) { /* plain compares: fmin/fmax are library calls here */
      vec3 p = m->v[i];
      if (p.x < a.x) a.x = p.x;
      if (p.y < a.y) a.y = p.y;
      if (p.z < a.z) a.z = p.z;
      if (p.x > b.x) b.x = p.x;
      if (p.y > b.y) b.y = p.y;
      if (p.z > b.z) b.z = p.z;
    }
  }
  if (lo) *lo = a;
  if (hi) *hi = b;
}

double mesh_tri_area2(const loom_mesh *m, int t) {
  const int32_t *c = m->tri + 3 * (size_t)t;
  vec3 a = m->v[c[0]];
  return v3_len(v3_cross(v3_sub(m->v[c[1]], a), v3_sub(m->v[c[2]], a)));
}

LOOM_API void loom_mesh_transform(loom_mesh *m, const loom_vec3 *scale, const loom_quat *rot, const loom_vec3 *t) {
  if (!m) return;
  vec3 s = scale ? *scale : v3(1, 1, 1);
  /* q_normalize maps a zero or non-finite quaternion to the identity. A mirroring scale (odd
   * number of negative factors) turns the winding inside out; the triangles are left as they
   * are because the header promises that topology is kept. */
  mat3 r = rot ? q_to_mat3(q_normalize(*rot)) : m3_identity();
  vec3 d = t ? *t : v3(0, 0, 0);
  for (int i = 0; i < m->nv; i++) {
    vec3 p = m->v[i];
    m->v[i] = v3_add(m3_mulv(&r, v3(s.x * p.x, s.y * p.y, s.z * p.z)), d);
  }
}

static int cmp_directed(const void *pa, const void *pb) {
  const int32_t *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1];
}

int mesh_open_edge(const loom_mesh *m, int32_t *a, int32_t *b) {
  const int ne = 3 * m->nt;
  int32_t *e = core_alloc((size_t)(ne > 0 ? ne : 1) * 2, sizeof *e);
  if (!e) return -1;
  for (int t = 0; t < m->nt; t++)
    for (int k = 0; k < 3; k++) {
      e[2 * (3 * t + k)] = m->tri[3 * t + k];
      e[2 * (3 * t + k) + 1] = m->tri[3 * t + (k + 1) % 3];
    }
  qsort(e, (size_t)ne, 2 * sizeof *e, cmp_directed);
  int rc = 0;
  for (int i = 0; i < ne && !rc; i++) {
    const int32_t key[2] = {e[2 * i + 1], e[2 * i]};
    if (i + 1 < ne && e[2 * i + 2] == e[2 * i] && e[2 * i + 3] == e[2 * i + 1])
      rc = 1;
    else if (!bsearch(key, e, (size_t)ne, 2 * sizeof *e, cmp_directed))
      rc = 2;
    if (rc) *a = e[2 * i], *b = e[2 * i + 1];
  }
  core_free(e);
  return rc;
}

double mesh_signed_volume(const loom_mesh *m) {
  double six = 0;
  for (int t = 0; t < m->nt; t++) {
    const int32_t *c = m->tri + 3 * (size_t)t;
    six += v3_dot(m->v[c[0]], v3_cross(m->v[c[1]], m->v[c[2]]));
  }
  return six / 6.0;
}

/* ---- validation ------------------------------------------------------------------------------ */

int mesh_check_reach(const vec3 *v, int n, const char *kind, const char *name) {
  for (int i = 0; i < n; i++)
    if (!(fabs(v[i].x) <= MESH_MAX_COORD && fabs(v[i].y) <= MESH_MAX_COORD && fabs(v[i].z) <= MESH_MAX_COORD))
      return loom_fail("%s '%s': mesh vertex %d at (%g, %g, %g) lies beyond the %g m from the origin the world "
                       "reaches (scale it to metres: mesh:transform{scale = ...})",
                       kind, name, i, v[i].x, v[i].y, v[i].z, MESH_MAX_COORD);
  return 0;
}

int mesh_validate(const loom_mesh *m) {
  if (!m) return loom_fail("mesh is NULL");
  for (int i = 0; i < m->nv; i++)
    if (!v3_isfinite(m->v[i])) return loom_fail("vertex %d has a non-finite coordinate", i);
  for (int t = 0; t < m->nt; t++) {
    const int32_t *c = m->tri + 3 * (size_t)t;
    for (int k = 0; k < 3; k++)
      if (c[k] < 0 || c[k] >= m->nv)
        return loom_fail("triangle %d: vertex index %d out of range (%d vertices)", t, (int)c[k], m->nv);
    if (c[0] == c[1] || c[1] == c[2] || c[2] == c[0])
      return loom_fail("triangle %d has repeated corners (%d, %d, %d)", t, (int)c[0], (int)c[1], (int)c[2]);
  }
  return 0;
}

LOOM_API loom_mesh *loom_mesh_from_arrays(const loom_vec3 *v, int nv, const int32_t *tri, int nt) {
  if (nv < 0) {
    loom_fail("vertex count must be >= 0 (got %d)", nv);
    return NULL;
  }
  if (nt < 0) {
    loom_fail("triangle count must be >= 0 (got %d)", nt);
    return NULL;
  }
  if (nv > 0 && !v) {
    loom_fail("vertex array is NULL but the vertex count is %d", nv);
    return NULL;
  }
  if (nt > 0 && !tri) {
    loom_fail("triangle array is NULL but the triangle count is %d", nt);
    return NULL;
  }
  loom_mesh *m = mesh_alloc(nv, nt);
  if (!m) return NULL;
  if (nv) memcpy(m->v, v, (size_t)nv * sizeof *m->v);
  if (nt) memcpy(m->tri, tri, (size_t)nt * 3 * sizeof *m->tri);
  if (mesh_validate(m) || mesh_build_adjacency(m)) {
    loom_mesh_destroy(m);
    return NULL;
  }
  return m;
}

/* ---- adjacency ------------------------------------------------------------------------------- */

/* Half-edge h = 3 t + k runs from tri[h] to the next corner of triangle t. */
static int32_t he_from(const int32_t *tri, int32_t h) { return tri[h]; }
static int32_t he_to(const int32_t *tri, int32_t h) { return tri[h - h % 3 + (h % 3 + 1) % 3]; }
static int32_t he_opposite(const int32_t *tri, int32_t h) { return tri[h - h % 3 + (h % 3 + 2) % 3]; }

/* Stable counting sort of the half-edges in `in` by key[h] in [0, nkeys); O(n + nkeys).
 * count has nkeys + 1 entries. */
static void counting_sort(const int32_t *in, int32_t *out, size_t n, const int32_t *key, int32_t *count, int nkeys) {
  memset(count, 0, ((size_t)nkeys + 1) * sizeof *count);
  for (size_t i = 0; i < n; i++) count[key[in[i]] + 1]++;
  for (int k = 0; k < nkeys; k++) count[k + 1] += count[k];
  for (size_t i = 0; i < n; i++) out[count[key[in[i]]]++] = in[i];
}

int mesh_build_adjacency(loom_mesh *m) {
  if (!m) return loom_fail("mesh is NULL");
  size_t nh3 = (size_t)m->nt * 3;
  const int32_t *tri = m->tri;
  for (int t = 0; t < m->nt; t++) {
    const int32_t *c = tri + 3 * (size_t)t;
    for (int k = 0; k < 3; k++)
      if (c[k] < 0 || c[k] >= m->nv)
        return loom_fail("triangle %d: vertex index %d out of range (%d vertices)", t, (int)c[k], m->nv);
    if (c[0] == c[1] || c[1] == c[2] || c[2] == c[0])
      return loom_fail("triangle %d has repeated corners (%d, %d, %d)", t, (int)c[0], (int)c[1], (int)c[2]);
  }

  /* Sort the half-edges by (min vertex, max vertex) with two stable counting sorts (least
   * significant key first, i.e. LSD radix sort): linear time whatever the valences, and ties
   * stay in half-edge order, so within an edge the lower triangle index always comes first. */
  int32_t *lo = core_alloc(nh3, sizeof *lo);
  int32_t *hi = core_alloc(nh3, sizeof *hi);
  int32_t *a = core_alloc(nh3, sizeof *a);
  int32_t *b = core_alloc(nh3, sizeof *b);
  int32_t *count = core_alloc((size_t)m->nv + 1, sizeof *count);
  int32_t *edge = NULL, *edge_tri = NULL, *hinge = NULL;
  int rc = -1;
  if (!lo || !hi || !a || !b || !count) goto done;
  for (size_t h = 0; h < nh3; h++) {
    int32_t p = he_from(tri, (int32_t)h), q = he_to(tri, (int32_t)h);
    lo[h] = p < q ? p : q;
    hi[h] = p < q ? q : p;
    a[h] = (int32_t)h;
  }
  counting_sort(a, b, nh3, hi, count, m->nv);
  counting_sort(b, a, nh3, lo, count, m->nv);

  size_t ne = 0, nh = 0;
  for (size_t i = 0; i < nh3;) {
    size_t j = i + 1;
    while (j < nh3 && lo[a[j]] == lo[a[i]] && hi[a[j]] == hi[a[i]]) j++;
    ne++;
    if (j - i == 2) nh++;
    i = j;
  }
  edge = core_alloc(ne * 2, sizeof *edge);
  edge_tri = core_alloc(ne * 2, sizeof *edge_tri);
  hinge = core_alloc(nh * 4, sizeof *hinge);
  if (!edge || !edge_tri || !hinge) goto done;

  size_t e = 0, hh = 0;
  for (size_t i = 0; i < nh3;) {
    size_t j = i + 1;
    while (j < nh3 && lo[a[j]] == lo[a[i]] && hi[a[j]] == hi[a[i]]) j++;
    int32_t h0 = a[i];
    edge[2 * e] = lo[h0];
    edge[2 * e + 1] = hi[h0];
    edge_tri[2 * e] = h0 / 3;
    edge_tri[2 * e + 1] = j - i >= 2 ? a[i + 1] / 3 : -1;
    if (j - i == 2) {
      /* Triangle 0 fixes the direction: v0 -> v1 as it visits them. */
      int32_t h1 = a[i + 1];
      hinge[4 * hh] = he_from(tri, h0);
      hinge[4 * hh + 1] = he_to(tri, h0);
      hinge[4 * hh + 2] = he_opposite(tri, h0);
      hinge[4 * hh + 3] = he_opposite(tri, h1);
      hh++;
    }
    e++;
    i = j;
  }
  core_free(m->edge);
  core_free(m->edge_tri);
  core_free(m->hinge);
  m->edge = edge;
  m->edge_tri = edge_tri;
  m->hinge = hinge;
  m->ne = (int)ne;
  m->nh = (int)nh;
  edge = edge_tri = hinge = NULL;
  rc = 0;
done:
  core_free(lo);
  core_free(hi);
  core_free(a);
  core_free(b);
  core_free(count);
  core_free(edge);
  core_free(edge_tri);
  core_free(hinge);
  return rc;
}

/* ---- vertex merging -------------------------------------------------------------------------- */

/* One occupied cell of the spatial hash: its packed integer coordinates and the newest kept
 * vertex in it (older ones follow through next[]). */
typedef struct hash_cell {
  uint64_t key;
  int32_t head; /* -1 = empty slot */
} hash_cell;

/* Cell coordinates are in [0, 2^20] (see the cell size below), +1 so that the neighbour at -1
 * is representable: 21 bits per axis, packed into one 63-bit key. */
#define CELL_BITS 21

static uint64_t cell_key(int64_t x, int64_t y, int64_t z) {
  return (uint64_t)(x + 1) | (uint64_t)(y + 1) << CELL_BITS | (uint64_t)(z + 1) << (2 * CELL_BITS);
}

/* The 64-bit finaliser of MurmurHash3 (Appleby): mixes the packed coordinates into the low
 * bits the table index uses. Only speed depends on it: the merge result does not. */
static size_t cell_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return (size_t)k;
}

static hash_cell *cell_find(hash_cell *tab, size_t mask, uint64_t key) {
  for (size_t i = cell_hash(key) & mask;; i = (i + 1) & mask)
    if (tab[i].head < 0 || tab[i].key == key) return &tab[i];
}

int mesh_merge_vertices(loom_mesh *m, double tol) {
  if (!m) return loom_fail("mesh is NULL");
  if (!(tol >= 0) || !isfinite(tol)) return loom_fail("merge tolerance must be finite and >= 0 (got %g)", tol);
  int nv = m->nv, nt = m->nt;
  for (int i = 0; i < nv; i++)
    if (!v3_isfinite(m->v[i])) return loom_fail("vertex %d has a non-finite coordinate", i);
  for (size_t k = 0; k < (size_t)nt * 3; k++)
    if (m->tri[k] < 0 || m->tri[k] >= nv)
      return loom_fail("triangle %d: vertex index %d out of range (%d vertices)", (int)(k / 3), (int)m->tri[k], nv);

  /* Cell size cs = 2 half_cs: at least 4 tol, so a point has neighbours within tol in at most
   * the adjacent cell per axis; at least 2^-20 of the extent, so cell coordinates stay in
   * [0, 2^20] (packed keys) and tiny tolerances do not make every probe a miss; at least
   * DBL_MIN so that it is never zero. Halves keep coordinates near DBL_MAX from overflowing. */
  vec3 lo = v3(0, 0, 0), hi = v3(0, 0, 0);
  loom_mesh_aabb(m, &lo, &hi);
  vec3 half_ext = v3_sub(v3_scale(hi, 0.5), v3_scale(lo, 0.5));
  double ext = fmax(half_ext.x, fmax(half_ext.y, half_ext.z));
  double half_cs = fmax(2.0 * tol, fmax(ldexp(ext, -20), DBL_MIN));
  if (!isfinite(half_cs)) half_cs = DBL_MAX;
  /* A neighbour within tol lies at most `reach` cells away along each axis. The margin covers
   * rounding in f below: relative error ~2 eps on values <= 2^20, i.e. < 1e-9 cells. */
  double reach = 0.5 * tol / half_cs + 1e-6;
  double tol2 = tol * tol;

  size_t cap = 16;
  while (cap < 2 * (size_t)nv) cap *= 2;
  hash_cell *tab = core_alloc(cap, sizeof *tab);
  int32_t *next = core_alloc((size_t)nv, sizeof *next);
  int32_t *map = core_alloc((size_t)nv, sizeof *map);
  int32_t *tri = core_alloc((size_t)nt * 3, sizeof *tri);
  vec3 *v = NULL;
  int rc = -1;
  if (!tab || !next || !map || !tri) goto done;
  for (size_t i = 0; i < cap; i++) tab[i].head = -1;

  for (int i = 0; i < nv; i++) {
    vec3 p = m->v[i];
    double f[3] = {(0.5 * p.x - 0.5 * lo.x) / half_cs, (0.5 * p.y - 0.5 * lo.y) / half_cs,
                   (0.5 * p.z - 0.5 * lo.z) / half_cs};
    int64_t c[3], c0[3], c1[3];
    for (int k = 0; k < 3; k++) {
      double fl = floor(f[k]);
      double frac = f[k] - fl;
      c[k] = (int64_t)fl;
      c0[k] = frac < reach ? c[k] - 1 : c[k];
      c1[k] = frac > 1.0 - reach ? c[k] + 1 : c[k];
    }
    /* The lowest index among all kept vertices within tol: independent of the hash layout and
     * of the order of the lists, hence deterministic. */
    int32_t best = -1;
    for (int64_t z = c0[2]; z <= c1[2]; z++)
      for (int64_t y = c0[1]; y <= c1[1]; y++)
        for (int64_t x = c0[0]; x <= c1[0]; x++) {
          hash_cell *cell = cell_find(tab, cap - 1, cell_key(x, y, z));
          for (int32_t r = cell->head; r >= 0; r = next[r]) {
            if (best >= 0 && r > best) continue;
            vec3 d = v3_sub(m->v[r], p);
            int close = tol > 0 ? v3_len2(d) <= tol2 : (d.x == 0 && d.y == 0 && d.z == 0);
            if (close) best = r;
          }
        }
    if (best >= 0) {
      map[i] = best;
    } else {
      map[i] = i;
      uint64_t key = cell_key(c[0], c[1], c[2]);
      hash_cell *cell = cell_find(tab, cap - 1, key);
      cell->key = key;
      next[i] = cell->head;
      cell->head = i;
    }
  }

  /* Remap triangles, dropping those whose corners now coincide. Collinear triangles with three
   * distinct corners stay: removing them would open holes in closed meshes. */
  int nt2 = 0;
  for (int t = 0; t < nt; t++) {
    int32_t p = map[m->tri[3 * t]], q = map[m->tri[3 * t + 1]], r = map[m->tri[3 * t + 2]];
    if (p == q || q == r || r == p) continue;
    tri[3 * nt2] = p;
    tri[3 * nt2 + 1] = q;
    tri[3 * nt2 + 2] = r;
    nt2++;
  }
  /* Keep used survivors in their original order; next[] is reused as the new index. */
  for (int i = 0; i < nv; i++) next[i] = -1;
  for (int k = 0; k < 3 * nt2; k++) next[tri[k]] = 0;
  int nv2 = 0;
  for (int i = 0; i < nv; i++)
    if (next[i] == 0) next[i] = nv2++;
  v = core_alloc((size_t)nv2, sizeof *v);
  if (!v) goto done;
  for (int i = 0; i < nv; i++)
    if (next[i] >= 0) v[next[i]] = m->v[i];
  for (int k = 0; k < 3 * nt2; k++) tri[k] = next[tri[k]];

  /* Build the adjacency on a temporary mesh first so that a failure leaves m unchanged. */
  loom_mesh tmp = *m;
  tmp.nv = nv2;
  tmp.nt = nt2;
  tmp.v = v;
  tmp.tri = tri;
  if (mesh_build_adjacency(&tmp)) {
    /* mesh_build_adjacency only replaces the arrays on success: nothing to undo. */
    goto done;
  }
  int renumbered = nv2 != nv || nt2 != nt;
  core_free(m->v);
  core_free(m->tri);
  *m = tmp;
  if (renumbered) m->grid_nx = m->grid_ny = 0;
  v = NULL;
  tri = NULL;
  rc = 0;
done:
  core_free(tab);
  core_free(next);
  core_free(map);
  core_free(tri);
  core_free(v);
  return rc;
}

/* ---- OBJ output ------------------------------------------------------------------------------ */

static int fail_errno(const char *path, const char *what, int err) {
  char why[128];
  if (strerror_r(err, why, sizeof why)) snprintf(why, sizeof why, "error %d", err);
  return loom_fail("%s: %s (%s)", path, what, why);
}

LOOM_API int loom_mesh_save_obj(const loom_mesh *m, const loom_vec3 *x, const char *path) {
  if (!m) return loom_fail("mesh is NULL");
  if (!path) return loom_fail("path is NULL");
  const vec3 *p = x ? x : m->v;
  for (int i = 0; i < m->nv; i++)
    if (!v3_isfinite(p[i])) return loom_fail("%s: vertex %d has a non-finite coordinate", path, i);
  FILE *f = fopen(path, "w");
  if (!f) return fail_errno(path, "cannot open for writing", errno);
  /* %.17g round-trips every double exactly; the C locale guarantees a '.' decimal point even
   * if the host process changed LC_NUMERIC (uselocale is per thread). */
  locale_t c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = c_loc ? uselocale(c_loc) : (locale_t)0;
  int err = 0;
  if (fprintf(f, "# loom mesh: %d vertices, %d triangles\n", m->nv, m->nt) < 0) err = errno ? errno : EIO;
  for (int i = 0; i < m->nv && !err; i++)
    if (fprintf(f, "v %.17g %.17g %.17g\n", p[i].x, p[i].y, p[i].z) < 0) err = errno ? errno : EIO;
  for (int t = 0; t < m->nt && !err; t++) {
    const int32_t *c = m->tri + 3 * (size_t)t;
    if (fprintf(f, "f %d %d %d\n", (int)c[0] + 1, (int)c[1] + 1, (int)c[2] + 1) < 0) err = errno ? errno : EIO;
  }
  if (c_loc) {
    uselocale(old);
    freelocale(c_loc);
  }
  if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
  if (err) return fail_errno(path, "write failed", err);
  return 0;
}
