/* contact_features.c — sharp features of obstacles against cloth elements.
 *
 * Keeping every cloth vertex outside an obstacle is not enough where the obstacle has corners and
 * edges: a table's edge slides between two vertices and pokes through the cloth. Document 000's
 * ClothOnTable case shows exactly these contacts (edge–edge with the table edge, point–triangle
 * with its corner). After the vertex pass of each substep we therefore test
 *   - each feature point (box corners, cylinder rim points, corners of sharp mesh edges) against
 *     the cloth triangles (point–triangle), and
 *   - each feature segment (box edges, rim segments, convex or boundary mesh edges) against the
 *     cloth edges (edge–edge),
 * and when the cloth element is closer than the thickness `pad`, move its vertices apart with the
 * weights of the contact point (Bridson, Fedkiw, Anderson 2002 §7: the obstacle has infinite mass,
 * node i moves by w_i/m_i / sum_j w_j^2/m_j of the correction), remove the approaching normal
 * velocity with the same distribution and apply Coulomb friction. A cloth element that has slipped
 * past a feature is recognised by the feature's outward hint and pushed back out. */
#include <string.h>

#include "world/world.h"

#define PI 3.14159265358979323846

/* ---- features of obstacle shapes (built once, body frame) ----------------------------------------- */

typedef struct feat_builder {
  vec3 *pt, *pt_n, *seg, *seg_n;
  double *pt_r, *seg_r;
  int npt, nseg, cap_pt, cap_seg;
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
    f->cap_pt = cap;
  }
  f->pt[f->npt] = p;
  f->pt_n[f->npt] = v3_normalize(n);
  f->pt_r[f->npt] = radius;
  f->npt++;
  return 0;
}

static int add_point(feat_builder *f, vec3 p, vec3 n) { return add_point_r(f, p, n, 0); }

static int add_segment_r(feat_builder *f, vec3 a, vec3 b, vec3 n, double radius) {
  if (f->nseg == f->cap_seg) {
    int cap = f->cap_seg ? 2 * f->cap_seg : 16;
    GROW(f->seg, 2 * cap);
    GROW(f->seg_n, cap);
    GROW(f->seg_r, cap);
    f->cap_seg = cap;
  }
  f->seg[2 * f->nseg] = a;
  f->seg[2 * f->nseg + 1] = b;
  /* the hint must be perpendicular to the segment to serve as a pushing direction */
  vec3 d = v3_normalize(v3_sub(b, a));
  f->seg_n[f->nseg] = v3_normalize(v3_madd(n, d, -v3_dot(n, d)));
  f->seg_r[f->nseg] = radius;
  f->nseg++;
  return 0;
}

static int add_segment(feat_builder *f, vec3 a, vec3 b, vec3 n) { return add_segment_r(f, a, b, n, 0); }

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
      double a0 = 2 * PI * k / RIM_SEGMENTS, a1 = 2 * PI * (k + 1) / RIM_SEGMENTS;
      vec3 p0 = v3(r * cos(a0), r * sin(a0), cap * hh), p1 = v3(r * cos(a1), r * sin(a1), cap * hh);
      vec3 n0 = v3(cos(a0), sin(a0), cap);
      double am = 0.5 * (a0 + a1);
      if (add_point(f, p0, n0) || add_segment(f, p0, p1, v3(cos(am), sin(am), cap))) return -1;
    }
  }
  return 0;
}

/* Sharp edges of a mesh: boundary edges and convex edges whose faces turn by more than 25 degrees;
 * the corners are the end points of those edges. */
static int mesh_features(feat_builder *f, const loom_mesh *m, const vec3 *tri_normal) {
  const double cos_sharp = cos(25.0 * PI / 180.0);
  vec3 *corner_n = core_calloc((size_t)m->nv, sizeof(vec3));
  if (!corner_n) return -1;
  for (int e = 0; e < m->ne; e++) {
    int t0 = m->edge_tri[2 * e], t1 = m->edge_tri[2 * e + 1];
    int a = m->edge[2 * e], b = m->edge[2 * e + 1];
    vec3 pa = m->v[a], pb = m->v[b];
    vec3 hint;
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
    }
    if (add_segment(f, pa, pb, hint)) {
      core_free(corner_n);
      return -1;
    }
    corner_n[a] = v3_add(corner_n[a], v3_normalize(hint));
    corner_n[b] = v3_add(corner_n[b], v3_normalize(hint));
  }
  int rc = 0;
  for (int i = 0; i < m->nv && rc == 0; i++)
    if (v3_len2(corner_n[i]) > 0) rc = add_point(f, m->v[i], corner_n[i]);
  core_free(corner_n);
  return rc;
}

