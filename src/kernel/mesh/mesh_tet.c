/* mesh_tet.c — tetrahedral meshes: construction from arrays with validity checks (orientation,
 * zero volume, non-manifold faces, unused vertices), edges and the outward surface, the regular
 * lattices of a box (document 002's 5 tetrahedra per cell, or 6), the lattice that fills a closed
 * triangle mesh, and point location (the tetrahedron containing a point, or the nearest one). */
#include "mesh/mesh.h"

#include <stdlib.h>

#include "geom/geom.h"
#include <string.h>

LOOM_API void loom_tet_mesh_destroy(loom_tet_mesh *m) {
  if (!m) return;
  core_free(m->v);
  core_free(m->tet);
  core_free(m->edge);
  core_free(m->face);
  core_free(m->face_tet);
  core_free(m);
}

/* ---- sorting helpers ----------------------------------------------------------------------- */

typedef struct face_key {
  int32_t s[3]; /* sorted corners */
  int32_t tet, k; /* the tet and which of its faces */
} face_key;

static int cmp_face(const void *pa, const void *pb) {
  const face_key *a = pa, *b = pb;
  for (int i = 0; i < 3; i++)
    if (a->s[i] != b->s[i]) return a->s[i] < b->s[i] ? -1 : 1;
  if (a->tet != b->tet) return a->tet < b->tet ? -1 : 1;
  return a->k - b->k;
}

static int cmp_edge(const void *pa, const void *pb) {
  const int32_t *a = pa, *b = pb;
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return a[1] < b[1] ? -1 : a[1] > b[1];
}

static int cmp_int(const void *pa, const void *pb) {
  const int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  return a < b ? -1 : a > b;
}

static void sort3(int32_t *s) {
  int32_t t;
  if (s[0] > s[1]) t = s[0], s[0] = s[1], s[1] = t;
  if (s[1] > s[2]) t = s[1], s[1] = s[2], s[2] = t;
  if (s[0] > s[1]) t = s[0], s[0] = s[1], s[1] = t;
}

/* The outward faces of a positively oriented tet (a, b, c, d): each seen counter-clockwise from
 * outside (the opposite corner lies on the negative side of its normal). */
static const int tet_faces[4][3] = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};

/* Edges, surface triangles and their tets from the (valid, positively oriented) tets. */
static int build_topology(loom_tet_mesh *m) {
  const int nt = m->nt;
  face_key *fk = core_alloc((size_t)nt * 4, sizeof *fk);
  int32_t *e = core_alloc((size_t)nt * 12, sizeof *e);
  if (!fk || !e) {
    core_free(fk);
    core_free(e);
    return -1;
  }
  for (int t = 0; t < nt; t++) {
    const int32_t *q = m->tet + 4 * t;
    for (int k = 0; k < 4; k++) {
      face_key *f = &fk[4 * t + k];
      for (int i = 0; i < 3; i++) f->s[i] = q[tet_faces[k][i]];
      sort3(f->s);
      f->tet = t;
      f->k = k;
    }
    static const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int k = 0; k < 6; k++) {
      int32_t a = q[pairs[k][0]], b = q[pairs[k][1]];
      e[12 * t + 2 * k] = a < b ? a : b;
      e[12 * t + 2 * k + 1] = a < b ? b : a;
    }
  }
  qsort(fk, (size_t)nt * 4, sizeof *fk, cmp_face);
  qsort(e, (size_t)nt * 6, 2 * sizeof *e, cmp_edge);
  int ne = 0;
  for (int i = 0; i < 6 * nt; i++)
    if (i == 0 || cmp_edge(e + 2 * i, e + 2 * (ne - 1))) {
      e[2 * ne] = e[2 * i];
      e[2 * ne + 1] = e[2 * i + 1];
      ne++;
    }
  /* faces: one occurrence = surface, two = interior, more = non-manifold */
  int nf = 0;
  for (int i = 0; i < 4 * nt;) {
    int j = i + 1;
    while (j < 4 * nt && !memcmp(fk[j].s, fk[i].s, sizeof fk[i].s)) j++;
    if (j - i > 2) {
      const face_key f = fk[i + 2];
      core_free(fk);
      core_free(e);
      return loom_fail("tet %d: its face (%d, %d, %d) is shared by %d tetrahedra (at most 2 in a manifold mesh)",
                       f.tet, f.s[0], f.s[1], f.s[2], j - i);
    }
    if (j - i == 1) nf++;
    i = j;
  }
  int32_t *face = core_alloc((size_t)(nf > 0 ? nf : 1) * 3, sizeof *face);
  int32_t *face_tet = core_alloc((size_t)(nf > 0 ? nf : 1), sizeof *face_tet);
  int32_t *edge = core_realloc(e, (size_t)(ne > 0 ? ne : 1) * 2, sizeof *e);
  if (!face || !face_tet || !edge) {
    core_free(face);
    core_free(face_tet);
    core_free(edge ? edge : e);
    core_free(fk);
    return -1;
  }
  /* surface triangles in the order of their tets and faces (deterministic and local) */
  int n = 0;
  for (int i = 0; i < 4 * nt;) {
    int j = i + 1;
    while (j < 4 * nt && !memcmp(fk[j].s, fk[i].s, sizeof fk[i].s)) j++;
    if (j - i == 1) face_tet[n++] = 4 * fk[i].tet + fk[i].k;
    i = j;
  }
  qsort(face_tet, (size_t)nf, sizeof *face_tet, cmp_int);
  for (int i = 0; i < nf; i++) {
    const int t = face_tet[i] / 4, k = face_tet[i] % 4;
    for (int c = 0; c < 3; c++) face[3 * i + c] = m->tet[4 * t + tet_faces[k][c]];
    face_tet[i] = t;
  }
  core_free(fk);
  m->edge = edge;
  m->ne = ne;
  m->face = face;
  m->face_tet = face_tet;
  m->nf = nf;
  return 0;
}

