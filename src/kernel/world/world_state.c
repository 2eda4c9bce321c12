/* world_state.c — state snapshots (bit-identical continuation) and the hot-reload transplant.
 * Only state is written: time, positions, velocities, Verlet history, frozen flags, pin offsets,
 * rigid poses. The model (topology, parameters) must already match; it is checked, not copied. */
#include <string.h>

#include "world/world.h"

#define STATE_MAGIC "LOOMST01"

typedef struct writer {
  unsigned char *p;
  size_t size, at;
} writer;

static void put(writer *w, const void *src, size_t n) {
  if (w->p && w->at + n <= w->size) memcpy(w->p + w->at, src, n);
  w->at += n;
}
static void put_int(writer *w, int v) { put(w, &v, sizeof v); }
static void put_double(writer *w, double v) { put(w, &v, sizeof v); }

/* Serialises the state; with p == NULL only counts bytes. */
static size_t write_state(const loom_world *wd, unsigned char *p, size_t size) {
  writer w = {p, size, 0};
  put(&w, STATE_MAGIC, 8);
  put_int(&w, wd->order_count);
  put_double(&w, wd->time);
  put_double(&w, wd->steps);
  for (int o = 0; o < wd->order_count; o++) {
    const body_slot *bd = &wd->bodies[wd->order[o]];
    int len = (int)strlen(bd->name);
    put_int(&w, bd->kind);
    put_int(&w, len);
    put(&w, bd->name, (size_t)len);
    if (bd->soft) {
      const soft_body *b = bd->soft;
      put_int(&w, b->n);
      put_int(&w, b->nt);
      put(&w, b->x, sizeof(vec3) * (size_t)b->n);
      put(&w, b->v, sizeof(vec3) * (size_t)b->n);
      put(&w, b->x_prev, sizeof(vec3) * (size_t)b->n);
      put_int(&w, b->frozen);
      put_int(&w, b->has_prev);
      put_double(&w, b->prev_h);
    } else {
      const rigid_body *r = bd->rigid;
      put_int(&w, r->shape_type);
      put(&w, &r->pos, sizeof r->pos);
      put(&w, &r->q, sizeof r->q);
      put(&w, &r->vel, sizeof r->vel);
      put(&w, &r->omega, sizeof r->omega);
      put(&w, &r->target_pos, sizeof r->target_pos);
      put(&w, &r->target_q, sizeof r->target_q);
      put_int(&w, r->has_target);
    }
  }
  int groups = 0;
  for (int g = 0; g < wd->group_slots; g++) groups += wd->groups[g].alive;
  put_int(&w, groups);
  for (int g = 0; g < wd->group_slots; g++) {
    const pin_group *q = &wd->groups[g];
    if (!q->alive) continue;
    put_int(&w, q->body);
    put_int(&w, q->count);
    put_int(&w, q->held);
    put(&w, &q->offset, sizeof q->offset);
    put(&w, &q->target, sizeof q->target);
    put(&w, q->idx, sizeof(int32_t) * (size_t)q->count);
    put(&w, q->rest, sizeof(vec3) * (size_t)q->count);
  }
  return w.at;
}

LOOM_API int loom_world_state_size(const loom_world *w) {
  if (!w) return loom_fail("state_size: world is NULL");
  size_t n = write_state(w, NULL, 0);
  if (n > 0x7fffffff) return loom_fail("state_size: state larger than 2 GiB");
  return (int)n;
}

LOOM_API int loom_world_save_state(const loom_world *w, void *buf, int size) {
  if (!w || !buf) return loom_fail("save_state: NULL argument");
  size_t need = write_state(w, NULL, 0);
  if (size < 0 || (size_t)size < need) return loom_fail("save_state: buffer of %d bytes, need %zu", size, need);
  return (int)write_state(w, buf, (size_t)size);
}

typedef struct reader {
  const unsigned char *p;
  size_t size, at;
  int bad;
} reader;

static int get(reader *r, void *dst, size_t n) {
  if (r->bad || r->at + n > r->size) {
    r->bad = 1;
    return -1;
  }
  if (dst) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return 0;
}
static int get_int(reader *r) {
  int v = 0;
  get(r, &v, sizeof v);
  return v;
}

