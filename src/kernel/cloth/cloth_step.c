/* cloth_step.c — the cloth kind's part of the world step: explicit integrators (symplectic Euler,
 * Verlet, RK4) for one world substep, pins moving along their targets, springs_pbd's projection,
 * and the divergence guard at commit. Contacts are not here: the world's detect and respond
 * phases handle them between predict and commit.
 *
 * External forces (Lua force fields, the f array) and gravity are held constant over the step and
 * integrated exactly (x += h v + h^2 a / 2), so free fall matches x0 + v0 t + g t^2 / 2 to rounding;
 * internal forces use the chosen scheme. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloth/cloth.h"

typedef struct step_ctx {
  loom_world *w;
  cloth_body *b;
  int slot;
  double dt, h;
  vec3 g, wind;
  int grab_vertex; /* -1 if the grab is not on this body_slot */
  vec3 grab_target;
  double grab_omega;
} step_ctx;

/* Internal forces (zero for springs_pbd, which acts by projection) + drag + mouse grab at (x, v)
 * into F. */
static void forces(const step_ctx *c, const vec3 *x, const vec3 *v, vec3 *F, int with_drag) {
  const cloth_body *b = c->b;
  cloth_internal_forces(b, x, v, F);
  if (with_drag && b->params.drag > 0) {
    const double d = b->params.drag;
    for (int i = 0; i < b->p.n; i++) {
      const double md = d * b->p.m[i];
      F[i].x -= md * (v[i].x - c->wind.x);
      F[i].y -= md * (v[i].y - c->wind.y);
      F[i].z -= md * (v[i].z - c->wind.z);
    }
  }
  if (c->grab_vertex >= 0) {
    /* Mouse grab: a spring of stiffness M omega^2 (M = the whole body's mass, so the same omega
     * moves a coarse or a fine cloth alike), damped critically for the body. On one vertex of
     * mass m that spring must stay explicit-stable: k <= m (0.5/h)^2 and c <= 0.5 m / h. */
    const int i = c->grab_vertex;
    const double m = b->p.m[i], M = b->p.total_mass, h = c->h;
    const double k = fmin(M * c->grab_omega * c->grab_omega, m * 0.25 / (h * h));
    const double damp = fmin(2.0 * c->grab_omega * M, 0.5 * m / h);
    vec3 pull = v3_scale(v3_sub(c->grab_target, x[i]), k);
    F[i] = v3_add(F[i], v3_madd(pull, v[i], -damp));
  }
}

/* Constant acceleration of vertex i over the step: gravity + external force / mass. */
static inline vec3 accel_const(const step_ctx *c, int i) {
  const cloth_body *b = c->b;
  return v3_madd(c->g, b->p.f[i], b->p.inv_m[i]);
}

/* Symplectic Euler in (x, u), u the velocity at the middle of the substep: u' = u + h a(x, u),
 * x' = x + h u'. The velocity kept in v is the end-of-substep one, v = u + a h / 2, so free fall
 * is exact in x and v (x0 + v0 t + g t^2 / 2, v0 + g t) and a cloth at rest (a = 0) has v = 0 (not
 * the -g h / 2 a half-step velocity would show). a of the last substep is state (a_prev); before
 * the first substep it is the constant part (gravity and f / m). */
static void substep_symplectic(const step_ctx *c, vec3 *F) {
  cloth_body *b = c->b;
  const double h = c->h;
  vec3 *x = b->p.x, *v = b->p.v, *ap = b->state.a_prev;
  if (!b->p.history_ok) {
    for (int i = 0; i < b->p.n; i++) ap[i] = accel_const(c, i);
    b->p.history_ok = 1;
  }
  for (int i = 0; i < b->p.n; i++)
    if (b->p.inv_m[i] > 0) v[i] = v3_madd(v[i], ap[i], -0.5 * h); /* v -> u */
  forces(c, x, v, F, 1);
  for (int i = 0; i < b->p.n; i++) {
    /* a pinned vertex keeps the acceleration it would have if free: on release, sum m a_prev is
     * then the body's weight plus external forces, and momentum changes by exactly that */
    const vec3 a = v3_madd(c->g, v3_add(b->p.f[i], F[i]), 1.0 / b->p.m[i]);
    if (b->p.inv_m[i] == 0) {
      ap[i] = a;
      continue;
    }
    const vec3 u = v3_madd(v[i], a, h);
    x[i] = v3_madd(x[i], u, h);
    v[i] = v3_madd(u, a, 0.5 * h);
    ap[i] = a;
  }
}

/* Verlet's history of a vertex that reports velocity v after a substep h whose acceleration was a:
 * d = h v - a h^2 / 2 (exact for constant acceleration). The one expression both the start of a
 * substep and cloth_after_contacts use, so that the start reproduces the history bit for bit when
 * nothing wrote v in between. */
static inline vec3 verlet_history(vec3 v, vec3 a, double h) { return v3_madd(v3_scale(v, h), a, -0.5 * h * h); }

/* Stormer-Verlet: x' = 2x - x_prev + a h^2 (second order; exact for constant acceleration, so the
 * history starts at x_prev = x - h v + a h^2 / 2), kept as the displacement d = x - x_prev:
 * d' = d + a h^2, x' = x + d'. 001's form (integrator verlet_001) damps with
 * d' = (1 - kd) d + kd h wind + a h^2, kd = drag h, instead of a drag force. The velocity kept in v
 * is d' / h + a h / 2, exact for constant acceleration.
 * v is where the history comes from, not a report of it: every substep starts from
 * d = verlet_history(v, a_prev, prev_h), which is what the last substep left in d (its contacts'
 * velocity changes included, cloth_after_contacts) unless something wrote v since — a script
 * between steps, which then moves the vertex with the velocity it wrote (d alone had kept the old
 * motion: a cloth given 3 m/s after ten steps did not move). Positions written between steps
 * leave d as it was: a vertex moved by hand keeps its velocity, and gains none from the move. */
