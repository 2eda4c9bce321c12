/* contact_rigid.c — dynamic rigid bodies and their contacts: soft-step sequential impulses.
 *
 * Detect (once per world substep): the manifolds of every broad-phase pair of rigid bodies in
 * which one is an awake dynamic body, at the substep's start poses, with speculative points within
 * RIGID_SPECULATIVE plus the distance the pair can close in the substep. A sleeping body touched
 * by an awake one wakes (and, transitively, what it touches).
 *
 * Respond: the substep h is cut into inner steps hs <= 1/960 s; each one integrates the dynamic
 * bodies' velocities (forces, gravity, gyroscopic term), applies the accumulated impulses (warm
 * start), solves every contact point twice with a soft constraint (a spring of 0.25/hs Hz and
 * damping ratio RIGID_ZETA pushes overlap out at most RIGID_MAX_PUSH m/s; a gap closes at most
 * its own width), integrates the poses, and relaxes once without the spring so the push-out
 * leaves no velocity behind (Catto's "soft step", Box2D v3). A soft contact carries a load w with
 * an overlap of about w / (m (2 pi f)^2): at 240 Hz and more a box under 20 others sinks 0.1 mm,
 * which is why the inner rate is high (measured: 30 Hz sank a 20-box column by 110 mm, 240 Hz by
 * 1.8 mm). One solving pass per inner step left towers of 0.2 m cubes rocking and creeping
 * sideways by millimetres; two keep them within 0.6 mm (docs/benchmarks.md). Each constraint row
 * keeps its Jacobian's angular parts and their I^-1 images, so a pass is a few dot products. Friction is Coulomb in the tangent
 * plane (a disc, not a box), at most mu times the point's normal impulse. After the inner steps a
 * restitution pass returns e times the approach speed of points that hit faster than
 * RIGID_BOUNCE_MIN. Impulses are remembered per contact id for the next substep's warm start.
 * Bodies whose whole island stays below the sleep thresholds for RIGID_SLEEP_TIME fall asleep
 * (zero velocity, not integrated) until something awake touches them or a force is applied.
 * Order is deterministic: pairs in broad-phase order, points in manifold order; the passes run
 * manifolds that share no moving body side by side as the lanes of vectors, which gives the same
 * numbers as that order (see "waves" below). */
#include <stdlib.h>
#include <string.h>

#include "contact/contact_rigid.h"
#include "math/math_lanes.h"

#define RIGID_INNER_RATE 960.0 /* inner steps per second at least: hs <= 1/960 s */
#define RIGID_ITERATIONS 2     /* solving passes per inner step (then one relaxing pass) */
#define RIGID_ZETA 10.0
#define RIGID_MAX_PUSH 3.0
#define RIGID_BOUNCE_MIN 0.5       /* m/s */
#define RIGID_SLEEP_LINEAR 0.05    /* m/s */
#define RIGID_SLEEP_ANGULAR 0.0349 /* rad/s (2 degrees/s) */
#define RIGID_SLEEP_TIME 0.5       /* s */

/* One constraint direction d at a point: the angular parts of its Jacobian (ra x d, rb x d), the
 * angular velocity changes per unit impulse (I^-1 of those) and the effective mass. */
typedef struct jrow {
  vec3 ca, cb, wa, wb;
  double mass;
} jrow;

typedef struct rpoint {
  vec3 c, la, lb, ra, rb;
  jrow rn, rt[2];
  double s0; /* the separation found (the lanes keep the current one) */
  double ni, ti[2];
  double vn0, max_ni;
  vec3 total; /* impulse given to A over the substep */
  uint32_t id;
} rpoint;

typedef struct rcontact {
  int a, b;       /* solver body indices */
  int slot_a, slot_b;
  vec3 n, t1, t2;
  double mu, e;
  int first, count;
  /* rolling and torsional resistance (lever arms, m): angular impulses against the relative spin
   * across and about the normal, at most lever x the manifold's normal impulse */
  double roll, twist;
  mat3 kroll; /* (I_A^-1 + I_B^-1)^-1 */
  double ktwist;
  double rounded; /* the radii of a sphere or capsule on either side: the anchors lie on their axes */
  vec3 lroll;
  double ltwist;
} rcontact;

typedef struct rbody {
  rigid_body *r;
  int slot, dynamic;
  vec3 v, w, p;
  quat q;
  mat3 R, iI;
  vec3 v_start, w_start; /* velocities at the substep's start */
  double im;
} rbody;

typedef struct rcache {
  uint64_t key;
  double ni;
  vec3 ti;
} rcache;

struct rigid_work {
  rcache *cache;
  int ncache, cache_cap;
  /* the substep's (arena) */
  rcontact *contacts;
  rpoint *points;
  int ncontacts, npoints;
};

void rigid_work_free(struct rigid_work *rw) {
  if (!rw) return;
  core_free(rw->cache);
  core_free(rw);
}

static struct rigid_work *work_of(loom_world *w) {
  if (!w->rigid) w->rigid = core_calloc(1, sizeof *w->rigid);
  return w->rigid;
}

static int is_rigid(const loom_world *w, int slot) { return w->bodies[slot].ops->id == LOOM_KIND_RIGID; }

static double bound_radius(const rigid_body *r) {
  return v3_len(v3_scale(v3_sub(r->model.local_hi, r->model.local_lo), 0.5)) + v3_len(v3_scale(v3_add(r->model.local_hi, r->model.local_lo), 0.5));
}

static void wake(rigid_body *r) {
  r->state.asleep = 0;
  r->state.sleep_time = 0;
}

size_t rigid_cache_entry_size(void) { return sizeof(rcache); }
int rigid_cache_count(const loom_world *w) { return w->rigid ? w->rigid->ncache : 0; }
void *rigid_cache_data(loom_world *w, int count) {
  if (count < 0) return w->rigid ? w->rigid->cache : NULL;
  struct rigid_work *rw = work_of(w);
  if (!rw) return NULL;
  if (count > rw->cache_cap) {
    rcache *grown = core_realloc(rw->cache, (size_t)count, sizeof(rcache));
    if (!grown) return NULL;
    rw->cache = grown;
    rw->cache_cap = count;
  }
  rw->ncache = count;
  return rw->cache;
}

static uint64_t cache_key(int slot_a, int slot_b, uint32_t id) {
  return (uint64_t)(uint16_t)slot_a << 48 | (uint64_t)(uint16_t)slot_b << 32 | id;
}

