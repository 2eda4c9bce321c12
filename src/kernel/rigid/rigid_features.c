/* rigid_features.c — sharp features of a rigid body's shape, in the body frame, with outward
 * hints: box corners and edges, cylinder rims, convex or boundary edges of meshes (> 25 degrees)
 * and the vertices of their smoothly curved convex regions,
 * and the rounded "features" of spheres (centre), capsules (axis) and cylinders (axis, for their
 * side) with their radius. The cloth
 * contact pass (contact/contact_features.c) tests them against cloth triangles and edges. */
#include <string.h>

#include "rigid/rigid.h"

/* ---- features of obstacle shapes (built once, body frame) ----------------------------------------- */

typedef struct feat_builder {
  vec3 *pt, *pt_n, *seg, *seg_n;
  double *pt_r, *seg_r;
  uint8_t *seg_side, *pt_hard, *seg_hard;
  int npt, nseg, cap_pt, cap_seg;
  int hard; /* what the next features added are (rigid_model.feat_pt_hard) */
} feat_builder;

/* Grows an array to `cap` items of its own type (returns -1 from the caller when out of memory). */
#define GROW(ptr, cap)                                                  \
  do {                                                                  \
    void *grown_ = core_realloc((ptr), (size_t)(cap), sizeof *(ptr));   \
    if (!grown_) return -1;                                             \
    (ptr) = grown_;                                                     \
  } while (0)

/* A feature point with an outward hint n (zero for rounded features: any direction is outward)
 * and a radius (0 for sharp corners; a sphere's centre carries the sphere's radius). */
static int add_point_r(feat_builder *f, vec3 p, vec3 n, double radius) {
  if (f->npt == f->cap_pt) {
    int cap = f->cap_pt ? 2 * f->cap_pt : 16;
    GROW(f->pt, cap);
    GROW(f->pt_n, cap);
    GROW(f->pt_r, cap);
    GROW(f->pt_hard, cap);
    f->cap_pt = cap;
  }
  f->pt_hard[f->npt] = (uint8_t)f->hard;
  f->pt[f->npt] = p;
  f->pt_n[f->npt] = v3_normalize(n);
  f->pt_r[f->npt] = radius;
  f->npt++;
  return 0;
}

static int add_point(feat_builder *f, vec3 p, vec3 n) { return add_point_r(f, p, n, 0); }

/* A feature segment with an outward hint n perpendicular to it (zero for rounded ones), a radius
 * (0 for sharp edges) and `side`: 1 for a cylinder's axis, whose radius holds beside the segment
 * only (beyond its ends are the flat caps, whose rims are features of their own). A capsule's
 * axis is tested whole, its ends too (measured: with its end points left to their point features,
 * a triangle of the stretched net stayed inside the capsule for a step). */
static int add_segment_rs(feat_builder *f, vec3 a, vec3 b, vec3 n, double radius, int side) {
  if (f->nseg == f->cap_seg) {
    int cap = f->cap_seg ? 2 * f->cap_seg : 16;
    GROW(f->seg, 2 * cap);
    GROW(f->seg_n, cap);
    GROW(f->seg_r, cap);
    GROW(f->seg_side, cap);
    GROW(f->seg_hard, cap);
    f->cap_seg = cap;
  }
  f->seg_hard[f->nseg] = (uint8_t)f->hard;
  f->seg_side[f->nseg] = (uint8_t)side;
  f->seg[2 * f->nseg] = a;
  f->seg[2 * f->nseg + 1] = b;
  /* the hint must be perpendicular to the segment to serve as a pushing direction */
  vec3 d = v3_normalize(v3_sub(b, a));
  f->seg_n[f->nseg] = v3_normalize(v3_madd(n, d, -v3_dot(n, d)));
  f->seg_r[f->nseg] = radius;
  f->nseg++;
  return 0;
}

static int add_segment(feat_builder *f, vec3 a, vec3 b, vec3 n) { return add_segment_rs(f, a, b, n, 0, 0); }

