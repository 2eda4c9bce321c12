/* contact_patch.c — smooth patches of a surface that cannot touch themselves over a substep, so
 * that the self-collision pipeline skips every pair of features inside one (docs/architecture.md,
 * "Collisions between cloths", smooth patches).
 *
 * Why: a cloth that falls, swings or hangs collides with itself nowhere, yet every feature has a
 * dozen neighbours in the mesh within the reach of its search box. A 128 x 128 cloth falling from
 * horizontal spent 44 % of its step collecting and testing such pairs.
 *
 * What: a fixed hierarchy of the body's triangles (median splits of their rest positions, made
 * once, so that it does not depend on the run's history), whose nodes that are topological disks
 * keep their boundary loop. For the substep's straight paths x(t) = x0 + t d, t in [0, 1], a node
 * is certified when, for one unit axis a:
 *   (T) every triangle's normal n(t) = (u0 + t du) x (v0 + t dv) keeps a . n(t) > 0: n(t) is a
 *       quadratic Bezier curve whose control vectors n(0), (u0 x v1 + u1 x v0) / 2 and n(1) bound
 *       it, and their cone, merged up the tree, lies within a right angle of a (the continuous
 *       normal cone of Tang, Curtis, Yoon & Manocha 2009);
 *   (C) every boundary edge p -> q keeps a . ((p - o) x (q - o)) > 0, o(t) the mean of the loop's
 *       vertices: the contour is star-shaped around o (Schvartzman, Perez & Otaduy 2010), here at
 *       every t, each edge's test a quadratic in t that is positive where its three Bernstein
 *       coefficients are;
 *   (W) the loop winds once around o at t = 0 (then at every t: no edge passes over o).
 * The projection onto the plane normal to a then maps the patch one to one at every t: its
 * triangles keep their orientation, and the number of preimages of a point is the winding number
 * of the boundary around it, 1 inside the star-shaped contour and 0 outside. So no two features of
 * the patch meet during the substep, and none of its pairs needs a test. Proximity between them
 * is not enforced either: a patch's own elasticity keeps its features apart; the thickness keeps
 * layers apart, which a certified patch cannot hold.
 *
 * The certificate holds for the paths it was made for: after impulses change some paths the
 * pipeline checks again the certified nodes those vertices belong to (patch_recheck). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"

enum {
  PATCH_LEAF = 8,        /* triangles per leaf of the hierarchy */
  PATCH_MIN = 64,        /* the smallest node certified: in a pile, smaller ones were certified and
                          * lost again from pass to pass, and the top-ups that followed cost more
                          * than their pairs: a 64² pile 4 % slower with 16 than with 64) */
  PATCH_PAR_NODES = 256  /* subtrees from which the leaves' cones are found in two halves */
};
/* A cone whose half-angle's cosine is not above this is not within a right angle (the margin
 * covers the rounding of the merges, a few ulps per level) */
#define PATCH_COS_MIN 0.02
/* Bernstein coefficients and control normals below this fraction of their scale are rounding */
#define PATCH_REL_TOL 1e-9

/* ---- the hierarchy ---------------------------------------------------------------------------- */

/* Index of edge (a, b) (any order) in c->edge (sorted, unique), -1 if absent. */
static int32_t edge_index(const particle_collide *c, int32_t a, int32_t b) {
  const int32_t lo = a < b ? a : b, hi = a < b ? b : a;
  int l = 0, r = c->ne;
  while (l < r) {
    const int m = l + (r - l) / 2;
    const int32_t *e = &c->edge[2 * m];
    if (e[0] < lo || (e[0] == lo && e[1] < hi)) l = m + 1;
    else r = m;
  }
  return l < c->ne && c->edge[2 * l] == lo && c->edge[2 * l + 1] == hi ? l : -1;
}

typedef struct build_scratch {
  int32_t *nbr;      /* per triangle side (3 t + k, from tri[k] to tri[k + 1]): the triangle across,
                      * -1 none, -2 an edge no disk may hold (three triangles, or two that disagree
                      * on orientation) */
  int32_t *pos;      /* per triangle: its place in the hierarchy's leaf order */
  int32_t *vstamp, *vout; /* per vertex: the node that last saw it, its boundary successor */
  int32_t *queue;    /* a breadth-first search over a node's triangles */
  uint8_t *seen;
  int32_t *loop;     /* the loops found so far */
  int nloop, cap;
} build_scratch;

