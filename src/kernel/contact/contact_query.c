/* contact_query.c — the exact interpenetration count: particle-body triangles against each other
 * (including a body's own, neighbours excluded) and against rigid solids, except between two
 * bodies that world:pair lets pass through each other (collide = false: their crossings are asked
 * for, not interpenetrations). A question about contacts between kinds, so it lives where the
 * kinds meet. */
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

/* Appends the boxes of a body's triangles at positions x to refs from index k; the new count. */
static int add_refs(tri_ref *refs, int k, const particles *b, int slot, const vec3 *x) {
  for (int t = 0; t < b->nt; t++) {
    const vec3 p = x[b->tri[3 * t]], q = x[b->tri[3 * t + 1]], r = x[b->tri[3 * t + 2]];
    refs[k].slot = slot;
    refs[k].t = t;
    refs[k].lo = v3_min(p, v3_min(q, r));
    refs[k].hi = v3_max(p, v3_max(q, r));
    k++;
  }
  return k;
}

static const vec3 *positions(const particles *p, int at_substep_start) { return at_substep_start ? p->x_sub : p->x; }

static int soft_pair_intersects(const loom_world *w, const tri_ref *A, const tri_ref *B, int start) {
  const particles *ba = w->bodies[A->slot].pts, *bb = w->bodies[B->slot].pts;
  const int32_t *ta = &ba->tri[3 * A->t], *tb = &bb->tri[3 * B->t];
  const vec3 *xa = positions(ba, start), *xb = positions(bb, start);
  vec3 a[3], b[3];
  for (int k = 0; k < 3; k++) {
    a[k] = xa[ta[k]];
    b[k] = xb[tb[k]];
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

/* Where crossings are listed (optional): 4 integers each, body handle and triangle of the
 * particle body, then the other body's handle and its triangle (-1: an analytic solid). */
typedef struct cross_out {
  const loom_world *w;
  int32_t *out;
  int cap, n;
} cross_out;

static void cross_add(cross_out *o, int slot_a, int ta, int slot_b, int tb) {
  if (o->out && o->n < o->cap) {
    int32_t *r = &o->out[4 * o->n];
    r[0] = (int32_t)world_handle(o->w, slot_a);
    r[1] = ta;
    r[2] = (int32_t)world_handle(o->w, slot_b);
    r[3] = tb;
  }
  o->n++;
}

typedef struct mesh_pair_ctx {
  const loom_mesh *m;
  vec3 a[3];
  int count;
  cross_out *o;
  int slot_a, ta, slot_b;
} mesh_pair_ctx;

static int mesh_pair_cb(int t, void *ud) {
  mesh_pair_ctx *c = ud;
  const loom_mesh *m = c->m;
  if (geom_tri_tri_intersect(c->a[0], c->a[1], c->a[2], m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]])) {
    c->count++;
    cross_add(c->o, c->slot_a, c->ta, c->slot_b, t);
  }
  return 0;
}

/* Sorts the triangle boxes along x and sweeps them: fn for each pair of particle-body triangles
 * that cross (at x_sub if start, else at x); pairs within one body only if self is NULL or that
 * body's flag among slots is set; none between two bodies that world:pair lets pass through each
 * other (collide = false). The number of crossing pairs. */
static int soft_sweep(const loom_world *w, tri_ref *refs, int n, int start, const int *slots, const unsigned char *self,
                      int nslots, void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud) {
  qsort(refs, (size_t)n, sizeof(tri_ref), cmp_tri_ref);
  int count = 0;
  /* candidate pairs overlap in x, then in y and z */
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n && refs[j].lo.x <= refs[i].hi.x; j++) {
      if (!bvh_box_overlap(refs[i].lo, refs[i].hi, refs[j].lo, refs[j].hi)) continue;
      if (world_pair_off(w, refs[i].slot, refs[j].slot)) continue;
      /* the pipeline leaves pairs of depth-contact solids to contact_solid.c */
      if (self && refs[i].slot != refs[j].slot && w->bodies[refs[i].slot].pts->depth_contact &&
          w->bodies[refs[j].slot].pts->depth_contact)
        continue;
      if (self && refs[i].slot == refs[j].slot) {
        int selfok = 0;
        for (int k = 0; k < nslots; k++)
          if (slots[k] == refs[i].slot) selfok = self[k];
        if (!selfok) continue;
      }
      if (!soft_pair_intersects(w, &refs[i], &refs[j], start)) continue;
      count++;
      fn(refs[i].slot, refs[i].t, refs[j].slot, refs[j].t, ud);
    }
  return count;
}

