/* simplex_body.c — simplex bodies: definition defaults and validation, the parameter table, the
 * stability estimate, the kind's step (004's two-phase update: every force from the positions at
 * the start of the substep, then every vertex moves), plastic rest shapes and the public entry
 * points. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "simplex/simplex.h"

LOOM_API void loom_simplex_def_default(loom_simplex_def *def) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  def->model = LOOM_SIMPLEX_MRA;
  def->integrator = LOOM_INTEGRATOR_CENTRAL;
  def->k = 0.1;
  def->k_anchor = 0.05;
  def->mass = 0.001;
  def->damping = 0.01;
  def->thickness = 0.001;
  def->friction = 0;
  def->response = LOOM_RESPONSE_PROJECT;
  def->kp = 0.5;
  def->kd = 10;
  def->hold = 1;
  def->passes = 16;
}

static int check_range(const char *name, const char *field, double value, double lo, double hi) {
  if (!isfinite(value) || value < lo || value > hi)
    return loom_fail("simplex '%s': '%s' must be a number in [%g, %g], got %g", name, field, lo, hi, value);
  return 0;
}

static int validate(const loom_simplex_def *d) {
  const char *nm = d->name;
  if (!d->mesh)
    return loom_fail("simplex '%s': 'mesh' is required (loom.mesh.simplex_sphere, simplex_torus, simplex_cylinder, "
                     "simplex_dual)", nm);
  if (mesh_check_reach(d->mesh->v, d->mesh->nv, "simplex", nm)) return -1;
  if (d->model != LOOM_SIMPLEX_MRA && d->model != LOOM_SIMPLEX_SHAPE)
    return loom_fail("simplex '%s': unknown model %d", nm, d->model);
  if (d->integrator != LOOM_INTEGRATOR_CENTRAL && d->integrator != LOOM_INTEGRATOR_EULER &&
      d->integrator != LOOM_INTEGRATOR_HEUN && d->integrator != LOOM_INTEGRATOR_RK4)
    return loom_fail("simplex '%s': 'integrator' must be 'central', 'euler', 'heun' or 'rk4'", nm);
  if (check_range(nm, "k", d->k, 0, 1e9) || check_range(nm, "k_anchor", d->k_anchor, 0, 1e9) ||
      check_range(nm, "damping", d->damping, 0, 1e9) || check_range(nm, "thickness", d->thickness, 0, 1) ||
      check_range(nm, "friction", d->friction, 0, 10) || check_range(nm, "kp", d->kp, 0, 1e9) ||
      check_range(nm, "kd", d->kd, 0, 1e9))
    return -1;
  if (!isfinite(d->mass) || !(d->mass > 0) || d->mass > 1e6)
    return loom_fail("simplex '%s': 'mass' (kg per vertex) must be a number in (0, 1e6], got %g", nm, d->mass);
  if (d->substeps < 0 || d->substeps > WORLD_MAX_SUBSTEPS)
    return loom_fail("simplex '%s': 'substeps' must be an integer in [0, %d] (0 = automatic), got %d", nm,
                     WORLD_MAX_SUBSTEPS, d->substeps);
  if (d->response != LOOM_RESPONSE_PROJECT && d->response != LOOM_RESPONSE_PD)
    return loom_fail("simplex '%s': 'response' must be 'project' or 'pd'", nm);
  if (d->hold != 0 && d->hold != 1) return loom_fail("simplex '%s': 'hold' must be 0 or 1, got %d", nm, d->hold);
  if (d->self_collision != 0 && d->self_collision != 1)
    return loom_fail("simplex '%s': 'self_collision' must be 0 or 1, got %d", nm, d->self_collision);
  if (d->passes < 1 || d->passes > 1000)
    return loom_fail("simplex '%s': 'passes' must be an integer in [1, 1000], got %d", nm, d->passes);
  if (loom_simplex_mesh_check(d->mesh) != 0) {
    loom_error_prefix("simplex");
    return -1;
  }
  return 0;
}

static void simplex_free(void *data) {
  simplex_body *b = data;
  if (!b) return;
  particles_free(&b->p);
  core_free(b->model.nbr), core_free(b->model.edge), core_free(b->model.orig);
  core_free(b->state.rest), core_free(b->state.rot), core_free(b->state.pd), core_free(b->state.held);
  core_free(b->scratch.rot_tmp);
  core_free(b);
}

static void rotations_identity(simplex_body *b) {
  for (int i = 0; i < b->p.n; i++) {
    double *q = b->state.rot + 4 * i;
    q[0] = 1, q[1] = q[2] = q[3] = 0;
  }
  b->state.rot_body[0] = 1, b->state.rot_body[1] = b->state.rot_body[2] = b->state.rot_body[3] = 0;
}

static void update_substeps(simplex_body *b, double dt);

static int simplex_create(loom_world *w, int slot, const void *vdef) {
  const loom_simplex_def *def = vdef;
  if (validate(def) != 0) return -1;
  const loom_simplex_mesh *mesh = def->mesh;
  simplex_body *b = core_calloc(1, sizeof *b);
  if (!b) return -1;
  w->bodies[slot].data = b;
  w->bodies[slot].pts = &b->p;
  const int n = mesh->nv;
  if (particles_alloc(&b->p, n, mesh->nt) != 0) return -1;
  b->model.ne = mesh->ne;
  b->model.nbr = core_alloc((size_t)n * 3, sizeof(int32_t));
  b->model.edge = core_alloc((size_t)mesh->ne * 2, sizeof(int32_t));
  b->model.orig = core_alloc((size_t)n, sizeof(vec3));
  b->state.rest = core_alloc((size_t)n, sizeof(vec3));
  b->state.rot = core_alloc((size_t)n * 4, sizeof(double));
  b->state.pd = core_calloc((size_t)n, sizeof(vec3));
  b->state.held = core_calloc((size_t)n, sizeof(uint8_t));
  b->scratch.rot_tmp = core_alloc((size_t)n * 4, sizeof(double));
  if (!b->model.nbr || !b->model.edge || !b->model.orig || !b->state.rest || !b->state.rot || !b->state.pd ||
      !b->state.held || !b->scratch.rot_tmp)
    return -1;
  memcpy(b->model.nbr, mesh->nbr, sizeof(int32_t) * 3 * (size_t)n);
  memcpy(b->model.edge, mesh->edge, sizeof(int32_t) * 2 * (size_t)mesh->ne);
  memcpy(b->model.orig, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->state.rest, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->p.x, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->p.rest, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->p.tri, mesh->tri, sizeof(int32_t) * 3 * (size_t)mesh->nt);
  rotations_identity(b);
  double s2 = 0;
  for (int e = 0; e < mesh->ne; e++) s2 += v3_dist2(mesh->v[mesh->edge[2 * e]], mesh->v[mesh->edge[2 * e + 1]]);
  b->model.scale2 = mesh->ne ? s2 / mesh->ne : 1;
  simplex_params *P = &b->params;
  P->model = def->model;
  P->integrator = def->integrator;
  P->k = def->k;
  P->k_anchor = def->k_anchor;
  P->damping = def->damping;
  P->substeps_user = def->substeps;
  P->response = def->response;
  P->kp = def->kp;
  P->kd = def->kd;
  P->hold = def->hold;
  P->passes = def->passes;
  b->p.thickness = def->thickness;
  b->p.friction = def->friction;
  b->p.self_collision = def->self_collision;
  for (int i = 0; i < n; i++) {
    b->p.m[i] = def->mass;
    b->p.inv_m[i] = 1.0 / def->mass;
    b->p.total_mass += def->mass;
  }
  update_substeps(b, w->dt);
  return 0;
}

/* ---- parameters -------------------------------------------------------------------------------- */

