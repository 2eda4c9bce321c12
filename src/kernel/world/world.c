/* world.c — worlds, body slots and handles, messages, statistics, the particle arrays every
 * particle kind shares. Nothing here knows a particular kind: kinds come through body_kind. */
#include <unistd.h>

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

#define MAX_GRAVITY 1.0e6 /* m/s^2 (1e5 g): at dt = 1 s anything beyond leaves the guard's speed at once */

static int check_vec(const vec3 *v, const char *fn, const char *what) {
  if (!v) return loom_fail("%s: '%s' is NULL", fn, what);
  if (!v3_isfinite(*v)) return loom_fail("%s: '%s' must be finite, got (%g, %g, %g)", fn, what, v->x, v->y, v->z);
  return 0;
}

/* A finite vector no longer than `most` (gravity, wind: beyond it a body only diverges). */
static int check_vec_up_to(const vec3 *v, const char *fn, const char *what, double most, const char *unit) {
  if (check_vec(v, fn, what)) return -1;
  if (v3_len(*v) > most)
    return loom_fail("%s: '%s' must be at most %g %s long, got (%g, %g, %g)", fn, what, most, unit, v->x, v->y, v->z);
  return 0;
}

static int check_dt(double dt, const char *fn) {
  if (!(dt > 0) || !isfinite(dt) || dt > 1.0) return loom_fail("%s: 'dt' must be a number in (0, 1] s, got %g", fn, dt);
  return 0;
}

LOOM_API loom_world *loom_world_create(const loom_world_def *def) {
  loom_world_def d;
  if (def)
    d = *def;
  else
    loom_world_def_default(&d);
  if (check_dt(d.dt, "loom_world_create") || check_vec_up_to(&d.gravity, "loom_world_create", "gravity", MAX_GRAVITY, "m/s^2") ||
      check_vec_up_to(&d.wind, "loom_world_create", "wind", SOFT_MAX_SPEED, "m/s"))
    return NULL;
  loom_world *w = core_calloc(1, sizeof *w);
  if (!w) return NULL;
  w->dt = d.dt;
  w->gravity = d.gravity;
  w->wind = d.wind;
  w->grab_slot = -1;
  w->threads = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
  if (arena_init(&w->scratch, 1 << 16) != 0) {
    core_free(w);
    return NULL;
  }
  return w;
}

core_par *world_par(loom_world *w) {
  if (w->threads < 2) return NULL;
  if (!w->par) {
    w->par = core_par_create();
    if (!w->par) w->threads = 1; /* no thread to be had: inline from now on */
  }
  return w->par;
}

LOOM_API int loom_world_set_threads(loom_world *w, int threads) {
  if (threads != 1 && threads != 2) return loom_fail("threads: must be 1 or 2, got %d", threads);
  w->threads = threads;
  if (threads == 1 && w->par) {
    core_par_destroy(w->par);
    w->par = NULL;
  }
  return 0;
}

LOOM_API int loom_world_threads(const loom_world *w) { return w->threads; }

static void free_body(body_slot *b) {
  if (b->ops && b->data) b->ops->free(b->data);
  core_free(b->name);
  b->data = NULL;
  b->pts = NULL;
  b->name = NULL;
  b->ops = NULL;
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
  core_free(w->contacts.items);
  core_free(w->contacts.work);
  core_free(w->cpairs);
  core_free(w->cpairs2);
  rigid_work_free(w->rigid);
  core_free(w->overrides);
  core_free(w->cdist);
  core_free(w->cadj_first);
  core_free(w->cadj);
  core_free(w->cseen);
  arena_destroy(&w->scratch);
  core_par_destroy(w->par);
  core_free(w);
}

LOOM_API double loom_world_time(const loom_world *w) { return w ? w->time : 0; }
LOOM_API double loom_world_dt(const loom_world *w) { return w ? w->dt : 0; }

LOOM_API double loom_world_limit(int which) {
  switch (which) {
  case LOOM_LIMIT_SPEED: return SOFT_MAX_SPEED;
  case LOOM_LIMIT_REACH: return SOFT_MAX_COORD;
  case LOOM_LIMIT_VERTEX_MASS: return SOFT_MAX_VERTEX_MASS;
  case LOOM_LIMIT_GRAVITY: return MAX_GRAVITY;
  default: return NAN;
  }
}

