/* cloth_body.c — cloth bodies: definition defaults and validation, lumped masses, live
 * parameters, and the explicit-stability estimate that picks the automatic substep count. */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "cloth/cloth.h"

LOOM_API void loom_cloth_def_default(loom_cloth_def *def, int model) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  if (model != LOOM_MODEL_SPRINGS_PBD && model != LOOM_MODEL_BARAFF_WITKIN) model = LOOM_MODEL_SPRINGS;
  def->model = model;
  def->integrator = model == LOOM_MODEL_BARAFF_WITKIN ? LOOM_INTEGRATOR_IMPLICIT : LOOM_INTEGRATOR_SYMPLECTIC;
  switch (model) {
  case LOOM_MODEL_SPRINGS_PBD:
    /* fractions of the length violation corrected per iteration (001 constraint variant) */
    def->stretch = 1.0;
    def->shear = 1.0;
    def->bend = 0.2;
    break;
  case LOOM_MODEL_BARAFF_WITKIN:
    def->stretch = 1000.0; /* N/m */
    def->shear = 100.0;    /* N/m */
    def->bend = 1e-4;      /* N m */
    break;
  default:
    /* 001's force-variant defaults for structural and shear springs; its bend default (1e-5 N/m)
     * does nothing visible, so bend springs get 1 % of the structural stiffness. */
    def->stretch = 500.0;
    def->shear = 50.0;
    def->bend = 5.0;
    break;
  }
  def->damping = 2e-5;
  def->drag = 0.2;
  def->density = 0.2;
  def->mass = 0;
  def->thickness = 0.004;
  def->friction = 0.3;
  def->substeps = 0;
  def->iterations = 20;
  def->self_collision = 1;
  def->compliance = 0;
  def->cg_tolerance = 1e-3;
  def->cg_iterations = 1000;
}

/* Validates one stiffness-like value for the model; messages name the cloth and the field. */
static int check_stiffness(const char *name, int model, const char *field, double value) {
  if (!isfinite(value) || value < 0)
    return loom_fail("cloth '%s': '%s' must be a number >= 0, got %g", name, field, value);
  if (model == LOOM_MODEL_SPRINGS_PBD && value > 1)
    return loom_fail("cloth '%s': '%s' must be in [0, 1] for model 'springs_pbd' (fraction of the violation "
                     "corrected per iteration), got %g",
                     name, field, value);
  if (value > 1e9) return loom_fail("cloth '%s': '%s' is out of range (> 1e9), got %g", name, field, value);
  return 0;
}

static int check_range(const char *name, const char *field, double value, double lo, double hi) {
  if (!isfinite(value) || value < lo || value > hi)
    return loom_fail("cloth '%s': '%s' must be a number in [%g, %g], got %g", name, field, lo, hi, value);
  return 0;
}

static int validate(const loom_cloth_def *d) {
  const char *nm = d->name;
  if (!d->mesh) return loom_fail("cloth '%s': 'mesh' is required", nm);
  if (d->model < LOOM_MODEL_SPRINGS || d->model > LOOM_MODEL_BARAFF_WITKIN)
    return loom_fail("cloth '%s': unknown model %d", nm, d->model);
  if (d->integrator < LOOM_INTEGRATOR_SYMPLECTIC || d->integrator > LOOM_INTEGRATOR_VERLET_001)
    return loom_fail("cloth '%s': unknown integrator %d", nm, d->integrator);
  if (d->integrator == LOOM_INTEGRATOR_IMPLICIT && d->model == LOOM_MODEL_SPRINGS_PBD)
    return loom_fail("cloth '%s': integrator 'implicit' needs forces: use model 'springs' or 'baraff_witkin' "
                     "('springs_pbd' acts by projection)",
                     nm);
  if (check_range(nm, "compliance", d->compliance, 0, 1e3)) return -1;
  if (!isfinite(d->cg_tolerance) || !(d->cg_tolerance > 0) || d->cg_tolerance > 1)
    return loom_fail("cloth '%s': 'cg_tolerance' must be a number in (0, 1], got %g", nm, d->cg_tolerance);
  if (d->cg_iterations < 1 || d->cg_iterations > 100000)
    return loom_fail("cloth '%s': 'cg_iterations' must be an integer in [1, 100000], got %d", nm, d->cg_iterations);
  if (d->self_collision != 0 && d->self_collision != 1)
    return loom_fail("cloth '%s': 'self_collision' must be true or false (0 or 1), got %d", nm, d->self_collision);
  if (check_stiffness(nm, d->model, "stretch", d->stretch) || check_stiffness(nm, d->model, "shear", d->shear) ||
      check_stiffness(nm, d->model, "bend", d->bend))
    return -1;
  if (check_range(nm, "damping", d->damping, 0, 1) || check_range(nm, "drag", d->drag, 0, 1000) ||
      check_range(nm, "thickness", d->thickness, 0, 1) || check_range(nm, "friction", d->friction, 0, 10) ||
      check_range(nm, "mass", d->mass, 0, 1e9))
    return -1;
  if (d->mass <= 0 && (!isfinite(d->density) || !(d->density > 0) || d->density > 1e6))
    return loom_fail("cloth '%s': 'density' must be a number in (0, 1e6] kg/m^2, got %g", nm, d->density);
  if (d->substeps < 0 || d->substeps > WORLD_MAX_SUBSTEPS)
    return loom_fail("cloth '%s': 'substeps' must be an integer in [0, %d] (0 = automatic), got %d", nm,
                     WORLD_MAX_SUBSTEPS, d->substeps);
  if (d->iterations < 1 || d->iterations > 1000)
    return loom_fail("cloth '%s': 'iterations' must be an integer in [1, 1000], got %d", nm, d->iterations);
  const loom_mesh *m = d->mesh;
  if (m->nt <= 0) return loom_fail("cloth '%s': the mesh has no triangles", nm);
  if (mesh_validate(m) != 0) {
    loom_error_prefix("cloth");
    return -1;
  }
  return mesh_check_reach(m->v, m->nv, "cloth", nm);
}