#define SIMPLEX_PARAM(name, unit, lo, hi, flags, field, doc) {name, unit, doc, lo, hi, flags, offsetof(simplex_body, field)}

static const param_spec simplex_param_table[] = {
  SIMPLEX_PARAM("k", "N/m", 0, 1e9, PARAM_LIVE, params.k, "neighbour coupling: each of the three rest offsets is a spring"),
  SIMPLEX_PARAM("k_anchor", "N/m", 0, 1e9, PARAM_LIVE, params.k_anchor,
                "anchor to the rest position (004's k_r; simplex_shape: to the shape-matched rest position)"),
  SIMPLEX_PARAM("damping", "N s/m", 0, 1e9, PARAM_LIVE, params.damping, "b: velocity damping per vertex"),
  SIMPLEX_PARAM("thickness", "m", 0, 1, PARAM_LIVE, p.thickness, "tools and other bodies keep this far from the surface"),
  SIMPLEX_PARAM("friction", "", 0, 10, PARAM_LIVE, p.friction,
                "004's tool friction mu: a tangential mu |PDV| along the tool's motion; Coulomb against other bodies"),
  SIMPLEX_PARAM("self_collision", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, p.self_collision,
                "1: the surface never passes through itself (the collision pipeline)"),
  SIMPLEX_PARAM("response", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, params.response,
                "tool response: 0 project (moved out, re-queried until none), 1 pd (004's PD-tracked target)"),
  SIMPLEX_PARAM("kp", "N/m", 0, 1e9, PARAM_LIVE, params.kp, "pd response: proportional gain k_p"),
  SIMPLEX_PARAM("kd", "N s/m", 0, 1e9, PARAM_LIVE, params.kd, "pd response: derivative gain k_d"),
  SIMPLEX_PARAM("hold", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, params.hold,
                "1: a vertex touching a tool that did not move this step is not deformed (004's hold)"),
  SIMPLEX_PARAM("passes", "", 1, 1000, PARAM_LIVE | PARAM_INTEGER, params.passes,
                "project response: re-query passes per substep before a remaining penetration is reported"),
  SIMPLEX_PARAM("substeps", "", 0, WORLD_MAX_SUBSTEPS, PARAM_LIVE | PARAM_INTEGER, params.substeps_user,
                "substeps per step; 0 = automatic from the stability estimate"),
  SIMPLEX_PARAM("stable_substep", "s", 0, 0, PARAM_READONLY, derived.h_stable, "largest stable substep of the estimate"),
  SIMPLEX_PARAM("model", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.model, "loom_simplex_model (1 mra, 2 shape)"),
  SIMPLEX_PARAM("integrator", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.integrator,
                "loom_integrator (6 central, 7 euler, 8 heun, 3 rk4)"),
};

