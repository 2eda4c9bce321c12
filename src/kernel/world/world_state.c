/* world_state.c — the state of a world, from one list of fields: snapshots (bit-identical
 * continuation), the state hash and the hot-reload transplant all walk the same fields:
 *   world:      time, steps
 *   particles:  x, v (per vertex), frozen, history_ok, and what the next step looks for
 *               (check_tangles, check_obstacles)
 *   each kind:  its state_field list (cloth: Verlet history; rigid: pose, velocities, target)
 *   pin groups: held, offset, target, rest positions (their vertex lists are checked, not copied)
 *   mouse grab: body, vertex, target, omega
 *   rigid contacts: the impulses the solver remembers for its warm start (they decide how resting
 *               contacts go on, so a restored world continues bit-identically)
 *   pairs off:  the pairs of bodies world:pair had set to collide = false (creation-order indices):
 *               loaded where such a pair collides, the two look for what they made through each
 *               other (world_pair_look), as after the switch itself (not hashed)
 * The model (topology, parameters) must already match; it is checked, not copied. */
#include <stdio.h>
#include <string.h>

#include "world/world.h"

#define STATE_MAGIC "LOOMST05"

/* A walker visits every state field in order: writing into a buffer, reading from one, or hashing. */
typedef struct walker {
  unsigned char *out;       /* write mode */
  const unsigned char *in;  /* read mode */
  size_t size, at;
  int apply;                /* read mode: 0 = only check, 1 = copy into the world */
  int bad;
  uint64_t hash;            /* hash mode: out == in == NULL */
  int hashing;
} walker;

static void field(walker *k, void *p, size_t n) {
  if (!n) return; /* (p may be NULL then: an empty list) */
  if (k->hashing) {
    k->hash = core_fnv1a(k->hash, p, n);
    return;
  }
  if (k->in) {
    if (k->bad || k->at + n > k->size) {
      k->bad = 1;
      return;
    }
    if (k->apply) memcpy(p, k->in + k->at, n);
  } else if (k->out && k->at + n <= k->size) {
    memcpy(k->out + k->at, p, n);
  }
  k->at += n;
}

/* A value that must equal what the world has (counts, names): written, or compared on reading. */
static int check(walker *k, const void *p, size_t n) {
  if (k->in) {
    if (k->bad || k->at + n > k->size) return k->bad = 1, -1;
    int same = !memcmp(k->in + k->at, p, n);
    k->at += n;
    return same ? 0 : -1;
  }
  field(k, (void *)p, n);
  return 0;
}

static int walk_body(walker *k, body_slot *b) {
  int len = (int)strlen(b->name), id = b->ops->id;
  if (check(k, &id, sizeof id) || check(k, &len, sizeof len) || check(k, b->name, (size_t)len))
    return loom_fail("load_state: body '%s' does not match the state's (kind, order or name)", b->name);
  particles *p = b->pts;
  int n = p ? p->n : 0, nt = p ? p->nt : 0;
  if (check(k, &n, sizeof n) || check(k, &nt, sizeof nt))
    return loom_fail("load_state: %s '%s' has %d vertices / %d triangles, the state has others", b->ops->name, b->name,
                     n, nt);
  if (p) {
    field(k, p->x, sizeof(vec3) * (size_t)n);
    field(k, p->v, sizeof(vec3) * (size_t)n);
    field(k, &p->frozen, sizeof p->frozen);
    field(k, &p->history_ok, sizeof p->history_ok);
    /* what the next step looks for (a body's first state, what a last resort left): they decide
     * which collision pairs are left out, so a restored world must look for the same */
    field(k, &p->col.check_tangles, sizeof p->col.check_tangles);
    field(k, &p->check_obstacles, sizeof p->check_obstacles);
    /* a state read in is where the world now is, not a move made between steps */
    if (k->in && k->apply) p->col.xdone_ok = 0;
  }
  char *base = b->data;
  for (int i = 0; i < b->ops->nstate; i++) {
    const state_field *f = &b->ops->state[i];
    if (f->per_vertex) {
      void *arr;
      memcpy(&arr, base + f->offset, sizeof arr);
      field(k, arr, f->size * (size_t)n);
    } else {
      field(k, base + f->offset, f->size);
    }
  }
  return 0;
}

