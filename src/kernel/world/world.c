/* world.c — worlds, body handles, the step pipeline, messages and statistics. */
#include "world/world.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LOOM_API void loom_world_def_default(loom_world_def *def) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  def->dt = 1.0 / 240.0;
  def->gravity = v3(0, 0, -9.81);
  def->wind = v3(0, 0, 0);
}

static int check_vec(const vec3 *v, const char *fn, const char *what) {
  if (!v) return loom_fail("%s: '%s' is NULL", fn, what);
  if (!v3_isfinite(*v)) return loom_fail("%s: '%s' must be finite, got (%g, %g, %g)", fn, what, v->x, v->y, v->z);
  return 0;
}

static int check_dt(double dt, const char *fn) {
  if (!(dt > 0) || !isfinite(dt) || dt > 1.0)
    return loom_fail("%s: 'dt' must be a number in (0, 1] s, got %g", fn, dt);
  return 0;
}

LOOM_API loom_world *loom_world_create(const loom_world_def *def) {
  loom_world_def d;
  if (def)
    d = *def;
  else
    loom_world_def_default(&d);
  if (check_dt(d.dt, "loom_world_create") || check_vec(&d.gravity, "loom_world_create", "gravity") ||
      check_vec(&d.wind, "loom_world_create", "wind"))
    return NULL;
  loom_world *w = core_calloc(1, sizeof *w);
  if (!w) return NULL;
  w->dt = d.dt;
  w->gravity = d.gravity;
  w->wind = d.wind;
  w->grab_slot = -1;
  if (arena_init(&w->scratch, 1 << 16) != 0) {
    core_free(w);
    return NULL;
  }
  return w;
}

static void free_body(body_slot *b) {
  if (b->soft) {
    soft_free(b->soft);
    core_free(b->soft);
  }
  if (b->rigid) {
    rigid_free(b->rigid);
    core_free(b->rigid);
  }
  core_free(b->name);
  b->soft = NULL;
  b->rigid = NULL;
  b->name = NULL;
  b->kind = LOOM_KIND_NONE;
}

LOOM_API void loom_world_destroy(loom_world *w) {
  if (!w) return;
  for (int i = 0; i < w->body_slots; i++) free_body(&w->bodies[i]);
  for (int i = 0; i < w->group_slots; i++) {
    core_free(w->groups[i].idx);
    core_free(w->groups[i].rest);
  }
  core_free(w->groups);
  core_free(w->bodies);
  core_free(w->order);
  arena_destroy(&w->scratch);
  core_free(w);
}

LOOM_API double loom_world_time(const loom_world *w) { return w ? w->time : 0; }
LOOM_API double loom_world_dt(const loom_world *w) { return w ? w->dt : 0; }

LOOM_API int loom_world_set_dt(loom_world *w, double dt) {
  if (!w) return loom_fail("loom_world_set_dt: world is NULL");
  if (check_dt(dt, "loom_world_set_dt")) return -1;
  w->dt = dt;
  for (int i = 0; i < w->order_count; i++) {
    body_slot *b = &w->bodies[w->order[i]];
    if (b->soft) soft_update_substeps(b->soft, dt);
  }
  return 0;
}

LOOM_API void loom_world_gravity(const loom_world *w, loom_vec3 *out) {
  if (w && out) *out = w->gravity;
}

LOOM_API int loom_world_set_gravity(loom_world *w, const loom_vec3 *g) {
  if (!w) return loom_fail("loom_world_set_gravity: world is NULL");
  if (check_vec(g, "loom_world_set_gravity", "gravity")) return -1;
  w->gravity = *g;
  return 0;
}

LOOM_API void loom_world_wind(const loom_world *w, loom_vec3 *out) {
  if (w && out) *out = w->wind;
}

LOOM_API int loom_world_set_wind(loom_world *w, const loom_vec3 *wind) {
  if (!w) return loom_fail("loom_world_set_wind: world is NULL");
  if (check_vec(wind, "loom_world_set_wind", "wind")) return -1;
  w->wind = *wind;
  return 0;
}

/* ---- handles ---------------------------------------------------------------------------------- */

/* handle = generation (15 bits) << 16 | (slot + 1); 0 is never a valid handle. */
int world_handle(const loom_world *w, int slot) {
  return (int)(((uint32_t)(w->bodies[slot].generation & 0x7fff) << 16) | (uint32_t)(slot + 1));
}