/* Stable substep: central differences (and the damping they treat centrally) need h w < 2; RK4
 * h w < 2.8; explicit Euler and Heun amplify an undamped oscillation at any step (004's
 * comparison), so they get h w <= 0.5 and rely on the damping. */
static void update_substeps(simplex_body *b, double dt) {
  const double w2 = simplex_omega2(b);
  double h = dt;
  if (w2 > 0) {
    const double w = sqrt(w2);
    switch (b->params.integrator) {
    case LOOM_INTEGRATOR_CENTRAL: h = 1.8 / w; break;
    case LOOM_INTEGRATOR_RK4: h = 2.5 / w; break;
    default: h = 0.5 / w; break;
    }
  }
  b->derived.h_stable = h;
  double S = ceil(dt / h - 1e-9);
  if (!(S >= 1)) S = 1;
  if (S > WORLD_MAX_SUBSTEPS) S = WORLD_MAX_SUBSTEPS;
  b->derived.substeps_auto = (int)S;
}

static double simplex_param_value(const body_slot *s, const param_spec *p, double stored) {
  const simplex_body *b = simplex_of(s);
  if (!strcmp(p->name, "substeps") && stored == 0) return b->derived.substeps_auto;
  return stored;
}

static void simplex_param_changed(loom_world *w, body_slot *s, const param_spec *p) {
  simplex_body *b = simplex_of(s);
  if (p && !strcmp(p->name, "substeps")) b->derived.warned_substeps = 0;
  update_substeps(b, w->dt);
}

