/* world_query.c — read-only questions about a world: energy, state hash, exact interpenetration
 * count, ray picking. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/world.h"

LOOM_API void loom_world_energy(const loom_world *w, double *kinetic, double *potential, double *elastic) {
  double ke = 0, pe = 0, el = 0;
  if (w) {
    for (int o = 0; o < w->order_count; o++) {
      const soft_body *b = w->bodies[w->order[o]].soft;
      if (!b) continue;
      for (int i = 0; i < b->n; i++) {
        ke += 0.5 * b->mass[i] * v3_len2(b->v[i]);
        pe -= b->mass[i] * v3_dot(w->gravity, b->x[i]);
      }
      el += soft_elastic_energy(b, b->x);
    }
  }
  if (kinetic) *kinetic = ke;
  if (potential) *potential = pe;
  if (elastic) *elastic = el;
}

/* ---- hash --------------------------------------------------------------------------------------- */

/* FNV-1a, 64-bit: simple, stable across builds and platforms of the same endianness. */
typedef struct hasher { uint64_t h; } hasher;
static void hash_bytes(hasher *s, const void *p, size_t n) {
  const unsigned char *c = p;
  uint64_t h = s->h;
  for (size_t i = 0; i < n; i++) {
    h ^= c[i];
    h *= 1099511628211ull;
  }
  s->h = h;
}
static void hash_int(hasher *s, int v) { hash_bytes(s, &v, sizeof v); }
static void hash_double(hasher *s, double v) { hash_bytes(s, &v, sizeof v); }

LOOM_API int loom_world_hash(const loom_world *w, char *out, int cap) {
  if (!w || !out || cap < 17) return loom_fail("loom_world_hash: need a world and a 17-byte buffer");
  hasher s = {1469598103934665603ull};
  hash_double(&s, w->time);
  hash_double(&s, w->steps);
  for (int o = 0; o < w->order_count; o++) {
    const body_slot *bd = &w->bodies[w->order[o]];
    hash_bytes(&s, bd->name, strlen(bd->name));
    if (bd->soft) {
      const soft_body *b = bd->soft;
      hash_int(&s, b->n);
      hash_bytes(&s, b->x, sizeof(vec3) * (size_t)b->n);
      hash_bytes(&s, b->v, sizeof(vec3) * (size_t)b->n);
      hash_int(&s, b->frozen);
      hash_int(&s, b->has_prev);
      if (b->has_prev) hash_bytes(&s, b->x_prev, sizeof(vec3) * (size_t)b->n);
    } else {
      const rigid_body *r = bd->rigid;
      hash_bytes(&s, &r->pos, sizeof r->pos);
      hash_bytes(&s, &r->q, sizeof r->q);
      hash_bytes(&s, &r->vel, sizeof r->vel);
      hash_bytes(&s, &r->omega, sizeof r->omega);
    }
  }
  for (int g = 0; g < w->group_slots; g++) {
    const pin_group *p = &w->groups[g];
    if (!p->alive) continue;
    hash_int(&s, p->body);
    hash_int(&s, p->held);
    hash_bytes(&s, &p->offset, sizeof p->offset);
    hash_bytes(&s, &p->target, sizeof p->target);
    hash_bytes(&s, p->rest, sizeof(vec3) * (size_t)p->count);
  }
  snprintf(out, (size_t)cap, "%016llx", (unsigned long long)s.h);
  return 0;
}

/* ---- interpenetrations ----------------------------------------------------------------------------- */

typedef struct tri_ref {
  int32_t slot, t;
  vec3 lo, hi;
} tri_ref;

static int cmp_tri_ref(const void *a, const void *b) {
  const tri_ref *x = a, *y = b;
  if (x->lo.x < y->lo.x) return -1;
  if (x->lo.x > y->lo.x) return 1;
  if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
  return x->t < y->t ? -1 : (x->t > y->t);
}

static int boxes_overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

static int soft_pair_intersects(const loom_world *w, const tri_ref *A, const tri_ref *B) {
  const soft_body *ba = w->bodies[A->slot].soft, *bb = w->bodies[B->slot].soft;
  const int32_t *ta = &ba->tri[3 * A->t], *tb = &bb->tri[3 * B->t];
  vec3 a[3], b[3];
  for (int k = 0; k < 3; k++) {
    a[k] = ba->x[ta[k]];
    b[k] = bb->x[tb[k]];
  }
  if (A->slot == B->slot) {
    int shared = 0, ia = -1, ib = -1;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        if (ta[i] == tb[j]) {
          shared++;
          ia = i;
          ib = j;
        }
    if (shared >= 2) return 0; /* neighbours across an edge: they touch along it by construction */
    if (shared == 1)
      return geom_tri_tri_shared_vertex(a[ia], a[(ia + 1) % 3], a[(ia + 2) % 3], b[(ib + 1) % 3], b[(ib + 2) % 3]);
  }
  return geom_tri_tri_intersect(a[0], a[1], a[2], b[0], b[1], b[2]);
}