/* Node k's triangles form a disk: connected, every side held by at most two triangles of
 * consistent orientation, one boundary loop through distinct vertices and Euler characteristic
 * 1. Its loop (the patch on the left of each edge, as the triangles run) is appended to the
 * scratch; its length, 0 when not a disk (or -1 out of memory). */
static int disk_loop(const particles *p, const particle_collide *c, build_scratch *b, int k) {
  const int first = c->pt_first[k], count = c->pt_count[k];
  const int32_t *items = c->patch_tree.items;
  int nb = 0, nv = 0, start = -1;
  for (int i = first; i < first + count; i++) {
    const int t = items[i];
    for (int s = 0; s < 3; s++) {
      const int32_t v = p->tri[3 * t + s], w = p->tri[3 * t + (s + 1) % 3], across = b->nbr[3 * t + s];
      if (across == -2) return 0;
      if (b->vstamp[v] != k) {
        b->vstamp[v] = k;
        b->vout[v] = -1;
        nv++;
      }
      if (across >= 0 && b->pos[across] >= first && b->pos[across] < first + count) continue;
      if (b->vout[v] >= 0) return 0; /* two boundary edges leave v: the patch pinches there */
      b->vout[v] = w;
      if (start < 0) start = v;
      nb++;
    }
  }
  if (nb < 3 || (3 * count + nb) % 2) return 0;
  if (nv - (3 * count + nb) / 2 + count != 1) return 0; /* Euler characteristic of a disk */
  /* connected */
  int head = 0, tail = 0;
  b->queue[tail++] = items[first];
  b->seen[b->pos[items[first]]] = 1;
  while (head < tail) {
    const int t = b->queue[head++];
    for (int s = 0; s < 3; s++) {
      const int32_t across = b->nbr[3 * t + s];
      if (across < 0 || b->pos[across] < first || b->pos[across] >= first + count || b->seen[b->pos[across]]) continue;
      b->seen[b->pos[across]] = 1;
      b->queue[tail++] = across;
    }
  }
  for (int i = first; i < first + count; i++) b->seen[i] = 0;
  if (tail != count) return 0;
  /* one loop through every boundary edge */
  if (b->nloop + nb > b->cap) {
    const int cap = 2 * (b->nloop + nb);
    int32_t *grown = core_realloc(b->loop, (size_t)cap, sizeof(int32_t));
    if (!grown) return -1;
    b->loop = grown;
    b->cap = cap;
  }
  int len = 0;
  int32_t v = start;
  do {
    b->loop[b->nloop + len++] = v;
    v = b->vout[v];
  } while (v >= 0 && v != start && len < nb);
  if (v != start || len != nb) return 0;
  b->nloop += len;
  return len;
}

/* Which triangle lies across each side (scratch nbr), from the unique edges. */
static int find_neighbours(const particles *p, const particle_collide *c, int32_t *nbr) {
  const int nt = p->nt, ne = c->ne;
  int32_t *t0 = core_alloc((size_t)(ne ? ne : 1), sizeof(int32_t));
  int32_t *t1 = core_alloc((size_t)(ne ? ne : 1), sizeof(int32_t));
  int32_t *side = core_alloc((size_t)(3 * nt), sizeof(int32_t));
  if (!t0 || !t1 || !side) {
    core_free(t0);
    core_free(t1);
    core_free(side);
    return -1;
  }
  for (int e = 0; e < ne; e++) t0[e] = t1[e] = -1;
  /* t0/t1 hold 3 t + k of the sides along each edge; -2 in t1: a third side, or a second that runs
   * the same way as the first */
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      const int32_t a = p->tri[3 * t + k], bb = p->tri[3 * t + (k + 1) % 3];
      const int32_t e = edge_index(c, a, bb);
      side[3 * t + k] = e;
      if (e < 0) continue;
      if (t0[e] < 0) t0[e] = 3 * t + k;
      else if (t1[e] == -1) {
        const int s = t0[e], ts = s / 3, ks = s % 3;
        const int same = p->tri[3 * ts + ks] == a; /* both sides run a -> b */
        t1[e] = same || ts == t ? -2 : 3 * t + k;
      } else t1[e] = -2;
    }
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      const int32_t e = side[3 * t + k];
      if (e < 0 || t1[e] == -2) {
        nbr[3 * t + k] = -2;
        continue;
      }
      const int32_t other = t0[e] == 3 * t + k ? t1[e] : t0[e];
      nbr[3 * t + k] = other < 0 ? -1 : other / 3;
    }
  core_free(t0);
  core_free(t1);
  core_free(side);
  return 0;
}