LOOM_API int loom_world_set_dt(loom_world *w, double dt) {
  if (!w) return loom_fail("loom_world_set_dt: world is NULL");
  if (check_dt(dt, "loom_world_set_dt")) return -1;
  w->dt = dt;
  /* derived values that depend on dt (a cloth's automatic substeps) */
  for (int i = 0; i < w->order_count; i++) {
    body_slot *b = &w->bodies[w->order[i]];
    if (b->ops->param_changed) b->ops->param_changed(w, b, NULL);
  }
  return 0;
}

LOOM_API void loom_world_gravity(const loom_world *w, loom_vec3 *out) {
  if (w && out) *out = w->gravity;
}

/* The first override at or after handles (ha, hb) in the sorted list. */
static int override_at(const loom_world *w, int ha, int hb) {
  int lo = 0, hi = w->noverrides;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    const pair_override *o = &w->overrides[mid];
    if (o->a < ha || (o->a == ha && o->b < hb)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const pair_override *world_pair_override(const loom_world *w, int slot_a, int slot_b) {
  if (!w->noverrides) return NULL;
  int ha = world_handle(w, slot_a), hb = world_handle(w, slot_b);
  if (ha > hb) {
    int t = ha;
    ha = hb;
    hb = t;
  }
  const int i = override_at(w, ha, hb);
  return i < w->noverrides && w->overrides[i].a == ha && w->overrides[i].b == hb ? &w->overrides[i] : NULL;
}

/* An override's collide = false starts (on = 0) or ends (on = 1) for its two bodies (slots). */
static void pair_off_changed(loom_world *w, int sa, int sb, int on) {
  const int d = on ? -1 : 1;
  w->bodies[sa].pairs_off += d;
  w->bodies[sb].pairs_off += d;
  w->npairs_off += d;
  if (on) world_pair_look(w, sa, sb);
}

void world_pair_look(loom_world *w, int sa, int sb) {
  const int slots[2] = {sa, sb};
  for (int k = 0; k < 2; k++) {
    particles *p = w->bodies[slots[k]].pts;
    if (!p) continue;
    p->col.check_tangles = 1;
    if (w->bodies[slots[1 - k]].ops->id == LOOM_KIND_RIGID) p->check_obstacles = 1;
  }
}

LOOM_API int loom_world_pair(loom_world *w, int body_a, int body_b, double friction, double restitution, int collide) {
  if (!w) return loom_fail("world:pair: world is NULL");
  int sa = world_slot(w, body_a, LOOM_KIND_NONE, "world:pair"), sb = world_slot(w, body_b, LOOM_KIND_NONE, "world:pair");
  if (sa < 0 || sb < 0) return -1;
  if (sa == sb) return loom_fail("world:pair: '%s' twice; a pair needs two bodies", w->bodies[sa].name);
  if (!isfinite(friction) || friction > 10) return loom_fail("world:pair: 'friction' must be a number in [0, 10], got %g", friction);
  if (!isfinite(restitution) || restitution > 1)
    return loom_fail("world:pair: 'restitution' must be a number in [0, 1], got %g", restitution);
  int ha = body_a < body_b ? body_a : body_b, hb = body_a < body_b ? body_b : body_a;
  const int at = override_at(w, ha, hb);
  pair_override *o = at < w->noverrides && w->overrides[at].a == ha && w->overrides[at].b == hb ? &w->overrides[at] : NULL;
  const int was = o ? o->collide : 1;
  if (!o) {
    if (w->noverrides == w->override_cap) {
      int cap = w->override_cap ? 2 * w->override_cap : 8;
      pair_override *grown = core_realloc(w->overrides, (size_t)cap, sizeof *grown);
      if (!grown) return loom_fail("world:pair: out of memory");
      w->overrides = grown;
      w->override_cap = cap;
    }
    memmove(&w->overrides[at + 1], &w->overrides[at], sizeof *w->overrides * (size_t)(w->noverrides - at));
    w->noverrides++;
    o = &w->overrides[at];
  }
  *o = (pair_override){ha, hb, friction, restitution, collide != 0};
  if (was != o->collide) pair_off_changed(w, sa, sb, o->collide);
  return 0;
}

/* Drops the overrides that name the body in slot (it is being destroyed). */
static void drop_overrides(loom_world *w, int slot) {
  const int h = world_handle(w, slot);
  int k = 0;
  for (int i = 0; i < w->noverrides; i++) {
    const pair_override *o = &w->overrides[i];
    if (o->a != h && o->b != h) {
      w->overrides[k++] = *o;
      continue;
    }
    if (o->collide) continue;
    const int other = world_live_slot(w, o->a == h ? o->b : o->a);
    if (other >= 0) w->bodies[other].pairs_off--;
    w->npairs_off--;
  }
  w->noverrides = k;
  w->bodies[slot].pairs_off = 0;
}

LOOM_API int loom_world_set_gravity(loom_world *w, const loom_vec3 *g) {
  if (!w) return loom_fail("loom_world_set_gravity: world is NULL");
  if (check_vec_up_to(g, "loom_world_set_gravity", "gravity", MAX_GRAVITY, "m/s^2")) return -1;
  w->gravity = *g;
  return 0;
}

LOOM_API void loom_world_wind(const loom_world *w, loom_vec3 *out) {
  if (w && out) *out = w->wind;
}

LOOM_API int loom_world_set_wind(loom_world *w, const loom_vec3 *wind) {
  if (!w) return loom_fail("loom_world_set_wind: world is NULL");
  if (check_vec_up_to(wind, "loom_world_set_wind", "wind", SOFT_MAX_SPEED, "m/s")) return -1;
  w->wind = *wind;
  return 0;
}

/* ---- handles ---------------------------------------------------------------------------------- */

int world_handle(const loom_world *w, int slot) { return handle_pack(slot, w->bodies[slot].generation); }

int world_live_slot(const loom_world *w, int handle) {
  int slot = handle_slot(handle);
  if (slot < 0 || slot >= w->body_slots || !w->bodies[slot].ops ||
      (w->bodies[slot].generation & 0x7fff) != handle_generation(handle))
    return -1;
  return slot;
}

int world_slot(const loom_world *w, int handle, int kind, const char *fn) {
  if (!w) return loom_fail("%s: world is NULL", fn);
  int slot = world_live_slot(w, handle);
  if (slot < 0) return loom_fail("%s: invalid or stale body handle %d", fn, handle);
  const body_kind *k = w->bodies[slot].ops;
  if (kind != LOOM_KIND_NONE && k->id != kind) {
    const body_kind *want = world_kind(kind);
    return loom_fail("%s: body '%s' is a %s body, not a %s body", fn, w->bodies[slot].name, k->name,
                     want ? want->name : "?");
  }
  return slot;
}

int world_particle_slot(const loom_world *w, int handle, const char *fn) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, fn);
  if (slot < 0) return -1;
  if (!w->bodies[slot].pts)
    return loom_fail("%s: body '%s' is a %s body, not a soft body (it has no vertices)", fn, w->bodies[slot].name,
                     w->bodies[slot].ops->name);
  return slot;
}

