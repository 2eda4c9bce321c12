/* world_query.c — read-only questions about a world: energy and ray picking. (The state hash is
 * in world_state.c, from the state field lists; interpenetrations in contact/contact_query.c.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/world.h"

LOOM_API void loom_world_energy(const loom_world *w, double *kinetic, double *potential, double *elastic) {
  double ke = 0, pe = 0, el = 0;
  if (w) {
    for (int o = 0; o < w->order_count; o++) {
      const body_slot *bd = &w->bodies[w->order[o]];
      const particles *b = bd->pts;
      if (b && b->frozen) continue; /* the divergence guard's state is not physics (it may hold NaN) */
      if (b)
        for (int i = 0; i < b->n; i++) {
          ke += 0.5 * b->m[i] * v3_len2(b->v[i]);
          pe -= b->m[i] * v3_dot(w->gravity, b->x[i]);
        }
      if (bd->ops->elastic_energy) el += bd->ops->elastic_energy(bd);
      if (bd->ops->energy) bd->ops->energy(bd, w->gravity, &ke, &pe);
    }
  }
  if (kinetic) *kinetic = ke;
  if (potential) *potential = pe;
  if (elastic) *elastic = el;
}

/* ---- picking ----------------------------------------------------------------------------------------- */

LOOM_API int loom_world_raycast(const loom_world *w, const loom_vec3 *origin, const loom_vec3 *dir, int *body,
                                int *vertex, double *s) {
  if (!w || !origin || !dir || !v3_isfinite(*origin) || !v3_isfinite(*dir) || !(v3_len2(*dir) > 0)) return 0;
  double best = INFINITY;
  int best_slot = -1, best_vertex = -1;
  for (int o = 0; o < w->order_count; o++) {
    int slot = w->order[o];
    const particles *b = w->bodies[slot].pts;
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