int rigid_build_features(rigid_body *r) {
  feat_builder f;
  memset(&f, 0, sizeof f);
  int rc = 0;
  switch (r->shape_type) {
  case LOOM_SHAPE_BOX: rc = box_features(&f, r->shape.half); break;
  case LOOM_SHAPE_CYLINDER: rc = cylinder_features(&f, r->shape.radius, r->shape.half_h); break;
  case LOOM_SHAPE_MESH: rc = mesh_features(&f, r->mesh, r->tri_normal); break;
  /* Spheres and capsules are smooth, but a coarse cloth's triangles sag into them between vertices
   * the vertex pass keeps outside (by cell^2 / 8R): their centre (axis and end points) with their
   * radius catch the triangle interiors and edges. */
  case LOOM_SHAPE_SPHERE: rc = add_point_r(&f, v3(0, 0, 0), v3(0, 0, 0), r->shape.radius); break;
  case LOOM_SHAPE_CAPSULE: {
    vec3 a = v3(0, 0, -r->shape.half_h), b = v3(0, 0, r->shape.half_h);
    rc = add_point_r(&f, a, v3(0, 0, 0), r->shape.radius) || add_point_r(&f, b, v3(0, 0, 0), r->shape.radius) ||
         add_segment_r(&f, a, b, v3(0, 0, 0), r->shape.radius);
    break;
  }
  default: break;
  }
  r->feat_pt = f.pt;
  r->feat_pt_n = f.pt_n;
  r->feat_pt_r = f.pt_r;
  r->feat_seg = f.seg;
  r->feat_seg_n = f.seg_n;
  r->feat_seg_r = f.seg_r;
  r->nfeat_pt = f.npt;
  r->nfeat_seg = f.nseg;
  return rc;
}

/* ---- cloth elements (built once) ------------------------------------------------------------------ */

int soft_build_elements(soft_body *b, const loom_mesh *m) {
  b->ne = m->ne;
  b->edge = core_alloc((size_t)(m->ne ? m->ne : 1) * 2, sizeof(int32_t));
  b->tri_edge = core_alloc((size_t)m->nt * 3, sizeof(int32_t));
  b->edge_owner = core_alloc((size_t)(m->ne ? m->ne : 1), sizeof(int32_t));
  b->tri_lo = core_alloc((size_t)m->nt, sizeof(vec3));
  b->tri_hi = core_alloc((size_t)m->nt, sizeof(vec3));
  if (!b->edge || !b->tri_edge || !b->edge_owner || !b->tri_lo || !b->tri_hi) return -1;
  memcpy(b->edge, m->edge, sizeof(int32_t) * 2 * (size_t)m->ne);
  for (int e = 0; e < m->ne; e++) b->edge_owner[e] = m->edge_tri[2 * e];
  for (int t = 0; t < m->nt; t++) {
    for (int k = 0; k < 3; k++) {
      int a = m->tri[3 * t + k], c = m->tri[3 * t + (k + 1) % 3];
      int lo_v = a < c ? a : c, hi_v = a < c ? c : a;
      /* edges are sorted lexicographically: binary search */
      int lo = 0, hi = m->ne - 1, found = -1;
      while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int e0 = m->edge[2 * mid], e1 = m->edge[2 * mid + 1];
        if (e0 == lo_v && e1 == hi_v) {
          found = mid;
          break;
        }
        if (e0 < lo_v || (e0 == lo_v && e1 < hi_v))
          lo = mid + 1;
        else
          hi = mid - 1;
      }
      if (found < 0) return loom_fail("cloth: inconsistent mesh adjacency (edge %d-%d missing)", lo_v, hi_v);
      b->tri_edge[3 * t + k] = found;
    }
    vec3 p = b->x[m->tri[3 * t]], q = b->x[m->tri[3 * t + 1]], s = b->x[m->tri[3 * t + 2]];
    b->tri_lo[t] = v3_min(p, v3_min(q, s));
    b->tri_hi[t] = v3_max(p, v3_max(q, s));
    /* circumradius abc / (4 area): how far a triangle can sag below its corners on a sphere */
    double la = v3_dist(p, q), lb = v3_dist(q, s), lc = v3_dist(s, p);
    double area2 = v3_len(v3_cross(v3_sub(q, p), v3_sub(s, p)));
    if (area2 > 0) b->max_circumradius = d_max(b->max_circumradius, la * lb * lc / (2 * area2));
  }
  return bvh_build(&b->tri_tree, b->tri_lo, b->tri_hi, b->nt, 2);
}

/* ---- the contact pass ------------------------------------------------------------------------------ */

typedef struct feat_ctx {
  soft_body *b;
  const rigid_body *r;
  double pad, mu;
  vec3 p, hint;      /* feature point (world), or segment start */
  vec3 q;            /* segment end */
} feat_ctx;