typedef struct mesh_pair_ctx {
  const loom_mesh *m;
  vec3 a[3];
  int count;
} mesh_pair_ctx;

static int mesh_pair_cb(int t, void *ud) {
  mesh_pair_ctx *c = ud;
  const loom_mesh *m = c->m;
  if (geom_tri_tri_intersect(c->a[0], c->a[1], c->a[2], m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]]))
    c->count++;
  return 0;
}

LOOM_API int loom_world_interpenetrations(loom_world *w) {
  if (!w) return loom_fail("interpenetrations: world is NULL");
  int total = 0;
  for (int o = 0; o < w->order_count; o++)
    if (w->bodies[w->order[o]].soft) total += w->bodies[w->order[o]].soft->nt;
  arena_mark mark = arena_get_mark(&w->scratch);
  tri_ref *refs = ARENA_NEW(&w->scratch, tri_ref, total, "interpenetration boxes");
  if (!refs) {
    arena_release(&w->scratch, mark);
    return -1;
  }
  int k = 0;
  for (int o = 0; o < w->order_count; o++) {
    int slot = w->order[o];
    const soft_body *b = w->bodies[slot].soft;
    if (!b) continue;
    for (int t = 0; t < b->nt; t++) {
      vec3 p = b->x[b->tri[3 * t]], q = b->x[b->tri[3 * t + 1]], r = b->x[b->tri[3 * t + 2]];
      refs[k].slot = slot;
      refs[k].t = t;
      refs[k].lo = v3_min(p, v3_min(q, r));
      refs[k].hi = v3_max(p, v3_max(q, r));
      k++;
    }
  }
  qsort(refs, (size_t)total, sizeof(tri_ref), cmp_tri_ref);
  int count = 0;
  /* sweep along x: candidate pairs overlap in x, then in y and z */
  for (int i = 0; i < total; i++) {
    for (int j = i + 1; j < total && refs[j].lo.x <= refs[i].hi.x; j++) {
      if (!boxes_overlap(refs[i].lo, refs[i].hi, refs[j].lo, refs[j].hi)) continue;
      count += soft_pair_intersects(w, &refs[i], &refs[j]);
    }
  }
  /* soft triangles against obstacle solids */
  for (int o = 0; o < w->order_count; o++) {
    const rigid_body *r = w->bodies[w->order[o]].rigid;
    if (!r) continue;
    vec3 rlo, rhi;
    rigid_swept_aabb(r, 0, &rlo, &rhi);
    for (int i = 0; i < total; i++) {
      if (!boxes_overlap(refs[i].lo, refs[i].hi, rlo, rhi)) continue;
      const soft_body *b = w->bodies[refs[i].slot].soft;
      vec3 a[3];
      for (int c = 0; c < 3; c++) a[c] = q_rotate_inv(r->q, v3_sub(b->x[b->tri[3 * refs[i].t + c]], r->pos));
      if (r->shape_type == LOOM_SHAPE_MESH) {
        mesh_pair_ctx mc = {r->mesh, {a[0], a[1], a[2]}, 0};
        bvh_query_box(&r->tree, v3_min(a[0], v3_min(a[1], a[2])), v3_max(a[0], v3_max(a[1], a[2])), mesh_pair_cb, &mc);
        count += mc.count;
      } else {
        /* penetration deeper than 1 nm counts: touching the surface is not an interpenetration */
        count += geom_triangle_overlaps_shape(&r->shape, a[0], a[1], a[2], 1e-9);
      }
    }
  }
  arena_release(&w->scratch, mark);
  return count;
}

/* ---- picking ----------------------------------------------------------------------------------------- */

LOOM_API int loom_world_raycast(const loom_world *w, const loom_vec3 *origin, const loom_vec3 *dir, int *body,
                                int *vertex, double *s) {
  if (!w || !origin || !dir || !v3_isfinite(*origin) || !v3_isfinite(*dir) || !(v3_len2(*dir) > 0)) return 0;
  double best = INFINITY;
  int best_slot = -1, best_vertex = -1;
  for (int o = 0; o < w->order_count; o++) {
    int slot = w->order[o];
    const soft_body *b = w->bodies[slot].soft;
    if (!b) continue;
    for (int t = 0; t < b->nt; t++) {
      const int32_t *tv = &b->tri[3 * t];
      double hit;
      if (!geom_ray_triangle(*origin, *dir, b->x[tv[0]], b->x[tv[1]], b->x[tv[2]], &hit) || !(hit < best)) continue;
      best = hit;
      best_slot = slot;
      vec3 p = v3_madd(*origin, *dir, hit);
      double bd = INFINITY;
      for (int c = 0; c < 3; c++) {
        double d = v3_dist2(p, b->x[tv[c]]);
        if (d < bd) {
          bd = d;
          best_vertex = tv[c];
        }
      }
    }
  }
  if (best_slot < 0) return 0;
  if (body) *body = world_handle(w, best_slot);
  if (vertex) *vertex = best_vertex;
  if (s) *s = best;
  return 1;
}
