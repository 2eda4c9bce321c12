/* rigid_kind.c — the rigid kind's table: parameters, state fields, and its part of the step.
 * Static and kinematic bodies do not integrate: begin derives a kinematic body's velocity from its
 * target, the contact phases read the pose at any fraction of the step, commit lands on the target.
 * A dynamic body predicts its free motion over each substep (the broad phase's box); the rigid
 * contact solver (contact/contact_rigid.c) then integrates it with its contacts, and the pose pair
 * (pos0 -> target) spans that substep for the other families. */
#include <stddef.h>
#include <string.h>

#include "rigid/rigid.h"

static const param_spec rigid_param_table[] = {
  {"friction", "", "Coulomb coefficient; a contact with cloth uses sqrt(cloth's x this one's)", 0, 10, PARAM_LIVE,
   offsetof(rigid_body, params.friction)},
  {"restitution", "", "fraction of the normal approach speed returned in a collision", 0, 1, PARAM_LIVE,
   offsetof(rigid_body, params.restitution)},
  {"thickness", "m", "extra skin added to the other body's own thickness", 0, 1, PARAM_LIVE,
   offsetof(rigid_body, params.thickness)},
  {"linear", "", "dynamic bodies: 1 translation enabled, 0 the body does not translate", 0, 1, PARAM_LIVE | PARAM_INTEGER,
   offsetof(rigid_body, params.linear)},
  {"angular", "", "dynamic bodies: 1 rotation enabled, 0 the body does not rotate", 0, 1, PARAM_LIVE | PARAM_INTEGER,
   offsetof(rigid_body, params.angular)},
  {"linear_damping", "1/s", "dynamic bodies: v /= 1 + h c each step", 0, 1e3, PARAM_LIVE,
   offsetof(rigid_body, params.linear_damping)},
  {"angular_damping", "1/s", "dynamic bodies: omega /= 1 + h c each step", 0, 1e3, PARAM_LIVE,
   offsetof(rigid_body, params.angular_damping)},
  {"gravity_scale", "", "dynamic bodies: multiplies the world's gravity", -1e3, 1e3, PARAM_LIVE,
   offsetof(rigid_body, params.gravity_scale)},
  {"rolling", "m", "rolling resistance: a contact resists the relative roll with a torque up to this "
   "lever x its normal force (the larger of the two bodies')", 0, 1, PARAM_LIVE, offsetof(rigid_body, params.rolling)},
  {"torsion", "m", "torsional friction: a contact resists the relative spin about its normal with a torque up to "
   "this lever x its normal force", 0, 1, PARAM_LIVE, offsetof(rigid_body, params.torsion)},
  {"layers", "", "bit mask of the collision layers the body is in (rigid pairs)", 0, 2147483647,
   PARAM_LIVE | PARAM_INTEGER, offsetof(rigid_body, params.layers)},
  {"mask", "", "bit mask of the layers the body collides with; two bodies touch when each one's "
   "layers meet the other's mask", 0, 2147483647, PARAM_LIVE | PARAM_INTEGER, offsetof(rigid_body, params.mask)},
  {"mass", "kg", "the body's mass (from mass or density and the shape)", 0, 0, PARAM_READONLY,
   offsetof(rigid_body, model.mass)},
};

static const state_field rigid_state_fields[] = {
  {"pos", offsetof(rigid_body, state.pos), sizeof(vec3), 0},
  {"q", offsetof(rigid_body, state.q), sizeof(quat), 0},
  {"vel", offsetof(rigid_body, state.vel), sizeof(vec3), 0},
  {"omega", offsetof(rigid_body, state.omega), sizeof(vec3), 0},
  {"target_pos", offsetof(rigid_body, state.target_pos), sizeof(vec3), 0},
  {"target_q", offsetof(rigid_body, state.target_q), sizeof(quat), 0},
  {"has_target", offsetof(rigid_body, state.has_target), sizeof(int), 0},
  {"force", offsetof(rigid_body, state.force), sizeof(vec3), 0},
  {"torque", offsetof(rigid_body, state.torque), sizeof(vec3), 0},
  {"sleep_time", offsetof(rigid_body, state.sleep_time), sizeof(double), 0},
  {"asleep", offsetof(rigid_body, state.asleep), sizeof(int), 0},
};

static int rigid_check_param(const body_slot *b, const param_spec *p, double value) {
  const rigid_body *r = rigid_of_slot(b);
  if ((!strcmp(p->name, "linear") || !strcmp(p->name, "angular")) && !rigid_is_dynamic(r) && value != 1)
    return loom_fail("rigid '%s': '%s' applies to dynamic bodies; a %s body never moves by itself", b->name, p->name,
                     r->params.motion == LOOM_STATIC ? "static" : "kinematic");
  return 0;
}