void cloth_free(void *data) {
  cloth_body *b = data;
  if (!b) return;
  /* (the contact notes first: particles_free clears the whole struct) */
  core_free(b->p.pc_n);
  core_free(b->p.pc_dist);
  core_free(b->p.pc_tri);
  core_free(b->p.pc_push);
  particles_free(&b->p);
  core_free(b->state.dx_prev);
  core_free(b->state.a_prev);
  cloth_solver_free(&b->solver);
  core_free(b->model.springs);
  core_free(b->model.bw);
  core_free(b->model.hinges);
  core_free(b->model.edge);
  core_free(b->model.tri_edge);
  core_free(b->model.edge_owner);
  core_free(b->cache.tri_lo);
  core_free(b->cache.tri_hi);
  bvh_free(&b->cache.tri_tree);
  core_free(b);
}

/* The rest-state spectrum behind the explicit integrators' stable substep (cloth_stability.c):
 * several dozen force evaluations, four fifths of the time it takes to make a cloth. The implicit
 * integrator takes one solve per step whatever the stiffness, so for it the estimate waits until
 * stable_substep or lambda_* is read (cloth_param_value): a 256² implicit cloth is made in 0.3-0.4 s
 * instead of about 2. */
static void estimate_spectrum(cloth_body *b) {
  b->model.spectrum_due = b->params.integrator == LOOM_INTEGRATOR_IMPLICIT;
  if (b->model.spectrum_due) {
    memset(b->model.lambda_unit, 0, sizeof b->model.lambda_unit);
    b->model.spectrum_ok = 0;
    return;
  }
  cloth_estimate_spectrum(b); /* on failure the Gershgorin bound is used */
}

