/* contact_cloth.c — contacts inside the implicit cloth solve (Baraff & Witkin 1998, section 5.3).
 *
 * Before a cloth's implicit substep, every free vertex that touches a rigid body, or is near
 * enough to reach it within the substep, is constrained in the solve to move along the body's
 * normal with the body, less the gap it may still close (a speculative contact, as rigid solvers
 * make them): the filtered CG then carries the contact inside the solve, so the rest of the cloth
 * knows the vertex cannot go into the body, and nothing has to be pushed out afterwards. A
 * constraint whose impulse would pull its vertex towards the body is released in the solve (the
 * cloth lifts off, or never reaches the body). A dynamic body is part of the solve: its changes
 * of linear and angular velocity are unknowns next to the cloth's, its contact vertices move with
 * it, and its momentum balance closes the system (cloth_implicit.c); after the solve it receives
 * the impulses (normal and Coulomb friction) before the rigid solver moves it in the same
 * substep. A ball in a hammock is held by the cloth's tension.
 *
 * Everything here is computed from the state at the start of the substep (positions, velocities,
 * poses), so it needs no memory of its own. The vertex pass after the step still keeps every
 * vertex outside (contact_obstacle.c). */
#include <string.h>

#include "contact/contact.h"

static inline const rigid_body *rigid_of_const(const void *r) { return (const rigid_body *)r; }

/* Index of the body in the solve's table (added on first use; -1 when the table is full). */
static int body_index(cloth_solver *sv, loom_world *w, const rigid_body *r, const step_info *s) {
  for (int k = 0; k < sv->ncbody; k++)
    if (sv->cbody_r[k] == r) return k;
  if (sv->ncbody == CLOTH_CONTACT_BODIES) return -1;
  const int k = sv->ncbody++;
  struct cloth_contact_body *cb = &sv->cbody[k];
  sv->cbody_r[k] = r;
  memset(cb, 0, sizeof *cb);
  cb->c = r->state.pos;
  if (rigid_is_dynamic(r) && !r->state.asleep) {
    /* its velocity at the end of the substep without contacts (gravity, forces), which the
     * rigid solver starts from */
    rigid_body free_motion = *r;
    rigid_integrate_velocity(w, &free_motion, s->h);
    cb->v_free = free_motion.state.vel;
    cb->w_free = free_motion.state.omega;
    cb->lin = r->params.linear && r->model.inv_mass > 0;
    cb->m = cb->lin ? 1.0 / r->model.inv_mass : 0;
    if (r->params.angular) {
      const mat3 inv_I = rigid_world_inv_inertia(r, r->state.q);
      cb->ang = m3_inverse(&inv_I, &cb->I);
    }
    if (!cb->ang) cb->I = m3_identity();
    if (!cb->lin) cb->m = 1;
    cb->movable = cb->lin || cb->ang;
  } else {
    cb->v_free = r->state.vel;
    cb->w_free = r->state.omega;
  }
  return k;
}

/* ---- sharp features of static and kinematic bodies in the solve -----------------------------------
 * A vertex kept outside a box is not enough at the box's edges and corners: the solve pulls the
 * cloth spanning an edge straight across it, and the feature pass after the solve pushed those
 * cloth elements back out by as much as they were carried past, which strained the cloth at once
 * (a sheet dropped onto a box rose to 3.5 times its starting energy; draped over it, the pushes
 * and the solve's pulls kept a corner flapping). So a cloth edge near a sharp edge of the body, and
 * a cloth triangle near a sharp corner, constrain their vertices in the solve along the feature's
 * normal, as a vertex near a face is: each may approach along it only by the element's gap, so the
 * element ends at the contact distance at most, and a constraint that pulls is released as any
 * other. It slides: the vertex nearer the feature point with the contact's kinetic friction, the
 * other without (a vertex an edge away from the feature is not held by it); held still in every
 * direction, such a vertex was flung at 13 m/s by a thickness raised 1 cm a step. */
typedef struct feat_gather {
  loom_world *w;
  cloth_body *b;
  const rigid_body *r;
  const step_info *s;
  int k; /* the body's index in the solve (-1: not taken yet, -2: the table is full) */
  double pad, skin, margin, fall, reach, mu;
  vec3 p, q, hint; /* the feature: segment p-q, or point p */
} feat_gather;