static const state_field simplex_state_fields[] = {
  {"rest", offsetof(simplex_body, state.rest), sizeof(vec3), 1},
  {"rotation", offsetof(simplex_body, state.rot), 4 * sizeof(double), 1},
  {"body_rotation", offsetof(simplex_body, state.rot_body), 4 * sizeof(double), 0},
  {"pd_target", offsetof(simplex_body, state.pd), sizeof(vec3), 1},
  {"held", offsetof(simplex_body, state.held), sizeof(uint8_t), 1},
};

static uint64_t simplex_model_hash(const body_slot *s, uint64_t h) {
  const simplex_body *b = simplex_of(s);
  h = core_fnv1a(h, &b->p.n, sizeof b->p.n);
  h = core_fnv1a(h, b->model.nbr, sizeof(int32_t) * 3 * (size_t)b->p.n);
  h = core_fnv1a(h, b->model.orig, sizeof(vec3) * (size_t)b->p.n);
  h = core_fnv1a(h, &b->params.model, sizeof b->params.model);
  h = core_fnv1a(h, &b->params.integrator, sizeof b->params.integrator);
  return h;
}

static int simplex_transplant(body_slot *dst, const body_slot *src) {
  const simplex_body *a = simplex_of(dst), *b = simplex_of(src);
  return a->p.n == b->p.n && !memcmp(a->model.nbr, b->model.nbr, sizeof(int32_t) * 3 * (size_t)a->p.n);
}

static size_t simplex_scratch_bytes(const body_slot *s) {
  const simplex_body *b = simplex_of(s);
  return (size_t)b->p.n * sizeof(vec3) * 6 + (size_t)b->p.nt * sizeof(int32_t) + 4096;
}

static double simplex_energy_of(const body_slot *s) {
  const simplex_body *b = simplex_of(s);
  return simplex_energy(b, b->p.x);
}

/* ---- the step ------------------------------------------------------------------------------- */

#define SIMPLEX_MANY_SUBSTEPS 200

static int simplex_substeps(loom_world *w, body_slot *s, double dt) {
  simplex_body *b = simplex_of(s);
  if (b->p.frozen) return 1;
  update_substeps(b, dt); /* masses may have been written from Lua */
  const int S = b->params.substeps_user > 0 ? b->params.substeps_user : b->derived.substeps_auto;
  if (!b->derived.warned_substeps) {
    if (b->params.substeps_user > 0 && dt / S > b->derived.h_stable * 1.0001) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "simplex '%s': %d substeps per step is below the stable estimate of %d (substep %.3g s > %.3g s); "
                    "it may diverge",
                    s->name, S, b->derived.substeps_auto, dt / S, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    } else if (b->params.substeps_user == 0 && S > SIMPLEX_MANY_SUBSTEPS) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "simplex '%s': needs %d substeps per step at dt = %.3g s (stable substep %.3g s); lower 'k' or "
                    "'k_anchor' or raise 'mass'",
                    s->name, S, dt, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    }
  }
  return S;
}

