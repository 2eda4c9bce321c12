/* mesh_hull.c — the convex hull of a point set (a mesh's vertices) as a closed triangle mesh with
 * outward triangles. Incremental construction in the manner of quickhull (Barber, Dobkin and
 * Huhdanpaa 1996): a starting tetrahedron from extreme points, then each point outside the current
 * hull (farther than eps from some face) removes the faces it sees and is joined to the horizon.
 * Points within eps of the hull are dropped (eps = 1e-10 of the point set's size), so nearly
 * coplanar faces do not produce slivers. Deterministic: points in index order. O(n f), fine for
 * the few thousand vertices a collision hull has. */
#include <string.h>

#include "mesh/mesh.h"

typedef struct hface {
  int a, b, c;
  vec3 n;
  double d;
  int alive;
} hface;

typedef struct hull {
  const vec3 *p;
  hface *f;
  int nf, cap;
  double eps;
} hull;

static int add_face(hull *h, int a, int b, int c) {
  if (h->nf == h->cap) {
    int cap = h->cap ? 2 * h->cap : 64;
    hface *g = core_realloc(h->f, (size_t)cap, sizeof *g);
    if (!g) return -1;
    h->f = g;
    h->cap = cap;
  }
  hface *f = &h->f[h->nf++];
  f->a = a, f->b = b, f->c = c;
  f->n = v3_normalize(v3_cross(v3_sub(h->p[b], h->p[a]), v3_sub(h->p[c], h->p[a])));
  f->d = v3_dot(f->n, h->p[a]);
  f->alive = 1;
  return 0;
}

static double dist(const hface *f, vec3 q) { return v3_dot(f->n, q) - f->d; }

typedef struct hedge {
  int a, b;
} hedge;

/* 1 if every vertex of m lies on the hull (within 1e-7 of the size of some face's plane). */
static int input_convex(const loom_mesh *m, const loom_mesh *hm, double size) {
  for (int i = 0; i < m->nv; i++) {
    double dmax = -INFINITY;
    for (int t = 0; t < hm->nt; t++) {
      vec3 a = hm->v[hm->tri[3 * t]], b = hm->v[hm->tri[3 * t + 1]], c = hm->v[hm->tri[3 * t + 2]];
      vec3 nn = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a)));
      dmax = d_max(dmax, v3_dot(nn, v3_sub(m->v[i], a)));
    }
    if (!(dmax > -1e-7 * size)) return 0;
  }
  return 1;
}

