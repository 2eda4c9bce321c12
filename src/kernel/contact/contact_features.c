/* contact_features.c — sharp features of obstacles against cloth elements.
 *
 * Keeping every cloth vertex outside an obstacle is not enough where the obstacle has corners and
 * edges: a table's edge slides between two vertices and pokes through the cloth. Document 000's
 * ClothOnTable case shows exactly these contacts (edge–edge with the table edge, point–triangle
 * with its corner). After the vertex pass of each substep we therefore test
 *   - each feature point (box corners, cylinder rim points, corners of sharp mesh edges) against
 *     the cloth triangles (point–triangle), and
 *   - each feature segment (box edges, rim segments, convex or boundary mesh edges) against the
 *     cloth edges (edge–edge); a rounded one (a capsule's or a cylinder's axis with its radius)
 *     against whole cloth triangles, as a rod thinner than the cells passes under their middles,
 * and when the cloth element is closer than the thickness `pad`, move its vertices apart with the
 * weights of the contact point (Bridson, Fedkiw, Anderson 2002 §7: the obstacle has infinite mass,
 * node i moves by w_i/m_i / sum_j w_j^2/m_j of the correction), remove the approaching normal
 * velocity with the same distribution and apply Coulomb friction. A cloth element that has slipped
 * past a feature is recognised by the feature's outward hint and pushed back out. */
#include <string.h>

#include "contact/contact.h"

/* ---- the contact pass ------------------------------------------------------------------------------ */

static void query_segment_padded(const bvh *t, vec3 p0, vec3 p1, double pad, int (*fn)(int, void *), void *ctx);

typedef struct feat_ctx {
  loom_world *w;
  int slot_a, slot_b;
  int feature; /* index of the rigid feature being tested */
  cloth_body *b;
  const rigid_body *r;
  double pad, mu;
  vec3 p, hint;      /* feature point (world), or segment start */
  vec3 q;            /* segment end */
  int rounded;       /* the feature has a radius (a sphere's centre, a capsule's end or axis) */
  int side;          /* a cylinder's axis: its radius holds beside the segment only */
  double ih;         /* 1 / the substep */
} feat_ctx;

/* Moves cloth nodes idx[0..k) with weights w so that their weighted point moves by delta along n,
 * and makes the weighted point's velocity relative to vo non-approaching, with friction. */