int world_slot(const loom_world *w, int handle, int kind, const char *fn) {
  if (!w) return loom_fail("%s: world is NULL", fn);
  int slot = (handle & 0xffff) - 1;
  int gen = (handle >> 16) & 0x7fff;
  if (handle <= 0 || slot < 0 || slot >= w->body_slots || w->bodies[slot].kind == LOOM_KIND_NONE ||
      (w->bodies[slot].generation & 0x7fff) != gen)
    return loom_fail("%s: invalid or stale body handle %d", fn, handle);
  if (kind != LOOM_KIND_NONE && w->bodies[slot].kind != kind)
    return loom_fail("%s: body '%s' is not a %s", fn, w->bodies[slot].name, kind == LOOM_KIND_CLOTH ? "soft body" : "rigid body");
  return slot;
}

int world_new_body(loom_world *w, const char *name, const char *fn) {
  if (!name || !name[0]) return loom_fail("%s: 'name' must be a non-empty string", fn);
  if (strlen(name) > 200) return loom_fail("%s: 'name' is longer than 200 characters", fn);
  if (loom_world_find(w, name)) return loom_fail("%s: a body named '%s' already exists", fn, name);
  int slot = -1;
  for (int i = 0; i < w->body_slots; i++)
    if (w->bodies[i].kind == LOOM_KIND_NONE && !w->bodies[i].name) {
      slot = i;
      break;
    }
  if (slot < 0) {
    if (w->body_slots >= WORLD_MAX_BODIES) return loom_fail("%s: too many bodies (%d)", fn, WORLD_MAX_BODIES);
    if (w->body_slots == w->body_cap) {
      int cap = w->body_cap ? w->body_cap * 2 : 8;
      body_slot *nb = core_realloc(w->bodies, (size_t)cap, sizeof(body_slot));
      if (!nb) return -1;
      int32_t *no = core_realloc(w->order, (size_t)cap, sizeof(int32_t));
      if (!no) {
        w->bodies = nb;
        return -1;
      }
      memset(nb + w->body_cap, 0, sizeof(body_slot) * (size_t)(cap - w->body_cap));
      w->bodies = nb;
      w->order = no;
      w->body_cap = cap;
    }
    slot = w->body_slots++;
  }
  body_slot *b = &w->bodies[slot];
  b->name = core_strdup(name);
  if (!b->name) return -1;
  return slot;
}

/* Makes a slot created by world_new_body live (after its soft/rigid part was built). */
static void world_commit_body(loom_world *w, int slot, int kind) {
  w->bodies[slot].kind = kind;
  w->order[w->order_count++] = slot;
}

static void world_abandon_body(loom_world *w, int slot) {
  body_slot *b = &w->bodies[slot];
  free_body(b);
  b->generation++;
  if (slot == w->body_slots - 1) w->body_slots--;
}

void world_message(loom_world *w, const char *fmt, ...) {
  char *dst = w->messages[w->message_count % WORLD_MESSAGES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dst, WORLD_MESSAGE_LEN, fmt, ap);
  va_end(ap);
  w->message_count++;
}

int world_reserve_scratch(loom_world *w) {
  size_t need = 0;
  for (int i = 0; i < w->order_count; i++) {
    body_slot *b = &w->bodies[w->order[i]];
    if (b->soft) {
      size_t s = soft_scratch_bytes(b->soft);
      if (s > need) need = s;
    }
  }
  return arena_reserve(&w->scratch, need + 4096);
}

/* ---- bodies ----------------------------------------------------------------------------------- */

LOOM_API int loom_cloth_create(loom_world *w, const loom_cloth_def *def) {
  if (!w) return loom_fail("cloth: world is NULL"), 0;
  if (!def) return loom_fail("cloth: definition is NULL"), 0;
  int slot = world_new_body(w, def->name, "cloth");
  if (slot < 0) return 0;
  if (soft_create(w, slot, def) != 0) {
    world_abandon_body(w, slot);
    return 0;
  }
  world_commit_body(w, slot, LOOM_KIND_CLOTH);
  soft_update_substeps(w->bodies[slot].soft, w->dt);
  if (world_reserve_scratch(w) != 0) {
    loom_body_destroy(w, world_handle(w, slot));
    return 0;
  }
  return world_handle(w, slot);
}