static loom_mesh *hull_build(const loom_mesh *m, int *was_convex, int h_retry) {
  if (!m || m->nv < 4) return loom_fail("convex hull: needs at least 4 points, got %d", m ? m->nv : 0), NULL;
  const vec3 *p = m->v;
  const int n = m->nv;
  for (int i = 0; i < n; i++)
    if (!v3_isfinite(p[i])) return loom_fail("convex hull: vertex %d is not finite", i), NULL;
  /* extreme points along x, then the farthest from their line, then from their plane */
  int i0 = 0, i1 = 0;
  vec3 lo = p[0], hi = p[0];
  for (int i = 1; i < n; i++) {
    if (p[i].x < p[i0].x) i0 = i;
    if (p[i].x > p[i1].x) i1 = i;
    lo = v3_min(lo, p[i]);
    hi = v3_max(hi, p[i]);
  }
  const double size = v3_len(v3_sub(hi, lo));
  if (!(size > 0)) return loom_fail("convex hull: all points coincide"), NULL;
  const double eps = 1e-10 * size;
  if (v3_dist(p[i0], p[i1]) <= eps) { /* all x equal: take any two distinct points */
    for (int i = 1; i < n; i++)
      if (v3_dist(p[i], p[0]) > eps) {
        i0 = 0;
        i1 = i;
        break;
      }
  }
  int i2 = -1, i3 = -1;
  double best = eps;
  vec3 axis = v3_sub(p[i1], p[i0]);
  for (int i = 0; i < n; i++) {
    double d = v3_len(v3_cross(axis, v3_sub(p[i], p[i0]))) / v3_len(axis);
    if (d > best) best = d, i2 = i;
  }
  if (i2 < 0) return loom_fail("convex hull: the points are collinear (a degenerate hull has no volume)"), NULL;
  vec3 nrm = v3_normalize(v3_cross(axis, v3_sub(p[i2], p[i0])));
  best = eps;
  for (int i = 0; i < n; i++) {
    double d = fabs(v3_dot(nrm, v3_sub(p[i], p[i0])));
    if (d > best) best = d, i3 = i;
  }
  if (i3 < 0) return loom_fail("convex hull: the points are coplanar (a degenerate hull has no volume)"), NULL;
  hull h = {p, NULL, 0, 0, eps};
  if (v3_dot(nrm, v3_sub(p[i3], p[i0])) > 0) { /* i3 above the plane (i0, i1, i2): flip that face */
    int t = i1;
    i1 = i2;
    i2 = t;
  }
  int rc = add_face(&h, i0, i1, i2) | add_face(&h, i0, i3, i1) | add_face(&h, i1, i3, i2) | add_face(&h, i2, i3, i0);
  hedge *edges = NULL;
  int ecap = 0;
  uint8_t *used = core_calloc((size_t)n, 1);
  if (rc || !used) goto oom;
  used[i0] = used[i1] = used[i2] = used[i3] = 1;
  for (int i = 0; i < n; i++) {
    if (used[i]) continue;
    int sees = 0;
    for (int k = 0; k < h.nf && !sees; k++) sees = h.f[k].alive && dist(&h.f[k], p[i]) > eps;
    if (!sees) continue;
    /* the directed edges of the visible faces whose reverse is not among them form the horizon */
    int ne = 0;
    for (int k = 0; k < h.nf; k++) {
      hface *f = &h.f[k];
      if (!f->alive || dist(f, p[i]) <= eps) continue;
      f->alive = 0;
      const int v[3] = {f->a, f->b, f->c};
      for (int e = 0; e < 3; e++) {
        if (ne + 1 > ecap) {
          int cap = ecap ? 2 * ecap : 64;
          hedge *g = core_realloc(edges, (size_t)cap, sizeof *g);
          if (!g) goto oom;
          edges = g;
          ecap = cap;
        }
        edges[ne++] = (hedge){v[e], v[(e + 1) % 3]};
      }
    }
    for (int e = 0; e < ne; e++) {
      int twin = 0;
      for (int k = 0; k < ne && !twin; k++) twin = edges[k].a == edges[e].b && edges[k].b == edges[e].a;
      if (!twin && add_face(&h, edges[e].a, edges[e].b, i)) goto oom;
    }
    used[i] = 1;
  }
  /* a starting point may lie on a face or an edge of the final hull (ties among extreme points):
   * keep only corners — vertices with faces in at least three distinct planes — and build again */
  {
    int corners = 0, extra = 0;
    vec3 *pts = core_alloc((size_t)n, sizeof(vec3));
    if (!pts) goto oom;
    for (int i = 0; i < n; i++) {
      vec3 nrm3[3];
      int planes = 0, on_hull = 0;
      for (int k = 0; k < h.nf && planes < 3; k++) {
        const hface *f = &h.f[k];
        if (!f->alive || (f->a != i && f->b != i && f->c != i)) continue;
        on_hull = 1;
        int seen = 0;
        for (int q = 0; q < planes && !seen; q++) seen = v3_dot(nrm3[q], f->n) > 1 - 1e-9;
        if (!seen) nrm3[planes++] = f->n;
      }
      if (planes >= 3) pts[corners++] = p[i];
      else extra += on_hull;
    }
    if (extra && corners >= 4 && !h_retry) {
      loom_mesh tmp = {0};
      tmp.nv = corners;
      tmp.v = pts;
      int dummy;
      loom_mesh *again = hull_build(&tmp, &dummy, 1);
      core_free(pts);
      if (again && was_convex) *was_convex = input_convex(m, again, size);
      core_free(used);
      core_free(edges);
      core_free(h.f);
      return again;
    }
    core_free(pts);
  }
  /* compact: the hull's vertices in input order, its live faces */
  int32_t *map = core_alloc((size_t)n, sizeof(int32_t));
  if (!map) goto oom;
  for (int i = 0; i < n; i++) map[i] = -1;
  int nt = 0, nv = 0;
  for (int k = 0; k < h.nf; k++)
    if (h.f[k].alive) {
      nt++;
      map[h.f[k].a] = map[h.f[k].b] = map[h.f[k].c] = 0;
    }
  for (int i = 0; i < n; i++)
    if (map[i] == 0) map[i] = nv++;
  loom_mesh *out = mesh_alloc(nv, nt);
  if (!out) {
    core_free(map);
    goto oom;
  }
  for (int i = 0; i < n; i++)
    if (map[i] >= 0) out->v[map[i]] = p[i];
  int t = 0;
  for (int k = 0; k < h.nf; k++)
    if (h.f[k].alive) {
      out->tri[3 * t] = map[h.f[k].a];
      out->tri[3 * t + 1] = map[h.f[k].b];
      out->tri[3 * t + 2] = map[h.f[k].c];
      t++;
    }
  core_free(map);
  core_free(used);
  core_free(edges);
  core_free(h.f);
  if (mesh_build_adjacency(out) != 0) {
    loom_mesh_destroy(out);
    return NULL;
  }
  if (was_convex) *was_convex = input_convex(m, out, size);
  return out;
oom:
  core_free(used);
  core_free(edges);
  core_free(h.f);
  return loom_fail("convex hull: out of memory"), NULL;
}

LOOM_API loom_mesh *loom_mesh_convex_hull(const loom_mesh *m, int *was_convex) { return hull_build(m, was_convex, 0); }