static void respond(feat_ctx *c, const int32_t *idx, const double *w, int k, vec3 n, double delta, vec3 vo,
                    int type_a, int feature_a, int type_b, vec3 point) {
  cloth_body *b = c->b;
  double denom = 0;
  for (int j = 0; j < k; j++) denom += w[j] * w[j] * b->p.inv_m[idx[j]];
  if (!(denom > 0)) return; /* all pinned: nothing can move */
  vec3 mv0 = v3(0, 0, 0);
  for (int j = 0; j < k; j++) mv0 = v3_madd(mv0, b->p.v[idx[j]], b->p.m[idx[j]]);
  for (int j = 0; j < k; j++) {
    double s = w[j] * b->p.inv_m[idx[j]] / denom;
    b->p.x[idx[j]] = v3_madd(b->p.x[idx[j]], n, delta * s);
  }
  if (fabs(delta) > 1e-6 * c->pad) c->w->obstacle_moves++; /* (the collision pipeline asks) */
  vec3 vp = v3(0, 0, 0);
  for (int j = 0; j < k; j++) vp = v3_madd(vp, b->p.v[idx[j]], w[j]);
  vec3 vrel = v3_sub(vp, vo);
  double vn = v3_dot(vrel, n);
  if (vn < 0) {
    /* at a sharp feature the approach is taken off only so far as the push accounts for it
     * (delta / h): where the cloth element lies on the feature and the substep moved it in by
     * delta, the push takes it back and the element ends at rest; removing more left a node that
     * shares the element with faster ones moving outwards while it stayed where it was (a node on
     * a box's edge reported 9 cm/s every step, standing still). A rounded feature pushes a tilted
     * triangle again from its new nearest point, and keeps removing the whole approach (with
     * less, a flag rubbing on its pole gained energy); so does a dynamic body, which takes the
     * opposite impulse (a cloth thrown over a light box pushed it 3 cm instead of 5) */
    const double dvn = c->rounded || rigid_is_dynamic(c->r) ? -vn : fmin(-vn, delta * c->ih);
    vec3 vt = v3_madd(vrel, n, -vn);
    double lt = v3_len(vt);
    vec3 dv = v3_scale(n, dvn);
    if (lt > 0) dv = v3_madd(dv, vt, -fmin(1.0, c->mu * dvn / lt));
    for (int j = 0; j < k; j++) b->p.v[idx[j]] = v3_madd(b->p.v[idx[j]], dv, w[j] * b->p.inv_m[idx[j]] / denom);
  }
  for (int j = 0; j < k; j++)
    if (w[j] > 0) b->p.contact[idx[j]] |= (uint8_t)(1 | (rigid_is_dynamic(c->r) ? CONTACT_MOVABLE : 0));
  contact_work *kw;
  loom_contact *rec = contacts_push(c->w, &kw);
  if (!rec) return;
  vec3 mv1 = v3(0, 0, 0);
  for (int j = 0; j < k; j++) mv1 = v3_madd(mv1, b->p.v[idx[j]], b->p.m[idx[j]]);
  kw->slot_a = c->slot_a;
  kw->slot_b = c->slot_b;
  kw->resolved = 1;
  rec->body_a = world_handle(c->w, c->slot_a);
  rec->body_b = world_handle(c->w, c->slot_b);
  rec->type_a = type_a;
  rec->feature_a = feature_a;
  rec->type_b = type_b;
  rec->feature_b = c->feature;
  rec->solver = 2;
  rec->point = point;
  rec->normal = n;
  rec->depth = delta;
  rec->impulse = v3_sub(mv1, mv0);
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
  cloth_body *b = c->b;
  const int32_t *tv = &b->p.tri[3 * t];
  /* a large triangle pushed out at its nearest point tilts and may still dip into a rounded
   * feature elsewhere: pushed again from there (a few times at most) */
  for (int again = 0; again < (c->rounded ? 4 : 1); again++) {
    vec3 a = b->p.x[tv[0]], bb = b->p.x[tv[1]], cc = b->p.x[tv[2]];
    double w[3];
    vec3 q = geom_closest_on_triangle(c->p, a, bb, cc, w);
    vec3 d = v3_sub(q, c->p);
    double dist = v3_len(d);
    if (dist >= c->pad * (again ? 1 - 1e-6 : 1)) return 0;
    /* past the corner, the triangle's own normal (turned out of the obstacle) is the way back */
    vec3 nt = v3_normalize(v3_cross(v3_sub(bb, a), v3_sub(cc, a)));
    if (v3_len2(nt) == 0) return 0;
    double sep;
    vec3 n = push_direction(d, dist, c->pad, c->hint, v3_dot(nt, c->hint) >= 0 ? nt : v3_neg(nt), &sep);
    respond(c, tv, w, 3, n, c->pad - sep, rigid_point_velocity(c->r, c->p), LOOM_FEATURE_TRIANGLE, t,
            LOOM_FEATURE_CORNER, v3_add(v3_add(v3_scale(a, w[0]), v3_scale(bb, w[1])), v3_scale(cc, w[2])));
  }
  return 0;
}

static int segment_cb(int t, void *ud) {
  feat_ctx *c = ud;
  cloth_body *b = c->b;
  for (int k = 0; k < 3; k++) {
    int e = b->model.tri_edge[3 * t + k];
    if (b->model.edge_owner[e] != t) continue; /* each cloth edge once */
    int32_t idx[2] = {b->model.edge[2 * e], b->model.edge[2 * e + 1]};
    vec3 x0 = b->p.x[idx[0]], x1 = b->p.x[idx[1]];
    double s, u;
    double d2 = geom_segment_segment(x0, x1, c->p, c->q, &s, &u);
    if (d2 >= c->pad * c->pad) continue;
    vec3 cp = v3_lerp(x0, x1, s), fp = v3_lerp(c->p, c->q, u);
    vec3 d = v3_sub(cp, fp);
    double sep;
    /* touching or past the feature: back along the normal of the two segments, turned out of the
     * obstacle (the hint's side), which lifts the cloth edge off the feature without sliding it
     * along the cloth as the hint (a box edge's bisector) does; the hint for near-parallel ones */
    vec3 back = c->hint;
    const vec3 cr = v3_cross(v3_sub(x1, x0), v3_sub(c->q, c->p));
    const double lc = v3_len(cr), le = v3_len(v3_sub(x1, x0)) * v3_len(v3_sub(c->q, c->p));
    if (lc > 0.1 * le) back = v3_scale(cr, (v3_dot(cr, c->hint) >= 0 ? 1.0 : -1.0) / lc);
    vec3 n = push_direction(d, sqrt(d2), c->pad, c->hint, back, &sep);
    double w[2] = {1 - s, s};
    respond(c, idx, w, 2, n, c->pad - sep, rigid_point_velocity(c->r, fp), LOOM_FEATURE_EDGE, e,
            LOOM_FEATURE_SEGMENT, cp);
  }
  return 0;
}

