/* contact_simplex.c — document 004's tools against simplex surfaces: kinematic and static spheres
 * and capsules (the five finger tools, or any such body) pushing the fan triangles of simplex
 * bodies, with what 004 lacked done right (boxes and cylinders push them too, discretely: the
 * deepest sample of an overlapping triangle goes out along the shape's normal, re-queried):
 *
 *  - Continuous: a tool's centre moves along a segment over the substep. A triangle whose plane
 *    the segment crossed from outside to inside, through the triangle (within the tool's radius
 *    of it) or ending within reach of it, was tunnelled or pressed through; it is pushed to the
 *    tool's far side (along its inward normal) instead of back the way the tool came, where 004's
 *    "shortest separating translation" points the wrong way.
 *  - Otherwise the penetration depth vector (PDV) is 004's: from the tool's axis to the
 *    triangle's nearest point, of length reach - distance (reach = radius + both thicknesses).
 *    004 added it to the triangle's three vertices (the pd response still does); the project
 *    response moves the nearest point by it with the least vertex motion (barycentric weights
 *    w / sum w^2): 004's whole-triangle moves made plateaus whose rims folded through the
 *    neighbouring faces (27 crossing triangle pairs on the squeezed medium sphere).
 *  - Neighbours left penetrated: the triangles are visited again (Gauss-Seidel, each test with the
 *    positions as they are now) until none is within reach, up to `passes` passes; what remains
 *    is counted (stats.tool_unresolved) and reported once.
 *  - Response "project" moves the vertices at once and removes their velocity toward the tool;
 *    response "pd" makes the PDV a target offset that 004's PD controller (k_p, k_d) tracks in the
 *    next substep's forces (one pass, may leave penetration, as 004).
 *  - 004's proposed friction: each push adds mu |PDV| along the tool's tangential motion
 *    normalize(d - (d.n) n), never more than that motion.
 *  - 004's contact hold: a vertex of a triangle touching a tool that did not move in the substep
 *    is held where it is in the next one (simplex_predict). */
#include <string.h>

#include "contact/contact.h"
#include "simplex/simplex.h"

typedef struct tool {
  vec3 a0, b0, a1, b1; /* the axis segment at the substep's start and end (a sphere: a = b) */
  double radius;
  int still;           /* did not move this substep */
  int convex;          /* a box or cylinder: shape and end pose below, discrete tests */
  geom_shape shape;
  vec3 pos;
  quat q;
  double size;         /* the shape's bounding radius */
} tool;

/* The tool of a rigid body over the substep a0 .. a1 (now < 0: its pose now, no path). */
static int tool_of(const loom_world *w, int slot, double a0, double a1, int now, tool *t) {
  const body_slot *bs = &w->bodies[slot];
  if (bs->ops->id != LOOM_KIND_RIGID) return 0;
  const rigid_body *r = rigid_of_slot(bs);
  const int st = r->model.shape_type;
  if (rigid_is_dynamic(r) || (st != LOOM_SHAPE_SPHERE && st != LOOM_SHAPE_CAPSULE && st != LOOM_SHAPE_BOX &&
                              st != LOOM_SHAPE_CYLINDER))
    return 0;
  vec3 p0, p1;
  quat q0, q1;
  if (now) {
    p0 = p1 = r->state.pos;
    q0 = q1 = r->state.q;
  } else {
    rigid_pose_at(r, a0, &p0, &q0);
    rigid_pose_at(r, a1, &p1, &q1);
  }
  const double hh = st == LOOM_SHAPE_CAPSULE ? r->model.shape.half_h : 0;
  const vec3 ax0 = q_rotate(q0, v3(0, 0, hh)), ax1 = q_rotate(q1, v3(0, 0, hh));
  t->a0 = v3_sub(p0, ax0), t->b0 = v3_add(p0, ax0);
  t->a1 = v3_sub(p1, ax1), t->b1 = v3_add(p1, ax1);
  t->radius = r->model.shape.radius;
  t->still = !memcmp(&p0, &p1, sizeof p0) && !memcmp(&q0, &q1, sizeof q0);
  t->convex = st == LOOM_SHAPE_BOX || st == LOOM_SHAPE_CYLINDER;
  if (t->convex) {
    t->shape = r->model.shape;
    t->pos = p1, t->q = q1;
    t->size = v3_len(geom_shape_extent(&r->model.shape));
    /* the box of the path: both poses' bounding spheres */
    t->a0 = p0, t->b0 = p0, t->a1 = p1, t->b1 = p1;
    t->radius = t->size;
  }
  return 1;
}