int patch_build(particles *p) {
  particle_collide *c = &p->col;
  if (c->patches) return c->patches > 0 ? 0 : -1;
  c->patches = -1; /* (until it is done: a body without one is tested pair by pair) */
  const int n = p->n, nt = p->nt, ne = c->ne;
  if (nt < PATCH_MIN || !p->rest || !c->edge) return -1;
  vec3 *lo = core_alloc((size_t)nt, sizeof(vec3)), *hi = core_alloc((size_t)nt, sizeof(vec3));
  build_scratch b = {0};
  int rc = -1;
  if (!lo || !hi) goto done;
  for (int t = 0; t < nt; t++) {
    const int32_t *tr = &p->tri[3 * t];
    lo[t] = v3_min(p->rest[tr[0]], v3_min(p->rest[tr[1]], p->rest[tr[2]]));
    hi[t] = v3_max(p->rest[tr[0]], v3_max(p->rest[tr[1]], p->rest[tr[2]]));
  }
  if (bvh_build(&c->patch_tree, lo, hi, nt, PATCH_LEAF)) goto done;
  const bvh *pt = &c->patch_tree;
  const int nn = pt->node_count;
  const size_t sn = (size_t)nn, sv = (size_t)(n ? n : 1), se = (size_t)(ne ? ne : 1), st = (size_t)nt;
  c->pt_first = core_alloc(sn, sizeof(int32_t));
  c->pt_count = core_alloc(sn, sizeof(int32_t));
  c->pt_nsub = core_alloc(sn, sizeof(int32_t));
  c->pt_loop_at = core_alloc(sn, sizeof(int32_t));
  c->pt_loop_len = core_calloc(sn, sizeof(int32_t));
  c->pt_axis = core_alloc(sn, sizeof(vec3));
  c->pt_cos = core_alloc(sn, sizeof(double));
  c->pt_top = core_alloc(sn, sizeof(int32_t));
  c->pt_list_top = core_alloc(sn, sizeof(int32_t));
  c->leaf_v = core_alloc(sv, sizeof(int32_t));
  c->leaf_e = core_alloc(se, sizeof(int32_t));
  c->leaf_t = core_alloc(st, sizeof(int32_t));
  c->tri_tag = core_alloc(2 * st, sizeof(int32_t));
  c->edge_tag = core_alloc(2 * se, sizeof(int32_t));
  c->vcert = core_alloc(sv, sizeof(vec3));
  c->pt_dirty = core_alloc(sn, sizeof(uint8_t));
  b.nbr = core_alloc(3 * st, sizeof(int32_t));
  b.pos = core_alloc(st, sizeof(int32_t));
  b.vstamp = core_alloc(sv, sizeof(int32_t));
  b.vout = core_alloc(sv, sizeof(int32_t));
  b.queue = core_alloc(st, sizeof(int32_t));
  b.seen = core_calloc(st, sizeof(uint8_t));
  if (!c->pt_first || !c->pt_count || !c->pt_nsub || !c->pt_loop_at || !c->pt_loop_len || !c->pt_axis || !c->pt_cos ||
      !c->pt_top || !c->pt_list_top || !c->leaf_v || !c->leaf_e || !c->leaf_t ||
      !c->tri_tag || !c->edge_tag || !c->vcert || !c->pt_dirty || !b.nbr || !b.pos || !b.vstamp || !b.vout || !b.queue || !b.seen)
    goto done;
  /* each node's triangles are a run of the leaf order (pre-order: children after their parent) */
  for (int k = nn - 1; k >= 0; k--) {
    const bvh_node *nd = &pt->nodes[k];
    if (nd->left < 0) {
      c->pt_first[k] = nd->right;
      c->pt_count[k] = nd->count;
      c->pt_nsub[k] = 1;
      for (int i = nd->right; i < nd->right + nd->count; i++) c->leaf_t[pt->items[i]] = k;
    } else {
      c->pt_first[k] = c->pt_first[nd->left];
      c->pt_count[k] = c->pt_count[nd->left] + c->pt_count[nd->right];
      c->pt_nsub[k] = 1 + c->pt_nsub[nd->left] + c->pt_nsub[nd->right];
    }
    c->pt_top[k] = c->pt_list_top[k] = -1;
  }
  for (int i = 0; i < nt; i++) b.pos[pt->items[i]] = i;
  /* a vertex and an edge belong to the leaf of their first triangle */
  for (int v = 0; v < n; v++) c->leaf_v[v] = -1, b.vstamp[v] = -1;
  for (int e = 0; e < ne; e++) c->leaf_e[e] = -1;
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      const int32_t v = p->tri[3 * t + k];
      if (c->leaf_v[v] < 0) c->leaf_v[v] = c->leaf_t[t];
      const int32_t e = edge_index(c, v, p->tri[3 * t + (k + 1) % 3]);
      if (e >= 0 && c->leaf_e[e] < 0) c->leaf_e[e] = c->leaf_t[t];
    }
  if (find_neighbours(p, c, b.nbr)) goto done;
  for (int k = 0; k < nn; k++) {
    c->pt_loop_at[k] = b.nloop;
    if (c->pt_count[k] < PATCH_MIN) continue;
    const int len = disk_loop(p, c, &b, k);
    if (len < 0) goto done;
    c->pt_loop_len[k] = len;
  }
  c->pt_loop = b.loop;
  b.loop = NULL;
  if (!c->pt_loop) {
    c->pt_loop = core_alloc(1, sizeof(int32_t)); /* (no disk: an empty array) */
    if (!c->pt_loop) goto done;
  }
  c->patches = 1;
  rc = 0;