int cloth_create(loom_world *w, int slot, const void *vdef) {
  const loom_cloth_def *def = vdef;
  if (validate(def) != 0) return -1;
  const loom_mesh *mesh = def->mesh;
  cloth_body *b = core_calloc(1, sizeof *b);
  if (!b) return -1;
  w->bodies[slot].data = b;
  w->bodies[slot].pts = &b->p;
  if (particles_alloc(&b->p, mesh->nv, mesh->nt) != 0) return -1;
  b->state.dx_prev = core_calloc((size_t)mesh->nv, sizeof(vec3));
  b->state.a_prev = core_calloc((size_t)mesh->nv, sizeof(vec3));
  if (!b->state.dx_prev || !b->state.a_prev) return -1;
  b->p.pc_n = core_calloc((size_t)mesh->nv, sizeof(vec3));
  b->p.pc_dist = core_calloc((size_t)mesh->nv, sizeof(double));
  b->p.pc_tri = core_calloc((size_t)mesh->nv, 4 * sizeof(int32_t));
  b->p.pc_push = core_calloc((size_t)mesh->nv, sizeof(vec3));
  if (!b->p.pc_n || !b->p.pc_dist || !b->p.pc_tri || !b->p.pc_push) return -1;
  memcpy(b->p.x, mesh->v, sizeof(vec3) * (size_t)b->p.n);
  memcpy(b->p.rest, mesh->v, sizeof(vec3) * (size_t)b->p.n);
  memcpy(b->p.tri, mesh->tri, sizeof(int32_t) * 3 * (size_t)b->p.nt);
  for (int t = 0; t < mesh->nt; t++) {
    if (!cloth_tri_flat(mesh->v[mesh->tri[3 * t]], mesh->v[mesh->tri[3 * t + 1]], mesh->v[mesh->tri[3 * t + 2]])) continue;
    if (!b->p.tri_flat && !(b->p.tri_flat = core_calloc((size_t)mesh->nt, 1))) return -1;
    b->p.tri_flat[t] = 1;
  }
  b->params.model = def->model;
  b->params.integrator = def->integrator;
  b->params.stretch = def->stretch;
  b->params.shear = def->shear;
  b->params.bend = def->bend;
  b->params.damping = def->damping;
  b->params.drag = def->drag;
  b->p.thickness = def->thickness;
  b->p.friction = def->friction;
  b->p.self_collision = def->self_collision;
  /* resting pairs with other particle bodies (a cloth lying on another cloth or on a solid): with
   * Bridson's rule alone a vertex falls g h^2 into the thickness each substep and is thrown back,
   * and an implicit cloth on another cloth hopped (docs/architecture.md, "Resting contact") */
  b->p.resting = 2;
  /* the explicit integrators' v extrapolates the substep's mean velocity with a_prev, where the
   * collision pipeline adds a resting pair's force (particles.accel) */
  b->p.accel = def->integrator == LOOM_INTEGRATOR_IMPLICIT ? NULL : b->state.a_prev;
  b->params.substeps_user = def->substeps;
  b->params.iterations = def->iterations;
  b->params.compliance = def->compliance;
  b->params.cg_tolerance = def->cg_tolerance;
  b->params.cg_iterations = def->cg_iterations;
  b->params.preconditioner = CLOTH_PRECOND_MULTIGRID;
  b->params.relative_damping = 0;
  b->params.area_exponent = 0.5;
  b->params.strain_limit = 0;
  b->params.self_friction = 0;
  b->params.newton_iterations = 4;
  b->params.newton_tolerance = 0.1;
  b->derived.wa_exponent = 0.5;
  b->derived.over_since = -1;
  b->model.grid_nx = mesh->grid_nx;
  b->model.grid_ny = mesh->grid_ny;

  /* Lumped masses: each triangle gives a third of density x area to each corner (001). */
  double total = 0;
  for (int t = 0; t < b->p.nt; t++) {
    double a = 0.5 * mesh_tri_area2(mesh, t);
    for (int k = 0; k < 3; k++) b->p.m[b->p.tri[3 * t + k]] += a / 3.0;
    total += a;
  }
  double scale = def->mass > 0 ? def->mass / total : def->density;
  if (!(total > 0) || !isfinite(scale)) return loom_fail("cloth '%s': the mesh has zero area", def->name);
  for (int i = 0; i < b->p.n; i++) {
    b->p.m[i] *= scale;
    if (!(b->p.m[i] > 0))
      return loom_fail("cloth '%s': vertex %d belongs to no triangle of positive area (it would have no mass)",
                       def->name, i);
    b->p.inv_m[i] = 1.0 / b->p.m[i];
    b->p.total_mass += b->p.m[i];
  }

  switch (b->params.model) {
  case LOOM_MODEL_SPRINGS:
  case LOOM_MODEL_SPRINGS_PBD:
    if (springs_build(b, mesh) != 0) return -1;
    break;
  case LOOM_MODEL_BARAFF_WITKIN:
    if (bw_build(b, mesh) != 0) return -1;
    break;
  }
  if (cloth_build_elements(b, mesh) != 0) return -1;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT && cloth_solver_build(b) != 0) return -1;
  estimate_spectrum(b);
  return 0;
}

/* ---- parameters: the one table (docs/api.md and the Lua checks come from it) ----------------- */

#define CLOTH_PARAM(name, unit, lo, hi, flags, field, doc) {name, unit, doc, lo, hi, flags, offsetof(cloth_body, field)}