/* A box or cylinder tool against a triangle (discrete): when they overlap, the push that takes the
 * deepest of the triangle's corners, edge midpoints and centroid out along the shape's normal
 * there (moving the whole triangle); re-queried by the passes until nothing overlaps. */
static int convex_push(const tool *T, vec3 a, vec3 b, vec3 c, double margin, vec3 *pdv) {
  const vec3 la = q_rotate_inv(T->q, v3_sub(a, T->pos)), lb = q_rotate_inv(T->q, v3_sub(b, T->pos)),
             lc = q_rotate_inv(T->q, v3_sub(c, T->pos));
  if (!geom_triangle_overlaps_shape(&T->shape, la, lb, lc, 0)) return 0;
  const vec3 pts[7] = {la, lb, lc, v3_scale(v3_add(la, lb), 0.5), v3_scale(v3_add(lb, lc), 0.5),
                       v3_scale(v3_add(lc, la), 0.5), v3_scale(v3_add(la, v3_add(lb, lc)), 1.0 / 3)};
  double deepest = INFINITY;
  vec3 n = v3(0, 0, 1);
  for (int k = 0; k < 7; k++) {
    vec3 nk;
    const double d = geom_shape_sdf(&T->shape, pts[k], &nk);
    if (d < deepest) deepest = d, n = nk;
  }
  /* an overlap with every sample outside (an edge of the shape through the triangle's middle):
   * out along the shape's normal at the centroid by the margin */
  const double depth = (deepest < 0 ? -deepest : 0) + margin;
  *pdv = v3_scale(q_rotate(T->q, n), depth);
  return v3_isfinite(*pdv);
}

static vec3 on_segment(vec3 p, vec3 a, vec3 b) {
  double t;
  return geom_closest_on_segment(p, a, b, &t);
}

/* The push a triangle (a, b, c) needs from the tool at its end pose: 1 and *pdv when it is within
 * reach of the axis or was crossed, else 0; *dist its distance from the axis. */
static int triangle_push(const tool *T, vec3 a, vec3 b, vec3 c, double reach, vec3 *pdv, double *dist, double bary[3]) {
  vec3 cs = on_segment(v3_scale(v3_add(a, v3_add(b, c)), 1.0 / 3), T->a1, T->b1), pt = cs;
  for (int it = 0; it < (v3_dist2(T->a1, T->b1) > 0 ? 8 : 1); it++) {
    pt = geom_closest_on_triangle(cs, a, b, c, bary);
    cs = on_segment(pt, T->a1, T->b1);
  }
  const vec3 d = v3_sub(pt, cs);
  const double dl = v3_len(d);
  *dist = dl;
  const vec3 n = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a))); /* outward */
  if (v3_isfinite(n) && v3_len2(n) > 0.5) {
    /* the axis point's path over the substep, against the triangle's plane */
    const vec3 p1 = cs, p0 = on_segment(p1, T->a0, T->b0);
    const double sd0 = v3_dot(v3_sub(p0, a), n), sd1 = v3_dot(v3_sub(p1, a), n);
    int behind = 0;
    if (sd0 > 0 && sd1 < 0) {
      /* the axis went through the plane this substep: through the triangle (within the radius of
       * it where it crossed), or ending within reach of it on the inside */
      const vec3 q = v3_lerp(p0, p1, sd0 / (sd0 - sd1));
      double bq[3];
      behind = dl < reach || v3_dist(geom_closest_on_triangle(q, a, b, c, bq), q) < T->radius;
    }
    if (behind) {
      *pdv = v3_scale(n, -(reach - sd1));
      bary[0] = bary[1] = bary[2] = -1; /* the whole triangle goes through */
      return 1;
    }
  }
  if (dl >= reach) return 0;
  const vec3 u = dl > 1e-12 * reach ? v3_scale(d, 1.0 / dl) : (v3_isfinite(n) ? v3_neg(n) : v3(0, 0, 0));
  if (v3_len2(u) == 0) return 0;
  *pdv = v3_scale(u, reach - dl);
  return 1;
}

static inline int box_overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

static void tool_box(const tool *T, double reach, vec3 *lo, vec3 *hi) {
  const vec3 r = v3(reach, reach, reach);
  *lo = v3_sub(v3_min(v3_min(T->a0, T->b0), v3_min(T->a1, T->b1)), r);
  *hi = v3_add(v3_max(v3_max(T->a0, T->b0), v3_max(T->a1, T->b1)), r);
}

