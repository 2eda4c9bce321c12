/* contact_query.c — the exact interpenetration count: particle-body triangles against each other
 * (including a body's own, neighbours excluded) and against rigid solids. A question about
 * contacts between kinds, so it lives where the kinds meet. */
#include <stdlib.h>

#include "contact/contact.h"

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

static int soft_pair_intersects(const loom_world *w, const tri_ref *A, const tri_ref *B) {
  const particles *ba = w->bodies[A->slot].pts, *bb = w->bodies[B->slot].pts;
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
    if (w->bodies[w->order[o]].pts) total += w->bodies[w->order[o]].pts->nt;
  arena_mark mark = arena_get_mark(&w->scratch);
  tri_ref *refs = ARENA_NEW(&w->scratch, tri_ref, total, "interpenetration boxes");
  if (!refs) {
    arena_release(&w->scratch, mark);
    return -1;
  }
  int k = 0;
  for (int o = 0; o < w->order_count; o++) {
    int slot = w->order[o];
    const particles *b = w->bodies[slot].pts;
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
      if (!bvh_box_overlap(refs[i].lo, refs[i].hi, refs[j].lo, refs[j].hi)) continue;
      count += soft_pair_intersects(w, &refs[i], &refs[j]);
    }
  }
  /* soft triangles against obstacle solids */
  for (int o = 0; o < w->order_count; o++) {
    const body_slot *rb = &w->bodies[w->order[o]];
    if (rb->ops->id != LOOM_KIND_RIGID) continue;
    const rigid_body *r = rigid_of_slot(rb);
    vec3 rlo, rhi;
    rigid_swept_aabb(r, 0, &rlo, &rhi);
    for (int i = 0; i < total; i++) {
      if (!bvh_box_overlap(refs[i].lo, refs[i].hi, rlo, rhi)) continue;
      const particles *b = w->bodies[refs[i].slot].pts;
      vec3 a[3];
      for (int c = 0; c < 3; c++)
        a[c] = q_rotate_inv(r->state.q, v3_sub(b->x[b->tri[3 * refs[i].t + c]], r->state.pos));
      if (r->model.shape_type == LOOM_SHAPE_MESH) {
        mesh_pair_ctx mc = {r->model.mesh, {a[0], a[1], a[2]}, 0};
        bvh_query_box(&r->model.tree, v3_min(a[0], v3_min(a[1], a[2])), v3_max(a[0], v3_max(a[1], a[2])),
                      mesh_pair_cb, &mc);
        count += mc.count;
      } else {
        /* penetration deeper than 1 nm counts: touching the surface is not an interpenetration */
        count += geom_triangle_overlaps_shape(&r->model.shape, a[0], a[1], a[2], 1e-9);
      }
    }
  }
  arena_release(&w->scratch, mark);
  return count;
}