/* ---- construction ------------------------------------------------------------------------- */

/* Takes ownership of v (nv) and tet (4 nt); validates, orients, builds the topology. */
static loom_tet_mesh *tet_mesh_make(vec3 *v, int nv, int32_t *tet, int nt) {
  loom_tet_mesh *m = core_calloc(1, sizeof *m);
  if (!m) {
    core_free(v);
    core_free(tet);
    return NULL;
  }
  m->v = v;
  m->tet = tet;
  m->nv = nv;
  m->nt = nt;
  if (nv < 4 || nt < 1) {
    loom_fail("a tetrahedral mesh needs at least 4 vertices and 1 tetrahedron (got %d and %d)", nv, nt);
    goto fail;
  }
  for (int i = 0; i < nv; i++)
    if (!v3_isfinite(v[i])) {
      loom_fail("vertex %d has a non-finite coordinate", i);
      goto fail;
    }
  uint8_t *used = core_calloc((size_t)nv, 1);
  if (!used) goto fail;
  double len = 0;
  for (int t = 0; t < nt; t++) {
    int32_t *q = tet + 4 * t;
    for (int k = 0; k < 4; k++) {
      if (q[k] < 0 || q[k] >= nv) {
        loom_fail("tet %d: vertex index %d out of range [0, %d)", t, q[k], nv);
        core_free(used);
        goto fail;
      }
      for (int l = 0; l < k; l++)
        if (q[l] == q[k]) {
          loom_fail("tet %d: vertex %d appears twice", t, q[k]);
          core_free(used);
          goto fail;
        }
      used[q[k]] = 1;
    }
    len += v3_len(v3_sub(v[q[1]], v[q[0]])) + v3_len(v3_sub(v[q[2]], v[q[0]])) + v3_len(v3_sub(v[q[3]], v[q[0]]));
  }
  for (int i = 0; i < nv; i++)
    if (!used[i]) {
      loom_fail("vertex %d belongs to no tetrahedron (it would have no mass)", i);
      core_free(used);
      goto fail;
    }
  core_free(used);
  /* orientation: the mesh's convention is its majority's; a mesh written the other way round
   * (all negative) is flipped, a tet that disagrees with the others is inverted */
  len /= 3.0 * nt;
  const double vmin = 1e-9 * len * len * len;
  int neg = 0;
  for (int t = 0; t < nt; t++) {
    const int32_t *q = tet + 4 * t;
    const double vol = tet_signed_volume(v[q[0]], v[q[1]], v[q[2]], v[q[3]]);
    if (fabs(vol) <= vmin) {
      loom_fail("tet %d has zero volume (%.3g m^3; its corners %d %d %d %d are coplanar)", t, vol, q[0], q[1], q[2],
                q[3]);
      goto fail;
    }
    neg += vol < 0;
  }
  const int flip = 2 * neg > nt;
  for (int t = 0; t < nt; t++) {
    int32_t *q = tet + 4 * t;
    const double vol = tet_signed_volume(v[q[0]], v[q[1]], v[q[2]], v[q[3]]);
    if ((vol < 0) != flip) {
      loom_fail("tet %d is inverted (signed volume %.3g m^3 against the orientation of %d of the %d others)", t, vol,
                flip ? neg - 1 : nt - neg - 1, nt - 1);
      goto fail;
    }
    if (flip) {
      int32_t s = q[2];
      q[2] = q[3];
      q[3] = s;
    }
  }
  m->flipped = flip;
  if (build_topology(m) != 0) goto fail;
  return m;
fail:
  loom_tet_mesh_destroy(m);
  return NULL;
}