/* Moves cloth nodes idx[0..k) with weights w so that their weighted point moves by delta along n,
 * and makes the weighted point's velocity relative to vo non-approaching, with friction. */
static void respond(feat_ctx *c, const int32_t *idx, const double *w, int k, vec3 n, double delta, vec3 vo) {
  soft_body *b = c->b;
  double denom = 0;
  for (int j = 0; j < k; j++) denom += w[j] * w[j] * b->inv_m[idx[j]];
  if (!(denom > 0)) return; /* all pinned: nothing can move */
  for (int j = 0; j < k; j++) {
    double s = w[j] * b->inv_m[idx[j]] / denom;
    b->x[idx[j]] = v3_madd(b->x[idx[j]], n, delta * s);
  }
  vec3 vp = v3(0, 0, 0);
  for (int j = 0; j < k; j++) vp = v3_madd(vp, b->v[idx[j]], w[j]);
  vec3 vrel = v3_sub(vp, vo);
  double vn = v3_dot(vrel, n);
  if (vn < 0) {
    vec3 vt = v3_madd(vrel, n, -vn);
    double lt = v3_len(vt);
    vec3 dv = v3_scale(n, -vn);
    if (lt > 0) dv = v3_madd(dv, vt, -fmin(1.0, c->mu * (-vn) / lt));
    for (int j = 0; j < k; j++) b->v[idx[j]] = v3_madd(b->v[idx[j]], dv, w[j] * b->inv_m[idx[j]] / denom);
  }
  for (int j = 0; j < k; j++)
    if (w[j] > 0) b->contact[idx[j]] = 1;
}

/* Direction to push a cloth point that lies at offset d (length dist) from a feature: straight
 * away from the feature while the cloth is on the outer side of its hint; when it touches the
 * feature or has slipped past it, along `fallback` (unit, outward). *sep receives the current
 * separation along that direction (negative once past). */
static vec3 push_direction(vec3 d, double dist, double pad, vec3 hint, vec3 fallback, double *sep) {
  if (dist > 1e-9 * pad && v3_dot(d, hint) >= 0) {
    *sep = dist;
    return v3_scale(d, 1.0 / dist);
  }
  *sep = v3_dot(d, fallback);
  return fallback;
}

static int point_cb(int t, void *ud) {
  feat_ctx *c = ud;
  soft_body *b = c->b;
  const int32_t *tv = &b->tri[3 * t];
  vec3 a = b->x[tv[0]], bb = b->x[tv[1]], cc = b->x[tv[2]];
  double w[3];
  vec3 q = geom_closest_on_triangle(c->p, a, bb, cc, w);
  vec3 d = v3_sub(q, c->p);
  double dist = v3_len(d);
  if (dist >= c->pad) return 0;
  /* past the corner, the triangle's own normal (turned out of the obstacle) is the way back */
  vec3 nt = v3_normalize(v3_cross(v3_sub(bb, a), v3_sub(cc, a)));
  if (v3_len2(nt) == 0) return 0;
  double sep;
  vec3 n = push_direction(d, dist, c->pad, c->hint, v3_dot(nt, c->hint) >= 0 ? nt : v3_neg(nt), &sep);
  respond(c, tv, w, 3, n, c->pad - sep, rigid_point_velocity(c->r, c->p));
  return 0;
}

static int segment_cb(int t, void *ud) {
  feat_ctx *c = ud;
  soft_body *b = c->b;
  for (int k = 0; k < 3; k++) {
    int e = b->tri_edge[3 * t + k];
    if (b->edge_owner[e] != t) continue; /* each cloth edge once */
    int32_t idx[2] = {b->edge[2 * e], b->edge[2 * e + 1]};
    vec3 x0 = b->x[idx[0]], x1 = b->x[idx[1]];
    double s, u;
    double d2 = geom_segment_segment(x0, x1, c->p, c->q, &s, &u);
    if (d2 >= c->pad * c->pad) continue;
    vec3 cp = v3_lerp(x0, x1, s), fp = v3_lerp(c->p, c->q, u);
    vec3 d = v3_sub(cp, fp);
    double sep;
    vec3 n = push_direction(d, sqrt(d2), c->pad, c->hint, c->hint, &sep);
    double w[2] = {1 - s, s};
    respond(c, idx, w, 2, n, c->pad - sep, rigid_point_velocity(c->r, fp));
  }
  return 0;
}

/* Triangle boxes from the current positions, then the tree's node boxes. */
static int refit_tree(soft_body *b) {
  for (int t = 0; t < b->nt; t++) {
    vec3 p = b->x[b->tri[3 * t]], q = b->x[b->tri[3 * t + 1]], s = b->x[b->tri[3 * t + 2]];
    b->tri_lo[t] = v3_min(p, v3_min(q, s));
    b->tri_hi[t] = v3_max(p, v3_max(q, s));
  }
  bvh_refit(&b->tri_tree, b->tri_lo, b->tri_hi);
  return 1;
}