static int new_slot(loom_world *w, const char *name, const char *fn) {
  if (!name || !name[0]) return loom_fail("%s: 'name' must be a non-empty string", fn);
  if (strlen(name) > 200) return loom_fail("%s: 'name' is longer than 200 characters", fn);
  if (loom_world_find(w, name)) return loom_fail("%s: a body named '%s' already exists", fn, name);
  int slot = -1;
  for (int i = 0; i < w->body_slots; i++)
    if (!w->bodies[i].ops && !w->bodies[i].name) {
      slot = i;
      break;
    }
  if (slot < 0) {
    if (w->body_slots >= WORLD_MAX_BODIES) return loom_fail("%s: too many bodies (%d)", fn, WORLD_MAX_BODIES);
    if (w->body_slots == w->body_cap) {
      int cap = w->body_cap ? w->body_cap * 2 : 8;
      body_slot *nb = core_realloc(w->bodies, (size_t)cap, sizeof(body_slot));
      if (!nb) return -1;
      w->bodies = nb;
      int32_t *no = core_realloc(w->order, (size_t)cap, sizeof(int32_t));
      if (!no) return -1;
      memset(nb + w->body_cap, 0, sizeof(body_slot) * (size_t)(cap - w->body_cap));
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

int world_add_body(loom_world *w, const body_kind *k, const char *name, int (*create)(loom_world *, int, const void *),
                   const void *def) {
  int slot = new_slot(w, name, k->name);
  if (slot < 0) return 0;
  body_slot *b = &w->bodies[slot];
  if (create(w, slot, def) != 0) {
    /* the kind's free takes what create made so far */
    b->ops = k;
    free_body(b);
    b->generation++;
    if (slot == w->body_slots - 1) w->body_slots--;
    return 0;
  }
  b->ops = k;
  if (b->pts) {
    particles *p = b->pts;
    memcpy(p->m_good, p->m, sizeof(double) * (size_t)p->n);
    p->path_lo = core_alloc((size_t)(p->n > 0 ? p->n : 1), sizeof(vec3));
    p->path_hi = core_alloc((size_t)(p->n > 0 ? p->n : 1), sizeof(vec3));
    if (!p->path_lo || !p->path_hi || bvh_build(&p->path_tree, p->x, p->x, p->n, 8) != 0) {
      free_body(b);
      b->generation++;
      if (slot == w->body_slots - 1) w->body_slots--;
      return 0;
    }
  }
  w->order[w->order_count++] = slot;
  if (k->param_changed) k->param_changed(w, b, NULL);
  if (k->surface_distance)
    for (int o = 0; o < w->order_count - 1; o++)
      if (w->bodies[w->order[o]].pts) pins_warn_margin(w, w->order[o], -1, slot);
  int h = world_handle(w, slot);
  if (world_reserve_scratch(w) != 0) {
    loom_body_destroy(w, h);
    return 0;
  }
  return h;
}

void world_message(loom_world *w, int severity, int body, const char *fmt, ...) {
  int at = w->message_count % WORLD_MESSAGES;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->messages[at], WORLD_MESSAGE_LEN, fmt, ap);
  va_end(ap);
  w->message_severity[at] = severity;
  w->message_body[at] = body >= 0 ? world_handle(w, body) : 0;
  w->message_count++;
}

/* Every body's scratch coexists during a step (the phases interleave the bodies). */
int world_reserve_scratch(loom_world *w) {
  size_t need = 4096 + sizeof(body_pair) * ((size_t)w->order_count * (size_t)w->order_count / 2 + 1) + 64;
  need += (size_t)w->order_count + 1 + 64; /* phase_commit: the bodies the divergence guard stops */
  int vertices = 0;
  for (int i = 0; i < w->order_count; i++) {
    body_slot *b = &w->bodies[w->order[i]];
    if (b->ops->scratch_bytes) need += b->ops->scratch_bytes(b) + 64;
    if (b->pts) {
      need += 4 * sizeof(vec3) * (size_t)b->pts->n + 256;
      vertices += b->pts->n;
    }
  }
  /* the contact buffer: room for every vertex touching something, grown later only if a substep
   * finds more contacts than that */
  if (contacts_reserve(w, vertices + 256) != 0) return -1;
  return arena_reserve(&w->scratch, need);
}

/* ---- particles -------------------------------------------------------------------------------- */

int particles_alloc(particles *p, int n, int nt) {
  p->n = n;
  p->nt = nt;
  p->x = core_calloc((size_t)n, sizeof(vec3));
  p->v = core_calloc((size_t)n, sizeof(vec3));
  p->f = core_calloc((size_t)n, sizeof(vec3));
  p->damp = core_calloc((size_t)n * 6, sizeof(double));
  p->rest = core_calloc((size_t)n, sizeof(vec3));
  p->m = core_calloc((size_t)n, sizeof(double));
  p->inv_m = core_calloc((size_t)n, sizeof(double));
  p->m_good = core_calloc((size_t)n, sizeof(double));
  p->pin_group = core_alloc((size_t)n, sizeof(int32_t));
  p->contact = core_calloc((size_t)n, 1);
  p->tri = core_alloc((size_t)(nt > 0 ? nt : 1) * 3, sizeof(int32_t));
  if (!p->x || !p->v || !p->f || !p->damp || !p->rest || !p->m || !p->inv_m || !p->m_good || !p->pin_group || !p->contact ||
      !p->tri)
    return -1;
  for (int i = 0; i < n; i++) p->pin_group[i] = -1;
  /* the state a body starts in is checked once: for crossings and vertices inside obstacles at
   * the pipeline's first run, for triangles across rigid meshes at the first step's end */
  p->col.check_tangles = p->check_obstacles = 1;
  return 0;
}

int particles_find_divergence(const particles *p, const char **what) {
  for (int i = 0; i < p->n; i++) {
    if (!v3_isfinite(p->x[i])) {
      *what = "non-finite position";
      return i;
    }
    if (!v3_isfinite(p->v[i])) {
      *what = "non-finite velocity";
      return i;
    }
    if (v3_len2(p->v[i]) > SOFT_MAX_SPEED * SOFT_MAX_SPEED) {
      *what = "speed above 1e4 m/s";
      return i;
    }
    if (fabs(p->x[i].x) > SOFT_MAX_COORD || fabs(p->x[i].y) > SOFT_MAX_COORD || fabs(p->x[i].z) > SOFT_MAX_COORD) {
      *what = "position beyond 1e6 m";
      return i;
    }
  }
  return -1;
}

void particles_box(const particles *p, vec3 *lo, vec3 *hi) {
  *lo = v3(INFINITY, INFINITY, INFINITY), *hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < p->n; i++) *lo = v3_min(*lo, p->x[i]), *hi = v3_max(*hi, p->x[i]);
}

void particles_transplant_pins(particles *dst, const particles *src) {
  for (int i = 0; i < dst->n; i++)
    if (dst->inv_m[i] == 0 && src->inv_m[i] != 0) dst->v[i] = v3(0, 0, 0);
}

void particles_bounds(const loom_world *w, const body_slot *s, const step_info *si, vec3 *lo, vec3 *hi) {
  (void)w, (void)si;
  const particles *p = s->pts;
  vec3 l = v3(INFINITY, INFINITY, INFINITY), h = v3(-INFINITY, -INFINITY, -INFINITY);
  const vec3 *x0 = p->x_sub ? p->x_sub : p->x;
  for (int i = 0; i < p->n; i++) {
    l = v3_min(l, v3_min(p->x[i], x0[i]));
    h = v3_max(h, v3_max(p->x[i], x0[i]));
  }
  const double t = particles_thickness(p);
  vec3 e = v3(t, t, t);
  *lo = v3_sub(l, e);
  *hi = v3_add(h, e);
}

void particles_free(particles *p) {
  core_free(p->x);
  core_free(p->v);
  core_free(p->f);
  core_free(p->damp);
  core_free(p->rest);
  core_free(p->m);
  core_free(p->inv_m);
  core_free(p->m_good);
  core_free(p->pin_group);
  core_free(p->contact);
  core_free(p->tri);
  core_free(p->tri_flat);
  core_free(p->path_lo);
  core_free(p->path_hi);
  bvh_free(&p->path_tree);
  particle_collide *c = &p->col;
  core_free(c->edge);
  bvh_free(&c->tri_tree);
  bvh_free(&c->edge_tree);
  bvh_free(&c->vert_tree);
  core_free(c->vert_lo);
  core_free(c->vert_hi);
  core_free(c->was);
  bvh_work_free(&c->bwork);
  bvh_free(&c->patch_tree);
  core_free(c->pt_first);
  core_free(c->pt_count);
  core_free(c->pt_nsub);
  core_free(c->pt_loop);
  core_free(c->pt_loop_at);
  core_free(c->pt_loop_len);
  core_free(c->leaf_v);
  core_free(c->leaf_e);
  core_free(c->leaf_t);
  core_free(c->pt_axis);
  core_free(c->pt_cos);
  core_free(c->pt_top);
  core_free(c->pt_list_top);
  core_free(c->tri_tag);
  core_free(c->edge_tag);
  core_free(c->vcert);
  core_free(c->pt_dirty);
  core_free(c->tri_lo);
  core_free(c->tri_hi);
  core_free(c->edge_lo);
  core_free(c->edge_hi);
  core_free(c->vbar);
  core_free(c->vbar0);
  core_free(c->ecol);
  core_free(c->ecol_hi);
  core_free(c->ecol_e);
  core_free(c->ecol_ehi);
  core_free(c->tri_elo);
  core_free(c->tri_ehi);
  core_free(c->edge_elo);
  core_free(c->edge_ehi);
  core_free(c->vert_elo);
  core_free(c->vert_ehi);
  core_free(c->stamp);
  core_free(c->nobs);
  core_free(c->held);
  core_free(c->inv_m);
  core_free(c->count);
  core_free(c->tangled);
  core_free(c->xprev);
  core_free(c->xend);
  core_free(c->xdone);
  core_free(c->nobs_prev);
  core_free(c->held_prev);
  core_free(c->zone);
  memset(p, 0, sizeof *p);
}

const bvh *particles_path_tree(loom_world *w, particles *p) {
  if (p->path_serial != w->substep_serial) {
    for (int i = 0; i < p->n; i++) {
      p->path_lo[i] = v3_min(p->x_sub[i], p->x[i]);
      p->path_hi[i] = v3_max(p->x_sub[i], p->x[i]);
    }
    bvh_refit(&p->path_tree, p->path_lo, p->path_hi);
    p->path_serial = w->substep_serial;
  }
  return &p->path_tree;
}

/* ---- bodies ----------------------------------------------------------------------------------- */

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
  drop_overrides(w, slot);
  int k = 0;
  for (int i = 0; i < w->order_count; i++)
    if (w->order[i] != slot) w->order[k++] = w->order[i];
  w->order_count = k;
  w->contacts.count = 0; /* contacts name bodies by handle: a stale one must not be read */
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
  int slot = world_live_slot(w, handle);
  return slot < 0 ? LOOM_KIND_NONE : w->bodies[slot].ops->id;
}

