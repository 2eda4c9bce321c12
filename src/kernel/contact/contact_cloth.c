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

void contact_constraints_gather(loom_world *w, int slot, const step_info *s) {
  body_slot *bs = &w->bodies[slot];
  if (bs->ops->id != LOOM_KIND_CLOTH) return;
  cloth_body *b = cloth_of(bs);
  cloth_solver *sv = &b->solver;
  sv->ncon = 0;
  sv->ncbody = 0;
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT || b->p.frozen || !sv->con) return;
  const int n = b->p.n;
  const vec3 *x = b->p.x, *v = b->p.v;
  const double h = s->h;
  memset(sv->con, 0, (size_t)n);
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
      sv->con_b[i] = k;
      sv->con_n[i] = nn;
      sv->con_gap[i] = gap > skin ? gap / h : 0; /* the speed at which it may still approach */
      sv->con_mu[i] = mu;
    }
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
    if (!sv->con[i]) continue;
    b->p.contact[i] |= 1; /* the vertex touched the body (its constraint pushed) */
    const vec3 J = v3_neg(sv->con_j[i]);
    if (!v3_isfinite(J)) continue;
    const int k = sv->con_b[i];
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