LOOM_API loom_tet_mesh *loom_tet_mesh_create(const loom_vec3 *v, int nv, const int32_t *tet, int nt) {
  if (!v || !tet) {
    loom_fail("tet mesh: vertices or tetrahedra are NULL");
    return NULL;
  }
  if (nv < 0 || nv > MESH_MAX_VERTICES || nt < 0 || nt > MESH_MAX_TRIANGLES / 2) {
    loom_fail("tet mesh: %d vertices and %d tetrahedra are out of range", nv, nt);
    return NULL;
  }
  vec3 *vv = core_alloc((size_t)(nv > 0 ? nv : 1), sizeof *vv);
  int32_t *tt = core_alloc((size_t)(nt > 0 ? nt : 1) * 4, sizeof *tt);
  if (!vv || !tt) {
    core_free(vv);
    core_free(tt);
    return NULL;
  }
  memcpy(vv, v, sizeof *vv * (size_t)nv);
  memcpy(tt, tet, sizeof *tt * 4 * (size_t)nt);
  return tet_mesh_make(vv, nv, tt, nt);
}

LOOM_API loom_tet_mesh *loom_tet_mesh_copy(const loom_tet_mesh *m) {
  if (!m) {
    loom_fail("tet mesh is NULL");
    return NULL;
  }
  return loom_tet_mesh_create(m->v, m->nv, m->tet, m->nt);
}

/* The corners of cell (i, j, k) of a lattice with (nx+1)(ny+1)(nz+1) nodes, indexed by bits
 * (x, y, z) -> 4z + 2y + x. */
static void cell_corners(int i, int j, int k, int nx, int ny, int32_t c[8]) {
  for (int b = 0; b < 8; b++) {
    const int x = i + (b & 1), y = j + ((b >> 1) & 1), z = k + ((b >> 2) & 1);
    c[b] = (int32_t)((z * (ny + 1) + y) * (nx + 1) + x);
  }
}

/* Appends the tets of one cell: 5 (a central tet and four corner tets, the split mirrored in
 * alternate cells so that neighbouring faces share their diagonal) or 6 (around the main
 * diagonal 000-111, the same in every cell). Orientation is fixed afterwards. */
static int split_cell(const int32_t c[8], int parity, int per_cell, int32_t *out) {
  if (per_cell == 6) {
    static const int six[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};
    for (int t = 0; t < 6; t++)
      for (int k = 0; k < 4; k++) out[4 * t + k] = c[six[t][k]];
    return 6;
  }
  /* even corners (bit parity 0): 0, 3, 5, 6; odd: 1, 2, 4, 7 */
  static const int even[5][4] = {{0, 3, 5, 6}, {1, 0, 3, 5}, {2, 0, 3, 6}, {4, 0, 5, 6}, {7, 3, 5, 6}};
  static const int odd[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 2, 7}, {5, 1, 4, 7}, {6, 2, 4, 7}};
  const int(*s)[4] = parity ? odd : even;
  for (int t = 0; t < 5; t++)
    for (int k = 0; k < 4; k++) out[4 * t + k] = c[s[t][k]];
  return 5;
}