LOOM_API const char *loom_body_name(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_name");
  return slot < 0 ? NULL : w->bodies[slot].name;
}

LOOM_API int loom_body_frozen(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_frozen");
  if (slot < 0) return 0;
  return w->bodies[slot].pts ? w->bodies[slot].pts->frozen : 0;
}

LOOM_API int loom_body_unfreeze(loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "loom_body_unfreeze");
  if (slot < 0) return -1;
  particles *p = w->bodies[slot].pts;
  /* the world went on without it (a frozen body is out of the collision pipeline, and others
   * passed through it): what crosses it is looked for, as for a new body, instead of being held */
  if (p && p->frozen) p->frozen = 0, p->col.check_tangles = p->check_obstacles = 1;
  return 0;
}

LOOM_API int loom_body_aabb(const loom_world *w, int handle, loom_vec3 *lo, loom_vec3 *hi) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "aabb");
  if (slot < 0) return -1;
  const body_slot *b = &w->bodies[slot];
  vec3 l = v3(INFINITY, INFINITY, INFINITY), h = v3(-INFINITY, -INFINITY, -INFINITY);
  if (b->pts) {
    for (int i = 0; i < b->pts->n; i++) {
      l = v3_min(l, b->pts->x[i]);
      h = v3_max(h, b->pts->x[i]);
    }
  } else if (b->ops->aabb) {
    b->ops->aabb(b, &l, &h);
  }
  if (lo) *lo = l;
  if (hi) *hi = h;
  return 0;
}