static const param_spec cloth_param_table[] = {
  CLOTH_PARAM("stretch", "N/m", 0, 1e9, PARAM_LIVE, params.stretch,
              "springs: structural k; baraff_witkin: stretch stiffness; springs_pbd: fraction in [0, 1]"),
  CLOTH_PARAM("shear", "N/m", 0, 1e9, PARAM_LIVE, params.shear,
              "springs: shear-spring k; baraff_witkin: shear stiffness; springs_pbd: fraction in [0, 1]"),
  CLOTH_PARAM("bend", "N/m or N m", 0, 1e9, PARAM_LIVE, params.bend,
              "springs: bend-spring k (N/m); baraff_witkin: bending stiffness (N m); springs_pbd: fraction"),
  CLOTH_PARAM("damping", "s", 0, 1, PARAM_LIVE, params.damping, "internal damping = damping x stiffness (Rayleigh)"),
  CLOTH_PARAM("drag", "1/s", 0, 1000, PARAM_LIVE, params.drag, "air drag per unit mass against the world's wind"),
  CLOTH_PARAM("thickness", "m", 0, 1, PARAM_LIVE, p.thickness, "other bodies keep at least this far"),
  CLOTH_PARAM("friction", "", 0, 10, PARAM_LIVE, p.friction, "Coulomb coefficient against other bodies"),
  CLOTH_PARAM("self_friction", "", 0, 10, PARAM_LIVE, params.self_friction,
              "implicit: Coulomb coefficient between the cloth's own layers, static and kinetic (0: they slide freely)"),
  CLOTH_PARAM("self_collision", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, p.self_collision,
              "1: the cloth's own triangles and edges never pass through each other (the collision pipeline)"),
  CLOTH_PARAM("substeps", "", 0, WORLD_MAX_SUBSTEPS, PARAM_LIVE | PARAM_INTEGER, params.substeps_user,
              "substeps per step; 0 = automatic from the stability estimate (get returns the count in use)"),
  CLOTH_PARAM("iterations", "", 1, 1000, PARAM_LIVE | PARAM_INTEGER, params.iterations,
              "springs_pbd: constraint iterations per substep"),
  CLOTH_PARAM("compliance", "m/N", 0, 1e3, PARAM_LIVE, params.compliance,
              "springs_pbd: 0 = 001's fractions per iteration; > 0 = XPBD, compliance / fraction per spring"),
  CLOTH_PARAM("cg_tolerance", "", 1e-12, 1, PARAM_LIVE, params.cg_tolerance,
              "implicit: CG stops when the preconditioned residual is this fraction of the right-hand side's"),
  CLOTH_PARAM("cg_iterations", "", 1, 100000, PARAM_LIVE | PARAM_INTEGER, params.cg_iterations,
              "implicit: CG iteration cap per substep (not converged: a warning, the step completes)"),
  CLOTH_PARAM("preconditioner", "", 1, 2, PARAM_LIVE | PARAM_INTEGER, params.preconditioner,
              "implicit: CG preconditioner (1 block-Jacobi, 2 multigrid: smoothed aggregation V-cycle)"),
  CLOTH_PARAM("relative_damping", "N s/m", 0, 1e6, PARAM_LIVE, params.relative_damping,
              "springs: 001's damping of the full relative velocity, -c (v_i - v_j) on every spring (0: off)"),
  CLOTH_PARAM("area_exponent", "", 0.5, 1, PARAM_LIVE, params.area_exponent,
              "baraff_witkin: stretch and shear conditions weighted by area^p (0.5: BW, energy per area; 0.75: 001)"),
  CLOTH_PARAM("strain_limit", "", 0, 10, PARAM_LIVE, params.strain_limit,
              "largest edge stretch l/L - 1 after each substep: longer edges are shortened (Provot 1995; 0: off)"),
  CLOTH_PARAM("newton_iterations", "", 1, 100, PARAM_LIVE | PARAM_INTEGER, params.newton_iterations,
              "implicit: Newton iterations per substep at most; 1 = Baraff-Witkin's single linearised step"),
  CLOTH_PARAM("newton_tolerance", "", 0, 1000, PARAM_LIVE, params.newton_tolerance,
              "implicit: iterate again while the linear model missed the stretch and shear energy by more than this fraction of the kinetic plus elastic energy"),
  CLOTH_PARAM("stable_substep", "s", 0, 0, PARAM_READONLY, derived.h_stable, "largest stable substep of the estimate"),
  CLOTH_PARAM("lambda_stretch", "1/s^2", 0, 0, PARAM_READONLY, model.lambda_unit[FAM_STRUCTURAL],
              "lambda_max(M^-1/2 K M^-1/2) of the stretch family at unit stiffness"),
  CLOTH_PARAM("lambda_shear", "1/s^2", 0, 0, PARAM_READONLY, model.lambda_unit[FAM_SHEAR],
              "the same for the shear family"),
  CLOTH_PARAM("lambda_bend", "1/s^2", 0, 0, PARAM_READONLY, model.lambda_unit[FAM_BEND],
              "the same for the bend family"),
  CLOTH_PARAM("model", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.model,
              "loom_model (1 springs, 2 springs_pbd, 3 baraff_witkin)"),
  CLOTH_PARAM("integrator", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.integrator,
              "loom_integrator (1 symplectic, 2 verlet, 3 rk4, 4 implicit, 5 verlet_001)"),
};

static int cloth_check_param(const body_slot *s, const param_spec *p, double value) {
  const cloth_body *b = cloth_of(s);
  if (!strcmp(p->name, "stretch") || !strcmp(p->name, "shear") || !strcmp(p->name, "bend"))
    return check_stiffness(s->name, b->params.model, p->name, value);
  return 0;
}