/* The element idx[0..k) with weights wt at the feature, separated from it by sep along n (unit,
 * outward): its vertices constrained when it may reach the contact distance within the substep. */
static void feature_constrain(feat_gather *g, const int32_t *idx, int k, const double *wt, vec3 n, double sep, vec3 fp) {
  cloth_body *b = g->b;
  cloth_solver *sv = &b->solver;
  const double h = g->s->h;
  vec3 ve = v3(0, 0, 0);
  for (int j = 0; j < k; j++) ve = v3_madd(ve, b->p.v[idx[j]], wt[j]);
  const double gap = sep - g->pad - g->skin;
  const double vn = v3_dot(n, v3_sub(ve, rigid_point_velocity(g->r, fp)));
  if (gap > d_max(0, -vn) * h + g->fall + g->margin) return;
  for (int j = 0; j < k; j++) {
    const int i = idx[j];
    if (b->p.inv_m[i] == 0 || !(wt[j] > 0)) continue;
    if (sv->con[i] == 3 || (sv->con[i] && !sv->con_feat[i])) continue; /* a face holds it */
    if (sv->con[i] && !(gap < sv->con_gap[i] * h)) continue;              /* a nearer feature does */
    if (g->k == -2) return;
    if (g->k < 0) {
      g->k = body_index(sv, g->w, g->r, g->s);
      if (g->k < 0) {
        g->k = -2;
        return;
      }
    }
    if (!sv->con[i]) sv->ncon++;
    sv->con[i] = 1;
    sv->con_b[i] = g->k;
    sv->con_n[i] = n;
    sv->con_gap[i] = gap > g->skin ? gap / h : 0;
    /* friction for the vertex at the feature (the larger share of the element's point), none for
     * one an edge away */
    sv->con_mu[i] = wt[j] >= 0.5 ? g->mu : 0;
    sv->con_feat[i] = 1;
  }
}

/* The feature's outward direction from its nearest point fp to the cloth point cp (d = cp - fp):
 * straight away while the cloth is beyond the contact distance or on the hint's side, else `back`;
 * *sep the separation along it. */
static vec3 feature_normal(vec3 d, double pad, vec3 hint, vec3 back, double *sep) {
  const double dist = v3_len(d);
  /* (beyond the contact distance the element is outside, whichever side of the hint: near a
   * feature's end it may lie over a face the hint turns away from) */
  if (dist >= pad || (dist > 1e-9 * pad && v3_dot(d, hint) >= 0)) {
    *sep = dist;
    return v3_scale(d, 1.0 / dist);
  }
  *sep = v3_dot(d, back);
  return back;
}

static int feature_edges_cb(int t, void *ud) {
  feat_gather *g = ud;
  const cloth_body *b = g->b;
  for (int m = 0; m < 3; m++) {
    const int e = b->model.tri_edge[3 * t + m];
    if (b->model.edge_owner[e] != t) continue; /* each cloth edge once */
    const int32_t idx[2] = {b->model.edge[2 * e], b->model.edge[2 * e + 1]};
    const vec3 x0 = b->p.x[idx[0]], x1 = b->p.x[idx[1]];
    double sa, u;
    const double d2 = geom_segment_segment(x0, x1, g->p, g->q, &sa, &u);
    if (!(d2 < (g->pad + g->reach) * (g->pad + g->reach))) continue;
    const vec3 cp = v3_lerp(x0, x1, sa), fp = v3_lerp(g->p, g->q, u);
    vec3 back = g->hint;
    const vec3 cr = v3_cross(v3_sub(x1, x0), v3_sub(g->q, g->p));
    const double lc = v3_len(cr), le = v3_len(v3_sub(x1, x0)) * v3_len(v3_sub(g->q, g->p));
    if (lc > 0.1 * le) back = v3_scale(cr, (v3_dot(cr, g->hint) >= 0 ? 1.0 : -1.0) / lc);
    double sep;
    const vec3 n = feature_normal(v3_sub(cp, fp), g->pad, g->hint, back, &sep);
    const double wt[2] = {1 - sa, sa};
    feature_constrain(g, idx, 2, wt, n, sep, fp);
  }
  return 0;
}

