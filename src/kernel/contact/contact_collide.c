/* contact_collide.c — collisions of particle bodies with themselves and with each other: the
 * pipeline of Bridson, Fedkiw & Anderson 2002 over one substep (docs/architecture.md, "Collisions
 * between cloths").
 *
 *   1. mean velocities vbar = (x - x_sub) / h of every vertex (after the obstacle passes)
 *   2. candidates: vertex-triangle and edge-edge pairs whose swept boxes, inflated by the pair's
 *      thickness, overlap (per-body BVHs over triangles and edges, self and pair traversal)
 *   3. proximity at the start positions: repulsion (inelastic part, then a spring limited to 10 %
 *      of the overlap per substep) and Coulomb friction, Gauss-Seidel
 *   4. continuous collision detection on the linear paths x_sub + t h vbar, inelastic impulses,
 *      Jacobi-averaged, a few iterations
 *   5. rigid impact zones, merged until no pair collides (the guarantee); a capped loop, after
 *      which the vertices still colliding stand still for the substep and the world says so
 *   6. x = x_sub + h vbar and v += vbar - vbar_predicted where vbar changed (and, for a cloth
 *      whose v extrapolates vbar to the substep's end, the resting pairs' forces in that
 *      extrapolation)
 *
 * Two bodies that world:pair(a, b, {collide = false}) lets pass through each other are never paired
 * (cbody.off, read from the world's overrides at every run: boxes_overlap and find_inside), and the
 * crossings between them are not looked for (contact_query.c); a body's own pairs are
 * self_collision's.
 *
 * Impulses act on four nodes with weights w (relative point = sum w_k x_k): Delta v_k =
 * w_k inv_m_k J n changes the relative normal velocity by J sum w_k^2 inv_m_k, which for equal
 * masses is Bridson's 2I / (1 + sum w^2) and leaves an infinite-mass (pinned, or held by an
 * obstacle this step) node unchanged. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/contact.h"

#define CCD_ITERATIONS 12
/* a point-triangle pair acts in the proximity pass only while the point lies over the triangle:
 * the direction to its nearest point at most this far (cosine) from the triangle's normal */
#define PROX_OVER_COS 0.99
#define ZONE_ITERATIONS 48
/* resting pairs (docs/architecture.md, "Resting contact"): sweeps after the first, the largest
 * relative velocity change (m/s) that still calls for another, and how far apart (in thicknesses)
 * a point and a triangle may start to be engaged before they reach the thickness */
#define RESTING_SWEEPS 4
#define RESTING_TOLERANCE 1e-6
#define RESTING_REACH 2.0
/* candidates from which a pass over them is split in two halves (world.threads) */
#define PAR_CANDIDATES 2048
#define PAR_PROXIMITY 512 /* selected proximity pairs whose geometry is found in two halves */
#define PAR_TRAVERSE 1024 /* vertices in the bodies from which a collection's traversal is split */

typedef struct cbody {
  int slot;
  particles *p;
  int offset; /* first global vertex index (impact zones) */
  double half;
  double margin; /* extra inflation of the collection boxes (a list serves while paths stay within it) */
  double pad;    /* and a resting body's, so that its list holds every pair RESTING_REACH thicknesses
                  * apart (whatever the margins) */
  unsigned char self;
  unsigned char obstacle; /* a rigid body's faces, convex edges and corners (rigid_build_ccd) */
  unsigned char resting;  /* particles.resting: its pairs with other particle bodies are resting pairs */
  unsigned char rest_self; /* and its own pairs too (particles.resting == 1) */
  unsigned char observe;  /* a dynamic rigid body's core: crossings are counted and reported, not
                           * resolved (rigid_build_ccd) */
  unsigned char cloth;      /* a cloth body */
  unsigned char cloth_only; /* an obstacle tested against cloth only (a sphere's icosphere:
                             * simplex meshes and solids meet spheres in their own passes) */
  const uint8_t *points;  /* the vertices tested against triangles (NULL: all) */
  int at;                 /* its index in the run's list */
  uint64_t off;           /* bit j: world:pair(this, the list's body j, {collide = false}): the two
                           * are not tested against each other at all (pair_off) */
  /* during a top-up (listed): the vertices' start and end boxes, the triangles' and edges' and the
   * reach as the last update left them, before the top-up's own */
  const vec3 *was_lo, *was_hi, *was_elo, *was_ehi, *was_tri_lo, *was_tri_hi, *was_tri_elo, *was_tri_ehi, *was_edge_lo,
      *was_edge_hi, *was_edge_elo, *was_edge_ehi;
  double was_reach;
  int was_ends; /* the body had vertices whose end boxes are not their start boxes (ends; without,
                 * the end boxes are not copied and the was_ end pointers are the start ones) */
} cbody;

typedef struct collide_ctx {
  loom_world *w;
  double h;
  cbody *b;
  int nb, total;
  int nsoft; /* b[0, nsoft) are particle bodies, the rest obstacles */
  double a0, a1; /* the substep within the step (obstacle poses) */
  int32_t *anchor; /* impact zones: per zone root, the obstacle (body index) it moves with, or -1 */
  /* collection */
  int qa, qb, qi; /* bodies of the current query, vertex of a vertex query */
  int overflow;
  int pass;      /* numbers the CCD and zone passes of the substep (stamps) */
  double *disp;  /* per global vertex: the length of its displacement h vbar in the current pass */
  int32_t visit; /* numbers the selections of candidates (w->cseen) */
  uint8_t *tangled; /* per global vertex (NULL: none): left out of the pipeline this run */
  uint8_t *inside;  /* per global vertex (NULL: none): 1 + the obstacle (body index) it starts the
                     * run inside or on the surface of; its features and that obstacle's are left
                     * to the obstacle passes, which push it out */
  double dmax;      /* the largest of disp */
  double tmax;      /* the largest pair thickness (sum of two halves) */
  int resting;      /* some body has resting pairs (cbody.resting) */
  vec3 *vext;       /* per global vertex (NULL: no body extrapolates its velocity, particles.accel):
                     * what the resting pairs' forces add to the velocity reported at the end of the
                     * substep (resting_extrapolation, step 6) */
  vec3 *vend;       /* per global vertex (NULL: out of memory): the CCD impulses' change of the
                     * velocity at the substep's end alone (contact_ccd_rest, step 6) */
  double *moved;    /* per global vertex: how far its start moved since the previous run (NULL:
                     * unknown; start distances are then all computed afresh) */
  /* the frame of the candidate search: every position seen from a frame that moves at vref,
   * shifted by tshift * vref at the substep's start (collect, frame_start/frame_end) */
  vec3 vref;
  double tshift, tnow; /* tnow: the substep's start time */
  /* a top-up's queries (extend): the triangle of a triangle query, the edge of an edge query and
   * whether its body is the pair's second */
  int qt, qswap;
  /* a later run in the same substep (contact_collide_respond): only the pairs with a node stamped
   * 1 (what changed since the last run, and what the proximity impulses then move) are tested */
  int later;
  int part; /* the collection's part this context collects (1: into cpairs2, on the helper) */
  int topup; /* a top-up's queries are running (listed: the bodies' was_ boxes are set) */
  double nlisted; /* (the pairs listed() passed over in this context's part, for tests) */
  const uint8_t *out; /* a top-up's queries: the vertices whose paths left their boxes */
  int new_list; /* start_distances: the list was just collected (its pairs' nodes are not set) */
  /* crossings of a dynamic body's core (cbody.observe) in this run: how many pairs, and the first */
  int crossed, crossed_soft, crossed_body;
} collide_ctx;

typedef struct feat4 {
  vec3 x[4], v[4];
  double inv_m[4], m[4];
  vec3 nobs[4];
  int held[4];
  particles *p[4];
  int32_t vi[4];
  int gi[4];
  double thick, mu;
  int ee;
} feat4;

/* Whether a warning quiet until *until is due at `now`; it then stays quiet for a simulated second
 * (further cases are only counted). */
static int once_a_second(double *until, double now) {
  if (now < *until) return 0;
  *until = now + 1.0;
  return 1;
}

/* How far a body's collection boxes reach beyond its paths. */
static inline double box_reach(const cbody *cb) { return cb->half + cb->margin + cb->pad; }