/* A body's index in creation order (-1: none). */
static int order_of(const loom_world *w, int slot) {
  for (int o = 0; o < w->order_count; o++)
    if (w->order[o] == slot) return o;
  return -1;
}

/* The pairs of live bodies that world:pair has set to collide = false: the count, and with `at`
 * the next one from override *at on (its bodies' creation-order indices in ab; *at moves past it). */
static int pairs_off_next(const loom_world *w, int *at, int32_t ab[2]) {
  int count = 0;
  for (int i = at ? *at : 0; i < w->noverrides; i++) {
    const pair_override *o = &w->overrides[i];
    const int sa = world_live_slot(w, o->a), sb = world_live_slot(w, o->b);
    if (o->collide || sa < 0 || sb < 0) continue;
    if (at) {
      ab[0] = order_of(w, sa);
      ab[1] = order_of(w, sb);
      *at = i + 1;
      return 1;
    }
    count++;
  }
  return count;
}

/* world:pair's collide = false pairs ("pairs off" in the list at the top). Not hashed: they are
 * the world's choice, not where its bodies are (world:hash hashes the state a run reaches). */
static int walk_pairs_off(walker *k, loom_world *w) {
  if (k->hashing) return 0;
  const int apply = k->apply;
  int cnt = k->in ? 0 : pairs_off_next(w, NULL, NULL);
  k->apply = 1;
  field(k, &cnt, sizeof cnt);
  k->apply = apply;
  if (k->in && !k->bad && (cnt < 0 || (size_t)cnt > (k->size - k->at) / (2 * sizeof(int32_t))))
    return loom_fail("load_state: the state's pairs that do not collide are damaged (%d entries)", cnt);
  for (int i = 0, at = 0; i < cnt && !k->bad; i++) {
    int32_t ab[2] = {-1, -1};
    if (!k->in) pairs_off_next(w, &at, ab);
    k->apply = 1;
    field(k, ab, sizeof ab);
    k->apply = apply;
    if (!k->in || k->bad) continue;
    if (ab[0] < 0 || ab[1] < 0 || ab[0] >= w->order_count || ab[1] >= w->order_count || ab[0] == ab[1])
      return loom_fail("load_state: the state's pairs that do not collide name no two bodies of this world");
    const int sa = w->order[ab[0]], sb = w->order[ab[1]];
    if (apply && !world_pair_off(w, sa, sb)) world_pair_look(w, sa, sb);
  }
  return 0;
}

static int walk(walker *k, loom_world *w) {
  if (check(k, STATE_MAGIC, 8)) return loom_fail("load_state: not a Loom state (or one of another version)");
  if (check(k, &w->order_count, sizeof w->order_count))
    return loom_fail("load_state: the state has another number of bodies than the world (%d)", w->order_count);
  field(k, &w->time, sizeof w->time);
  field(k, &w->steps, sizeof w->steps);
  for (int o = 0; o < w->order_count; o++)
    if (walk_body(k, &w->bodies[w->order[o]])) return -1;
  int groups = 0;
  for (int g = 0; g < w->group_slots; g++) groups += w->groups[g].alive;
  if (check(k, &groups, sizeof groups)) return loom_fail("load_state: the state has another number of pin groups");
  for (int g = 0; g < w->group_slots; g++) {
    pin_group *q = &w->groups[g];
    if (!q->alive) continue;
    if (check(k, &q->body, sizeof q->body) || check(k, &q->count, sizeof q->count) ||
        check(k, q->idx, sizeof(int32_t) * (size_t)q->count))
      return loom_fail("load_state: pin group %d holds other vertices than in the state", g + 1);
    field(k, &q->held, sizeof q->held);
    field(k, &q->offset, sizeof q->offset);
    field(k, &q->target, sizeof q->target);
    field(k, q->rest, sizeof(vec3) * (size_t)q->count);
  }
  /* the grab goes through locals: a state read from outside is checked before it is applied */
  int gs = w->grab_slot, gv = w->grab_vertex;
  vec3 gt = w->grab_target;
  double go = w->grab_omega;
  int apply = k->apply;
  k->apply = 1;
  field(k, &gs, sizeof gs);
  field(k, &gv, sizeof gv);
  field(k, &gt, sizeof gt);
  field(k, &go, sizeof go);
  k->apply = apply;
  if (k->in && !k->bad) {
    int ok = gs == -1 || (gs >= 0 && gs < w->body_slots && w->bodies[gs].ops && w->bodies[gs].pts && gv >= 0 &&
                          gv < w->bodies[gs].pts->n && v3_isfinite(gt) && go > 0 && isfinite(go));
    if (!ok) return loom_fail("load_state: the state's mouse grab names no vertex of this world");
  }
  if (!k->in || k->apply) {
    w->grab_slot = gs;
    w->grab_vertex = gv;
    w->grab_target = gt;
    w->grab_omega = go;
  }
  int cnt = rigid_cache_count(w);
  k->apply = 1;
  field(k, &cnt, sizeof cnt);
  k->apply = apply;
  const size_t esz = rigid_cache_entry_size();
  if (k->in && !k->bad && (cnt < 0 || (size_t)cnt > (k->size - k->at) / esz))
    return loom_fail("load_state: the state's rigid contact impulses are damaged (%d entries)", cnt);
  const int skip = k->in && !k->apply;
  void *data = skip || k->bad ? NULL : rigid_cache_data(w, k->in ? cnt : -1);
  if (cnt > 0 && !data && !skip && !k->bad) return loom_fail("load_state: out of memory");
  field(k, data, esz * (size_t)(cnt > 0 ? cnt : 0));
  return walk_pairs_off(k, w);
}