static double cloth_param_value(const body_slot *s, const param_spec *p, double stored) {
  const cloth_body *b = cloth_of(s);
  if (!strcmp(p->name, "substeps") && stored == 0)
    return b->params.integrator == LOOM_INTEGRATOR_IMPLICIT ? 1 : b->derived.substeps_auto;
  if (b->model.spectrum_due && (!strcmp(p->name, "stable_substep") || !strncmp(p->name, "lambda_", 7))) {
    /* an implicit cloth's estimate, made now that it is asked for (a derived value: reading it
     * changes no state) */
    cloth_body *m = (cloth_body *)b;
    m->model.spectrum_due = 0;
    cloth_estimate_spectrum(m);
    cloth_update_substeps(m, m->derived.dt);
    double v;
    memcpy(&v, (const char *)s->data + p->offset, sizeof v);
    return v;
  }
  return stored;
}

/* Parameters of one model or of the implicit integrator, with their defaults: set to anything
 * else on a cloth that ignores them, the world says so once (they keep the value, which acts if
 * the cloth is later rebuilt with that model). */
static const struct ignored_param {
  const char *name;
  size_t offset;  /* of its value in cloth_body */
  int integer;    /* an int, else a double */
  int model;      /* the model that uses it, 0: any */
  int implicit;   /* 1: only the implicit integrator uses it */
  double value;   /* its default */
  const char *who;
} ignored_params[] = {
  {"iterations", offsetof(cloth_body, params.iterations), 1, LOOM_MODEL_SPRINGS_PBD, 0, 20, "model 'springs_pbd'"},
  {"compliance", offsetof(cloth_body, params.compliance), 0, LOOM_MODEL_SPRINGS_PBD, 0, 0, "model 'springs_pbd'"},
  {"relative_damping", offsetof(cloth_body, params.relative_damping), 0, LOOM_MODEL_SPRINGS, 0, 0, "model 'springs'"},
  {"area_exponent", offsetof(cloth_body, params.area_exponent), 0, LOOM_MODEL_BARAFF_WITKIN, 0, 0.5,
   "model 'baraff_witkin'"},
  {"cg_tolerance", offsetof(cloth_body, params.cg_tolerance), 0, 0, 1, 1e-3, "integrator 'implicit'"},
  {"cg_iterations", offsetof(cloth_body, params.cg_iterations), 1, 0, 1, 1000, "integrator 'implicit'"},
  {"preconditioner", offsetof(cloth_body, params.preconditioner), 1, 0, 1, CLOTH_PRECOND_MULTIGRID,
   "integrator 'implicit'"},
  {"newton_iterations", offsetof(cloth_body, params.newton_iterations), 1, 0, 1, 4, "integrator 'implicit'"},
  {"newton_tolerance", offsetof(cloth_body, params.newton_tolerance), 0, 0, 1, 0.1, "integrator 'implicit'"},
};

static void warn_ignored(loom_world *w, body_slot *s, const char *only) {
  cloth_body *b = cloth_of(s);
  static const char *const model_names[] = {"?", "springs", "springs_pbd", "baraff_witkin"};
  for (unsigned k = 0; k < sizeof ignored_params / sizeof ignored_params[0]; k++) {
    const struct ignored_param *q = &ignored_params[k];
    if ((only && strcmp(only, q->name)) || (b->derived.warned_ignored >> k & 1u)) continue;
    const int used = q->implicit ? b->params.integrator == LOOM_INTEGRATOR_IMPLICIT : b->params.model == q->model;
    const char *at = (const char *)b + q->offset;
    double value;
    if (q->integer) {
      int iv;
      memcpy(&iv, at, sizeof iv);
      value = iv;
    } else
      memcpy(&value, at, sizeof value);
    if (used || value == q->value) continue;
    const int m = b->params.model >= 1 && b->params.model <= 3 ? b->params.model : 0;
    world_message(w, LOOM_WARNING, (int)(s - w->bodies), "cloth '%s': '%s' = %g has no effect: it applies to %s only (this cloth: %s)",
                  s->name, q->name, value, q->who,
                  q->implicit ? "an explicit integrator" : model_names[m]);
    b->derived.warned_ignored |= 1u << k;
  }
}