/* Two passes: pass 0 only checks, pass 1 writes; so a mismatch never leaves a half-restored world. */
static int read_state(loom_world *wd, const unsigned char *p, size_t size, int apply) {
  reader r = {p, size, 0, 0};
  char magic[8];
  if (get(&r, magic, 8) || memcmp(magic, STATE_MAGIC, 8)) return loom_fail("load_state: not a Loom state");
  int nb = get_int(&r);
  if (nb != wd->order_count) return loom_fail("load_state: state has %d bodies, world has %d", nb, wd->order_count);
  double time = 0, steps = 0;
  get(&r, &time, sizeof time);
  get(&r, &steps, sizeof steps);
  if (apply) {
    wd->time = time;
    wd->steps = steps;
  }
  for (int o = 0; o < nb && !r.bad; o++) {
    body_slot *bd = &wd->bodies[wd->order[o]];
    int kind = get_int(&r), len = get_int(&r);
    if (r.bad) break;
    if (kind != bd->kind || len != (int)strlen(bd->name) || len < 0 || r.at + (size_t)len > size ||
        memcmp(p + r.at, bd->name, (size_t)len))
      return loom_fail("load_state: body %d of the state does not match '%s'", o + 1, bd->name);
    r.at += (size_t)len;
    if (bd->soft) {
      soft_body *b = bd->soft;
      int n = get_int(&r), nt = get_int(&r);
      if (n != b->n || nt != b->nt)
        return loom_fail("load_state: cloth '%s' has %d vertices / %d triangles, state has %d / %d", bd->name, b->n,
                         b->nt, n, nt);
      size_t bytes = sizeof(vec3) * (size_t)n;
      get(&r, apply ? b->x : NULL, bytes);
      get(&r, apply ? b->v : NULL, bytes);
      get(&r, apply ? b->x_prev : NULL, bytes);
      int frozen = get_int(&r), has_prev = get_int(&r);
      double prev_h = 0;
      get(&r, &prev_h, sizeof prev_h);
      if (apply) {
        b->frozen = frozen;
        b->has_prev = has_prev;
        b->prev_h = prev_h;
      }
    } else {
      rigid_body *rb = bd->rigid;
      int st = get_int(&r);
      if (st != rb->shape_type) return loom_fail("load_state: rigid '%s' has a different shape", bd->name);
      get(&r, apply ? &rb->pos : NULL, sizeof rb->pos);
      get(&r, apply ? &rb->q : NULL, sizeof rb->q);
      get(&r, apply ? &rb->vel : NULL, sizeof rb->vel);
      get(&r, apply ? &rb->omega : NULL, sizeof rb->omega);
      get(&r, apply ? &rb->target_pos : NULL, sizeof rb->target_pos);
      get(&r, apply ? &rb->target_q : NULL, sizeof rb->target_q);
      int ht = get_int(&r);
      if (apply) rb->has_target = ht;
    }
  }
  int groups = get_int(&r);
  int alive = 0;
  for (int g = 0; g < wd->group_slots; g++) alive += wd->groups[g].alive;
  if (!r.bad && groups != alive) return loom_fail("load_state: state has %d pin groups, world has %d", groups, alive);
  for (int g = 0; g < wd->group_slots && !r.bad; g++) {
    pin_group *q = &wd->groups[g];
    if (!q->alive) continue;
    int bodyslot = get_int(&r), count = get_int(&r), held = get_int(&r);
    if (r.bad) break;
    if (bodyslot != q->body || count != q->count) return loom_fail("load_state: pin group %d does not match", g + 1);
    vec3 off, tgt;
    get(&r, &off, sizeof off);
    get(&r, &tgt, sizeof tgt);
    if (r.bad || r.at + sizeof(int32_t) * (size_t)count > size) break;
    if (memcmp(p + r.at, q->idx, sizeof(int32_t) * (size_t)count))
      return loom_fail("load_state: pin group %d holds different vertices", g + 1);
    r.at += sizeof(int32_t) * (size_t)count;
    get(&r, apply ? q->rest : NULL, sizeof(vec3) * (size_t)count);
    if (apply) {
      q->offset = off;
      q->target = tgt;
      q->held = held;
      soft_body *b = wd->bodies[q->body].soft;
      for (int k = 0; k < q->count; k++) {
        int i = q->idx[k];
        b->inv_m[i] = held ? 0 : 1.0 / b->mass[i];
        b->m[i] = held ? 0 : b->mass[i];
      }
    }
  }
  if (r.bad) return loom_fail("load_state: truncated state");
  if (r.at != size) return loom_fail("load_state: %zu unexpected trailing bytes", size - r.at);
  return 0;
}

LOOM_API int loom_world_load_state(loom_world *w, const void *buf, int size) {
  if (!w || !buf || size < 0) return loom_fail("load_state: bad arguments");
  if (read_state(w, buf, (size_t)size, 0) != 0) return -1;
  return read_state(w, buf, (size_t)size, 1);
}

LOOM_API int loom_world_transplant(loom_world *dst, const loom_world *src) {
  if (!dst || !src) return loom_fail("transplant: NULL world");
  dst->time = src->time;
  dst->steps = src->steps;
  int carried = 0;
  for (int o = 0; o < dst->order_count; o++) {
    body_slot *d = &dst->bodies[dst->order[o]];
    int h = loom_world_find(src, d->name);
    if (!h) continue;
    const body_slot *s = &src->bodies[(h & 0xffff) - 1];
    if (s->kind != d->kind) continue;
    if (d->soft) {
      soft_body *a = d->soft;
      const soft_body *b = s->soft;
      if (a->n != b->n || a->nt != b->nt || memcmp(a->tri, b->tri, sizeof(int32_t) * 3 * (size_t)a->nt)) continue;
      memcpy(a->x, b->x, sizeof(vec3) * (size_t)a->n);
      memcpy(a->v, b->v, sizeof(vec3) * (size_t)a->n);
      memcpy(a->x_prev, b->x_prev, sizeof(vec3) * (size_t)a->n);
      a->has_prev = b->has_prev;
      a->prev_h = b->prev_h;
      /* pinned vertices of the new scene hold still until their trajectories take over */
      for (int i = 0; i < a->n; i++)
        if (a->inv_m[i] == 0) a->v[i] = v3(0, 0, 0);
      carried++;
    } else {
      rigid_body *a = d->rigid;
      const rigid_body *b = s->rigid;
      /* a static obstacle is where the file puts it; a kinematic one continues its motion */
      if (a->motion != LOOM_KINEMATIC || b->motion != LOOM_KINEMATIC || a->shape_type != b->shape_type) continue;
      a->pos = a->pos0 = a->target_pos = b->pos;
      a->q = a->q0 = a->target_q = b->q;
      a->vel = b->vel;
      a->omega = b->omega;
      carried++;
    }
  }
  return carried;
}