done:
  core_free(lo);
  core_free(hi);
  core_free(b.nbr);
  core_free(b.pos);
  core_free(b.vstamp);
  core_free(b.vout);
  core_free(b.queue);
  core_free(b.seen);
  core_free(b.loop);
  return rc;
}

/* ---- certificates ---------------------------------------------------------------------------- */

/* The end of vertex i's path over the substep. */
static inline vec3 path_end(const particles *p, double h, int i) { return v3_madd(p->x_sub[i], p->col.vbar[i], h); }

/* A leaf's normal cone over the substep: the control vectors of its triangles' normals, their sum
 * (each weighted by its length) as the axis and the smallest cosine to it; -2 when a control
 * vector is rounding (a triangle degenerate somewhere on its path) or faces away from the axis.
 * Squared cosines compared by cross-multiplication: two square roots per leaf. */
static void leaf_cone(particles *p, double h, int k) {
  particle_collide *c = &p->col;
  const bvh_node *nd = &c->patch_tree.nodes[k];
  vec3 ctl[3 * PATCH_LEAF];
  double len2[3 * PATCH_LEAF];
  int nu = 0;
  vec3 sum = v3(0, 0, 0);
  c->pt_cos[k] = -2;
  for (int i = nd->right; i < nd->right + nd->count; i++) {
    const int32_t *tr = &p->tri[3 * c->patch_tree.items[i]];
    const vec3 a0 = p->x_sub[tr[0]], a1 = path_end(p, h, tr[0]);
    const vec3 u0 = v3_sub(p->x_sub[tr[1]], a0), v0 = v3_sub(p->x_sub[tr[2]], a0);
    const vec3 u1 = v3_sub(path_end(p, h, tr[1]), a1), v1 = v3_sub(path_end(p, h, tr[2]), a1);
    ctl[nu] = v3_cross(u0, v0);
    ctl[nu + 1] = v3_scale(v3_add(v3_cross(u0, v1), v3_cross(u1, v0)), 0.5);
    ctl[nu + 2] = v3_cross(u1, v1);
    /* ((|u0| + |u1|) (|v0| + |v1|))^2 is at most this */
    const double scale2 = 4 * (v3_len2(u0) + v3_len2(u1)) * (v3_len2(v0) + v3_len2(v1));
    for (int j = nu; j < nu + 3; j++) {
      len2[j] = v3_len2(ctl[j]);
      if (!(len2[j] > PATCH_REL_TOL * PATCH_REL_TOL * scale2)) return;
      sum = v3_add(sum, ctl[j]);
    }
    nu += 3;
  }
  const double l = v3_len(sum);
  if (!(l > 0)) return;
  const vec3 axis = v3_scale(sum, 1 / l);
  double num = 1, den = 1; /* the smallest cos^2 so far, num / den */
  for (int j = 0; j < nu; j++) {
    const double d = v3_dot(axis, ctl[j]);
    if (!(d > 0)) return;
    if (d * d * den < num * len2[j]) num = d * d, den = len2[j];
  }
  c->pt_axis[k] = axis;
  c->pt_cos[k] = sqrt(num / den);
}