/* p == NULL: the body was just made or the world's dt changed. */
static void cloth_param_changed(loom_world *w, body_slot *s, const param_spec *p) {
  cloth_body *b = cloth_of(s);
  warn_ignored(w, s, p ? p->name : NULL);
  if (p && !strcmp(p->name, "substeps")) b->derived.warned_substeps = 0;
  if (p && !strcmp(p->name, "strain_limit")) b->derived.warned_strain = 0;
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN && b->params.area_exponent != b->derived.wa_exponent) {
    /* set, or loaded from a checkpoint: the energy weights change, and so does the spectrum the
     * stable substep comes from */
    b->derived.wa_exponent = b->params.area_exponent;
    bw_set_area_exponent(b);
    estimate_spectrum(b);
  }
  /* friction, self_friction, thickness and iterations do not change the stability estimate */
  if (!p || (strcmp(p->name, "friction") && strcmp(p->name, "self_friction") && strcmp(p->name, "thickness") &&
             strcmp(p->name, "iterations")))
    cloth_update_substeps(b, w->dt);
}

static const state_field cloth_state_fields[] = {
  {"dx_prev", offsetof(cloth_body, state.dx_prev), sizeof(vec3), 1},
  {"a_prev", offsetof(cloth_body, state.a_prev), sizeof(vec3), 1},
  {"prev_h", offsetof(cloth_body, state.prev_h), sizeof(double), 0},
  {"pc_n", offsetof(cloth_body, p.pc_n), sizeof(vec3), 1},
  {"pc_dist", offsetof(cloth_body, p.pc_dist), sizeof(double), 1},
  {"pc_tri", offsetof(cloth_body, p.pc_tri), 4 * sizeof(int32_t), 1},
};

/* Topology, rest shape, masses and the choices fixed at creation (model, integrator). */
static uint64_t cloth_model_hash(const body_slot *s, uint64_t h) {
  const cloth_body *b = cloth_of(s);
  h = core_fnv1a(h, &b->p.n, sizeof b->p.n);
  h = core_fnv1a(h, &b->p.nt, sizeof b->p.nt);
  h = core_fnv1a(h, b->p.tri, sizeof(int32_t) * 3 * (size_t)b->p.nt);
  h = core_fnv1a(h, b->p.rest, sizeof(vec3) * (size_t)b->p.n);
  h = core_fnv1a(h, b->p.m, sizeof(double) * (size_t)b->p.n);
  h = core_fnv1a(h, &b->params.model, sizeof b->params.model);
  h = core_fnv1a(h, &b->params.integrator, sizeof b->params.integrator);
  return h;
}

/* Hot reload: the topology must match (the world checked the vertex and triangle counts); pins as
 * particles_transplant_pins says. */
static int cloth_transplant(body_slot *dst, const body_slot *src) {
  cloth_body *a = cloth_of(dst);
  const cloth_body *b = cloth_of(src);
  if (memcmp(a->p.tri, b->p.tri, sizeof(int32_t) * 3 * (size_t)a->p.nt)) return 0;
  particles_transplant_pins(&a->p, &b->p);
  return 1;
}

static size_t cloth_scratch_bytes(const body_slot *s) {
  const cloth_body *b = cloth_of(s);
  return (size_t)b->p.n * sizeof(vec3) * 10 + (size_t)b->model.fam_start[FAM_COUNT] * sizeof(double) + 8192;
}

static double cloth_energy(const body_slot *s) { return cloth_elastic_energy(cloth_of(s), cloth_of(s)->p.x); }

const body_kind cloth_kind = {
  .name = "cloth",
  .id = LOOM_KIND_CLOTH,
  .params = cloth_param_table,
  .nparams = (int)(sizeof cloth_param_table / sizeof cloth_param_table[0]),
  .check_param = cloth_check_param,
  .param_value = cloth_param_value,
  .param_changed = cloth_param_changed,
  .state = cloth_state_fields,
  .nstate = (int)(sizeof cloth_state_fields / sizeof cloth_state_fields[0]),
  .transplant = cloth_transplant,
  .model_hash = cloth_model_hash,
  .free = cloth_free,
  .scratch_bytes = cloth_scratch_bytes,
  .substeps = cloth_substeps,
  .begin = cloth_begin,
  .predict = cloth_predict,
  .after_contacts = cloth_after_contacts,
  .commit = cloth_commit,
  .bounds = particles_bounds,
  .elastic_energy = cloth_energy,
};

/* ---- stability --------------------------------------------------------------------------------- */