static const rcache *cache_find(const struct rigid_work *rw, uint64_t key) {
  int lo = 0, hi = rw->ncache - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (rw->cache[mid].key == key) return &rw->cache[mid];
    if (rw->cache[mid].key < key) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

static void clear_fresh(loom_world *w) {
  for (int o = 0; o < w->order_count; o++)
    if (is_rigid(w, w->order[o])) rigid_of_slot(&w->bodies[w->order[o]])->fresh = 0;
}

/* Speculative points the pair cannot reach within the substep are left out (a row of boxes 2 mm
 * apart has nothing to solve between its neighbours): a point stays if its gap is within what the
 * relative speed there, the relative pull of gravity and the applied forces can close in h, plus
 * 1 mm. The speed, not its normal part: a body deflected by a third one within the substep turns
 * towards the pair (with the normal part, at dt = 1/60 spheres raining into a bin went into each
 * other unseen and were pushed out hard enough to throw 80 of 500 out of the bin). The count left. */
/* How far apart two bodies rest: their skins (`thickness`), and the cloth pressed between a body
 * and an immovable one (contact/contact_cloth.c). */
static double pair_skin(const rigid_body *A, const rigid_body *B) {
  double s = A->params.thickness + B->params.thickness;
  if (A->cloth_under && !rigid_is_dynamic(B)) s += A->cloth_gap;
  if (B->cloth_under && !rigid_is_dynamic(A)) s += B->cloth_gap;
  return s;
}

static int prune_unreachable(const loom_world *w, const rigid_body *A, const rigid_body *B, rigid_manifold *m, double h) {
  const int moves_a = rigid_is_dynamic(A) && !A->state.asleep, moves_b = rigid_is_dynamic(B) && !B->state.asleep;
  const double ga = moves_a ? A->params.gravity_scale : 0, gb = moves_b ? B->params.gravity_scale : 0;
  double acc = fabs(v3_dot(v3_scale(w->gravity, ga - gb), m->n));
  if (moves_a) acc += v3_len(A->state.force) * A->model.inv_mass + v3_len(A->state.torque) * 1e3;
  if (moves_b) acc += v3_len(B->state.force) * B->model.inv_mass + v3_len(B->state.torque) * 1e3;
  int kept = 0;
  for (int j = 0; j < m->count; j++) {
    const vec3 p = m->pt[j].p;
    const vec3 va = v3_add(A->state.vel, v3_cross(A->state.omega, v3_sub(p, A->state.pos)));
    const vec3 vb = v3_add(B->state.vel, v3_cross(B->state.omega, v3_sub(p, B->state.pos)));
    const double reach = v3_len(v3_sub(va, vb)) * h + acc * h * h + 1e-3;
    if (m->pt[j].sep - pair_skin(A, B) <= reach) m->pt[kept++] = m->pt[j];
  }
  m->count = kept;
  return kept;
}

/* How many manifolds a pair can have: several against a triangle mesh, else one. */
static int manifold_cap(const loom_world *w, int sa, int sb) {
  const int ta = rigid_of_slot(&w->bodies[sa])->model.shape_type, tb = rigid_of_slot(&w->bodies[sb])->model.shape_type;
  return ta == LOOM_SHAPE_MESH || tb == LOOM_SHAPE_MESH ? RIGID_PAIR_MANIFOLDS : 1;
}

static void detect_pairs(loom_world *w, const step_info *s) {
  struct rigid_work *rw = work_of(w);
  if (!rw) return;
  rw->ncontacts = rw->npoints = 0;
  rw->contacts = NULL;
  rw->points = NULL;
  int nrigid_pairs = 0, nmanifolds = 0;
  for (int i = 0; i < w->npairs; i++)
    if (is_rigid(w, w->pairs[i].a) && is_rigid(w, w->pairs[i].b)) {
      nrigid_pairs++;
      nmanifolds += manifold_cap(w, w->pairs[i].a, w->pairs[i].b);
    }
  if (!nrigid_pairs) return;
  rw->contacts = ARENA_NEW(&w->scratch, rcontact, nmanifolds, "rigid manifolds");
  rw->points = ARENA_NEW(&w->scratch, rpoint, (size_t)nmanifolds * RIGID_MANIFOLD_MAX, "rigid contact points");
  uint8_t *done = ARENA_NEW(&w->scratch, uint8_t, nrigid_pairs, "rigid pairs done");
  if (!rw->contacts || !rw->points || !done) {
    world_message(w, LOOM_ERROR, -1, "rigid contacts: out of memory in step; contacts skipped");
    rw->contacts = NULL;
    return;
  }
  memset(done, 0, (size_t)nrigid_pairs);
  /* a pass over the pairs; when a sleeping body is woken, its pairs are looked at again */
  for (int woke = 1; woke;) {
    woke = 0;
    int k = 0;
    for (int i = 0; i < w->npairs; i++) {
      const int sa = w->pairs[i].a, sb = w->pairs[i].b;
      if (!is_rigid(w, sa) || !is_rigid(w, sb)) continue;
      const int pk = k++;
      if (done[pk]) continue;
      rigid_body *A = rigid_of_slot(&w->bodies[sa]), *B = rigid_of_slot(&w->bodies[sb]);
      if (!(A->params.layers & B->params.mask) || !(B->params.layers & A->params.mask)) continue;
      const int awake_a = rigid_is_dynamic(A) && !A->state.asleep, awake_b = rigid_is_dynamic(B) && !B->state.asleep;
      if (!awake_a && !awake_b) continue;
      done[pk] = 1;
      const double closing = v3_len(v3_sub(A->state.vel, B->state.vel)) + v3_len(A->state.omega) * bound_radius(A) +
                             v3_len(B->state.omega) * bound_radius(B);
      const double margin = RIGID_SPECULATIVE + s->h * closing;
      rigid_manifold ms[RIGID_PAIR_MANIFOLDS];
      const int nm = rigid_collide_all(A, A->state.pos, A->state.q, B, B->state.pos, B->state.q, margin, ms,
                                       manifold_cap(w, sa, sb));
      if (nm && (A->fresh || B->fresh)) { /* made inside each other: said once, then pushed apart */
        double deepest = 0;
        for (int u = 0; u < nm; u++)
          for (int j = 0; j < ms[u].count; j++) deepest = d_min(deepest, ms[u].pt[j].sep - pair_skin(A, B));
        const int newer = B->fresh ? sb : sa, older = newer == sb ? sa : sb; /* (b is the later slot) */
        if (deepest < -1e-3)
          world_message(w, LOOM_WARNING, newer,
                        "rigid '%s' starts %.1f mm inside '%s'; the solver pushes them apart (at most %g m/s)",
                        w->bodies[newer].name, -1000 * deepest, w->bodies[older].name, RIGID_MAX_PUSH);
      }
      for (int u = 0; u < nm; u++) {
        rigid_manifold *m = &ms[u];
        if (!prune_unreachable(w, A, B, m, s->h)) continue;
        if (rigid_is_dynamic(A) && A->state.asleep) wake(A), woke = 1;
        if (rigid_is_dynamic(B) && B->state.asleep) wake(B), woke = 1;
        rcontact *c = &rw->contacts[rw->ncontacts++];
        c->slot_a = sa;
        c->slot_b = sb;
        c->n = m->n;
        c->first = rw->npoints;
        c->count = m->count;
        for (int j = 0; j < m->count; j++) {
          rpoint *p = &rw->points[rw->npoints++];
          memset(p, 0, sizeof *p);
          p->c = m->pt[j].p;
          p->s0 = m->pt[j].sep - pair_skin(A, B);
          p->id = m->pt[j].id;
        }
      }
    }
  }
}

void contact_rigid_detect(loom_world *w, const step_info *s) {
  detect_pairs(w, s);
  clear_fresh(w);
}

/* ---- respond ------------------------------------------------------------------------------------ */

static vec3 rel_velocity(const rbody *A, const rbody *B, vec3 ra, vec3 rb) {
  return v3_sub(v3_add(A->v, v3_cross(A->w, ra)), v3_add(B->v, v3_cross(B->w, rb)));
}

static jrow make_row(const rbody *A, const rbody *B, vec3 ra, vec3 rb, vec3 d) {
  jrow r;
  r.ca = v3_cross(ra, d);
  r.cb = v3_cross(rb, d);
  r.wa = m3_mulv(&A->iI, r.ca);
  r.wb = m3_mulv(&B->iI, r.cb);
  double k = A->im + B->im + v3_dot(r.ca, r.wa) + v3_dot(r.cb, r.wb);
  r.mass = k > 0 ? 1.0 / k : 0;
  return r;
}

/* The velocities a constraint row reads and changes, copied out of the two (distinct) bodies: the
 * scalar rows of the restitution pass (the passes of the inner steps work on lanes, below). */
typedef struct rvel {
  vec3 v, w;
  double im;
} rvel;

static inline rvel vel_of(const rbody *b) { return (rvel){b->v, b->w, b->im}; }

/* Velocity of A relative to B along d at the row's point. */
static inline double row_velocity(const jrow *r, const rvel *A, const rvel *B, vec3 d) {
  return v3_dot(d, v3_sub(A->v, B->v)) + v3_dot(r->ca, A->w) - v3_dot(r->cb, B->w);
}

/* An impulse lambda along d at the row's point: +A, -B. */
static inline void row_apply(const jrow *r, rvel *A, rvel *B, vec3 d, double lambda) {
  A->v = v3_madd(A->v, d, lambda * A->im);
  A->w = v3_madd(A->w, r->wa, lambda);
  B->v = v3_madd(B->v, d, -lambda * B->im);
  B->w = v3_madd(B->w, r->wb, -lambda);
}

typedef struct soft {
  double bias_rate, mass_scale, impulse_scale;
} soft;

static soft make_soft(double hertz, double zeta, double h) {
  const double omega = 2 * LOOM_PI * hertz;
  const double a1 = 2 * zeta + h * omega, a2 = h * omega * a1, a3 = 1 / (1 + a2);
  return (soft){omega / a1, a2 * a3, a3};
}

static void apply_angular(rbody *A, rbody *B, vec3 L) {
  A->w = v3_add(A->w, m3_mulv(&A->iI, L));
  B->w = v3_sub(B->w, m3_mulv(&B->iI, L));
}

/* total: the manifold's normal impulse (the sum of its points', in order) */
static void solve_spin(rcontact *c, double total, rbody *A, rbody *B) {
  const vec3 dw = v3_sub(A->w, B->w);
  const double about = v3_dot(c->n, dw);
  if (c->roll > 0) {
    vec3 across = v3_madd(dw, c->n, -about);
    vec3 L = v3_sub(c->lroll, m3_mulv(&c->kroll, across));
    L = v3_madd(L, c->n, -v3_dot(L, c->n));
    double lim = c->roll * total, mag = v3_len(L);
    if (mag > lim) L = v3_scale(L, lim / mag);
    apply_angular(A, B, v3_sub(L, c->lroll));
    c->lroll = L;
  }
  if (c->twist > 0) {
    double l = c->ltwist - c->ktwist * about, lim = c->twist * total;
    l = l > lim ? lim : (l < -lim ? -lim : l);
    apply_angular(A, B, v3_scale(c->n, l - c->ltwist));
    c->ltwist = l;
  }
}

/* The order of a pass. Sequential impulses are Gauss-Seidel: each manifold's rows read the
 * velocities the rows before them left, so a pass is one long chain of dependent arithmetic and
 * the processor waits on it. Two manifolds that share no moving body commute, though: solving
 * them in either order, or side by side, gives the same numbers. So the manifolds are grouped into
 * waves: a manifold goes one wave after the last earlier manifold that shares a moving body with
 * it. Within a wave nothing is shared, and RIGID_LANES manifolds at a time are solved as the lanes
 * of vectors (their bodies' velocities gathered, the rows of their j-th points side by side, the
 * velocities scattered back). A lane without a j-th point has zero rows, and a point without
 * load has a zero friction limit: their impulses are zero. The result is the sequential order's
 * (the same operations on each lane; the build does not contract floating point), up to the sign
 * of a velocity that is exactly zero when a zero impulse is added to it. */
#define RIGID_LANES 4
/* The passes come in two builds, picked when the library loads (LOOM_CLONES, math_lanes.h). */
typedef double vd __attribute__((vector_size(8 * RIGID_LANES)));
typedef long long vm __attribute__((vector_size(8 * RIGID_LANES)));

static LOOM_INLINE vd vsel(vm m, vd a, vd b) { return (vd)(((vm)a & m) | ((vm)b & ~m)); }
static LOOM_INLINE vd vmax(vd a, vd b) { return vsel(a > b, a, b); } /* d_max lane by lane */
static inline vd vsplat(double x) {
  vd r;
  for (int l = 0; l < RIGID_LANES; l++) r[l] = x;
  return r;
}

typedef struct wvec {
  vd x, y, z;
} wvec;

typedef struct wrow {
  wvec ca, cb, wa, wb;
  vd mass;
} wrow;

/* The j-th points of a group's manifolds. */
typedef struct wpoint {
  wrow rn, rt[2];
  vd ni, ti[2], max_ni, sep;
  wvec total;
  wvec la, lb; /* the point's anchors in A's and B's frames */
  vd s0;       /* the separation found */
  int point[RIGID_LANES]; /* index into the points, -1 for none */
} wpoint;

/* RIGID_LANES manifolds of one wave (fewer at a wave's end: the rest are padding, on the zero body). */
typedef struct wgroup {
  int a[RIGID_LANES], b[RIGID_LANES], contact[RIGID_LANES];
  int first, count; /* its wpoints: first .. first + count, count the lanes' most points */
  int spin;         /* some lane has rolling or torsional resistance */
  wvec n, t1, t2;
  vd mu, rounded;
} wgroup;

typedef struct wbody {
  wvec v, w;
  vd im;
} wbody;

typedef struct wide {
  wgroup *groups;
  wpoint *points;
  int ngroups;
} wide;

static LOOM_INLINE vd wdot(wvec a, wvec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static LOOM_INLINE wvec wmadd(wvec a, wvec b, vd s) { return (wvec){a.x + s * b.x, a.y + s * b.y, a.z + s * b.z}; }
static inline void wset(wvec *w, int l, vec3 v) { w->x[l] = v.x, w->y[l] = v.y, w->z[l] = v.z; }
static inline vec3 wget(const wvec *w, int l) { return v3(w->x[l], w->y[l], w->z[l]); }

static void wrow_set(wrow *w, int l, const jrow *r) {
  wset(&w->ca, l, r->ca);
  wset(&w->cb, l, r->cb);
  wset(&w->wa, l, r->wa);
  wset(&w->wb, l, r->wb);
  w->mass[l] = r->mass;
}

static LOOM_INLINE void gather(const rbody *bodies, const int *idx, wbody *o) {
  for (int l = 0; l < RIGID_LANES; l++) {
    const rbody *b = &bodies[idx[l]];
    wset(&o->v, l, b->v);
    wset(&o->w, l, b->w);
    o->im[l] = b->im;
  }
}

static LOOM_INLINE void scatter(rbody *bodies, const int *idx, const wbody *o) {
  for (int l = 0; l < RIGID_LANES; l++) {
    rbody *b = &bodies[idx[l]];
    if (!b->dynamic) continue;
    b->v = wget(&o->v, l);
    b->w = wget(&o->w, l);
  }
}

/* As row_velocity and row_apply, lane by lane. */
static LOOM_INLINE vd wrow_velocity(const wrow *r, const wbody *A, const wbody *B, wvec d) {
  const wvec dv = {A->v.x - B->v.x, A->v.y - B->v.y, A->v.z - B->v.z};
  return wdot(d, dv) + wdot(r->ca, A->w) - wdot(r->cb, B->w);
}

static LOOM_INLINE void wrow_apply(const wrow *r, wbody *A, wbody *B, wvec d, vd lambda) {
  A->v = wmadd(A->v, d, lambda * A->im);
  A->w = wmadd(A->w, r->wa, lambda);
  B->v = wmadd(B->v, d, -lambda * B->im);
  B->w = wmadd(B->w, r->wb, -lambda);
}

/* A normal row with a soft constraint: a gap (sep > 0) may close, no more; an overlap is pushed
 * out by the spring (bias) when use_bias, else only the approach is stopped (relax). A lane
 * without a j-th point has zero rows and no impulse: its lambda is zero and changes nothing. */
static LOOM_INLINE void wsolve_normal(const wgroup *g, wpoint *p, wbody *A, wbody *B, vd hs, soft sf, int use_bias) {
  const vm gap = p->sep > 0;
  const vd zero = vsplat(0), one = vsplat(1);
  vd bias = vsel(gap, p->sep / hs, zero), mscale = one, iscale = zero;
  if (use_bias) {
    bias = vsel(gap, bias, vmax(vsplat(sf.bias_rate) * p->sep, vsplat(-RIGID_MAX_PUSH)));
    mscale = vsel(gap, one, vsplat(sf.mass_scale));
    iscale = vsel(gap, zero, vsplat(sf.impulse_scale));
  }
  const vd vn = wrow_velocity(&p->rn, A, B, g->n);
  vd lambda = -p->rn.mass * mscale * (vn + bias) - iscale * p->ni;
  const vd nv = vmax(p->ni + lambda, zero);
  lambda = nv - p->ni;
  p->ni = nv;
  p->max_ni = vmax(p->max_ni, nv);
  wrow_apply(&p->rn, A, B, g->n, lambda);
  p->total = wmadd(p->total, g->n, lambda);
}

/* Coulomb friction in the tangent plane: at most mu times the point's normal impulse (a disc). A
 * point with no load and no friction impulse (a gap) gets none: its limit is zero. */
static LOOM_INLINE void wsolve_friction(const wgroup *g, wpoint *p, wbody *A, wbody *B) {
  vd l1 = p->ti[0] - p->rt[0].mass * wrow_velocity(&p->rt[0], A, B, g->t1);
  vd l2 = p->ti[1] - p->rt[1].mass * wrow_velocity(&p->rt[1], A, B, g->t2);
  const vd lim = g->mu * p->ni, mag2 = l1 * l1 + l2 * l2;
  const vm slide = mag2 > lim * lim;
  for (int l = 0; l < RIGID_LANES; l++)
    if (slide[l]) { /* (no square root while the points stick) */
      double k = lim[l] / sqrt(mag2[l]);
      l1[l] *= k;
      l2[l] *= k;
    }
  const vd d1 = l1 - p->ti[0], d2 = l2 - p->ti[1];
  p->ti[0] = l1;
  p->ti[1] = l2;
  wrow_apply(&p->rt[0], A, B, g->t1, d1);
  wrow_apply(&p->rt[1], A, B, g->t2, d2);
  p->total = wmadd(wmadd(p->total, g->t1, d1), g->t2, d2);
}

/* The groups: the manifolds wave by wave (a manifold one wave after the last earlier one sharing
 * a moving body with it), RIGID_LANES at a time; their rows and warm-start impulses laid out as
 * lanes. bodies[zero] is a body at rest that never moves (the padding's). */
static int make_wide(loom_world *w, const struct rigid_work *rw, const rbody *bodies, int nb, int zero, wide *out) {
  const int nc = rw->ncontacts;
  int *last = ARENA_NEW(&w->scratch, int, (size_t)nb + 1, "rigid waves");
  int *wave = ARENA_NEW(&w->scratch, int, (size_t)nc + 1, "rigid waves");
  int *order = ARENA_NEW(&w->scratch, int, (size_t)nc + 1, "rigid waves");
  int *first = ARENA_NEW(&w->scratch, int, (size_t)nc + 2, "rigid waves");
  if (!last || !wave || !order || !first) return 0;
  for (int i = 0; i < nb; i++) last[i] = -1;
  int nw = 0;
  for (int ci = 0; ci < nc; ci++) {
    const rcontact *c = &rw->contacts[ci];
    int k = 0;
    if (bodies[c->a].dynamic) k = last[c->a] + 1;
    if (bodies[c->b].dynamic && last[c->b] + 1 > k) k = last[c->b] + 1;
    wave[ci] = k;
    if (bodies[c->a].dynamic) last[c->a] = k;
    if (bodies[c->b].dynamic) last[c->b] = k;
    if (k + 1 > nw) nw = k + 1;
  }
  for (int k = 0; k <= nw; k++) first[k] = 0;
  for (int ci = 0; ci < nc; ci++) first[wave[ci] + 1]++;
  for (int k = 0; k < nw; k++) first[k + 1] += first[k];
  int ngroups = 0, nwp = 0;
  for (int k = 0; k < nw; k++) ngroups += (first[k + 1] - first[k] + RIGID_LANES - 1) / RIGID_LANES;
  for (int ci = 0; ci < nc; ci++) order[first[wave[ci]]++] = ci; /* first[k] ends as first[k + 1] */
  for (int k = nw; k > 0; k--) first[k] = first[k - 1];
  first[0] = 0;
  out->groups = ARENA_NEW(&w->scratch, wgroup, (size_t)ngroups + 1, "rigid lanes");
  if (!out->groups) return 0;
  int gi = 0;
  for (int k = 0; k < nw; k++)
    for (int i0 = first[k]; i0 < first[k + 1]; i0 += RIGID_LANES) {
      wgroup *g = &out->groups[gi++];
      memset(g, 0, sizeof *g);
      g->first = nwp;
      for (int l = 0; l < RIGID_LANES; l++) {
        const rcontact *c = i0 + l < first[k + 1] ? &rw->contacts[order[i0 + l]] : NULL;
        g->contact[l] = c ? order[i0 + l] : -1;
        g->a[l] = c ? c->a : zero;
        g->b[l] = c ? c->b : zero;
        if (!c) continue;
        if (c->count > g->count) g->count = c->count;
        if (c->roll > 0 || c->twist > 0) g->spin = 1;
        wset(&g->n, l, c->n);
        wset(&g->t1, l, c->t1);
        wset(&g->t2, l, c->t2);
        g->mu[l] = c->mu;
        g->rounded[l] = c->rounded;
      }
      nwp += g->count;
    }
  out->ngroups = ngroups;
  out->points = ARENA_NEW(&w->scratch, wpoint, (size_t)nwp + 1, "rigid lanes");
  if (!out->points) return 0;
  memset(out->points, 0, sizeof(wpoint) * (size_t)nwp);
  for (int g = 0; g < ngroups; g++) {
    const wgroup *G = &out->groups[g];
    for (int j = 0; j < G->count; j++) {
      wpoint *p = &out->points[G->first + j];
      for (int l = 0; l < RIGID_LANES; l++) {
        const rcontact *c = G->contact[l] >= 0 ? &rw->contacts[G->contact[l]] : NULL;
        if (!c || j >= c->count) {
          p->point[l] = -1;
          continue;
        }
        const rpoint *q = &rw->points[c->first + j];
        p->point[l] = c->first + j;
        wrow_set(&p->rn, l, &q->rn);
        wrow_set(&p->rt[0], l, &q->rt[0]);
        wrow_set(&p->rt[1], l, &q->rt[1]);
        p->ni[l] = q->ni;
        p->ti[0][l] = q->ti[0];
        p->ti[1][l] = q->ti[1];
        p->max_ni[l] = q->max_ni;
        p->sep[l] = q->s0;
        wset(&p->total, l, q->total);
        wset(&p->la, l, q->la);
        wset(&p->lb, l, q->lb);
        p->s0[l] = q->s0;
      }
    }
  }
  return 1;
}

/* The rolling and torsional resistance of a group's lanes that have it (after their points). */
static void wide_spin(struct rigid_work *rw, const wgroup *g, const wpoint *pts, rbody *bodies) {
  for (int l = 0; l < RIGID_LANES; l++) {
    if (g->contact[l] < 0) continue;
    rcontact *c = &rw->contacts[g->contact[l]];
    if (!(c->roll > 0 || c->twist > 0)) continue;
    double total = 0;
    for (int j = 0; j < c->count; j++) total += pts[j].ni[l];
    solve_spin(c, total, &bodies[c->a], &bodies[c->b]);
  }
}

/* One pass: each manifold's normal points, then its friction (and rolling and torsional
 * resistance), in order. */
LOOM_CLONES static void solve(struct rigid_work *rw, const wide *wd, rbody *bodies, double hs, soft sf, int use_bias) {
  const vd vhs = vsplat(hs);
  for (int gi = 0; gi < wd->ngroups; gi++) {
    const wgroup *g = &wd->groups[gi];
    wpoint *pts = &wd->points[g->first];
    wbody A, B;
    gather(bodies, g->a, &A);
    gather(bodies, g->b, &B);
    for (int j = 0; j < g->count; j++) wsolve_normal(g, &pts[j], &A, &B, vhs, sf, use_bias);
    for (int j = 0; j < g->count; j++) wsolve_friction(g, &pts[j], &A, &B);
    scatter(bodies, g->a, &A);
    scatter(bodies, g->b, &B);
    if (g->spin) wide_spin(rw, g, pts, bodies);
  }
}

/* The warm start: the impulses remembered from the last substep, applied again. */
LOOM_CLONES static void warm_start(struct rigid_work *rw, const wide *wd, rbody *bodies) {
  for (int gi = 0; gi < wd->ngroups; gi++) {
    const wgroup *g = &wd->groups[gi];
    wpoint *pts = &wd->points[g->first];
    wbody A, B;
    gather(bodies, g->a, &A);
    gather(bodies, g->b, &B);
    for (int j = 0; j < g->count; j++) {
      wpoint *p = &pts[j];
      wrow_apply(&p->rn, &A, &B, g->n, p->ni);
      wrow_apply(&p->rt[0], &A, &B, g->t1, p->ti[0]);
      wrow_apply(&p->rt[1], &A, &B, g->t2, p->ti[1]);
      const wvec add = {g->n.x * p->ni + (g->t1.x * p->ti[0] + g->t2.x * p->ti[1]),
                        g->n.y * p->ni + (g->t1.y * p->ti[0] + g->t2.y * p->ti[1]),
                        g->n.z * p->ni + (g->t1.z * p->ti[0] + g->t2.z * p->ti[1])};
      p->total = (wvec){p->total.x + add.x, p->total.y + add.y, p->total.z + add.z};
    }
    scatter(bodies, g->a, &A);
    scatter(bodies, g->b, &B);
    if (!g->spin) continue;
    for (int l = 0; l < RIGID_LANES; l++) {
      if (g->contact[l] < 0) continue;
      const rcontact *c = &rw->contacts[g->contact[l]];
      if (c->roll > 0 || c->twist > 0) apply_angular(&bodies[c->a], &bodies[c->b], v3_madd(c->lroll, c->n, c->ltwist));
    }
  }
}

/* The lanes' impulses back into the points (for restitution, the cache and the contact buffer). */
static void wide_store(struct rigid_work *rw, const wide *wd) {
  for (int gi = 0; gi < wd->ngroups; gi++) {
    const wgroup *g = &wd->groups[gi];
    for (int j = 0; j < g->count; j++) {
      const wpoint *p = &wd->points[g->first + j];
      for (int l = 0; l < RIGID_LANES; l++) {
        if (p->point[l] < 0) continue;
        rpoint *q = &rw->points[p->point[l]];
        q->ni = p->ni[l];
        q->ti[0] = p->ti[0][l];
        q->ti[1] = p->ti[1][l];
        q->max_ni = p->max_ni[l];
        q->total = wget(&p->total, l);
      }
    }
  }
}

/* Separations at the current poses (after each pose update), into the lanes. */
typedef struct wpose {
  wvec p, r[3]; /* position and the rows of the rotation matrix */
} wpose;

static LOOM_INLINE void gather_pose(const rbody *bodies, const int *idx, wpose *o) {
  for (int l = 0; l < RIGID_LANES; l++) {
    const rbody *b = &bodies[idx[l]];
    wset(&o->p, l, b->p);
    for (int i = 0; i < 3; i++) wset(&o->r[i], l, v3(b->R.m[i][0], b->R.m[i][1], b->R.m[i][2]));
  }
}

/* p + R x, as v3_add(p, m3_mulv(R, x)) */
static LOOM_INLINE wvec wpose_apply(const wpose *t, wvec x) {
  return (wvec){t->p.x + wdot(t->r[0], x), t->p.y + wdot(t->r[1], x), t->p.z + wdot(t->r[2], x)};
}

LOOM_CLONES static void update_separations(const wide *wd, const rbody *bodies) {
  for (int gi = 0; gi < wd->ngroups; gi++) {
    const wgroup *g = &wd->groups[gi];
    wpose A, B;
    gather_pose(bodies, g->a, &A);
    gather_pose(bodies, g->b, &B);
    for (int j = 0; j < g->count; j++) {
      wpoint *p = &wd->points[g->first + j];
      const wvec xa = wpose_apply(&A, p->la), xb = wpose_apply(&B, p->lb);
      const wvec d = {xa.x - xb.x, xa.y - xb.y, xa.z - xb.z};
      p->sep = p->s0 + wdot(g->n, d) - g->rounded;
    }
  }
}

static int cmp_cache(const void *pa, const void *pb) {
  const rcache *a = pa, *b = pb;
  return (a->key > b->key) - (a->key < b->key);
}

static void qsort_cache(struct rigid_work *rw) {
  if (rw->ncache > 1) qsort(rw->cache, (size_t)rw->ncache, sizeof(rcache), cmp_cache);
}

/* The new slot of an entry's old slot, or -1 (a slot the old world does not have: a state read
 * from a file holds whatever keys the file held). */
static int mapped_slot(const loom_world *src, const int32_t *slot_map, uint64_t key, int shift) {
  const int s = (int)(key >> shift & 0xffff);
  return s < src->body_slots ? slot_map[s] : -1;
}

int rigid_cache_transplant(loom_world *dst, const loom_world *src, const int32_t *slot_map) {
  const struct rigid_work *from = src->rigid;
  if (!from || !from->ncache) return 0;
  int n = 0;
  for (int e = 0; e < from->ncache; e++) {
    const uint64_t key = from->cache[e].key;
    n += mapped_slot(src, slot_map, key, 48) >= 0 && mapped_slot(src, slot_map, key, 32) >= 0;
  }
  rcache *to = rigid_cache_data(dst, n);
  if (!to) return n ? -1 : 0;
  int k = 0;
  for (int e = 0; e < from->ncache; e++) {
    const uint64_t key = from->cache[e].key;
    const int a = mapped_slot(src, slot_map, key, 48), b = mapped_slot(src, slot_map, key, 32);
    if (a < 0 || b < 0) continue;
    to[k] = from->cache[e];
    to[k].key = cache_key(a, b, (uint32_t)key);
    k++;
  }
  qsort_cache(dst->rigid); /* (the new slots may come in another order than the old) */
  return n;
}

static int find_root(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

static void tangents(vec3 n, vec3 *t1, vec3 *t2) {
  *t1 = fabs(n.x) < 0.57735 ? v3_normalize(v3_cross(n, v3(1, 0, 0))) : v3_normalize(v3_cross(n, v3(0, 1, 0)));
  *t2 = v3_cross(n, *t1);
}

void contact_rigid_respond(loom_world *w, const step_info *s) {
  struct rigid_work *rw = work_of(w);
  /* the bodies: every awake dynamic one, and the static or kinematic ones its contacts touch */
  int nb = 0;
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->id == LOOM_KIND_RIGID) rigid_of_slot(b)->solver_index = -1;
  }
  int ndyn = 0;
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->id == LOOM_KIND_RIGID && rigid_is_dynamic(rigid_of_slot(b)) && !rigid_of_slot(b)->state.asleep) ndyn++;
  }
  if (!ndyn) return;
  const int nc = rw && rw->contacts ? rw->ncontacts : 0;
  arena_mark mark = arena_get_mark(&w->scratch);
  rbody *bodies = ARENA_NEW(&w->scratch, rbody, (size_t)ndyn + 2 * (size_t)nc + 1, "rigid solver bodies");
  if (!bodies) {
    world_message(w, LOOM_ERROR, -1, "rigid solver: out of memory in step; rigid bodies did not move");
    return;
  }
  const double h = s->h;
  const int inner = (int)d_min(64, d_max(1, ceil(h * RIGID_INNER_RATE - 1e-9)));
  const double hs = h / inner;