static void substep_verlet(const step_ctx *c, vec3 *F, int form_001) {
  cloth_body *b = c->b;
  const double h = c->h;
  vec3 *x = b->p.x, *v = b->p.v, *d = b->state.dx_prev, *ap = b->state.a_prev;
  if (!b->p.history_ok || !(b->state.prev_h > 0)) {
    /* x_prev = x - h v + a h^2 / 2 with the acceleration at the start (one extra force
     * evaluation). Also when the state is another integrator's (prev_h = 0: a hot reload that
     * changed the integrator, where scaling d by h / prev_h made it not finite) */
    forces(c, x, v, F, !form_001);
    for (int i = 0; i < b->p.n; i++) {
      const vec3 a = b->p.inv_m[i] > 0 ? v3_madd(accel_const(c, i), F[i], b->p.inv_m[i]) : v3(0, 0, 0);
      d[i] = verlet_history(v[i], a, h);
    }
    b->p.history_ok = 1;
    b->state.prev_h = h;
  } else {
    const double hp = b->state.prev_h;
    for (int i = 0; i < b->p.n; i++) d[i] = verlet_history(v[i], ap[i], hp);
    if (hp != h) {
      /* the substep changed: keep the half-step velocity d / h */
      const double r = h / hp;
      for (int i = 0; i < b->p.n; i++) d[i] = v3_scale(d[i], r);
      b->state.prev_h = h;
    }
  }
  /* The velocity-dependent forces (damping, drag) see the half-step velocity d / h, as symplectic
   * Euler's do: the end-of-substep v = d / h + a h / 2 extrapolates with the last acceleration and
   * shrinks the stability region where stiffness-proportional damping dominates (fine grids). */
  for (int i = 0; i < b->p.n; i++)
    if (b->p.inv_m[i] > 0) v[i] = v3_scale(d[i], 1.0 / h);
  forces(c, x, v, F, !form_001);
  const double kd = form_001 ? fmin(b->params.drag * h, 1.0) : 0;
  for (int i = 0; i < b->p.n; i++) {
    const double im = b->p.inv_m[i];
    if (im == 0) continue;
    const vec3 a = v3_madd(accel_const(c, i), F[i], im);
    vec3 step = d[i];
    if (form_001) step = v3_add(v3_scale(step, 1.0 - kd), v3_scale(c->wind, kd * h));
    step = v3_madd(step, a, h * h);
    d[i] = step;
    x[i] = v3_add(x[i], step);
    v[i] = v3_madd(v3_scale(step, 1.0 / h), a, 0.5 * h);
    ap[i] = a;
  }
}

/* Classical RK4 on (x, v). For springs_pbd (see cloth_predict) it starts from the velocity at the
 * start of the substep that the projection's half-step velocity u = v - a_prev h / 2 gives with
 * the constant acceleration a_c (gravity, f / m), v_s = u + a_c h / 2, so its prediction is PBD's
 * x + h u + h^2 a_c (exact for constant acceleration; the constraints carry the whole weight at
 * rest, as with symplectic Euler), not x + h v + h^2 a_c / 2, which holds half of the last
 * substep's constraint impulse over into this one (measured: a hanging strip that never settled).
 * It leaves in a_prev the acceleration its prediction implies against u: (x' - x) / h = u + h a,
 * so a = ((x' - x) / h - v_s) / h + a_c / 2. */