/* ---- particle arrays ---------------------------------------------------------------------------- */

static particles *pts_of(const loom_world *w, int handle, const char *fn) {
  int slot = world_particle_slot(w, handle, fn);
  return slot < 0 ? NULL : w->bodies[slot].pts;
}

LOOM_API int loom_body_vertex_count(const loom_world *w, int handle) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "vertex_count");
  if (slot < 0) return -1;
  return w->bodies[slot].pts ? w->bodies[slot].pts->n : 0;
}

LOOM_API loom_vec3 *loom_body_x(loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_x");
  return p ? p->x : NULL;
}
LOOM_API loom_vec3 *loom_body_v(loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_v");
  return p ? p->v : NULL;
}
LOOM_API loom_vec3 *loom_body_f(loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_f");
  return p ? p->f : NULL;
}
LOOM_API double *loom_body_damping(loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_damping");
  return p ? p->damp : NULL;
}
LOOM_API double *loom_body_m(loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_m");
  return p ? p->m : NULL;
}
LOOM_API const double *loom_body_inv_mass(const loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_inv_mass");
  return p ? p->inv_m : NULL;
}
LOOM_API const loom_vec3 *loom_body_rest(const loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_rest");
  return p ? p->rest : NULL;
}

LOOM_API const int32_t *loom_body_triangles(const loom_world *w, int handle, int *count) {
  particles *p = pts_of(w, handle, "loom_body_triangles");
  if (count) *count = p ? p->nt : 0;
  return p ? p->tri : NULL;
}