static void simplex_begin(loom_world *w, body_slot *s, const step_info *si) {
  (void)si;
  simplex_body *b = simplex_of(s);
  const int n = b->p.n;
  arena *A = &w->scratch;
  simplex_scratch *sc = &b->scratch;
  sc->F = ARENA_NEW(A, vec3, n, "simplex forces");
  sc->a = ARENA_NEW(A, vec3, n, "simplex accelerations");
  sc->x1 = ARENA_NEW(A, vec3, n, "simplex stage positions");
  sc->v1 = ARENA_NEW(A, vec3, n, "simplex stage velocities");
  sc->xacc = ARENA_NEW(A, vec3, n, "simplex position sums");
  sc->vacc = ARENA_NEW(A, vec3, n, "simplex velocity sums");
  sc->tool_contacts = sc->tool_unresolved = 0;
  /* the collision pipeline's repulsion spring: the surface's own stiffness */
  b->p.stiffness = b->params.k + b->params.k_anchor;
  if (!sc->F || !sc->a || !sc->x1 || !sc->v1 || !sc->xacc || !sc->vacc) {
    world_message(w, LOOM_ERROR, (int)(s - w->bodies), "simplex '%s': out of memory in step; body frozen", s->name);
    b->p.frozen = 1;
  }
}

/* Accelerations at (x, v): internal forces (rotations warm-started from rot), external forces,
 * gravity, the PD response's force toward its target, damping -b v. */
static void accelerations(const simplex_body *b, const vec3 *x, const vec3 *v, vec3 g, vec3 *F, vec3 *a, double *rot,
                          double *rot_body) {
  simplex_forces(b, x, F, rot, rot_body);
  const double bd = b->params.damping;
  const int pd = b->params.response == LOOM_RESPONSE_PD;
  for (int i = 0; i < b->p.n; i++) {
    vec3 f = v3_add(F[i], b->p.f[i]);
    f = v3_madd(f, v[i], -bd);
    if (pd) f = v3_add(f, v3_sub(v3_scale(b->state.pd[i], b->params.kp), v3_scale(v[i], b->params.kd)));
    a[i] = b->p.inv_m[i] > 0 ? v3_madd(g, f, 1.0 / b->p.m[i]) : v3(0, 0, 0);
  }
}

static int fixed(const simplex_body *b, int i) { return b->p.inv_m[i] == 0 || b->state.held[i]; }