void cloth_update_substeps(cloth_body *b, double dt) {
  b->derived.dt = dt;
  if (b->model.spectrum_due) {
    /* implicit, nothing read yet: found with the estimate when asked for (cloth_param_value) */
    b->derived.h_stable = 0;
    b->derived.substeps_auto = 1;
    return;
  }
  double h;
  if (b->params.model == LOOM_MODEL_SPRINGS_PBD) {
    /* Position projection is unconditionally stable; substeps only buy accuracy (001 used
     * 10 substeps of a 60 Hz frame). */
    h = 1.0 / 600.0;
  } else {
    double omega2, margin;
    if (b->model.spectrum_ok) {
      /* Weyl: lambda_max(sum k_f K_f) <= sum k_f lambda_f; 15 % for the stiffening of stretched
       * or bent configurations, which the rest-state estimate does not see */
      const double *lu = b->model.lambda_unit;
      omega2 = 1.15 * (b->params.stretch * lu[FAM_STRUCTURAL] + b->params.shear * lu[FAM_SHEAR] +
                       b->params.bend * lu[FAM_BEND]);
      margin = 0.9;
    } else {
      omega2 = b->params.model == LOOM_MODEL_BARAFF_WITKIN ? bw_omega2_bound(b) : springs_omega2_bound(b);
      margin = 0.85;
    }
    double beta = b->params.damping;
    /* 001's relative damping: a Gershgorin bound of its rate, lambda_max(M^-1/2 L_c M^-1/2) <=
     * max_i sum over i's springs of c (1/m_i + 1/sqrt(m_i m_j)) */
    const double gamma_rel = b->params.model == LOOM_MODEL_SPRINGS ? springs_relative_damping_bound(b) : 0;
    if (omega2 > 0) {
      /* Symplectic Euler on m x'' = -k x - (beta k + c) x' is stable iff
       * h^2 w^2 + 2 h gamma < 4 with gamma = beta w^2 + the relative damping rate (roots of the
       * update's characteristic polynomial inside the unit circle) */
      const double gamma = beta * omega2 + gamma_rel;
      h = (-gamma + sqrt(gamma * gamma + 4.0 * omega2)) / omega2;
      h *= margin;
    } else if (gamma_rel > 0) {
      h = margin * 2.0 / gamma_rel;
    } else {
      h = dt;
    }
    if (b->params.integrator == LOOM_INTEGRATOR_RK4) h *= 1.41; /* RK4 reaches 2.83 on the imaginary axis */
    if (b->params.drag > 0 && h > 1.0 / b->params.drag) h = 1.0 / b->params.drag;
  }
  b->derived.h_stable = h;
  double s = ceil(dt / h - 1e-9);
  if (!(s >= 1)) s = 1;
  if (s > WORLD_MAX_SUBSTEPS) s = WORLD_MAX_SUBSTEPS;
  b->derived.substeps_auto = (int)s;
}

void cloth_internal_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F) {
  memset(F, 0, sizeof(vec3) * (size_t)b->p.n);
  switch (b->params.model) {
  case LOOM_MODEL_SPRINGS: springs_forces(b, x, v, F); break;
  case LOOM_MODEL_BARAFF_WITKIN: bw_forces(b, x, v, F); break;
  default: break; /* springs_pbd acts through position projection, not forces */
  }
}

double cloth_elastic_energy(const cloth_body *b, const vec3 *x) {
  switch (b->params.model) {
  case LOOM_MODEL_SPRINGS: return springs_energy(b, x);
  case LOOM_MODEL_BARAFF_WITKIN: return bw_energy(b, x);
  default: return 0; /* constraint stiffness is dimensionless: no elastic energy is defined */
  }
}

/* ---- public entry points of the cloth kind ---------------------------------------------------- */

static int cmp_edge_key(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Degenerate input a cloth accepts, said once at its creation naming the first case: triangles of
 * (nearly) zero area at rest (the criterion of bw_build: no mass; Baraff-Witkin gives them no
 * stretch or shear element and no hinge), and edges of more than two triangles (no hinge past the
 * first two). The cloth runs; the warning says what it will not do. */
static void warn_degenerate(loom_world *w, int handle, const loom_cloth_def *def) {
  const loom_mesh *m = def->mesh;
  const int slot = world_slot(w, handle, LOOM_KIND_CLOTH, "cloth");
  if (slot < 0) return;
  int flat = 0, first = -1;
  for (int t = 0; t < m->nt; t++) {
    if (cloth_tri_flat(m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]]) && flat++ == 0) first = t;
  }
  if (flat)
    world_message(w, LOOM_WARNING, slot,
                  "cloth '%s': %d triangle%s of zero area (the first: triangle %d, vertices %d %d %d): no mass%s; "
                  "remove %s from the mesh if not meant",
                  def->name, flat, flat == 1 ? "" : "s", first, m->tri[3 * first], m->tri[3 * first + 1],
                  m->tri[3 * first + 2],
                  def->model == LOOM_MODEL_BARAFF_WITKIN ? ", no stretch, shear or bending element" : "",
                  flat == 1 ? "it" : "them");
  int64_t *key = core_alloc((size_t)(3 * m->nt > 0 ? 3 * m->nt : 1), sizeof(int64_t));
  if (!key) return;
  for (int t = 0; t < m->nt; t++)
    for (int k = 0; k < 3; k++) {
      const int64_t a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
      key[3 * t + k] = a < b ? a * ((int64_t)1 << 32) + b : b * ((int64_t)1 << 32) + a;
    }
  qsort(key, (size_t)(3 * m->nt), sizeof(int64_t), cmp_edge_key);
  int over = 0;
  int64_t at = -1;
  for (int i = 0; i + 2 < 3 * m->nt; i++)
    if (key[i] == key[i + 2] && (i == 0 || key[i - 1] != key[i]) && over++ == 0) at = key[i];
  core_free(key);
  if (over)
    world_message(w, LOOM_WARNING, slot,
                  "cloth '%s': %d edge%s shared by more than two triangles (the first: %d-%d): the mesh is not a "
                  "surface there; only two of the triangles get a bending hinge across it",
                  def->name, over, over == 1 ? "" : "s", (int)(at >> 32), (int)(at & 0xffffffff));
}

