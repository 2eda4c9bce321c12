/* cloth_elements.c — the contact elements of a cloth, built once: unique edges, the
 * triangle-to-edge map (each edge is tested once, by its first triangle), triangle boxes and the
 * triangle tree that contact passes refit. */
#include <string.h>

#include "cloth/cloth.h"

int cloth_build_elements(cloth_body *b, const loom_mesh *m) {
  b->model.ne = m->ne;
  b->model.edge = core_alloc((size_t)(m->ne ? m->ne : 1) * 2, sizeof(int32_t));
  b->model.tri_edge = core_alloc((size_t)m->nt * 3, sizeof(int32_t));
  b->model.edge_owner = core_alloc((size_t)(m->ne ? m->ne : 1), sizeof(int32_t));
  b->cache.tri_lo = core_alloc((size_t)m->nt, sizeof(vec3));
  b->cache.tri_hi = core_alloc((size_t)m->nt, sizeof(vec3));
  if (!b->model.edge || !b->model.tri_edge || !b->model.edge_owner || !b->cache.tri_lo || !b->cache.tri_hi) return -1;
  memcpy(b->model.edge, m->edge, sizeof(int32_t) * 2 * (size_t)m->ne);
  for (int e = 0; e < m->ne; e++) b->model.edge_owner[e] = m->edge_tri[2 * e];
  for (int t = 0; t < m->nt; t++) {
    for (int k = 0; k < 3; k++) {
      int a = m->tri[3 * t + k], c = m->tri[3 * t + (k + 1) % 3];
      int lo_v = a < c ? a : c, hi_v = a < c ? c : a;
      /* edges are sorted lexicographically: binary search */
      int lo = 0, hi = m->ne - 1, found = -1;
      while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int e0 = m->edge[2 * mid], e1 = m->edge[2 * mid + 1];
        if (e0 == lo_v && e1 == hi_v) {
          found = mid;
          break;
        }
        if (e0 < lo_v || (e0 == lo_v && e1 < hi_v))
          lo = mid + 1;
        else
          hi = mid - 1;
      }
      if (found < 0) return loom_fail("cloth: inconsistent mesh adjacency (edge %d-%d missing)", lo_v, hi_v);
      b->model.tri_edge[3 * t + k] = found;
    }
    vec3 p = b->p.x[m->tri[3 * t]], q = b->p.x[m->tri[3 * t + 1]], s = b->p.x[m->tri[3 * t + 2]];
    b->cache.tri_lo[t] = v3_min(p, v3_min(q, s));
    b->cache.tri_hi[t] = v3_max(p, v3_max(q, s));
    const double rho = geom_circumradius(p, q, s);
    if (isfinite(rho)) b->model.max_circumradius = d_max(b->model.max_circumradius, rho);
  }
  return bvh_build(&b->cache.tri_tree, b->cache.tri_lo, b->cache.tri_hi, b->p.nt, 2);
}


void cloth_refit_tree(cloth_body *b) {
  for (int t = 0; t < b->p.nt; t++) {
    vec3 p = b->p.x[b->p.tri[3 * t]], q = b->p.x[b->p.tri[3 * t + 1]], s = b->p.x[b->p.tri[3 * t + 2]];
    b->cache.tri_lo[t] = v3_min(p, v3_min(q, s));
    b->cache.tri_hi[t] = v3_max(p, v3_max(q, s));
  }
  bvh_refit(&b->cache.tri_tree, b->cache.tri_lo, b->cache.tri_hi);
}