#define ADD_BODY(slot_, r_)                                                                          \
  do {                                                                                               \
    rbody *B_ = &bodies[nb];                                                                         \
    memset(B_, 0, sizeof *B_);                                                                       \
    B_->r = (r_);                                                                                    \
    B_->slot = (slot_);                                                                              \
    B_->dynamic = rigid_is_dynamic(r_) && !(r_)->state.asleep;                                       \
    (r_)->solver_index = nb++;                                                                       \
  } while (0)
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->id != LOOM_KIND_RIGID) continue;
    rigid_body *r = rigid_of_slot(b);
    if (rigid_is_dynamic(r) && !r->state.asleep) ADD_BODY(w->order[o], r);
  }
  for (int ci = 0; ci < nc; ci++) {
    rcontact *c = &rw->contacts[ci];
    rigid_body *A = rigid_of_slot(&w->bodies[c->slot_a]), *B = rigid_of_slot(&w->bodies[c->slot_b]);
    if (A->solver_index < 0) ADD_BODY(c->slot_a, A);
    if (B->solver_index < 0) ADD_BODY(c->slot_b, B);
    c->a = A->solver_index;
    c->b = B->solver_index;
  }
#undef ADD_BODY
  for (int i = 0; i < nb; i++) {
    rbody *B = &bodies[i];
    rigid_body *r = B->r;
    if (B->dynamic) {
      B->p = r->state.pos;
      B->q = r->state.q;
      B->im = r->params.linear ? r->model.inv_mass : 0;
      if (r->params.angular) B->iI = rigid_world_inv_inertia(r, B->q);
    } else {
      rigid_pose_at(r, s->a0, &B->p, &B->q);
    }
    B->v = B->v_start = r->state.vel;
    B->w = B->w_start = r->state.omega;
    if (!B->dynamic && rigid_is_dynamic(r)) B->v = B->w = v3(0, 0, 0); /* asleep */
    B->R = q_to_mat3(B->q);
  }
  /* prepare the points */
  for (int ci = 0; ci < nc; ci++) {
    rcontact *c = &rw->contacts[ci];
    rbody *A = &bodies[c->a], *B = &bodies[c->b];
    c->mu = sqrt(A->r->params.friction * B->r->params.friction);
    c->e = d_max(A->r->params.restitution, B->r->params.restitution);
    /* a body resting on cloth over an immovable one rubs on the cloth, not on it: that friction
     * is the cloth solve's (contact/contact_cloth.c) */
    if ((A->r->cloth_under && !B->dynamic && !rigid_is_dynamic(B->r)) ||
        (B->r->cloth_under && !A->dynamic && !rigid_is_dynamic(A->r)))
      c->mu = 0;
    const pair_override *o = world_pair_override(w, c->slot_a, c->slot_b);
    if (o && o->friction >= 0) c->mu = o->friction;
    if (o && o->restitution >= 0) c->e = o->restitution;
    tangents(c->n, &c->t1, &c->t2);
    c->roll = d_max(A->r->params.rolling, B->r->params.rolling);
    c->twist = d_max(A->r->params.torsion, B->r->params.torsion);
    c->lroll = v3(0, 0, 0);
    c->ltwist = 0;
    if (c->roll > 0 || c->twist > 0) {
      mat3 K;
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) K.m[i][j] = A->iI.m[i][j] + B->iI.m[i][j];
      if (!m3_inverse(&K, &c->kroll)) c->roll = 0;
      double kt = v3_dot(c->n, m3_mulv(&K, c->n));
      c->ktwist = kt > 0 ? 1 / kt : 0;
    }
    c->rounded = A->r->model.rounded + B->r->model.rounded; /* the anchors' distance along n at the start */
    for (int j = 0; j < c->count; j++) {
      rpoint *p = &rw->points[c->first + j];
      p->ra = v3_sub(p->c, A->p);
      p->rb = v3_sub(p->c, B->p);
      /* the separation follows the point's anchors; on a sphere or capsule the anchor is on the
       * axis (a rolling ball's surface point would rise, second order, as it turns: 5 mm over a
       * 1/60 s step at 2 m/s, which let the ball sink that much and bounce) */
      p->la = m3_tmulv(&A->R, v3_madd(p->ra, c->n, A->r->model.rounded));
      p->lb = m3_tmulv(&B->R, v3_madd(p->rb, c->n, -B->r->model.rounded));
      p->rn = make_row(A, B, p->ra, p->rb, c->n);
      p->rt[0] = make_row(A, B, p->ra, p->rb, c->t1);
      p->rt[1] = make_row(A, B, p->ra, p->rb, c->t2);
      p->vn0 = v3_dot(rel_velocity(A, B, p->ra, p->rb), c->n);
      const rcache *k = rw->cache ? cache_find(rw, cache_key(c->slot_a, c->slot_b, p->id)) : NULL;
      if (k) {
        p->ni = k->ni;
        p->ti[0] = v3_dot(k->ti, c->t1);
        p->ti[1] = v3_dot(k->ti, c->t2);
      }
    }
  }
  const soft sf = make_soft(0.25 / hs, RIGID_ZETA, hs);
  /* the lanes (bodies[nb]: the padding's body, at rest, never moved) */
  memset(&bodies[nb], 0, sizeof bodies[nb]);
  wide wd;
  if (!make_wide(w, rw, bodies, nb, nb, &wd)) {
    world_message(w, LOOM_ERROR, -1, "rigid solver: out of memory in step; rigid bodies did not move");
    arena_release(&w->scratch, mark);
    return;
  }
  const double a_span = s->a1 - s->a0;
  for (int it = 0; it < inner; it++) {
    for (int i = 0; i < nb; i++) {
      rbody *B = &bodies[i];
      if (!B->dynamic) continue;
      rigid_body *r = B->r;
      r->state.vel = B->v;
      r->state.omega = B->w;
      r->state.q = B->q;
      r->state.pos = B->p;
      rigid_integrate_velocity(w, r, hs);
      B->v = r->state.vel;
      B->w = r->state.omega;
    }
    warm_start(rw, &wd, bodies);
    for (int k = 0; k < RIGID_ITERATIONS; k++) solve(rw, &wd, bodies, hs, sf, 1);
    for (int i = 0; i < nb; i++) {
      rbody *B = &bodies[i];
      if (B->dynamic) {
        B->r->state.pos = B->p;
        B->r->state.q = B->q;
        B->r->state.vel = B->v;
        B->r->state.omega = B->w;
        rigid_integrate_pose(B->r, hs);
        B->p = B->r->state.pos;
        B->q = B->r->state.q;
      } else if (!rigid_is_dynamic(B->r)) {
        rigid_pose_at(B->r, s->a0 + a_span * (it + 1) / inner, &B->p, &B->q);
      }
      B->R = q_to_mat3(B->q);
    }
    update_separations(&wd, bodies);
    solve(rw, &wd, bodies, hs, sf, 0);
  }
  wide_store(rw, &wd);
  /* restitution */
  for (int ci = 0; ci < nc; ci++) {
    rcontact *c = &rw->contacts[ci];
    if (c->e == 0) continue;
    rbody *A = &bodies[c->a], *B = &bodies[c->b];
    for (int j = 0; j < c->count; j++) {
      rpoint *p = &rw->points[c->first + j];
      if (p->vn0 > -RIGID_BOUNCE_MIN || p->max_ni == 0) continue;
      rvel a = vel_of(A), b = vel_of(B);
      double vn = row_velocity(&p->rn, &a, &b, c->n);
      double lambda = -p->rn.mass * (vn + c->e * p->vn0);
      double nv = d_max(p->ni + lambda, 0);
      lambda = nv - p->ni;
      p->ni = nv;
      row_apply(&p->rn, &a, &b, c->n, lambda);
      A->v = a.v, A->w = a.w, B->v = b.v, B->w = b.w;
      p->total = v3_madd(p->total, c->n, lambda);
    }
  }
  /* write back; a free body with another integrator flies with it (no contacts this substep) */
  uint8_t *touched = ARENA_NEW(&w->scratch, uint8_t, nb, "rigid touched");
  if (touched) {
    memset(touched, 0, (size_t)nb);
    for (int ci = 0; ci < nc; ci++) touched[rw->contacts[ci].a] = touched[rw->contacts[ci].b] = 1;
  }
  for (int i = 0; i < nb; i++) {
    rbody *B = &bodies[i];
    rigid_body *r = B->r;
    if (!B->dynamic) continue;
    if (r->params.integrator != RIGID_SYMPLECTIC && touched && !touched[i]) {
      r->state.pos = r->state.pos0;
      r->state.q = r->state.q0;
      r->state.vel = B->v_start;
      r->state.omega = B->w_start;
      rigid_free_motion(w, r, h);
    } else {
      r->state.pos = B->p;
      r->state.q = B->q;
      r->state.vel = B->v;
      r->state.omega = B->w;
    }
    r->state.target_pos = r->state.pos;
    r->state.target_q = r->state.q;
    if (r->params.can_sleep && v3_len(r->state.vel) < RIGID_SLEEP_LINEAR && v3_len(r->state.omega) < RIGID_SLEEP_ANGULAR)
      r->state.sleep_time += h;
    else
      r->state.sleep_time = 0;
  }
  /* islands: a resting island sleeps as a whole */
  int *parent = ARENA_NEW(&w->scratch, int, nb, "rigid islands");
  double *island_min = ARENA_NEW(&w->scratch, double, nb, "rigid island sleep");
  if (parent && island_min) {
    for (int i = 0; i < nb; i++) parent[i] = i, island_min[i] = INFINITY;
    for (int ci = 0; ci < nc; ci++) {
      const rcontact *c = &rw->contacts[ci];
      if (!bodies[c->a].dynamic || !bodies[c->b].dynamic) continue;
      int ra = find_root(parent, c->a), rb = find_root(parent, c->b);
      if (ra != rb) parent[ra < rb ? rb : ra] = ra < rb ? ra : rb;
    }
    for (int i = 0; i < nb; i++) {
      if (!bodies[i].dynamic) continue;
      int root = find_root(parent, i);
      double t = bodies[i].r->params.can_sleep ? bodies[i].r->state.sleep_time : 0;
      island_min[root] = d_min(island_min[root], t);
    }
    for (int i = 0; i < nb; i++) {
      if (!bodies[i].dynamic) continue;
      rigid_body *r = bodies[i].r;
      if (island_min[find_root(parent, i)] >= RIGID_SLEEP_TIME) {
        r->state.asleep = 1;
        r->state.vel = r->state.omega = v3(0, 0, 0);
      }
    }
  }
  /* the contact buffer and the warm-start cache */
  int npts = 0;
  for (int ci = 0; ci < nc; ci++) npts += rw->contacts[ci].count;
  if (npts > rw->cache_cap) {
    rcache *nc2 = core_realloc(rw->cache, (size_t)npts, sizeof(rcache));
    if (nc2) rw->cache = nc2, rw->cache_cap = npts;
  }
  rw->ncache = 0;
  for (int ci = 0; ci < nc; ci++) {
    const rcontact *c = &rw->contacts[ci];
    for (int j = 0; j < c->count; j++) {
      const rpoint *p = &rw->points[c->first + j];
      if (rw->ncache < rw->cache_cap) {
        rcache *k = &rw->cache[rw->ncache++];
        k->key = cache_key(c->slot_a, c->slot_b, p->id);
        k->ni = p->ni;
        k->ti = v3_add(v3_scale(c->t1, p->ti[0]), v3_scale(c->t2, p->ti[1]));
      }
      contact_work *wk;
      loom_contact *rec = contacts_push(w, &wk);
      if (!rec) continue;
      rec->body_a = world_handle(w, c->slot_a);
      rec->body_b = world_handle(w, c->slot_b);
      rec->type_a = rec->type_b = LOOM_FEATURE_SHAPE;
      rec->feature_a = (int)(p->id & 0x7fffffff);
      rec->feature_b = -1;
      rec->solver = 5;
      rec->point = p->c;
      rec->normal = c->n;
      rec->depth = p->s0 < 0 ? -p->s0 : 0;
      rec->impulse = p->total;
      wk->slot_a = c->slot_a;
      wk->slot_b = c->slot_b;
      wk->collided = 0;
      wk->resolved = 1;
    }
  }
  qsort_cache(rw);
  arena_release(&w->scratch, mark);
}

