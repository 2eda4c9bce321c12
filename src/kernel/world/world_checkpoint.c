/* world_checkpoint.c — checkpoints: everything that decides a world's future, in one checked
 * byte string that the Lua layer writes to a file.
 *
 *   "LOOMCKPT"  u32 version  u32 total size  u64 FNV-1a of everything after these 24 bytes
 *   u32 extra length, extra bytes (the Lua layer's: scene path and scene parameters)
 *   dt, gravity, wind
 *   u32 body count; per body: u32 kind, u32 name length, name, i32 vertices, i32 triangles,
 *       u64 model hash, u32 parameter count, per parameter: u32 name length, name, f64 value
 *   u32 state length, the state (world_state.c's field list: time, positions, velocities,
 *       integrator history, pins and their offsets and targets, rigid poses, the mouse grab, the
 *       pairs world:pair had set to collide = false)
 *
 * Loading checks the frame (magic, version, size, checksum) before anything else, then compares
 * the bodies: a different body list or vertex count is refused always; a different model hash
 * (topology, rest shape, masses, model, integrator) or an unknown parameter is refused unless
 * `force`. Nothing in the world changes unless everything applies. */
#include <stdio.h>
#include <string.h>

#include "world/world.h"

#define CKPT_MAGIC "LOOMCKPT"
#define CKPT_VERSION 3u
#define CKPT_HEADER 24

typedef struct out {
  unsigned char *p;
  size_t cap, at;
} out;

static void put(out *o, const void *src, size_t n) {
  if (n && o->p && o->at + n <= o->cap) memcpy(o->p + o->at, src, n);
  o->at += n;
}
static void put_u32(out *o, uint32_t v) { put(o, &v, sizeof v); }
static void put_str(out *o, const char *s) {
  uint32_t n = (uint32_t)strlen(s);
  put_u32(o, n);
  put(o, s, n);
}

static uint64_t model_hash(const body_slot *b) {
  return b->ops->model_hash ? b->ops->model_hash(b, CORE_FNV_START) : CORE_FNV_START;
}

static uint32_t live_params(const body_kind *k) {
  uint32_t n = 0;
  for (int i = 0; i < k->nparams; i++) n += (k->params[i].flags & PARAM_LIVE) != 0;
  return n;
}

/* Writes the checkpoint (or only counts when o->p is NULL). */
static int write_all(const loom_world *w, const void *extra, int extra_len, out *o) {
  int state = loom_world_state_size(w);
  if (state < 0) return -1;
  put(o, CKPT_MAGIC, 8);
  put_u32(o, CKPT_VERSION);
  put_u32(o, 0); /* total size, patched */
  uint64_t zero = 0;
  put(o, &zero, sizeof zero); /* checksum, patched */
  put_u32(o, (uint32_t)extra_len);
  put(o, extra, (size_t)extra_len);
  put(o, &w->dt, sizeof w->dt);
  put(o, &w->gravity, sizeof w->gravity);
  put(o, &w->wind, sizeof w->wind);
  put_u32(o, (uint32_t)w->order_count);
  for (int k = 0; k < w->order_count; k++) {
    const body_slot *b = &w->bodies[w->order[k]];
    put_u32(o, (uint32_t)b->ops->id);
    put_str(o, b->name);
    int32_t n = b->pts ? b->pts->n : 0, nt = b->pts ? b->pts->nt : 0;
    put(o, &n, sizeof n);
    put(o, &nt, sizeof nt);
    uint64_t mh = model_hash(b);
    put(o, &mh, sizeof mh);
    put_u32(o, live_params(b->ops));
    for (int i = 0; i < b->ops->nparams; i++) {
      const param_spec *p = &b->ops->params[i];
      if (!(p->flags & PARAM_LIVE)) continue;
      double v;
      if (loom_body_get_param(w, world_handle(w, w->order[k]), p->name, &v) != 0) return -1;
      if (!strcmp(p->name, "substeps")) {
        /* the stored value (0 = automatic), not the count in use */
        int s;
        memcpy(&s, (const char *)b->data + p->offset, sizeof s);
        v = s;
      }
      put_str(o, p->name);
      put(o, &v, sizeof v);
    }
  }
  put_u32(o, (uint32_t)state);
  if (o->p) {
    if (o->at + (size_t)state > o->cap) return loom_fail("checkpoint: buffer too small");
    if (loom_world_save_state(w, o->p + o->at, state) < 0) return -1;
  }
  o->at += (size_t)state;
  if (o->p) {
    uint32_t total = (uint32_t)o->at;
    memcpy(o->p + 12, &total, sizeof total);
    uint64_t sum = core_fnv1a(CORE_FNV_START, o->p + CKPT_HEADER, o->at - CKPT_HEADER);
    memcpy(o->p + 16, &sum, sizeof sum);
  }
  return 0;
}