/* An inner node's cone from its children's: the axis their count-weighted mean, the half-angle at
 * most the angle to a child's axis plus that child's half-angle (cos(x + y) without angles). */
static void merge_cone(particle_collide *c, int k) {
  const bvh_node *nd = &c->patch_tree.nodes[k];
  const int l = nd->left, r = nd->right;
  c->pt_cos[k] = -2;
  if (!(c->pt_cos[l] > PATCH_COS_MIN) || !(c->pt_cos[r] > PATCH_COS_MIN)) return;
  const vec3 s = v3_add(v3_scale(c->pt_axis[l], c->pt_count[l]), v3_scale(c->pt_axis[r], c->pt_count[r]));
  const double len = v3_len(s);
  if (!(len > 0)) return;
  const vec3 axis = v3_scale(s, 1 / len);
  double cmin = 1;
  const int child[2] = {l, r};
  for (int j = 0; j < 2; j++) {
    const double ca = v3_dot(axis, c->pt_axis[child[j]]), ci = c->pt_cos[child[j]];
    if (!(ca > 0)) return;
    const double sa = sqrt(d_max(0, 1 - ca * ca)), si = sqrt(d_max(0, 1 - ci * ci));
    cmin = d_min(cmin, ca * ci - sa * si);
  }
  c->pt_axis[k] = axis;
  c->pt_cos[k] = cmin;
}

typedef struct cones_ctx {
  particles *p;
  double h;
  int first; /* the subtree's root */
} cones_ctx;

/* The leaves' cones among nodes [first + lo, first + hi) (each leaf alone: any split gives the
 * same cones). */
static void leaf_rows(void *ctx, int lo, int hi, int part) {
  (void)part;
  const cones_ctx *cc = ctx;
  const bvh_node *nodes = cc->p->col.patch_tree.nodes;
  for (int j = cc->first + lo; j < cc->first + hi; j++)
    if (nodes[j].left < 0) leaf_cone(cc->p, cc->h, j);
}

/* Cones of the subtree of node k: its leaves' (in two halves when par is given), then their
 * parents' up to k. */
static void subtree_cones(particles *p, double h, int k, core_par *par) {
  particle_collide *c = &p->col;
  cones_ctx cc = {p, h, k};
  core_par_rows(c->pt_nsub[k] >= PATCH_PAR_NODES ? par : NULL, c->pt_nsub[k], leaf_rows, &cc);
  for (int j = k + c->pt_nsub[k] - 1; j >= k; j--)
    if (c->patch_tree.nodes[j].left >= 0) merge_cone(c, j);
}

/* Tests (C) and (W) on node k's loop with its cone's axis. */
static int contour_ok(const particles *p, double h, int k) {
  const particle_collide *c = &p->col;
  const int32_t *loop = &c->pt_loop[c->pt_loop_at[k]];
  const int len = c->pt_loop_len[k];
  const vec3 a = c->pt_axis[k];
  vec3 o0 = v3(0, 0, 0), o1 = v3(0, 0, 0);
  for (int j = 0; j < len; j++) {
    o0 = v3_add(o0, p->x_sub[loop[j]]);
    o1 = v3_add(o1, path_end(p, h, loop[j]));
  }
  o0 = v3_scale(o0, 1.0 / len);
  o1 = v3_scale(o1, 1.0 / len);
  double winding = 0;
  vec3 P0 = v3_sub(p->x_sub[loop[0]], o0), P1 = v3_sub(path_end(p, h, loop[0]), o1);
  for (int j = 0; j < len; j++) {
    const int q = loop[j + 1 < len ? j + 1 : 0];
    const vec3 Q0 = v3_sub(p->x_sub[q], o0), Q1 = v3_sub(path_end(p, h, q), o1);
    /* a . (P(t) x Q(t)) in Bernstein form over [0, 1] */
    const double b0 = v3_dot(a, v3_cross(P0, Q0)), b2 = v3_dot(a, v3_cross(P1, Q1));
    const double b1 = 0.5 * v3_dot(a, v3_add(v3_cross(P0, Q1), v3_cross(P1, Q0)));
    const double tol = PATCH_REL_TOL * (v3_len(P0) + v3_len(P1)) * (v3_len(Q0) + v3_len(Q1));
    if (!(b0 > tol) || !(b1 > tol) || !(b2 > tol)) return 0;
    /* the angle the edge subtends at o in the plane normal to a, at t = 0 */
    winding += atan2(b0, v3_dot(P0, Q0) - v3_dot(a, P0) * v3_dot(a, Q0));
    P0 = Q0;
    P1 = Q1;
  }
  return winding > LOOM_PI && winding < 3 * LOOM_PI;
}

