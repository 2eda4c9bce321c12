/* world_pins.c — pin groups: vertices with infinite mass that follow an offset from their rest
 * positions (scripted trajectories and 000's velocity constraints are built on them). */
#include <string.h>

#include "world/world.h"

static int group_handle(const loom_world *w, int g) { return handle_pack(g, w->groups[g].generation); }

static pin_group *group_of(const loom_world *w, int handle, const char *fn) {
  if (!w) {
    loom_fail("%s: world is NULL", fn);
    return NULL;
  }
  int g = handle_slot(handle), gen = handle_generation(handle);
  if (g < 0 || g >= w->group_slots || !w->groups[g].alive || (w->groups[g].generation & 0x7fff) != gen) {
    loom_fail("%s: invalid or stale pin group handle %d", fn, handle);
    return NULL;
  }
  return &w->groups[g];
}

/* A pin is a constraint: the vertex keeps its mass (what Lua reads as m) and every phase sees
 * inverse mass 0, so nothing but its trajectory moves it. */
static void set_pinned(particles *b, int i, int group) {
  b->pin_group[i] = group;
  b->inv_m[i] = 0;
  b->v[i] = v3(0, 0, 0);
}

static void set_free(particles *b, int i) {
  b->pin_group[i] = -1;
  b->inv_m[i] = 1.0 / b->m[i];
}

LOOM_API int loom_pins_create(loom_world *w, int body, const int32_t *vertices, int count) {
  int slot = world_particle_slot(w, body, "pin");
  if (slot < 0) return 0;
  particles *b = w->bodies[slot].pts;
  const char *name = w->bodies[slot].name;
  if (count < 1 || !vertices) return loom_fail("pin: cloth '%s': expected at least one vertex index", name), 0;
  if (count > b->n) return loom_fail("pin: cloth '%s': %d indices for %d vertices", name, count, b->n), 0;
  for (int k = 0; k < count; k++) {
    int i = vertices[k];
    if (i < 0 || i >= b->n)
      return loom_fail("pin: cloth '%s': vertex %d out of range (0..%d)", name, i, b->n - 1), 0;
    if (b->pin_group[i] >= 0) return loom_fail("pin: cloth '%s': vertex %d is already pinned", name, i), 0;
    for (int q = 0; q < k; q++)
      if (vertices[q] == i) return loom_fail("pin: cloth '%s': vertex %d is listed twice", name, i), 0;
  }
  int g = -1;
  for (int q = 0; q < w->group_slots; q++)
    if (!w->groups[q].alive && !w->groups[q].idx) {
      g = q;
      break;
    }
  if (g < 0) {
    if (w->group_slots >= 65535) return loom_fail("pin: too many pin groups"), 0;
    if (w->group_slots == w->group_cap) {
      int cap = w->group_cap ? 2 * w->group_cap : 8;
      pin_group *ng = core_realloc(w->groups, (size_t)cap, sizeof(pin_group));
      if (!ng) return 0;
      memset(ng + w->group_cap, 0, sizeof(pin_group) * (size_t)(cap - w->group_cap));
      w->groups = ng;
      w->group_cap = cap;
    }
    g = w->group_slots++;
  }
  pin_group *p = &w->groups[g];
  uint16_t gen = p->generation;
  memset(p, 0, sizeof *p);
  p->generation = gen;
  p->idx = core_alloc((size_t)count, sizeof(int32_t));
  p->rest = core_alloc((size_t)count, sizeof(vec3));
  if (!p->idx || !p->rest) {
    core_free(p->idx);
    core_free(p->rest);
    p->idx = NULL;
    p->rest = NULL;
    return 0;
  }
  p->alive = 1;
  p->held = 1;
  p->body = slot;
  p->count = count;
  for (int k = 0; k < count; k++) {
    p->idx[k] = vertices[k];
    p->rest[k] = b->x[vertices[k]];
    set_pinned(b, vertices[k], g);
  }
  pins_warn_margin(w, slot, g, -1);
  return group_handle(w, g);
}

/* An offset the group's vertices can take: finite, and leaving every one of them within the
 * world's reach (a pinned vertex thrown to 1e300 m would make its neighbours' forces overflow). */