/* Vertices by position (lexicographic), then index: coincident ones end up side by side. */
typedef struct point_ref {
  vec3 p;
  int32_t i;
} point_ref;
static int cmp_point(const void *a, const void *b) {
  const point_ref *x = a, *y = b;
  if (x->p.x != y->p.x) return x->p.x < y->p.x ? -1 : 1;
  if (x->p.y != y->p.y) return x->p.y < y->p.y ? -1 : 1;
  if (x->p.z != y->p.z) return x->p.z < y->p.z ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* Vertices that lie exactly on another (a seam of pieces made with from_arrays or merge{}, never
 * welded): said once at creation, with what it means and the remedy. */
static void warn_coincident(loom_world *w, int slot, const loom_cloth_def *def) {
  const loom_mesh *m = def->mesh;
  point_ref *idx = core_alloc((size_t)(m->nv > 0 ? m->nv : 1), sizeof(point_ref));
  if (!idx) return;
  for (int i = 0; i < m->nv; i++) idx[i] = (point_ref){m->v[i], i};
  qsort(idx, (size_t)m->nv, sizeof(point_ref), cmp_point);
  int dup = 0, a = -1, b = -1;
  for (int k = 1, lo = 0; k < m->nv; k++) {
    const vec3 p = idx[k - 1].p, q = idx[k].p;
    if (p.x != q.x || p.y != q.y || p.z != q.z) {
      lo = k;
      continue;
    }
    /* idx[k].i lies on idx[lo].i, the lowest-numbered vertex there; the first pair named is the
     * one with the lowest such vertex */
    if (dup++ == 0 || idx[k].i < b) {
      a = idx[lo].i;
      b = idx[k].i;
    }
  }
  core_free(idx);
  if (dup)
    world_message(w, LOOM_WARNING, slot,
                  "cloth '%s': %d vert%s lie exactly on another (the first: vertex %d on vertex %d): the pieces "
                  "they border are not joined there (no element spans them), and their triangles touch, which "
                  "world:interpenetrations() counts as crossing until they come apart; mesh:weld() joins them",
                  def->name, dup, dup == 1 ? "ex" : "ices", b, a);
}

LOOM_API int loom_cloth_create(loom_world *w, const loom_cloth_def *def) {
  if (!w) return loom_fail("cloth: world is NULL"), 0;
  if (!def) return loom_fail("cloth: definition is NULL"), 0;
  const int handle = world_add_body(w, &cloth_kind, def->name, cloth_create, def);
  if (handle > 0) {
    warn_degenerate(w, handle, def);
    const int slot = world_slot(w, handle, LOOM_KIND_CLOTH, "cloth");
    if (slot >= 0) warn_coincident(w, slot, def);
  }
  return handle;
}

static cloth_body *cloth_handle(const loom_world *w, int handle, const char *fn) {
  int slot = world_slot(w, handle, LOOM_KIND_CLOTH, fn);
  return slot < 0 ? NULL : cloth_of(&w->bodies[slot]);
}

LOOM_API int loom_body_spring_counts(const loom_world *w, int handle, int *structural, int *shear, int *bend) {
  cloth_body *b = cloth_handle(w, handle, "spring_counts");
  if (!b) return -1;
  int c[FAM_COUNT];
  for (int f = 0; f < FAM_COUNT; f++) c[f] = b->model.springs ? b->model.fam_start[f + 1] - b->model.fam_start[f] : 0;
  if (structural) *structural = c[FAM_STRUCTURAL];
  if (shear) *shear = c[FAM_SHEAR];
  if (bend) *bend = c[FAM_BEND];
  return 0;
}

LOOM_API int loom_body_internal_forces(loom_world *w, int handle, loom_vec3 *out) {
  cloth_body *b = cloth_handle(w, handle, "internal_forces");
  if (!b) return -1;
  if (!out) return loom_fail("internal_forces: output array is NULL");
  cloth_internal_forces(b, b->p.x, b->p.v, out);
  return 0;
}