static void cross_cb(int slot_a, int ta, int slot_b, int tb, void *ud) { cross_add(ud, slot_a, ta, slot_b, tb); }

/* Triangle t of particle body `slot` at positions x against rigid body `rslot` at pose (pos, q),
 * whose box there lo..hi the caller has: the mesh triangles it crosses (each listed in o), or 1
 * when it overlaps an analytic solid by more than 1 nm (touching the surface is not an
 * interpenetration). */
static int triangle_across_rigid(const loom_world *w, int slot, const vec3 *x, int t, int rslot, vec3 pos, quat q,
                                 vec3 rlo, vec3 rhi, cross_out *o) {
  const particles *b = w->bodies[slot].pts;
  const rigid_body *r = rigid_of_slot(&w->bodies[rslot]);
  const int32_t *tv = &b->tri[3 * t];
  if (!bvh_box_overlap(v3_min(x[tv[0]], v3_min(x[tv[1]], x[tv[2]])), v3_max(x[tv[0]], v3_max(x[tv[1]], x[tv[2]])), rlo, rhi))
    return 0;
  vec3 a[3];
  for (int c = 0; c < 3; c++) a[c] = q_rotate_inv(q, v3_sub(x[tv[c]], pos));
  if (rigid_shape_has_mesh(r->model.shape_type)) {
    mesh_pair_ctx mc = {r->model.mesh, {a[0], a[1], a[2]}, 0, o, slot, t, rslot};
    bvh_query_box(&r->model.tree, v3_min(a[0], v3_min(a[1], a[2])), v3_max(a[0], v3_max(a[1], a[2])), mesh_pair_cb, &mc);
    return mc.count;
  }
  if (!geom_triangle_overlaps_shape(&r->model.shape, a[0], a[1], a[2], 1e-9)) return 0;
  cross_add(o, slot, t, rslot, -1);
  return 1;
}

static int interpenetrations(loom_world *w, int32_t *out, int cap) {
  cross_out co = {w, out, cap, 0};
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
    if (b) k = add_refs(refs, k, b, slot, b->x);
  }
  int count = soft_sweep(w, refs, total, 0, NULL, NULL, 0, cross_cb, &co);
  /* soft triangles against obstacle solids */
  for (int o_ = 0; o_ < w->order_count; o_++) {
    const body_slot *rb = &w->bodies[w->order[o_]];
    if (rb->ops->id != LOOM_KIND_RIGID) continue;
    vec3 rlo, rhi;
    const rigid_body *r = rigid_of_slot(rb);
    rigid_current_aabb(r, 0, &rlo, &rhi); /* where it is (the swept box is the last step's motion) */
    for (int i = 0; i < total; i++) {
      if (world_pair_off(w, refs[i].slot, w->order[o_])) continue;
      count += triangle_across_rigid(w, refs[i].slot, w->bodies[refs[i].slot].pts->x, refs[i].t, w->order[o_],
                                     r->state.pos, r->state.q, rlo, rhi, &co);
    }
  }
  arena_release(&w->scratch, mark);
  return count;
}

LOOM_API int loom_world_interpenetrations(loom_world *w) {
  if (!w) return loom_fail("interpenetrations: world is NULL");
  return interpenetrations(w, NULL, 0);
}

LOOM_API int loom_world_interpenetration_pairs(loom_world *w, int32_t *out, int cap) {
  if (!w) return loom_fail("interpenetration pairs: world is NULL");
  if (cap < 0 || (cap > 0 && !out)) return loom_fail("interpenetration pairs: no room for %d pairs", cap);
  return interpenetrations(w, out, cap);
}

/* Whether a node of triangle t of b, at x, is pinned within rigid body rslot's contact margin. */
static int pinned_in(const loom_world *w, const particles *b, const vec3 *x, int t, int rslot) {
  int in = 0;
  for (int c = 0; c < 3 && !in; c++) in = contact_pin_in_margin(&w->bodies[rslot], b, b->tri[3 * t + c], x[b->tri[3 * t + c]]);
  return in;
}

int contact_triangle_across(const loom_world *w, int slot, const vec3 *x, int t, int rslot, vec3 pos, quat q, vec3 rlo,
                            vec3 rhi) {
  cross_out none = {w, NULL, 0, 0};
  if (!triangle_across_rigid(w, slot, x, t, rslot, pos, q, rlo, rhi, &none)) return 0;
  /* an element with a node pinned inside the body's contact margin is the user's (warned when the
   * pins were made; pins ignore contacts) */
  return !pinned_in(w, w->bodies[slot].pts, x, t, rslot);
}