static int box_features(feat_builder *f, vec3 h) {
  for (int i = 0; i < 8; i++) {
    vec3 s = v3(i & 1 ? 1 : -1, i & 2 ? 1 : -1, i & 4 ? 1 : -1);
    if (add_point(f, v3(s.x * h.x, s.y * h.y, s.z * h.z), s)) return -1;
  }
  /* 12 edges: along axis a, at the four sign combinations of the other two axes */
  for (int a = 0; a < 3; a++) {
    int b = (a + 1) % 3, c = (a + 2) % 3;
    for (int k = 0; k < 4; k++) {
      double sb = k & 1 ? 1 : -1, sc = k & 2 ? 1 : -1;
      double p0[3], p1[3], n[3] = {0, 0, 0};
      double he[3] = {h.x, h.y, h.z};
      p0[a] = -he[a];
      p1[a] = he[a];
      p0[b] = p1[b] = sb * he[b];
      p0[c] = p1[c] = sc * he[c];
      n[b] = sb;
      n[c] = sc;
      if (add_segment(f, v3(p0[0], p0[1], p0[2]), v3(p1[0], p1[1], p1[2]), v3(n[0], n[1], n[2]))) return -1;
    }
  }
  return 0;
}

#define RIM_SEGMENTS 48

static int cylinder_features(feat_builder *f, double r, double hh) {
  for (int cap = -1; cap <= 1; cap += 2) {
    for (int k = 0; k < RIM_SEGMENTS; k++) {
      double a0 = 2 * LOOM_PI * k / RIM_SEGMENTS, a1 = 2 * LOOM_PI * (k + 1) / RIM_SEGMENTS;
      vec3 p0 = v3(r * cos(a0), r * sin(a0), cap * hh), p1 = v3(r * cos(a1), r * sin(a1), cap * hh);
      vec3 n0 = v3(cos(a0), sin(a0), cap);
      double am = 0.5 * (a0 + a1);
      if (add_point(f, p0, n0) || add_segment(f, p0, p1, v3(cos(am), sin(am), cap))) return -1;
    }
  }
  /* the side: a cloth triangle larger than the radius allows sags into it between vertices the
   * vertex pass keeps outside, like a capsule's (the axis with the radius, beside it only) */
  return add_segment_rs(f, v3(0, 0, -hh), v3(0, 0, hh), v3(0, 0, 0), r, 1);
}

/* Sharp edges of a mesh: boundary edges and convex edges whose faces turn by more than 25 degrees;
 * the corners are the end points of those edges. */