/* A state read from outside must be finite where the world's is: positions and velocities of
 * particles (a diverged body was put back to finite values before it froze). */
static int check_finite(const loom_world *w) {
  for (int o = 0; o < w->order_count; o++) {
    const body_slot *b = &w->bodies[w->order[o]];
    if (!b->pts) continue;
    for (int i = 0; i < b->pts->n; i++)
      if (!v3_isfinite(b->pts->x[i]) || !v3_isfinite(b->pts->v[i]))
        return loom_fail("load_state: %s '%s' has a non-finite position or velocity at vertex %d in the state",
                         b->ops->name, b->name, i);
  }
  return 0;
}

/* After a state was copied in: inverse masses follow the pins' held flags. */
static void sync_pins(loom_world *w) {
  for (int g = 0; g < w->group_slots; g++) {
    pin_group *q = &w->groups[g];
    if (!q->alive) continue;
    particles *p = w->bodies[q->body].pts;
    for (int k = 0; k < q->count; k++) {
      int i = q->idx[k];
      p->inv_m[i] = q->held ? 0 : 1.0 / p->m[i];
    }
  }
  if (w->grab_slot >= w->body_slots || (w->grab_slot >= 0 && !w->bodies[w->grab_slot].pts)) w->grab_slot = -1;
}

LOOM_API int loom_world_state_size(const loom_world *w) {
  if (!w) return loom_fail("state_size: world is NULL");
  walker k = {0};
  walk(&k, (loom_world *)w);
  if (k.at > 0x7fffffff) return loom_fail("state_size: state larger than 2 GiB");
  return (int)k.at;
}

LOOM_API int loom_world_save_state(const loom_world *w, void *buf, int size) {
  if (!w || !buf) return loom_fail("save_state: NULL argument");
  int need = loom_world_state_size(w);
  if (need < 0) return -1;
  if (size < need) return loom_fail("save_state: buffer of %d bytes, need %d", size, need);
  walker k = {0};
  k.out = buf;
  k.size = (size_t)size;
  walk(&k, (loom_world *)w);
  return (int)k.at;
}

/* Two passes: the first only checks, the second copies; a mismatch never half-restores a world. */
static int load_state_raw(loom_world *w, const void *buf, int size);

/* A state that loads but is not finite is refused and the world put back as it was. */
LOOM_API int loom_world_load_state(loom_world *w, const void *buf, int size) {
  if (!w || !buf || size < 0) return loom_fail("load_state: bad arguments");
  int n = loom_world_state_size(w);
  if (n < 0) return -1;
  arena_mark mark = arena_get_mark(&w->scratch);
  unsigned char *save = ARENA_NEW(&w->scratch, unsigned char, n, "state before load");
  int rc = save && loom_world_save_state(w, save, n) == n ? load_state_raw(w, buf, size) : -1;
  if (rc == 0 && check_finite(w) != 0) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", loom_last_error());
    load_state_raw(w, save, n);
    loom_fail("%s", msg);
    rc = -1;
  }
  arena_release(&w->scratch, mark);
  return rc;
}