LOOM_API int loom_rigid_create(loom_world *w, const loom_rigid_def *def) {
  if (!w) return loom_fail("rigid: world is NULL"), 0;
  if (!def) return loom_fail("rigid: definition is NULL"), 0;
  int slot = world_new_body(w, def->name, "rigid");
  if (slot < 0) return 0;
  if (rigid_create(w, slot, def) != 0) {
    world_abandon_body(w, slot);
    return 0;
  }
  world_commit_body(w, slot, LOOM_KIND_RIGID);
  return world_handle(w, slot);
}

LOOM_API int loom_body_destroy(loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_destroy");
  if (slot < 0) return -1;
  for (int g = 0; g < w->group_slots; g++) {
    pin_group *p = &w->groups[g];
    if (p->alive && p->body == slot) {
      p->alive = 0;
      p->generation++;
      core_free(p->idx);
      core_free(p->rest);
      p->idx = NULL;
      p->rest = NULL;
    }
  }
  if (w->grab_slot == slot) w->grab_slot = -1;
  int k = 0;
  for (int i = 0; i < w->order_count; i++)
    if (w->order[i] != slot) w->order[k++] = w->order[i];
  w->order_count = k;
  body_slot *b = &w->bodies[slot];
  free_body(b);
  b->generation++;
  return 0;
}

LOOM_API int loom_world_body_count(const loom_world *w) { return w ? w->order_count : 0; }

LOOM_API int loom_world_body_at(const loom_world *w, int i) {
  if (!w || i < 0 || i >= w->order_count) return 0;
  return world_handle(w, w->order[i]);
}

LOOM_API int loom_world_find(const loom_world *w, const char *name) {
  if (!w || !name) return 0;
  for (int i = 0; i < w->order_count; i++) {
    const body_slot *b = &w->bodies[w->order[i]];
    if (b->name && !strcmp(b->name, name)) return world_handle(w, w->order[i]);
  }
  return 0;
}

LOOM_API int loom_body_kind(const loom_world *w, int handle) {
  if (!w) return LOOM_KIND_NONE;
  int slot = (handle & 0xffff) - 1;
  int gen = (handle >> 16) & 0x7fff;
  if (handle <= 0 || slot < 0 || slot >= w->body_slots || (w->bodies[slot].generation & 0x7fff) != gen)
    return LOOM_KIND_NONE;
  return w->bodies[slot].kind;
}

LOOM_API const char *loom_body_name(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_name");
  return slot < 0 ? NULL : w->bodies[slot].name;
}

LOOM_API int loom_body_frozen(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_frozen");
  if (slot < 0) return 0;
  return w->bodies[slot].soft ? w->bodies[slot].soft->frozen : 0;
}

LOOM_API int loom_body_unfreeze(loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_unfreeze");
  if (slot < 0) return -1;
  if (w->bodies[slot].soft) w->bodies[slot].soft->frozen = 0;
  return 0;
}

LOOM_API int loom_body_set_param(loom_world *w, int handle, const char *name, double value) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "set_param");
  if (slot < 0) return -1;
  body_slot *b = &w->bodies[slot];
  if (!name) return loom_fail("set_param: parameter name is NULL");
  if (b->soft) {
    if (soft_set_param(b->soft, name, value, w->dt, b->name) != 0) return -1;
    return world_reserve_scratch(w);
  }
  rigid_body *r = b->rigid;
  if (!isfinite(value)) return loom_fail("rigid '%s': '%s' must be finite, got %g", b->name, name, value);
  if (!strcmp(name, "friction")) {
    if (value < 0) return loom_fail("rigid '%s': 'friction' must be >= 0, got %g", b->name, value);
    r->friction = value;
  } else if (!strcmp(name, "restitution")) {
    if (value < 0 || value > 1) return loom_fail("rigid '%s': 'restitution' must be in [0, 1], got %g", b->name, value);
    r->restitution = value;
  } else if (!strcmp(name, "thickness")) {
    if (value < 0) return loom_fail("rigid '%s': 'thickness' must be >= 0, got %g", b->name, value);
    r->thickness = value;
  } else {
    return loom_fail("rigid '%s': unknown parameter '%s' (friction, restitution, thickness)", b->name, name);
  }
  return 0;
}

LOOM_API int loom_body_get_param(const loom_world *w, int handle, const char *name, double *out) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "get_param");
  if (slot < 0) return -1;
  const body_slot *b = &w->bodies[slot];
  if (!name || !out) return loom_fail("get_param: NULL argument");
  if (b->soft) return soft_get_param(b->soft, name, out);
  const rigid_body *r = b->rigid;
  if (!strcmp(name, "friction"))
    *out = r->friction;
  else if (!strcmp(name, "restitution"))
    *out = r->restitution;
  else if (!strcmp(name, "thickness"))
    *out = r->thickness;
  else
    return loom_fail("rigid '%s': unknown parameter '%s'", b->name, name);
  return 0;
}