static int mesh_features(feat_builder *f, const loom_mesh *m, const vec3 *tri_normal) {
  const double cos_sharp = cos(25.0 * LOOM_PI / 180.0), cos_hard = cos(60.0 * LOOM_PI / 180.0);
  vec3 *corner_n = core_calloc((size_t)m->nv, sizeof(vec3));
  uint8_t *corner_hard = core_calloc((size_t)m->nv, 1);
  if (!corner_n || !corner_hard) {
    core_free(corner_n);
    core_free(corner_hard);
    return -1;
  }
  for (int e = 0; e < m->ne; e++) {
    int t0 = m->edge_tri[2 * e], t1 = m->edge_tri[2 * e + 1];
    int a = m->edge[2 * e], b = m->edge[2 * e + 1];
    vec3 pa = m->v[a], pb = m->v[b];
    vec3 hint;
    f->hard = 1;
    if (t1 < 0) {
      /* boundary: outward within the face, away from its third vertex */
      const int32_t *t = &m->tri[3 * t0];
      int c = t[0] != a && t[0] != b ? t[0] : (t[1] != a && t[1] != b ? t[1] : t[2]);
      vec3 d = v3_normalize(v3_sub(pb, pa));
      vec3 out = v3_sub(pa, m->v[c]);
      hint = v3_madd(out, d, -v3_dot(out, d));
    } else {
      vec3 n0 = tri_normal[t0], n1 = tri_normal[t1];
      if (v3_dot(n0, n1) > cos_sharp) continue;
      /* convex when the far vertex of triangle 1 lies below triangle 0's plane */
      const int32_t *t = &m->tri[3 * t1];
      int c = t[0] != a && t[0] != b ? t[0] : (t[1] != a && t[1] != b ? t[1] : t[2]);
      if (v3_dot(n0, v3_sub(m->v[c], pa)) > 0) continue;
      hint = v3_add(n0, n1);
      f->hard = v3_dot(n0, n1) < cos_hard;
    }
    if (add_segment(f, pa, pb, hint)) {
      core_free(corner_n);
      core_free(corner_hard);
      return -1;
    }
    corner_n[a] = v3_add(corner_n[a], v3_normalize(hint));
    corner_n[b] = v3_add(corner_n[b], v3_normalize(hint));
    corner_hard[a] |= (uint8_t)f->hard;
    corner_hard[b] |= (uint8_t)f->hard;
  }
  int rc = 0;
  for (int i = 0; i < m->nv && rc == 0; i++)
    if (v3_len2(corner_n[i]) > 0) {
      f->hard = corner_hard[i];
      rc = add_point(f, m->v[i], corner_n[i]);
    }
  f->hard = 0; /* (the vertices of smooth regions) */
  /* The vertices of smooth convex regions: a cloth triangle larger than the surface's curvature
   * allows sags into it between the cloth's vertices (by about rho^2 / 2R, rho its circumradius),
   * so such vertices are points the cloth triangles must keep clear of too, with the area-weighted
   * vertex normal as hint. A vertex counts when none of its neighbours lies above its tangent
   * plane; flat regions are left out (nothing sticks out of them). */
  vec3 *vn = rc == 0 ? core_calloc((size_t)m->nv, sizeof(vec3)) : NULL;
  uint8_t *bad = rc == 0 ? core_calloc((size_t)m->nv, 1) : NULL;
  if (rc == 0 && (!vn || !bad)) rc = -1;
  if (rc == 0) {
    for (int t = 0; t < m->nt; t++) {
      const int32_t *tv = &m->tri[3 * t];
      const vec3 an = v3_cross(v3_sub(m->v[tv[1]], m->v[tv[0]]), v3_sub(m->v[tv[2]], m->v[tv[0]]));
      for (int k = 0; k < 3; k++) vn[tv[k]] = v3_add(vn[tv[k]], an);
    }
    for (int t = 0; t < m->nt; t++) {
      const int32_t *tv = &m->tri[3 * t];
      for (int k = 0; k < 3; k++) {
        const int i = tv[k];
        const vec3 n = v3_normalize(vn[i]);
        for (int o = 1; o < 3; o++) {
          const vec3 d = v3_sub(m->v[tv[(k + o) % 3]], m->v[i]);
          const double h = v3_dot(n, d), len = v3_len(d);
          if (h > 1e-9 * len) bad[i] = 1;       /* a neighbour above the tangent plane: concave */
          if (h > -1e-3 * len) bad[i] |= 2;     /* one (nearly) in it: not curved everywhere */
        }
      }
    }
    for (int i = 0; i < m->nv && rc == 0; i++)
      if (!bad[i] && v3_len2(corner_n[i]) == 0 && v3_len2(vn[i]) > 0) rc = add_point(f, m->v[i], vn[i]);
  }
  core_free(vn);
  core_free(bad);
  core_free(corner_n);
  core_free(corner_hard);
  return rc;
}