/* Orients every tet positively (swapping two corners where needed). */
static void orient_all(const vec3 *v, int32_t *tet, int nt) {
  for (int t = 0; t < nt; t++) {
    int32_t *q = tet + 4 * t;
    if (tet_signed_volume(v[q[0]], v[q[1]], v[q[2]], v[q[3]]) < 0) {
      int32_t s = q[2];
      q[2] = q[3];
      q[3] = s;
    }
  }
}

LOOM_API loom_tet_mesh *loom_tet_mesh_box(const loom_vec3 *size, int nx, int ny, int nz, const loom_vec3 *center,
                                          int per_cell) {
  if (!size || !v3_isfinite(*size) || !(size->x > 0) || !(size->y > 0) || !(size->z > 0)) {
    loom_fail("tet_box: 'size' must be three positive numbers");
    return NULL;
  }
  if (nx < 1 || ny < 1 || nz < 1 || nx > 512 || ny > 512 || nz > 512 ||
      (double)nx * ny * nz > 4e6) {
    loom_fail("tet_box: 'cells' must be integers in [1, 512] with at most 4e6 cells, got %d x %d x %d", nx, ny, nz);
    return NULL;
  }
  if (per_cell != 5 && per_cell != 6) {
    loom_fail("tet_box: 'per_cell' must be 5 (document 002) or 6, got %d", per_cell);
    return NULL;
  }
  vec3 c0 = center ? *center : v3(0, 0, 0);
  if (!v3_isfinite(c0)) {
    loom_fail("tet_box: 'center' must be finite");
    return NULL;
  }
  const int nv = (nx + 1) * (ny + 1) * (nz + 1), nt = per_cell * nx * ny * nz;
  vec3 *v = core_alloc((size_t)nv, sizeof *v);
  int32_t *tet = core_alloc((size_t)nt * 4, sizeof *tet);
  if (!v || !tet) {
    core_free(v);
    core_free(tet);
    return NULL;
  }
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++)
        v[(k * (ny + 1) + j) * (nx + 1) + i] = v3(c0.x + size->x * ((double)i / nx - 0.5),
                                                  c0.y + size->y * ((double)j / ny - 0.5),
                                                  c0.z + size->z * ((double)k / nz - 0.5));
  int n = 0;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        int32_t c[8];
        cell_corners(i, j, k, nx, ny, c);
        n += split_cell(c, (i + j + k) & 1, per_cell, tet + 4 * n);
      }
  orient_all(v, tet, nt);
  return tet_mesh_make(v, nv, tet, nt);
}

/* ---- a lattice that fills a closed triangle mesh ---------------------------------------------- */

/* Solid angle of triangle abc seen from p (van Oosterom and Strackee 1983), signed by the
 * triangle's orientation; the sum over a closed outward mesh is 4 pi inside and 0 outside. */
static double solid_angle(vec3 p, vec3 a, vec3 b, vec3 c) {
  vec3 ra = v3_sub(a, p), rb = v3_sub(b, p), rc = v3_sub(c, p);
  const double la = v3_len(ra), lb = v3_len(rb), lc = v3_len(rc);
  const double num = v3_dot(ra, v3_cross(rb, rc));
  const double den = la * lb * lc + v3_dot(ra, rb) * lc + v3_dot(ra, rc) * lb + v3_dot(rb, rc) * la;
  return 2.0 * atan2(num, den);
}

/* Checks that a surface is closed and manifold: every edge in exactly two triangles, used once
 * in each direction. */
static int check_closed(const loom_mesh *s) {
  int32_t a = 0, b = 0;
  switch (mesh_open_edge(s, &a, &b)) {
  case 0: return 0;
  case 1:
    return loom_fail("the surface is not manifold: edge (%d, %d) is used twice in the same direction (a "
                     "non-manifold edge or inconsistently oriented triangles)", a, b);
  case 2:
    return loom_fail("the surface is open: edge (%d, %d) belongs to one triangle only (tet_fill needs a closed "
                     "surface to tell inside from outside)", a, b);
  default: return -1;
  }
}