/* Node k certified for the current paths (its cones must be up to date). */
static int certified(const particles *p, double h, int k) {
  const particle_collide *c = &p->col;
  return c->pt_count[k] >= PATCH_MIN && c->pt_loop_len[k] > 0 && c->pt_cos[k] > PATCH_COS_MIN && contour_ok(p, h, k);
}

/* The cones for the current paths: every leaf's (in two halves when par is given) when the paths
 * start elsewhere than at the last certification (another substep), else only the leaves with a
 * vertex whose path changed since (vbar against vcert; marked in changed, n bytes), then every
 * inner node's. A leaf's cone depends on its vertices' paths only, so both give the same cones.
 * Returns whether any path changed. */
static int refresh_cones(particles *p, double h, core_par *par, unsigned serial, uint8_t *changed) {
  particle_collide *c = &p->col;
  const int nn = c->patch_tree.node_count;
  if (!c->pt_valid || c->pt_serial != serial || c->pt_h != h) {
    subtree_cones(p, h, 0, par);
    c->pt_valid = 1;
    c->pt_serial = serial;
    c->pt_h = h;
    return 1;
  }
  int any = 0;
  for (int i = 0; i < p->n; i++) {
    changed[i] = !(c->vbar[i].x == c->vcert[i].x && c->vbar[i].y == c->vcert[i].y && c->vbar[i].z == c->vcert[i].z);
    any |= changed[i];
  }
  if (!any) return 0;
  memset(c->pt_dirty, 0, (size_t)nn);
  for (int t = 0; t < p->nt; t++) {
    const int32_t *tr = &p->tri[3 * t];
    if (changed[tr[0]] | changed[tr[1]] | changed[tr[2]]) c->pt_dirty[c->leaf_t[t]] = 1;
  }
  for (int k = nn - 1; k >= 0; k--) {
    if (c->patch_tree.nodes[k].left >= 0) merge_cone(c, k);
    else if (c->pt_dirty[k]) leaf_cone(p, h, k);
  }
  return 1;
}

/* The tops: top-down, the first certified node on each path from the root (a node too small to be
 * certified has no certified node below it either). */
static void find_tops(particles *p, double h) {
  particle_collide *c = &p->col;
  int32_t stack[BVH_MAX_DEPTH + 1];
  int sp = 0, count = 0;
  stack[sp++] = 0;
  while (sp > 0) {
    const int k = stack[--sp];
    const bvh_node *nd = &c->patch_tree.nodes[k];
    const int yes = certified(p, h, k);
    if (yes || c->pt_count[k] < PATCH_MIN || nd->left < 0) {
      for (int j = k; j < k + c->pt_nsub[k]; j++) c->pt_top[j] = yes ? k : -1;
      count += yes;
      continue;
    }
    c->pt_top[k] = -1;
    stack[sp++] = nd->right;
    stack[sp++] = nd->left;
  }
  c->pt_certified = count;
}

int patch_certify(particles *p, double h, int enabled, core_par *par, unsigned serial, uint8_t *changed) {
  particle_collide *c = &p->col;
  if (c->patches != 1) return 0;
  if (!enabled) {
    for (int k = 0; k < c->patch_tree.node_count; k++) c->pt_top[k] = -1;
      c->pt_certified = 0;
    c->pt_valid = 0;
    return 0;
  }
  refresh_cones(p, h, par, serial, changed);
  find_tops(p, h);
  memcpy(c->vcert, c->vbar, sizeof(vec3) * (size_t)p->n);
  return c->pt_certified;
}