/* A rounded feature segment (a capsule's axis, a cylinder's for its side) against a whole cloth
 * triangle: a rod thinner than the cloth's cells passes under the middle of a triangle, where no
 * cloth edge comes near it. The triangle is pushed at its nearest point with that point's
 * weights, again from its new nearest point when a tilted large triangle still dips in (a few
 * times at most). A point with a share on a pinned vertex is left alone: the pins ignore contacts
 * (they may lie inside the margin, flag.lua), the free vertex with a small rest of the weight
 * would be thrown by the push divided by it, and the vertex pass keeps the free vertices out. */
static int segment_tri_cb(int t, void *ud) {
  feat_ctx *c = ud;
  cloth_body *b = c->b;
  const int32_t *tv = &b->p.tri[3 * t];
  for (int again = 0; again < 4; again++) {
    const vec3 a = b->p.x[tv[0]], bb = b->p.x[tv[1]], cc = b->p.x[tv[2]];
    double w[3], u;
    const double d2 = geom_segment_triangle_closest(c->p, c->q, a, bb, cc, w, &u);
    if (d2 >= c->pad * c->pad * (again ? 1 - 2e-6 : 1)) return 0;
    if (c->side && !(u > 1e-9 && u < 1 - 1e-9)) return 0; /* beyond a cylinder's cap: the rims' */
    for (int k = 0; k < 3; k++)
      if (b->p.inv_m[tv[k]] == 0 && w[k] > 0) return 0;
    const vec3 cp = v3_add(v3_add(v3_scale(a, w[0]), v3_scale(bb, w[1])), v3_scale(cc, w[2]));
    const vec3 fp = v3_lerp(c->p, c->q, u);
    double sep;
    const vec3 n = push_direction(v3_sub(cp, fp), sqrt(d2), c->pad, c->hint, c->hint, &sep);
    if (v3_len2(n) == 0) return 0; /* a rounded axis through the triangle: no side to push to */
    respond(c, tv, w, 3, n, c->pad - sep, rigid_point_velocity(c->r, fp), LOOM_FEATURE_TRIANGLE, t,
            LOOM_FEATURE_SEGMENT, cp);
  }
  return 0;
}

/* Like bvh_query_segment, but visits every item whose box comes within `pad` of the segment: a long
 * obstacle edge then only visits the cloth near it, not its whole bounding box. */
void contact_query_segment_padded(const bvh *t, vec3 p0, vec3 p1, double pad, int (*fn)(int, void *), void *ctx) {
  query_segment_padded(t, p0, p1, pad, fn, ctx);
}
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
 * fine cloth on a ball as cheap as before and coarse cloth correct. rho is the largest
 * circumradius of the cloth's triangles, 1.3 times that at rest or as they are when that is more
 * (a cloth stretched over a ball has triangles many times their rest size, whose sag the test at
 * rest size missed; a flat or collapsed triangle counts as infinite). */
static int rounded_feature_needed(double rho, double radius, double pad) {
  return !(rho * rho / (2 * (radius + pad)) < 0.5 * pad);
}

static double largest_circumradius(const cloth_body *b) {
  double most = 0;
  for (int t = 0; t < b->p.nt; t++) {
    const int32_t *tv = &b->p.tri[3 * t];
    most = d_max(most, geom_circumradius(b->p.x[tv[0]], b->p.x[tv[1]], b->p.x[tv[2]]));
  }
  return most;
}

double contact_rounded_clearance(const cloth_body *b, const rigid_body *r, double pad, double *side) {
  const double rho = 1.3 * b->model.max_circumradius;
  double extra = 0;
  *side = 0;
  if (!(r->model.feat_round_r > 0)) return 0; /* (boxes and meshes: their features are all sharp) */
  for (int i = 0; i < r->model.nfeat_pt; i++)
    if (r->model.feat_pt_r[i] > 0 && rounded_feature_needed(rho, r->model.feat_pt_r[i], pad))
      extra = d_max(extra, rho * rho / (2 * (r->model.feat_pt_r[i] + pad)));
  for (int i = 0; i < r->model.nfeat_seg; i++)
    if (r->model.feat_seg_r[i] > 0 && rounded_feature_needed(rho, r->model.feat_seg_r[i], pad)) {
      double *to = r->model.feat_seg_side[i] ? side : &extra;
      *to = d_max(*to, rho * rho / (2 * (r->model.feat_seg_r[i] + pad)));
    }
  return extra;
}