/* ---- soft body arrays --------------------------------------------------------------------------- */

static soft_body *soft_of(const loom_world *w, int handle, const char *fn) {
  int slot = world_slot(w, handle, LOOM_KIND_CLOTH, fn);
  return slot < 0 ? NULL : w->bodies[slot].soft;
}

LOOM_API int loom_body_vertex_count(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "vertex_count");
  if (slot < 0) return -1;
  return w->bodies[slot].soft ? w->bodies[slot].soft->n : 0;
}

LOOM_API loom_vec3 *loom_body_x(loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_x");
  return b ? b->x : NULL;
}
LOOM_API loom_vec3 *loom_body_v(loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_v");
  return b ? b->v : NULL;
}
LOOM_API loom_vec3 *loom_body_f(loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_f");
  return b ? b->f : NULL;
}
LOOM_API double *loom_body_m(loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_m");
  return b ? b->m : NULL;
}
LOOM_API const loom_vec3 *loom_body_rest(const loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_rest");
  return b ? b->rest : NULL;
}

LOOM_API const int32_t *loom_body_triangles(const loom_world *w, int handle, int *count) {
  soft_body *b = soft_of(w, handle, "loom_body_triangles");
  if (count) *count = b ? b->nt : 0;
  return b ? b->tri : NULL;
}

LOOM_API const uint8_t *loom_body_contacts(const loom_world *w, int handle) {
  soft_body *b = soft_of(w, handle, "loom_body_contacts");
  return b ? b->contact : NULL;
}

LOOM_API int loom_body_vertex_near(const loom_world *w, int handle, const loom_vec3 *p) {
  soft_body *b = soft_of(w, handle, "vertex_near");
  if (!b) return -1;
  if (!p || !v3_isfinite(*p)) return loom_fail("vertex_near: point must be finite"), -1;
  int best = -1;
  double bd = INFINITY;
  for (int i = 0; i < b->n; i++) {
    double d = v3_dist2(b->x[i], *p);
    if (d < bd) {
      bd = d;
      best = i;
    }
  }
  return best;
}

LOOM_API int loom_body_spring_counts(const loom_world *w, int handle, int *structural, int *shear, int *bend) {
  soft_body *b = soft_of(w, handle, "spring_counts");
  if (!b) return -1;
  int c[FAM_COUNT];
  for (int f = 0; f < FAM_COUNT; f++) c[f] = b->springs ? b->fam_start[f + 1] - b->fam_start[f] : 0;
  if (structural) *structural = c[FAM_STRUCTURAL];
  if (shear) *shear = c[FAM_SHEAR];
  if (bend) *bend = c[FAM_BEND];
  return 0;
}

LOOM_API int loom_body_add_acceleration(loom_world *w, int handle, const loom_vec3 *a) {
  soft_body *b = soft_of(w, handle, "add_acceleration");
  if (!b) return -1;
  if (check_vec(a, "add_acceleration", "acceleration")) return -1;
  const vec3 acc = *a;
  vec3 *restrict f = b->f;
  const double *restrict m = b->m;
  const int n = b->n;
  for (int i = 0; i < n; i++) {
    f[i].x += acc.x * m[i];
    f[i].y += acc.y * m[i];
    f[i].z += acc.z * m[i];
  }
  return 0;
}

LOOM_API int loom_body_internal_forces(loom_world *w, int handle, loom_vec3 *out) {
  soft_body *b = soft_of(w, handle, "internal_forces");
  if (!b) return -1;
  if (!out) return loom_fail("internal_forces: output array is NULL");
  soft_internal_forces(b, b->x, b->v, out);
  return 0;
}

LOOM_API int loom_body_aabb(const loom_world *w, int handle, loom_vec3 *lo, loom_vec3 *hi) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "aabb");
  if (slot < 0) return -1;
  const body_slot *b = &w->bodies[slot];
  vec3 l = v3(INFINITY, INFINITY, INFINITY), h = v3(-INFINITY, -INFINITY, -INFINITY);
  if (b->soft) {
    for (int i = 0; i < b->soft->n; i++) {
      l = v3_min(l, b->soft->x[i]);
      h = v3_max(h, b->soft->x[i]);
    }
  } else {
    rigid_swept_aabb(b->rigid, 0, &l, &h);
  }
  if (lo) *lo = l;
  if (hi) *hi = h;
  return 0;
}