/* One pass of a tool over a body's triangles: pushes what is within reach (Gauss-Seidel, each test
 * with the positions as they are now); returns how many it pushed. */
static int tool_pass(loom_world *w, simplex_body *S, const tool *T, double reach, int pass, const step_info *s) {
  particles *P = &S->p;
  vec3 lo, hi;
  tool_box(T, reach, &lo, &hi);
  const int pd = S->params.response == LOOM_RESPONSE_PD;
  const vec3 motion = v3_sub(v3_scale(v3_add(T->a1, T->b1), 0.5), v3_scale(v3_add(T->a0, T->b0), 0.5));
  const vec3 vtool = v3_scale(motion, 1.0 / s->h);
  const double mu = P->friction;
  int pushed = 0;
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    const vec3 a = P->x[f[0]], b = P->x[f[1]], c = P->x[f[2]];
    if (!box_overlap(lo, hi, v3_min(a, v3_min(b, c)), v3_max(a, v3_max(b, c)))) continue;
    vec3 pdv;
    double dist, bary[3] = {-1, -1, -1};
    if (T->convex ? !convex_push(T, a, b, c, reach - T->radius + 1e-9 * T->size, &pdv)
                  : !triangle_push(T, a, b, c, reach, &pdv, &dist, bary))
      continue;
    const double len = v3_len(pdv);
    if (!(len > 1e-9 * reach)) continue;
    pushed++;
    if (pass == 0) S->scratch.tool_contacts++, w->stats.tool_contacts++;
    const vec3 nh = v3_scale(pdv, 1.0 / len);
    vec3 slide = v3(0, 0, 0);
    if (mu > 0 && pass == 0) {
      const vec3 tg = v3_madd(motion, nh, -v3_dot(motion, nh));
      const double tl = v3_len(tg);
      if (tl > 0) slide = v3_scale(tg, fmin(mu * len, tl) / tl);
    }
    /* project: the triangle's nearest point moves by the PDV with the least vertex motion (weights
     * w / sum w^2 of its barycentric coordinates among the free vertices), so a dent follows the
     * tool's shape; 004 (the pd response) and a triangle pushed through move all three corners */
    double wgt[3] = {1, 1, 1};
    if (!pd && bary[0] >= 0) {
      double w2 = 0;
      for (int k = 0; k < 3; k++) w2 += P->inv_m[f[k]] > 0 ? bary[k] * bary[k] : 0;
      if (!(w2 > 0)) continue;
      for (int k = 0; k < 3; k++) wgt[k] = bary[k] / w2;
    }
    for (int k = 0; k < 3; k++) {
      const int i = f[k];
      if (P->inv_m[i] == 0 || wgt[k] == 0) continue;
      if (pd) {
        S->state.pd[i] = v3_add(S->state.pd[i], v3_add(pdv, slide));
        continue;
      }
      P->x[i] = v3_add(P->x[i], v3_scale(v3_add(pdv, slide), wgt[k]));
      const double vr = v3_dot(v3_sub(P->v[i], vtool), nh);
      if (vr < 0) P->v[i] = v3_madd(P->v[i], nh, -vr);
    }
  }
  return pushed;
}

static int tool_remaining(const simplex_body *S, const tool *T, double reach) {
  const particles *P = &S->p;
  int remaining = 0;
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    vec3 pdv;
    double dist, bary[3];
    if (T->convex ? convex_push(T, P->x[f[0]], P->x[f[1]], P->x[f[2]], 0, &pdv)
                  : triangle_push(T, P->x[f[0]], P->x[f[1]], P->x[f[2]], reach, &pdv, &dist, bary) && v3_len(pdv) > 1e-6 * reach)
      remaining++;
  }
  return remaining;
}

static void tool_hold(simplex_body *S, const tool *T, double reach) {
  particles *P = &S->p;
  const double touch = reach * 1.05;
  vec3 lo, hi;
  tool_box(T, touch, &lo, &hi);
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    const vec3 a = P->x[f[0]], b = P->x[f[1]], c = P->x[f[2]];
    if (!box_overlap(lo, hi, v3_min(a, v3_min(b, c)), v3_max(a, v3_max(b, c)))) continue;
    vec3 pdv;
    double dist, bary[3];
    if (T->convex ? convex_push(T, a, b, c, 0, &pdv) : triangle_push(T, a, b, c, touch, &pdv, &dist, bary))
      for (int k = 0; k < 3; k++) S->state.held[f[k]] = 1;
  }
}