void contact_features_respond(loom_world *w, const body_pair *pair, const step_info *s) {
  body_slot *sa = &w->bodies[pair->a];
  if (sa->ops->id != LOOM_KIND_CLOTH || w->bodies[pair->b].ops->id != LOOM_KIND_RIGID) return;
  cloth_body *b = cloth_of(sa);
  const rigid_body *r = rigid_of_slot(&w->bodies[pair->b]);
  if (b->p.frozen || b->p.nt == 0 || !(r->model.nfeat_pt || r->model.nfeat_seg)) return;
  /* the cloth's box and triangle tree are taken once per round of the passes, where the vertex
   * response left the cloth, for all obstacles */
  if (b->cache.feat_serial != w->feature_round) {
    b->cache.feat_serial = w->feature_round;
    b->cache.feat_lo = v3(INFINITY, INFINITY, INFINITY);
    b->cache.feat_hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < b->p.n; i++) {
      b->cache.feat_lo = v3_min(b->cache.feat_lo, b->p.x[i]);
      b->cache.feat_hi = v3_max(b->cache.feat_hi, b->p.x[i]);
    }
    b->cache.feat_circ = -1; /* (found when a rounded feature first asks) */
  }
  int refit = b->cache.refit_serial == w->feature_round;
  const vec3 blo = b->cache.feat_lo, bhi = b->cache.feat_hi;
  const double pad = particles_thickness(&b->p) + r->params.thickness;
  vec3 rlo, rhi;
  rigid_swept_aabb(r, pad, &rlo, &rhi);
  if (!bvh_box_overlap(rlo, rhi, blo, bhi)) return;
  vec3 pos;
  quat q;
  rigid_pose_at(r, s->a1, &pos, &q);
  feat_ctx c = {w, pair->a, pair->b, 0, b, r, pad, sqrt(b->p.friction * r->params.friction), v3(0, 0, 0), v3(0, 0, 0),
                v3(0, 0, 0), 0, 0, 1.0 / s->h};
  if (r->model.feat_round_r > 0 && b->cache.feat_circ < 0) b->cache.feat_circ = d_max(1.3 * b->model.max_circumradius, largest_circumradius(b));
  for (int i = 0; i < r->model.nfeat_pt; i++) {
    if (r->model.feat_pt_r[i] > 0 && !rounded_feature_needed(b->cache.feat_circ, r->model.feat_pt_r[i], pad)) continue;
    c.p = v3_add(pos, q_rotate(q, r->model.feat_pt[i]));
    c.pad = pad + r->model.feat_pt_r[i];
    const vec3 ep = v3(c.pad, c.pad, c.pad);
    if (!bvh_box_overlap(v3_sub(c.p, ep), v3_add(c.p, ep), blo, bhi)) continue;
    if (!refit) {
      cloth_refit_tree(b);
      b->cache.refit_serial = w->feature_round;
      refit = 1;
    }
    c.hint = q_rotate(q, r->model.feat_pt_n[i]);
    c.feature = i;
    c.rounded = r->model.feat_pt_r[i] > 0;
    bvh_query_box(&b->cache.tri_tree, v3_sub(c.p, ep), v3_add(c.p, ep), point_cb, &c);
  }
  for (int i = 0; i < r->model.nfeat_seg; i++) {
    if (r->model.feat_seg_r[i] > 0 && !rounded_feature_needed(b->cache.feat_circ, r->model.feat_seg_r[i], pad)) continue;
    c.p = v3_add(pos, q_rotate(q, r->model.feat_seg[2 * i]));
    c.q = v3_add(pos, q_rotate(q, r->model.feat_seg[2 * i + 1]));
    c.pad = pad + r->model.feat_seg_r[i];
    const vec3 ep = v3(c.pad, c.pad, c.pad);
    vec3 slo = v3_sub(v3_min(c.p, c.q), ep), shi = v3_add(v3_max(c.p, c.q), ep);
    if (!bvh_box_overlap(slo, shi, blo, bhi)) continue;
    if (!refit) {
      cloth_refit_tree(b);
      b->cache.refit_serial = w->feature_round;
      refit = 1;
    }
    c.hint = q_rotate(q, r->model.feat_seg_n[i]);
    c.feature = i;
    c.side = r->model.feat_seg_side[i];
    c.rounded = r->model.feat_seg_r[i] > 0;
    query_segment_padded(&b->cache.tri_tree, c.p, c.q, c.pad, c.rounded ? segment_tri_cb : segment_cb, &c);
  }
}
