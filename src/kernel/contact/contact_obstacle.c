/* contact_obstacle.c — soft-body vertices against rigid obstacles, after every substep.
 *
 * Each vertex is kept at least `pad` = cloth thickness + obstacle skin away from the obstacle's
 * surface. Analytic shapes use their exact signed distance; triangle meshes (open or closed) use
 * the vertex's path over the substep: a segment test catches paths through a triangle (the vertex
 * is put back on the side it came from, 001's "type 1" idea without its infinite friction), then a
 * proximity pass pushes it out to `pad`. The velocity relative to the obstacle loses its inward
 * normal part (inelastic, as Bridson 2002 for cloth) and the tangential part is reduced by
 * mu |dv_n| (Coulomb friction impulse limited by the normal impulse). */
#include <stdlib.h>

#include "contact/contact.h"

typedef struct seg_ctx {
  const rigid_body *r;
  vec3 p0, p1;
  double best_t;
  int best;
  double tests; /* exact segment–triangle tests made */
} seg_ctx;

static int seg_cb(int t, void *ud) {
  seg_ctx *c = ud;
  const loom_mesh *m = c->r->model.mesh;
  double s;
  c->tests++;
  if (geom_segment_triangle(c->p0, c->p1, m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]], &s,
                            NULL) &&
      (s < c->best_t || (s == c->best_t && t < c->best))) {
    c->best_t = s;
    c->best = t;
  }
  return 0;
}