int rigid_build_features(rigid_body *r) {
  feat_builder f;
  memset(&f, 0, sizeof f);
  int rc = 0;
  switch (r->model.shape_type) {
  case LOOM_SHAPE_BOX:
    f.hard = 1;
    rc = box_features(&f, r->model.shape.half);
    break;
  case LOOM_SHAPE_CYLINDER:
    f.hard = 1; /* (its rims; the axis it adds is rounded) */
    rc = cylinder_features(&f, r->model.shape.radius, r->model.shape.half_h);
    break;
  case LOOM_SHAPE_MESH:
  case LOOM_SHAPE_CONVEX: rc = mesh_features(&f, r->model.mesh, r->model.tri_normal); break;
  /* Spheres and capsules are smooth, but a coarse cloth's triangles sag into them between vertices
   * the vertex pass keeps outside (by cell^2 / 8R): their centre (axis and end points) with their
   * radius catch the triangle interiors and edges. */
  case LOOM_SHAPE_SPHERE: rc = add_point_r(&f, v3(0, 0, 0), v3(0, 0, 0), r->model.shape.radius); break;
  case LOOM_SHAPE_CAPSULE: {
    vec3 a = v3(0, 0, -r->model.shape.half_h), b = v3(0, 0, r->model.shape.half_h);
    rc = add_point_r(&f, a, v3(0, 0, 0), r->model.shape.radius) ||
         add_point_r(&f, b, v3(0, 0, 0), r->model.shape.radius) ||
         add_segment_rs(&f, a, b, v3(0, 0, 0), r->model.shape.radius, 0);
    break;
  }
  default: break;
  }
  r->model.feat_pt = f.pt;
  r->model.feat_pt_n = f.pt_n;
  r->model.feat_pt_r = f.pt_r;
  r->model.feat_seg = f.seg;
  r->model.feat_seg_n = f.seg_n;
  r->model.feat_seg_r = f.seg_r;
  r->model.feat_seg_side = f.seg_side;
  r->model.feat_pt_hard = f.pt_hard;
  r->model.feat_seg_hard = f.seg_hard;
  r->model.feat_round_r = 0;
  for (int i = 0; i < f.npt; i++) r->model.feat_round_r = d_max(r->model.feat_round_r, f.pt_r[i]);
  for (int i = 0; i < f.nseg; i++) r->model.feat_round_r = d_max(r->model.feat_round_r, f.seg_r[i]);
  r->model.nfeat_pt = f.npt;
  r->model.nfeat_seg = f.nseg;
  return rc;
}


/* ---- corners and convex edges for the collision pipeline ------------------------------------------ */

/* A cloth element can touch an obstacle first only at a face, at an edge that sticks out (convex,
 * or a boundary) or at a corner of such edges. The faces, those edges and their corners, at any
 * angle, become an immovable particle body (inverse mass 0) that the pipeline tests on the
 * continuous paths of the substep (cloth vertices against the faces, cloth edges against the
 * edges, the corners against cloth triangles): the vertex and feature passes work on positions, a
 * cloth edge can pass over an obstacle edge between two of them, and the pipeline's own impulses
 * and impact zones must not push cloth through a face. Boxes and meshes.
 *
 * Smooth and round shapes have no such edges; the vertex and feature passes keep cloth outside
 * them. But those passes work on positions, and a cloth stretched over a ball (its triangles far
 * larger than at rest) can slip around it within one substep, every vertex's path outside the
 * ball and the triangles between them through it. A static or kinematic sphere therefore goes
 * into the pipeline as its inscribed icosphere and a cylinder as a prism (below); a capsule, and a
 * dynamic sphere or cylinder, as its core — the centre or the axis —: a body cannot end on the
 * other side of a cloth unless its core crossed the cloth, and the pipeline (with its impact
 * zones) lets nothing cross. Whatever the passes then leave inside the shape is pushed out by the
 * feature pass. */