static int offset_ok(const loom_world *w, const pin_group *p, const loom_vec3 *offset, const char *fn) {
  if (!offset || !v3_isfinite(*offset)) return loom_fail("%s: offset must be finite", fn);
  for (int k = 0; k < p->count; k++) {
    const vec3 x = v3_add(p->rest[k], *offset);
    if (!(v3_len(x) <= SOFT_MAX_COORD))
      return loom_fail("%s: offset (%g, %g, %g) puts vertex %d of '%s' at (%g, %g, %g), beyond the world's reach (%g m "
                       "from the origin, loom.limits.reach)",
                       fn, offset->x, offset->y, offset->z, p->idx[k], w->bodies[p->body].name, x.x, x.y, x.z, SOFT_MAX_COORD);
  }
  return 0;
}

LOOM_API int loom_pins_set_target(loom_world *w, int group, const loom_vec3 *offset) {
  pin_group *p = group_of(w, group, "pins:set_target");
  if (!p) return -1;
  if (offset_ok(w, p, offset, "pins:set_target")) return -1;
  p->target = *offset;
  return 0;
}

LOOM_API int loom_pins_set_offset(loom_world *w, int group, const loom_vec3 *offset) {
  pin_group *p = group_of(w, group, "pins:set_offset");
  if (!p) return -1;
  if (offset_ok(w, p, offset, "pins:set_offset")) return -1;
  p->offset = *offset;
  p->target = *offset;
  if (p->held) {
    particles *b = w->bodies[p->body].pts;
    for (int k = 0; k < p->count; k++) {
      b->x[p->idx[k]] = v3_add(p->rest[k], *offset);
      b->v[p->idx[k]] = v3(0, 0, 0);
    }
    b->history_ok = 0;
  }
  return 0;
}

LOOM_API int loom_pins_offset(const loom_world *w, int group, loom_vec3 *out) {
  pin_group *p = group_of(w, group, "pins:offset");
  if (!p) return -1;
  if (out) *out = p->offset;
  return 0;
}

LOOM_API int loom_pins_release(loom_world *w, int group) {
  pin_group *p = group_of(w, group, "pins:release");
  if (!p) return -1;
  if (!p->held) return 0;
  particles *b = w->bodies[p->body].pts;
  for (int k = 0; k < p->count; k++) {
    int i = p->idx[k];
    b->inv_m[i] = 1.0 / b->m[i];
  }
  p->held = 0;
  return 0;
}

LOOM_API int loom_pins_hold(loom_world *w, int group) {
  pin_group *p = group_of(w, group, "pins:hold");
  if (!p) return -1;
  if (p->held) return 0;
  particles *b = w->bodies[p->body].pts;
  /* Re-base so the vertices stay where they are: rest + offset = x now. */
  for (int k = 0; k < p->count; k++) {
    int i = p->idx[k];
    p->rest[k] = v3_sub(b->x[i], p->offset);
    b->inv_m[i] = 0;
    b->v[i] = v3(0, 0, 0);
  }
  p->target = p->offset;
  p->held = 1;
  return 0;
}

LOOM_API int loom_pins_held(const loom_world *w, int group) {
  pin_group *p = group_of(w, group, "pins:held");
  return p ? p->held : -1;
}

LOOM_API int loom_pins_count(const loom_world *w, int group) {
  pin_group *p = group_of(w, group, "pins:count");
  return p ? p->count : -1;
}

LOOM_API int loom_pins_unpin(loom_world *w, int body, const int32_t *vertices, int count) {
  int slot = world_particle_slot(w, body, "unpin");
  if (slot < 0) return -1;
  particles *b = w->bodies[slot].pts;
  if (count < 0 || (count > 0 && !vertices)) return loom_fail("unpin: bad vertex list");
  int done = 0;
  for (int k = 0; k < count; k++) {
    int i = vertices[k];
    if (i < 0 || i >= b->n)
      return loom_fail("unpin: cloth '%s': vertex %d out of range (0..%d)", w->bodies[slot].name, i, b->n - 1);
    int g = b->pin_group[i];
    if (g < 0) continue;
    pin_group *p = &w->groups[g];
    int m = 0;
    for (int q = 0; q < p->count; q++) {
      if (p->idx[q] == i) continue;
      p->idx[m] = p->idx[q];
      p->rest[m] = p->rest[q];
      m++;
    }
    p->count = m;
    set_free(b, i);
    done++;
    if (p->count == 0) {
      /* an empty group dies; its handle goes stale */
      core_free(p->idx);
      core_free(p->rest);
      p->idx = NULL;
      p->rest = NULL;
      p->alive = 0;
      p->generation++;
    }
  }
  return done;
}