LOOM_API loom_tet_mesh *loom_tet_mesh_fill(const loom_mesh *s, double cell, int per_cell) {
  if (!s) {
    loom_fail("tet_fill: mesh is NULL");
    return NULL;
  }
  if (!isfinite(cell) || !(cell > 0)) {
    loom_fail("tet_fill: 'cell' must be a positive number of metres, got %g", cell);
    return NULL;
  }
  if (per_cell != 5 && per_cell != 6) {
    loom_fail("tet_fill: 'per_cell' must be 5 or 6, got %d", per_cell);
    return NULL;
  }
  if (s->nt < 4) {
    loom_fail("tet_fill: the surface has %d triangles (a closed surface has at least 4)", s->nt);
    return NULL;
  }
  if (mesh_validate(s) != 0 || check_closed(s) != 0) {
    loom_error_prefix("tet_fill");
    return NULL;
  }
  vec3 lo = s->v[0], hi = s->v[0];
  for (int i = 1; i < s->nv; i++) lo = v3_min(lo, s->v[i]), hi = v3_max(hi, s->v[i]);
  const vec3 ext = v3_sub(hi, lo);
  const double cx = ceil(ext.x / cell - 1e-9), cy = ceil(ext.y / cell - 1e-9), cz = ceil(ext.z / cell - 1e-9);
  if (!(cx * cy * cz <= 4e6)) {
    loom_fail("tet_fill: a cell of %g m gives %.0f x %.0f x %.0f cells (at most 4e6): use a larger cell", cell, cx, cy,
              cz);
    return NULL;
  }
  const int nx = cx < 1 ? 1 : (int)cx, ny = cy < 1 ? 1 : (int)cy, nz = cz < 1 ? 1 : (int)cz;
  /* the inside test costs cells x triangles solid angles: refuse what would take minutes */
  if ((double)nx * ny * nz * s->nt > 5e8) {
    loom_fail("tet_fill: %d x %d x %d cells against %d triangles is too much work (> 5e8 tests): use a larger "
              "cell or a coarser surface", nx, ny, nz, s->nt);
    return NULL;
  }
  /* the grid centred on the surface's box */
  const vec3 o = v3_sub(v3_scale(v3_add(lo, hi), 0.5), v3(0.5 * nx * cell, 0.5 * ny * cell, 0.5 * nz * cell));
  const size_t ncell = (size_t)nx * ny * nz;
  uint8_t *keep = core_calloc(ncell, 1);
  if (!keep) return NULL;
  /* cells a triangle crosses */
  geom_shape box = {GEOM_BOX, 0, 0, v3(0.5 * cell, 0.5 * cell, 0.5 * cell)};
  for (int t = 0; t < s->nt; t++) {
    const vec3 a = s->v[s->tri[3 * t]], b = s->v[s->tri[3 * t + 1]], c = s->v[s->tri[3 * t + 2]];
    const vec3 tl = v3_min(a, v3_min(b, c)), th = v3_max(a, v3_max(b, c));
    int i0 = (int)floor((tl.x - o.x) / cell), i1 = (int)floor((th.x - o.x) / cell);
    int j0 = (int)floor((tl.y - o.y) / cell), j1 = (int)floor((th.y - o.y) / cell);
    int k0 = (int)floor((tl.z - o.z) / cell), k1 = (int)floor((th.z - o.z) / cell);
    if (i0 < 0) i0 = 0;
    if (j0 < 0) j0 = 0;
    if (k0 < 0) k0 = 0;
    if (i1 >= nx) i1 = nx - 1;
    if (j1 >= ny) j1 = ny - 1;
    if (k1 >= nz) k1 = nz - 1;
    for (int k = k0; k <= k1; k++)
      for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++) {
          const size_t id = ((size_t)k * ny + j) * nx + i;
          if (keep[id]) continue;
          const vec3 cc = v3(o.x + (i + 0.5) * cell, o.y + (j + 0.5) * cell, o.z + (k + 0.5) * cell);
          if (geom_triangle_overlaps_shape(&box, v3_sub(a, cc), v3_sub(b, cc), v3_sub(c, cc), 0)) keep[id] = 1;
        }
  }
  /* cells whose centre is inside (winding number > 1/2) */
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const size_t id = ((size_t)k * ny + j) * nx + i;
        if (keep[id]) continue;
        const vec3 cc = v3(o.x + (i + 0.5) * cell, o.y + (j + 0.5) * cell, o.z + (k + 0.5) * cell);
        double w = 0;
        for (int t = 0; t < s->nt; t++)
          w += solid_angle(cc, s->v[s->tri[3 * t]], s->v[s->tri[3 * t + 1]], s->v[s->tri[3 * t + 2]]);
        if (w > 2.0 * LOOM_PI) keep[id] = 1;
      }
  /* nodes of kept cells, numbered in lattice order */
  const size_t nn = (size_t)(nx + 1) * (ny + 1) * (nz + 1);
  int32_t *node = core_alloc(nn, sizeof *node);
  if (!node) {
    core_free(keep);
    return NULL;
  }
  for (size_t i = 0; i < nn; i++) node[i] = -1;
  int ncells = 0;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        if (!keep[((size_t)k * ny + j) * nx + i]) continue;
        ncells++;
        int32_t c[8];
        cell_corners(i, j, k, nx, ny, c);
        for (int b = 0; b < 8; b++) node[c[b]] = 0;
      }
  int nv = 0;
  for (size_t i = 0; i < nn; i++)
    if (node[i] == 0) node[i] = nv++;
  vec3 *v = core_alloc((size_t)(nv > 0 ? nv : 1), sizeof *v);
  int32_t *tet = core_alloc((size_t)(ncells > 0 ? ncells : 1) * per_cell * 4, sizeof *tet);
  if (!v || !tet) {
    core_free(v);
    core_free(tet);
    core_free(node);
    core_free(keep);
    return NULL;
  }
  for (int k = 0; k <= nz; k++)
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        const int32_t id = node[((size_t)k * (ny + 1) + j) * (nx + 1) + i];
        if (id >= 0) v[id] = v3(o.x + i * cell, o.y + j * cell, o.z + k * cell);
      }
  int n = 0;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        if (!keep[((size_t)k * ny + j) * nx + i]) continue;
        int32_t c[8];
        cell_corners(i, j, k, nx, ny, c);
        for (int b = 0; b < 8; b++) c[b] = node[c[b]];
        n += split_cell(c, (i + j + k) & 1, per_cell, tet + 4 * n);
      }
  core_free(node);
  core_free(keep);
  if (n == 0) {
    core_free(v);
    core_free(tet);
    loom_fail("tet_fill: no cell of %g m is inside or crosses the surface", cell);
    return NULL;
  }
  orient_all(v, tet, n);
  return tet_mesh_make(v, nv, tet, n);
}