static void substep_rk4(const step_ctx *c, vec3 *F, vec3 *xt, vec3 *vt, vec3 *sx, vec3 *sv) {
  cloth_body *b = c->b;
  const int pbd = b->params.model == LOOM_MODEL_SPRINGS_PBD;
  const double h = c->h;
  const int n = b->p.n;
  static const double stage_h[4] = {0.0, 0.5, 0.5, 1.0};
  static const double weight[4] = {1.0 / 6.0, 2.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0};
  /* v is RK4's state but for what the collision pipeline added to it at the end of the last
   * substep for a resting contact's force (a_prev h / 2: RK4 keeps no other acceleration; zero
   * without such contacts): taken off again, as symplectic Euler takes a_prev h / 2 off
   * (contact_collide.c, resting_extrapolation); springs_pbd's a_prev is the whole last substep's
   * (above), and its start is u + a_c h / 2 */
  vec3 *ap = b->state.a_prev;
  for (int i = 0; i < n; i++) {
    if (b->p.inv_m[i] > 0)
      b->p.v[i] = pbd ? v3_madd(b->p.v[i], v3_sub(accel_const(c, i), ap[i]), 0.5 * h)
                      : v3_madd(b->p.v[i], ap[i], -0.5 * h);
    ap[i] = v3(0, 0, 0);
  }
  memset(sx, 0, sizeof(vec3) * (size_t)n);
  memset(sv, 0, sizeof(vec3) * (size_t)n);
  memcpy(xt, b->p.x, sizeof(vec3) * (size_t)n);
  memcpy(vt, b->p.v, sizeof(vec3) * (size_t)n);
  for (int s = 0; s < 4; s++) {
    forces(c, xt, vt, F, 1);
    /* k_x = v_stage, k_v = a(x_stage, v_stage); accumulate the weighted sums, then form the next
     * stage from the start state (classical RK4; note k4 uses x0 + h k3, not k3/2 — 003's misprint). */
    for (int i = 0; i < n; i++) {
      const double im = b->p.inv_m[i];
      vec3 kx = vt[i];
      vec3 kv = im == 0 ? v3(0, 0, 0) : v3_madd(accel_const(c, i), F[i], im);
      sx[i] = v3_madd(sx[i], kx, weight[s]);
      sv[i] = v3_madd(sv[i], kv, weight[s]);
      if (s < 3) {
        double hs = stage_h[s + 1] * h;
        xt[i] = v3_madd(b->p.x[i], kx, hs);
        vt[i] = v3_madd(b->p.v[i], kv, hs);
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (b->p.inv_m[i] == 0) continue;
    if (pbd) b->state.a_prev[i] = v3_madd(v3_scale(accel_const(c, i), 0.5), v3_sub(sx[i], b->p.v[i]), 1.0 / h);
    b->p.x[i] = v3_madd(b->p.x[i], sx[i], h);
    b->p.v[i] = v3_madd(b->p.v[i], sv[i], h);
  }
}

/* Backward Euler (cloth_implicit.c). The mouse grab is a spring of stiffness M omega^2 damped
 * critically for the body, without the explicit caps: the solve keeps it stable. */
static void substep_implicit(const step_ctx *c, vec3 *pin_v) {
  cloth_body *b = c->b;
  memcpy(pin_v, b->p.v, sizeof(vec3) * (size_t)b->p.n);
  pins_velocities(c->w, c->slot, c->dt, pin_v);
  cloth_implicit_ctx ic = {c->h, c->g, c->wind, pin_v, c->grab_vertex, c->grab_target, 0, 0, world_par(c->w)};
  if (c->grab_vertex >= 0) {
    const double M = b->p.total_mass;
    ic.grab_k = M * c->grab_omega * c->grab_omega;
    ic.grab_c = 2.0 * c->grab_omega * M;
  }
  cloth_implicit_substep(b, &ic);
  b->scratch.cg_iterations += b->solver.last_iterations;
  b->scratch.newton += b->solver.last_newton;
  b->scratch.contacts += b->solver.ncon;
  b->scratch.resolves += b->solver.coupling_passes;
  if (b->solver.last_residual > b->scratch.cg_residual) b->scratch.cg_residual = b->solver.last_residual;
}

/* The strain limit, for every model and integrator, after the substep's integrator: no edge
 * longer than lmax = (1 + s) L (L its rest length, s = strain_limit). Provot's deformation
 * constraint (1995, "Deformation constraints in a mass-spring model to describe rigid cloth
 * behavior") shortens each edge over the limit alone, moving its two ends along it in inverse
 * proportion to their masses; repeated over the mesh that is Gauss–Seidel, which needs hundreds of
 * sweeps once a large region is taut (measured: 160 to 1 800 per step on a 20 x 20 cloth hanging
 * at a 1 % limit). So the limit is found in two stages:
 *   1. fast projection (Goldenthal, Harmon, Fattal, Bercovier & Grinspun 2007, "Efficient
 *      simulation of inextensible cloth"): the edges over the limit are equality constraints
 *      C_e = (l_e^2 - lt_e^2) / (2 lt_e) = 0, lt = the target length just inside the limit; a
 *      Newton step solves (J W J^T) lambda = C by conjugate gradients (W = the inverse masses,
 *      J = dC/dx, matrix-free; Jacobi preconditioner) and moves x by -W J^T lambda. After each
 *      step an edge whose multiplier pushes (lambda < 0: it would rather be shorter) leaves the set
 *      and edges over the limit join it; the steps repeat while an edge is over the limit, at most
 *      STRAIN_NEWTON times. A step that leaves the largest stretch larger is halved (up to
 *      STRAIN_HALVINGS times, then the steps end): where pins pull the cloth apart no position
 *      satisfies the limit, and full steps would throw it away;
 *   2. polish: Provot's projection, Gauss–Seidel over the edges in mesh order (after the first
 *      sweep only edges with an end moved since they were checked), over-relaxed by STRAIN_OMEGA,
 *      to the target; sweeps repeat while one shortened an edge, at most STRAIN_SWEEPS times. What
 *      the first stage leaves is small or nothing: then every edge is at most lmax.
 * When at most STRAIN_FEW edges are over the limit (a pinned corner), the sweeps of stage 2 are
 * tried first, and stage 1 runs only if STRAIN_FEW_SWEEPS of them do not end it.
 * Both move the vertices by W J^T (something): the centre of mass and the momentum stay, a pinned
 * end stays where its pin put it, and each vertex's velocity changes by its displacement / h (the
 * positions and velocities stay consistent, x = x_sub + h v). Compression is not limited (cloth
 * buckles instead). The budgets bound the cost; what they cannot do — pins pulled apart further
 * than the limit allows, or a stretch stiffness so soft that most of the cloth is over the limit
 * every step — *left reports: the largest l / L - 1 still above the limit (0 when the polish ended
 * before its cap). */
#define STRAIN_NEWTON 24 /* (measured: 1 to 2 steps at a stiff cloth's pinned corners, 10 to 20 on a soft 20 x 20 cloth) */
#define STRAIN_HALVINGS 4
#define STRAIN_CG 100
#define STRAIN_CG_TOL 1e-6 /* relative residual of a Newton step's solve */
#define STRAIN_SWEEPS 64
#define STRAIN_FEW 16       /* edges over the limit that Provot's sweeps take alone first, */
#define STRAIN_FEW_SWEEPS 8 /* for at most this many sweeps */
#define STRAIN_OMEGA 1.5   /* over-relaxation of the polish (measured: 3 to 9 times fewer sweeps than 1) */
#define STRAIN_MARGIN 1e-3 /* of s: the target stretch is s (1 - 1e-3) */

size_t cloth_strain_work_bytes(int n, int ne) {
  const size_t N = (size_t)(n > 0 ? n : 1), E = (size_t)(ne > 0 ? ne : 1);
  return N * (sizeof(int32_t) + 3 * sizeof(vec3)) + E * (2 * sizeof(int32_t) + sizeof(vec3) + 6 * sizeof(double)) + 64;
}

static void *carve(char **c, size_t bytes) {
  void *p = *c;
  *c += bytes;
  return p;
}

void cloth_strain_work_bind(strain_work *wk, void *mem, int n, int ne) {
  const size_t N = (size_t)(n > 0 ? n : 1), E = (size_t)(ne > 0 ? ne : 1);
  char *c = mem;
  /* doubles and vec3s first, then the int32 arrays (alignment) */
  vec3 **v[4] = {&wk->u, &wk->xb, &wk->vb, &wk->g};
  for (int k = 0; k < 4; k++) *v[k] = carve(&c, (k < 3 ? N : E) * sizeof(vec3));
  double **d[6] = {&wk->cval, &wk->lam, &wk->r, &wk->p, &wk->z, &wk->q};
  for (int k = 0; k < 6; k++) *d[k] = carve(&c, E * sizeof(double));
  wk->seen = carve(&c, N * sizeof(int32_t));
  wk->slot = carve(&c, E * sizeof(int32_t));
  wk->active = carve(&c, E * sizeof(int32_t));
}

typedef struct strain_ctx {
  const int32_t *E;
  const vec3 *rest;
  const double *w;
  vec3 *x, *v;
  double k2, inside, ih;
} strain_ctx;

/* lmax^2 of edge e, and whether it is over it (l^2 > lmax^2) with an end not pinned; an edge of no
 * rest length (a degenerate mesh's) has no stretch to limit */
static inline int strain_over(const strain_ctx *c, int e, double *l2, double *m2) {
  const int i = c->E[2 * e], j = c->E[2 * e + 1];
  if (!(c->w[i] + c->w[j] > 0)) return 0;
  *l2 = v3_dist2(c->x[j], c->x[i]);
  *m2 = c->k2 * v3_dist2(c->rest[i], c->rest[j]);
  return *m2 > 0 && *l2 > *m2;
}

/* The largest (l / lmax)^2 over the edges with an end not pinned (0 without). */
static double strain_worst(const strain_ctx *c, int ne) {
  double worst = 0;
  for (int e = 0; e < ne; e++) {
    const int i = c->E[2 * e], j = c->E[2 * e + 1];
    if (!(c->w[i] + c->w[j] > 0)) continue;
    const double m2 = c->k2 * v3_dist2(c->rest[i], c->rest[j]);
    if (m2 > 0) worst = fmax(worst, v3_dist2(c->x[j], c->x[i]) / m2);
  }
  return worst;
}

/* u = J^T (scale a) at the active edges' ends */
static void strain_jt(const strain_ctx *c, strain_work *wk, int m, const double *a, double scale) {
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k];
    wk->u[c->E[2 * e]] = wk->u[c->E[2 * e + 1]] = v3(0, 0, 0);
  }
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k], i = c->E[2 * e], j = c->E[2 * e + 1];
    wk->u[i] = v3_madd(wk->u[i], wk->g[k], -scale * a[k]);
    wk->u[j] = v3_madd(wk->u[j], wk->g[k], scale * a[k]);
  }
}

/* y = (J W J^T) a over the active edges */
static void strain_apply(const strain_ctx *c, strain_work *wk, int m, const double *a, double *y) {
  strain_jt(c, wk, m, a, 1);
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k], i = c->E[2 * e], j = c->E[2 * e + 1];
    y[k] = v3_dot(wk->g[k], v3_sub(v3_scale(wk->u[j], c->w[j]), v3_scale(wk->u[i], c->w[i])));
  }
}

/* One Newton step of the fast projection over the m active edges: the multipliers (wk->lam).
 * Returns 0, or -1 when the system is degenerate or the solve not finite. */