static int feature_point_cb(int t, void *ud) {
  feat_gather *g = ud;
  const cloth_body *b = g->b;
  const int32_t *tv = &b->p.tri[3 * t];
  const vec3 a = b->p.x[tv[0]], bb = b->p.x[tv[1]], cc = b->p.x[tv[2]];
  double wt[3];
  const vec3 cp = geom_closest_on_triangle(g->p, a, bb, cc, wt);
  const vec3 d = v3_sub(cp, g->p);
  if (!(v3_len2(d) < (g->pad + g->reach) * (g->pad + g->reach))) return 0;
  const vec3 nt = v3_normalize(v3_cross(v3_sub(bb, a), v3_sub(cc, a)));
  if (v3_len2(nt) == 0) return 0;
  double sep;
  const vec3 n = feature_normal(d, g->pad, g->hint, v3_dot(nt, g->hint) >= 0 ? nt : v3_neg(nt), &sep);
  feature_constrain(g, tv, 3, wt, n, sep, g->p);
  return 0;
}

/* The cloth elements near the hard features of a static or kinematic body r: faces turning by more
 * than 60 degrees (the mild edges and smooth-region vertices of a finely tessellated mesh, whose
 * normals lie far from the surface's, held a frictionless cloth on a rippled ball). A dynamic
 * body's contacts act at the cloth's vertices only: its momentum balance in the solve would be
 * given impulses at vertices away from where the feature touches. */