static int load_state_raw(loom_world *w, const void *buf, int size) {
  for (int apply = 0; apply < 2; apply++) {
    walker k = {0};
    k.in = buf;
    k.size = (size_t)size;
    k.apply = apply;
    if (walk(&k, w) != 0) return -1;
    if (k.bad) return loom_fail("load_state: truncated state (%d bytes)", size);
    if (k.at != (size_t)size) return loom_fail("load_state: %zu unexpected trailing bytes", (size_t)size - k.at);
  }
  sync_pins(w);
  return 0;
}

LOOM_API int loom_world_hash(const loom_world *w, char *out, int cap) {
  if (!w || !out || cap < 17) return loom_fail("loom_world_hash: need a world and a 17-byte buffer");
  walker k = {0};
  k.hashing = 1;
  k.hash = CORE_FNV_START;
  walk(&k, (loom_world *)w);
  snprintf(out, (size_t)cap, "%016llx", (unsigned long long)k.hash);
  return 0;
}

/* Copies one body's state fields from src to dst (same kind, same vertex count). What the next
 * step looks for is not copied here: a reloaded scene may have put new obstacles where the body
 * is, so the new body's first step looks, as any new body's does (unless nothing around it
 * changed: same_surroundings). */
static void copy_body_state(body_slot *d, const body_slot *s) {
  if (d->pts) {
    size_t bytes = sizeof(vec3) * (size_t)d->pts->n;
    memcpy(d->pts->x, s->pts->x, bytes);
    memcpy(d->pts->v, s->pts->v, bytes);
    d->pts->history_ok = s->pts->history_ok;
  }
  char *db = d->data;
  const char *sb = s->data;
  for (int i = 0; i < d->ops->nstate; i++) {
    const state_field *f = &d->ops->state[i];
    if (f->per_vertex) {
      void *da, *sa;
      memcpy(&da, db + f->offset, sizeof da);
      memcpy(&sa, sb + f->offset, sizeof sa);
      memcpy(da, sa, f->size * (size_t)(d->pts ? d->pts->n : 0));
    } else {
      memcpy(db + f->offset, sb + f->offset, f->size);
    }
  }
}

/* Whether every parameter of two bodies of one kind has the same value (bit for bit). */
static int same_params(const body_slot *d, const body_slot *s) {
  for (int i = 0; i < d->ops->nparams; i++) {
    const param_spec *p = &d->ops->params[i];
    const size_t n = (p->flags & PARAM_INTEGER) ? sizeof(int) : sizeof(double);
    if (memcmp((const char *)d->data + p->offset, (const char *)s->data + p->offset, n) != 0) return 0;
  }
  return 1;
}

/* The override of world:pair between the bodies of handles a and b of w, by their names in o's
 * world (NULL: none). */
static const pair_override *override_named(const loom_world *w, const loom_world *o, int a, int b) {
  const int ha = loom_world_find(w, o->bodies[handle_slot(a)].name), hb = loom_world_find(w, o->bodies[handle_slot(b)].name);
  return ha && hb ? world_pair_override(w, handle_slot(ha), handle_slot(hb)) : NULL;
}

/* Whether the new world is the old one again (a reload of an unchanged file): the same bodies by
 * name, kind and parameters, every particle body carried (kept), every rigid body of the same
 * model (a carried one may have another size) and either carried or in the same state, and the
 * same collide choices of world:pair. What the next step looks for (crossings, vertices inside
 * obstacles) is then what the old world's next step would look for, and is carried with the rest
 * of the state. */
static int same_surroundings(const loom_world *dst, const loom_world *src, const uint8_t *kept) {
  if (!kept || dst->order_count != src->order_count || dst->noverrides != src->noverrides) return 0;
  for (int o = 0; o < dst->order_count; o++) {
    const body_slot *d = &dst->bodies[dst->order[o]];
    const int h = loom_world_find(src, d->name);
    if (!h) return 0;
    const body_slot *s = &src->bodies[handle_slot(h)];
    if (s->ops != d->ops || !same_params(d, s)) return 0;
    if (d->pts) {
      if (!kept[dst->order[o]]) return 0;
      continue;
    }
    if (!d->ops->model_hash || d->ops->model_hash(d, 0) != s->ops->model_hash(s, 0)) return 0;
    if (kept[dst->order[o]]) continue;
    for (int i = 0; i < d->ops->nstate; i++) {
      const state_field *f = &d->ops->state[i];
      if (f->per_vertex || memcmp((const char *)d->data + f->offset, (const char *)s->data + f->offset, f->size) != 0) return 0;
    }
  }
  for (int i = 0; i < dst->noverrides; i++) {
    const pair_override *q = &dst->overrides[i], *p = override_named(src, dst, q->a, q->b);
    if (!p || p->collide != q->collide) return 0;
  }
  return 1;
}