static int strain_newton(const strain_ctx *c, strain_work *wk, int m) {
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k], i = c->E[2 * e], j = c->E[2 * e + 1];
    const vec3 d = v3_sub(c->x[j], c->x[i]);
    const double lt = sqrt(c->k2 * v3_dist2(c->rest[i], c->rest[j])) * c->inside;
    wk->g[k] = v3_scale(d, 1 / lt);
    wk->cval[k] = (v3_len2(d) - lt * lt) / (2 * lt);
    wk->lam[k] = 0;
    wk->r[k] = wk->cval[k];
  }
  /* preconditioned CG from lambda = 0; z = r / diag */
  double rz = 0, r0 = 0;
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k];
    const double diag = (c->w[c->E[2 * e]] + c->w[c->E[2 * e + 1]]) * v3_len2(wk->g[k]);
    wk->z[k] = diag > 0 ? wk->r[k] / diag : 0;
    wk->p[k] = wk->z[k];
    rz += wk->r[k] * wk->z[k];
  }
  r0 = rz;
  for (int it = 0; it < STRAIN_CG && rz > STRAIN_CG_TOL * STRAIN_CG_TOL * r0; it++) {
    strain_apply(c, wk, m, wk->p, wk->q);
    double pq = 0;
    for (int k = 0; k < m; k++) pq += wk->p[k] * wk->q[k];
    if (!(pq > 0)) break;
    const double alpha = rz / pq;
    double rz1 = 0;
    for (int k = 0; k < m; k++) {
      const int e = wk->active[k];
      const double diag = (c->w[c->E[2 * e]] + c->w[c->E[2 * e + 1]]) * v3_len2(wk->g[k]);
      wk->lam[k] += alpha * wk->p[k];
      wk->r[k] -= alpha * wk->q[k];
      wk->z[k] = diag > 0 ? wk->r[k] / diag : 0;
      rz1 += wk->r[k] * wk->z[k];
    }
    const double beta = rz1 / rz;
    rz = rz1;
    for (int k = 0; k < m; k++) wk->p[k] = wk->z[k] + beta * wk->p[k];
  }
  if (!(r0 > 0) || !isfinite(rz)) return -1;
  for (int k = 0; k < m; k++)
    if (!isfinite(wk->lam[k])) return -1;
  return 0;
}

/* x -= scale W J^T lambda (u = J^T lambda), v by the same / h */
static void strain_move(const strain_ctx *c, strain_work *wk, int m, double scale) {
  strain_jt(c, wk, m, wk->lam, scale);
  for (int k = 0; k < m; k++) {
    const int e = wk->active[k];
    for (int s = 0; s < 2; s++) {
      const int i = c->E[2 * e + s];
      if (!(c->w[i] > 0)) continue;
      const vec3 dx = v3_scale(wk->u[i], -c->w[i]);
      c->x[i] = v3_add(c->x[i], dx);
      c->v[i] = v3_madd(c->v[i], dx, c->ih);
      wk->u[i] = v3(0, 0, 0); /* each vertex moves once */
    }
  }
}

/* The polish: Provot's projection, Gauss-Seidel, over-relaxed, at most `sweeps` sweeps. Returns 1
 * when it ended before them (every edge within the limit). */
static int strain_polish(const strain_ctx *c, int n, int ne, int32_t *seen, int sweeps) {
  for (int i = 0; i < n; i++) seen[i] = -2;
  for (int sweep = 0; sweep < sweeps; sweep++) {
    int again = 0;
    for (int e = 0; e < ne; e++) {
      const int i = c->E[2 * e], j = c->E[2 * e + 1];
      if (sweep > 0 && seen[i] < sweep - 1 && seen[j] < sweep - 1) continue; /* both ends unmoved since checked */
      double l2, m2;
      if (!strain_over(c, e, &l2, &m2)) continue;
      again = 1;
      const double l = sqrt(l2), lt = sqrt(m2) * c->inside, L = sqrt(m2 / c->k2);
      /* to lt - (omega - 1) (l - lt), not below L: x_i moves by w_i / (w_i + w_j) of the
       * shortening toward x_j, x_j by w_j / (w_i + w_j) toward x_i */
      const double target = fmax(lt - (STRAIN_OMEGA - 1) * (l - lt), L);
      const vec3 d = v3_sub(c->x[j], c->x[i]);
      const vec3 k = v3_scale(d, (l - target) / (l * (c->w[i] + c->w[j])));
      if (c->w[i] > 0) {
        const vec3 dx = v3_scale(k, c->w[i]);
        c->x[i] = v3_add(c->x[i], dx);
        c->v[i] = v3_madd(c->v[i], dx, c->ih);
        seen[i] = sweep;
      }
      if (c->w[j] > 0) {
        const vec3 dx = v3_scale(k, -c->w[j]);
        c->x[j] = v3_add(c->x[j], dx);
        c->v[j] = v3_madd(c->v[j], dx, c->ih);
        seen[j] = sweep;
      }
    }
    if (!again) return 1;
  }
  return 0;
}

/* The active set of the edges over the limit (wk->active, wk->slot); returns its size. */
static int strain_active(const strain_ctx *c, strain_work *wk, int ne) {
  int m = 0;
  for (int e = 0; e < ne; e++) {
    double l2, m2;
    wk->slot[e] = -1;
    if (strain_over(c, e, &l2, &m2)) {
      wk->slot[e] = m;
      wk->active[m++] = e;
    }
  }
  return m;
}

int cloth_strain_limit(cloth_body *b, double h, strain_work *wk, double *left) {
  const double s = b->params.strain_limit;
  const strain_ctx c = {b->model.edge, b->p.rest, b->p.inv_m, b->p.x, b->p.v, (1 + s) * (1 + s),
                        (1 + s * (1 - STRAIN_MARGIN)) / (1 + s), 1.0 / h};
  const int ne = b->model.ne, n = b->p.n;
  *left = 0;
  /* the first active set: the edges over the limit */
  int m = strain_active(&c, wk, ne);
  const int first = m;
  if (!m) return 0;
  /* a few edges over the limit (a pinned corner's): Provot's sweeps alone end it in a few */
  if (m <= STRAIN_FEW && strain_polish(&c, n, ne, wk->seen, STRAIN_FEW_SWEEPS)) return first;
  double worst = strain_worst(&c, ne); /* the largest (l / lmax)^2 */
  if (worst > 1 && m <= STRAIN_FEW) m = strain_active(&c, wk, ne); /* (those the sweeps left) */
  for (int it = 0; it < STRAIN_NEWTON && m > 0 && worst > 1; it++) {
    if (strain_newton(&c, wk, m) != 0) break;
    /* damped: a step that leaves the largest stretch larger is halved, up to STRAIN_HALVINGS
     * times (pins pulled apart, where no position satisfies the limit, would otherwise throw the
     * cloth away) */
    memcpy(wk->xb, c.x, sizeof(vec3) * (size_t)n);
    memcpy(wk->vb, c.v, sizeof(vec3) * (size_t)n);
    double scale = 1, after = worst;
    int ok = 0;
    for (int half = 0; half <= STRAIN_HALVINGS; half++, scale *= 0.5) {
      strain_move(&c, wk, m, scale);
      after = strain_worst(&c, ne);
      if (after < worst) {
        ok = 1;
        break;
      }
      memcpy(c.x, wk->xb, sizeof(vec3) * (size_t)n);
      memcpy(c.v, wk->vb, sizeof(vec3) * (size_t)n);
    }
    if (!ok) break;
    worst = after;
    /* keep the edges that pull (lambda > 0), add those over the limit */
    int kept = 0;
    for (int k = 0; k < m; k++) {
      const int e = wk->active[k];
      if (wk->lam[k] > 0) {
        wk->slot[e] = kept;
        wk->active[kept++] = e;
      } else {
        wk->slot[e] = -1;
      }
    }
    m = kept;
    for (int e = 0; e < ne; e++) {
      double l2, m2;
      if (wk->slot[e] < 0 && strain_over(&c, e, &l2, &m2)) {
        wk->slot[e] = m;
        wk->active[m++] = e;
      }
    }
  }
  if (!strain_polish(&c, n, ne, wk->seen, STRAIN_SWEEPS)) {
    const double over = sqrt(strain_worst(&c, ne)) * (1 + s) - 1; /* the largest l / L - 1 */
    *left = over > s ? over : 0;
  }
  return first;
}