static void feature_constraints(loom_world *w, cloth_body *b, const rigid_body *r, const step_info *s, int *k,
                                double pad, double skin, double margin, double fall, double reach, double mu) {
  if (rigid_is_dynamic(r) || !(r->model.nfeat_pt || r->model.nfeat_seg)) return;
  feat_gather g = {w, b, r, s, *k, pad, skin, margin, fall, reach, mu, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
  int refit = 0;
  const double e = pad + reach;
  const vec3 ev = v3(e, e, e);
  vec3 blo, bhi;
  particles_box(&b->p, &blo, &bhi);
  for (int i = 0; i < r->model.nfeat_seg && g.k != -2; i++) {
    if (r->model.feat_seg_r[i] > 0 || !r->model.feat_seg_hard[i]) continue; /* (rounded or mild) */
    g.p = v3_add(r->state.pos, q_rotate(r->state.q, r->model.feat_seg[2 * i]));
    g.q = v3_add(r->state.pos, q_rotate(r->state.q, r->model.feat_seg[2 * i + 1]));
    if (!bvh_box_overlap(v3_sub(v3_min(g.p, g.q), ev), v3_add(v3_max(g.p, g.q), ev), blo, bhi)) continue;
    if (!refit) {
      cloth_refit_tree(b);
      refit = 1;
    }
    g.hint = q_rotate(r->state.q, r->model.feat_seg_n[i]);
    contact_query_segment_padded(&b->cache.tri_tree, g.p, g.q, e, feature_edges_cb, &g);
  }
  for (int i = 0; i < r->model.nfeat_pt && g.k != -2; i++) {
    if (r->model.feat_pt_r[i] > 0 || !r->model.feat_pt_hard[i]) continue;
    g.p = v3_add(r->state.pos, q_rotate(r->state.q, r->model.feat_pt[i]));
    if (!bvh_box_overlap(v3_sub(g.p, ev), v3_add(g.p, ev), blo, bhi)) continue;
    if (!refit) {
      cloth_refit_tree(b);
      refit = 1;
    }
    g.hint = q_rotate(r->state.q, r->model.feat_pt_n[i]);
    bvh_query_box(&b->cache.tri_tree, v3_sub(g.p, ev), v3_add(g.p, ev), feature_point_cb, &g);
  }
  *k = g.k == -2 ? -1 : g.k;
}

/* ---- a cloth's own contacts in the solve -----------------------------------------------------------
 * The collision pipeline runs after the solve, on its answer: where a cloth's layers press on each
 * other (a pile), the solve moved vertices into the layer they rest on, the pipeline's impulses
 * took them back, and each step repeated it; the corrections left strain the solve never saw, and
 * a settled pile gathered elastic energy no motion gave it (crumple at 64² held 0.8-2.7 J with up
 * to a hundred CCD collisions a step). So a vertex that was the point of a point-triangle pair
 * within the thickness in a pipeline run keeps that triangle (the nearest, particles.pc_*) while it
 * stays over it and within half a thickness beyond the contact distance; while the two are at rest
 * relative to each other, at most a tenth of the thickness inside the contact distance, and the
 * triangle is its own cloth's, it is constrained in the solve as at an obstacle's face: along the
 * triangle's normal it may approach only by the gap beyond the thickness, it slides without
 * friction (the pipeline's friction follows), and the constraint is released when it pulls. The
 * vertex and the triangle are a pair in the solve: their relative normal velocity is what is held,
 * so they meet at a common velocity and each takes the other's opposite impulse (cloth_implicit.c,
 * "a cloth's own contacts as pairs"). */
/* A held pair of vertex i and the point with weights w of its own cloth's triangle tri, the
 * normal nn from the triangle to the vertex, Coulomb's mu. */
static void add_held(cloth_solver *sv, vec3 nn, double gap, double thick, double mu, double h, int i, const int32_t *tri,
                     const double *w) {
  if (sv->nheld >= sv->held_cap) return;
  cloth_held_pair *q = &sv->held[sv->nheld++];
  q->v[0] = i;
  q->c[0] = 1;
  for (int k = 0; k < 3; k++) {
    q->v[k + 1] = tri[k];
    q->c[k + 1] = -w[k];
  }
  q->n = nn;
  q->gap = gap > 0 ? gap / h : 0;
  q->mu = mu;
  q->touch = gap <= 1e-3 * thick; /* (as touching as a pair between two cloths) */
  q->on = 0;
}

static int particle_index(cloth_solver *sv, const particles *o) {
  for (int k = 0; k < sv->ncbody; k++)
    if (sv->cbody_r[k] == (const void *)o) return k;
  if (sv->ncbody == CLOTH_CONTACT_BODIES) return -1;
  const int k = sv->ncbody++;
  sv->cbody_r[k] = o;
  memset(&sv->cbody[k], 0, sizeof sv->cbody[k]); /* not movable: the velocities are con_v's */
  sv->cbody[k].pts = 1;
  return k;
}

/* A point x near the triangle t[1..3] of particles o (at o->x_sub) that a note of p's (normal
 * hint) keeps: the weights of its projection on the triangle's plane (bc; slightly outside, down
 * to tol, pulled onto it), the unit normal from the triangle towards it on the hint's side (nn),
 * the triangle point's velocity (vo), its distance along nn and the pair's thickness. 0 when it no
 * longer lies over the triangle or within half a thickness beyond the contact distance. */
static int note_geometry(vec3 x, vec3 hint, const particles *p, const particles *o, const int32_t *t, double tol,
                         double bc[3], vec3 *nn, vec3 *vo, double *dist, double *thick) {
  const vec3 *ox = o->x_sub;
  const vec3 a = ox[t[1]], e1 = v3_sub(ox[t[2]], a), e2 = v3_sub(ox[t[3]], a), r = v3_sub(x, a);
  const double d00 = v3_dot(e1, e1), d01 = v3_dot(e1, e2), d11 = v3_dot(e2, e2);
  const double d20 = v3_dot(r, e1), d21 = v3_dot(r, e2), den = d00 * d11 - d01 * d01;
  vec3 c = v3_cross(e1, e2);
  const double ln = v3_len(c);
  if (!(den > 0 && ln > 0)) return 0;
  bc[1] = (d11 * d20 - d01 * d21) / den;
  bc[2] = (d00 * d21 - d01 * d20) / den;
  bc[0] = 1 - bc[1] - bc[2];
  if (!(bc[0] >= tol && bc[1] >= tol && bc[2] >= tol)) return 0;
  if (!(bc[0] >= 0 && bc[1] >= 0 && bc[2] >= 0)) {
    for (int q = 0; q < 3; q++) bc[q] = d_max(bc[q], 0);
    const double sum = bc[0] + bc[1] + bc[2];
    for (int q = 0; q < 3; q++) bc[q] /= sum;
  }
  *nn = v3_scale(c, (v3_dot(c, hint) >= 0 ? 1 : -1) / ln);
  vec3 xo = v3(0, 0, 0), v = v3(0, 0, 0);
  for (int q = 0; q < 3; q++) {
    xo = v3_madd(xo, ox[t[q + 1]], bc[q]);
    v = v3_madd(v, o->v[t[q + 1]], bc[q]);
  }
  *vo = v;
  *thick = 0.5 * (particles_thickness(p) + particles_thickness(o));
  *dist = v3_dot(*nn, v3_sub(x, xo));
  return v3_isfinite(v) && isfinite(*dist) && *dist > 0 && *dist - *thick < 0.5 * *thick;
}

static void particle_constraints(loom_world *w, int slot, cloth_body *b, const step_info *s) {
  cloth_solver *sv = &b->solver;
  particles *p = &b->p;
  if (!p->pc_n) return;
  const double h = s->h, fall = v3_len(w->gravity) * h * h;
  for (int i = 0; i < p->n; i++) {
    if (!(v3_len2(p->pc_n[i]) > 0)) continue;
    const int32_t *t = &p->pc_tri[4 * i];
    const particles *o = t[0] >= 0 && t[0] < w->body_slots ? w->bodies[t[0]].pts : NULL;
    int keep = o && !o->frozen && o->x_sub;
    for (int q = 1; q <= 3 && keep; q++) keep = t[q] >= 0 && t[q] < o->n;
    /* the point as it lies over the triangle now (the triangle where the substep started: a
     * cloth earlier in the order has been solved already, and its velocity is then the one it
     * ends the substep with); over an edge or a vertex of another cloth's triangle to rounding it
     * stays (a point exactly over a shared edge, as on two aligned grids, was let go by one
     * triangle and noted by the other in turn, and fell in the solves between) */
    double bc[3], dist = 0, thick = 0;
    vec3 nn, vo;
    keep = keep && note_geometry(p->x[i], p->pc_n[i], p, o, t, t[0] == slot ? 0 : -1e-9, bc, &nn, &vo, &dist, &thick);
    const double gap = dist - thick;
    if (!keep) { /* gone from over the triangle, or from near it: the pipeline notes another */
      p->pc_n[i] = v3(0, 0, 0);
      continue;
    }
    p->pc_dist[i] = dist; /* (a nearer pair of the pipeline's replaces it) */
    p->pc_n[i] = nn;
    /* (another cloth's triangle takes the opposite impulse in its own solve of the substep, or in
     * a second one when it was solved first, contact_constraints_react; other particle bodies have
     * no solve that would take it) */
    if (p->inv_m[i] == 0 || (t[0] != slot && w->bodies[t[0]].ops->id != LOOM_KIND_CLOTH)) continue;
    const double vn = v3_dot(nn, v3_sub(p->v[i], vo));
    /* (a pair closing or parting faster than a tenth of the thickness per substep is the
     * pipeline's: the triangle's velocity at the substep's start says little of its end; so is
     * one deeper than a tenth of the thickness: a thickness raised 1 cm a step, held so, flung a
     * vertex at 17 m/s through the opposite impulses) */
    if (fabs(vn) > 0.1 * thick / h || gap < -0.1 * thick) continue;
    if (gap > d_max(0, -vn) * h + fall + 0.1 * thick) continue;
    if (sv->con[i]) {
      /* held by an obstacle already: on its own cloth's triangle a held pair (cloth_implicit.c,
       * "held pairs"); on another cloth's the pipeline alone keeps them apart */
      if (t[0] == slot) add_held(sv, nn, gap, thick, b->params.self_friction, h, i, &t[1], bc);
      continue;
    }
    const int k = particle_index(sv, o);
    if (k < 0) continue;
    /* another cloth's triangle: touching (within a thousandth of the thickness: that cloth moves
     * in its own solve, and resting gaps wander by a few tenths of a micrometre) with friction,
     * the vertex starts sticking (cloth_implicit_substep), and along the surface it then moves
     * with the triangle's point. Its own cloth's triangle: a pair in the solve with the cloth's
     * self_friction, sticking when it touches (cloth_implicit.c, "a cloth's own contacts as pairs") */
    const int other = t[0] != slot;
    sv->ncon++;
    sv->con[i] = 1;
    sv->con_feat[i] = !other && gap > 1e-3 * thick; /* (never starts sticking: not touching) */
    sv->con_b[i] = k;
    sv->con_n[i] = nn;
    sv->con_gap[i] = gap > (other ? 1e-3 * thick : 0) ? gap / h : 0;
    sv->con_mu[i] = other ? sqrt(p->friction * o->friction) : b->params.self_friction;
    /* along the normal it may follow a receding triangle, and is not carried along by one that
     * comes closer (the pipeline's impulses push it then): carried, each layer of a pile took on
     * the parting speed of the one under it, and the pile never came to rest */
    sv->con_v[i] = v3_scale(nn, d_min(v3_dot(nn, vo), 0) - sv->con_gap[i]);
    if (other) sv->con_v[i] = v3_add(sv->con_v[i], v3_madd(vo, nn, -v3_dot(nn, vo)));
    sv->con_j[i] = v3(0, 0, 0);
    for (int q = 0; q < 3; q++) {
      sv->con_tri[3 * i + q] = t[q + 1];
      sv->con_w[3 * i + q] = bc[q];
    }
    sv->con_lam[i] = 0;
  }
}

/* The impulses other cloths' constraints gave the vertices (pc_push) as velocity changes, and
 * the positions moved by h times them (h = 0: before the integrator, which moves them itself);
 * the pushes cleared. */
static void take_pushes(particles *p, double h) {
  p->pc_pushed = 0;
  for (int i = 0; i < p->n && !p->frozen; i++) {
    if (!(p->inv_m[i] > 0)) continue;
    const vec3 dv = v3_scale(p->pc_push[i], p->inv_m[i]);
    p->v[i] = v3_add(p->v[i], dv);
    if (h > 0) p->x[i] = v3_madd(p->x[i], dv, h);
  }
  memset(p->pc_push, 0, sizeof(vec3) * (size_t)p->n);
}

void contact_pushed_again(loom_world *w, int slot, const step_info *s) {
  particles *p = w->bodies[slot].pts;
  if (!p || !p->pc_pushed) return;
  if (!p->frozen && cloth_implicit_again(cloth_of(&w->bodies[slot]), p->pc_push, s->h)) {
    p->pc_pushed = 0;
    memset(p->pc_push, 0, sizeof(vec3) * (size_t)p->n);
  } else {
    take_pushes(p, s->h); /* (an explicit cloth, or one that cannot solve again: cloth_implicit_again) */
  }
}

void contact_constraints_gather(loom_world *w, int slot, const step_info *s) {
  body_slot *bs = &w->bodies[slot];
  if (bs->ops->id != LOOM_KIND_CLOTH) return;
  cloth_body *b = cloth_of(bs);
  cloth_solver *sv = &b->solver;
  sv->ncon = 0;
  sv->ncbody = 0;
  sv->nheld = 0;
  /* (an explicit cloth later in the order than the cloths that pushed it: before its integrator;
   * the implicit solve takes them itself) */
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT && b->p.pc_pushed) take_pushes(&b->p, 0);
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT || b->p.frozen || !sv->con) return;
  const int n = b->p.n;
  const vec3 *x = b->p.x, *v = b->p.v;
  const double h = s->h;
  memset(sv->con, 0, (size_t)n);
  memset(sv->con_feat, 0, (size_t)n);
  /* how far a vertex can travel in the substep, at most: its speed now and what gravity and a
   * margin add */
  double vmax = 0;
  vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < n; i++) {
    vmax = d_max(vmax, v3_len2(v[i]));
    lo = v3_min(lo, x[i]);
    hi = v3_max(hi, x[i]);
  }
  vmax = sqrt(vmax);
  const double fall = v3_len(w->gravity) * h * h; /* what gravity adds to a gap's closing in h */
  for (int o = 0; o < w->order_count; o++) {
    const int rs = w->order[o];
    if (w->bodies[rs].ops->id != LOOM_KIND_RIGID) continue;
    const rigid_body *r = rigid_of_slot(&w->bodies[rs]);
    const pair_override *po = world_pair_override(w, slot, rs);
    if (po && !po->collide) continue;
    const double pad0 = particles_thickness(&b->p) + r->params.thickness;
    /* on a rounded body the vertices keep the sag of the triangles between them clear too, so
     * that the feature pass after the step finds the cloth already outside */
    double side = 0; /* (beside a cylinder's side only, local |z| < half height) */
    const double pad = pad0 + contact_rounded_clearance(b, r, pad0, &side);
    const double margin = 0.1 * pad0; /* contacts this close are kept, to see whether they push */
    /* the solve puts a landing vertex this far beyond the contact distance, clear of the rounding
     * of the vertex pass after it (which would otherwise catch some vertices of a landing sheet
     * and not others, and leave it strained), and a vertex within twice this counts as touching */
    const double skin = CONTACT_SKIN * pad0;
    const double reach = (vmax + v3_len(r->state.vel)) * h + fall + margin;
    vec3 rlo, rhi;
    rigid_swept_aabb(r, pad + side + reach, &rlo, &rhi);
    if (!bvh_box_overlap(rlo, rhi, lo, hi)) continue;
    int k = -1;
    const double mu = sqrt(b->p.friction * r->params.friction);
    for (int i = 0; i < n; i++) {
      if (b->p.inv_m[i] == 0) continue;
      const vec3 p = x[i];
      if (p.x < rlo.x || p.x > rhi.x || p.y < rlo.y || p.y > rhi.y || p.z < rlo.z || p.z > rhi.z) continue;
      vec3 nn;
      const vec3 pl = q_rotate_inv(r->state.q, v3_sub(p, r->state.pos));
      const double d = rigid_local_distance_q(r, pl, &nn, &w->oquery);
      nn = q_rotate(r->state.q, nn);
      if (!(fabs(v3_len2(nn) - 1) < 1e-6) || !isfinite(d)) continue;
      const double gap = d - pad - (side > 0 && fabs(pl.z) < r->model.shape.half_h ? side : 0) - skin;
      /* the vertex's approach towards the body at the start, and what the substep adds */
      const double vn = v3_dot(nn, v3_sub(v[i], rigid_point_velocity(r, p)));
      if (gap > d_max(0, -vn) * h + fall + margin) continue;
      if (sv->con[i] == 1 && gap <= margin && sv->con_gap[i] * h <= margin && v3_dot(nn, sv->con_n[i]) < -0.5) {
        /* touching two bodies on opposite sides: pressed between them when one of them moves in
         * the solve and the other does not (a plate on a tablecloth on a table) */
        if (k < 0) k = body_index(sv, w, r, s);
        if (k < 0) break;
        const int k1 = sv->con_b[i];
        if (sv->cbody[k].movable != sv->cbody[k1].movable) {
          if (sv->cbody[k].movable) {
            sv->con_b2[i] = k1; /* the normal and gap stay the immovable one's */
            sv->con_b[i] = k;
          } else {
            sv->con_b2[i] = k;
            sv->con_n[i] = nn;
            sv->con_gap[i] = gap > skin ? gap / h : 0;
          }
          sv->con[i] = 3;
          sv->con_feat[i] = 0;
          sv->con_mu[i] = sqrt(b->p.friction * rigid_of_const(sv->cbody_r[sv->con_b[i]])->params.friction);
          continue;
        }
      }
      if (sv->con[i] == 3) continue;                                /* pressed stays pressed */
      if (sv->con[i] && !(gap < sv->con_gap[i] * h)) continue; /* the nearer body */
      if (k < 0) k = body_index(sv, w, r, s);
      if (k < 0) break; /* more bodies than the solve takes: the vertex pass alone */
      if (!sv->con[i]) sv->ncon++;
      sv->con[i] = 1;
      sv->con_feat[i] = 0;
      sv->con_b[i] = k;
      sv->con_n[i] = nn;
      sv->con_gap[i] = gap > skin ? gap / h : 0; /* the speed at which it may still approach */
      sv->con_mu[i] = mu;
    }
    feature_constraints(w, b, r, s, &k, pad0, skin, margin, fall, reach, mu);
  }
  /* a pressed vertex carries its share of the upper body's weight (the component of gravity into
   * the lower body, over the substep): what bounds its friction with the upper body */
  int pressed[CLOTH_CONTACT_BODIES] = {0};
  for (int i = 0; i < n; i++)
    if (sv->con[i] == 3) pressed[sv->con_b[i]]++;
  for (int i = 0; i < n; i++) {
    if (!sv->con[i]) continue;
    const struct cloth_contact_body *cb = &sv->cbody[sv->con_b[i]];
    const vec3 nn = sv->con_n[i];
    const vec3 vb = v3_add(cb->v_free, v3_cross(cb->w_free, v3_sub(x[i], cb->c)));
    if (sv->con[i] == 3) {
      const struct cloth_contact_body *lower = &sv->cbody[sv->con_b2[i]];
      const vec3 vl = v3_add(lower->v_free, v3_cross(lower->w_free, v3_sub(x[i], lower->c)));
      /* normal: the lower body's less the gap; tangential: the upper body's */
      sv->con_v[i] = v3_add(v3_scale(nn, v3_dot(nn, vl) - sv->con_gap[i]), v3_madd(vb, nn, -v3_dot(vb, nn)));
      const rigid_body *upper = rigid_of_const(sv->cbody_r[sv->con_b[i]]);
      sv->con_load[i] = d_max(0, -v3_dot(w->gravity, nn)) * upper->params.gravity_scale * cb->m * h / pressed[sv->con_b[i]];
      ((rigid_body *)upper)->cloth_under = 1;
      ((rigid_body *)upper)->cloth_gap = d_max(upper->cloth_gap, 2 * particles_thickness(&b->p));
    } else {
      sv->con_v[i] = v3_madd(vb, nn, -sv->con_gap[i]);
    }
    sv->con_j[i] = v3(0, 0, 0);
  }
  particle_constraints(w, slot, b, s);
}