static int ccd_alloc(rigid_model *m, int n, int ne, int nt) {
  particles *p = core_calloc(1, sizeof *p);
  if (!p) return -1;
  m->ccd = p;
  p->n = n;
  p->x = core_calloc((size_t)n, sizeof(vec3));
  p->x_sub = core_calloc((size_t)n, sizeof(vec3));
  p->m = core_calloc((size_t)n, sizeof(double));
  p->inv_m = core_calloc((size_t)n, sizeof(double));
  p->col.edge = core_alloc(2 * (size_t)(ne ? ne : 1), sizeof(int32_t));
  p->tri = core_alloc(3 * (size_t)(nt ? nt : 1), sizeof(int32_t));
  m->ccd_local = core_alloc((size_t)n, sizeof(vec3));
  m->ccd_corner = core_calloc((size_t)n, 1);
  if (!p->x || !p->x_sub || !p->m || !p->inv_m || !p->col.edge || !p->tri || !m->ccd_local || !m->ccd_corner) return -1;
  p->col.ne = ne;
  p->nt = nt;
  return 0;
}

static int core_body(rigid_model *md, double half_h, int segment) {
  if (ccd_alloc(md, segment ? 2 : 1, segment ? 1 : 0, 0)) return -1;
  md->ccd_core = 1;
  md->ccd_local[0] = v3(0, 0, segment ? -half_h : 0);
  md->ccd_corner[0] = 1;
  if (segment) {
    md->ccd_local[1] = v3(0, 0, half_h);
    md->ccd_corner[1] = 1;
    md->ccd->col.edge[0] = 0;
    md->ccd->col.edge[1] = 1;
  }
  return 0;
}

/* A static or kinematic cylinder as its narrow phase's prism (model.poly: 24 sides, corners on the
 * rims, every other rim feature point; inside the cylinder by 0.86 % of its radius on the flats):
 * its faces (each loop a fan from its first corner), its rims and side edges, and their corners. A
 * cloth can wrap a cylinder's rim, where a triangle then cuts through the corner between cap and
 * side deeper than the feature pass reaches; like a box's edge, the rim must be held on the paths.
 * (A prism of 48 sides, as many as the rim features, made scenes/flag.lua, a flag wrapping round
 * its pole, 8 % slower than 24.) */
static int poly_body(rigid_model *md, const rigid_poly *P) {
  int nt = 0;
  for (int f = 0; f < P->nf; f++) nt += P->face_count[f] - 2;
  if (ccd_alloc(md, P->nv, P->ne, nt)) return -1;
  for (int i = 0; i < P->nv; i++) md->ccd_local[i] = P->v[i], md->ccd_corner[i] = 1;
  memcpy(md->ccd->col.edge, P->edge_v, 2 * sizeof(int32_t) * (size_t)P->ne);
  int t = 0;
  for (int f = 0; f < P->nf; f++) {
    const int32_t *loop = &P->face_v[P->face_first[f]];
    for (int k = 1; k + 1 < P->face_count[f]; k++) {
      const int32_t tri[3] = {loop[0], loop[k], loop[k + 1]};
      memcpy(&md->ccd->tri[3 * t++], tri, sizeof tri);
    }
  }
  return 0;
}

/* The edges of a closed triangle mesh wound consistently, each once: every edge is the a < b side
 * of exactly one of its two triangles. The number written (at most cap). */
static int closed_mesh_edges(const int32_t *t, int nt, int32_t *edge, int cap) {
  int e = 0;
  for (int f = 0; f < nt; f++)
    for (int k = 0; k < 3; k++) {
      const int32_t a = t[3 * f + k], b = t[3 * f + (k + 1) % 3];
      if (a < b && e < cap) edge[2 * e] = a, edge[2 * e + 1] = b, e++;
    }
  return e;
}

/* A static or kinematic sphere as an icosphere inscribed in it (the icosahedron with each face
 * split in four, `levels` times; corners on the sphere). */