/* Like bvh_query_segment, but visits every item whose box comes within `pad` of the segment: a long
 * obstacle edge then only visits the cloth near it, not its whole bounding box. */
static void query_segment_padded(const bvh *t, vec3 p0, vec3 p1, double pad, int (*fn)(int, void *), void *ctx) {
  if (t->node_count == 0) return;
  const vec3 e = v3(pad, pad, pad);
  int32_t stack[BVH_MAX_DEPTH * 2 + 2];
  int sp = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const bvh_node *nd = &t->nodes[stack[--sp]];
    if (!bvh_segment_box(p0, p1, v3_sub(nd->lo, e), v3_add(nd->hi, e))) continue;
    if (nd->left < 0) {
      for (int k = 0; k < nd->count; k++) {
        int at = nd->right + k;
        if (bvh_segment_box(p0, p1, v3_sub(t->item_lo[at], e), v3_add(t->item_hi[at], e))) fn(t->items[at], ctx);
      }
    } else {
      stack[sp++] = nd->right;
      stack[sp++] = nd->left;
    }
  }
}

/* A triangle whose corners sit on a sphere of radius R dips towards its centre by about
 * rho^2 / 2R (rho its circumradius). Where that stays under half the thickness the vertex pass
 * already keeps the whole triangle outside, and a rounded feature need not be tested: this keeps
 * fine cloth on a ball as cheap as before and coarse cloth correct. 1.3 allows for stretching. */
static int rounded_feature_needed(const soft_body *b, double radius, double pad) {
  double rho = 1.3 * b->max_circumradius;
  return rho * rho / (2 * (radius + pad)) >= 0.5 * pad;
}

void contact_soft_features(loom_world *w, soft_body *b, double a1) {
  int any = 0;
  for (int o = 0; o < w->order_count && !any; o++) {
    const rigid_body *r = w->bodies[w->order[o]].rigid;
    any = r && (r->nfeat_pt || r->nfeat_seg);
  }
  if (!any || b->nt == 0) return;
  vec3 blo = v3(INFINITY, INFINITY, INFINITY), bhi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < b->n; i++) {
    blo = v3_min(blo, b->x[i]);
    bhi = v3_max(bhi, b->x[i]);
  }
  int refit = 0;
  for (int o = 0; o < w->order_count; o++) {
    const rigid_body *r = w->bodies[w->order[o]].rigid;
    if (!r || !(r->nfeat_pt || r->nfeat_seg)) continue;
    const double pad = b->thickness + r->thickness;
    vec3 rlo, rhi;
    rigid_swept_aabb(r, pad, &rlo, &rhi);
    if (!bvh_box_overlap(rlo, rhi, blo, bhi)) continue;
    vec3 pos;
    quat q;
    rigid_pose_at(r, a1, &pos, &q);
    feat_ctx c = {b, r, pad, sqrt(b->friction * r->friction), v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    for (int i = 0; i < r->nfeat_pt; i++) {
      if (r->feat_pt_r[i] > 0 && !rounded_feature_needed(b, r->feat_pt_r[i], pad)) continue;
      c.p = v3_add(pos, q_rotate(q, r->feat_pt[i]));
      c.pad = pad + r->feat_pt_r[i];
      const vec3 ep = v3(c.pad, c.pad, c.pad);
      if (!bvh_box_overlap(v3_sub(c.p, ep), v3_add(c.p, ep), blo, bhi)) continue;
      if (!refit) refit = refit_tree(b);
      c.hint = q_rotate(q, r->feat_pt_n[i]);
      bvh_query_box(&b->tri_tree, v3_sub(c.p, ep), v3_add(c.p, ep), point_cb, &c);
    }
    for (int i = 0; i < r->nfeat_seg; i++) {
      if (r->feat_seg_r[i] > 0 && !rounded_feature_needed(b, r->feat_seg_r[i], pad)) continue;
      c.p = v3_add(pos, q_rotate(q, r->feat_seg[2 * i]));
      c.q = v3_add(pos, q_rotate(q, r->feat_seg[2 * i + 1]));
      c.pad = pad + r->feat_seg_r[i];
      const vec3 ep = v3(c.pad, c.pad, c.pad);
      vec3 slo = v3_sub(v3_min(c.p, c.q), ep), shi = v3_add(v3_max(c.p, c.q), ep);
      if (!bvh_box_overlap(slo, shi, blo, bhi)) continue;
      if (!refit) refit = refit_tree(b);
      c.hint = q_rotate(q, r->feat_seg_n[i]);
      query_segment_padded(&b->tri_tree, c.p, c.q, c.pad, segment_cb, &c);
    }
  }
}