/* More automatic substeps than this per step: the explicit integrators say once that the implicit
 * one would do the step in one solve. */
#define CLOTH_MANY_SUBSTEPS 100

/* ---- the kind's step operations ------------------------------------------------------------ */

/* The world substeps as a whole (docs/architecture.md): this is how many substeps this cloth needs
 * to stay stable, or what the user asked for. */
/* The mean velocity of a particle body's free vertices, how far any of them moves from it (m/s),
 * and its box. */
static void spread_of(const particles *p, vec3 *mean, double *spread, vec3 *lo, vec3 *hi) {
  vec3 sum = v3(0, 0, 0);
  int n = 0;
  *lo = v3(INFINITY, INFINITY, INFINITY);
  *hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < p->n; i++) {
    *lo = v3_min(*lo, p->x[i]);
    *hi = v3_max(*hi, p->x[i]);
    if (!(p->inv_m[i] > 0)) continue;
    sum = v3_add(sum, p->v[i]);
    n++;
  }
  *mean = n ? v3_scale(sum, 1.0 / n) : v3(0, 0, 0);
  double most = 0;
  for (int i = 0; i < p->n; i++)
    if (p->inv_m[i] > 0) most = d_max(most, v3_len2(v3_sub(p->v[i], *mean)));
  *spread = sqrt(most);
}

/* Substeps an implicit cloth takes for its contacts with other particle bodies (cloth, solids):
 * the collision pipeline corrects positions after the solve, by as much as two bodies' features
 * come closer than the thickness within a substep, and a large correction strains the cloth at
 * once (a sheet falling at 1 m/s onto another, 4 mm thick, at dt = 1/100: the energy rose to 7
 * times its start; at 1/150 s 1.25 times, at 1/200 s not at all). So the substep is chosen so
 * that no feature of the cloth and one of another particle body nearby approach each other by
 * more than twice the thickness in it, from the velocities at the step's start: their relative
 * speed is at most the two bodies' spreads about their mean velocities plus the difference of
 * those means. A cloth with self_collision counts its own folds the same way, from the vertices
 * of different folds that may meet within the step (self_approach; the spread alone asked a
 * flapping flag for 4 substeps where its folds never met). At most CLOTH_CONTACT_SUBSTEPS. */
#define CLOTH_CONTACT_SUBSTEPS 4
/* The fastest approach (m/s) of two vertices of one cloth that lie on different folds and may
 * meet within the step: pairs nearer than their reaches r = (thickness + longest edge) / 2 + |v -
 * mean| dt (a vertex nearing the middle of a triangle is up to an edge away from its corners)
 * whose rest positions lie more than twice those reaches apart (nearby cloth that is not folded
 * onto itself is as near at rest, and its neighbours' relative motion is the cloth's own
 * deformation). Only a vertex moving faster than `slow` from the mean can be part of a pair
 * approaching at 2 slow or more, so only those look (a settled pile costs little); the others are
 * found through a spatial hash of cells as wide as the largest reach's diameter. Exact maxima of
 * state at the step's start: deterministic. */
static double self_approach(loom_world *w, const cloth_body *b, double dt, vec3 mean, double slow) {
  const particles *p = &b->p;
  const int n = p->n;
  double edge = 0;
  for (int t = 0; t < p->nt; t++)
    for (int k = 0; k < 3; k++)
      edge = d_max(edge, v3_len2(v3_sub(p->x[p->tri[3 * t + k]], p->x[p->tri[3 * t + (k + 1) % 3]])));
  const double base = 0.5 * (p->thickness + sqrt(edge));
  arena *A = &w->scratch;
  const arena_mark mark = arena_get_mark(A);
  double *r = ARENA_NEW(A, double, n, "self approach reach");
  int64_t *cell = ARENA_NEW(A, int64_t, 3 * (size_t)n, "self approach cells");
  const int T = 2 * n + 1;
  int32_t *head = ARENA_NEW(A, int32_t, T + 1, "self approach table");
  int32_t *item = ARENA_NEW(A, int32_t, n, "self approach items");
  uint32_t *key = ARENA_NEW(A, uint32_t, n, "self approach keys");
  double most = 0;
  if (!r || !cell || !head || !item || !key) goto out;
  double rmax = 0;
  vec3 lo = v3(INFINITY, INFINITY, INFINITY);
  for (int i = 0; i < n; i++) {
    r[i] = base + v3_len(v3_sub(p->v[i], mean)) * dt;
    rmax = d_max(rmax, r[i]);
    lo = v3_min(lo, p->x[i]);
  }
  const double H = 2 * rmax;
  if (!(H > 0) || !isfinite(H)) goto out;
  const double cap = 0x1p52; /* cell coordinates stay exact integers */
  for (int i = 0; i < n; i++) {
    const vec3 q = v3_scale(v3_sub(p->x[i], lo), 1 / H);
    cell[3 * i + 0] = (int64_t)fmin(floor(q.x), cap);
    cell[3 * i + 1] = (int64_t)fmin(floor(q.y), cap);
    cell[3 * i + 2] = (int64_t)fmin(floor(q.z), cap);
  }
#define SELF_HASH(cx, cy, cz)                                                                         \
  ((uint32_t)(((uint64_t)(cx) * 73856093u ^ (uint64_t)(cy) * 19349663u ^ (uint64_t)(cz) * 83492791u) % \
              (uint64_t)T))
  for (int k = 0; k <= T; k++) head[k] = 0;
  for (int i = 0; i < n; i++) {
    key[i] = SELF_HASH(cell[3 * i + 0], cell[3 * i + 1], cell[3 * i + 2]);
    head[key[i] + 1]++;
  }
  for (int k = 0; k < T; k++) head[k + 1] += head[k];
  for (int i = 0; i < n; i++) item[head[key[i]]++] = i; /* head[k] now ends bucket k */
  for (int k = T; k > 0; k--) head[k] = head[k - 1];
  head[0] = 0;
  for (int i = 0; i < n; i++) {
    if (!(v3_len(v3_sub(p->v[i], mean)) > slow)) continue;
    for (int dz = -1; dz <= 1; dz++)
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          const int64_t cx = cell[3 * i + 0] + dx, cy = cell[3 * i + 1] + dy, cz = cell[3 * i + 2] + dz;
          const uint32_t h = SELF_HASH(cx, cy, cz);
          for (int e = head[h]; e < head[h + 1]; e++) {
            const int j = item[e];
            if (j == i || cell[3 * j + 0] != cx || cell[3 * j + 1] != cy || cell[3 * j + 2] != cz) continue;
            const vec3 d = v3_sub(p->x[j], p->x[i]);
            const double reach = r[i] + r[j];
            const double dd = v3_len2(d);
            if (!(dd < reach * reach) || !(v3_len2(v3_sub(p->rest[j], p->rest[i])) > 4 * reach * reach)) continue;
            const vec3 dv = v3_sub(p->v[j], p->v[i]);
            const double close = dd > 0 ? -v3_dot(dv, d) / sqrt(dd) : v3_len(dv);
            if (!(sqrt(dd) - close * dt < 2 * base)) continue; /* they stay apart in this step */
            most = d_max(most, close);
          }
        }
  }