/* ---- step ------------------------------------------------------------------------------------------ */

LOOM_API void loom_world_clear_forces(loom_world *w) {
  if (!w) return;
  for (int i = 0; i < w->order_count; i++) {
    soft_body *b = w->bodies[w->order[i]].soft;
    if (b) memset(b->f, 0, sizeof(vec3) * (size_t)b->n);
  }
}

LOOM_API int loom_world_step(loom_world *w) {
  if (!w) return 0;
  double t0 = loom_clock();
  int messages_before = w->message_count;
  const double dt = w->dt;
  arena_mark mark = arena_get_mark(&w->scratch);

  w->stats.contacts = 0;
  w->stats.collisions = 0;
  w->stats.impact_zones = 0;
  w->stats.iterations = 0;
  w->stats.substeps = 0;
  w->stats.max_penetration = 0;

  /* 1. kinematic targets: rigid bodies move from their pose now to their target over the step. */
  for (int i = 0; i < w->order_count; i++) {
    rigid_body *r = w->bodies[w->order[i]].rigid;
    if (!r) continue;
    r->pos0 = r->pos;
    r->q0 = r->q;
    if (r->has_target && r->motion == LOOM_KINEMATIC) {
      r->vel = v3_scale(v3_sub(r->target_pos, r->pos0), 1.0 / dt);
      r->omega = q_angular_velocity(r->q0, r->target_q, dt);
    } else {
      r->target_pos = r->pos;
      r->target_q = r->q;
      r->vel = v3(0, 0, 0);
      r->omega = v3(0, 0, 0);
    }
  }

  /* 2-5. soft bodies: forces, integration, contacts (pins move inside the substeps). */
  for (int i = 0; i < w->order_count; i++) {
    int slot = w->order[i];
    if (w->bodies[slot].soft) soft_step(w, slot, dt);
  }

  /* 6. commit: rigid poses, pin offsets, time. */
  for (int i = 0; i < w->order_count; i++) {
    rigid_body *r = w->bodies[w->order[i]].rigid;
    if (!r) continue;
    r->pos = r->target_pos;
    r->q = r->target_q;
    r->has_target = 0;
  }
  for (int g = 0; g < w->group_slots; g++)
    if (w->groups[g].alive) w->groups[g].offset = w->groups[g].target;
  w->time += dt;
  w->steps += 1;

  int frozen = 0;
  for (int i = 0; i < w->order_count; i++) {
    soft_body *b = w->bodies[w->order[i]].soft;
    if (b && b->frozen) frozen++;
  }
  w->stats.frozen = frozen;
  arena_release(&w->scratch, mark);
  w->stats.step_seconds = loom_clock() - t0;
  return w->message_count - messages_before;
}

LOOM_API void loom_world_stats(const loom_world *w, loom_stats *out) {
  if (!w || !out) return;
  *out = w->stats;
  out->time = w->time;
  out->steps = w->steps;
  out->bodies = w->order_count;
  out->messages = w->message_count;
}

LOOM_API int loom_world_message_count(const loom_world *w) { return w ? w->message_count : 0; }

LOOM_API const char *loom_world_message(const loom_world *w, int seq) {
  if (!w || seq < 1 || seq > w->message_count || seq <= w->message_count - WORLD_MESSAGES) return NULL;
  return w->messages[(seq - 1) % WORLD_MESSAGES];
}

LOOM_API int loom_world_set_grab(loom_world *w, int handle, int vertex, const loom_vec3 *target, double omega) {
  if (!w) return loom_fail("grab: world is NULL");
  if (handle == 0) {
    w->grab_slot = -1;
    return 0;
  }
  int slot = world_slot(w, handle, LOOM_KIND_CLOTH, "grab");
  if (slot < 0) return -1;
  if (vertex < 0 || vertex >= w->bodies[slot].soft->n)
    return loom_fail("grab: vertex %d out of range (body '%s' has %d)", vertex, w->bodies[slot].name, w->bodies[slot].soft->n);
  if (check_vec(target, "grab", "target")) return -1;
  if (!(omega > 0) || !isfinite(omega)) return loom_fail("grab: 'omega' must be a positive number, got %g", omega);
  w->grab_slot = slot;
  w->grab_vertex = vertex;
  w->grab_target = *target;
  w->grab_omega = omega;
  return 0;
}
