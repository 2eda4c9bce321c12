/* integrate_explicit.c — one step of a soft body with an explicit integrator: substeps, pins
 * moving along their targets, obstacle contacts after every substep, and the divergence guard.
 *
 * External forces (Lua force fields, the f array) and gravity are held constant over the step and
 * integrated exactly (x += h v + h^2 a / 2), so free fall matches x0 + v0 t + g t^2 / 2 to rounding;
 * internal forces use the chosen scheme. */
#include <stdio.h>
#include <string.h>

#include "world/world.h"

typedef struct step_ctx {
  loom_world *w;
  soft_body *b;
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
  const soft_body *b = c->b;
  soft_internal_forces(b, x, v, F);
  if (with_drag && b->drag > 0) {
    const double d = b->drag;
    for (int i = 0; i < b->n; i++) {
      const double md = d * b->mass[i];
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
    const double m = b->mass[i], M = b->total_mass, h = c->h;
    const double k = fmin(M * c->grab_omega * c->grab_omega, m * 0.25 / (h * h));
    const double damp = fmin(2.0 * c->grab_omega * M, 0.5 * m / h);
    vec3 pull = v3_scale(v3_sub(c->grab_target, x[i]), k);
    F[i] = v3_add(F[i], v3_madd(pull, v[i], -damp));
  }
}

/* Constant acceleration of vertex i over the step: gravity + external force / mass. */
static inline vec3 accel_const(const step_ctx *c, int i) {
  const soft_body *b = c->b;
  return v3_madd(c->g, b->f[i], b->inv_m[i]);
}

static void substep_symplectic(const step_ctx *c, vec3 *F) {
  soft_body *b = c->b;
  const double h = c->h;
  forces(c, b->x, b->v, F, 1);
  for (int i = 0; i < b->n; i++) {
    const double im = b->inv_m[i];
    if (im == 0) continue;
    vec3 ac = accel_const(c, i);
    /* kick with internal + constant acceleration, drift, then remove the h^2 a_c / 2 excess so
     * that the constant part is integrated exactly */
    b->v[i] = v3_madd(b->v[i], v3_madd(ac, F[i], im), h);
    b->x[i] = v3_madd(v3_madd(b->x[i], b->v[i], h), ac, -0.5 * h * h);
  }
}

static void substep_verlet(const step_ctx *c, vec3 *F) {
  soft_body *b = c->b;
  const double h = c->h;
  if (!b->has_prev) {
    for (int i = 0; i < b->n; i++) b->x_prev[i] = v3_madd(b->x[i], b->v[i], -h);
    b->has_prev = 1;
    b->prev_h = h;
  } else if (b->prev_h != h) {
    /* rescale the implied velocity to the new substep */
    double r = h / b->prev_h;
    for (int i = 0; i < b->n; i++) b->x_prev[i] = v3_madd(b->x[i], v3_sub(b->x[i], b->x_prev[i]), -r);
    b->prev_h = h;
  }
  forces(c, b->x, b->v, F, 0);
  /* 001: p' = p + (1 - kd)(p - p_prev) + a h^2, with the global damping kd = drag h pulling the
   * velocity towards the wind. */
  const double kd = fmin(b->drag * h, 1.0);
  for (int i = 0; i < b->n; i++) {
    const double im = b->inv_m[i];
    if (im == 0) continue;
    vec3 a = v3_madd(accel_const(c, i), F[i], im);
    vec3 vel = v3_sub(b->x[i], b->x_prev[i]);
    vel = v3_add(v3_scale(vel, 1.0 - kd), v3_scale(c->wind, kd * h));
    vec3 xn = v3_madd(v3_add(b->x[i], vel), a, h * h);
    b->x_prev[i] = b->x[i];
    b->x[i] = xn;
    b->v[i] = v3_scale(v3_sub(xn, b->x_prev[i]), 1.0 / h);
  }
}

static void substep_rk4(const step_ctx *c, vec3 *F, vec3 *xt, vec3 *vt, vec3 *sx, vec3 *sv) {
  soft_body *b = c->b;
  const double h = c->h;
  const int n = b->n;
  static const double stage_h[4] = {0.0, 0.5, 0.5, 1.0};
  static const double weight[4] = {1.0 / 6.0, 2.0 / 6.0, 2.0 / 6.0, 1.0 / 6.0};
  memset(sx, 0, sizeof(vec3) * (size_t)n);
  memset(sv, 0, sizeof(vec3) * (size_t)n);
  memcpy(xt, b->x, sizeof(vec3) * (size_t)n);
  memcpy(vt, b->v, sizeof(vec3) * (size_t)n);
  for (int s = 0; s < 4; s++) {
    forces(c, xt, vt, F, 1);
    /* k_x = v_stage, k_v = a(x_stage, v_stage); accumulate the weighted sums, then form the next
     * stage from the start state (classical RK4; note k4 uses x0 + h k3, not k3/2 — 003's misprint). */
    for (int i = 0; i < n; i++) {
      const double im = b->inv_m[i];
      vec3 kx = vt[i];
      vec3 kv = im == 0 ? v3(0, 0, 0) : v3_madd(accel_const(c, i), F[i], im);
      sx[i] = v3_madd(sx[i], kx, weight[s]);
      sv[i] = v3_madd(sv[i], kv, weight[s]);
      if (s < 3) {
        double hs = stage_h[s + 1] * h;
        xt[i] = v3_madd(b->x[i], kx, hs);
        vt[i] = v3_madd(b->v[i], kv, hs);
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (b->inv_m[i] == 0) continue;
    b->x[i] = v3_madd(b->x[i], sx[i], h);
    b->v[i] = v3_madd(b->v[i], sv[i], h);
  }
}

/* Puts every held pin of this body at rest + lerp(offset, target, a), velocity = change / dt. */
static void apply_pins(const step_ctx *c, double a) {
  const loom_world *w = c->w;
  soft_body *b = c->b;
  for (int g = 0; g < w->group_slots; g++) {
    const pin_group *p = &w->groups[g];
    if (!p->alive || p->body != c->slot || !p->held) continue;
    /* at a = 1 land on the target itself: offset + (target - offset) may round away from it */
    vec3 off = a >= 1 ? p->target : v3_lerp(p->offset, p->target, a);
    vec3 vel = v3_scale(v3_sub(p->target, p->offset), 1.0 / c->dt);
    for (int k = 0; k < p->count; k++) {
      int i = p->idx[k];
      b->x[i] = v3_add(p->rest[k], off);
      b->v[i] = vel;
    }
  }
}

/* Index of the first vertex whose state is not finite or beyond the guard limits, -1 if none;
 * *what describes the problem. */
static int find_divergence(const soft_body *b, const char **what) {
  for (int i = 0; i < b->n; i++) {
    if (!v3_isfinite(b->x[i])) {
      *what = "non-finite position";
      return i;
    }
    if (!v3_isfinite(b->v[i])) {
      *what = "non-finite velocity";
      return i;
    }
    if (v3_len2(b->v[i]) > SOFT_MAX_SPEED * SOFT_MAX_SPEED) {
      *what = "speed above 1e4 m/s";
      return i;
    }
    if (fabs(b->x[i].x) > SOFT_MAX_COORD || fabs(b->x[i].y) > SOFT_MAX_COORD || fabs(b->x[i].z) > SOFT_MAX_COORD) {
      *what = "position beyond 1e6 m";
      return i;
    }
  }
  return -1;
}

void soft_step(loom_world *w, int slot, double dt) {
  soft_body *b = w->bodies[slot].soft;
  const char *name = w->bodies[slot].name;
  const int n = b->n;
  memset(b->contact, 0, (size_t)n);
  if (b->frozen) return;

  int S = b->substeps_user > 0 ? b->substeps_user : b->substeps_auto;
  if (S < 1) S = 1;
  if (!b->warned_substeps) {
    if (b->substeps_user > 0 && b->model != LOOM_MODEL_SPRINGS_PBD && b->h_stable > 0 &&
        dt / S > b->h_stable * 1.0001) {
      world_message(w, "cloth '%s': %d substeps per step is below the stable estimate of %d (substep %.3g s > %.3g s); "
                       "it may diverge",
                    name, S, (int)ceil(dt / b->h_stable), dt / S, b->h_stable);
      b->warned_substeps = 1;
    } else if (b->substeps_user == 0 && b->substeps_auto >= SOFT_MAX_SUBSTEPS && dt / S > b->h_stable * 1.0001) {
      world_message(w, "cloth '%s': the stable substep (%.3g s) needs more than %d substeps per step; capped — reduce "
                       "stiffness, damping or dt",
                    name, b->h_stable, SOFT_MAX_SUBSTEPS);
      b->warned_substeps = 1;
    }
  }

  step_ctx c = {w, b, slot, dt, dt / S, w->gravity, w->wind, -1, v3(0, 0, 0), 0};
  if (w->grab_slot == slot && b->inv_m[w->grab_vertex] > 0) {
    c.grab_vertex = w->grab_vertex;
    c.grab_target = w->grab_target;
    c.grab_omega = w->grab_omega;
  }

  arena *A = &w->scratch;
  arena_mark mark = arena_get_mark(A);
  vec3 *x0 = ARENA_NEW(A, vec3, n, "soft x0");
  vec3 *xs = ARENA_NEW(A, vec3, n, "soft substep start");
  vec3 *F = ARENA_NEW(A, vec3, n, "soft forces");
  vec3 *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL;
  if (b->integrator == LOOM_INTEGRATOR_RK4) {
    e1 = ARENA_NEW(A, vec3, n, "rk4 x");
    e2 = ARENA_NEW(A, vec3, n, "rk4 v");
    e3 = ARENA_NEW(A, vec3, n, "rk4 sum x");
    e4 = ARENA_NEW(A, vec3, n, "rk4 sum v");
  }
  if (!x0 || !xs || !F || (b->integrator == LOOM_INTEGRATOR_RK4 && (!e1 || !e2 || !e3 || !e4))) {
    world_message(w, "cloth '%s': out of memory in step; body frozen", name);
    b->frozen = 1;
    arena_release(A, mark);
    return;
  }
  memcpy(x0, b->x, sizeof(vec3) * (size_t)n);

  const int pbd = b->model == LOOM_MODEL_SPRINGS_PBD;
  for (int s = 0; s < S; s++) {
    const double a0 = (double)s / S, a1 = (double)(s + 1) / S;
    memcpy(xs, b->x, sizeof(vec3) * (size_t)n);
    switch (b->integrator) {
    case LOOM_INTEGRATOR_VERLET: substep_verlet(&c, F); break;
    case LOOM_INTEGRATOR_RK4: substep_rk4(&c, F, e1, e2, e3, e4); break;
    default: substep_symplectic(&c, F); break;
    }
    apply_pins(&c, a1);
    if (pbd) {
      for (int it = 0; it < b->iterations; it++) springs_project(b, b->x);
      /* velocities from the corrected positions (position-based dynamics) */
      const double ih = 1.0 / c.h;
      for (int i = 0; i < n; i++)
        if (b->inv_m[i] > 0) b->v[i] = v3_scale(v3_sub(b->x[i], xs[i]), ih);
    }
    contact_soft_obstacles(w, b, xs, a0, a1, c.h);
    contact_soft_features(w, b, a1);
    if (b->integrator == LOOM_INTEGRATOR_VERLET) {
      /* contacts changed v; keep Verlet's implicit velocity consistent with it */
      for (int i = 0; i < n; i++) b->x_prev[i] = v3_madd(b->x[i], b->v[i], -c.h);
    }
  }
  for (int i = 0; i < n; i++) w->stats.contacts += b->contact[i];
  w->stats.iterations += S * (pbd ? b->iterations : 1);
  if (S > w->stats.substeps) w->stats.substeps = S;

  const char *what = NULL;
  int bad = find_divergence(b, &what);
  if (bad >= 0) {
    /* Freeze at the last good state so the rest of the world keeps running. */
    memcpy(b->x, x0, sizeof(vec3) * (size_t)n);
    memset(b->v, 0, sizeof(vec3) * (size_t)n);
    memcpy(b->x_prev, x0, sizeof(vec3) * (size_t)n);
    b->has_prev = 0;
    b->frozen = 1;
    world_message(w, "cloth '%s' diverged at t = %.3f s (%s at vertex %d); reduce dt or stiffness", name,
                  w->time + dt, what, bad);
  }
  arena_release(A, mark);
}