LOOM_API int loom_world_checkpoint_size(const loom_world *w, int extra_len) {
  if (!w || extra_len < 0) return loom_fail("checkpoint_size: bad arguments");
  out o = {NULL, 0, 0};
  if (write_all(w, NULL, extra_len, &o) != 0) return -1;
  if (o.at > 0x7fffffff) return loom_fail("checkpoint: larger than 2 GiB");
  return (int)o.at;
}

LOOM_API int loom_world_checkpoint_write(const loom_world *w, const void *extra, int extra_len, void *buf, int size) {
  if (!w || !buf || extra_len < 0 || (extra_len > 0 && !extra)) return loom_fail("checkpoint_write: bad arguments");
  int need = loom_world_checkpoint_size(w, extra_len);
  if (need < 0) return -1;
  if (size < need) return loom_fail("checkpoint_write: buffer of %d bytes, need %d", size, need);
  out o = {buf, (size_t)size, 0};
  if (write_all(w, extra, extra_len, &o) != 0) return -1;
  return (int)o.at;
}

/* ---- reading ---------------------------------------------------------------------------------- */

typedef struct in {
  const unsigned char *p;
  size_t size, at;
  int bad;
} in;

static int get(in *r, void *dst, size_t n) {
  if (r->bad || n > r->size - r->at) return r->bad = 1, -1;
  if (dst) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return 0;
}
static uint32_t get_u32(in *r) {
  uint32_t v = 0;
  get(r, &v, sizeof v);
  return v;
}
/* A string of at most cap - 1 bytes into s (NUL-terminated); -1 if longer or truncated. */
static int get_str(in *r, char *s, size_t cap) {
  uint32_t n = get_u32(r);
  if (r->bad || n >= cap) return r->bad = 1, -1;
  if (get(r, s, n)) return -1;
  s[n] = 0;
  return 0;
}

/* Frame checks shared by load and extra: magic, version, size, checksum. */
static int check_frame(const unsigned char *p, size_t size) {
  if (size < CKPT_HEADER || memcmp(p, CKPT_MAGIC, 8))
    return loom_fail("not a Loom checkpoint (no LOOMCKPT header)");
  uint32_t version, total;
  uint64_t sum;
  memcpy(&version, p + 8, sizeof version);
  memcpy(&total, p + 12, sizeof total);
  memcpy(&sum, p + 16, sizeof sum);
  if (version != CKPT_VERSION)
    return loom_fail("checkpoint format version %u, this Loom reads version %u", version, CKPT_VERSION);
  if (total != size)
    return loom_fail("truncated or extended checkpoint: %zu bytes, the header says %u", size, total);
  if (core_fnv1a(CORE_FNV_START, p + CKPT_HEADER, size - CKPT_HEADER) != sum) return loom_fail("corrupted checkpoint (checksum mismatch)");
  return 0;
}

LOOM_API int loom_world_checkpoint_extra(const void *buf, int size, int *offset, int *len) {
  if (!buf || size < 0) return loom_fail("checkpoint_extra: bad arguments");
  if (check_frame(buf, (size_t)size) != 0) return -1;
  in r = {buf, (size_t)size, CKPT_HEADER, 0};
  uint32_t n = get_u32(&r);
  if (r.bad || n > r.size - r.at) return loom_fail("corrupted checkpoint (extra data)");
  if (offset) *offset = (int)r.at;
  if (len) *len = (int)n;
  return 0;
}

typedef struct pending_param {
  int slot;
  const param_spec *spec;
  double value;
} pending_param;