static double sgn(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

/* Mesh obstacle in its own frame: p0 -> p1 is the vertex path. Returns 1 and the corrected point
 * and contact normal when the vertex needs correcting. */
static int mesh_contact(const rigid_body *r, double pad, vec3 p0, vec3 p1, int inside, vec3 *out, vec3 *normal,
                        double *depth, int *collided, obstacle_query *mq) {
  const loom_mesh *m = r->model.mesh;
  vec3 p = p1;
  int touched = 0;
  *depth = 0;
  *collided = 0;
  /* 0. a mesh with an inside (a convex hull, a closed mesh), in a run that looks for bad starts
   * (pair_frame.inside): a path that begins inside it is pushed out to the nearest surface, not
   * kept on the side it began on as below (which held a cloth made inside a hull where it was) */
  if (inside) {
    vec3 n0, n1;
    if (rigid_local_distance_q(r, p0, &n0, mq) < 0) {
      const double d1 = rigid_local_distance_q(r, p1, &n1, mq);
      if (!(d1 < pad)) return 0;
      *out = v3_madd(p1, n1, pad - d1);
      *normal = n1;
      *depth = d1 < 0 ? -d1 : 0;
      return 1;
    }
  }
  /* 1. the path crosses a triangle: go back to the crossing point, on the side it came from */
  seg_ctx sc = {r, p0, p1, INFINITY, -1, 0};
  if (mq->brute) {
    /* the reference: every triangle, in index order (the nearest crossing wins either way, and of
     * two at exactly the same fraction of the path the lower index) */
    for (int t = 0; t < m->nt; t++) seg_cb(t, &sc);
  } else {
    bvh_query_segment(&r->model.tree, p0, p1, seg_cb, &sc);
  }
  mq->tests += sc.tests;
  mq->brute_tests += m->nt;
  if (sc.best >= 0) {
    vec3 n = r->model.tri_normal[sc.best];
    vec3 a = m->v[m->tri[3 * sc.best]];
    double side = sgn(v3_dot(v3_sub(p0, a), n));
    if (side == 0) side = -sgn(v3_dot(v3_sub(p1, a), n));
    if (side == 0) side = 1;
    vec3 hit = v3_lerp(p0, p1, sc.best_t);
    *depth = fabs(v3_dot(v3_sub(p1, hit), n));
    p = v3_madd(hit, n, side * pad);
    *normal = v3_scale(n, side);
    touched = 1;
    *collided = 1;
  }
  /* 2. proximity: push out to `pad` from the nearest triangle (a few passes for corners) */
  for (int pass = 0; pass < 3; pass++) {
    double d;
    vec3 q;
    const int best = rigid_mesh_closest(r, p, pad, &d, &q, NULL, mq);
    if (best < 0 || !(d < pad)) break;
    struct {
      int best;
      vec3 q;
    } nc = {best, q};
    if (pass > 0 && d >= pad * (1 - 1e-9)) break; /* resolved by the previous pass (up to rounding) */
    vec3 n = r->model.tri_normal[nc.best];
    double side0 = sgn(v3_dot(v3_sub(p0, nc.q), n));
    if (side0 == 0) side0 = sgn(v3_dot(v3_sub(p, nc.q), n));
    if (side0 == 0) side0 = 1;
    vec3 dir = v3_sub(p, nc.q);
    vec3 u;
    if (d > 1e-9 * (pad + 1e-9) && v3_dot(dir, n) * side0 > 0)
      u = v3_scale(dir, 1.0 / d);
    else
      u = v3_scale(n, side0);
    p = v3_madd(nc.q, u, pad);
    *normal = u;
    touched = 1;
  }
  *out = p;
  return touched;
}

/* Fraction t of the path p0 -> p1 at which it is inside the shape (signed distance < 0), or -1
 * if it stays outside. The signed distance of a convex shape is convex along a line, so a
 * golden-section search for its minimum finds an inside point whenever there is one. */
static double path_inside(const geom_shape *s, vec3 p0, vec3 p1, double *dmin) {
  const double g = 0.6180339887498949;
  double a = 0, b = 1, t1 = b - g * (b - a), t2 = a + g * (b - a);
  vec3 n;
  double f1 = geom_shape_sdf(s, v3_lerp(p0, p1, t1), &n), f2 = geom_shape_sdf(s, v3_lerp(p0, p1, t2), &n);
  for (int it = 0; it < 60 && f1 >= 0 && f2 >= 0; it++) {
    if (f1 < f2) {
      b = t2;
      t2 = t1;
      f2 = f1;
      t1 = b - g * (b - a);
      f1 = geom_shape_sdf(s, v3_lerp(p0, p1, t1), &n);
    } else {
      a = t1;
      t1 = t2;
      f1 = f2;
      t2 = a + g * (b - a);
      f2 = geom_shape_sdf(s, v3_lerp(p0, p1, t2), &n);
    }
  }
  *dmin = fmin(f1, f2);
  return f1 < 0 ? t1 : (f2 < 0 ? t2 : -1);
}

/* Analytic shape in its own frame. */
static int shape_contact(const rigid_body *r, double pad, vec3 p0, vec3 p1, vec3 *out, vec3 *normal, double *depth) {
  vec3 n1, n0;
  double d1 = geom_shape_sdf(&r->model.shape, p1, &n1);
  double d0, hi = 1; /* hi: a fraction of the path where it is inside the shape */
  if (!(d1 < pad)) {
    /* The end is clear, but a fast vertex may have passed through a thin shape within the
     * substep. The distance changes by at most the path length: only long paths can cross. */
    double dmin;
    /* a path no longer than the end's clearance cannot have crossed (saves the start's distance) */
    if (!(v3_dist2(p0, p1) > d1 * d1)) return 0;
    d0 = geom_shape_sdf(&r->model.shape, p0, &n0);
    if (!(d0 > 0) || !(v3_dist(p0, p1) > d0 + d1)) return 0;
    hi = path_inside(&r->model.shape, p0, p1, &dmin);
    if (hi < 0) return 0;
    *depth = -dmin;
  } else {
    *depth = d1 < 0 ? -d1 : 0;
    /* the start's distance matters only for an end inside the shape */
    if (!(d1 < 0) || !((d0 = geom_shape_sdf(&r->model.shape, p0, &n0)) > 0)) {
      *out = v3_madd(p1, n1, pad - d1);
      *normal = n1;
      return 1;
    }
  }
  /* In (or through) after starting outside (a fast vertex or a thin shape): find where the path
   * entered by bisection and push out there, so it cannot be expelled through the far side. A
   * shallow end whose nearest face is the one it came through is pushed out along its own
   * normal, which keeps its tangential motion. */
  double lo = 0;
  for (int it = 0; it < 30; it++) {
    double mid = 0.5 * (lo + hi);
    vec3 nm;
    if (geom_shape_sdf(&r->model.shape, v3_lerp(p0, p1, mid), &nm) > 0)
      lo = mid;
    else
      hi = mid;
  }
  vec3 pe = v3_lerp(p0, p1, lo), ne;
  double de = geom_shape_sdf(&r->model.shape, pe, &ne);
  if (d1 < 0 && d1 >= -pad && v3_dot(ne, n1) > 0) {
    *out = v3_madd(p1, n1, pad - d1);
    *normal = n1;
    return 1;
  }
  *out = v3_madd(pe, ne, pad - de);
  *normal = ne;
  return 1;
}

/* One obstacle over the current substep: its contact distance, swept box and poses. */
typedef struct pair_frame {
  const rigid_body *r;
  int slot_a, slot_b;
  int handle_a, handle_b;
  double pad, mu;
  vec3 lo, hi;
  vec3 pos0, pos1;
  quat q0, q1;
  int inside; /* the obstacle is a mesh with an inside and the body's run looks for bad starts
               * (col.check_tangles: its first run, after a last resort or a move between steps) */
  obstacle_query *mq; /* the world's: how mesh triangles are found, and their tests counted */
} pair_frame;

static pair_frame frame_of(loom_world *w, int slot_a, int slot_b, double pad, const step_info *s) {
  pair_frame f;
  f.mq = &w->oquery;
  const rigid_body *r = rigid_of_slot(&w->bodies[slot_b]);
  f.r = r;
  f.slot_a = slot_a;
  f.slot_b = slot_b;
  f.handle_a = world_handle(w, slot_a);
  f.handle_b = world_handle(w, slot_b);
  /* geometric mean: either side at 0 means no friction */
  f.mu = sqrt(w->bodies[slot_a].pts->friction * r->params.friction);
  f.pad = pad;
  rigid_swept_aabb(r, pad, &f.lo, &f.hi);
  rigid_pose_at(r, s->a0, &f.pos0, &f.q0);
  rigid_pose_at(r, s->a1, &f.pos1, &f.q1);
  f.inside = (r->model.shape_type == LOOM_SHAPE_CONVEX || r->model.vert_pn) && w->bodies[slot_a].pts->col.check_tangles;
  return f;
}

/* The path's box meets the obstacle's swept box (the cheap test every vertex takes). */
static inline int path_near(const pair_frame *f, vec3 x0, vec3 x) {
  return !(d_max(x.x, x0.x) < f->lo.x || d_min(x.x, x0.x) > f->hi.x || d_max(x.y, x0.y) < f->lo.y ||
           d_min(x.y, x0.y) > f->hi.y || d_max(x.z, x0.z) < f->lo.z || d_min(x.z, x0.z) > f->hi.z);
}

/* Exact test of one vertex path against the obstacle; 1 and the result in *k when it needs a
 * response. */
static int vertex_test(const pair_frame *f, vec3 x0, vec3 x, contact_work *k, double *depth) {
  const rigid_body *r = f->r;
  vec3 p1 = q_rotate_inv(f->q1, v3_sub(x, f->pos1));
  vec3 p0 = q_rotate_inv(f->q0, v3_sub(x0, f->pos0));
  *depth = 0;
  k->collided = 0;
  int hit = rigid_shape_has_mesh(r->model.shape_type)
              ? mesh_contact(r, f->pad, p0, p1, f->inside, &k->pc, &k->nl, depth, &k->collided, f->mq)
              : shape_contact(r, f->pad, p0, p1, &k->pc, &k->nl, depth);
  k->p0 = p0;
  return hit;
}

static void fill_record(const pair_frame *f, loom_contact *c, int vertex, double depth) {
  c->body_a = f->handle_a;
  c->body_b = f->handle_b;
  c->type_a = LOOM_FEATURE_VERTEX;
  c->feature_a = vertex;
  c->type_b = LOOM_FEATURE_SHAPE;
  c->feature_b = -1;
  c->solver = 1;
  c->depth = depth;
}

typedef struct candidates {
  int32_t *idx;
  int n;
} candidates;

static int collect(int item, void *ctx) {
  candidates *c = ctx;
  c->idx[c->n++] = item;
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Tests vertex i; a hit becomes a contact in the buffer. */
static inline void detect_one(loom_world *w, const pair_frame *f, const particles *b, int i) {
  if (b->inv_m[i] == 0) return; /* a pinned vertex is a constraint: nothing to resolve */
  contact_work k;
  double depth;
  if (!vertex_test(f, b->x_sub[i], b->x[i], &k, &depth)) return;
  contact_work *kw;
  loom_contact *c = contacts_push(w, &kw);
  if (!c) return;
  k.slot_a = f->slot_a;
  k.slot_b = f->slot_b;
  k.resolved = 0;
  *kw = k;
  fill_record(f, c, i, depth);
}

/* Candidates come from the body's path tree when the obstacle covers a small part of the body
 * (a peg under a cloth), from a linear pass otherwise (a floor under all of it); either way in
 * increasing vertex order, so the buffer does not depend on which. */
void contact_vertices_detect(loom_world *w, const body_pair *pair, const step_info *s) {
  particles *b = w->bodies[pair->a].pts;
  const rigid_body *r = rigid_of_slot(&w->bodies[pair->b]);
  if (b->frozen) return;
  const pair_frame f = frame_of(w, pair->a, pair->b, particles_thickness(b) + r->params.thickness, s);
  const vec3 blo = b->sub_lo, bhi = b->sub_hi; /* from the broad phase */
  vec3 ol = v3_max(blo, f.lo), oh = v3_min(bhi, f.hi); /* the overlap of the two boxes */
  double vb = (bhi.x - blo.x) * (bhi.y - blo.y) * (bhi.z - blo.z);
  double vo = d_max(0, oh.x - ol.x) * d_max(0, oh.y - ol.y) * d_max(0, oh.z - ol.z);
  if (b->n > 64 && isfinite(vb) && vo < 0.25 * vb) {
    arena_mark mark = arena_get_mark(&w->scratch);
    candidates c = {ARENA_NEW(&w->scratch, int32_t, b->n, "vertex candidates"), 0};
    if (c.idx) {
      bvh_query_box(particles_path_tree(w, b), f.lo, f.hi, collect, &c);
      qsort(c.idx, (size_t)c.n, sizeof(int32_t), cmp_int);
      for (int j = 0; j < c.n; j++) detect_one(w, &f, b, c.idx[j]);
      arena_release(&w->scratch, mark);
      return;
    }
    arena_release(&w->scratch, mark);
  }
  const vec3 *x = b->x, *x0 = b->x_sub;
  for (int i = 0; i < b->n; i++)
    if (path_near(&f, x0[i], x[i])) detect_one(w, &f, b, i);
}

/* Applies one vertex contact: position to the corrected point, velocity relative to the obstacle
 * without its approaching normal part, Coulomb friction on the tangential part. */
static void apply(loom_world *w, loom_contact *c, contact_work *k, const pair_frame *f) {
  particles *b = w->bodies[k->slot_a].pts;
  LOOM_ASSERT(b && c->feature_a >= 0 && c->feature_a < b->n, "vertex contact on a particle body, index in range");
  LOOM_ASSERT(b->inv_m[c->feature_a] > 0, "pinned vertices never get vertex contacts");
  const rigid_body *r = f->r;
  const int i = c->feature_a;
  const double mu = f->mu;
  if (k->collided) w->stats.collisions++;
  if (c->depth > w->stats.max_penetration) w->stats.max_penetration = c->depth;
  const vec3 pos1 = f->pos1;
  const quat q1 = f->q1;
  vec3 pc = k->pc, nl = k->nl;
  vec3 n = q_rotate(q1, nl);
  vec3 vo = rigid_point_velocity(r, v3_add(pos1, q_rotate(q1, pc)));
  k->vn_b = v3_dot(vo, n);
  k->vt_b = v3_madd(vo, n, -k->vn_b);
  k->mu = mu;
  vec3 v_before = b->v[i];
  vec3 vrel = v3_sub(b->v[i], vo);
  double vn = v3_dot(vrel, n);
  if (vn < 0) {
    vec3 vt = v3_madd(vrel, n, -vn);
    double lt = v3_len(vt);
    double dvn = -vn;
    /* Coulomb: the tangential velocity loses at most mu |dv_n| */
    double keep = lt <= mu * dvn ? 0.0 : 1.0 - mu * dvn / lt;
    b->v[i] = v3_add(vo, v3_scale(vt, keep));
    /* The substep already moved the vertex with its old tangential velocity: scale that sliding
     * (relative to the obstacle) the same way, so static friction really holds. */
    vec3 d = v3_sub(pc, k->p0);
    vec3 dt = v3_madd(d, nl, -v3_dot(d, nl));
    pc = v3_madd(pc, dt, -(1.0 - keep));
  }
  vec3 xn = v3_add(pos1, q_rotate(q1, pc));
  /* moves beyond rounding (the collision pipeline asks whether a second pass changed anything) */
  if (v3_dist2(xn, b->x[i]) > 1e-12 * f->pad * f->pad) w->obstacle_moves++;
  b->x[i] = xn;
  b->contact[i] = (uint8_t)(1 | (b->contact[i] & CONTACT_MOVABLE) | (rigid_is_dynamic(r) ? CONTACT_MOVABLE : 0));
  c->point = xn;
  c->normal = n;
  c->impulse = v3_scale(v3_sub(b->v[i], v_before), b->m[i]);
  k->resolved = 1;
}

/* Gauss–Seidel over the vertex contacts of this substep, pair after pair in broad-phase order.
 * Each contact was found at the predicted positions; a vertex that an earlier pair's contact moved
 * is tested again where it is now (and may need no response any more), and it is also tested
 * against later obstacles it was not near before. Every vertex's result depends only on its own
 * path and the obstacles in order, so this equals resolving obstacle after obstacle.
 * Temporary bits in particles.contact: 2 = moved by an earlier pair, 4 = handled in this pair,
 * 8 = in the moved list. */
void contact_vertices_respond(loom_world *w, const step_info *s, int first) {
  contact_buffer *cb = &w->contacts;
  arena_mark mark = arena_get_mark(&w->scratch);
  size_t total = 0;
  for (int o = 0; o < w->order_count; o++)
    if (w->bodies[w->order[o]].pts) total += (size_t)w->bodies[w->order[o]].pts->n;
  int *moved = ARENA_NEW(&w->scratch, int, 2 * total + 2, "moved vertices");
  int nmoved = 0;
  int at = first;
  const int detected_end = cb->count; /* re-tests below append after it */
  for (int pi = 0; pi < w->npairs; pi++) {
    const int slot_a = w->pairs[pi].a, slot_b = w->pairs[pi].b;
    particles *b = w->bodies[slot_a].pts;
    if (!b || w->bodies[slot_b].ops->id != LOOM_KIND_RIGID || b->frozen) continue;
    int stop = at;
    while (stop < detected_end && cb->work[stop].slot_a == slot_a && cb->work[stop].slot_b == slot_b) stop++;
    if (stop == at && nmoved == 0) continue;
    const rigid_body *r = rigid_of_slot(&w->bodies[slot_b]);
    const pair_frame f = frame_of(w, slot_a, slot_b, particles_thickness(b) + r->params.thickness, s);
    for (int j = 0; j < nmoved; j++)
      if (moved[2 * j] == slot_a) b->contact[moved[2 * j + 1]] |= 2;
    for (int c = at; c < stop; c++) {
      loom_contact *rec = &cb->items[c];
      contact_work *k = &cb->work[c];
      const int i = rec->feature_a;
      b->contact[i] |= 4;
      if (b->contact[i] & 2) {
        /* moved since it was found: evaluate again where it is now */
        double depth;
        if (!path_near(&f, b->x_sub[i], b->x[i]) || !vertex_test(&f, b->x_sub[i], b->x[i], k, &depth)) continue;
        rec->depth = depth;
      }
      apply(w, rec, k, &f);
    }
    /* moved vertices without a contact here may have been pushed into this obstacle */
    for (int j = 0; j < nmoved; j++) {
      if (moved[2 * j] != slot_a) continue;
      const int i = moved[2 * j + 1];
      if (b->contact[i] & 4) continue;
      contact_work k;
      double depth;
      if (!path_near(&f, b->x_sub[i], b->x[i]) || !vertex_test(&f, b->x_sub[i], b->x[i], &k, &depth)) continue;
      contact_work *kw;
      loom_contact *rec = contacts_push(w, &kw);
      if (!rec) continue;
      k.slot_a = slot_a;
      k.slot_b = slot_b;
      *kw = k;
      kw->resolved = 0;
      fill_record(&f, rec, i, depth);
      apply(w, rec, kw, &f);
    }
    for (int j = 0; j < nmoved; j++)
      if (moved[2 * j] == slot_a) b->contact[moved[2 * j + 1]] &= (uint8_t)~2;
    for (int c = at; c < stop; c++) {
      const int i = cb->items[c].feature_a;
      b->contact[i] &= (uint8_t)~4;
      if (cb->work[c].resolved && moved && !(b->contact[i] & 8) && (size_t)nmoved < total) {
        b->contact[i] |= 8;
        moved[2 * nmoved] = slot_a;
        moved[2 * nmoved + 1] = i;
        nmoved++;
      }
    }
    at = stop;
  }
  for (int j = 0; j < nmoved; j++) w->bodies[moved[2 * j]].pts->contact[moved[2 * j + 1]] &= 1;
  arena_release(&w->scratch, mark);
}

/* ---- how fast a particle body closes in on the rigid bodies ------------------------------------ */

static double longest_edge(const particles *p) {
  double most = 0;
  for (int t = 0; t < p->nt; t++)
    for (int k = 0; k < 3; k++)
      most = d_max(most, v3_len2(v3_sub(p->x[p->tri[3 * t + k]], p->x[p->tri[3 * t + (k + 1) % 3]])));
  return sqrt(most);
}

double particles_obstacle_approach(loom_world *w, int slot, double dt) {
  const particles *p = w->bodies[slot].pts;
  if (!p || p->frozen || !(dt > 0)) return 0;
  const double thick = particles_thickness(p);
  /* a vertex can only need a substep when it moves by more than two thicknesses in the step */
  const double slow = 2 * thick / dt;
  vec3 lo, hi;
  particles_box(p, &lo, &hi);
  double vmax = 0;
  for (int i = 0; i < p->n; i++)
    if (p->inv_m[i] > 0) vmax = d_max(vmax, v3_len2(p->v[i]));
  vmax = sqrt(vmax);
  double most = 0, edge = -1;
  for (int o = 0; o < w->order_count; o++) {
    const int rs = w->order[o];
    const body_slot *t = &w->bodies[rs];
    if (t->ops->id != LOOM_KIND_RIGID || world_pair_off(w, slot, rs)) continue;
    const rigid_body *r = rigid_of_slot(t);
    const double pad = thick + r->params.thickness;
    vec3 rlo, rhi;
    rigid_current_aabb(r, pad, &rlo, &rhi);
    /* (the body's own speed is bounded by its velocities at the vertices of its box) */
    const double vb = v3_len(r->state.vel) + v3_len(r->state.omega) * 0.5 * v3_len(v3_sub(rhi, rlo));
    const double reach = (vmax + vb) * dt + pad;
    const vec3 e = v3(reach, reach, reach);
    if (!bvh_box_overlap(v3_sub(lo, e), v3_add(hi, e), rlo, rhi)) continue;
    if (!(vmax + vb > slow)) continue;
    vec3 pos;
    quat q;
    rigid_pose_at(r, 0, &pos, &q);
    const quat qi = q_conj(q);
    if (edge < 0) edge = longest_edge(p);
    for (int i = 0; i < p->n; i++) {
      if (!(p->inv_m[i] > 0)) continue;
      const vec3 x = p->x[i];
      const vec3 vrel = v3_sub(p->v[i], rigid_point_velocity(r, x));
      const double sp = v3_len(vrel);
      if (!(sp > slow) || sp <= most) continue; /* (slow, or no faster than the fastest yet: a <= sp) */
      const double ri = sp * dt + pad + 1.5 * edge;
      if (x.x < rlo.x - ri || x.y < rlo.y - ri || x.z < rlo.z - ri || x.x > rhi.x + ri || x.y > rhi.y + ri ||
          x.z > rhi.z + ri)
        continue;
      vec3 n;
      const double d = rigid_local_distance(r, q_rotate(qi, v3_sub(x, pos)), &n);
      /* within reach of the surface this step, its elements near it move past its features at up
       * to sp, in whatever direction (a cloth's part falling past a box's edge does not approach
       * the box's side, but its edges slide over the box's edge) */
      if (!(d - sp * dt < pad + 1.5 * edge)) continue;
      most = sp;
    }
  }
  return most;
}