#define MAX_TOOL_PAIRS 256

void contact_simplex_tools(loom_world *w, const step_info *s) {
  /* what the last substep held or targeted is re-decided now */
  int any = 0;
  for (int o = 0; o < w->order_count; o++) {
    body_slot *bs = &w->bodies[w->order[o]];
    if (bs->ops->id != LOOM_KIND_SIMPLEX) continue;
    simplex_body *S = simplex_of(bs);
    memset(S->state.held, 0, (size_t)S->p.n);
    memset(S->state.pd, 0, sizeof(vec3) * (size_t)S->p.n);
    any = 1;
  }
  if (!any) return;
  /* the (body, tool) pairs of this substep */
  struct {
    simplex_body *S;
    tool T;
    double reach;
  } pair[MAX_TOOL_PAIRS];
  int np = 0, dropped = 0;
  for (int k = 0; k < w->npairs; k++) {
    int sa = w->pairs[k].a, sb = w->pairs[k].b;
    if (w->bodies[sa].ops->id == LOOM_KIND_RIGID) {
      const int t = sa;
      sa = sb, sb = t;
    }
    if (w->bodies[sa].ops->id != LOOM_KIND_SIMPLEX) continue;
    simplex_body *S = simplex_of(&w->bodies[sa]);
    tool T;
    if (S->p.frozen || !tool_of(w, sb, s->a0, s->a1, 0, &T)) continue;
    if (np == MAX_TOOL_PAIRS) {
      dropped++;
      continue;
    }
    pair[np].S = S;
    pair[np].T = T;
    pair[np].reach = T.radius + particles_thickness(&S->p) + rigid_of_slot(&w->bodies[sb])->params.thickness;
    np++;
  }
  if (dropped)
    world_message(w, LOOM_WARNING, -1, "simplex tools: more than %d tool-body pairs in one substep; %d left out",
                  MAX_TOOL_PAIRS, dropped);
  /* passes over every pair together: a tool's push may press the surface into another tool */
  int passes = 1;
  for (int k = 0; k < np; k++)
    if (pair[k].S->params.response != LOOM_RESPONSE_PD && pair[k].S->params.passes > passes) passes = pair[k].S->params.passes;
  int last = 1;
  for (int pass = 0; pass < passes && last; pass++) {
    last = 0;
    for (int k = 0; k < np; k++) {
      simplex_body *S = pair[k].S;
      const int cap = S->params.response == LOOM_RESPONSE_PD ? 1 : S->params.passes;
      if (pass < cap) last += tool_pass(w, S, &pair[k].T, pair[k].reach, pass, s);
    }
  }
  for (int k = 0; k < np; k++) {
    simplex_body *S = pair[k].S;
    if (last && S->params.response != LOOM_RESPONSE_PD) {
      const int r = tool_remaining(S, &pair[k].T, pair[k].reach);
      S->scratch.tool_unresolved += r;
      w->stats.tool_unresolved += r;
    }
    if (S->params.hold && pair[k].T.still) tool_hold(S, &pair[k].T, pair[k].reach);
  }
}

LOOM_API int loom_simplex_penetrations(const loom_world *w, int body, double tol) {
  const int slot = world_slot(w, body, LOOM_KIND_SIMPLEX, "penetrations");
  if (slot < 0) return -1;
  const simplex_body *S = simplex_of(&w->bodies[slot]);
  const particles *P = &S->p;
  int count = 0;
  for (int o = 0; o < w->order_count; o++) {
    tool T;
    if (world_pair_off(w, slot, w->order[o]) || !tool_of(w, w->order[o], 0, 0, 1, &T)) continue;
    const double reach = T.radius - (tol > 0 ? tol : 0);
    if (!(reach > 0)) continue;
    for (int t = 0; t < P->nt; t++) {
      const int32_t *f = P->tri + 3 * t;
      vec3 pdv;
      double dist, bary[3];
      if (T.convex) {
        const vec3 la = q_rotate_inv(T.q, v3_sub(P->x[f[0]], T.pos)), lb = q_rotate_inv(T.q, v3_sub(P->x[f[1]], T.pos)),
                   lc = q_rotate_inv(T.q, v3_sub(P->x[f[2]], T.pos));
        count += geom_triangle_overlaps_shape(&T.shape, la, lb, lc, tol > 0 ? tol : 0);
      } else if (triangle_push(&T, P->x[f[0]], P->x[f[1]], P->x[f[2]], reach, &pdv, &dist, bary)) {
        count++;
      }
    }
  }
  return count;
}