/* the same coordinates, bit for bit (finite vectors) */
static inline int v3_same(vec3 a, vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/* ---- per-body data ---------------------------------------------------------------------------- */

static int cmp_edge(const void *a, const void *b) {
  const int32_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

int contact_unique_edges(const int32_t *tri, int nt, const uint8_t *skip, int32_t **edges) {
  int32_t *e = core_alloc(6 * (size_t)(nt > 0 ? nt : 1), sizeof(int32_t));
  *edges = e;
  if (!e) return -1;
  int m = 0; /* the triangles kept */
  for (int t = 0; t < nt; t++) {
    if (skip && skip[t]) continue;
    for (int k = 0; k < 3; k++) {
      int32_t a = tri[3 * t + k], b = tri[3 * t + (k + 1) % 3];
      e[6 * m + 2 * k] = a < b ? a : b;
      e[6 * m + 2 * k + 1] = a < b ? b : a;
    }
    m++;
  }
  qsort(e, (size_t)3 * (size_t)m, 2 * sizeof(int32_t), cmp_edge);
  int ne = 0;
  for (int i = 0; i < 3 * m; i++)
    if (ne == 0 || e[2 * i] != e[2 * (ne - 1)] || e[2 * i + 1] != e[2 * (ne - 1) + 1]) {
      e[2 * ne] = e[2 * i];
      e[2 * ne + 1] = e[2 * i + 1];
      ne++;
    }
  return ne;
}

static double select_kth(double *a, int n, int k);

static int prepare(particles *p) {
  particle_collide *c = &p->col;
  if (c->ready) return 0;
  if (!c->edge) { /* (an obstacle's body comes with its edges) */
    c->ne = contact_unique_edges(p->tri, p->nt, p->tri_flat, &c->edge);
    if (c->ne < 0) return -1;
  }
  const int ne = c->ne;
  const size_t n = (size_t)p->n, nt = (size_t)(p->nt ? p->nt : 1), nE = (size_t)(ne ? ne : 1);
  c->tri_lo = core_alloc(nt, sizeof(vec3));
  c->tri_hi = core_alloc(nt, sizeof(vec3));
  c->edge_lo = core_alloc(nE, sizeof(vec3));
  c->edge_hi = core_alloc(nE, sizeof(vec3));
  c->vbar = core_alloc(n, sizeof(vec3));
  c->vbar0 = core_alloc(n, sizeof(vec3));
  c->ecol = core_alloc(n, sizeof(vec3));
  c->ecol_hi = core_alloc(n, sizeof(vec3));
  c->ecol_e = core_alloc(n, sizeof(vec3));
  c->ecol_ehi = core_alloc(n, sizeof(vec3));
  c->tri_elo = core_alloc(nt, sizeof(vec3));
  c->tri_ehi = core_alloc(nt, sizeof(vec3));
  c->edge_elo = core_alloc(nE, sizeof(vec3));
  c->edge_ehi = core_alloc(nE, sizeof(vec3));
  c->stamp = core_alloc(n, sizeof(int32_t));
  c->nobs = core_alloc(n, sizeof(vec3));
  c->held = core_alloc(n, sizeof(uint8_t));
  c->inv_m = core_alloc(n, sizeof(double));
  c->count = core_alloc(n, sizeof(int32_t));
  c->tangled = core_alloc(n, sizeof(uint8_t));
  c->xprev = core_alloc(n, sizeof(vec3));
  c->vert_lo = core_alloc(n, sizeof(vec3));
  c->vert_hi = core_alloc(n, sizeof(vec3));
  c->vert_elo = core_alloc(n, sizeof(vec3));
  c->vert_ehi = core_alloc(n, sizeof(vec3));
  c->xend = core_alloc(n, sizeof(vec3));
  c->xdone = core_alloc(n, sizeof(vec3));
  c->xdone_ok = 0;
  c->nobs_prev = core_alloc(n, sizeof(vec3));
  c->held_prev = core_alloc(n, sizeof(uint8_t));
  c->was = core_alloc(4 * (n + nt + nE), sizeof(vec3));
  c->zone = core_alloc(n, sizeof(int32_t));
  c->xprev_ok = 0;
  if (!c->was || !c->zone || !c->xend || !c->xdone || !c->nobs_prev || !c->held_prev || !c->vert_lo || !c->vert_hi || !c->tangled || !c->xprev || !c->tri_lo || !c->tri_hi || !c->edge_lo || !c->edge_hi || !c->vbar || !c->vbar0 || !c->ecol || !c->ecol_hi || !c->ecol_e || !c->ecol_ehi || !c->tri_elo || !c->tri_ehi || !c->edge_elo || !c->edge_ehi || !c->vert_elo || !c->vert_ehi || !c->stamp || !c->nobs || !c->held || !c->inv_m ||
      !c->count)
    return -1;
  memset(c->tangled, 0, n);
  /* the lower quartile of the edge lengths (the search margin's room, margin_top) */
  double *len = ne > 0 ? core_alloc((size_t)ne, sizeof(double)) : NULL;
  c->edge_short = 0;
  if (len) {
    for (int e = 0; e < ne; e++) len[e] = v3_dist(p->x[c->edge[2 * e]], p->x[c->edge[2 * e + 1]]);
    c->edge_short = select_kth(len, ne, ne / 4);
    if (!isfinite(c->edge_short)) c->edge_short = 0;
    core_free(len);
  }
  for (int i = 0; i < p->n; i++) c->zone[i] = -1;
  c->zone_any = 0;
  size_t most = nt > nE ? nt : nE;
  if (n > most) most = n;
  if (bvh_work_reserve(&c->bwork, (int)most)) return -1;
  /* the vertex tree's storage now (a top-up builds it in place when it first needs it, which may
   * be any later step: steps allocate nothing) */
  memset(c->vert_lo, 0, sizeof(vec3) * n);
  memset(c->vert_hi, 0, sizeof(vec3) * n);
  if (p->n > 0 && (bvh_build(&c->vert_tree, c->vert_lo, c->vert_hi, p->n, 4) || bvh_enable_ends(&c->vert_tree))) return -1;
  c->ready = 1;
  return 0;
}


/* A vertex's path over the substep in the candidate search's frame. The distance between two
 * points at one time is the same in every frame translating uniformly, and paths stay straight
 * in it: swept boxes that overlap in no such frame belong to features that never come near. The
 * search uses the frame moving with the mean velocity of the particle bodies' vertices: a cloth
 * that falls or swings sweeps small boxes there (its parts move together), where in the world's
 * frame every box would stretch over the whole fall and overlap dozens of neighbours'. */
static inline vec3 frame_start(const collide_ctx *cx, const particles *p, int i) {
  return v3_madd(p->x_sub[i], cx->vref, -cx->tshift);
}
static inline vec3 frame_end(const collide_ctx *cx, const particles *p, int i) {
  return v3_madd(v3_madd(p->x_sub[i], p->col.vbar[i], cx->h), cx->vref, -(cx->tshift + cx->h));
}

/* A vertex's start box and end box for the search (ecol, ecol_hi and ecol_e, ecol_ehi; the trees'
 * boxes are their unions over a feature's nodes, inflated by the reach, and a pair of features is
 * a candidate when they pass bvh_motion_overlap). A vertex that moves less than SWEEP_FORM margins
 * along every axis in the search frame gets its swept box as both: the list then serves while its
 * path stays in that box (slow motion, back and forth, keeps a list for many substeps). One that
 * moves more gets its start and its end: parts of a swinging or crumpling cloth that move
 * together are then near only where they are near, instead of wherever their swept boxes, long
 * with the motion, overlap (a 128 x 128 cloth falling from horizontal: 2.7 times fewer
 * candidates on average, a step 23 % shorter), and its list serves while it starts and ends within
 * the margin of them, so it is collected again at the next substep. A top-up gives the vertices it
 * moves their swept boxes (`points` 0: the few vertices a pile's impulses fling would otherwise
 * turn the whole body's trees to the motion test, which costs more per node). The threshold
 * weighs the two:
 * at four margins the falling cloth took 28 % less time but a 64² pile, whose vertices move back
 * and forth within their swept boxes and keep their lists, 10 % more; at eight 23 % less and 2-4 %
 * more (within the noise of the measurement); at twelve 15 % less and the same. Either
 * way a point of a feature on its straight path lies, at every time of the substep, within the
 * convex hull of a point of its start box and a point of its end box, which is what
 * bvh_motion_overlap needs. */
#define SWEEP_FORM 8.0

/* Vertex i has an end box that is not its start box (its start and end points). */
static inline int has_ends(const particle_collide *c, int i) {
  return !v3_same(c->ecol[i], c->ecol_e[i]) || !v3_same(c->ecol_hi[i], c->ecol_ehi[i]);
}

/* Sets vertex i's boxes; returns has_ends for them. */
static int vertex_boxes(const collide_ctx *cx, const cbody *cb, int i, int points) {
  particles *p = cb->p;
  particle_collide *c = &p->col;
  const vec3 s0 = frame_start(cx, p, i), e = frame_end(cx, p, i), d = v3_sub(e, s0);
  const double lim = SWEEP_FORM * cb->margin;
  if (points && (fabs(d.x) > lim || fabs(d.y) > lim || fabs(d.z) > lim)) {
    c->ecol[i] = c->ecol_hi[i] = s0;
    c->ecol_e[i] = c->ecol_ehi[i] = e;
  } else {
    c->ecol[i] = c->ecol_e[i] = v3_min(s0, e);
    c->ecol_hi[i] = c->ecol_ehi[i] = v3_max(s0, e);
  }
  return has_ends(c, i);
}

/* The end boxes of a body's vertices or features as the trees have them: their own arrays when
 * some vertex has end boxes of its own (c->ends), else the start boxes' (the end boxes' arrays are
 * then not kept up to date). */
static inline const vec3 *ends_of(const particle_collide *c, const vec3 *end, const vec3 *start) {
  return c->ends ? end : start;
}

/* A tree's end boxes after its start boxes were refit: refit too when some vertex of the body
 * has end boxes of its own, else the same as the start boxes (and not computed). */
static void set_ends(bvh *t, int ends, const vec3 *elo, const vec3 *ehi) {
  if (ends) bvh_refit_ends(t, elo, ehi);
  else bvh_ends_equal(t);
}

/* The box of a feature with nodes v[0..k) (k = 2 or 3), the union of their boxes in lo[], hi[],
 * inflated by e: its start box from the vertices' start boxes, its end box from their end boxes. */
static inline void feature_box(const vec3 *lo, const vec3 *hi, const int32_t *v, int k, vec3 e, vec3 *flo, vec3 *fhi) {
  vec3 a = v3_min(lo[v[0]], lo[v[1]]), b = v3_max(hi[v[0]], hi[v[1]]);
  if (k == 3) {
    a = v3_min(a, lo[v[2]]);
    b = v3_max(b, hi[v[2]]);
  }
  *flo = v3_sub(a, e);
  *fhi = v3_add(b, e);
}

static double tree_area(const bvh *t) {
  double a = 0;
  for (int i = 0; i < t->node_count; i++) {
    vec3 e = v3_sub(t->nodes[i].hi, t->nodes[i].lo);
    a += e.x * e.y + e.y * e.z + e.z * e.x;
  }
  return a;
}

typedef struct trees_ctx {
  cbody *cb;
  int refit;
} trees_ctx;

/* Part 0: the triangles' boxes (and their tree refit); part 1: the edges'. */
static void tree_part(void *ctx, int part) {
  const trees_ctx *t = ctx;
  particles *p = t->cb->p;
  particle_collide *c = &p->col;
  const double r = c->tree_reach;
  const vec3 e = v3(r, r, r);
  /* (the vertices' start and end boxes in the search frame, set by collect: vertex_boxes) */
  if (!part) {
    for (int k = 0; k < p->nt; k++) {
      const int32_t *tr = &p->tri[3 * k];
      feature_box(c->ecol, c->ecol_hi, tr, 3, e, &c->tri_lo[k], &c->tri_hi[k]);
      if (c->ends) /* (else no vertex has end boxes of its own: set_ends) */
        feature_box(c->ecol_e, c->ecol_ehi, tr, 3, e, &c->tri_elo[k], &c->tri_ehi[k]);
    }
    if (t->refit) {
      bvh_refit(&c->tri_tree, c->tri_lo, c->tri_hi);
      set_ends(&c->tri_tree, c->ends, c->tri_elo, c->tri_ehi);
    }
    return;
  }
  for (int j = 0; j < c->ne; j++) {
    const int32_t *ed = &c->edge[2 * j];
    feature_box(c->ecol, c->ecol_hi, ed, 2, e, &c->edge_lo[j], &c->edge_hi[j]);
    if (c->ends) feature_box(c->ecol_e, c->ecol_ehi, ed, 2, e, &c->edge_elo[j], &c->edge_ehi[j]);
  }
  if (t->refit) {
    bvh_refit(&c->edge_tree, c->edge_lo, c->edge_hi);
    set_ends(&c->edge_tree, c->ends, c->edge_elo, c->edge_ehi);
  }
}

/* The triangle and edge trees over the vertices' start and end boxes, each feature's two boxes
 * (the unions of its nodes') inflated by the body's reach: refit (the two trees side by side, the edges' on the helper thread for bodies of
 * PAR_TRAVERSE vertices or more), or rebuilt when refitting has doubled their summed node areas. */
static int update_trees(cbody *cb, core_par *par) {
  particles *p = cb->p;
  particle_collide *c = &p->col;
  c->tree_reach = box_reach(cb);
  trees_ctx t = {cb, (c->tri_tree.node_count > 0 || p->nt == 0) && (c->edge_tree.node_count > 0 || c->ne == 0) &&
                       c->built_area > 0};
  core_par_run(p->n >= PAR_TRAVERSE ? par : NULL, tree_part, &t);
  if (t.refit && tree_area(&c->tri_tree) + tree_area(&c->edge_tree) <= 2 * c->built_area) return 0;
  /* rebuilt in place: after the first build this allocates nothing */
  if (bvh_rebuild(&c->tri_tree, c->tri_lo, c->tri_hi, p->nt, 4, &c->bwork) ||
      bvh_rebuild(&c->edge_tree, c->edge_lo, c->edge_hi, c->ne, 4, &c->bwork) || bvh_enable_ends(&c->tri_tree) ||
      bvh_enable_ends(&c->edge_tree))
    return -1;
  set_ends(&c->tri_tree, c->ends, c->tri_elo, c->tri_ehi);
  set_ends(&c->edge_tree, c->ends, c->edge_elo, c->edge_ehi);
  c->built_area = tree_area(&c->tri_tree) + tree_area(&c->edge_tree);
  return 0;
}

/* ---- candidates ------------------------------------------------------------------------------- */

/* Room for cap candidates in every per-candidate array (grown by doubling while collecting, and
 * reserved up front for a few dozen per vertex, so that steady steps allocate nothing). */
static int reserve_pairs(loom_world *w, int cap) {
  if (cap <= w->cpair_cap) return 0;
  if (cap > (1 << 26)) return -1;
  collide_pair *np = core_realloc(w->cpairs, (size_t)cap, sizeof(collide_pair));
  if (!np) return -1;
  w->cpairs = np;
  double *nd = core_realloc(w->cdist, (size_t)cap, sizeof(double));
  if (!nd) return -1;
  w->cdist = nd;
  int32_t *a = core_realloc(w->cadj, 4 * (size_t)cap, sizeof(int32_t));
  if (!a) return -1;
  w->cadj = a;
  int32_t *seen = core_realloc(w->cseen, (size_t)cap, sizeof(int32_t));
  if (!seen) return -1;
  w->cseen = seen;
  w->cpair_cap = cap;
  return 0;
}

/* Room for cap pairs in the second part of a collection (called between traversals only: the
 * helper thread fills that part while the first grows its own). Reserved up front with the list,
 * whatever the lists so far held: smooth patches leave them nearly empty while a cloth lies flat,
 * and a later step must not allocate when it creases. */
static int reserve_second(loom_world *w, int cap) {
  if (cap <= w->cpair2_cap) return 0;
  collide_pair *p2 = core_realloc(w->cpairs2, (size_t)cap, sizeof(collide_pair));
  if (!p2) return -1;
  w->cpairs2 = p2;
  w->cpair2_cap = cap;
  return 0;
}

static int push_pair(collide_ctx *cx, int type, int a, int b, int fa, int fb) {
  loom_world *w = cx->w;
  collide_pair *q;
  /* a cloth's triangle of zero area at rest has no side to keep anything on: its vertices'
   * other triangles and their edges do the pipeline's work (with it, an edge along it lay exactly
   * on the vertex between its ends, a pair no impulse could separate) */
  if (!(type & 1) && cx->b[b].p->tri_flat && cx->b[b].p->tri_flat[fb]) return 0;
  if (cx->part) {
    if (w->ncpairs2 == w->cpair2_cap) {
      const int cap = w->cpair2_cap ? 2 * w->cpair2_cap : 1024;
      collide_pair *np = cap <= (1 << 26) ? core_realloc(w->cpairs2, (size_t)cap, sizeof(collide_pair)) : NULL;
      if (!np) {
        cx->overflow = 1;
        return 1;
      }
      w->cpairs2 = np;
      w->cpair2_cap = cap;
    }
    q = &w->cpairs2[w->ncpairs2++];
  } else {
    if (w->ncpairs == w->cpair_cap && reserve_pairs(w, w->cpair_cap ? 2 * w->cpair_cap : 1024)) {
      cx->overflow = 1;
      return 1;
    }
    q = &w->cpairs[w->ncpairs++];
  }
  q->type = type;
  q->a = a;
  q->b = b;
  q->fa = fa;
  q->fb = fb;
  return 0;
}

/* triangle tr has vertex i */
static inline int tri_has(const int32_t *tr, int i) { return tr[0] == i || tr[1] == i || tr[2] == i; }

/* edges i and j (vertex pairs in E) share a vertex */
static inline int edges_touch(const int32_t *E, int i, int j) {
  return E[2 * i] == E[2 * j] || E[2 * i] == E[2 * j + 1] || E[2 * i + 1] == E[2 * j] || E[2 * i + 1] == E[2 * j + 1];
}

/* During a top-up: whether the list already holds the pair of vertex i of body a and triangle t of
 * body b (ee = 0), or of edges i of a and t of b (ee = 1). It does when their boxes before the
 * top-up overlapped: the last collection or top-up that gave either feature its box then found
 * the pair (the boxes compared are the ones that update made, the vertex's formed as
 * vertices_range forms it, so the test gives the same bits as the one that found it). Most of what
 * a moved vertex's queries find is such a pair (a 64² pile: about 49 of every 50); the rest are
 * sorted and checked against the list. */
static int listed(collide_ctx *cx, int ee, int a, int i, int b, int t) {
  if (!cx->topup) return 0;
  const cbody *A = &cx->b[a], *B = &cx->b[b];
  /* (a pair of one smooth patch of the list's, which it left out) */
  if (a == b && (ee ? patch_skipped_edges(&A->p->col, i, t) : patch_skipped_point(&A->p->col, i, t))) return 0;
  int was;
  if (!A->was_ends && !B->was_ends) {
    /* every end box was its start box: the box test */
    if (ee) {
      was = bvh_box_overlap(A->was_edge_lo[i], A->was_edge_hi[i], B->was_edge_lo[t], B->was_edge_hi[t]);
    } else {
      const vec3 e = v3(A->was_reach, A->was_reach, A->was_reach);
      was = bvh_box_overlap(v3_sub(A->was_lo[i], e), v3_add(A->was_hi[i], e), B->was_tri_lo[t], B->was_tri_hi[t]);
    }
  } else if (ee) {
    was = bvh_motion_overlap(A->was_edge_lo[i], A->was_edge_hi[i], A->was_edge_elo[i], A->was_edge_ehi[i],
                             B->was_edge_lo[t], B->was_edge_hi[t], B->was_edge_elo[t], B->was_edge_ehi[t]);
  } else {
    const vec3 e = v3(A->was_reach, A->was_reach, A->was_reach);
    was = bvh_motion_overlap(v3_sub(A->was_lo[i], e), v3_add(A->was_hi[i], e), v3_sub(A->was_elo[i], e),
                             v3_add(A->was_ehi[i], e), B->was_tri_lo[t], B->was_tri_hi[t], B->was_tri_elo[t],
                             B->was_tri_ehi[t]);
  }
  cx->nlisted += was;
  return was;
}

/* Pair (vertex v, triangle t), or edges (v, t), of body a left out for its smooth patches: a
 * collection leaves out what the current patches skip; a top-up what both they and the list's skip
 * (contact.h), so the list keeps every pair its own patches did not leave out. */
static inline int patch_leaves_out(const collide_ctx *cx, int a, int ee, int32_t v, int32_t t) {
  const particle_collide *c = &cx->b[a].p->col;
  if (!(ee ? patch_skips_edges(c, v, t) : patch_skips_point(c, v, t))) return 0;
  return !cx->topup || (ee ? patch_skipped_edges(c, v, t) : patch_skipped_point(c, v, t));
}

static int vertex_cb(int t, void *ud) {
  collide_ctx *cx = ud;
  const particles *pb = cx->b[cx->qb].p;
  if (cx->qa == cx->qb && (tri_has(&pb->tri[3 * t], cx->qi) || patch_leaves_out(cx, cx->qa, 0, cx->qi, t))) return 0;
  if (listed(cx, 0, cx->qa, cx->qi, cx->qb, t)) return 0;
  return push_pair(cx, 0, cx->qa, cx->qb, cx->qi, t);
}

static int edge_cb(int i, int j, void *ud) {
  collide_ctx *cx = ud;
  if (cx->qa == cx->qb && (edges_touch(cx->b[cx->qa].p->col.edge, i, j) || patch_leaves_out(cx, cx->qa, 1, i, j))) return 0;
  return push_pair(cx, 1, cx->qa, cx->qb, i, j);
}

/* a's vertices [lo, hi) (those marked in `mask`, when given) against b's triangle tree */
static void vertices_range(collide_ctx *cx, int a, int b, const uint8_t *mask, int lo, int hi) {
  const particles *pa = cx->b[a].p;
  const double r = box_reach(&cx->b[a]);
  const vec3 e = v3(r, r, r);
  cx->qa = a;
  cx->qb = b;
  const uint8_t *only = cx->b[a].points;
  /* a vertex's own smooth patch holds no pair a collection wants (contact_patch.c): its subtrees
   * are passed over (a top-up's pairs are left out one by one, patch_leaves_out) */
  const particle_collide *cb = &cx->b[b].p->col;
  const int32_t *tag = a == b && cb->patches == 1 && !cx->topup ? cb->tri_tag : NULL;
  for (int i = lo; i < hi && !cx->overflow; i++) {
    if ((only && !only[i]) || (mask && !mask[i])) continue;
    cx->qi = i;
    bvh_query_motion_skip(&cb->tri_tree, tag, tag ? patch_top(cb->pt_top, cb->leaf_v, i) : -1, v3_sub(pa->col.ecol[i], e),
                          v3_add(pa->col.ecol_hi[i], e), v3_sub(pa->col.ecol_e[i], e), v3_add(pa->col.ecol_ehi[i], e),
                          vertex_cb, cx);
  }
}

/* Whether world:pair has set the two bodies' pair to collide = false (cbody.off). */
static inline int pair_off(const cbody *a, const cbody *b) { return (int)((a->off >> b->at) & 1); }

/* Whether two bodies' features are tested against each other in this run: every choice of pairs
 * of bodies goes through here (the candidate search and its top-ups, which obstacles join, which
 * bodies are near one another, the list's signature). */
static int boxes_overlap(const cbody *a, const cbody *b) {
  if (pair_off(a, b)) return 0;
  if ((a->cloth_only && !b->cloth) || (b->cloth_only && !a->cloth)) return 0;
  /* depth-contact solids meet each other in contact_solid.c and obstacles through their vertices'
   * contacts, as document 002's points do */
  if (a->p->depth_contact && (b->p->depth_contact || b->obstacle)) return 0;
  if (b->p->depth_contact && a->obstacle) return 0;
  const double r = box_reach(a) + box_reach(b);
  const vec3 e = v3(r, r, r);
  return bvh_box_overlap(v3_sub(a->p->sub_lo, e), v3_add(a->p->sub_hi, e), b->p->sub_lo, b->p->sub_hi);
}

/* Sorts the candidates by (type, bodies, features): the set the trees report is exact whatever
 * their shape, but the order of a traversal depends on when a tree was last rebuilt, and the
 * Gauss-Seidel and Jacobi sums depend on the order. Sorting makes a step depend on the state
 * only (a restored checkpoint continues bit for bit). LSD radix sort of keys packed in as few
 * bits as the list needs, 11-bit digits; a digit all keys share is skipped. */
static int bits_for(uint32_t v) {
  int b = 0;
  while (b < 32 && (v >> b) != 0) b++;
  return b;
}

#define SORT_DIGIT 11 /* bits per radix digit: a count table of 2048 stays in the first-level cache */

typedef struct sort_ctx {
  collide_pair *pairs;
  uint64_t *k0, *k1;
  uint32_t *count[2]; /* per half of the array: the digit's counts, then where its keys go */
  int wb, wf, shift, build;
} sort_ctx;

/* Half `part` of a pass: the keys packed from the pairs (build) or taken as they are, counted by the
 * pass's digit. */
static void sort_count_rows(void *ctx, int lo, int hi, int part) {
  sort_ctx *c = ctx;
  uint32_t *count = c->count[part];
  const uint64_t mask = ((uint64_t)1 << SORT_DIGIT) - 1;
  memset(count, 0, sizeof(uint32_t) << SORT_DIGIT);
  for (int i = lo; i < hi; i++) {
    if (c->build) {
      const collide_pair *q = &c->pairs[i];
      c->k0[i] = ((((((uint64_t)q->type << c->wb | (uint64_t)q->a) << c->wb | (uint64_t)q->b) << c->wf) | (uint64_t)q->fa)
                  << c->wf) | (uint64_t)q->fb;
    }
    count[(c->k0[i] >> c->shift) & mask]++;
  }
}

/* Half `part` of a pass: its keys to their places (the first half's before the second's within a
 * bucket: the sort is stable, whichever thread moves which half). */
static void sort_scatter_rows(void *ctx, int lo, int hi, int part) {
  sort_ctx *c = ctx;
  uint32_t *at = c->count[part];
  const uint64_t mask = ((uint64_t)1 << SORT_DIGIT) - 1;
  for (int i = lo; i < hi; i++) c->k1[at[(c->k0[i] >> c->shift) & mask]++] = c->k0[i];
}

/* Half `part`: the pairs unpacked from the sorted keys. */
static void sort_unpack_rows(void *ctx, int lo, int hi, int part) {
  (void)part;
  const sort_ctx *c = ctx;
  const uint64_t fmask = ((uint64_t)1 << c->wf) - 1, bmask = ((uint64_t)1 << c->wb) - 1;
  for (int i = lo; i < hi; i++) {
    collide_pair *q = &c->pairs[i];
    const uint64_t k = c->k0[i];
    q->fb = (int32_t)(k & fmask);
    q->fa = (int32_t)((k >> c->wf) & fmask);
    q->b = (int32_t)((k >> (2 * c->wf)) & bmask);
    q->a = (int32_t)((k >> (2 * c->wf + c->wb)) & bmask);
    q->type = (int32_t)(k >> (2 * c->wf + 2 * c->wb));
  }
}

/* Each pass counts its digit in the two halves of the array, then moves each half's keys (on the
 * world's helper thread for the second half when the list is long): the same order as one pass
 * over the whole array. */
static int sort_pairs(loom_world *w, int first, int n) {
  if (n < 2) return 0;
  collide_pair *pairs = w->cpairs + first;
  /* the key packs (type, a, b, fa, fb) in as few bits as this list needs, in that order of
   * significance */
  uint32_t maxb = 0, maxf = 0;
  for (int i = 0; i < n; i++) {
    const collide_pair *q = &pairs[i];
    maxb |= (uint32_t)q->a | (uint32_t)q->b;
    maxf |= (uint32_t)q->fa | (uint32_t)q->fb;
  }
  const int wb = bits_for(maxb), wf = bits_for(maxf);
  const int total = 1 + 2 * wb + 2 * wf;
  if (total > 64) return -1; /* (features are numbered below 2^24, bodies below 64: never) */
  const int digits = (total + SORT_DIGIT - 1) / SORT_DIGIT, buckets = 1 << SORT_DIGIT;
  arena_mark mark = arena_get_mark(&w->scratch);
  sort_ctx c = {pairs, NULL, NULL, {NULL, NULL}, wb, wf, 0, 1};
  c.k0 = ARENA_NEW(&w->scratch, uint64_t, n, "candidate keys");
  c.k1 = ARENA_NEW(&w->scratch, uint64_t, n, "candidate keys");
  c.count[0] = ARENA_NEW(&w->scratch, uint32_t, 2 * (size_t)buckets, "radix counts");
  if (!c.k0 || !c.k1 || !c.count[0]) {
    arena_release(&w->scratch, mark);
    return -1;
  }
  c.count[1] = c.count[0] + buckets;
  core_par *par = n >= PAR_CANDIDATES ? world_par(w) : NULL;
  for (int d = 0; d < digits; d++) {
    c.shift = d * SORT_DIGIT;
    core_par_rows(par, n, sort_count_rows, &c);
    c.build = 0;
    uint32_t *c0 = c.count[0], *c1 = c.count[1];
    if (c0[(c.k0[0] >> c.shift) & (uint64_t)(buckets - 1)] + c1[(c.k0[0] >> c.shift) & (uint64_t)(buckets - 1)] == (uint32_t)n)
      continue; /* one digit for all: in order */
    uint32_t sum = 0;
    for (int b = 0; b < buckets; b++) {
      const uint32_t v0 = c0[b], v1 = c1[b];
      c0[b] = sum;
      c1[b] = sum + v0;
      sum += v0 + v1;
    }
    core_par_rows(par, n, sort_scatter_rows, &c);
    uint64_t *t = c.k0;
    c.k0 = c.k1;
    c.k1 = t;
  }
  core_par_rows(par, n, sort_unpack_rows, &c);
  arena_release(&w->scratch, mark);
  return 0;
}

static void start_distances(collide_ctx *cx);

/* A candidate's four nodes in gather's order: body (index into cx->b) and vertex of each. */
static void pair_vertices(const collide_ctx *cx, const collide_pair *q, int body[4], int32_t vi[4]) {
  if (!(q->type & 1)) {
    const int32_t *t = &cx->b[q->b].p->tri[3 * q->fb];
    for (int k = 0; k < 3; k++) body[k] = q->b, vi[k] = t[k];
    body[3] = q->a, vi[3] = q->fa;
  } else {
    const int32_t *ea = &cx->b[q->a].p->col.edge[2 * q->fa], *eb = &cx->b[q->b].p->col.edge[2 * q->fb];
    body[0] = body[1] = q->a, vi[0] = ea[0], vi[1] = ea[1];
    body[2] = body[3] = q->b, vi[2] = eb[0], vi[3] = eb[1];
  }
}

/* The global indices of a candidate's four nodes, in gather's order. */
static void pair_nodes(const collide_ctx *cx, collide_pair *q) {
  int body[4];
  int32_t vi[4];
  pair_vertices(cx, q, body, vi);
  for (int k = 0; k < 4; k++) q->g[k] = cx->b[body[k]].offset + vi[k];
}

/* Per vertex, the candidates of the collected run it is a node of (compressed rows, ascending
 * candidate index): the passes after the first visit only the candidates of vertices whose motion
 * changed (the top-ups' short run is scanned). Built when such a pass first needs it (most lists
 * never serve one), valid until the list is collected again. */
static int adjacency_room(collide_ctx *cx) {
  loom_world *w = cx->w;
  const int N = cx->total;
  if (N + 1 > w->cadj_vcap) {
    int32_t *f = core_realloc(w->cadj_first, (size_t)N + 1, sizeof(int32_t));
    if (!f) return -1;
    w->cadj_first = f;
    w->cadj_vcap = N + 1;
  }
  return 0;
}

static void build_adjacency(collide_ctx *cx) {
  loom_world *w = cx->w;
  const int n = w->cpair_base, N = cx->total;
  LOOM_ASSERT(n <= w->cpair_cap && N < w->cadj_vcap, "candidate arrays grow together");
  int32_t *first = w->cadj_first;
  memset(first, 0, sizeof(int32_t) * ((size_t)N + 1));
  for (int c = 0; c < n; c++)
    for (int k = 0; k < 4; k++) first[w->cpairs[c].g[k] + 1]++;
  for (int g = 0; g < N; g++) first[g + 1] += first[g];
  /* filled through first[] as the cursors (each ends at the next row's start), then shifted back */
  for (int c = 0; c < n; c++)
    for (int k = 0; k < 4; k++) w->cadj[first[w->cpairs[c].g[k]]++] = c;
  for (int g = N; g > 0; g--) first[g] = first[g - 1];
  first[0] = 0;
  w->cadj_ok = 1;
}

/* Every candidate pair whose swept boxes, inflated by the thickness and a margin, overlap, in a
 * canonical order (sort_pairs). The list stays valid while every vertex's path stays within the
 * margin of the path box it had at collection (list_valid): a pair within reach now was within
 * reach of the inflated boxes then. So a list serves several substeps, and steps, of slow
 * motion; pairs it holds beyond reach fail the distance tests and act on nothing, so the result
 * does not depend on when it was collected. */
/* The k-th smallest of a[0..n) (a is reordered): quickselect with the middle element as pivot,
 * deterministic. */
static double select_kth(double *a, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const double pivot = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const double t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/* One part of the traversal: each vertex query's half of the vertices, each edge traversal's
 * part (bvh_query_self_part, bvh_query_pairs_part). */
static void traverse_part(void *ctx, int part) {
  collide_ctx *cx = ((collide_ctx **)ctx)[part];
  for (int a = 0; a < cx->nb; a++) {
    const int na = cx->b[a].p->n;
    if (cx->b[a].self) {
      vertices_range(cx, a, a, NULL, part ? na / 2 : 0, part ? na : na / 2);
      cx->qa = cx->qb = a;
      const particle_collide *c = &cx->b[a].p->col;
      bvh_query_self_part_skip(&c->edge_tree, c->patches == 1 ? c->edge_tag : NULL, part, edge_cb, cx);
    }
    for (int b = a + 1; b < cx->nb; b++) {
      if (a >= cx->nsoft || !boxes_overlap(&cx->b[a], &cx->b[b])) continue;
      const int nb = cx->b[b].p->n;
      vertices_range(cx, a, b, NULL, part ? na / 2 : 0, part ? na : na / 2);
      vertices_range(cx, b, a, NULL, part ? nb / 2 : 0, part ? nb : nb / 2);
      cx->qa = a;
      cx->qb = b;
      bvh_query_pairs_part(&cx->b[a].p->col.edge_tree, &cx->b[b].p->col.edge_tree, part, edge_cb, cx);
    }
  }
}

/* Runs fn(parts, part) for the two parts of a search, the second on the world's helper thread when
 * the bodies are large, and appends the second part's pairs (collected in cpairs2) to the first's
 * (the list is sorted next, so the result is the same either way). */
static void in_two_parts(collide_ctx *cx, core_par_fn fn) {
  loom_world *w = cx->w;
  collide_ctx second = *cx;
  second.part = 1;
  second.nlisted = 0;
  w->ncpairs2 = 0;
  collide_ctx *parts[2] = {cx, &second};
  core_par_run(cx->total >= PAR_TRAVERSE ? world_par(w) : NULL, fn, parts);
  cx->overflow |= second.overflow;
  cx->nlisted += second.nlisted;
  if (cx->overflow || !w->ncpairs2) return;
  if (w->ncpairs + w->ncpairs2 > w->cpair_cap && reserve_pairs(w, w->ncpairs + w->ncpairs2)) {
    cx->overflow = 1;
    return;
  }
  memcpy(w->cpairs + w->ncpairs, w->cpairs2, sizeof(collide_pair) * (size_t)w->ncpairs2);
  w->ncpairs += w->ncpairs2;
}

/* Every pair of features whose boxes in the trees overlap, appended to the list: in two parts,
 * side by side on the world's helper thread when the bodies are large; the second part's pairs
 * follow the first's (the list is sorted next, so the result is the same either way). */
static void traverse_all(collide_ctx *cx) {
  in_two_parts(cx, traverse_part);
}

static int collect(collide_ctx *cx) {
  cx->w->ncpairs = 0;
  cx->w->cpair_valid = 0;
  /* the search frame: the particle bodies' median vertex velocity (per axis: it minimises the
   * summed extent of the vertices' swept boxes — a cloth half at rest and half falling keeps
   * the frame of its larger part), from this substep's start */
  int count = 0;
  for (int a = 0; a < cx->nsoft; a++) count += cx->b[a].p->n;
  cx->vref = v3(0, 0, 0);
  arena_mark mark = arena_get_mark(&cx->w->scratch);
  double *comp = count > 0 ? ARENA_NEW(&cx->w->scratch, double, (size_t)count, "search frame") : NULL;
  if (comp) {
    double med[3];
    for (int axis = 0; axis < 3; axis++) {
      int k = 0;
      for (int a = 0; a < cx->nsoft; a++)
        for (int i = 0; i < cx->b[a].p->n; i++) comp[k++] = (&cx->b[a].p->col.vbar[i].x)[axis];
      med[axis] = select_kth(comp, count, count / 2);
    }
    cx->vref = v3(med[0], med[1], med[2]);
    if (!v3_isfinite(cx->vref)) cx->vref = v3(0, 0, 0);
  }
  arena_release(&cx->w->scratch, mark);
  cx->tshift = 0;
  cx->w->cframe_v = cx->vref;
  cx->w->cframe_t = cx->tnow;
  for (int a = 0; a < cx->nb; a++) {
    particles *p = cx->b[a].p;
    p->col.ends = 0;
    p->col.list_margin = cx->b[a].margin;
    for (int i = 0; i < p->n; i++) p->col.ends += vertex_boxes(cx, &cx->b[a], i, 1);
    if (update_trees(&cx->b[a], world_par(cx->w))) return -1;
    if (cx->b[a].self) patch_tree_tags(p);
    p->col.frame_v = cx->vref; /* (the frame of the trees' boxes: loom_body_collision_boxes) */
    p->col.frame_t = cx->w->cframe_t;
    p->col.vert_ok = 0; /* (the vertex tree is built by the first top-up that needs it, then refit) */
  }
  traverse_all(cx);
  if (cx->overflow || sort_pairs(cx->w, 0, cx->w->ncpairs) || adjacency_room(cx)) return -1;
  cx->w->cpair_base = cx->w->ncpairs;
  if (cx->w->ncpairs) memset(cx->w->cseen, 0, sizeof(int32_t) * (size_t)cx->w->ncpairs);
  cx->w->cadj_ok = 0;
  cx->w->cpair_valid = 1;
  cx->new_list = 1; /* (start_distances gives the pairs their nodes first) */
  start_distances(cx);
  cx->new_list = 0;
  for (int a = 0; a < cx->nsoft; a++)
    if (cx->b[a].self) patch_list_made(cx->b[a].p);
  return 0;
}

/* ---- one pair's four nodes -------------------------------------------------------------------- */

/* The positions and velocities of a pair's nodes (what every test needs); complete() adds the
 * masses and obstacle holds for the pairs that get an impulse. */
static void node(feat4 *f, int k, const cbody *cb, int i) {
  particles *p = cb->p;
  f->p[k] = p;
  f->vi[k] = i;
  f->gi[k] = cb->offset + i;
  f->x[k] = p->x_sub[i];
  f->v[k] = p->col.vbar[i];
}

static void complete(feat4 *f, const collide_ctx *cx, const collide_pair *q) {
  for (int k = 0; k < 4; k++) {
    const particles *p = f->p[k];
    const int i = f->vi[k];
    f->inv_m[k] = p->col.inv_m[i];
    f->held[k] = p->col.held[i];
    f->nobs[k] = p->col.nobs[i];
    f->m[k] = p->m[i];
  }
  f->mu = sqrt(cx->b[q->a].p->friction * cx->b[q->b].p->friction);
}

static void gather(const collide_ctx *cx, const collide_pair *q, feat4 *f) {
  const cbody *A = &cx->b[q->a], *B = &cx->b[q->b];
  f->ee = q->type & 1;
  if (!f->ee) {
    const int32_t *t = &B->p->tri[3 * q->fb];
    for (int k = 0; k < 3; k++) node(f, k, B, t[k]);
    node(f, 3, A, q->fa);
  } else {
    const int32_t *ea = &A->p->col.edge[2 * q->fa], *eb = &B->p->col.edge[2 * q->fb];
    node(f, 0, A, ea[0]);
    node(f, 1, A, ea[1]);
    node(f, 2, B, eb[0]);
    node(f, 3, B, eb[1]);
  }
  f->thick = A->half + B->half;
}

/* Inverse masses for a relative velocity change along u: a vertex an obstacle holds on one side
 * keeps its mass for changes away from the obstacle and is immovable towards it (the obstacle
 * pass put it at the contact distance; pushing it in would undo that). */
static void effective(const feat4 *f, const double w[4], vec3 u, double inv[4]) {
  for (int k = 0; k < 4; k++) {
    inv[k] = f->inv_m[k];
    if (f->held[k] == 1 && w[k] * v3_dot(u, f->nobs[k]) < 0) inv[k] = 0;
  }
}

static double wsum2(const double inv[4], const double w[4]) {
  double s = 0;
  for (int k = 0; k < 4; k++) s += w[k] * w[k] * inv[k];
  return s;
}

/* How much of a pair's relative velocity change its impulse may give now. The change reaches the
 * nodes as w_k inv_k / s times it (s = sum of w^2 inv): at most 1 when the nodes are free with equal
 * masses, but 1 / w_k for a free node of small weight whose heavier partners are held or pinned (an
 * edge whose other node, 2 mm away, an obstacle holds: 500 times). Such a pair cannot be separated by moving
 * what can move; the impulse is scaled so that no node's velocity changes by more than
 * AMPLIFY_MAX times the relative change, and the rest of the approach is left to the next CCD pass
 * and the impact zones (which move those nodes rigidly with the held ones). In two 32 x 32 cloths
 * falling on a box one such pair gave a corner vertex 66 m/s in a substep and pulled it into a
 * spike; of the 37 scenes only that one ends differently. */
#define AMPLIFY_MAX 4.0
static double amplify_scale(const double w[4], const double inv[4], double s) {
  double most = 0;
  for (int k = 0; k < 4; k++) most = d_max(most, fabs(w[k]) * inv[k]);
  most /= s;
  return most > AMPLIFY_MAX ? AMPLIFY_MAX / most : 1;
}

static vec3 rel(const double w[4], const vec3 y[4]) {
  vec3 r = v3(0, 0, 0);
  for (int k = 0; k < 4; k++) r = v3_madd(r, y[k], w[k]);
  return r;
}

/* Gauss-Seidel: the relative velocity change dvrel distributed to the nodes now, a node held by
 * an obstacle counting as immovable if the change along u would push it in (apply_now: u = dvrel);
 * returns the impulse the first feature (the nodes with w > 0) received. */
static vec3 apply_along(feat4 *f, const double w[4], vec3 dvrel, vec3 u) {
  double inv[4];
  effective(f, w, u, inv);
  const double s = wsum2(inv, w);
  vec3 imp = v3(0, 0, 0);
  if (!(s > 0)) return imp;
  const double cap = amplify_scale(w, inv, s);
  if (cap < 1) dvrel = v3_scale(dvrel, cap);
  for (int k = 0; k < 4; k++) {
    if (inv[k] == 0 || w[k] == 0) continue;
    vec3 *vb = &f->p[k]->col.vbar[f->vi[k]];
    *vb = v3_madd(*vb, dvrel, w[k] * inv[k] / s);
    if (w[k] > 0) imp = v3_madd(imp, dvrel, f->m[k] * w[k] * inv[k] / s);
  }
  return imp;
}

static vec3 apply_now(feat4 *f, const double w[4], vec3 dvrel) { return apply_along(f, w, dvrel, dvrel); }

/* A later run's proximity impulse changed the pair's nodes: its CCD passes test their pairs. */
static void stamp_nodes(const feat4 *f) {
  for (int k = 0; k < 4; k++) f->p[k]->col.stamp[f->vi[k]] = 1;
}

/* The pipeline's contacts join the world's buffer (solver 3 proximity, 4 CCD): a is the point or
 * the first edge, b the triangle or the second edge; edge indices are the body's sorted unique
 * edges (as loom.mesh numbers them). */
static void record(collide_ctx *cx, const collide_pair *q, const feat4 *f, const double w[4], vec3 n, double depth,
                   double toi, vec3 impulse, int solver) {
  contact_work *kw;
  loom_contact *rec = contacts_push(cx->w, &kw);
  if (!rec) return;
  const int sa = cx->b[q->a].slot, sb = cx->b[q->b].slot;
  kw->slot_a = sa;
  kw->slot_b = sb;
  kw->resolved = 1;
  kw->collided = solver == 4;
  rec->body_a = world_handle(cx->w, sa);
  rec->body_b = world_handle(cx->w, sb);
  rec->type_a = f->ee ? LOOM_FEATURE_EDGE : LOOM_FEATURE_VERTEX;
  rec->type_b = f->ee ? LOOM_FEATURE_EDGE : LOOM_FEATURE_TRIANGLE;
  rec->feature_a = q->fa;
  rec->feature_b = q->fb;
  rec->solver = solver;
  vec3 pa = v3(0, 0, 0);
  for (int k = 0; k < 4; k++)
    if (w[k] > 0) pa = v3_madd(pa, v3_madd(f->x[k], f->v[k], (toi > 0 ? toi : 0) * cx->h), w[k]);
  rec->point = (loom_vec3){pa.x, pa.y, pa.z};
  rec->normal = (loom_vec3){n.x, n.y, n.z};
  rec->depth = depth;
  rec->toi = toi;
  rec->impulse = (loom_vec3){impulse.x, impulse.y, impulse.z};
}

/* ---- 3. proximity: repulsion and friction ------------------------------------------------------ */

/* The point of a point-triangle pair within the thickness keeps the nearest particle body's
 * triangle it meets for its body's implicit solve (contact_cloth.c, particle_constraints). */
static void note_particle_contact(const collide_ctx *cx, const collide_pair *q, const feat4 *f, vec3 n, double dist) {
  particles *p = f->p[3];
  const int i = f->vi[3];
  if (!p->pc_n || !(dist > 0) || (v3_len2(p->pc_n[i]) > 0 && !(dist < p->pc_dist[i]))) return;
  const int slot = cx->b[q->b].slot;
  if (cx->w->bodies[slot].pts != f->p[0]) return; /* a rigid body's surface: its own constraints */
  p->pc_n[i] = n;
  p->pc_dist[i] = dist;
  int32_t *t = &p->pc_tri[4 * i];
  t[0] = slot;
  for (int k = 0; k < 3; k++) t[k + 1] = f->vi[k];
}

int contact_repulsion(const double w[4], const double inv_m[4], const double m[4], vec3 n, vec3 vrel, double dist,
                      double thick, double k, double mu, double h, vec3 *dvrel) {
  *dvrel = v3(0, 0, 0);
  const double d = thick - dist;
  const double vn = v3_dot(vrel, n);
  const double limit = 0.1 * d / h;
  if (!(d > 0) || !(vn < limit)) return 0;
  double inv_a = 0, inv_b = 0, ma = 0, mb = 0;
  int inf_a = 0, inf_b = 0;
  for (int q = 0; q < 4; q++) {
    if (w[q] > 0) {
      ma += w[q] * m[q];
      inf_a |= inv_m[q] == 0;
    } else if (w[q] < 0) {
      mb -= w[q] * m[q];
      inf_b |= inv_m[q] == 0;
    }
  }
  inv_a = inf_a || !(ma > 0) ? 0 : 1 / ma;
  inv_b = inf_b || !(mb > 0) ? 0 : 1 / mb;
  double dvn = fmax(-vn, 0) + h * k * d * (inv_a + inv_b);
  if (dvn > limit - vn) dvn = limit - vn;
  vec3 vt = v3_madd(vrel, n, -vn);
  const double lt = v3_len(vt);
  vec3 out = v3_scale(n, dvn);
  if (lt > 0) out = v3_madd(out, vt, -fmin(mu * dvn, lt) / lt);
  *dvrel = out;
  return 1;
}

int contact_resting(vec3 n, vec3 vrel, double dist, double thick, double mu, double h, vec3 *dvrel) {
  *dvrel = v3(0, 0, 0);
  const double vn = v3_dot(vrel, n);
  const double target = (thick - dist) / h;
  if (!(dist >= thick) || !(vn < target)) return 0;
  const double dvn = target - vn;
  const vec3 vt = v3_madd(vrel, n, -vn);
  const double lt = v3_len(vt);
  vec3 out = v3_scale(n, dvn);
  if (lt > 0) out = v3_madd(out, vt, -fmin(mu * dvn, lt) / lt);
  *dvrel = out;
  return 1;
}

/* The gap between the boxes of the pair's two features (nodes 0..1 and 2..3 of an edge pair; the
 * triangle, nodes 0..2, and the point, node 3, of a point-triangle pair) over the positions y0 and,
 * if given, y1: a lower bound of the features' distance anywhere on the linear motion between. */
static double feature_gap(const feat4 *f, const vec3 *y0, const vec3 *y1) {
  const int split = f->ee ? 2 : 3;
  vec3 lo[2] = {y0[0], y0[3]}, hi[2] = {y0[0], y0[3]};
  for (int k = 0; k < 4; k++) {
    const int side = k >= split;
    lo[side] = v3_min(lo[side], y0[k]);
    hi[side] = v3_max(hi[side], y0[k]);
    if (y1) {
      lo[side] = v3_min(lo[side], y1[k]);
      hi[side] = v3_max(hi[side], y1[k]);
    }
  }
  const vec3 g = v3(d_max(0, d_max(lo[0].x - hi[1].x, lo[1].x - hi[0].x)), d_max(0, d_max(lo[0].y - hi[1].y, lo[1].y - hi[0].y)),
                    d_max(0, d_max(lo[0].z - hi[1].z, lo[1].z - hi[0].z)));
  return v3_len(g);
}

/* The start positions do not change within a substep: each candidate's distance then (or, when
 * the features' boxes are farther apart than the thickness, that box gap as a lower bound) is
 * found once per collection; proximity skips pairs not within the thickness and CCD pairs that
 * cannot close the gap with the motion they have. */
static void side_moves(const collide_pair *q, const double *per_vertex, double *ma, double *mb);

/* Whether the pairs of bodies a and b are resting pairs: with a body that rests on anything
 * (solids), or between two bodies when one of them rests on other bodies (cloth). */
static inline int pair_resting(const collide_ctx *cx, int a, int b) {
  return cx->b[a].rest_self | cx->b[b].rest_self | (a != b && (cx->b[a].resting | cx->b[b].resting));
}

/* A point-triangle pair with a resting body (keep_pair engages it up to RESTING_REACH thicknesses). */
static inline int resting_point_pair(const collide_ctx *cx, const collide_pair *q) {
  return pair_resting(cx, q->a, q->b) && !(q->type & 1);
}

/* The distance below which a candidate's selection needs its exact start distance; from it on, a
 * lower bound makes the same choices: the thickness, for a resting point-triangle pair
 * RESTING_REACH thicknesses (two lower bounds — a box gap, a bound kept from a previous run —
 * could choose differently below that, and results would depend on whether the list was kept). */
static inline double exact_below(const collide_ctx *cx, const collide_pair *q) {
  const double thick = cx->b[q->a].half + cx->b[q->b].half;
  return resting_point_pair(cx, q) ? RESTING_REACH * thick : thick;
}

/* A candidate's distance at the substep's start, or its features' box gap when that is
 * exact_below or more. */
static double start_distance(const collide_ctx *cx, const collide_pair *q) {
  feat4 f;
  gather(cx, q, &f);
  const double gap = feature_gap(&f, f.x, NULL);
  if (gap >= exact_below(cx, q)) return gap;
  double wt[4];
  return geom_proximity(f.ee, f.x, wt, NULL);
}

static void start_distance_rows(void *ctx, int lo, int hi, int part) {
  (void)part;
  const collide_ctx *cx = ctx;
  loom_world *w = cx->w;
  for (int c = lo; c < hi; c++) {
    if (cx->new_list) pair_nodes(cx, &w->cpairs[c]);
    if (cx->moved) {
      /* the distance at the previous run's start, less the most any node on each side moved
       * since, is a lower bound; from exact_below on it serves every test as well as the exact
       * distance (proximity skips the pair, the CCD cull only needs a lower bound) */
      const collide_pair *q = &w->cpairs[c];
      double ma, mb;
      side_moves(q, cx->moved, &ma, &mb);
      const double bound = w->cdist[c] - ma - mb;
      if (bound >= exact_below(cx, q)) {
        w->cdist[c] = bound;
        continue;
      }
    }
    w->cdist[c] = start_distance(cx, &w->cpairs[c]);
  }
}

/* Each candidate's distance depends on its own nodes only: the two halves of the list side by
 * side (the second on the world's helper thread) give the same bits as one pass. */
static void start_distances(collide_ctx *cx) {
  loom_world *w = cx->w;
  w->cdist_serial = w->substep_serial;
  core_par_rows(w->ncpairs >= PAR_CANDIDATES ? world_par(w) : NULL, w->ncpairs, start_distance_rows, cx);
}

static int32_t *select_pairs(collide_ctx *cx, int full, int minstamp, int ccd, int *count);

/* Whether a resting pair dist0 apart (or more) can come within the thickness over the substep:
 * its features' points are convex combinations of their nodes, so their distance shrinks at most
 * by the largest displacement of a node of one side relative to a node of the other (bodies that
 * sway together barely move relative to each other). */
static int within_reach(const feat4 *f, double dist0, double h) {
  const int split = f->ee ? 2 : 3;
  double rel2 = 0;
  for (int i = 0; i < split; i++)
    for (int j = split; j < 4; j++) rel2 = d_max(rel2, v3_len2(v3_sub(f->v[i], f->v[j])));
  return dist0 - h * sqrt(rel2) < f->thick;
}

/* A resting pair's state over the proximity sweeps (in relative velocity, m/s). */
typedef struct rest_pair {
  int32_t c;
  int rec;       /* its record in the contact buffer, -1 if the buffer was full */
  double wt[4];  /* the features' weights at the start */
  vec3 n;        /* the normal, from b towards a */
  double target; /* the normal relative velocity the pair keeps at least */
  double ln;     /* the normal change so far (>= 0) */
  vec3 lt;       /* the friction change so far (|lt| <= mu ln) */
} rest_pair;

/* Later sweeps over the resting pairs: each pair's accumulated normal change is moved so that its
 * normal relative velocity is the target again (never below zero: a pair does not pull), and its
 * friction so that the tangential relative velocity vanishes, within mu times the normal change
 * (projected Gauss-Seidel); until no pair changes by more than the tolerance. */
static void resting_sweeps(collide_ctx *cx, rest_pair *rp, int nrest) {
  loom_world *w = cx->w;
  for (int sweep = 0; sweep < RESTING_SWEEPS; sweep++) {
    double largest = 0;
    for (int j = 0; j < nrest; j++) {
      rest_pair *r = &rp[j];
      const collide_pair *q = &w->cpairs[r->c];
      feat4 f;
      gather(cx, q, &f);
      complete(&f, cx, q);
      const vec3 vrel = rel(r->wt, f.v);
      const double vn = v3_dot(vrel, r->n);
      const double ln = fmax(r->ln + r->target - vn, 0);
      vec3 lt = v3_sub(r->lt, v3_madd(vrel, r->n, -vn));
      const double cap = f.mu * ln, len = v3_len(lt);
      if (len > cap) lt = len > 0 ? v3_scale(lt, cap / len) : v3(0, 0, 0);
      const vec3 dv = v3_add(v3_scale(r->n, ln - r->ln), v3_sub(lt, r->lt));
      const double change = v3_len(dv);
      if (!(change > 0)) continue;
      largest = d_max(largest, change);
      const vec3 imp = apply_along(&f, r->wt, dv, r->n);
      if (cx->later) stamp_nodes(&f);
      r->ln = ln;
      r->lt = lt;
      if (r->rec >= 0) {
        loom_contact *rec = &w->contacts.items[r->rec];
        rec->impulse = (loom_vec3){rec->impulse.x + imp.x, rec->impulse.y + imp.y, rec->impulse.z + imp.z};
      }
    }
    if (!(largest > RESTING_TOLERANCE)) break;
  }
}

/* An explicit cloth reports v = vbar + a h / 2 (particles.accel): the substep's mean velocity
 * extrapolated to its end with the substep's acceleration. A resting pair's velocity change over
 * the substep is a force between its features (lambda / h, lambda the relative change), which at
 * the substep's end still cancels the part of their relative acceleration that presses them
 * together: the features' velocities are extrapolated with it too, by so much of their relative
 * extrapolation as points against lambda, and at most by lambda / 2 (what that force, constant
 * over the substep, adds by the end), shared among the nodes as the pair's impulse is (equal and
 * opposite: momentum is kept). A node whose velocity is not extrapolated (an implicit cloth's, a
 * solid's) or that is pinned or held takes none. The share joins the node's accel, which the
 * next substep takes off again with the rest: the motion (x, vbar) is what it was, only the
 * velocity reported at the substep's end changes. Without it a cloth resting on another reported
 * v = -g h / 2 where on an obstacle it reports 0. Gauss-Seidel in the pairs' order (each sees the
 * extrapolation the ones before left). */
static void resting_extrapolation(collide_ctx *cx, const rest_pair *rp, int nrest) {
  loom_world *w = cx->w;
  for (int j = 0; j < nrest; j++) {
    const rest_pair *r = &rp[j];
    const vec3 lambda = v3_madd(r->lt, r->n, r->ln);
    const double len = v3_len(lambda);
    if (!(len > 0)) continue;
    const vec3 d = v3_scale(lambda, 1 / len);
    const collide_pair *q = &w->cpairs[r->c];
    feat4 f;
    gather(cx, q, &f);
    complete(&f, cx, q);
    double inv[4];
    effective(&f, r->wt, r->n, inv);
    vec3 e[4], erel = v3(0, 0, 0);
    for (int k = 0; k < 4; k++) {
      const particles *p = f.p[k];
      const int i = f.vi[k];
      e[k] = v3(0, 0, 0);
      if (!p->accel) {
        inv[k] = 0;
        continue;
      }
      e[k] = v3_sub(v3_add(p->v[i], cx->vext[f.gi[k]]), p->col.vbar0[i]);
      erel = v3_madd(erel, e[k], r->wt[k]);
    }
    const double sw = wsum2(inv, r->wt);
    if (!(sw > 0)) continue;
    double s = d_min(-v3_dot(erel, d), 0.5 * len);
    /* and no node's own extrapolation is turned past zero along its share */
    for (int k = 0; k < 4; k++) {
      const double share = r->wt[k] * inv[k] / sw;
      if (share != 0) s = d_min(s, -v3_dot(e[k], d) / share);
    }
    if (!(s > 0)) continue;
    for (int k = 0; k < 4; k++)
      if (inv[k] > 0 && r->wt[k] != 0) cx->vext[f.gi[k]] = v3_madd(cx->vext[f.gi[k]], d, s * r->wt[k] * inv[k] / sw);
  }
}

/* The geometry of one selected proximity pair at the substep's start (positions only: it does not
 * change while the pass's impulses change velocities). */
typedef struct prox_geom {
  double dist, wt[4];
  vec3 n;
  int act; /* near, or a resting point pair apart; and not a pair of one body's features this
            * close at rest */
} prox_geom;

typedef struct prox_ctx {
  const collide_ctx *cx;
  const int32_t *chosen;
  prox_geom *g;
  int resting; /* the pass has resting pairs (rest_pair room) */
} prox_ctx;

static void proximity_geometry_rows(void *ctx, int lo, int hi, int part) {
  (void)part;
  const prox_ctx *pc = ctx;
  const collide_ctx *cx = pc->cx;
  for (int j = lo; j < hi; j++) {
    const collide_pair *q = &cx->w->cpairs[pc->chosen[j]];
    prox_geom *g = &pc->g[j];
    feat4 f;
    gather(cx, q, &f);
    g->dist = geom_proximity(f.ee, f.x, g->wt, &g->n);
    const int resting = pc->resting && pair_resting(cx, q->a, q->b);
    g->act = g->dist < f.thick || (resting && !f.ee && g->dist > 0);
    if (g->act && !f.ee && g->dist > 0) {
      /* Beside the triangle the direction to its nearest boundary point leans along the surface:
       * those pairs are left to the edge-edge pairs of the point's edges with the triangle's (and
       * to the continuous test), as in Bridson et al.; over it the impulse acts along the normal.
       * A cloth sliding on another without friction at 3 m/s lost 19 % of its speed in a second
       * to the leaning impulses, and slid down a slope 5-9 % slower than Coulomb's friction says
       * (now 0.1 % and 1 %); scenes/two_cloths.lua rose 3.3 % above its starting energy while the
       * upper cloth settled (now never above it). */
      const vec3 m = v3_cross(v3_sub(f.x[1], f.x[0]), v3_sub(f.x[2], f.x[0]));
      const double lm = v3_len(m);
      if (lm > 0) {
        const double c = v3_dot(m, g->n) / lm;
        if (fabs(c) < PROX_OVER_COS) g->act = 0;
        else g->n = v3_scale(m, (c >= 0 ? 1 : -1) / lm);
      }
    }
    if (g->act && q->a == q->b) {
      /* features of one body that are this close at rest are the mesh's own business */
      vec3 r[4];
      for (int k = 0; k < 4; k++) r[k] = f.p[k]->rest[f.vi[k]];
      double wr[4];
      if (geom_proximity(f.ee, r, wr, NULL) < f.thick) g->act = 0;
    }
  }
}

/* The proximity pass over the pairs within the thickness at the start, and resting pairs (a body
 * with particles.resting) also when their motion brings them within it: each selected pair's
 * geometry first (in two halves of the list, the second on the helper thread for long lists), then
 * the impulses one pair after another in the list's order (Gauss-Seidel: each sees the velocities
 * the ones before left), then further sweeps over the resting pairs. */
static void proximity(collide_ctx *cx) {
  loom_world *w = cx->w;
  arena_mark mark = arena_get_mark(&w->scratch);
  int nlist = 0, nrest = 0;
  const int32_t *chosen = select_pairs(cx, !cx->later, 1, 0, &nlist);
  rest_pair *rp = cx->resting && nlist ? ARENA_NEW(&w->scratch, rest_pair, nlist, "resting pairs") : NULL;
  prox_geom *geo = nlist ? ARENA_NEW(&w->scratch, prox_geom, nlist, "proximity geometry") : NULL;
  if (nlist && !geo) {
    world_message(w, LOOM_ERROR, cx->b[0].slot, "collisions: out of memory in the proximity pass; skipped this substep");
    nlist = 0;
  }
  prox_ctx pc = {cx, chosen, geo, rp != NULL};
  core_par_rows(nlist >= PAR_PROXIMITY ? world_par(w) : NULL, nlist, proximity_geometry_rows, &pc);
  for (int j = 0; j < nlist; j++) {
    const int c = chosen[j];
    const collide_pair *q = &w->cpairs[c];
    if (!geo[j].act) continue; /* (a pair that does not act needs no gather) */
    const int resting = rp && pair_resting(cx, q->a, q->b);
    feat4 f;
    gather(cx, q, &f);
    if (!(w->cdist[c] < f.thick) && !within_reach(&f, w->cdist[c], cx->h)) continue;
    double wt[4];
    memcpy(wt, geo[j].wt, sizeof wt);
    vec3 n = geo[j].n;
    const double dist = geo[j].dist;
    const int near = dist < f.thick;
    /* (a resting pair, between two bodies, within half a thickness beyond it too: the resting
     * rule holds a point there at the thickness, never nearer, and particle_constraints keeps a
     * pair that near) */
    if (!f.ee && dist < 1.5 * f.thick) note_particle_contact(cx, q, &f, n, dist);
    complete(&f, cx, q);
    vec3 vrel = rel(wt, f.v);
    if (!(dist > 0) && v3_dot(vrel, n) > 0) n = v3_neg(n); /* touching: push against the approach */
    double inv[4];
    effective(&f, wt, n, inv);
    if (!(wsum2(inv, wt) > 0)) continue;
    vec3 dv;
    if (near) {
      const double k = 0.5 * (cx->b[q->a].p->stiffness + cx->b[q->b].p->stiffness);
      if (!contact_repulsion(wt, inv, f.m, n, vrel, dist, f.thick, k, f.mu, cx->h, &dv)) continue;
    } else if (!contact_resting(n, vrel, dist, f.thick, f.mu, cx->h, &dv)) {
      continue;
    }
    w->stats.proximity++;
    const int before = w->contacts.count;
    /* a pair the sweeps take up again decides once, by its normal, which held nodes it cannot
     * move: with the direction of each change, a push into an obstacle went all to the other side
     * and a sweep that took part of it back moved the held node out of the obstacle instead, every
     * substep (a cloth lying on a box with a patch on it did not come to rest: its vertices,
     * lifted and falling back, moved at 2.3 cm/s after 3 s, the patch at 0.8 cm/s;
     * tests/lua/collide_test.lua) */
    const int swept = resting && (!(dist < 0.9 * f.thick) || cx->b[q->a].rest_self || cx->b[q->b].rest_self);
    const vec3 imp = swept ? apply_along(&f, wt, dv, n) : apply_now(&f, wt, dv);
    if (cx->later) stamp_nodes(&f);
    record(cx, q, &f, wt, n, d_max(f.thick - dist, 0), -1, imp, 3);
    /* (a cloth's pair deeper than a tenth of the thickness keeps Bridson's single repulsion:
     * swept, the pairs of a thickness raised live pushed each other's nodes out at tens of m/s) */
    if (swept) {
      rest_pair *r = &rp[nrest++];
      r->c = c;
      r->rec = w->contacts.count > before ? before : -1;
      memcpy(r->wt, wt, sizeof wt);
      r->n = n;
      r->ln = v3_dot(dv, n);
      r->target = v3_dot(vrel, n) + r->ln;
      r->lt = v3_madd(dv, n, -r->ln);
    }
  }
  if (nrest) resting_sweeps(cx, rp, nrest);
  if (nrest && cx->vext) resting_extrapolation(cx, rp, nrest);
  arena_release(&w->scratch, mark);
}

/* ---- 4. continuous collisions ----------------------------------------------------------------- */

static int ccd_pair(const collide_ctx *cx, const feat4 *f, double dist0, geom_ccd_hit *hit) {
  vec3 d[4], e[4];
  const int split = f->ee ? 2 : 3;
  double move_a = 0, move_b = 0;
  for (int k = 0; k < 4; k++) {
    d[k] = v3_scale(f->v[k], cx->h);
    e[k] = v3_add(f->x[k], d[k]);
    const double m2 = v3_len2(d[k]);
    if (k < split) move_a = d_max(move_a, m2);
    else move_b = d_max(move_b, m2);
  }
  const double eta = 0.01 * f->thick;
  /* the distance shrinks at most by the largest displacement on each side */
  if (dist0 - sqrt(move_a) - sqrt(move_b) > eta) return 0;
  /* and at most by the largest displacement of a node of one side relative to a node of the other
   * (the features' points are convex combinations of their nodes): nearby parts of a cloth that
   * swings or falls move nearly together */
  double rel = 0;
  for (int i = 0; i < split; i++)
    for (int j = split; j < 4; j++) rel = d_max(rel, v3_len2(v3_sub(d[i], d[j])));
  if (dist0 - sqrt(rel) > eta) return 0;
  /* the features' swept boxes must come within eta (most candidates of the thickness-inflated
   * search do not) */
  if (feature_gap(f, f->x, e) > eta) return 0;
  return f->ee ? geom_ccd_edge_edge(f->x, d, eta, hit) : geom_ccd_point_triangle(f->x, d, eta, hit);
}

/* The relative normal velocity change that leaves the pair 10 % of the thickness apart along n at
 * the end of the substep (0: the pair already separates that fast). */
double contact_ccd_target(const double w[4], const vec3 x0[4], const vec3 v[4], vec3 n, double thick, double h) {
  const double d0 = v3_dot(rel(w, x0), n);
  const double vn = v3_dot(rel(w, v), n);
  const double target = (0.1 * thick - d0) / h;
  return vn < target ? target - vn : 0;
}

double contact_ccd_rest(const double w[4], const vec3 v[4], vec3 n, double dvn) {
  const double vn = v3_dot(rel(w, v), n) + dvn;
  return vn < 0 ? -vn : 0;
}

/* The length of every vertex's displacement in this pass (the first cull of ccd_pair, per vertex
 * once instead of per candidate; the same arithmetic, so the two agree bit for bit). */
static void displacements(collide_ctx *cx) {
  cx->dmax = 0;
  for (int a = 0; a < cx->nb; a++) {
    const particles *p = cx->b[a].p;
    double *d = cx->disp + cx->b[a].offset;
    for (int i = 0; i < p->n; i++) {
      d[i] = sqrt(v3_len2(v3_scale(p->col.vbar[i], cx->h)));
      cx->dmax = d_max(cx->dmax, d[i]);
    }
  }
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : (x > y);
}

/* The most any node on each side of candidate q moved, by a per-vertex table of lengths. */
static void side_moves(const collide_pair *q, const double *per_vertex, double *ma, double *mb) {
  const int split = (q->type & 1) ? 2 : 3;
  *ma = *mb = 0;
  for (int k = 0; k < 4; k++) {
    const double d = per_vertex[q->g[k]];
    if (k < split) *ma = d_max(*ma, d);
    else *mb = d_max(*mb, d);
  }
}

/* A cloth element against an obstacle, with a node pinned inside the obstacle's contact margin
 * (the thickness; pins_in_margin warns of it): such pins ignore contacts, and the element is left
 * to the vertex and feature passes, which keep its free nodes outside. It cannot be separated:
 * moving its free nodes alone throws them by the impulse over their small share (a flag pinned
 * 2 mm from a pole and wrapping round the pole's prism gained energy on contact). Pins outside the
 * margin stay infinite masses of the pipeline. */
static int pinned_in_obstacle_margin(const collide_ctx *cx, const collide_pair *q) {
  const int oa = cx->b[q->a].obstacle, ob = cx->b[q->b].obstacle;
  if (oa == ob) return 0;
  const body_slot *obstacle = &cx->w->bodies[cx->b[oa ? q->a : q->b].slot];
  if (!obstacle->ops->surface_distance) return 0;
  int body[4];
  int32_t vi[4];
  pair_vertices(cx, q, body, vi);
  for (int k = 0; k < 4; k++) {
    const particles *p = cx->b[body[k]].p;
    if (!cx->b[body[k]].obstacle && contact_pin_in_margin(obstacle, p, vi[k], p->x_sub[vi[k]])) return 1;
  }
  return 0;
}

/* Whether a pass tests candidate c: not both features in a tangle; for proximity, closer than the
 * thickness at the start; for CCD, a start distance the largest displacement on each side could
 * close to within eta (ccd_pair's first test), and no node pinned in an obstacle's margin. */
static int keep_pair(const collide_ctx *cx, int c, int ccd) {
  const loom_world *w = cx->w;
  const collide_pair *q = &w->cpairs[c];
  if (q->a == q->b) {
    /* both features in one smooth patch: they cannot meet this substep (contact_patch.c) */
    const particle_collide *pc = &cx->b[q->a].p->col;
    if ((q->type & 1) ? patch_skips_edges(pc, q->fa, q->fb) : patch_skips_point(pc, q->fa, q->fb)) return 0;
  }
  if (cx->tangled) {
    const uint8_t *t = cx->tangled;
    const int ta = (q->type & 1) ? (t[q->g[0]] | t[q->g[1]]) : (t[q->g[0]] | t[q->g[1]] | t[q->g[2]]);
    const int tb = (q->type & 1) ? (t[q->g[2]] | t[q->g[3]]) : t[q->g[3]];
    if (ta && tb) return 0; /* both features in the tangle */
  }
  if (cx->inside && cx->b[q->a].obstacle != cx->b[q->b].obstacle) {
    const int in = 1 + (cx->b[q->a].obstacle ? q->a : q->b);
    for (int k = 0; k < 4; k++)
      if (cx->inside[q->g[k]] == in) return 0; /* a node starts inside that obstacle */
  }
  const double thick = cx->b[q->a].half + cx->b[q->b].half;
  double ma, mb;
  if (!ccd) {
    /* proximity to obstacles is the obstacle passes' business; the pipeline adds their paths */
    if (cx->b[q->b].obstacle || cx->b[q->a].obstacle) return 0;
    if (w->cdist[c] < thick) return 1;
    /* a resting point-triangle pair also when its motion could bring it within the thickness
     * (edge-edge pairs of resting faces are many and add nothing the points do not hold) */
    if (!resting_point_pair(cx, q)) return 0;
    if (!(w->cdist[c] < RESTING_REACH * thick)) return 0;
    side_moves(q, cx->disp, &ma, &mb);
    return (w->cdist[c] - ma) - mb < thick;
  }
  side_moves(q, cx->disp, &ma, &mb);
  return !(w->cdist[c] - ma - mb > 0.01 * thick) && !pinned_in_obstacle_margin(cx, q);
}

/* Candidates in ascending order: every one (full), or those with a node stamped minstamp or
 * later (found through the vertices' rows); of those, for proximity (ccd = 0) the ones closer than
 * the thickness at the start, for CCD the ones whose start distance the largest displacement on
 * each side could close to within eta (ccd_pair's first test, on cx->disp). Scratch, released
 * with the caller's mark; NULL when out of memory. */
typedef struct select_ctx {
  collide_ctx *cx;
  int ccd;
  int32_t *list;
  int found[2];
} select_ctx;

/* The candidates [lo, hi) a full pass tests, into list[lo ...). Most fail on their distance
 * alone, against the largest thickness and displacement (the same roundings as keep_pair's, so
 * never a candidate it would take). */
static void select_rows(void *ctx, int lo, int hi, int part) {
  select_ctx *sc = ctx;
  const collide_ctx *cx = sc->cx;
  const double *cdist = cx->w->cdist;
  const double tmax = cx->tmax, dmax = cx->dmax, reach = cx->resting ? RESTING_REACH * tmax : tmax;
  int32_t *out = sc->list + lo;
  int n = 0;
  for (int c = lo; c < hi; c++) {
    if (sc->ccd ? (cdist[c] - dmax) - dmax > 0.01 * tmax : !(cdist[c] < reach)) continue;
    if (keep_pair(cx, c, sc->ccd)) out[n++] = c;
  }
  sc->found[part] = n;
}

static inline int pair_cmp(const collide_pair *p, const collide_pair *q);

/* Candidates by ascending index (list[0, n)) in the order of their keys: the collected run and
 * the top-ups' run are each sorted, so the two parts of the list are merged (the passes then
 * visit pairs in the order a freshly collected list would give). */
static int32_t *in_key_order(loom_world *w, int32_t *list, int n) {
  const int base = w->cpair_base;
  int split = 0;
  while (split < n && list[split] < base) split++;
  if (split == 0 || split == n) return list;
  int32_t *out = ARENA_NEW(&w->scratch, int32_t, n, "selected candidates in order");
  if (!out) return NULL;
  int i = 0, j = split, k = 0;
  while (i < split && j < n) out[k++] = pair_cmp(&w->cpairs[list[j]], &w->cpairs[list[i]]) < 0 ? list[j++] : list[i++];
  while (i < split) out[k++] = list[i++];
  while (j < n) out[k++] = list[j++];
  return out;
}

/* The latest stamp of a candidate's nodes. */
static int32_t pair_stamp(const collide_ctx *cx, const collide_pair *q) {
  int body[4];
  int32_t vi[4], s = 0;
  pair_vertices(cx, q, body, vi);
  for (int k = 0; k < 4; k++) {
    const int32_t t = cx->b[body[k]].p->col.stamp[vi[k]];
    s = t > s ? t : s;
  }
  return s;
}

static int32_t *select_pairs(collide_ctx *cx, int full, int minstamp, int ccd, int *count) {
  loom_world *w = cx->w;
  int32_t *list = ARENA_NEW(&w->scratch, int32_t, w->ncpairs ? w->ncpairs : 1, "selected candidates");
  int n = 0;
  if (!list) return NULL;
  if (full) {
    /* in two halves of the list, each filling its half of the output, then joined in order */
    select_ctx sc = {cx, ccd, list, {0, 0}};
    const int half = w->ncpairs / 2;
    core_par_rows(w->ncpairs >= PAR_CANDIDATES ? world_par(w) : NULL, w->ncpairs, select_rows, &sc);
    memmove(list + sc.found[0], list + half, sizeof(int32_t) * (size_t)sc.found[1]);
    n = sc.found[0] + sc.found[1];
  } else {
    if (!w->cadj_ok) build_adjacency(cx);
    const int32_t visit = ++cx->visit;
    for (int a = 0; a < cx->nb; a++) {
      const particles *p = cx->b[a].p;
      for (int i = 0; i < p->n; i++) {
        if (p->col.stamp[i] < minstamp) continue;
        const int g = cx->b[a].offset + i;
        for (int j = w->cadj_first[g]; j < w->cadj_first[g + 1]; j++) {
          const int c = w->cadj[j];
          if (w->cseen[c] == visit) continue;
          w->cseen[c] = visit;
          if (keep_pair(cx, c, ccd)) list[n++] = c;
        }
      }
    }
    for (int c = w->cpair_base; c < w->ncpairs; c++)
      if (pair_stamp(cx, &w->cpairs[c]) >= minstamp && keep_pair(cx, c, ccd)) list[n++] = c;
    qsort(list, (size_t)n, sizeof(int32_t), cmp_i32);
  }
  w->cpairs_tested += n;
  int32_t *ordered = in_key_order(w, list, n);
  *count = ordered ? n : 0;
  return ordered;
}

/* The candidates a CCD or zone pass tests: every one in a full pass, else those with a node whose
 * velocity changed since the previous pass began (stamp >= pass - 1). */
static int32_t *pass_list(collide_ctx *cx, int full, int pass, int *count) {
  displacements(cx);
  return select_pairs(cx, full, pass - 1, 1, count);
}

/* One Jacobi pass of inelastic impulses; the number of colliding pairs. Every impulse is found
 * from the velocities before the pass; each is then scaled by 1 / (the largest number of
 * impulses any of its nodes receives), so that a vertex caught in several collisions is not
 * pushed several times over (Bridson's averaging) while every impulse still acts equally and
 * oppositely on its four nodes: momentum is kept exactly. */
typedef struct ccd_impulse {
  int c;
  double dvn, rest, inv[4], s; /* rest: contact_ccd_rest, for the end velocity alone (cx->vend) */
  geom_ccd_hit hit;
} ccd_impulse;

typedef struct ccd_found {
  int j; /* index in the pass's list */
  geom_ccd_hit hit;
} ccd_found;

typedef struct ccd_tests {
  const collide_ctx *cx;
  const int32_t *chosen;
  ccd_found *found; /* rows [lo, hi) keep their hits from found + lo */
  int nfound[2];
} ccd_tests;

static void ccd_test_rows(void *ctx, int lo, int hi, int part) {
  ccd_tests *t = ctx;
  const loom_world *w = t->cx->w;
  ccd_found *out = t->found + lo;
  int n = 0;
  for (int j = lo; j < hi; j++) {
    const int c = t->chosen[j];
    feat4 f;
    gather(t->cx, &w->cpairs[c], &f);
    if (ccd_pair(t->cx, &f, w->cdist[c], &out[n].hit)) out[n++].j = j;
  }
  t->nfound[part] = n;
}

/* A pair with a watched core (cbody.observe) takes no part in the passes; its crossing is
 * counted, once per run of the pipeline (the CCD passes would find it again and again). */
static int watched(collide_ctx *cx, const collide_pair *q) {
  const int ob = cx->b[q->a].observe ? q->a : (cx->b[q->b].observe ? q->b : -1);
  if (ob < 0) return 0;
  if (cx->pass == 1) {
    if (!cx->crossed++) {
      cx->crossed_body = cx->b[ob].slot;
      cx->crossed_soft = cx->b[ob == q->a ? q->b : q->a].slot;
    }
    cx->b[ob == q->a ? q->b : q->a].p->check_obstacles = 1; /* (what it leaves across it is looked for) */
  }
  return 1;
}

static int ccd_pass(collide_ctx *cx, int full) {
  loom_world *w = cx->w;
  const int pass = ++cx->pass;
  for (int a = 0; a < cx->nb; a++) {
    particles *p = cx->b[a].p;
    memset(p->col.count, 0, sizeof(int32_t) * (size_t)p->n);
  }
  arena_mark mark = arena_get_mark(&w->scratch);
  int cap = 256, nimp = 0;
  ccd_impulse *imp = ARENA_NEW(&w->scratch, ccd_impulse, cap, "ccd impulses");
  int hits = 0, nlist = 0;
  const int32_t *chosen = imp ? pass_list(cx, full, pass, &nlist) : NULL;
  if (!chosen) {
    arena_release(&w->scratch, mark);
    return 1; /* out of memory: not known to be free of collisions (the zones decide) */
  }
  /* the tests (each reads only its own pair's nodes) in two halves side by side, each keeping
   * its hits in its half of `found`; then, in candidate order, the impulses */
  ccd_tests t = {cx, chosen, ARENA_NEW(&w->scratch, ccd_found, nlist ? nlist : 1, "ccd hits"), {0, 0}};
  if (!t.found) {
    arena_release(&w->scratch, mark);
    return 1;
  }
  core_par_rows(nlist >= PAR_CANDIDATES ? world_par(w) : NULL, nlist, ccd_test_rows, &t);
  for (int h = 0; h < t.nfound[0] + t.nfound[1] && imp; h++) {
    const ccd_found *fd = &t.found[h < t.nfound[0] ? h : nlist / 2 + (h - t.nfound[0])];
    const int c = chosen[fd->j];
    if (watched(cx, &w->cpairs[c])) continue;
    const geom_ccd_hit hit = fd->hit;
    feat4 f;
    gather(cx, &w->cpairs[c], &f);
    hits++;
    /* a colliding pair is tested again next pass, impulse or not */
    for (int k = 0; k < 4; k++) f.p[k]->col.stamp[f.vi[k]] = pass;
    ccd_impulse q;
    q.c = c;
    q.hit = hit;
    complete(&f, cx, &w->cpairs[c]);
    effective(&f, hit.w, hit.n, q.inv);
    q.s = wsum2(q.inv, hit.w);
    q.dvn = contact_ccd_target(hit.w, f.x, f.v, hit.n, f.thick, cx->h);
    if (!(q.s > 0) || !(q.dvn > 0)) continue;
    /* the end velocity as the earlier passes left it: each pass takes off only what still
     * approaches (recomputed from the mean velocities alone, every pass of a pair caught again
     * took the whole approach off once more — a sheet hitting a pinned one flew back faster
     * than it came) */
    vec3 vnow[4];
    for (int k = 0; k < 4; k++) vnow[k] = cx->vend ? v3_add(f.v[k], cx->vend[f.gi[k]]) : f.v[k];
    q.rest = contact_ccd_rest(hit.w, vnow, hit.n, q.dvn);
    if (nimp == cap) {
      ccd_impulse *grown = ARENA_NEW(&w->scratch, ccd_impulse, 2 * cap, "ccd impulses");
      if (!grown) break; /* the rest waits for the next pass (or the impact zones) */
      memcpy(grown, imp, sizeof(ccd_impulse) * (size_t)nimp);
      imp = grown;
      cap *= 2;
    }
    imp[nimp++] = q;
    for (int k = 0; k < 4; k++)
      if (q.inv[k] != 0 && hit.w[k] != 0) f.p[k]->col.count[f.vi[k]]++;
  }
  for (int j = 0; j < nimp; j++) {
    const ccd_impulse *q = &imp[j];
    feat4 f;
    gather(cx, &w->cpairs[q->c], &f);
    int most = 1;
    for (int k = 0; k < 4; k++)
      if (q->inv[k] != 0 && q->hit.w[k] != 0 && f.p[k]->col.count[f.vi[k]] > most) most = f.p[k]->col.count[f.vi[k]];
    const double per = amplify_scale(q->hit.w, q->inv, q->s) / (q->s * most);
    const double scale = q->dvn * per, rest = q->rest * per;
    vec3 given = v3(0, 0, 0);
    for (int k = 0; k < 4; k++) {
      if (q->inv[k] == 0 || q->hit.w[k] == 0) continue;
      vec3 *vb = &f.p[k]->col.vbar[f.vi[k]];
      *vb = v3_madd(*vb, q->hit.n, scale * q->hit.w[k] * q->inv[k]);
      if (cx->vend) cx->vend[f.gi[k]] = v3_madd(cx->vend[f.gi[k]], q->hit.n, rest * q->hit.w[k] * q->inv[k]);
      f.p[k]->col.stamp[f.vi[k]] = pass;
      if (q->hit.w[k] > 0) given = v3_madd(given, q->hit.n, f.p[k]->m[f.vi[k]] * scale * q->hit.w[k] * q->inv[k]);
    }
    record(cx, &w->cpairs[q->c], &f, q->hit.w, q->hit.n, 0, q->hit.t, given, 4);
  }
  arena_release(&w->scratch, mark);
  return hits;
}

/* ---- 5. rigid impact zones ------------------------------------------------------------------- */

static int zfind(int32_t *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

/* Merges two zones; the merged zone moves with an obstacle if either did (the lower-numbered one
 * if both did, so the result does not depend on the order of merging). */
static int zunion(int32_t *parent, int32_t *anchor, int a, int b) {
  a = zfind(parent, a);
  b = zfind(parent, b);
  if (a == b) return 0;
  const int32_t an = anchor[a] < 0 ? anchor[b] : (anchor[b] < 0 ? anchor[a] : (anchor[a] < anchor[b] ? anchor[a] : anchor[b]));
  if (a < b) parent[b] = a;
  else parent[a] = b;
  anchor[a < b ? a : b] = an;
  return 1;
}

/* 3x3 symmetric solve by Cramer's rule with a tiny regularisation (a zone on a line). */
static vec3 solve3(const double I[3][3], vec3 L) {
  double A[3][3];
  double tr = I[0][0] + I[1][1] + I[2][2];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) A[r][c] = I[r][c] + (r == c ? 1e-12 * tr + 1e-300 : 0);
  double c00 = A[1][1] * A[2][2] - A[1][2] * A[2][1], c01 = A[1][2] * A[2][0] - A[1][0] * A[2][2],
         c02 = A[1][0] * A[2][1] - A[1][1] * A[2][0];
  double det = A[0][0] * c00 + A[0][1] * c01 + A[0][2] * c02;
  if (!(fabs(det) > 0)) return v3(0, 0, 0);
  double inv[3][3] = {{c00, A[0][2] * A[2][1] - A[0][1] * A[2][2], A[0][1] * A[1][2] - A[0][2] * A[1][1]},
                      {c01, A[0][0] * A[2][2] - A[0][2] * A[2][0], A[0][2] * A[1][0] - A[0][0] * A[1][2]},
                      {c02, A[0][1] * A[2][0] - A[0][0] * A[2][1], A[0][0] * A[1][1] - A[0][1] * A[1][0]}};
  return v3((inv[0][0] * L.x + inv[0][1] * L.y + inv[0][2] * L.z) / det,
            (inv[1][0] * L.x + inv[1][1] * L.y + inv[1][2] * L.z) / det,
            (inv[2][0] * L.x + inv[2][1] * L.y + inv[2][2] * L.z) / det);
}

static vec3 rodrigues(vec3 axis_angle, vec3 r) {
  const double th = v3_len(axis_angle);
  if (!(th > 0)) return r;
  vec3 k = v3_scale(axis_angle, 1 / th);
  const double c = cos(th), s = sin(th);
  return v3_add(v3_add(v3_scale(r, c), v3_scale(v3_cross(k, r), s)), v3_scale(k, v3_dot(k, r) * (1 - c)));
}

typedef struct zone_acc {
  double m;
  vec3 mx, mv;          /* mass-weighted sums */
  int n;                /* members */
  double I[3][3];
  vec3 L;
  vec3 cx, cv, omega;
} zone_acc;

static particles *vertex_of(const collide_ctx *cx, int g, int *i) {
  int a = 0;
  while (a + 1 < cx->nb && cx->b[a + 1].offset <= g) a++;
  *i = g - cx->b[a].offset;
  return cx->b[a].p;
}

/* Moves every zone of two or more vertices rigidly: the rigid motion that keeps the zone's
 * (weighted) linear and angular momentum. Vertices that cannot give way — pinned, or held by an
 * obstacle — weigh a million times their mass, so the zone follows them; the pinned ones keep
 * their own motion, the held ones move with the zone (a held vertex of a zone moved by others is
 * at most slightly pressed into its obstacle, which the next obstacle pass corrects). Returns
 * the largest zone's size and counts zones in *zones. */
#define ZONE_HEAVY 1e6

static double zone_weight(const particles *p, int i) {
  return (p->col.inv_m[i] == 0 || p->col.held[i]) ? ZONE_HEAVY * p->m[i] : p->m[i];
}

/* Where an obstacle's motion over the substep takes the point x (rigid: the pose at a0 to the
 * pose at a1). */
static vec3 obstacle_carry(const collide_ctx *cx, int body, vec3 x) {
  const rigid_body *r = rigid_of_slot(&cx->w->bodies[cx->b[body].slot]);
  vec3 p0, p1;
  quat q0, q1;
  rigid_pose_at(r, cx->a0, &p0, &q0);
  rigid_pose_at(r, cx->a1, &p1, &q1);
  if (p0.x == p1.x && p0.y == p1.y && p0.z == p1.z && q0.w == q1.w && q0.x == q1.x && q0.y == q1.y && q0.z == q1.z)
    return x;
  return v3_add(p1, q_rotate(q1, q_rotate(q_conj(q0), v3_sub(x, p0))));
}

/* The substep's impact zones for the window (loom_body_impact_zones): each vertex of a zone (two
 * vertices or more, or one an obstacle carries) gets its zone's number, in the order of the zones'
 * first vertices, the others -1; the last rigidify's sums (acc) tell which roots are zones. */
static void record_zones(collide_ctx *cx, int32_t *parent, const zone_acc *acc) {
  loom_world *w = cx->w;
  const arena_mark mark = arena_get_mark(&w->scratch);
  int32_t *id = ARENA_NEW(&w->scratch, int32_t, cx->total, "zone numbers");
  if (!id) return;
  for (int g = 0; g < cx->total; g++) id[g] = -1;
  int next = 0;
  for (int a = 0; a < cx->nsoft; a++) {
    particle_collide *c = &cx->b[a].p->col;
    for (int i = 0; i < cx->b[a].p->n; i++) {
      const int root = zfind(parent, cx->b[a].offset + i);
      const int zone = acc[root].n >= 2 || cx->anchor[root] >= 0;
      if (zone && id[root] < 0) id[root] = next++;
      c->zone[i] = zone ? id[root] : -1;
    }
    c->zone_any = 1;
  }
  arena_release(&w->scratch, mark);
}

static int rigidify(collide_ctx *cx, int32_t *parent, zone_acc *acc, int *zones, int32_t *moved) {
  const int N = cx->total;
  const double h = cx->h;
  for (int g = 0; g < N; g++) moved[g] = -1;
  memset(acc, 0, sizeof(zone_acc) * (size_t)N);
  for (int g = 0; g < N; g++) {
    zone_acc *z = &acc[zfind(parent, g)];
    int i;
    const particles *p = vertex_of(cx, g, &i);
    const double m = zone_weight(p, i);
    z->n++;
    z->m += m;
    z->mx = v3_madd(z->mx, p->x_sub[i], m);
    z->mv = v3_madd(z->mv, p->col.vbar[i], m);
  }
  int largest = 0, count = 0;
  for (int g = 0; g < N; g++) {
    zone_acc *z = &acc[g];
    if (z->n < 2 && cx->anchor[g] < 0) continue;
    count++;
    if (z->n > largest) largest = z->n;
    z->cx = v3_scale(z->mx, 1 / z->m);
    z->cv = v3_scale(z->mv, 1 / z->m);
  }
  for (int g = 0; g < N; g++) {
    zone_acc *z = &acc[zfind(parent, g)];
    if (z->n < 2) continue;
    int i;
    const particles *p = vertex_of(cx, g, &i);
    const double m = zone_weight(p, i);
    vec3 r = v3_sub(p->x_sub[i], z->cx), u = v3_sub(p->col.vbar[i], z->cv);
    z->L = v3_add(z->L, v3_scale(v3_cross(r, u), m));
    const double rr = v3_dot(r, r);
    const double rv[3] = {r.x, r.y, r.z};
    for (int a = 0; a < 3; a++)
      for (int b = 0; b < 3; b++) z->I[a][b] += m * ((a == b ? rr : 0) - rv[a] * rv[b]);
  }
  for (int g = 0; g < N; g++) {
    zone_acc *z = &acc[g];
    if (z->n >= 2) z->omega = solve3((const double(*)[3])z->I, z->L);
  }
  for (int g = 0; g < N; g++) {
    const int root = zfind(parent, g);
    zone_acc *z = &acc[root];
    if (z->n < 2 && cx->anchor[root] < 0) continue;
    int i;
    particles *p = vertex_of(cx, g, &i);
    if (p->col.inv_m[i] == 0) continue;
    if (cx->anchor[root] >= 0) {
      /* a zone that met an obstacle moves with it: a rigid motion of a start free of crossings
       * with the obstacle (static: standing still) */
      p->col.vbar[i] = v3_scale(v3_sub(obstacle_carry(cx, cx->anchor[root], p->x_sub[i]), p->x_sub[i]), 1 / h);
      p->col.stamp[i] = cx->pass;
      moved[g] = root;
      continue;
    }
    vec3 r = v3_sub(p->x_sub[i], z->cx);
    vec3 xe = v3_add(v3_madd(z->cx, z->cv, h), rodrigues(v3_scale(z->omega, h), r));
    p->col.vbar[i] = v3_scale(v3_sub(xe, p->x_sub[i]), 1 / h);
    p->col.stamp[i] = cx->pass;
    moved[g] = root;
  }
  /* a zone's vertices end the substep with its rigid motion alone; the CCD impulses' end-velocity
   * changes are all dropped (dropping only the zones' would leave their partners outside a zone
   * with one half of an equal and opposite pair: momentum went) */
  cx->vend = NULL;
  *zones = count;
  return largest;
}

/* ---- tangles ---------------------------------------------------------------------------------- */

/* The pipeline keeps a crossing-free start crossing-free; it cannot undo crossings that are
 * already there (an initial state made that way, a pin teleported through the cloth, a fallback
 * that failed). Triangles crossing at the start are found (exactly, as world:interpenetrations)
 * when a body is new, after a fallback and while tangles remain; pairs of features that both
 * touch the tangle are left out of the pipeline until their triangles come apart (everything
 * else, the tangle against the rest too, is handled as usual), so that the cloth keeps moving
 * instead of freezing. The world says so, naming the first pair, once per simulated second. */
typedef struct tangle_ctx {
  collide_ctx *cx;
  int sa, ta, sb, tb;
} tangle_ctx;

static void tangle_cb(int sa, int ta, int sb, int tb, void *ud) {
  tangle_ctx *t = ud;
  if (t->sa < 0) {
    t->sa = sa;
    t->ta = ta;
    t->sb = sb;
    t->tb = tb;
  }
  const collide_ctx *cx = t->cx;
  for (int a = 0; a < cx->nb; a++) {
    particles *p = cx->b[a].p;
    if (cx->b[a].slot == sa)
      for (int k = 0; k < 3; k++) p->col.tangled[p->tri[3 * ta + k]] = 1;
    if (cx->b[a].slot == sb)
      for (int k = 0; k < 3; k++) p->col.tangled[p->tri[3 * tb + k]] = 1;
  }
}

/* A cloth made lying exactly on a table's top, or sunk into it, starts the run on or inside a
 * static or kinematic obstacle: every path out of it crosses the obstacle's surface, which CCD
 * takes for a collision to prevent, and the impact zones then held the vertices still where they
 * were, at every substep (a 20 x 20 cloth made at the height of a floor's top never moved, at
 * 0.6 s a step). Such vertices (signed distance to the shape at the substep's start at most
 * INSIDE_TOLERANCE; on an open triangle mesh, whose distance has no sign, on its surface)
 * are marked in cx->inside, and the pairs between their features and that obstacle's are left
 * out (keep_pair): the obstacle passes push them out, and the next run tests them as usual. So
 * are the vertices of a cloth's triangles that start across the obstacle (left there by a step:
 * phase_commit then has the next run look). Vertices really inside (deeper than the tolerance)
 * are reported, once per simulated second. Everything here comes from the state at the
 * substep's start, so a restored snapshot continues the same. Returns how many are marked. */
#define INSIDE_TOLERANCE 1e-12 /* m: far below any pad a resting vertex keeps (at least SOFT_MIN_THICKNESS) */

/* Marks global vertex g as starting inside (or across) obstacle o; its count, -1 out of scratch. */
static int mark_inside(collide_ctx *cx, int g, int o) {
  if (!cx->inside) {
    cx->inside = ARENA_NEW(&cx->w->scratch, uint8_t, cx->total, "vertices inside obstacles");
    if (!cx->inside) return -1;
    memset(cx->inside, 0, (size_t)cx->total);
  }
  if (cx->inside[g]) return 0;
  cx->inside[g] = (uint8_t)(1 + o);
  return 1;
}

static int find_inside(collide_ctx *cx, const step_info *s) {
  loom_world *w = cx->w;
  int count = 0, deep = 0, first_soft = -1, first_obstacle = -1;
  double deepest = 0;
  cx->inside = NULL;
  for (int o = cx->nsoft; o < cx->nb; o++) {
    const cbody *ob = &cx->b[o];
    if (!ob->obstacle || ob->observe) continue;
    const rigid_body *r = rigid_of_slot(&w->bodies[ob->slot]);
    vec3 pos;
    quat q;
    rigid_pose_at(r, cx->a0, &pos, &q);
    const vec3 lo = v3_sub(ob->p->sub_lo, v3(INSIDE_TOLERANCE, INSIDE_TOLERANCE, INSIDE_TOLERANCE));
    const vec3 hi = v3_add(ob->p->sub_hi, v3(INSIDE_TOLERANCE, INSIDE_TOLERANCE, INSIDE_TOLERANCE));
    for (int a = 0; a < cx->nsoft; a++) {
      const cbody *cb = &cx->b[a];
      if (!cb->p->col.check_tangles || pair_off(cb, ob) || !bvh_box_overlap(cb->p->sub_lo, cb->p->sub_hi, lo, hi)) continue;
      for (int i = 0; i < cb->p->n; i++) {
        const vec3 x = cb->p->x_sub[i];
        if (x.x < lo.x || x.y < lo.y || x.z < lo.z || x.x > hi.x || x.y > hi.y || x.z > hi.z) continue;
        const double d = rigid_local_distance_q(r, q_rotate_inv(q, v3_sub(x, pos)), NULL, &w->oquery);
        if (!(d <= INSIDE_TOLERANCE)) continue;
        const int m = mark_inside(cx, cb->offset + i, o);
        if (m < 0) return 0;
        count += m;
        if (d < -INSIDE_TOLERANCE) {
          if (!deep++) first_soft = cb->slot, first_obstacle = ob->slot;
          deepest = d_max(deepest, -d);
        }
      }
      /* a cloth's triangles that start across the body (phase_commit's exact test, at the
       * substep's start): their vertices too, so that the pairs holding a triangle across an edge
       * or ridge through its middle let it come off */
      if (w->bodies[cb->slot].ops->id != LOOM_KIND_CLOTH) continue;
      const int32_t *tri = cb->p->tri;
      for (int t = 0; t < cb->p->nt; t++) {
        if (!contact_triangle_across(w, cb->slot, cb->p->x_sub, t, ob->slot, pos, q, lo, hi)) continue;
        for (int c = 0; c < 3; c++) {
          const int m = mark_inside(cx, cb->offset + tri[3 * t + c], o);
          if (m < 0) return 0;
          count += m;
        }
      }
    }
  }
  const double now = w->time + s->a0 * s->dt;
  if (deep && once_a_second(&w->inside_warned_until, now)) {
    const body_slot *A = &w->bodies[first_soft], *B = &w->bodies[first_obstacle];
    world_message(w, LOOM_WARNING, first_soft,
                  "collisions: %d vertices began inside an obstacle at t = %.4f s (first: %s '%s' in %s '%s', the deepest "
                  "%.3g m in): they are pushed out to its surface and their features are not held against it until "
                  "they are out (a body made crossing an obstacle is stretched by the push)",
                  deep, now, A->ops->name, A->name, B->ops->name, B->name, deepest);
  }
  return count;
}

static void find_tangles(collide_ctx *cx, const step_info *s) {
  loom_world *w = cx->w;
  int need = 0;
  for (int a = 0; a < cx->nsoft; a++) need |= cx->b[a].p->col.check_tangles;
  cx->tangled = NULL;
  cx->inside = NULL;
  if (!need) return;
  find_inside(cx, s);
  int slots[64];
  unsigned char self[64];
  for (int a = 0; a < cx->nsoft; a++) {
    slots[a] = cx->b[a].slot;
    self[a] = cx->b[a].self;
    memset(cx->b[a].p->col.tangled, 0, (size_t)cx->b[a].p->n);
  }
  tangle_ctx t = {cx, -1, -1, -1, -1};
  const int pairs = contact_soft_crossings_at_start(w, slots, self, cx->nsoft, tangle_cb, &t);
  int count = 0;
  for (int a = 0; a < cx->nsoft; a++) {
    particle_collide *c = &cx->b[a].p->col;
    int here = 0;
    for (int i = 0; i < cx->b[a].p->n; i++) here += c->tangled[i];
    int in = 0;
    for (int i = 0; i < cx->b[a].p->n && cx->inside && !in; i++) in = cx->inside[cx->b[a].offset + i] != 0;
    c->check_tangles = here > 0 || pairs < 0 || in;
    count += here;
  }
  if (pairs <= 0) return;
  cx->tangled = ARENA_NEW(&w->scratch, uint8_t, cx->total, "tangled vertices");
  if (!cx->tangled) return;
  memset(cx->tangled, 0, (size_t)cx->total);
  for (int a = 0; a < cx->nsoft; a++)
    memcpy(cx->tangled + cx->b[a].offset, cx->b[a].p->col.tangled, (size_t)cx->b[a].p->n);
  if (count > w->stats.tangled) w->stats.tangled = count; /* (the most in one run of the step) */
  const double now = w->time + s->a0 * s->dt;
  if (once_a_second(&w->tangle_warned_until, now)) {
    const body_slot *A = &w->bodies[t.sa], *B = &w->bodies[t.sb];
    world_message(w, LOOM_WARNING, t.sa,
                  "collisions: %d triangle pairs already cross at t = %.4f s (first: %s '%s' triangle %d and %s '%s' "
                  "triangle %d); collisions among their %d vertices' features are not handled until they come apart "
                  "(stats.tangled; world:interpenetrations(true) lists them)",
                  pairs, now, A->ops->name, A->name, t.ta, B->ops->name, B->name, t.tb, count);
  }
}

/* ---- the pipeline ----------------------------------------------------------------------------- */

/* The candidate list still covers every pair within reach while each vertex's current path lies
 * within the margin of its path box at collection (see collect). Marks (out, per global vertex)
 * the vertices whose path left it; returns how many. */
static int moved_vertices(const collide_ctx *cx, uint8_t *out) {
  int count = 0;
  for (int a = 0; a < cx->nb; a++) {
    const particles *p = cx->b[a].p;
    const particle_collide *c = &p->col;
    const double r = cx->b[a].margin;
    const vec3 e = v3(r, r, r);
    const vec3 *el = ends_of(c, c->ecol_e, c->ecol), *eh = ends_of(c, c->ecol_ehi, c->ecol_hi);
    for (int i = 0; i < p->n; i++) {
      /* it starts within the margin of its start box and ends within the margin of its end box */
      const vec3 lo = v3_sub(c->ecol[i], e), hi = v3_add(c->ecol_hi[i], e);
      const vec3 elo = v3_sub(el[i], e), ehi = v3_add(eh[i], e);
      const vec3 x0 = frame_start(cx, p, i), x1 = frame_end(cx, p, i);
      const int left = x0.x < lo.x || x0.y < lo.y || x0.z < lo.z || x0.x > hi.x || x0.y > hi.y || x0.z > hi.z ||
                       x1.x < elo.x || x1.y < elo.y || x1.z < elo.z || x1.x > ehi.x || x1.y > ehi.y || x1.z > ehi.z;
      out[cx->b[a].offset + i] = (uint8_t)left;
      count += left;
    }
  }
  return count;
}

/* ---- topping a list up ---------------------------------------------------------------------------
 * When a few vertices' paths leave their boxes (the obstacle passes and the pipeline's own
 * impulses move some vertices more than the margin), only the candidates with one of their nodes
 * are missing from the list: extend gives those vertices boxes around their new paths and adds
 * every pair collect would now find that has a feature with such a vertex. The list is then a
 * superset of a fresh collection, which acts the same (pairs out of reach fail the distance tests
 * and act on nothing; the order of the rest is the sorted order either way). */

/* a triangle query's hit in a vertex tree: the pair (vertex i of body qa, triangle qt of qb) */
static int tri_vertex_cb(int i, void *ud) {
  collide_ctx *cx = ud;
  const uint8_t *only = cx->b[cx->qa].points;
  if (only && !only[i]) return 0;
  if (cx->qa == cx->qb && (tri_has(&cx->b[cx->qb].p->tri[3 * cx->qt], i) || patch_leaves_out(cx, cx->qa, 0, i, cx->qt)))
    return 0;
  if (listed(cx, 0, cx->qa, i, cx->qb, cx->qt)) return 0;
  return push_pair(cx, 0, cx->qa, cx->qb, i, cx->qt);
}

/* an edge query's hit: edge qi of body qa against edge j of body qb (the pair's first body is qb
 * when qswap) */
static int edge_query_cb(int j, void *ud) {
  collide_ctx *cx = ud;
  const int e = cx->qi;
  if (cx->qa == cx->qb && patch_leaves_out(cx, cx->qa, 1, e, j)) return 0;
  if (listed(cx, 1, cx->qa, e, cx->qb, j)) return 0;
  if (cx->qa == cx->qb) {
    if (j == e || edges_touch(cx->b[cx->qa].p->col.edge, e, j)) return 0;
    return push_pair(cx, 1, cx->qa, cx->qb, e < j ? e : j, e < j ? j : e);
  }
  return cx->qswap ? push_pair(cx, 1, cx->qb, cx->qa, j, e) : push_pair(cx, 1, cx->qa, cx->qb, e, j);
}

/* Vertex-triangle pairs of x's vertices against y's triangles with a marked node (this part's half
 * of the vertices and of the triangles). */
static void moved_vertex_pairs(collide_ctx *cx, int x, int y, const uint8_t *out) {
  const particles *px = cx->b[x].p, *py = cx->b[y].p;
  const uint8_t *my = out + cx->b[y].offset;
  const int second = cx->part, nx = px->n, nt = py->nt;
  vertices_range(cx, x, y, out + cx->b[x].offset, second ? nx / 2 : 0, second ? nx : nx / 2);
  for (int t = second ? nt / 2 : 0; t < (second ? nt : nt / 2) && !cx->overflow; t++) {
    const int32_t *tr = &py->tri[3 * t];
    if (!my[tr[0]] && !my[tr[1]] && !my[tr[2]]) continue;
    cx->qt = t;
    const particle_collide *c = &py->col;
    bvh_query_motion(&px->col.vert_tree, c->tri_lo[t], c->tri_hi[t], ends_of(c, c->tri_elo, c->tri_lo)[t],
                     ends_of(c, c->tri_ehi, c->tri_hi)[t], tri_vertex_cb, cx);
  }
}

/* Edge-edge pairs of x's edges with a marked node against y's edges (x <= y; swap: x is the
 * pair's second body), this part's half of x's edges. */
static void moved_edge_pairs(collide_ctx *cx, int x, int y, int swap, const uint8_t *out) {
  const particle_collide *cxc = &cx->b[x].p->col;
  const uint8_t *mx = out + cx->b[x].offset;
  cx->qa = x;
  cx->qb = y;
  cx->qswap = swap;
  for (int j = cx->part ? cxc->ne / 2 : 0; j < (cx->part ? cxc->ne : cxc->ne / 2) && !cx->overflow; j++) {
    if (!mx[cxc->edge[2 * j]] && !mx[cxc->edge[2 * j + 1]]) continue;
    cx->qi = j;
    bvh_query_motion(&cx->b[y].p->col.edge_tree, cxc->edge_lo[j], cxc->edge_hi[j], ends_of(cxc, cxc->edge_elo, cxc->edge_lo)[j],
                     ends_of(cxc, cxc->edge_ehi, cxc->edge_hi)[j], edge_query_cb, cx);
  }
}

static inline int pair_cmp(const collide_pair *p, const collide_pair *q) {
  if (p->type != q->type) return p->type < q->type ? -1 : 1;
  if (p->a != q->a) return p->a < q->a ? -1 : 1;
  if (p->b != q->b) return p->b < q->b ? -1 : 1;
  if (p->fa != q->fa) return p->fa < q->fa ? -1 : 1;
  if (p->fb != q->fb) return p->fb < q->fb ? -1 : 1;
  return 0;
}

/* The first of the sorted pairs [lo, hi) not below q. */
static int lower_bound(const collide_pair *pairs, int lo, int hi, const collide_pair *q) {
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (pair_cmp(&pairs[mid], q) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The same, found by doubling steps from lo first: a few comparisons when the answer is near lo
 * (a top-up's sorted pairs against the list, each search starting where the last ended). */
static int gallop(const collide_pair *pairs, int lo, int hi, const collide_pair *q) {
  int step = 1, top = lo;
  while (top < hi && pair_cmp(&pairs[top], q) < 0) {
    lo = top + 1;
    top = lo + step < hi ? lo + step : hi;
    step *= 2;
  }
  return lower_bound(pairs, lo, top, q);
}

/* Tests (w->ctopup_check): the pairs a full traversal of the topped-up trees finds that the list
 * lacks, counted in w->ctopup_missing (0 when the top-up is complete). */
static void check_topup(collide_ctx *cx) {
  loom_world *w = cx->w;
  const int n0 = w->ncpairs;
  traverse_all(cx);
  if (!cx->overflow && !sort_pairs(w, n0, w->ncpairs - n0))
    for (int k = n0; k < w->ncpairs; k++) {
      const int base = w->cpair_base, at = lower_bound(w->cpairs, 0, base, &w->cpairs[k]);
      const int in = lower_bound(w->cpairs, base, n0, &w->cpairs[k]);
      w->ctopup_missing += (at == base || pair_cmp(&w->cpairs[at], &w->cpairs[k]) != 0) &&
                           (in == n0 || pair_cmp(&w->cpairs[in], &w->cpairs[k]) != 0);
    }
  cx->overflow = 0;
  w->ncpairs = n0;
}

/* One part of a top-up's queries (in_two_parts): every pair with a feature that has a vertex marked
 * in cx->out. */
static void topup_part(void *ctx, int part) {
  collide_ctx *cx = ((collide_ctx **)ctx)[part];
  const uint8_t *out = cx->out;
  for (int a = 0; a < cx->nb; a++) {
    if (cx->b[a].self) {
      moved_vertex_pairs(cx, a, a, out);
      moved_edge_pairs(cx, a, a, 0, out);
    }
    for (int b = a + 1; b < cx->nb; b++) {
      if (a >= cx->nsoft || !boxes_overlap(&cx->b[a], &cx->b[b])) continue;
      moved_vertex_pairs(cx, a, b, out);
      moved_vertex_pairs(cx, b, a, out);
      moved_edge_pairs(cx, a, b, 0, out);
      moved_edge_pairs(cx, b, a, 1, out);
    }
  }
}

/* Adds the marked vertices' candidates to the list (sorted, each once) with their start distances. */
static int extend_into(collide_ctx *cx, const uint8_t *out);

/* On failure the list is cut back and marked stale: the next run collects afresh. */
static int extend(collide_ctx *cx, const uint8_t *out) {
  const int old = cx->w->ncpairs;
  /* the boxes as they are before the top-up (listed), in each body's own buffer: a top-up may come
   * in any substep, and steps allocate nothing */
  loom_world *w = cx->w;
  const arena_mark mark = arena_get_mark(&w->scratch);
  cx->topup = 1;
  for (int a = 0; a < cx->nb; a++) {
    cbody *B = &cx->b[a];
    const particle_collide *c = &B->p->col;
    const int n = B->p->n, nt = B->p->nt, ne = c->ne;
    const vec3 *from[12] = {c->ecol, c->ecol_hi, c->ecol_e, c->ecol_ehi, c->tri_lo, c->tri_hi, c->tri_elo, c->tri_ehi,
                            c->edge_lo, c->edge_hi, c->edge_elo, c->edge_ehi};
    const vec3 **to[12] = {&B->was_lo, &B->was_hi, &B->was_elo, &B->was_ehi, &B->was_tri_lo, &B->was_tri_hi,
                           &B->was_tri_elo, &B->was_tri_ehi, &B->was_edge_lo, &B->was_edge_hi, &B->was_edge_elo,
                           &B->was_edge_ehi};
    /* (the end boxes only when some differ from the start boxes) */
    B->was_ends = c->ends != 0;
    vec3 *at = c->was;
    for (int k = 0; k < 12; k++) {
      const int len = k < 4 ? n : k < 8 ? nt : ne;
      if (!B->was_ends && k % 4 >= 2) {
        *to[k] = *to[k - 2]; /* (the start box's copy) */
        continue;
      }
      *to[k] = at;
      memcpy(at, from[k], sizeof(vec3) * (size_t)len);
      at += len;
    }
    B->was_reach = c->tree_reach;
  }
  const int r = extend_into(cx, out);
  cx->topup = 0;
  arena_release(&w->scratch, mark);
  if (r == 0) return 0;
  cx->w->ncpairs = old;
  cx->w->cpair_valid = 0;
  return -1;
}

static int extend_into(collide_ctx *cx, const uint8_t *out) {
  loom_world *w = cx->w;
  const int old = w->ncpairs;
  for (int a = 0; a < cx->nb; a++) {
    particles *p = cx->b[a].p;
    const uint8_t *m = out + cx->b[a].offset;
    for (int i = 0; i < p->n; i++)
      if (m[i]) {
        const int before = has_ends(&p->col, i);
        p->col.ends += vertex_boxes(cx, &cx->b[a], i, 0) - before;
      }
    if (update_trees(&cx->b[a], world_par(cx->w))) return -1;
    if (cx->b[a].self) patch_tree_tags(p);
    p->col.frame_v = cx->vref; /* (the frame of the trees' boxes: loom_body_collision_boxes) */
    p->col.frame_t = cx->w->cframe_t;
    const double r = box_reach(&cx->b[a]);
    const vec3 re = v3(r, r, r);
    for (int i = 0; i < p->n; i++) {
      p->col.vert_lo[i] = v3_sub(p->col.ecol[i], re);
      p->col.vert_hi[i] = v3_add(p->col.ecol_hi[i], re);
      if (!p->col.ends) continue;
      p->col.vert_elo[i] = v3_sub(p->col.ecol_e[i], re);
      p->col.vert_ehi[i] = v3_add(p->col.ecol_ehi[i], re);
    }
    if (p->col.vert_ok) {
      bvh_refit(&p->col.vert_tree, p->col.vert_lo, p->col.vert_hi);
    } else {
      if (bvh_rebuild(&p->col.vert_tree, p->col.vert_lo, p->col.vert_hi, p->n, 4, &p->col.bwork) ||
          bvh_enable_ends(&p->col.vert_tree))
        return -1;
      p->col.vert_ok = 1;
    }
    set_ends(&p->col.vert_tree, p->col.ends, p->col.vert_elo, p->col.vert_ehi);
  }
  cx->out = out;
  cx->nlisted = 0;
  in_two_parts(cx, topup_part);
  w->ctopup_listed += cx->nlisted;
  cx->topup = 0; /* (check_topup's traversal reports every pair) */
  if (cx->overflow) return -1;
  int added = w->ncpairs - old;
  if (sort_pairs(w, old, added)) return -1;
  /* each new pair once, and none the list has (a binary search in the sorted list: top-ups add
   * a few hundred pairs to lists of hundreds of thousands) */
  const int base = w->cpair_base;
  int m = 0;
  for (int k = old, lo = 0, la = base; k < old + added; k++) {
    const collide_pair *q = &w->cpairs[k];
    if (m > 0 && pair_cmp(q, &w->cpairs[old + m - 1]) == 0) continue;
    lo = gallop(w->cpairs, lo, base, q); /* (q increases: the bounds only grow) */
    if (lo < base && pair_cmp(&w->cpairs[lo], q) == 0) continue;
    la = gallop(w->cpairs, la, old, q);
    if (la < old && pair_cmp(&w->cpairs[la], q) == 0) continue;
    w->cpairs[old + m++] = *q;
  }
  w->ncpairs = old;
  w->ctopups++;
  if (m == 0) {
    if (w->ctopup_check) check_topup(cx);
    return 0;
  }
  arena_mark mark = arena_get_mark(&w->scratch);
  collide_pair *np = ARENA_NEW(&w->scratch, collide_pair, m, "new candidates");
  double *nd = ARENA_NEW(&w->scratch, double, m, "new candidate distances");
  if (!np || !nd) {
    arena_release(&w->scratch, mark);
    return -1;
  }
  for (int k = 0; k < m; k++) {
    np[k] = w->cpairs[old + k];
    pair_nodes(cx, &np[k]);
    nd[k] = start_distance(cx, &np[k]);
  }
  /* merged from the back into the added run (both sorted); the collected run stays as it is */
  int i = old - 1, j = m - 1, k = old + m - 1;
  while (j >= 0) {
    if (i >= base && pair_cmp(&w->cpairs[i], &np[j]) > 0) {
      w->cpairs[k] = w->cpairs[i];
      w->cdist[k--] = w->cdist[i--];
    } else {
      w->cpairs[k] = np[j];
      w->cdist[k--] = nd[j--];
    }
  }
  arena_release(&w->scratch, mark);
  w->ncpairs = old + m;
  memset(w->cseen + base, 0, sizeof(int32_t) * (size_t)(w->ncpairs - base));
  if (w->ctopup_check) check_topup(cx);
  return 0;
}

/* The vertices of the self-colliding bodies' patches that now skip less than the list's, marked in
 * out (a top-up adds their pairs); how many were not marked already. */
static int mark_lost_patches(const collide_ctx *cx, uint8_t *out) {
  int marked = 0;
  for (int a = 0; a < cx->nsoft; a++)
    if (cx->b[a].self) marked += patch_mark_shrunk(cx->b[a].p, out + cx->b[a].offset);
  return marked;
}

/* After a check of the list against the patches, or its top-up: the list leaves out what both its
 * patches and the current ones leave out. */
static void lists_checked(const collide_ctx *cx) {
  for (int a = 0; a < cx->nsoft; a++)
    if (cx->b[a].self) patch_list_checked(cx->b[a].p);
}

/* The list for paths that changed: kept while every vertex stays in its box, topped up when a
 * few left theirs, collected afresh when many did (a quarter of the vertices) or when top-ups
 * have doubled it since it was last collected in full. The smooth patches are checked again on
 * the new paths first (contact_patch.c): the vertices of a patch that now skips less than when the
 * list was checked join the top-up (the pairs it left out were never tested on these paths).
 * *fresh: the list changed. 0, or -1 when out of memory or room. */
static int refresh_list(collide_ctx *cx, uint8_t *out, int *fresh) {
  int shrunk = 0;
  for (int a = 0; a < cx->nsoft; a++) {
    if (!cx->b[a].self) continue;
    particles *p = cx->b[a].p;
    /* (out as the recheck's scratch, before moved_vertices writes it) */
    if (patch_recheck(p, cx->h, world_par(cx->w), cx->w->substep_serial, out + cx->b[a].offset)) shrunk |= patch_shrunk(p);
  }
  int marked = moved_vertices(cx, out);
  if (shrunk) marked += mark_lost_patches(cx, out);
  *fresh = marked > 0;
  int r = 0;
  if (marked)
    r = 4 * marked > cx->total || cx->w->ncpairs > 2 * cx->w->cpair_base || cx->w->ctopup_off ? collect(cx) : extend(cx, out);
  lists_checked(cx);
  return r;
}

/* What the list was collected for: bodies, their thickness, self flags and (overlaps) which pairs
 * of bodies were near. A change means collecting again. */
static uint64_t list_signature(const collide_ctx *cx, int overlaps) {
  uint64_t h = 1469598103934665603ull;
#define MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
  for (int a = 0; a < cx->nb; a++) {
    uint64_t bits;
    memcpy(&bits, &cx->b[a].half, sizeof bits);
    MIX(cx->b[a].slot);
    MIX(cx->b[a].p->n);
    MIX(bits);
    MIX(cx->b[a].self);
    MIX(cx->b[a].resting);
    for (int b = a + 1; b < cx->nb && overlaps; b++) MIX(boxes_overlap(&cx->b[a], &cx->b[b]));
  }
#undef MIX
  return h;
}

static int zone_link_hits(collide_ctx *cx, int32_t *parent, const int32_t *moved, int *hits, int full) {
  loom_world *w = cx->w;
  const int pass = ++cx->pass;
  int changed = 0;
  *hits = 0;
  arena_mark mark = arena_get_mark(&w->scratch);
  int nlist = 0;
  const int32_t *chosen = pass_list(cx, full, pass, &nlist);
  if (!chosen) *hits = 1; /* out of memory: not known to be resolved */
  for (int j = 0; j < nlist; j++) {
    const int c = chosen[j];
    feat4 f;
    gather(cx, &w->cpairs[c], &f);
    /* four nodes the last rigidify moved as one body: their end is the rigid image of a start
     * free of crossings, so free of them too, whatever the straight paths between (a zone turning
     * fast crosses itself along them: two cloths on a bar spinning at 31 rad/s, dt 0.04 s, spent
     * seconds a step solving cubics for such pairs and ended in the last resort) */
    if (moved[f.gi[0]] >= 0 && moved[f.gi[0]] == moved[f.gi[1]] && moved[f.gi[0]] == moved[f.gi[2]] &&
        moved[f.gi[0]] == moved[f.gi[3]])
      continue;
    if (watched(cx, &w->cpairs[c]) || !ccd_pair(cx, &f, w->cdist[c], NULL)) continue;
    (*hits)++;
    /* the cloth nodes join one zone; an obstacle's nodes do not join it (they would tie every
     * zone touching the obstacle into one): the zone moves with the obstacle instead */
    const collide_pair *q = &w->cpairs[c];
    const int split = f.ee ? 2 : 3;
    const int oa = cx->b[q->a].obstacle ? q->a : -1, ob = cx->b[q->b].obstacle ? q->b : -1;
    int first = -1;
    for (int k = 0; k < 4; k++) {
      if ((k < split ? (f.ee ? oa : ob) : (f.ee ? ob : oa)) >= 0) continue;
      if (first < 0) first = f.gi[k];
      else changed += zunion(parent, cx->anchor, first, f.gi[k]);
    }
    const int obstacle = oa >= 0 ? oa : ob;
    if (first >= 0 && obstacle >= 0) {
      const int root = zfind(parent, first);
      if (cx->anchor[root] < 0 || obstacle < cx->anchor[root]) cx->anchor[root] = obstacle, changed++;
    }
  }
  arena_release(&w->scratch, mark);
  return changed;
}

/* ---- the search margin ---------------------------------------------------------------------------
 * A wide margin lets a list serve many substeps where the cloth moves little (a hanging cloth whose
 * 100-170 fastest vertices left a margin of an eighth of the thickness at every step, each time a
 * top-up), but lengthens the list where layers lie close (a pile) or cells are small. The margin is
 * therefore a rung of MARGIN_RUNGS (half thicknesses per substep), chosen from how the lists fare:
 * a list that served at least MARGIN_PROBE_SERVED substeps, half of them needing a top-up, is
 * collected one rung up; if that list is more than half as long again as the one before, the rung
 * goes back down and becomes the ceiling (lifted again after MARGIN_RETRY fresh collections); a
 * list that had to be collected afresh before serving two substeps (fast motion, which no margin
 * holds) drops to the bottom rung; no rung reaches the next ring of features of a body's flat sheet
 * (margin_top). A new rung always starts a fresh list (cm_pending): a kept list
 * is checked with the margin its boxes were made with (list_margin). The margin changes no
 * result, only how often a list is collected and how long it is (tests/c/test_ccd.c), so this
 * choice, which is not state, cannot make a restored run differ. */
static const double MARGIN_RUNGS[] = {0.25, 0.5, 1.0, 2.0};
#define MARGIN_TOP 3
#define MARGIN_PROBE_SERVED 4
#define MARGIN_RETRY 256

/* Rung r's margin for a body of half thickness `half`: per substep, at most the whole thickness. */
static double rung_margin(const step_info *s, double half, int r) { return half * d_min(MARGIN_RUNGS[r] * s->substeps, 2.0); }

/* The margin of a new list for a body of half thickness `half` (explicit integrators, four
 * substeps or more, keep the widest; a test's fixed margin wins). */
static double margin_for(const loom_world *w, const step_info *s, double half) {
  if (w->cmargin > 0) return half * w->cmargin * s->substeps;
  return rung_margin(s, half, s->substeps >= 4 ? MARGIN_TOP : w->cm_level);
}

static int margin_adaptive(const loom_world *w, const step_info *s) { return w->cmargin <= 0 && s->substeps < 4; }

/* The highest rung whose boxes stay clear of the next ring of features in a body's flat rest sheet:
 * two boxes, each half the thickness plus the margin beyond its path, reach each other across a
 * gap of twice that, so the margin stays below half the shorter edges less half the thickness (a
 * 128² cloth of 1 m, 7.9 mm edges and 4 mm thickness: 1 mm; at 2 mm its list went from 112 000
 * candidates to 1 448 000). */
static int margin_top(const step_info *s, const cbody *cb) {
  const double room = 0.5 * cb->p->col.edge_short - cb->half;
  int top = MARGIN_TOP;
  while (top > 0 && rung_margin(s, cb->half, top) > room) top--;
  return top;
}

/* A kept list served a new substep (topped up or not); `top` is the highest rung the bodies
 * allow (margin_top). */
static void margin_served(loom_world *w, const step_info *s, int topped, int top) {
  if (!margin_adaptive(w, s)) return;
  w->cm_served++;
  w->cm_topups += topped != 0;
  int cap = w->cm_ceiling ? w->cm_ceiling - 1 : MARGIN_TOP;
  if (top < cap) cap = top;
  if (w->cm_level > top && !w->cm_pending) { /* (a body with shorter edges joined) */
    w->cm_level = top;
    w->cm_pending = 1;
  }
  if (w->cm_level < cap && !w->cm_pending && w->cm_served >= MARGIN_PROBE_SERVED && 2 * w->cm_topups >= w->cm_served) {
    w->cm_level++;
    w->cm_probe = 1;
    w->cm_pending = 1;
  }
}

/* A list was collected afresh: `before` candidates in the one it replaces, `pending` whether a new
 * rung started it. */
static void margin_collected(loom_world *w, const step_info *s, int before, int pending) {
  if (!margin_adaptive(w, s) || w->cm_pending) return; /* (a new rung waits: this list is the old one's) */
  if (w->cm_probe) {
    w->cm_probe = 0;
    if (pending && 2 * (double)w->ncpairs > 3 * (double)before && w->cm_level > 0) {
      w->cm_level--;
      w->cm_ceiling = w->cm_level + 1;
      w->cm_pending = 1;
    }
  } else if (!pending && w->cm_served < 2 && w->cm_level > 0) {
    w->cm_level = 0;
    w->cm_pending = 1;
  }
  if (++w->cm_collections >= MARGIN_RETRY) {
    w->cm_collections = 0;
    w->cm_ceiling = 0;
  }
  w->cm_served = w->cm_topups = 0;
}

int contact_collide_respond(loom_world *w, const step_info *s) {
  /* (set again below when this run leaves every path free of collisions) */
  const int last_ok = w->cround_ok;
  w->cround_ok = 0;
  /* a new rung of the margin starts a new list at a substep's first run */
  const int pending = w->cm_pending && w->cdist_serial != w->substep_serial;
  if (pending) {
    w->cpair_valid = 0;
    w->cm_pending = 0;
  }
  cbody list[64];
  int nb = 0, any_pair = 0, total = 0;
  for (int o = 0; o < w->order_count && nb < 64; o++) {
    const int slot = w->order[o];
    particles *p = w->bodies[slot].pts;
    if (!p || p->nt <= 0 || p->frozen || !p->x_sub) continue;
    if (p->n >= (1 << 24) || 3 * p->nt >= (1 << 24)) {
      /* the candidate keys hold feature indices in 24 bits */
      if (!p->col.warned) world_message(w, LOOM_WARNING, slot, "collisions: body has more than 2^24 features; it does not take part");
      p->col.warned = 1;
      continue;
    }
    /* a body that is diverging in this substep stays out: its commit freezes it, and its absurd
     * motion must not reach the others through impulses */
    int sane = 1;
    const double vmax = SOFT_MAX_SPEED * s->h;
    for (int i = 0; i < p->n && sane; i++) {
      const vec3 d = v3_sub(p->x[i], p->x_sub[i]);
      sane = v3_isfinite(p->x[i]) && v3_isfinite(p->x_sub[i]) && v3_len2(d) <= vmax * vmax;
    }
    if (!sane) continue;
    list[nb].slot = slot;
    list[nb].p = p;
    list[nb].offset = total;
    list[nb].half = 0.5 * particles_thickness(p);
    /* a kept list's boxes were made with the margin of its collection; a new list's is the
     * rung's (margin_for: a wider margin lets one list serve more substeps, worth it when there
     * are several per step or the cloth moves little; with a quarter of the half thickness per
     * substep a 64² pile's list is 28 % shorter than with half, and the pile and a draped table
     * about 4 % faster) */
    list[nb].margin = w->cpair_valid && p->col.list_margin > 0 ? p->col.list_margin : margin_for(w, s, list[nb].half);
    list[nb].self = (unsigned char)(p->self_collision != 0);
    list[nb].obstacle = 0;
    list[nb].resting = (unsigned char)(p->resting != 0);
    list[nb].rest_self = (unsigned char)(p->resting == 1);
    list[nb].observe = 0;
    list[nb].cloth = (unsigned char)(w->bodies[slot].ops->id == LOOM_KIND_CLOTH);
    list[nb].cloth_only = 0;
    list[nb].pad = 0;
    list[nb].points = NULL;
    list[nb].at = nb;
    list[nb].off = 0;
    total += p->n;
    nb++;
  }
  /* world:pair's collide = false between particle bodies (looked up once per pair of bodies, and
   * not at all in a world without such a pair) */
  for (int a = 0; a < nb && w->npairs_off; a++)
    for (int b = a + 1; b < nb; b++)
      if (world_pair_off(w, list[a].slot, list[b].slot)) {
        list[a].off |= (uint64_t)1 << b;
        list[b].off |= (uint64_t)1 << a;
      }
  for (int a = 0; a < nb && !any_pair; a++) {
    if (list[a].self) any_pair = 1;
    for (int b = a + 1; b < nb && !any_pair; b++) any_pair = boxes_overlap(&list[a], &list[b]);
  }
  /* a resting body's pairs up to RESTING_REACH thicknesses apart (keep_pair) are in the list:
   * its boxes take what its pairs' thickness, at most its half and the largest other, needs. A
   * body that rests on other bodies only (cloth) is padded only while another particle body is
   * near: a single cloth's own pairs (a pile) keep Bridson's rule and the list they need */
  double widest_half = 0;
  for (int a = 0; a < nb; a++) widest_half = d_max(widest_half, list[a].half);
  unsigned char near_soft[64] = {0};
  for (int a = 0; a < nb; a++)
    for (int b = a + 1; b < nb; b++)
      if (boxes_overlap(&list[a], &list[b])) near_soft[a] = near_soft[b] = 1;
  for (int a = 0; a < nb; a++) {
    list[a].resting &= (unsigned char)(list[a].rest_self | near_soft[a]);
    if (list[a].resting) list[a].pad = (RESTING_REACH - 1) * (list[a].half + widest_half);
  }
  /* obstacles with corners or convex edges near a particle body: their paths over the substep */
  const int nsoft = nb;
  double widest = 0;
  for (int a = 0; a < nsoft; a++) widest = d_max(widest, list[a].margin);
  for (int o = 0; o < w->order_count && nsoft > 0 && nb < 64; o++) {
    const int slot = w->order[o];
    if (w->bodies[slot].ops->id != LOOM_KIND_RIGID) continue;
    rigid_body *r = rigid_of_slot(&w->bodies[slot]);
    if (!r->model.ccd || r->model.ccd->n >= (1 << 24) || r->model.ccd->col.ne >= (1 << 24)) continue;
    rigid_ccd_place(r, s->a0, s->a1);
    list[nb].slot = slot;
    list[nb].p = r->model.ccd;
    list[nb].offset = total;
    list[nb].half = 0.5 * particles_thickness(r->model.ccd); /* (its thickness is the body's skin) */
    /* a moving obstacle's list lasts as long as the cloth's */
    list[nb].margin = w->cpair_valid && r->model.ccd->col.list_margin > 0 ? r->model.ccd->col.list_margin : widest;
    list[nb].self = 0;
    list[nb].obstacle = 1;
    list[nb].resting = 0;
    list[nb].rest_self = 0;
    /* a dynamic body's contacts with cloth are carried by the cloth's vertices (the implicit
     * solve, the vertex pass), which push it back; its core is only watched: held as an
     * immovable obstacle, a ball would drag a cloth it cannot pass with nothing pushing back */
    list[nb].observe = (unsigned char)(r->model.ccd_core && rigid_is_dynamic(r));
    list[nb].cloth = 0;
    list[nb].cloth_only = (unsigned char)(r->model.shape_type == LOOM_SHAPE_SPHERE && !r->model.ccd_core);
    list[nb].pad = 0;
    list[nb].points = r->model.ccd_corner;
    list[nb].at = nb;
    list[nb].off = 0;
    for (int a = 0; a < nsoft && w->npairs_off; a++)
      if (world_pair_off(w, list[a].slot, slot)) {
        list[a].off |= (uint64_t)1 << nb;
        list[nb].off |= (uint64_t)1 << a;
      }
    int near = 0;
    for (int a = 0; a < nsoft && !near; a++) near = boxes_overlap(&list[a], &list[nb]);
    if (!near) {
      for (int a = 0; a < nsoft; a++) list[a].off &= ~((uint64_t)1 << nb); /* (the index goes to the next) */
      continue;
    }
    any_pair = 1;
    total += r->model.ccd->n;
    nb++;
  }
  if (!any_pair) return 0;
  collide_ctx cx = {w, s->h, list, nb, total, nsoft, s->a0, s->a1, NULL, 0, 0, 0, 0};
  for (int a = 0; a < nsoft; a++) cx.resting |= list[a].resting;
  cx.tnow = w->time + s->a0 * s->dt;
  /* a list kept from an earlier substep is checked in the frame it was collected in */
  cx.vref = w->cframe_v;
  cx.tshift = cx.tnow - w->cframe_t;
  const double h = s->h;
  for (int a = 0; a < nb; a++)
    if (prepare(list[a].p)) {
      world_message(w, LOOM_ERROR, list[a].slot, "collisions: out of memory preparing body %d", list[a].slot);
      return 0;
    }
  /* A later run in the same substep (the obstacle passes moved some vertices after the last run,
   * which left every path free of collisions): a vertex the passes left alone keeps its mean
   * velocity bit for bit, and only pairs with a node that changed can collide now. (Whether two
   * bodies' boxes now overlap does not matter: a pair of unchanged features was out of reach
   * before and still is; and so the choice does not depend on the boxes' margins.) */
  const uint64_t sig = list_signature(&cx, 1), bodies = list_signature(&cx, 0);
  const int cont = last_ok && !w->cround_off && w->cround_serial == w->substep_serial && w->cround_sig == bodies;
  for (int a = 0; a < nb; a++) {
    particles *p = list[a].p;
    particle_collide *c = &p->col;
    if (cont) {
      memcpy(c->held_prev, c->held, (size_t)p->n);
      memcpy(c->nobs_prev, c->nobs, sizeof(vec3) * (size_t)p->n);
    }
    for (int i = 0; i < p->n; i++) {
      if (!cont || !v3_same(p->x[i], c->xend[i])) c->vbar[i] = v3_scale(v3_sub(p->x[i], p->x_sub[i]), 1 / h);
      c->inv_m[i] = p->inv_m[i];
      c->held[i] = 0;
    }
    memcpy(c->vbar0, c->vbar, sizeof(vec3) * (size_t)p->n);
  }
  /* vertices the obstacle passes hold this step: their contact normals (vertex contacts, and the
   * nodes of cloth elements a sharp obstacle feature pushed) */
  for (int k = 0; k < w->contacts.count; k++) {
    const loom_contact *rc = &w->contacts.items[k];
    const contact_work *wk = &w->contacts.work[k];
    if ((rc->solver != 1 && rc->solver != 2) || !wk->resolved) continue;
    for (int a = 0; a < nb; a++) {
      if (list[a].slot != wk->slot_a) continue;
      particles *p = list[a].p;
      int nodes[3], nn = 0;
      if (rc->type_a == LOOM_FEATURE_VERTEX) {
        nodes[nn++] = rc->feature_a;
      } else if (rc->type_a == LOOM_FEATURE_TRIANGLE && rc->feature_a < p->nt) {
        for (int j = 0; j < 3; j++) nodes[nn++] = p->tri[3 * rc->feature_a + j];
      } else if (rc->type_a == LOOM_FEATURE_EDGE && w->bodies[list[a].slot].ops->id == LOOM_KIND_CLOTH) {
        const cloth_body *cb = cloth_of(&w->bodies[list[a].slot]);
        if (rc->feature_a < cb->model.ne)
          for (int j = 0; j < 2; j++) nodes[nn++] = cb->model.edge[2 * rc->feature_a + j];
      }
      const vec3 n = v3(rc->normal.x, rc->normal.y, rc->normal.z);
      for (int j = 0; j < nn; j++) {
        particle_collide *c = &p->col;
        const int i = nodes[j];
        if (i < 0 || i >= p->n) continue;
        /* several obstacle normals (a box edge, a corner): their sum, normalised below */
        c->nobs[i] = c->held[i] ? v3_add(c->nobs[i], n) : n;
        c->held[i] = 1;
      }
    }
  }
  for (int a = 0; a < nb; a++) {
    particle_collide *c = &list[a].p->col;
    for (int i = 0; i < list[a].p->n; i++) {
      if (!c->held[i]) continue;
      const double l = v3_len(c->nobs[i]);
      if (l > 1e-9) c->nobs[i] = v3_scale(c->nobs[i], 1 / l);
      else c->held[i] = 0; /* opposite normals cancel: a vertex squeezed between two faces */
    }
  }
  if (reserve_pairs(w, 16 * total > 1024 ? 16 * total : 1024) || reserve_second(w, 8 * total > 1024 ? 8 * total : 1024)) {
    world_message(w, LOOM_ERROR, list[0].slot, "collisions: out of memory for candidate pairs; collisions skipped this substep");
    return 0;
  }
  /* (released on every return below) */
  const arena_mark base = arena_get_mark(&w->scratch);
  uint8_t *out = ARENA_NEW(&w->scratch, uint8_t, total, "vertices out of their boxes");
  /* the smooth patches of the self-colliding bodies for these paths (contact_patch.c); where they
   * skip less than when the list was checked, a top-up adds the pairs now wanted (below) */
  int patches_shrunk = 0;
  for (int a = 0; a < nsoft; a++) {
    if (!list[a].self) continue;
    particles *p = list[a].p;
    if (!w->cpatch_off) patch_build(p);
    patch_certify(p, h, out && !w->cpatch_off, world_par(w), w->substep_serial, out ? out + list[a].offset : NULL);
    patches_shrunk |= patch_shrunk(p);
  }
  /* a later run: the vertices whose path or hold changed since the last one */
  uint8_t *changed = cont ? ARENA_NEW(&w->scratch, uint8_t, total, "changed vertices") : NULL;
  for (int a = 0; a < nb && changed; a++) {
    const particles *p = list[a].p;
    const particle_collide *c = &p->col;
    for (int i = 0; i < p->n; i++)
      changed[list[a].offset + i] = !v3_same(p->x[i], c->xend[i]) || c->held[i] != c->held_prev[i] ||
                                    (c->held[i] && !v3_same(c->nobs[i], c->nobs_prev[i]));
  }
  /* how far every start moved since the previous run (the bound on start distances) */
  const arena_mark moved_mark = arena_get_mark(&w->scratch);
  int known = 1;
  for (int a = 0; a < nb; a++) known &= list[a].p->col.xprev_ok;
  cx.moved = known ? ARENA_NEW(&w->scratch, double, total, "start moves") : NULL;
  for (int a = 0; a < nb; a++) {
    particle_collide *c = &list[a].p->col;
    const vec3 *xs = list[a].p->x_sub;
    if (cx.moved)
      for (int i = 0; i < list[a].p->n; i++) cx.moved[list[a].offset + i] = v3_dist(xs[i], c->xprev[i]);
    memcpy(c->xprev, xs, sizeof(vec3) * (size_t)list[a].p->n);
    c->xprev_ok = 1;
  }
  int failed = 0;
  /* A list serves while its paths stay in their boxes, and is topped up (extend) when a few
   * left theirs — within a substep (the rounds after the obstacle passes, the CCD and zone passes)
   * and from one substep to the next alike: a list is a superset of the pairs within reach whatever
   * its history, and acts as one collected afresh (the extra pairs fail the distance tests; the
   * rest act in key order), so a restored checkpoint, which collects afresh, continues bit for bit.
   * A quarter of the vertices out, or a list twice as long as its last collection, collects it
   * afresh. */
  const int same_substep = w->cdist_serial == w->substep_serial;
  const int moved = out && w->cpair_valid && sig == w->cpair_sig ? moved_vertices(&cx, out) : -1;
  /* and the vertices of the patches that skip less than when the list was checked: a top-up adds
   * their pairs */
  const int marked = moved + (moved >= 0 && patches_shrunk ? mark_lost_patches(&cx, out) : 0);
  if (moved < 0 || 4 * marked > total || w->ncpairs > 2 * w->cpair_base || (marked && w->ctopup_off)) {
    w->cpair_sig = sig;
    cx.moved = NULL; /* a new list: every distance afresh */
    const int before = w->cpair_base;
    failed = collect(&cx);
    if (!failed) margin_collected(w, s, before, pending);
  } else {
    /* the start positions moved since the list's distances were found (else a later round in the
     * same substep: they, and so cdist, are the same) */
    if (!same_substep) {
      start_distances(&cx);
      int top = MARGIN_TOP;
      for (int a = 0; a < nsoft; a++) {
        const int t = margin_top(s, &list[a]);
        if (t < top) top = t;
      }
      margin_served(w, s, moved, top);
    }
    cx.moved = NULL;
    if (marked) failed = extend(&cx, out);
    lists_checked(&cx);
  }
  cx.moved = NULL;
  arena_release(&w->scratch, moved_mark);
  if (w->ncpairs > w->stats.candidates) w->stats.candidates = w->ncpairs;
  if (failed) {
    world_message(w, LOOM_ERROR, list[0].slot, "collisions: too many candidate pairs (%d); collisions skipped this substep",
                  w->ncpairs);
    arena_release(&w->scratch, base);
    return 0;
  }
  cx.tmax = 0;
  for (int a = 0; a < nb; a++) cx.tmax = d_max(cx.tmax, list[a].half);
  cx.tmax = cx.tmax + cx.tmax;
  cx.disp = ARENA_NEW(&w->scratch, double, total, "displacements");
  if (!cx.disp || !out) {
    world_message(w, LOOM_ERROR, list[0].slot, "collisions: out of memory; collisions skipped this substep");
    arena_release(&w->scratch, base);
    return 0;
  }
  if (w->ncpairs) memset(w->cseen, 0, sizeof(int32_t) * (size_t)w->ncpairs);
  for (int a = 0; a < nb; a++) memset(list[a].p->col.stamp, 0, sizeof(int32_t) * (size_t)list[a].p->n);
  find_tangles(&cx, s);
  /* (a tangle's pairs are left out by what both their features touch: a later run tests all) */
  cx.later = changed && !cx.tangled;
  if (cx.later) {
    for (int a = 0; a < nb; a++)
      for (int i = 0; i < list[a].p->n; i++)
        if (changed[list[a].offset + i]) list[a].p->col.stamp[i] = 1;
    cx.pass = 1; /* the first CCD pass then selects the pairs stamped 1 */
    w->clater_runs++;
  }
  if (cx.resting) displacements(&cx); /* (the reach of resting pairs) */
  int extrapolated = 0;
  for (int a = 0; a < nsoft && cx.resting; a++) extrapolated |= list[a].p->accel != NULL;
  if (extrapolated) {
    cx.vext = ARENA_NEW(&w->scratch, vec3, total, "resting extrapolation");
    if (cx.vext) memset(cx.vext, 0, sizeof(vec3) * (size_t)total);
  }
  cx.vend = ARENA_NEW(&w->scratch, vec3, total, "ccd end velocities");
  if (cx.vend) memset(cx.vend, 0, sizeof(vec3) * (size_t)total);
  proximity(&cx);
  int hits = 0, it = 0, certified = 0;
  for (it = 0; it < CCD_ITERATIONS; it++) {
    int full = it == 0 && !cx.later, fresh;
    if (refresh_list(&cx, out, &fresh)) break;
    full |= fresh && !cx.later;
    hits = ccd_pass(&cx, full);
    if (it == 0) w->stats.ccd_collisions += hits;
    if (!hits) {
      certified = 1;
      break;
    }
  }
  w->stats.collision_iterations += it;
  if (hits) {
    /* impact zones until nothing collides */
    arena_mark mark = arena_get_mark(&w->scratch);
    int32_t *parent = ARENA_NEW(&w->scratch, int32_t, total, "impact zones");
    zone_acc *acc = ARENA_NEW(&w->scratch, zone_acc, total, "impact zone sums");
    cx.anchor = ARENA_NEW(&w->scratch, int32_t, total, "impact zone anchors");
    int32_t *moved_as = ARENA_NEW(&w->scratch, int32_t, total, "rigidly moved vertices");
    int resolved = 0, zones = 0, largest = 0, passes = 0;
    if (parent && acc && cx.anchor && moved_as) {
      for (int g = 0; g < total; g++) {
        parent[g] = g;
        cx.anchor[g] = -1;
        moved_as[g] = -1;
      }
      for (int zi = 0; zi < ZONE_ITERATIONS; zi++) {
        /* every pair without a stamped node was cleared by the CCD passes */
        int full;
        if (refresh_list(&cx, out, &full)) break;
        int nh;
        const int grew = zone_link_hits(&cx, parent, moved_as, &nh, full);
        w->stats.collision_iterations++;
        passes++;
        if (!nh) {
          resolved = certified = 1;
          break;
        }
        /* the zones and their anchors are what the last pass made them: moving them again gives
         * the same paths and the same hits (a zone turning fast, whose straight paths cross inside
         * it, or pressed between obstacles); the rest of the iterations could only repeat it */
        if (!grew && zi > 0) break;
        largest = rigidify(&cx, parent, acc, &zones, moved_as);
      }
    }
    if (zones > 0) record_zones(&cx, parent, acc);
    if (zones > w->stats.impact_zones) w->stats.impact_zones = zones;
    if (largest > w->stats.largest_zone) w->stats.largest_zone = largest;
    if (!resolved) {
      /* the fail-safe's fail-safe: every free vertex of the colliding bodies stands still for
       * this substep (their start is free of crossings, so this end is too unless a pin's scripted
       * motion drives through the cloth: pins keep their motion), and the world says so; the next
       * run looks for crossings left at its start */
      int stood = 0;
      for (int a = 0; a < nsoft; a++) {
        particles *p = list[a].p;
        p->col.check_tangles = p->check_obstacles = 1;
        for (int i = 0; i < p->n; i++) {
          if (p->col.inv_m[i] == 0) continue;
          p->col.vbar[i] = v3(0, 0, 0);
          stood++;
        }
      }
      if (stood > w->stats.unresolved) w->stats.unresolved = stood; /* (the most in one substep of the step) */
      const double now = w->time + s->a0 * s->dt;
      if (once_a_second(&w->collide_warned_until, now)) {
        /* the bodies whose vertices stood still, by name (the first few) */
        char names[256] = "";
        size_t at = 0;
        int named = 0;
        for (int a = 0; a < nsoft && at + 1 < sizeof names; a++) {
          const body_slot *bs = &w->bodies[list[a].slot];
          if (named == 3) {
            snprintf(names + at, sizeof names - at, " and %d more", nsoft - a);
            break;
          }
          const int k = snprintf(names + at, sizeof names - at, "%s%s '%s'", named ? ", " : "", bs->ops->name, bs->name);
          if (k > 0) at += (size_t)k < sizeof names - at ? (size_t)k : sizeof names - at - 1;
          named++;
        }
        world_message(w, LOOM_WARNING, list[0].slot,
                      "collisions: impact zones did not separate %s at t = %.4f s (%d passes; %s); %d "
                      "vertices stood still for the substep (smaller dt or larger thickness; further cases in the next "
                      "second are counted in stats.unresolved only)",
                      names, now, passes, passes < ZONE_ITERATIONS ? "the zones stopped growing and still collide" : "the cap",
                      stood);
      }
    }
    arena_release(&w->scratch, mark);
  }
  if (cx.crossed) {
    w->stats.passed_through += cx.crossed;
    const double now = w->time + s->a0 * s->dt;
    if (once_a_second(&w->passed_warned_until, now)) {
      const body_slot *rb = &w->bodies[cx.crossed_body], *sb = &w->bodies[cx.crossed_soft];
      world_message(w, LOOM_WARNING, cx.crossed_body,
                    "collisions: %s '%s' passed through %s '%s' at t = %.4f s (its centre or axis crossed %d of the "
                    "cloth's features): a dynamic body's contacts with cloth act at the cloth's vertices, and the "
                    "triangles around it were too large for it; a finer cloth, a stiffer one (strain_limit) or a "
                    "kinematic body keeps it out (further cases in the next second are counted in "
                    "stats.passed_through only)",
                    rb->ops->name, rb->name, sb->ops->name, sb->name, now, cx.crossed);
    }
  }
  /* 6. positions and velocities where the pipeline changed the motion */
  int moves = 0;
  for (int a = 0; a < nb; a++) {
    particles *p = list[a].p;
    const particle_collide *c = &p->col;
    const vec3 *vext = cx.vext && a < nsoft && p->accel ? cx.vext + list[a].offset : NULL;
    for (int i = 0; i < p->n; i++) {
      if (!v3_same(c->vbar[i], c->vbar0[i])) {
        p->x[i] = v3_madd(p->x_sub[i], c->vbar[i], h);
        p->v[i] = v3_add(p->v[i], v3_sub(c->vbar[i], c->vbar0[i]));
        moves++;
      }
      if (cx.vend && a < nsoft) p->v[i] = v3_add(p->v[i], cx.vend[list[a].offset + i]);
      /* a resting contact's force in the velocity reported at the substep's end, and in the
       * acceleration the next substep takes it off with (resting_extrapolation) */
      if (vext && !v3_same(vext[i], v3(0, 0, 0))) {
        p->v[i] = v3_add(p->v[i], vext[i]);
        p->accel[i] = v3_madd(p->accel[i], vext[i], 2.0 / h);
      }
    }
  }
  if (certified) {
    for (int a = 0; a < nb; a++) memcpy(list[a].p->col.xend, list[a].p->x, sizeof(vec3) * (size_t)list[a].p->n);
    w->cround_ok = 1;
    w->cround_serial = w->substep_serial;
    w->cround_sig = bodies;
  }
  arena_release(&w->scratch, base);
  return moves;
}