void contact_constraints_react(loom_world *w, int slot, const step_info *s) {
  body_slot *bs = &w->bodies[slot];
  if (bs->ops->id != LOOM_KIND_CLOTH) return;
  cloth_body *b = cloth_of(bs);
  cloth_solver *sv = &b->solver;
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT || b->p.frozen || !sv->con || !sv->ncon) return;
  /* the opposite of the impulses the contacts gave the cloth (the solve's du, dw to its tolerance) */
  vec3 P[CLOTH_CONTACT_BODIES], L[CLOTH_CONTACT_BODIES];
  for (int k = 0; k < sv->ncbody; k++) P[k] = L[k] = v3(0, 0, 0);
  for (int i = 0; i < b->p.n; i++) {
    if (!sv->con[i] || sv->cbody_r[sv->con_b[i]] == (const void *)&b->p) continue;
    const int k = sv->con_b[i];
    const vec3 J = v3_neg(sv->con_j[i]);
    /* (a vertex on another cloth is not flagged as held by an obstacle: between cloths momentum
     * is kept, cloth_step.c) */
    if (!sv->cbody[k].pts) b->p.contact[i] |= 1; /* the vertex touched the body (its constraint pushed) */
    if (!v3_isfinite(J)) continue;
    if (sv->cbody[k].pts) {
      /* another cloth's triangle: the opposite impulse, by the weights of the point on it, for
       * that cloth's solve (a second one when it was solved first: contact_pushed_again) */
      particles *o = (particles *)sv->cbody_r[k];
      if (!o->pc_push) continue;
      for (int q = 0; q < 3; q++) {
        const int t = sv->con_tri[3 * i + q];
        o->pc_push[t] = v3_madd(o->pc_push[t], J, sv->con_w[3 * i + q]);
      }
      o->pc_pushed = 1;
      continue;
    }
    P[k] = v3_add(P[k], J);
    L[k] = v3_add(L[k], v3_cross(v3_sub(b->p.x_sub[i], sv->cbody[k].c), J));
  }
  for (int k = 0; k < sv->ncbody; k++) {
    if (!sv->cbody[k].movable || (v3_len2(P[k]) == 0 && v3_len2(L[k]) == 0)) continue;
    rigid_body *r = (rigid_body *)sv->cbody_r[k];
    /* a force over the substep (the rigid solver spreads it over its inner steps like gravity, so a
     * ball resting in cloth has zero velocity, not the offset of an impulse given at the start) */
    if (r->params.linear) r->cloth_force = v3_madd(r->cloth_force, P[k], 1.0 / s->h);
    if (r->params.angular) r->cloth_torque = v3_madd(r->cloth_torque, L[k], 1.0 / s->h);
    r->state.asleep = 0;
    r->state.sleep_time = 0;
    /* its free motion over the substep changed: predicted again for the broad phase */
    for (int o = 0; o < w->order_count; o++) {
      body_slot *rb = &w->bodies[w->order[o]];
      if (rb->ops->id == LOOM_KIND_RIGID && rigid_of_slot(rb) == r) {
        rb->ops->predict(w, rb, s);
        break;
      }
    }
  }
}