static void simplex_predict(loom_world *w, body_slot *s, const step_info *si) {
  simplex_body *b = simplex_of(s);
  if (b->p.frozen) return;
  const int n = b->p.n;
  const double h = si->h;
  const vec3 g = w->gravity;
  vec3 *x = b->p.x, *v = b->p.v;
  simplex_scratch *sc = &b->scratch;
  /* a vertex held by a tool that did not move keeps its place (004's contact hold) */
  for (int i = 0; i < n; i++)
    if (b->state.held[i] && b->p.inv_m[i] > 0) v[i] = v3(0, 0, 0);
  double *rot = b->state.rot, *rotb = b->state.rot_body;
  switch (b->params.integrator) {
  case LOOM_INTEGRATOR_CENTRAL: {
    /* m (x+ - 2x + x-)/h^2 + b (x+ - x-)/(2h) = F(x): with u the velocity over the last substep,
     * u+ = ((m - b h/2) u + h F) / (m + b h/2), x+ = x + h u+ (the PD response's damping likewise) */
    simplex_forces(b, x, sc->F, rot, rotb);
    const double bd = b->params.damping + (b->params.response == LOOM_RESPONSE_PD ? b->params.kd : 0);
    const int pd = b->params.response == LOOM_RESPONSE_PD;
    for (int i = 0; i < n; i++) {
      if (fixed(b, i)) continue;
      const double m = b->p.m[i];
      vec3 f = v3_add(v3_add(sc->F[i], b->p.f[i]), v3_scale(g, m));
      if (pd) f = v3_madd(f, b->state.pd[i], b->params.kp);
      const vec3 u = v3_scale(v3_madd(v3_scale(v[i], m - 0.5 * bd * h), f, h), 1.0 / (m + 0.5 * bd * h));
      sc->x1[i] = v3_madd(x[i], u, h);
      v[i] = u;
    }
    for (int i = 0; i < n; i++)
      if (!fixed(b, i)) x[i] = sc->x1[i];
    break;
  }
  case LOOM_INTEGRATOR_EULER: {
    accelerations(b, x, v, g, sc->F, sc->a, rot, rotb);
    for (int i = 0; i < n; i++) {
      if (fixed(b, i)) continue;
      x[i] = v3_madd(x[i], v[i], h);
      v[i] = v3_madd(v[i], sc->a[i], h);
    }
    break;
  }
  case LOOM_INTEGRATOR_HEUN: {
    accelerations(b, x, v, g, sc->F, sc->a, rot, rotb);
    memcpy(sc->rot_tmp, rot, sizeof(double) * 4 * (size_t)n);
    double rb[4] = {rotb[0], rotb[1], rotb[2], rotb[3]};
    for (int i = 0; i < n; i++) {
      sc->x1[i] = fixed(b, i) ? x[i] : v3_madd(x[i], v[i], h);
      sc->v1[i] = fixed(b, i) ? v[i] : v3_madd(v[i], sc->a[i], h);
    }
    accelerations(b, sc->x1, sc->v1, g, sc->F, sc->vacc, sc->rot_tmp, rb);
    for (int i = 0; i < n; i++) {
      if (fixed(b, i)) continue;
      x[i] = v3_madd(x[i], v3_add(v[i], sc->v1[i]), 0.5 * h);
      v[i] = v3_madd(v[i], v3_add(sc->a[i], sc->vacc[i]), 0.5 * h);
    }
    break;
  }
  default: { /* RK4 on (x, v): stages at x + c h kx, v + c h kv, kx = the previous stage's velocity */
    static const double cw[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, ch[4] = {0, 0.5, 0.5, 1};
    vec3 *xs = sc->x1, *vs = sc->v1;
    for (int i = 0; i < n; i++) sc->xacc[i] = sc->vacc[i] = v3(0, 0, 0), xs[i] = x[i], vs[i] = v[i];
    double rb[4];
    for (int st = 0; st < 4; st++) {
      if (st > 0)
        for (int i = 0; i < n; i++) {
          if (fixed(b, i)) continue;
          xs[i] = v3_madd(x[i], vs[i], ch[st] * h);
          vs[i] = v3_madd(v[i], sc->a[i], ch[st] * h);
        }
      if (st == 0) {
        accelerations(b, xs, vs, g, sc->F, sc->a, rot, rotb);
        memcpy(sc->rot_tmp, rot, sizeof(double) * 4 * (size_t)n);
        memcpy(rb, rotb, sizeof rb);
      } else {
        accelerations(b, xs, vs, g, sc->F, sc->a, sc->rot_tmp, rb);
      }
      for (int i = 0; i < n; i++) {
        sc->xacc[i] = v3_madd(sc->xacc[i], vs[i], cw[st]);
        sc->vacc[i] = v3_madd(sc->vacc[i], sc->a[i], cw[st]);
      }
    }
    for (int i = 0; i < n; i++) {
      if (fixed(b, i)) continue;
      x[i] = v3_madd(x[i], sc->xacc[i], h);
      v[i] = v3_madd(v[i], sc->vacc[i], h);
    }
    break;
  }
  }
  pins_apply(w, (int)(s - w->bodies), si->a1, si->dt);
}

static void simplex_commit(loom_world *w, body_slot *s, const step_info *si) {
  simplex_body *b = simplex_of(s);
  const int n = b->p.n;
  if (b->p.frozen && !b->p.x_step) return;
  w->stats.iterations += si->substeps;
  const char *what = NULL;
  const int bad = b->p.frozen ? -1 : particles_find_divergence(&b->p, &what);
  if (bad >= 0) {
    memcpy(b->p.x, b->p.x_step, sizeof(vec3) * (size_t)n);
    memset(b->p.v, 0, sizeof(vec3) * (size_t)n);
    b->p.frozen = 1;
    world_diverged(w, (int)(s - w->bodies), bad, what, si);
    return;
  }
  if (b->scratch.tool_unresolved > 0 && !b->derived.warned_unresolved) {
    world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                  "simplex '%s': %d tool-triangle pairs still penetrate after %d passes at t = %.3f s; raise 'passes', "
                  "slow the tools or refine the mesh",
                  s->name, b->scratch.tool_unresolved, b->params.passes, w->time + si->dt);
    b->derived.warned_unresolved = 1;
  }
}