static int icosphere_body(rigid_model *md, double r, int levels) {
  const double g = 0.5 * (1 + sqrt(5.0));
  const double base[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                              {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
  const int32_t faces[20][3] = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                                {11, 10, 2}, {10, 7, 6}, {7, 1, 8}, {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8},
                                {3, 8, 9}, {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
  int nv = 12, nt = 20;
  const int cap_t = 20 << (2 * levels), cap_v = cap_t / 2 + 2; /* (Euler: V = F / 2 + 2) */
  vec3 *v = core_alloc((size_t)cap_v, sizeof(vec3));
  int32_t *t = core_alloc(3 * (size_t)cap_t, sizeof(int32_t)), *t2 = core_alloc(3 * (size_t)cap_t, sizeof(int32_t));
  int32_t *mid = core_alloc(3 * (size_t)cap_t, sizeof(int32_t)); /* (edge's first, second, midpoint) */
  int rc = !v || !t || !t2 || !mid ? -1 : 0;
  for (int i = 0; i < 12 && rc == 0; i++) v[i] = v3_normalize(v3(base[i][0], base[i][1], base[i][2]));
  if (rc == 0) memcpy(t, faces, sizeof faces);
  for (int l = 0; l < levels && rc == 0; l++) {
    int nmid = 0, nt2 = 0;
    for (int f = 0; f < nt; f++) {
      int32_t m[3];
      for (int k = 0; k < 3; k++) {
        const int32_t a = t[3 * f + k], b = t[3 * f + (k + 1) % 3];
        const int32_t lo = a < b ? a : b, hi = a < b ? b : a;
        int found = -1;
        for (int q = 0; q < nmid && found < 0; q++)
          if (mid[3 * q] == lo && mid[3 * q + 1] == hi) found = mid[3 * q + 2];
        if (found < 0) {
          v[nv] = v3_normalize(v3_add(v[lo], v[hi]));
          mid[3 * nmid] = lo, mid[3 * nmid + 1] = hi, mid[3 * nmid + 2] = found = nv++;
          nmid++;
        }
        m[k] = found;
      }
      const int32_t *c = &t[3 * f];
      const int32_t split[12] = {c[0], m[0], m[2], m[0], c[1], m[1], m[2], m[1], c[2], m[0], m[1], m[2]};
      memcpy(&t2[3 * nt2], split, sizeof split);
      nt2 += 4;
    }
    int32_t *swap = t;
    t = t2, t2 = swap;
    nt = nt2;
  }
  const int ne = nt * 3 / 2; /* a closed triangle mesh */
  if (rc == 0) rc = ccd_alloc(md, nv, ne, nt);
  if (rc == 0) {
    for (int i = 0; i < nv; i++) md->ccd_local[i] = v3_scale(v[i], r), md->ccd_corner[i] = 1;
    memcpy(md->ccd->tri, t, 3 * sizeof(int32_t) * (size_t)nt);
    if (closed_mesh_edges(t, nt, md->ccd->col.edge, ne) != ne) rc = -1;
  }
  core_free(v);
  core_free(t);
  core_free(t2);
  core_free(mid);
  return rc;
}

/* A static or kinematic capsule as a polyhedron inscribed in it (axis along z): CAPSULE_SIDES
 * meridians, each hemisphere CAPSULE_RINGS latitude rings from the rim (0) towards the pole, and
 * the two poles; every corner on the surface, the side's faces inside it by 1 - cos(pi / sides) of
 * the radius (7.6 % with 8 sides), the caps' by up to 13.7 %. (12 sides and 3 rings, within 3.4 and
 * 6.5 %, made the bed of 49 pegs 1.4 times slower; these 1.25 times, and hold the same nets.) Triangles wound outward, so that each edge is the a < b
 * side of one of its two triangles (the edge list below takes it once). */
enum { CAPSULE_SIDES = 8, CAPSULE_RINGS = 2 };
static int capsule_body(rigid_model *md, double r, double half_h) {
  const int S = CAPSULE_SIDES, R = CAPSULE_RINGS;
  const int nv = 2 * R * S + 2, nt = 2 * S + 2 * (2 * (R - 1) * S + S), ne = 3 * nt / 2;
  if (ccd_alloc(md, nv, ne, nt)) return -1;
  /* ring k of hemisphere h (h = 0 top, 1 bottom) at latitude k / R * 90 degrees: vertices
   * h * R * S + k * S + j; the poles nv - 2 (top) and nv - 1 (bottom) */
  for (int h = 0; h < 2; h++) {
    const double sz = h ? -1 : 1;
    for (int k = 0; k < R; k++) {
      const double lat = 0.5 * LOOM_PI * k / R, rr = r * cos(lat), z = sz * (half_h + r * sin(lat));
      for (int j = 0; j < S; j++) {
        const double a = 2 * LOOM_PI * j / S;
        md->ccd_local[h * R * S + k * S + j] = v3(rr * cos(a), rr * sin(a), z);
      }
    }
  }
  md->ccd_local[nv - 2] = v3(0, 0, half_h + r);
  md->ccd_local[nv - 1] = v3(0, 0, -half_h - r);
  for (int i = 0; i < nv; i++) md->ccd_corner[i] = 1;
  int32_t *t = md->ccd->tri;
  int nf = 0;
#define CAP_TRI(a, b, c) (t[3 * nf] = (a), t[3 * nf + 1] = (b), t[3 * nf + 2] = (c), nf++)
  /* the side: between the top rim (ring 0 of h = 0) and the bottom rim (ring 0 of h = 1) */
  for (int j = 0; j < S; j++) {
    const int j1 = (j + 1) % S, t0 = j, t1 = j1, b0 = R * S + j, b1 = R * S + j1;
    CAP_TRI(b0, b1, t1);
    CAP_TRI(b0, t1, t0);
  }
  for (int h = 0; h < 2; h++) {
    const int base = h * R * S, pole = h ? nv - 1 : nv - 2;
    for (int k = 0; k + 1 < R; k++)
      for (int j = 0; j < S; j++) {
        const int j1 = (j + 1) % S, a0 = base + k * S + j, a1 = base + k * S + j1, c0 = base + (k + 1) * S + j,
                  c1 = base + (k + 1) * S + j1;
        if (!h) { /* top: outward is counter-clockwise seen from above */
          CAP_TRI(a0, a1, c1);
          CAP_TRI(a0, c1, c0);
        } else {
          CAP_TRI(a0, c1, a1);
          CAP_TRI(a0, c0, c1);
        }
      }
    for (int j = 0; j < S; j++) {
      const int j1 = (j + 1) % S, a0 = base + (R - 1) * S + j, a1 = base + (R - 1) * S + j1;
      if (!h) CAP_TRI(a0, a1, pole);
      else CAP_TRI(a0, pole, a1);
    }
  }
#undef CAP_TRI
  return nf == nt && closed_mesh_edges(t, nt, md->ccd->col.edge, ne) == ne ? 0 : -1;
}

int rigid_build_ccd(rigid_body *r) {
  rigid_model *md = &r->model;
  if (md->shape_type == LOOM_SHAPE_SPHERE && !rigid_is_dynamic(r)) return icosphere_body(md, md->shape.radius, 1);
  if (md->shape_type == LOOM_SHAPE_SPHERE) return core_body(md, 0, 0);
  if (md->shape_type == LOOM_SHAPE_CYLINDER && !rigid_is_dynamic(r) && md->poly) return poly_body(md, md->poly);
  if (md->shape_type == LOOM_SHAPE_CAPSULE && !rigid_is_dynamic(r))
    return capsule_body(md, md->shape.radius, md->shape.half_h);
  if (md->shape_type == LOOM_SHAPE_CAPSULE || md->shape_type == LOOM_SHAPE_CYLINDER)
    return core_body(md, md->shape.half_h, 1);
  if (md->shape_type == LOOM_SHAPE_BOX) {
    if (ccd_alloc(md, 8, 12, 12)) return -1;
    const vec3 h = md->shape.half;
    for (int i = 0; i < 8; i++) {
      md->ccd_local[i] = v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
      md->ccd_corner[i] = 1;
    }
    /* two triangles per face: the face's fixed axis a at side s, corners over the other two */
    int t = 0;
    for (int a = 0; a < 3; a++)
      for (int side = 0; side < 2; side++) {
        const int fixed = side << a, b = 1 << ((a + 1) % 3), c = 1 << ((a + 2) % 3);
        const int32_t q[4] = {fixed, fixed | b, fixed | b | c, fixed | c};
        const int32_t tv[6] = {q[0], q[1], q[2], q[0], q[2], q[3]};
        memcpy(&md->ccd->tri[3 * t], tv, sizeof tv);
        t += 2;
      }
    int e = 0;
    for (int i = 0; i < 8; i++)
      for (int bit = 1; bit < 8; bit <<= 1)
        if (!(i & bit)) {
          md->ccd->col.edge[2 * e] = i;
          md->ccd->col.edge[2 * e + 1] = i | bit;
          e++;
        }
  } else if (rigid_shape_has_mesh(md->shape_type)) {
    const loom_mesh *m = md->mesh;
    uint8_t *keep = core_calloc((size_t)(m->ne ? m->ne : 1), 1);
    if (!keep) return -1;
    int ne = 0;
    for (int e = 0; e < m->ne; e++) {
      const int t0 = m->edge_tri[2 * e], t1 = m->edge_tri[2 * e + 1];
      const int a = m->edge[2 * e];
      if (t0 >= 0 && t1 >= 0) {
        /* convex when the far vertex of triangle 1 lies below triangle 0's plane (beyond rounding) */
        const int32_t *t = &m->tri[3 * t1];
        const int c = t[0] != a && t[0] != m->edge[2 * e + 1] ? t[0] : (t[1] != a && t[1] != m->edge[2 * e + 1] ? t[1] : t[2]);
        const vec3 d = v3_sub(m->v[c], m->v[a]);
        if (!(v3_dot(md->tri_normal[t0], d) < -1e-9 * v3_len(d))) continue;
      }
      keep[e] = 1;
      ne++;
    }
    int rc = 0;
    if (m->nt > 0) {
      rc = ccd_alloc(md, m->nv, ne, m->nt);
      if (rc == 0) {
        memcpy(md->ccd_local, m->v, sizeof(vec3) * (size_t)m->nv);
        memcpy(md->ccd->tri, m->tri, 3 * sizeof(int32_t) * (size_t)m->nt);
        int j = 0;
        for (int e = 0; e < m->ne; e++)
          if (keep[e]) {
            md->ccd->col.edge[2 * j] = m->edge[2 * e];
            md->ccd->col.edge[2 * j + 1] = m->edge[2 * e + 1];
            md->ccd_corner[m->edge[2 * e]] = md->ccd_corner[m->edge[2 * e + 1]] = 1;
            j++;
          }
      }
    }
    core_free(keep);
    return rc;
  }
  return 0;
}

void rigid_ccd_place(rigid_body *r, double a0, double a1) {
  particles *p = r->model.ccd;
  vec3 pos0, pos1;
  quat q0, q1;
  rigid_pose_at(r, a0, &pos0, &q0);
  rigid_pose_at(r, a1, &pos1, &q1);
  p->sub_lo = v3(INFINITY, INFINITY, INFINITY);
  p->sub_hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < p->n; i++) {
    p->x_sub[i] = v3_add(pos0, q_rotate(q0, r->model.ccd_local[i]));
    p->x[i] = v3_add(pos1, q_rotate(q1, r->model.ccd_local[i]));
    p->sub_lo = v3_min(p->sub_lo, v3_min(p->x_sub[i], p->x[i]));
    p->sub_hi = v3_max(p->sub_hi, v3_max(p->x_sub[i], p->x[i]));
  }
  p->friction = r->params.friction;
  p->thickness = r->params.thickness;
}

void rigid_ccd_free(rigid_model *m) {
  if (m->ccd) {
    core_free(m->ccd->x_sub);
    particles_free(m->ccd);
    core_free(m->ccd);
  }
  core_free(m->ccd_local);
  core_free(m->ccd_corner);
  m->ccd_corner = NULL;
  m->ccd = NULL;
  m->ccd_local = NULL;
}