int contact_obstacle_crossings(loom_world *w, int slot, int meshes, obstacle_crossing_info *out) {
  const particles *b = w->bodies[slot].pts;
  obstacle_crossing_info r0 = {0, -1, -1, 0, -1, -1, {0}, 0};
  *out = r0;
  vec3 blo = b->x[0], bhi = b->x[0]; /* the body's box: rigid bodies away from it are passed over */
  for (int i = 1; i < b->n; i++) blo = v3_min(blo, b->x[i]), bhi = v3_max(bhi, b->x[i]);
  for (int o = 0; o < w->order_count; o++) {
    const int rslot = w->order[o];
    const body_slot *rb = &w->bodies[rslot];
    if (rb->ops->id != LOOM_KIND_RIGID || world_pair_off(w, slot, rslot)) continue;
    const rigid_body *r = rigid_of_slot(rb);
    /* a mesh not flagged is still tested where a pin holds the cloth in its margin: the contact
     * passes leave such an element alone, so nothing else would ever find it across */
    const int mesh_pinned_only = rigid_shape_has_mesh(r->model.shape_type) && !meshes;
    vec3 rlo, rhi;
    rigid_current_aabb(r, 0, &rlo, &rhi);
    if (!bvh_box_overlap(blo, bhi, rlo, rhi)) continue;
    if (mesh_pinned_only && pins_in_margin(w, slot, -1, rslot, NULL) == 0) continue;
    for (int t = 0; t < b->nt; t++) {
      int held = mesh_pinned_only ? pinned_in(w, b, b->x, t, rslot) : 0;
      if (mesh_pinned_only && !held) continue;
      cross_out none = {w, NULL, 0, 0};
      if (!triangle_across_rigid(w, slot, b->x, t, rslot, r->state.pos, r->state.q, rlo, rhi, &none)) continue;
      if (!mesh_pinned_only) held = pinned_in(w, b, b->x, t, rslot);
      if (!held) {
        if (out->count++ == 0) out->first_tri = t, out->first_rigid = rslot;
        continue;
      }
      /* held across by the user's pins: the pinned nodes, for the message */
      if (out->pinned++ == 0) out->pinned_tri = t, out->pinned_rigid = rslot;
      if (rslot != out->pinned_rigid) continue;
      for (int c = 0; c < 3; c++) {
        const int v = b->tri[3 * t + c];
        if (!contact_pin_in_margin(rb, b, v, b->x[v])) continue;
        int seen = 0;
        for (int k = 0; k < out->npinned_vertex && !seen; k++) seen = out->pinned_vertex[k] == v;
        if (!seen && out->npinned_vertex < (int)(sizeof out->pinned_vertex / sizeof out->pinned_vertex[0]))
          out->pinned_vertex[out->npinned_vertex++] = v;
      }
    }
  }
  return out->count + out->pinned;
}

/* Crossings among the triangles of the given particle bodies at the start of the substep
 * (x_sub), self pairs only for bodies with self set: fn(slot_a, ta, slot_b, tb, ud) for each.
 * The count, or -1 when out of scratch memory. */
static int soft_crossings(loom_world *w, int start, const int *slots, const unsigned char *self, int nslots,
                          void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud) {
  int total = 0;
  for (int k = 0; k < nslots; k++) total += w->bodies[slots[k]].pts->nt;
  arena_mark mark = arena_get_mark(&w->scratch);
  tri_ref *refs = ARENA_NEW(&w->scratch, tri_ref, total ? total : 1, "crossing boxes");
  if (!refs) return -1;
  int n = 0;
  for (int k = 0; k < nslots; k++) {
    const particles *p = w->bodies[slots[k]].pts;
    n = add_refs(refs, n, p, slots[k], positions(p, start));
  }
  const int count = soft_sweep(w, refs, n, start, slots, self, nslots, fn, ud);
  arena_release(&w->scratch, mark);
  return count;
}

int contact_soft_crossings_at_start(loom_world *w, const int *slots, const unsigned char *self, int nslots,
                                    void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud) {
  return soft_crossings(w, 1, slots, self, nslots, fn, ud);
}

int contact_soft_crossings_now(loom_world *w, const int *slots, const unsigned char *self, int nslots,
                               void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud) {
  return soft_crossings(w, 0, slots, self, nslots, fn, ud);
}