const body_kind simplex_kind = {
  .name = "simplex",
  .id = LOOM_KIND_SIMPLEX,
  .params = simplex_param_table,
  .nparams = (int)(sizeof simplex_param_table / sizeof simplex_param_table[0]),
  .param_value = simplex_param_value,
  .param_changed = simplex_param_changed,
  .state = simplex_state_fields,
  .nstate = (int)(sizeof simplex_state_fields / sizeof simplex_state_fields[0]),
  .transplant = simplex_transplant,
  .model_hash = simplex_model_hash,
  .free = simplex_free,
  .scratch_bytes = simplex_scratch_bytes,
  .substeps = simplex_substeps,
  .begin = simplex_begin,
  .predict = simplex_predict,
  .commit = simplex_commit,
  .bounds = particles_bounds,
  .elastic_energy = simplex_energy_of,
};

/* ---- public entry points ------------------------------------------------------------------- */

LOOM_API int loom_simplex_create(loom_world *w, const loom_simplex_def *def) {
  if (!w) return loom_fail("simplex: world is NULL"), 0;
  if (!def) return loom_fail("simplex: definition is NULL"), 0;
  return world_add_body(w, &simplex_kind, def->name, simplex_create, def);
}

static simplex_body *simplex_handle(const loom_world *w, int handle, const char *fn) {
  const int slot = world_slot(w, handle, LOOM_KIND_SIMPLEX, fn);
  return slot < 0 ? NULL : simplex_of(&w->bodies[slot]);
}

LOOM_API int loom_simplex_internal_forces(const loom_world *w, int body, loom_vec3 *out) {
  simplex_body *b = simplex_handle(w, body, "internal_forces");
  if (!b) return -1;
  if (!out) return loom_fail("internal_forces: output is NULL");
  /* the shape model's rotations from copies: asking does not change the state */
  double rb[4] = {b->state.rot_body[0], b->state.rot_body[1], b->state.rot_body[2], b->state.rot_body[3]};
  memcpy(b->scratch.rot_tmp, b->state.rot, sizeof(double) * 4 * (size_t)b->p.n);
  simplex_forces(b, b->p.x, out, b->scratch.rot_tmp, rb);
  return 0;
}

LOOM_API int loom_simplex_set_rest(loom_world *w, int body, int reset) {
  simplex_body *b = simplex_handle(w, body, "set_rest");
  if (!b) return -1;
  const int n = b->p.n;
  if (reset) {
    memcpy(b->p.x, b->model.orig, sizeof(vec3) * (size_t)n);
    memcpy(b->state.rest, b->model.orig, sizeof(vec3) * (size_t)n);
    memset(b->p.v, 0, sizeof(vec3) * (size_t)n);
    memset(b->state.pd, 0, sizeof(vec3) * (size_t)n);
    memset(b->state.held, 0, (size_t)n);
    b->p.frozen = 0;
  } else {
    for (int i = 0; i < n; i++)
      if (!v3_isfinite(b->p.x[i]))
        return loom_fail("simplex '%s': set_rest: vertex %d is not finite", loom_body_name(w, body), i);
    memcpy(b->state.rest, b->p.x, sizeof(vec3) * (size_t)n);
  }
  rotations_identity(b);
  return 0;
}

LOOM_API const int32_t *loom_simplex_neighbors(const loom_world *w, int body) {
  const simplex_body *b = simplex_handle(w, body, "neighbors");
  return b ? b->model.nbr : NULL;
}