/* ---- point location -------------------------------------------------------------------------- */

void tet_barycentric(vec3 p, vec3 a, vec3 b, vec3 c, vec3 d, double w[4]) {
  const vec3 e1 = v3_sub(b, a), e2 = v3_sub(c, a), e3 = v3_sub(d, a), r = v3_sub(p, a);
  const double det = v3_dot(e1, v3_cross(e2, e3));
  if (!(fabs(det) > 0)) {
    w[0] = 1, w[1] = w[2] = w[3] = 0;
    return;
  }
  w[1] = v3_dot(r, v3_cross(e2, e3)) / det;
  w[2] = v3_dot(e1, v3_cross(r, e3)) / det;
  w[3] = v3_dot(e1, v3_cross(e2, r)) / det;
  w[0] = 1.0 - w[1] - w[2] - w[3];
}

/* Distance from p to tet t (0 inside). */
static double tet_distance(const loom_tet_mesh *m, int t, vec3 p) {
  const int32_t *q = m->tet + 4 * t;
  double w[4];
  tet_barycentric(p, m->v[q[0]], m->v[q[1]], m->v[q[2]], m->v[q[3]], w);
  if (w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0) return 0;
  double best = INFINITY;
  for (int k = 0; k < 4; k++) {
    const vec3 c = geom_closest_on_triangle(p, m->v[q[tet_faces[k][0]]], m->v[q[tet_faces[k][1]]],
                                            m->v[q[tet_faces[k][2]]], NULL);
    best = fmin(best, v3_len(v3_sub(c, p)));
  }
  return best;
}