#undef SELF_HASH
out:
  arena_release(A, mark);
  return most;
}

static int contact_substeps(loom_world *w, const body_slot *s, double dt) {
  const cloth_body *b = cloth_of(s);
  const double thick = particles_thickness(&b->p);
  if (!(dt > 0)) return 1;
  vec3 mean, lo, hi;
  double spread;
  spread_of(&b->p, &mean, &spread, &lo, &hi);
  double rel = 0;
  /* its own folds: only when the spread allows an approach beyond one substep's */
  if (b->p.self_collision && 2 * spread * dt > 2 * thick) rel = self_approach(w, b, dt, mean, thick / dt);
  for (int o = 0; o < w->order_count; o++) {
    const body_slot *t = &w->bodies[w->order[o]];
    if (t == s || !t->pts || t->pts->frozen || t->pts->n == 0 || world_pair_off(w, (int)(s - w->bodies), w->order[o]))
      continue;
    vec3 m2, lo2, hi2;
    double sp2;
    spread_of(t->pts, &m2, &sp2, &lo2, &hi2);
    const double r = spread + sp2 + v3_len(v3_sub(mean, m2));
    const double reach = r * dt + thick + particles_thickness(t->pts);
    const vec3 e = v3(reach, reach, reach);
    if (!bvh_box_overlap(v3_sub(lo, e), v3_add(hi, e), lo2, hi2)) continue;
    rel = d_max(rel, r);
  }
  /* and the rigid bodies: the obstacle passes after the solve push the cloth's elements off their
   * sharp features (and rounded ones between its vertices) by as much as the substep carried them
   * past, which strains it at once (a sheet dropped 25 cm onto a box at dt = 1/100 rose to 3.5
   * times its starting energy, onto a ball 1.4 times; at 1/200 not at all) */
  rel = d_max(rel, particles_obstacle_approach(w, (int)(s - w->bodies), dt));
  const double want = ceil(rel * dt / (2 * thick));
  return want > CLOTH_CONTACT_SUBSTEPS ? CLOTH_CONTACT_SUBSTEPS : (want > 1 ? (int)want : 1);
}

int cloth_substeps(loom_world *w, body_slot *s, double dt) {
  cloth_body *b = cloth_of(s);
  if (b->p.frozen) return 1;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    /* stable at any step; more substeps for fast contacts between cloths */
    const int user = b->params.substeps_user > 0 ? b->params.substeps_user : 1;
    const int contact = contact_substeps(w, s, dt);
    return contact > user ? contact : user;
  }
  int S = b->params.substeps_user > 0 ? b->params.substeps_user : b->derived.substeps_auto;
  if (S < 1) S = 1;
  if (b->derived.warned_substeps && dt != b->derived.warned_dt) b->derived.warned_substeps = 0;
  if (!b->derived.warned_substeps) {
    b->derived.warned_dt = dt;
    if (b->params.substeps_user > 0 && b->params.model != LOOM_MODEL_SPRINGS_PBD && b->derived.h_stable > 0 &&
        dt / S > b->derived.h_stable * 1.0001) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': %d substeps per step is below the stable estimate of %d (substep %.3g s > %.3g s); "
                    "it may diverge",
                    s->name, S, (int)ceil(dt / b->derived.h_stable), dt / S, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    } else if (b->params.substeps_user == 0 && b->derived.substeps_auto >= WORLD_MAX_SUBSTEPS &&
               dt / S > b->derived.h_stable * 1.0001) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': the stable substep (%.3g s) needs more than %d substeps per step; capped — use "
                    "integrator = 'implicit' (stable at any step), or reduce stiffness, damping or dt",
                    s->name, b->derived.h_stable, WORLD_MAX_SUBSTEPS);
      b->derived.warned_substeps = 1;
    } else if (b->params.substeps_user == 0 && S > CLOTH_MANY_SUBSTEPS && b->params.model != LOOM_MODEL_SPRINGS_PBD) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': the explicit integrator needs %d substeps per step at dt = %.3g s (stable substep "
                    "%.3g s); use integrator = 'implicit' (stable at any step), or reduce dt or the stiffness",
                    s->name, S, dt, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    }
  }
  return S;
}

void cloth_begin(loom_world *w, body_slot *s, const step_info *si) {
  cloth_body *b = cloth_of(s);
  const int n = b->p.n;
  arena *A = &w->scratch;
  b->scratch.step_substeps = si->substeps;
  b->scratch.cg_iterations = 0;
  b->scratch.newton = 0;
  b->scratch.cg_residual = 0;
  b->scratch.contacts = b->scratch.resolves = 0;
  b->scratch.F = ARENA_NEW(A, vec3, n, "cloth forces");
  b->scratch.rk_x = b->scratch.rk_v = b->scratch.rk_sx = b->scratch.rk_sv = NULL;
  b->scratch.lambda = NULL;
  b->scratch.strain_limited = 0;
  b->scratch.strain = NULL;
  if (b->params.strain_limit > 0) {
    void *mem = arena_alloc(A, cloth_strain_work_bytes(n, b->model.ne), "strain limit");
    b->scratch.strain = mem ? ARENA_NEW(A, strain_work, 1, "strain limit") : NULL;
    if (b->scratch.strain) cloth_strain_work_bind(b->scratch.strain, mem, n, b->model.ne);
  }
  /* the repulsion spring of the collision pipeline: the stretch stiffness (Bridson et al.); a
   * projection model has no stiffness in N/m, so a stiff default (the 10 % limit then decides) */
  b->p.stiffness = b->params.model == LOOM_MODEL_SPRINGS_PBD ? 1e4 : b->params.stretch;
  if (b->params.model == LOOM_MODEL_SPRINGS_PBD) {
    const int ns = b->model.fam_start[FAM_COUNT];
    b->scratch.lambda = ARENA_NEW(A, double, ns > 0 ? ns : 1, "xpbd multipliers");
  }
  if (b->params.integrator == LOOM_INTEGRATOR_RK4) {
    b->scratch.rk_x = ARENA_NEW(A, vec3, n, "rk4 x");
    b->scratch.rk_v = ARENA_NEW(A, vec3, n, "rk4 v");
    b->scratch.rk_sx = ARENA_NEW(A, vec3, n, "rk4 sum x");
    b->scratch.rk_sv = ARENA_NEW(A, vec3, n, "rk4 sum v");
  }
  const cloth_scratch *sc = &b->scratch;
  if (!sc->F || (b->params.integrator == LOOM_INTEGRATOR_RK4 && (!sc->rk_x || !sc->rk_v || !sc->rk_sx || !sc->rk_sv)) ||
      (b->params.model == LOOM_MODEL_SPRINGS_PBD && !sc->lambda) || (b->params.strain_limit > 0 && !sc->strain)) {
    world_message(w, LOOM_ERROR, (int)(s - w->bodies), "cloth '%s': out of memory in step; body frozen", s->name);
    b->p.frozen = 1;
  }
}