/* Cloth pushes back: every vertex or feature contact of this substep (solvers 1 and 2, from `first`
 * on) against a dynamic rigid body gives the body the opposite of the impulse the cloth received,
 * at the contact point. The cloth's response treated the body as immovable for this substep; the
 * body's velocities change now and its motion in the next substep carries them. */
void contact_rigid_couple(loom_world *w, int first) {
  const contact_buffer *cb = &w->contacts;
  for (int i = first; i < cb->count; i++) {
    const loom_contact *rec = &cb->items[i];
    if (rec->solver != 1 && rec->solver != 2) continue;
    const int slot = handle_slot(rec->body_b);
    if (slot < 0 || slot >= w->body_slots || !w->bodies[slot].ops || w->bodies[slot].ops->id != LOOM_KIND_RIGID) continue;
    rigid_body *r = rigid_of_slot(&w->bodies[slot]);
    if (!rigid_is_dynamic(r)) continue;
    vec3 J = v3_neg(rec->impulse);
    if (!v3_isfinite(J) || v3_len2(J) == 0) continue;
    if (r->params.linear) r->state.vel = v3_madd(r->state.vel, J, r->model.inv_mass);
    if (r->params.angular) {
      mat3 Ii = rigid_world_inv_inertia(r, r->state.q);
      r->state.omega = v3_add(r->state.omega, m3_mulv(&Ii, v3_cross(v3_sub(rec->point, r->state.pos), J)));
    }
    if (r->state.asleep) r->state.asleep = 0;
    r->state.sleep_time = 0;
  }
}