int tet_mesh_locate(const loom_tet_mesh *m, vec3 p, double w[4], double *dist) {
  int best = -1;
  double bd = INFINITY, most = -INFINITY;
  /* inside: the tet whose smallest barycentric coordinate is largest (ties: the lowest index) */
  for (int t = 0; t < m->nt; t++) {
    const int32_t *q = m->tet + 4 * t;
    double b[4];
    tet_barycentric(p, m->v[q[0]], m->v[q[1]], m->v[q[2]], m->v[q[3]], b);
    const double mn = fmin(fmin(b[0], b[1]), fmin(b[2], b[3]));
    if (mn > most) most = mn, best = t;
  }
  if (most >= -1e-12) {
    bd = 0;
  } else {
    best = -1;
    for (int t = 0; t < m->nt; t++) {
      const double d = tet_distance(m, t, p);
      if (d < bd) bd = d, best = t;
    }
  }
  if (best >= 0) {
    const int32_t *q = m->tet + 4 * best;
    tet_barycentric(p, m->v[q[0]], m->v[q[1]], m->v[q[2]], m->v[q[3]], w);
  }
  if (dist) *dist = bd;
  return best;
}

/* ---- accessors ---------------------------------------------------------------------------- */

LOOM_API int loom_tet_mesh_vertex_count(const loom_tet_mesh *m) { return m ? m->nv : 0; }
LOOM_API int loom_tet_mesh_tet_count(const loom_tet_mesh *m) { return m ? m->nt : 0; }
LOOM_API int loom_tet_mesh_edge_count(const loom_tet_mesh *m) { return m ? m->ne : 0; }
LOOM_API int loom_tet_mesh_triangle_count(const loom_tet_mesh *m) { return m ? m->nf : 0; }
LOOM_API loom_vec3 *loom_tet_mesh_vertices(loom_tet_mesh *m) { return m ? m->v : NULL; }
LOOM_API const int32_t *loom_tet_mesh_tets(const loom_tet_mesh *m) { return m ? m->tet : NULL; }
LOOM_API const int32_t *loom_tet_mesh_edges(const loom_tet_mesh *m) { return m ? m->edge : NULL; }
LOOM_API const int32_t *loom_tet_mesh_triangles(const loom_tet_mesh *m) { return m ? m->face : NULL; }
LOOM_API int loom_tet_mesh_flipped(const loom_tet_mesh *m) { return m ? m->flipped : 0; }

LOOM_API double loom_tet_mesh_volume(const loom_tet_mesh *m) {
  if (!m) return 0;
  double v = 0;
  for (int t = 0; t < m->nt; t++) {
    const int32_t *q = m->tet + 4 * t;
    v += tet_signed_volume(m->v[q[0]], m->v[q[1]], m->v[q[2]], m->v[q[3]]);
  }
  return v;
}

LOOM_API loom_mesh *loom_tet_mesh_surface(const loom_tet_mesh *m) {
  if (!m) {
    loom_fail("tet mesh is NULL");
    return NULL;
  }
  loom_mesh *s = loom_mesh_from_arrays(m->v, m->nv, m->face, m->nf);
  return s;
}

LOOM_API int loom_tet_mesh_check(const loom_tet_mesh *m) {
  if (!m) return loom_fail("tet mesh is NULL");
  for (int i = 0; i < m->nv; i++)
    if (!v3_isfinite(m->v[i])) return loom_fail("vertex %d has a non-finite coordinate", i);
  for (int t = 0; t < m->nt; t++) {
    const int32_t *q = m->tet + 4 * t;
    const double vol = tet_signed_volume(m->v[q[0]], m->v[q[1]], m->v[q[2]], m->v[q[3]]);
    if (!(vol > 0)) return loom_fail("tet %d is inverted or flat (signed volume %.3g m^3)", t, vol);
  }
  return 0;
}