static void rigid_param_changed(loom_world *w, body_slot *b, const param_spec *p) {
  (void)w;
  rigid_body *r = rigid_of_slot(b);
  if (!p || !rigid_is_dynamic(r)) return;
  if (!r->params.linear) r->state.vel = v3(0, 0, 0);
  if (!r->params.angular) r->state.omega = v3(0, 0, 0);
  r->state.asleep = 0;
  r->state.sleep_time = 0;
}

static uint64_t rigid_model_hash(const body_slot *b, uint64_t h) {
  const rigid_body *r = rigid_of_slot(b);
  h = core_fnv1a(h, &r->model.shape_type, sizeof r->model.shape_type);
  h = core_fnv1a(h, &r->params.motion, sizeof r->params.motion);
  h = core_fnv1a(h, &r->model.shape.radius, sizeof r->model.shape.radius);
  h = core_fnv1a(h, &r->model.shape.half, sizeof r->model.shape.half);
  h = core_fnv1a(h, &r->model.shape.half_h, sizeof r->model.shape.half_h);
  if (r->model.mesh) {
    h = core_fnv1a(h, r->model.mesh->v, sizeof(vec3) * (size_t)r->model.mesh->nv);
    h = core_fnv1a(h, r->model.mesh->tri, sizeof(int32_t) * 3 * (size_t)r->model.mesh->nt);
  }
  return h;
}

int rigid_slot_same_shape(const body_slot *a, const body_slot *b) {
  const rigid_body *x = rigid_of_slot((body_slot *)a), *y = rigid_of_slot((body_slot *)b);
  return x->model.shape_type == y->model.shape_type && x->params.motion == y->params.motion;
}

/* A static obstacle is where the file puts it; a kinematic one continues its motion. */
static int rigid_transplant(body_slot *dst, const body_slot *src) {
  rigid_body *a = rigid_of_slot(dst);
  const rigid_body *b = rigid_of_slot(src);
  if (rigid_is_dynamic(a) && rigid_is_dynamic(b) && a->model.shape_type == b->model.shape_type) {
    /* a dynamic body carries its motion (the state copy did); forces of the old world are gone */
    a->state.force = a->state.torque = v3(0, 0, 0);
    a->state.pos0 = a->state.target_pos = a->state.pos;
    a->state.q0 = a->state.target_q = a->state.q;
    return 1;
  }
  if (a->params.motion != LOOM_KINEMATIC || b->params.motion != LOOM_KINEMATIC ||
      a->model.shape_type != b->model.shape_type)
    return 0;
  a->state.pos = a->state.pos0 = a->state.target_pos = b->state.pos;
  a->state.q = a->state.q0 = a->state.target_q = b->state.q;
  a->state.vel = b->state.vel;
  a->state.omega = b->state.omega;
  a->state.has_target = 0;
  return 1;
}

static int rigid_substeps(loom_world *w, body_slot *b, double dt) {
  (void)w, (void)b, (void)dt;
  return 1;
}

static void rigid_begin(loom_world *w, body_slot *b, const step_info *s) {
  (void)w;
  rigid_body *r = rigid_of_slot(b);
  r->state.pos0 = r->state.pos;
  r->state.q0 = r->state.q;
  r->solver_index = -1;
  if (rigid_is_dynamic(r)) {
    r->state.target_pos = r->state.pos;
    r->state.target_q = r->state.q;
    r->state.has_target = 0;
    r->state.span0 = 0;
    r->state.span1 = 1;
    return;
  }
  r->state.span0 = 0;
  r->state.span1 = 1;
  if (r->state.has_target && r->params.motion == LOOM_KINEMATIC) {
    r->state.vel = v3_scale(v3_sub(r->state.target_pos, r->state.pos0), 1.0 / s->dt);
    r->state.omega = q_angular_velocity(r->state.q0, r->state.target_q, s->dt);
  } else {
    r->state.target_pos = r->state.pos;
    r->state.target_q = r->state.q;
    r->state.vel = v3(0, 0, 0);
    r->state.omega = v3(0, 0, 0);
  }
}

/* A dynamic body's free motion over the substep, as far as the broad phase needs it: the pose it
 * would reach without contacts (its state is left at the substep's start for the solver). */
static void rigid_predict(loom_world *w, body_slot *b, const step_info *s) {
  rigid_body *r = rigid_of_slot(b);
  if (!rigid_is_dynamic(r)) return;
  r->state.pos0 = r->state.pos;
  r->state.q0 = r->state.q;
  r->state.span0 = s->a0;
  r->state.span1 = s->a1;
  if (r->state.asleep) {
    r->state.target_pos = r->state.pos;
    r->state.target_q = r->state.q;
    return;
  }
  rigid_body tmp = *r;
  rigid_integrate_velocity(w, &tmp, s->h);
  rigid_integrate_pose(&tmp, s->h);
  r->state.target_pos = tmp.state.pos;
  r->state.target_q = tmp.state.q;
}