static step_ctx make_ctx(loom_world *w, body_slot *s, const step_info *si) {
  cloth_body *b = cloth_of(s);
  const int slot = (int)(s - w->bodies);
  step_ctx c = {w, b, slot, si->dt, si->h, w->gravity, w->wind, -1, v3(0, 0, 0), 0};
  if (w->grab_slot == slot && b->p.inv_m[w->grab_vertex] > 0) {
    c.grab_vertex = w->grab_vertex;
    c.grab_target = w->grab_target;
    c.grab_omega = w->grab_omega;
  }
  return c;
}

/* Candidate positions and velocities of one substep: the integrator, then the pins (a
 * constraint: their vertices have inv_m = 0 and follow their targets), then springs_pbd's
 * projection. Contacts come after every body has predicted. */
void cloth_predict(loom_world *w, body_slot *s, const step_info *si) {
  cloth_body *b = cloth_of(s);
  if (b->p.frozen) return;
  step_ctx c = make_ctx(w, s, si);
  const int pbd = b->params.model == LOOM_MODEL_SPRINGS_PBD;
  if (pbd && b->params.integrator == LOOM_INTEGRATOR_RK4 && !b->p.history_ok) {
    /* RK4 keeps no history of its own; springs_pbd's half-step velocity v - a_prev h / 2 needs
     * a_prev, which starts (as symplectic Euler's) as the constant part of the acceleration */
    for (int i = 0; i < b->p.n; i++) b->state.a_prev[i] = accel_const(&c, i);
    b->p.history_ok = 1;
  }
  switch (b->params.integrator) {
  case LOOM_INTEGRATOR_IMPLICIT: substep_implicit(&c, b->scratch.F); break;
  case LOOM_INTEGRATOR_VERLET: substep_verlet(&c, b->scratch.F, 0); break;
  case LOOM_INTEGRATOR_VERLET_001: substep_verlet(&c, b->scratch.F, 1); break;
  case LOOM_INTEGRATOR_RK4:
    substep_rk4(&c, b->scratch.F, b->scratch.rk_x, b->scratch.rk_v, b->scratch.rk_sx, b->scratch.rk_sv);
    break;
  default: substep_symplectic(&c, b->scratch.F); break;
  }
  pins_apply(w, c.slot, si->a1, si->dt);
  if (pbd) {
    /* the prediction, before the projection moves it (F is free once the integrator is done) */
    vec3 *xp = b->scratch.F;
    memcpy(xp, b->p.x, sizeof(vec3) * (size_t)b->p.n);
    if (b->params.compliance > 0 && b->scratch.lambda) {
      memset(b->scratch.lambda, 0, sizeof(double) * (size_t)b->model.fam_start[FAM_COUNT]);
      /* a constant force f moves a vertex by h^2 f / m in the prediction (from the half-step
       * velocity, below) */
      const double hh = si->h * si->h;
      for (int it = 0; it < b->params.iterations; it++) springs_project_xpbd(b, b->p.x, hh, b->scratch.lambda);
    } else {
      for (int it = 0; it < b->params.iterations; it++) springs_project(b, b->p.x);
    }
    /* Velocities from the corrected positions (position-based dynamics): u' = (x' - x) / h is the
     * velocity at the middle of the substep. The substep's acceleration is what changed the
     * half-step velocity, a = (u' - u) / h: the integrator's (a_prev on return: gravity, f / m,
     * drag, grab) plus the projection's displacement / h^2. It is kept in a_prev, and the velocity
     * kept in v is the end-of-substep one, v = u' + a h / 2, as symplectic Euler's: free fall is
     * exact in x and v, and a cloth hanging at rest (u' = u = 0, the constraints' impulses cancel
     * gravity: a = 0) has v = 0. The next substep starts from u = v - a h / 2 = u' (symplectic;
     * Verlet's history d = v h - a h^2 / 2 = h u'): PBD's prediction x + h u' + h^2 a_ext, the
     * projection carrying the whole weight at rest (with a_prev = gravity alone it carried half,
     * and XPBD's stiffness measured 2 / compliance). RK4 starts from u + a_ext h / 2, the same
     * prediction (substep_rk4); its a_prev on return is the a that prediction implies. */
    const double ih = 1.0 / si->h, hh2 = 0.5 * si->h;
    const vec3 *xs = b->p.x_sub;
    vec3 *ap = b->state.a_prev;
    for (int i = 0; i < b->p.n; i++)
      if (b->p.inv_m[i] > 0) {
        const vec3 u = v3_scale(v3_sub(b->p.x[i], xs[i]), ih);
        ap[i] = v3_madd(ap[i], v3_sub(b->p.x[i], xp[i]), ih * ih);
        b->p.v[i] = v3_madd(u, ap[i], hh2);
      }
  }
  if (b->params.strain_limit > 0 && b->scratch.strain) {
    double left = 0;
    b->scratch.strain_limited += cloth_strain_limit(b, si->h, b->scratch.strain, &left);
    if (left > 0 && !b->derived.warned_strain) {
      world_message(w, LOOM_WARNING, c.slot,
                    "cloth '%s': strain_limit %.4g not reached at t = %.3f s: when its iterations ran out an edge "
                    "was still stretched by %.4g (l/L - 1); a stretch stiffness that leaves large regions over the "
                    "limit, or pins pulled apart, is more than it can do: raise 'stretch' or 'strain_limit'",
                    s->name, b->params.strain_limit, w->time + si->dt * si->a1, left);
      b->derived.warned_strain = 1;
    }
  }
}

