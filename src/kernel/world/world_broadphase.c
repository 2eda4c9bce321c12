/* world_broadphase.c — sweep and prune over the bodies' boxes of the current substep: boxes
 * sorted by their lower x (insertion sort: the order barely changes from substep to substep, and
 * ties keep creation order, so the result is deterministic), overlapping pairs tested in y and z.
 * Only pairs that some contact family handles are kept: a particle body with a rigid one, and two
 * rigid bodies of which one is dynamic. Pairs come out ordered by the
 * particle body's creation order, then the other's, which fixes the order solvers meet them in. */
#include <stdlib.h>

#include "world/world.h"

typedef struct box_ref {
  vec3 lo, hi;
  int order; /* index in creation order */
} box_ref;

/* A rigid body that moves by itself (dynamic), as far as the broad phase can tell without the rigid
 * kind's header: its kind and motion come from the public query. */
static int rigid_dynamic(const loom_world *w, int slot) {
  const body_slot *b = &w->bodies[slot];
  if (b->ops->id != LOOM_KIND_RIGID || !b->ops->moves) return 0;
  return b->ops->moves(b);
}

static int pair_wanted(const loom_world *w, int a, int b) {
  const body_slot *A = &w->bodies[a], *B = &w->bodies[b];
  const pair_override *o = world_pair_override(w, a, b);
  if (o && !o->collide) return 0; /* world:pair(a, b, {collide = false}) */
  if (A->pts && !A->pts->frozen && !B->pts) return 1;
  /* rigid pairs with a dynamic body, once (the lower slot first) */
  if (!A->pts && !B->pts && a < b && (rigid_dynamic(w, a) || rigid_dynamic(w, b))) return 1;
  return 0;
}

static int cmp_pair(const void *pa, const void *pb) {
  const int *a = pa, *b = pb; /* order indices packed into body_pair before mapping to slots */
  if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
  return (a[1] > b[1]) - (a[1] < b[1]);
}

/* With few candidate pairs, boxes cost more than they save (each pair's narrow phase tests every
 * vertex path against the obstacle's box anyway): every wanted pair is emitted in order, and the
 * particle bodies' boxes are left unknown (infinite), which sends narrow phases to their linear
 * pass. The result does not depend on which way was taken. */
#define BROADPHASE_MIN_PAIRS 8

static int all_pairs(loom_world *w) {
  int count = 0; /* (stops counting past the threshold: the loop is quadratic in the bodies) */
  for (int a = 0; a < w->order_count && count <= BROADPHASE_MIN_PAIRS; a++)
    for (int b = 0; b < w->order_count && count <= BROADPHASE_MIN_PAIRS; b++)
      if (a != b && pair_wanted(w, w->order[a], w->order[b])) count++;
  if (count > BROADPHASE_MIN_PAIRS) return 0;
  for (int a = 0; a < w->order_count; a++) {
    particles *p = w->bodies[w->order[a]].pts;
    if (p) {
      p->sub_lo = v3(-INFINITY, -INFINITY, -INFINITY);
      p->sub_hi = v3(INFINITY, INFINITY, INFINITY);
    }
    for (int b = 0; b < w->order_count; b++)
      if (a != b && pair_wanted(w, w->order[a], w->order[b])) w->pairs[w->npairs++] = (body_pair){w->order[a], w->order[b]};
  }
  return 1;
}

void broadphase_pairs(loom_world *w, const step_info *s) {
  w->npairs = 0;
  const int n = w->order_count;
  if (n < 2 || !w->pairs) return; /* (a lone body has no pairs; nobody reads its box) */
  if (all_pairs(w)) return;
  arena_mark mark = arena_get_mark(&w->scratch);
  box_ref *refs = ARENA_NEW(&w->scratch, box_ref, n, "broad-phase boxes");
  if (!refs) return;
  for (int o = 0; o < n; o++) {
    const body_slot *b = &w->bodies[w->order[o]];
    refs[o].order = o;
    if (b->ops->bounds)
      b->ops->bounds(w, b, s, &refs[o].lo, &refs[o].hi);
    else
      refs[o].lo = v3(INFINITY, INFINITY, INFINITY), refs[o].hi = v3(-INFINITY, -INFINITY, -INFINITY);
    if (b->pts) {
      b->pts->sub_lo = refs[o].lo;
      b->pts->sub_hi = refs[o].hi;
    }
  }
  for (int i = 1; i < n; i++) {
    box_ref r = refs[i];
    int j = i - 1;
    while (j >= 0 && (refs[j].lo.x > r.lo.x || (refs[j].lo.x == r.lo.x && refs[j].order > r.order))) {
      refs[j + 1] = refs[j];
      j--;
    }
    refs[j + 1] = r;
  }
  const int cap = n * n / 2 + 1;
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n && refs[j].lo.x <= refs[i].hi.x; j++) {
      if (!bvh_box_overlap(refs[i].lo, refs[i].hi, refs[j].lo, refs[j].hi)) continue;
      int oa = refs[i].order, ob = refs[j].order;
      int sa = w->order[oa], sb = w->order[ob];
      if (!pair_wanted(w, sa, sb)) {
        if (!pair_wanted(w, sb, sa)) continue;
        int t = oa;
        oa = ob;
        ob = t;
      }
      if (w->npairs < cap) w->pairs[w->npairs++] = (body_pair){oa, ob};
    }
  }
  LOOM_ASSERT(w->npairs <= cap, "pair list fits the scratch reserved at begin");
  qsort(w->pairs, (size_t)w->npairs, sizeof(body_pair), cmp_pair);
  for (int i = 0; i < w->npairs; i++) w->pairs[i] = (body_pair){w->order[w->pairs[i].a], w->order[w->pairs[i].b]};
  arena_release(&w->scratch, mark);
}