static void rigid_commit(loom_world *w, body_slot *b, const step_info *s) {
  (void)s;
  rigid_body *r = rigid_of_slot(b);
  if (rigid_is_dynamic(r)) {
    rigid_state *st = &r->state;
    const int bad = !v3_isfinite(st->pos) || !v3_isfinite(st->vel) || !v3_isfinite(st->omega) || !isfinite(q_norm(st->q)) ||
                    v3_len(st->vel) > SOFT_MAX_SPEED || v3_len(st->pos) > SOFT_MAX_COORD ||
                    v3_len(st->omega) > SOFT_MAX_SPEED;
    if (bad) { /* the divergence guard: back to the last good pose, at rest, with a message */
      world_message(w, LOOM_ERROR, (int)(b - w->bodies),
                    "rigid '%s' diverged at t = %.4f s (speed %g m/s, spin %g rad/s at (%g, %g, %g)); put back where "
                    "the substep started and stopped — look for huge forces or impulses, or a mass far smaller than "
                    "what it touches",
                    b->name, w->time, v3_len(st->vel), v3_len(st->omega), st->pos.x, st->pos.y, st->pos.z);
      st->pos = v3_isfinite(st->pos0) ? st->pos0 : v3(0, 0, 0);
      st->q = isfinite(q_norm(st->q0)) ? st->q0 : q_identity();
      st->vel = st->omega = v3(0, 0, 0);
    }
    r->state.force = r->state.torque = v3(0, 0, 0);
    r->state.pos0 = r->state.target_pos = r->state.pos;
    r->state.q0 = r->state.target_q = r->state.q;
    r->state.span0 = 0;
    r->state.span1 = 1;
    return;
  }
  r->state.pos = r->state.target_pos;
  r->state.q = r->state.target_q;
  r->state.has_target = 0;
}

/* The box swept over the whole step (a kinematic body's pose at any fraction lies inside it),
 * inflated by the skin. */
static void rigid_bounds(const loom_world *w, const body_slot *b, const step_info *s, vec3 *lo, vec3 *hi) {
  (void)w, (void)s;
  const rigid_body *r = rigid_of_slot(b);
  rigid_swept_aabb(r, r->params.thickness + (rigid_is_dynamic(r) ? RIGID_SPECULATIVE : 0), lo, hi);
}

static void rigid_aabb(const body_slot *b, vec3 *lo, vec3 *hi) { rigid_swept_aabb(rigid_of_slot(b), 0, lo, hi); }

static double rigid_surface_distance(const body_slot *b, vec3 p) {
  const rigid_body *r = rigid_of_slot(b);
  return rigid_local_distance(r, q_rotate_inv(r->state.q, v3_sub(p, r->state.pos)), NULL) - r->params.thickness;
}

static int rigid_moves(const body_slot *b) { return rigid_is_dynamic(rigid_of_slot(b)); }

/* A dynamic body's 1/2 m v^2 + 1/2 w . I w and its weight's -m g.x (scaled gravity), added. */
static void rigid_energy(const body_slot *b, vec3 g, double *kinetic, double *potential) {
  const rigid_body *r = rigid_of_slot(b);
  if (!rigid_is_dynamic(r)) return;
  const rigid_state *st = &r->state;
  vec3 wb = q_rotate_inv(st->q, st->omega);
  *kinetic += 0.5 * r->model.mass * v3_len2(st->vel) + 0.5 * v3_dot(wb, m3_mulv(&r->model.inertia, wb));
  *potential -= r->model.mass * r->params.gravity_scale * v3_dot(g, st->pos);
}

LOOM_API int loom_rigid_create(loom_world *w, const loom_rigid_def *def) {
  if (!w) return loom_fail("rigid: world is NULL"), 0;
  if (!def) return loom_fail("rigid: definition is NULL"), 0;
  return world_add_body(w, &rigid_kind, def->name, rigid_create, def);
}

const body_kind rigid_kind = {
  .name = "rigid",
  .id = LOOM_KIND_RIGID,
  .params = rigid_param_table,
  .nparams = (int)(sizeof rigid_param_table / sizeof rigid_param_table[0]),
  .state = rigid_state_fields,
  .nstate = (int)(sizeof rigid_state_fields / sizeof rigid_state_fields[0]),
  .transplant = rigid_transplant,
  .model_hash = rigid_model_hash,
  .free = rigid_free,
  .check_param = rigid_check_param,
  .param_changed = rigid_param_changed,
  .substeps = rigid_substeps,
  .begin = rigid_begin,
  .predict = rigid_predict,
  .commit = rigid_commit,
  .bounds = rigid_bounds,
  .aabb = rigid_aabb,
  .surface_distance = rigid_surface_distance,
  .moves = rigid_moves,
  .energy = rigid_energy,
};