LOOM_API int loom_world_checkpoint_read(loom_world *w, const void *buf, int size, int force) {
  if (!w || !buf || size < 0) return loom_fail("checkpoint_read: bad arguments");
  const unsigned char *p = buf;
  if (check_frame(p, (size_t)size) != 0) return -1;
  in r = {p, (size_t)size, CKPT_HEADER, 0};
  uint32_t extra = get_u32(&r);
  if (get(&r, NULL, extra)) return loom_fail("corrupted checkpoint (extra data)");
  double dt;
  vec3 g, wind;
  get(&r, &dt, sizeof dt);
  get(&r, &g, sizeof g);
  get(&r, &wind, sizeof wind);
  if (r.bad) return loom_fail("corrupted checkpoint (world)");
  if (!(dt > 0 && dt <= 1) || !v3_isfinite(g) || !v3_isfinite(wind)) return loom_fail("corrupted checkpoint (dt, gravity or wind out of range)");
  uint32_t nb = get_u32(&r);
  if (r.bad) return loom_fail("corrupted checkpoint (body count)");
  if ((int)nb != w->order_count)
    return loom_fail("the checkpoint has %u bodies, this world has %d: it was saved from another scene", nb,
                     w->order_count);
  /* parameters are applied only after everything checked out */
  int nparams = 0;
  for (int k = 0; k < w->order_count; k++) nparams += w->bodies[w->order[k]].ops->nparams;
  arena_mark mark = arena_get_mark(&w->scratch);
  pending_param *pend = ARENA_NEW(&w->scratch, pending_param, nparams + 1, "checkpoint parameters");
  int npend = 0;
  int rc = 0;
  char name[256];
  for (int k = 0; k < w->order_count && rc == 0; k++) {
    const int slot = w->order[k];
    const body_slot *b = &w->bodies[slot];
    uint32_t kind = get_u32(&r);
    if (get_str(&r, name, sizeof name)) {
      rc = loom_fail("corrupted checkpoint (body %d)", k + 1);
      break;
    }
    int32_t n = 0, nt = 0;
    uint64_t mh = 0;
    get(&r, &n, sizeof n);
    get(&r, &nt, sizeof nt);
    get(&r, &mh, sizeof mh);
    if (r.bad) {
      rc = loom_fail("corrupted checkpoint (body %d)", k + 1);
      break;
    }
    const body_kind *kk = world_kind((int)kind);
    if (strcmp(name, b->name) || (int)kind != b->ops->id) {
      rc = loom_fail("body %d is %s '%s' in the checkpoint but %s '%s' in this world", k + 1, kk ? kk->name : "?", name,
                     b->ops->name, b->name);
      break;
    }
    int have_n = b->pts ? b->pts->n : 0, have_nt = b->pts ? b->pts->nt : 0;
    if (n != have_n || nt != have_nt) {
      rc = loom_fail("%s '%s' has %d vertices and %d triangles here, %d and %d in the checkpoint", b->ops->name, b->name,
                     have_n, have_nt, n, nt);
      break;
    }
    if (mh != model_hash(b) && !force) {
      rc = loom_fail("%s '%s' differs from the checkpoint's (topology, rest shape, masses, model or integrator); "
                     "load with force = true to apply the state anyway",
                     b->ops->name, b->name);
      break;
    }
    uint32_t np = get_u32(&r);
    for (uint32_t i = 0; i < np && rc == 0; i++) {
      double v = 0;
      if (get_str(&r, name, sizeof name) || get(&r, &v, sizeof v)) {
        rc = loom_fail("corrupted checkpoint (parameters of '%s')", b->name);
        break;
      }
      const param_spec *spec = NULL;
      for (int q = 0; q < b->ops->nparams; q++)
        if (!strcmp(b->ops->params[q].name, name) && (b->ops->params[q].flags & PARAM_LIVE)) spec = &b->ops->params[q];
      if (!spec) {
        if (!force)
          rc = loom_fail("%s '%s': the checkpoint sets parameter '%s', which this Loom does not have; load with force "
                         "= true to ignore it",
                         b->ops->name, b->name, name);
        continue;
      }
      if (pend && npend < nparams) pend[npend++] = (pending_param){slot, spec, v};
    }
  }
  uint32_t slen = 0;
  if (rc == 0) {
    slen = get_u32(&r);
    if (r.bad || slen != r.size - r.at) rc = loom_fail("corrupted checkpoint (state length)");
  }
  /* check the state against the world without applying it, then apply everything */
  if (rc == 0) {
    int n = loom_world_state_size(w);
    unsigned char *save = n > 0 ? ARENA_NEW(&w->scratch, unsigned char, n, "state before checkpoint") : NULL;
    if (!save || loom_world_save_state(w, save, n) < 0) {
      rc = -1;
    } else if (loom_world_load_state(w, p + r.at, (int)slen) != 0) {
      loom_error_prefix("checkpoint");
      rc = -1;
    } else {
      w->dt = dt;
      w->gravity = g;
      w->wind = wind;
      for (int i = 0; i < npend && rc == 0; i++) {
        particles *q = w->bodies[pend[i].slot].pts;
        /* what the next step looks for is the state's (the original's, saved after its own
         * parameter changes); setting a parameter here, where the world was built with another
         * (self_collision turned on), is not a change to look for */
        const int tangles = q ? q->col.check_tangles : 0, obstacles = q ? q->check_obstacles : 0;
        if (loom_body_set_param(w, world_handle(w, pend[i].slot), pend[i].spec->name, pend[i].value) != 0) {
          loom_error_prefix("checkpoint");
          rc = -1;
        }
        if (q) q->col.check_tangles = tangles, q->check_obstacles = obstacles;
      }
      if (rc != 0) loom_world_load_state(w, save, n); /* a parameter out of range: back to where it was */
      for (int o = 0; o < w->order_count; o++) {
        body_slot *b = &w->bodies[w->order[o]];
        if (b->ops->param_changed) b->ops->param_changed(w, b, NULL);
      }
    }
  }
  arena_release(&w->scratch, mark);
  return rc;
}