int patch_recheck(particles *p, double h, core_par *par, unsigned serial, uint8_t *changed) {
  particle_collide *c = &p->col;
  if (c->patches != 1 || !c->pt_certified) return 0;
  if (!refresh_cones(p, h, par, serial, changed)) return 0;
  /* the certified nodes with a triangle that has a changed vertex, checked on their new cones */
  const int nn = c->patch_tree.node_count;
  memset(c->pt_dirty, 0, (size_t)nn);
  for (int t = 0; t < p->nt; t++) {
    const int32_t *tr = &p->tri[3 * t];
    const int32_t k = c->pt_top[c->leaf_t[t]];
    if (k >= 0 && (changed[tr[0]] | changed[tr[1]] | changed[tr[2]])) c->pt_dirty[k] = 1;
  }
  int failed = 0;
  for (int k = 0; k < nn && !failed; k++) failed = c->pt_dirty[k] && !certified(p, h, k);
  memcpy(c->vcert, c->vbar, sizeof(vec3) * (size_t)p->n);
  if (!failed) return 0;
  find_tops(p, h);
  return 1;
}

/* What the list left out under node k's list top is left out now only under the same node or one
 * above it. */
static inline int node_shrunk(const particle_collide *c, int k) {
  const int was = c->pt_list_top[k], now = c->pt_top[k];
  return was >= 0 && (now < 0 || was < now || was >= now + c->pt_nsub[now]);
}

int patch_shrunk(const particles *p) {
  const particle_collide *c = &p->col;
  if (c->patches != 1) return 0;
  for (int k = 0; k < c->patch_tree.node_count; k++)
    if (node_shrunk(c, k)) return 1;
  return 0;
}

int patch_mark_shrunk(const particles *p, uint8_t *out) {
  const particle_collide *c = &p->col;
  if (c->patches != 1) return 0;
  int marked = 0;
  for (int t = 0; t < p->nt; t++) {
    if (!node_shrunk(c, c->leaf_t[t])) continue;
    for (int k = 0; k < 3; k++) {
      const int32_t v = p->tri[3 * t + k];
      marked += !out[v];
      out[v] = 1;
    }
  }
  return marked;
}

void patch_list_made(particles *p) {
  particle_collide *c = &p->col;
  if (c->patches != 1) return;
  memcpy(c->pt_list_top, c->pt_top, sizeof(int32_t) * (size_t)c->patch_tree.node_count);
}

void patch_list_checked(particles *p) {
  particle_collide *c = &p->col;
  if (c->patches != 1) return;
  /* what both leave out: per node the deeper of the two tops (both lie on its path from the root,
   * and pre-order numbers a node after its ancestors), none when either is none */
  for (int k = 0; k < c->patch_tree.node_count; k++) {
    const int32_t was = c->pt_list_top[k], now = c->pt_top[k];
    c->pt_list_top[k] = was < 0 || now < 0 ? -1 : (was > now ? was : now);
  }
}

/* Per node of t (each item labelled with its top, patch_top): the label all its items share, or -1. */
static void tree_tags(const bvh *t, const int32_t *tops, const int32_t *leaf, int32_t *tag) {
  for (int k = t->node_count - 1; k >= 0; k--) {
    const bvh_node *nd = &t->nodes[k];
    if (nd->left >= 0) {
      tag[k] = tag[nd->left] == tag[nd->right] ? tag[nd->left] : -1;
      continue;
    }
    int32_t v = nd->count > 0 ? patch_top(tops, leaf, t->items[nd->right]) : -1;
    for (int i = nd->right + 1; i < nd->right + nd->count && v >= 0; i++)
      if (patch_top(tops, leaf, t->items[i]) != v) v = -1;
    tag[k] = v;
  }
}

void patch_tree_tags(particles *p) {
  particle_collide *c = &p->col;
  if (c->patches != 1) return;
  tree_tags(&c->tri_tree, c->pt_top, c->leaf_t, c->tri_tag);
  tree_tags(&c->edge_tree, c->pt_top, c->leaf_e, c->edge_tag);
}