LOOM_API int loom_world_transplant(loom_world *dst, const loom_world *src) {
  if (!dst || !src) return loom_fail("transplant: NULL world");
  dst->time = src->time;
  dst->steps = src->steps;
  int carried = 0;
  /* old slot -> new slot of the rigid bodies whose remembered contact impulses still fit */
  int32_t *slot_map = src->body_slots ? core_calloc((size_t)src->body_slots, sizeof(int32_t)) : NULL;
  for (int i = 0; slot_map && i < src->body_slots; i++) slot_map[i] = -1;
  uint8_t *kept = dst->body_slots ? core_calloc((size_t)dst->body_slots, 1) : NULL; /* new slots carried */
  for (int o = 0; o < dst->order_count; o++) {
    body_slot *d = &dst->bodies[dst->order[o]];
    int h = loom_world_find(src, d->name);
    if (!h) continue;
    const body_slot *s = &src->bodies[handle_slot(h)];
    if (s->ops != d->ops) continue;
    if (d->pts && (d->pts->n != s->pts->n || d->pts->nt != s->pts->nt)) continue;
    if (slot_map && d->ops->id == LOOM_KIND_RIGID && rigid_slot_same_shape(d, s)) slot_map[handle_slot(h)] = dst->order[o];
    if (d->ops->transplant) {
      /* the kind decides first (it may refuse), then gets the copied state to adjust */
      if (!d->ops->transplant(d, s)) continue;
      copy_body_state(d, s);
      d->ops->transplant(d, s);
    } else {
      copy_body_state(d, s);
    }
    if (kept) kept[dst->order[o]] = 1;
    carried++;
  }
  /* pin groups: a new group that holds the same vertices of a carried body as an old one holds of
   * the old body (the first not yet taken, in creation order) takes its offsets, hold and rest
   * positions (a body not carried keeps the new build's positions, and its groups theirs), so
   * that a reload of an unchanged file goes on where the old one was (world:adopt then moves only
   * groups whose trajectory now says otherwise) */
  uint8_t *taken = src->group_slots ? core_calloc((size_t)src->group_slots, 1) : NULL;
  for (int g = 0; taken && kept && g < dst->group_slots; g++) {
    pin_group *q = &dst->groups[g];
    if (!q->alive || !kept[q->body]) continue;
    const body_slot *qb = &dst->bodies[q->body];
    for (int k = 0; k < src->group_slots; k++) {
      const pin_group *o = &src->groups[k];
      if (!o->alive || taken[k] || o->count != q->count) continue;
      const body_slot *ob = &src->bodies[o->body];
      /* (the carried body is the old one of the same name: same kind and vertex count) */
      if (strcmp(ob->name, qb->name) != 0 || memcmp(o->idx, q->idx, sizeof(int32_t) * (size_t)q->count) != 0) continue;
      taken[k] = 1;
      q->offset = o->offset;
      q->target = o->target;
      q->held = o->held;
      memcpy(q->rest, o->rest, sizeof(vec3) * (size_t)q->count);
      break;
    }
  }
  core_free(taken);
  if (same_surroundings(dst, src, kept))
    for (int o = 0; o < dst->order_count; o++) {
      particles *p = dst->bodies[dst->order[o]].pts;
      if (!p) continue;
      const particles *q = src->bodies[handle_slot(loom_world_find(src, dst->bodies[dst->order[o]].name))].pts;
      p->col.check_tangles = q->col.check_tangles;
      p->check_obstacles = q->check_obstacles;
    }
  core_free(kept);
  sync_pins(dst);
  /* the rigid solver's warm start: without it every resting contact starts its first solve from
   * nothing, and a pile settles again (2.5 mm in one step in scenes/rain.lua) */
  if (slot_map && rigid_cache_transplant(dst, src, slot_map) < 0)
    world_message(dst, LOOM_WARNING, -1, "hot reload: out of memory carrying the rigid contact impulses; contacts start afresh");
  core_free(slot_map);
  return carried;
}