LOOM_API const uint8_t *loom_body_contacts(const loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_contacts");
  return p ? p->contact : NULL;
}

LOOM_API const int32_t *loom_body_impact_zones(const loom_world *w, int handle) {
  particles *p = pts_of(w, handle, "loom_body_impact_zones");
  return p ? p->col.zone : NULL;
}

LOOM_API const int32_t *loom_body_collision_edges(const loom_world *w, int handle, int *count) {
  if (count) *count = 0;
  particles *p = pts_of(w, handle, "loom_body_collision_edges");
  if (!p || !p->col.ready) return NULL;
  if (count) *count = p->col.ne;
  return p->col.edge;
}

LOOM_API int loom_body_collision_boxes(const loom_world *w, int handle, int depth, loom_vec3 *lo, loom_vec3 *hi,
                                       int cap) {
  particles *p = pts_of(w, handle, "loom_body_collision_boxes");
  if (!p) return -1;
  if (depth < 0 || depth > BVH_MAX_DEPTH || cap < 0 || (cap > 0 && (!lo || !hi)))
    return loom_fail("loom_body_collision_boxes: depth must be in [0, %d], cap >= 0 and the arrays given", BVH_MAX_DEPTH), -1;
  const bvh *t = &p->col.tri_tree;
  if (!p->col.ready || t->node_count == 0) return 0;
  /* the boxes are in the search frame they were made in (docs/architecture.md, collisions): back
   * to the world's frame at the world's time */
  const vec3 shift = v3_scale(p->col.frame_v, w->time - p->col.frame_t);
  int32_t stack[BVH_MAX_DEPTH + 1], level[BVH_MAX_DEPTH + 1];
  int sp = 0, count = 0;
  stack[sp] = 0;
  level[sp++] = 0;
  while (sp > 0) {
    const int id = stack[--sp], d = level[sp];
    const bvh_node *nd = &t->nodes[id];
    if (d < depth && nd->left >= 0) {
      stack[sp] = nd->right;
      level[sp++] = d + 1;
      stack[sp] = nd->left; /* (left first) */
      level[sp++] = d + 1;
      continue;
    }
    if (count < cap) {
      /* the space the node's features take over the substep the trees were made for: its start
       * box and its end box together */
      const vec3 a = v3_add(t->ends_differ ? v3_min(nd->lo, t->node_elo[id]) : nd->lo, shift);
      const vec3 b = v3_add(t->ends_differ ? v3_max(nd->hi, t->node_ehi[id]) : nd->hi, shift);
      lo[count] = (loom_vec3){a.x, a.y, a.z};
      hi[count] = (loom_vec3){b.x, b.y, b.z};
    }
    count++;
  }
  return count;
}

