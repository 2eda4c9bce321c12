/* rigid_kind.c — the rigid kind's table: parameters, state fields, and its part of the step.
 * Static and kinematic bodies do not integrate: begin derives a kinematic body's velocity from its
 * target, the contact phases read the pose at any fraction of the step, commit lands on the target. */
#include <stddef.h>
#include <string.h>

#include "rigid/rigid.h"

static const param_spec rigid_params[] = {
  {"friction", "", "Coulomb coefficient; a contact with cloth uses sqrt(cloth's x this one's)", 0, 10, PARAM_LIVE,
   offsetof(rigid_body, friction)},
  {"restitution", "", "fraction of the normal approach speed returned in a collision", 0, 1, PARAM_LIVE,
   offsetof(rigid_body, restitution)},
  {"thickness", "m", "extra skin added to the other body's own thickness", 0, 1, PARAM_LIVE,
   offsetof(rigid_body, thickness)},
};

static const state_field rigid_state[] = {
  {"pos", offsetof(rigid_body, pos), sizeof(vec3), 0},
  {"q", offsetof(rigid_body, q), sizeof(quat), 0},
  {"vel", offsetof(rigid_body, vel), sizeof(vec3), 0},
  {"omega", offsetof(rigid_body, omega), sizeof(vec3), 0},
  {"target_pos", offsetof(rigid_body, target_pos), sizeof(vec3), 0},
  {"target_q", offsetof(rigid_body, target_q), sizeof(quat), 0},
  {"has_target", offsetof(rigid_body, has_target), sizeof(int), 0},
};

static uint64_t rigid_model_hash(const body_slot *b, uint64_t h) {
  const rigid_body *r = rigid_of_slot(b);
  h = core_fnv1a(h, &r->shape_type, sizeof r->shape_type);
  h = core_fnv1a(h, &r->motion, sizeof r->motion);
  h = core_fnv1a(h, &r->shape.radius, sizeof r->shape.radius);
  h = core_fnv1a(h, &r->shape.half, sizeof r->shape.half);
  h = core_fnv1a(h, &r->shape.half_h, sizeof r->shape.half_h);
  if (r->mesh) {
    h = core_fnv1a(h, r->mesh->v, sizeof(vec3) * (size_t)r->mesh->nv);
    h = core_fnv1a(h, r->mesh->tri, sizeof(int32_t) * 3 * (size_t)r->mesh->nt);
  }
  return h;
}

/* A static obstacle is where the file puts it; a kinematic one continues its motion. */
static int rigid_transplant(body_slot *dst, const body_slot *src) {
  rigid_body *a = rigid_of_slot(dst);
  const rigid_body *b = rigid_of_slot(src);
  if (a->motion != LOOM_KINEMATIC || b->motion != LOOM_KINEMATIC || a->shape_type != b->shape_type) return 0;
  a->pos = a->pos0 = a->target_pos = b->pos;
  a->q = a->q0 = a->target_q = b->q;
  a->vel = b->vel;
  a->omega = b->omega;
  a->has_target = 0;
  return 1;
}

static int rigid_substeps(loom_world *w, body_slot *b, double dt) {
  (void)w, (void)b, (void)dt;
  return 1;
}

static void rigid_begin(loom_world *w, body_slot *b, const step_info *s) {
  (void)w;
  rigid_body *r = rigid_of_slot(b);
  r->pos0 = r->pos;
  r->q0 = r->q;
  if (r->has_target && r->motion == LOOM_KINEMATIC) {
    r->vel = v3_scale(v3_sub(r->target_pos, r->pos0), 1.0 / s->dt);
    r->omega = q_angular_velocity(r->q0, r->target_q, s->dt);
  } else {
    r->target_pos = r->pos;
    r->target_q = r->q;
    r->vel = v3(0, 0, 0);
    r->omega = v3(0, 0, 0);
  }
}

static void rigid_commit(loom_world *w, body_slot *b, const step_info *s) {
  (void)w, (void)s;
  rigid_body *r = rigid_of_slot(b);
  r->pos = r->target_pos;
  r->q = r->target_q;
  r->has_target = 0;
}

/* The box swept over the whole step (a kinematic body's pose at any fraction lies inside it),
 * inflated by the skin. */
static void rigid_bounds(const loom_world *w, const body_slot *b, const step_info *s, vec3 *lo, vec3 *hi) {
  (void)w, (void)s;
  const rigid_body *r = rigid_of_slot(b);
  rigid_swept_aabb(r, r->thickness, lo, hi);
}

static void rigid_aabb(const body_slot *b, vec3 *lo, vec3 *hi) { rigid_swept_aabb(rigid_of_slot(b), 0, lo, hi); }

static double rigid_surface_distance(const body_slot *b, vec3 p) {
  const rigid_body *r = rigid_of_slot(b);
  return rigid_local_distance(r, q_rotate_inv(r->q, v3_sub(p, r->pos)), NULL) - r->thickness;
}

LOOM_API int loom_rigid_create(loom_world *w, const loom_rigid_def *def) {
  if (!w) return loom_fail("rigid: world is NULL"), 0;
  if (!def) return loom_fail("rigid: definition is NULL"), 0;
  return world_add_body(w, &rigid_kind, def->name, rigid_create, def);
}

const body_kind rigid_kind = {
  .name = "rigid",
  .id = LOOM_KIND_RIGID,
  .params = rigid_params,
  .nparams = (int)(sizeof rigid_params / sizeof rigid_params[0]),
  .state = rigid_state,
  .nstate = (int)(sizeof rigid_state / sizeof rigid_state[0]),
  .transplant = rigid_transplant,
  .model_hash = rigid_model_hash,
  .free = rigid_free,
  .substeps = rigid_substeps,
  .begin = rigid_begin,
  .commit = rigid_commit,
  .bounds = rigid_bounds,
  .aabb = rigid_aabb,
  .surface_distance = rigid_surface_distance,
};