void pins_apply(const loom_world *w, int slot, double a, double dt) {
  particles *b = w->bodies[slot].pts;
  for (int g = 0; g < w->group_slots; g++) {
    const pin_group *p = &w->groups[g];
    if (!p->alive || p->body != slot || !p->held) continue;
    /* at a = 1 land on the target itself: offset + (target - offset) may round away from it */
    vec3 off = a >= 1 ? p->target : v3_lerp(p->offset, p->target, a);
    vec3 vel = v3_scale(v3_sub(p->target, p->offset), 1.0 / dt);
    for (int k = 0; k < p->count; k++) {
      int i = p->idx[k];
      b->x[i] = v3_add(p->rest[k], off);
      b->v[i] = vel;
    }
  }
}

void pins_velocities(const loom_world *w, int slot, double dt, vec3 *v) {
  for (int g = 0; g < w->group_slots; g++) {
    const pin_group *p = &w->groups[g];
    if (!p->alive || p->body != slot || !p->held) continue;
    const vec3 vel = v3_scale(v3_sub(p->target, p->offset), 1.0 / dt);
    for (int k = 0; k < p->count; k++) v[p->idx[k]] = vel;
  }
}

/* ---- pins inside another body's contact margin -------------------------------------------------- */

/* A pinned vertex does not move for contacts (it has nothing to resolve), so a pin inside an
 * obstacle's margin stays there; the free vertices next to it are pushed out to the margin. The
 * user is told when that starts (pin creation, obstacle creation) and when a body diverges. */
int pins_in_margin(const loom_world *w, int slot, int group, int other, pin_margin *out) {
  const particles *p = w->bodies[slot].pts;
  pin_margin best = {0, -1, -1, INFINITY, p ? particles_thickness(p) : 0};
  if (!p) {
    if (out) *out = best;
    return 0;
  }
  for (int o = 0; o < w->order_count; o++) {
    const int os = w->order[o];
    const body_slot *r = &w->bodies[os];
    if (os == slot || (other >= 0 && os != other) || !r->ops->surface_distance || !r->ops->aabb) continue;
    if (world_pair_off(w, slot, os)) continue; /* (world:pair, collide = false: no contact margin between them) */
    vec3 lo, hi;
    r->ops->aabb(r, &lo, &hi);
    const double pad = best.margin + 1.0; /* the skin is inside surface_distance; 1 m is ample for the box test */
    for (int i = 0; i < p->n; i++) {
      if (p->inv_m[i] != 0 || (group >= 0 && p->pin_group[i] != group)) continue;
      const vec3 x = p->x[i];
      if (x.x < lo.x - pad || x.x > hi.x + pad || x.y < lo.y - pad || x.y > hi.y + pad || x.z < lo.z - pad ||
          x.z > hi.z + pad)
        continue;
      const double d = r->ops->surface_distance(r, x);
      if (!(d < best.margin)) continue;
      best.count++;
      if (d < best.distance) {
        best.distance = d;
        best.vertex = i;
        best.other = os;
      }
    }
  }
  if (out) *out = best;
  return best.count;
}

void pins_warn_margin(loom_world *w, int slot, int group, int other) {
  pin_margin m;
  if (pins_in_margin(w, slot, group, other, &m) == 0) return;
  const body_slot *b = &w->bodies[slot], *o = &w->bodies[m.other];
  world_message(w, LOOM_WARNING, slot,
                "%s '%s': %d pinned vertices lie within %s '%s''s contact margin (vertex %d is %.3g m from its surface, "
                "the margin is %.3g m); pins ignore contacts, the free vertices next to them are kept outside",
                b->ops->name, b->name, m.count, o->ops->name, o->name, m.vertex, m.distance, m.margin);
}