LOOM_API int loom_body_vertex_near(const loom_world *w, int handle, const loom_vec3 *p) {
  particles *b = pts_of(w, handle, "vertex_near");
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

LOOM_API int loom_body_add_acceleration(loom_world *w, int handle, const loom_vec3 *a) {
  particles *b = pts_of(w, handle, "add_acceleration");
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

LOOM_API void loom_world_clear_forces(loom_world *w) {
  if (!w) return;
  for (int i = 0; i < w->order_count; i++) {
    particles *p = w->bodies[w->order[i]].pts;
    if (p) {
      memset(p->f, 0, sizeof(vec3) * (size_t)p->n);
      memset(p->damp, 0, sizeof(double) * 6 * (size_t)p->n);
    }
  }
}

/* ---- statistics, messages, grab ------------------------------------------------------------------ */

LOOM_API void loom_world_stats(const loom_world *w, loom_stats *out) {
  if (!w || !out) return;
  *out = w->stats;
  out->time = w->time;
  out->steps = w->steps;
  out->bodies = w->order_count;
  out->messages = w->message_count;
  out->obstacle_tests = w->oquery.tests;
  out->obstacle_tests_brute = w->oquery.brute_tests;
}

LOOM_API int loom_world_set_brute_obstacles(loom_world *w, int on) {
  if (!w) return loom_fail("brute_obstacles: no world");
  w->oquery.brute = on != 0;
  return 0;
}

LOOM_API int loom_world_brute_obstacles(const loom_world *w) { return w ? w->oquery.brute : 0; }

LOOM_API int loom_world_message_count(const loom_world *w) { return w ? w->message_count : 0; }

static int message_at(const loom_world *w, int seq) {
  if (!w || seq < 1 || seq > w->message_count || seq <= w->message_count - WORLD_MESSAGES) return -1;
  return (seq - 1) % WORLD_MESSAGES;
}

LOOM_API const char *loom_world_message(const loom_world *w, int seq) {
  int at = message_at(w, seq);
  return at < 0 ? NULL : w->messages[at];
}

LOOM_API int loom_world_message_severity(const loom_world *w, int seq) {
  int at = message_at(w, seq);
  return at < 0 ? -1 : w->message_severity[at];
}

LOOM_API int loom_world_message_body(const loom_world *w, int seq) {
  int at = message_at(w, seq);
  if (at < 0) return 0;
  int h = w->message_body[at];
  return h && world_live_slot(w, h) >= 0 ? h : 0;
}

LOOM_API int loom_world_set_grab(loom_world *w, int handle, int vertex, const loom_vec3 *target, double omega) {
  if (!w) return loom_fail("grab: world is NULL");
  if (handle == 0) {
    w->grab_slot = -1;
    return 0;
  }
  int slot = world_particle_slot(w, handle, "grab");
  if (slot < 0) return -1;
  const particles *p = w->bodies[slot].pts;
  if (vertex < 0 || vertex >= p->n)
    return loom_fail("grab: vertex %d out of range (body '%s' has %d)", vertex, w->bodies[slot].name, p->n);
  if (check_vec(target, "grab", "target")) return -1;
  if (!(omega > 0) || !isfinite(omega)) return loom_fail("grab: 'omega' must be a positive number, got %g", omega);
  w->grab_slot = slot;
  w->grab_vertex = vertex;
  w->grab_target = *target;
  w->grab_omega = omega;
  return 0;
}

/* Masses written through body.m (Lua) since the last step: inverse masses and the total follow
 * them; a mass that is not a finite positive number up to SOFT_MAX_VERTEX_MASS is refused — the last good one is put back —
 * with one message naming the body, the vertex and the value. */
void particles_sync_masses(loom_world *w, int slot) {
  particles *p = w->bodies[slot].pts;
  double total = 0;
  int bad = -1, count = 0;
  double bad_value = 0;
  for (int i = 0; i < p->n; i++) {
    double m = p->m[i];
    if (!(m > 0 && m <= SOFT_MAX_VERTEX_MASS)) {
      if (bad < 0) {
        bad = i;
        bad_value = m;
      }
      count++;
      m = p->m[i] = p->m_good[i];
    }
    p->m_good[i] = m;
    if (p->pin_group[i] < 0) p->inv_m[i] = 1.0 / m;
    total += m;
  }
  p->total_mass = total;
  if (bad >= 0) {
    const body_slot *b = &w->bodies[slot];
    world_message(w, LOOM_ERROR, slot,
                  "%s '%s': the mass of vertex %d must be a finite number > 0 and <= 1e9 (kg), got %g; kept %g%s", b->ops->name,
                  b->name, bad, bad_value, p->m[bad], count > 1 ? " (and for the other refused vertices)" : "");
  }
}