void cloth_after_contacts(loom_world *w, body_slot *s, const step_info *si) {
  (void)w;
  cloth_body *b = cloth_of(s);
  const int it = b->params.integrator;
  if (it == LOOM_INTEGRATOR_IMPLICIT && !b->p.frozen) {
    /* The solve moved every vertex by h v; the contact passes after it moved some again and
     * changed their velocities by rules of their own, and a vertex the solve pulls across a box's
     * edge each substep and the passes put back stands still while it reports the speed of the
     * pull (9 cm/s on a cloth at rest over a box; the upper of two cloths on a box, pressed into
     * the lower one, 77 cm/s). A vertex never reports more speed than it moved with over the
     * substep: its velocity is then that motion, (x - x_sub) / h, which only takes energy away.
     * Only vertices an obstacle held this step (its contact flag), where the obstacle takes the
     * momentum anyway, and not those whose contact moves a dynamic rigid body (which took the
     * opposite impulse): between free cloths the pipeline's impulses keep momentum exactly, and
     * so does this (a vertex of two spinning cloths colliding in the air was cut back, and 21 %
     * of their momentum went). */
    const cloth_solver *sv = &b->solver;
    const double ih = 1.0 / si->h;
    for (int i = 0; i < b->p.n; i++) {
      if (!(b->p.inv_m[i] > 0) || !(b->p.contact[i] & 1) || (b->p.contact[i] & CONTACT_MOVABLE)) continue;
      if (sv->ncon && sv->con[i] && sv->cbody[sv->con_b[i]].movable) continue;
      const vec3 u = v3_scale(v3_sub(b->p.x[i], b->p.x_sub[i]), ih);
      /* (a vertex the passes left alone moved with v to rounding: left as it is) */
      if (v3_len2(b->p.v[i]) > v3_len2(u) * (1 + 1e-9) + 1e-14) b->p.v[i] = u;
    }
  }
  if (b->p.frozen || (it != LOOM_INTEGRATOR_VERLET && it != LOOM_INTEGRATOR_VERLET_001)) return;
  /* contacts changed v; keep Verlet's history consistent with it: d / h = v - a h / 2 (the next
   * substep takes it from v again, substep_verlet) */
  const double h = si->h;
  for (int i = 0; i < b->p.n; i++) b->state.dx_prev[i] = verlet_history(b->p.v[i], b->state.a_prev[i], h);
}

/* The largest l^2 / L^2 over the cloth's edges, and the edge. */
static double largest_stretch2(const cloth_body *b, int *edge) {
  const vec3 *x = b->p.x, *r = b->p.rest;
  double most = 0;
  *edge = -1;
  for (int e = 0; e < b->model.ne; e++) {
    const int i = b->model.edge[2 * e], j = b->model.edge[2 * e + 1];
    const double L2 = v3_len2(v3_sub(r[j], r[i])), l2 = v3_len2(v3_sub(x[j], x[i]));
    if (l2 > most * L2 && L2 > 0) {
      most = l2 / L2;
      *edge = e;
    }
  }
  return most;
}

/* A cloth pulled far beyond its rest length (a step too large for its contacts or a fast body,
 * pins driven apart) keeps running, but says so once the state has lasted CLOTH_OVERSTRETCH_TIME:
 * nothing in a cloth model holds it. */
static void check_overstretch(loom_world *w, body_slot *s, const step_info *si) {
  cloth_body *b = cloth_of(s);
  int e;
  const double most = largest_stretch2(b, &e);
  const double now = w->time + si->dt;
  if (b->derived.warned_overstretch) {
    if (most < CLOTH_OVERSTRETCH_CLEAR * CLOTH_OVERSTRETCH_CLEAR) b->derived.warned_overstretch = 0;
    return;
  }
  if (!(most > CLOTH_OVERSTRETCH * CLOTH_OVERSTRETCH) || e < 0) {
    b->derived.over_since = -1;
    return;
  }
  if (b->derived.over_since < 0) b->derived.over_since = now;
  if (!(now - b->derived.over_since >= CLOTH_OVERSTRETCH_TIME * (1 - 1e-9))) return;
  b->derived.warned_overstretch = 1;
  b->derived.over_since = -1;
  world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                "cloth '%s' is stretched to %.1f times its rest length at t = %.3f s (the edge between vertices %d "
                "and %d), far beyond what its model holds: something pulls it apart faster than its stretch can "
                "follow (a body driven through it, pins driven apart, or contacts in a step too large for them: "
                "dt = %.3g s, %d substeps); look for what pulls it, or reduce dt",
                s->name, sqrt(most), now, b->model.edge[2 * e], b->model.edge[2 * e + 1], si->dt,
                si->substeps);
}

/* Divergence guard: a body whose state is not finite or beyond the limits goes back to where it
 * started the step, stops, and is frozen, so the rest of the world keeps running. */
void cloth_commit(loom_world *w, body_slot *s, const step_info *si) {
  cloth_body *b = cloth_of(s);
  const int n = b->p.n;
  if (b->p.frozen && !b->p.x_step) return;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    w->stats.iterations += b->scratch.cg_iterations;
    w->stats.newton_iterations += b->scratch.newton;
    w->stats.cloth_contacts += b->scratch.contacts;
    w->stats.contact_resolves += b->scratch.resolves;
    w->stats.cg_residual = fmax(w->stats.cg_residual, b->scratch.cg_residual);
    if (b->scratch.cg_residual > b->params.cg_tolerance && !b->solver.warned && !b->p.frozen) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': CG did not converge in %d iterations at t = %.3f s (relative residual %.3g > "
                    "cg_tolerance %.3g); the step completed with the partial solution: raise 'cg_iterations', or "
                    "lower dt or the stiffness",
                    s->name, b->params.cg_iterations, w->time + si->dt, b->scratch.cg_residual, b->params.cg_tolerance);
      b->solver.warned = 1;
    }
    if (b->solver.breakdown && !b->solver.warned_breakdown && !b->p.frozen) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': the implicit system was not positive definite at t = %.3f s (CG stopped after %d "
                    "iterations, relative residual %.3g): look for non-finite or extreme masses, forces or "
                    "parameters",
                    s->name, w->time + si->dt, b->solver.last_iterations, b->scratch.cg_residual);
      b->solver.warned_breakdown = 1;
    }
    if (b->solver.bad_damping > 0 && !b->solver.warned_damping && !b->p.frozen) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "cloth '%s': the external damping (loom_body_damping) of %d vertices was ignored at t = %.3f s, "
                    "first vertex %d: a block must be finite and positive semi-definite",
                    s->name, b->solver.bad_damping, w->time + si->dt, b->solver.bad_damping_vertex);
      b->solver.warned_damping = 1;
    }
  } else {
    w->stats.iterations += si->substeps * (b->params.model == LOOM_MODEL_SPRINGS_PBD ? b->params.iterations : 1);
  }
  w->stats.strain_limited += b->scratch.strain_limited;
  const char *what = NULL;
  int bad = b->p.frozen ? -1 : particles_find_divergence(&b->p, &what);
  if (bad < 0) {
    if (!b->p.frozen) check_overstretch(w, s, si);
    return;
  }
  memcpy(b->p.x, b->p.x_step, sizeof(vec3) * (size_t)n);
  memset(b->p.v, 0, sizeof(vec3) * (size_t)n);
  memset(b->state.dx_prev, 0, sizeof(vec3) * (size_t)n);
  if (b->params.integrator == LOOM_INTEGRATOR_RK4) memset(b->state.a_prev, 0, sizeof(vec3) * (size_t)n);
  b->p.history_ok = 0;
  b->p.frozen = 1;
  world_diverged(w, (int)(s - w->bodies), bad, what, si);
}
