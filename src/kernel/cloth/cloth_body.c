/* soft_cloth.c — cloth bodies: definition defaults and validation, lumped masses, live
 * parameters, and the explicit-stability estimate that picks the automatic substep count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "world/world.h"

LOOM_API void loom_cloth_def_default(loom_cloth_def *def, int model) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  if (model != LOOM_MODEL_SPRINGS_PBD && model != LOOM_MODEL_BARAFF_WITKIN) model = LOOM_MODEL_SPRINGS;
  def->model = model;
  def->integrator = LOOM_INTEGRATOR_SYMPLECTIC;
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
  def->self_collision = 0;
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
  if (d->integrator == LOOM_INTEGRATOR_IMPLICIT)
    return loom_fail("cloth '%s': integrator 'implicit' is not available yet (use 'symplectic', 'verlet' or 'rk4')", nm);
  if (d->integrator < LOOM_INTEGRATOR_SYMPLECTIC || d->integrator > LOOM_INTEGRATOR_RK4)
    return loom_fail("cloth '%s': unknown integrator %d", nm, d->integrator);
  if (d->self_collision)
    return loom_fail("cloth '%s': 'self_collision' is not available yet (cloth-cloth collisions arrive with the "
                     "Bridson pipeline)",
                     nm);
  if (check_stiffness(nm, d->model, "stretch", d->stretch) || check_stiffness(nm, d->model, "shear", d->shear) ||
      check_stiffness(nm, d->model, "bend", d->bend))
    return -1;
  if (check_range(nm, "damping", d->damping, 0, 1) || check_range(nm, "drag", d->drag, 0, 1000) ||
      check_range(nm, "thickness", d->thickness, 0, 1) || check_range(nm, "friction", d->friction, 0, 10) ||
      check_range(nm, "mass", d->mass, 0, 1e9))
    return -1;
  if (d->mass <= 0 && (!isfinite(d->density) || !(d->density > 0) || d->density > 1e6))
    return loom_fail("cloth '%s': 'density' must be a number in (0, 1e6] kg/m^2, got %g", nm, d->density);
  if (d->substeps < 0 || d->substeps > SOFT_MAX_SUBSTEPS)
    return loom_fail("cloth '%s': 'substeps' must be an integer in [0, %d] (0 = automatic), got %d", nm,
                     SOFT_MAX_SUBSTEPS, d->substeps);
  if (d->iterations < 1 || d->iterations > 1000)
    return loom_fail("cloth '%s': 'iterations' must be an integer in [1, 1000], got %d", nm, d->iterations);
  const loom_mesh *m = d->mesh;
  if (m->nt <= 0) return loom_fail("cloth '%s': the mesh has no triangles", nm);
  if (mesh_validate(m) != 0) {
    loom_error_prefix("cloth");
    return -1;
  }
  return 0;
}

static int alloc_arrays(soft_body *b) {
  size_t n = (size_t)b->n;
  b->x = core_calloc(n, sizeof(vec3));
  b->v = core_calloc(n, sizeof(vec3));
  b->x_prev = core_calloc(n, sizeof(vec3));
  b->f = core_calloc(n, sizeof(vec3));
  b->rest = core_calloc(n, sizeof(vec3));
  b->m = core_calloc(n, sizeof(double));
  b->mass = core_calloc(n, sizeof(double));
  b->inv_m = core_calloc(n, sizeof(double));
  b->pin_group = core_alloc(n, sizeof(int32_t));
  b->contact = core_calloc(n, 1);
  b->tri = core_alloc((size_t)b->nt * 3, sizeof(int32_t));
  if (!b->x || !b->v || !b->x_prev || !b->f || !b->rest || !b->m || !b->mass || !b->inv_m || !b->pin_group ||
      !b->contact || !b->tri)
    return -1;
  return 0;
}

void soft_free(soft_body *b) {
  core_free(b->x);
  core_free(b->v);
  core_free(b->x_prev);
  core_free(b->f);
  core_free(b->rest);
  core_free(b->m);
  core_free(b->mass);
  core_free(b->inv_m);
  core_free(b->pin_group);
  core_free(b->contact);
  core_free(b->tri);
  core_free(b->springs);
  core_free(b->bw);
  core_free(b->hinges);
  core_free(b->edge);
  core_free(b->tri_edge);
  core_free(b->edge_owner);
  core_free(b->tri_lo);
  core_free(b->tri_hi);
  bvh_free(&b->tri_tree);
  memset(b, 0, sizeof *b);
}

int soft_create(loom_world *w, int slot, const loom_cloth_def *def) {
  if (validate(def) != 0) return -1;
  const loom_mesh *mesh = def->mesh;
  soft_body *b = core_calloc(1, sizeof *b);
  if (!b) return -1;
  w->bodies[slot].soft = b;
  b->n = mesh->nv;
  b->nt = mesh->nt;
  if (alloc_arrays(b) != 0) return -1;
  memcpy(b->x, mesh->v, sizeof(vec3) * (size_t)b->n);
  memcpy(b->rest, mesh->v, sizeof(vec3) * (size_t)b->n);
  memcpy(b->tri, mesh->tri, sizeof(int32_t) * 3 * (size_t)b->nt);
  for (int i = 0; i < b->n; i++) b->pin_group[i] = -1;
  b->model = def->model;
  b->integrator = def->integrator;
  b->stretch = def->stretch;
  b->shear = def->shear;
  b->bend = def->bend;
  b->damping = def->damping;
  b->drag = def->drag;
  b->thickness = def->thickness;
  b->friction = def->friction;
  b->substeps_user = def->substeps;
  b->iterations = def->iterations;
  b->grid_nx = mesh->grid_nx;
  b->grid_ny = mesh->grid_ny;

  /* Lumped masses: each triangle gives a third of density x area to each corner (001). */
  double total = 0;
  for (int t = 0; t < b->nt; t++) {
    double a = 0.5 * mesh_tri_area2(mesh, t);
    for (int k = 0; k < 3; k++) b->mass[b->tri[3 * t + k]] += a / 3.0;
    total += a;
  }
  double scale = def->mass > 0 ? def->mass / total : def->density;
  if (!(total > 0) || !isfinite(scale)) return loom_fail("cloth '%s': the mesh has zero area", def->name);
  for (int i = 0; i < b->n; i++) {
    b->mass[i] *= scale;
    if (!(b->mass[i] > 0))
      return loom_fail("cloth '%s': vertex %d belongs to no triangle of positive area (it would have no mass)",
                       def->name, i);
    b->m[i] = b->mass[i];
    b->inv_m[i] = 1.0 / b->mass[i];
    b->total_mass += b->mass[i];
  }

  switch (b->model) {
  case LOOM_MODEL_SPRINGS:
  case LOOM_MODEL_SPRINGS_PBD:
    if (springs_build(b, mesh) != 0) return -1;
    break;
  case LOOM_MODEL_BARAFF_WITKIN:
    if (bw_build(b, mesh) != 0) return -1;
    break;
  }
  if (soft_build_elements(b, mesh) != 0) return -1;
  soft_estimate_spectrum(b); /* on failure the Gershgorin bound is used */
  return 0;
}

/* ---- parameters ---------------------------------------------------------------------------------- */

int soft_set_param(soft_body *b, const char *name, double value, double dt, const char *body_name) {
  double *target = NULL;
  if (!strcmp(name, "stretch") || !strcmp(name, "shear") || !strcmp(name, "bend")) {
    if (check_stiffness(body_name, b->model, name, value)) return -1;
    target = !strcmp(name, "stretch") ? &b->stretch : !strcmp(name, "shear") ? &b->shear : &b->bend;
  } else if (!strcmp(name, "damping")) {
    if (check_range(body_name, name, value, 0, 1)) return -1;
    target = &b->damping;
  } else if (!strcmp(name, "drag")) {
    if (check_range(body_name, name, value, 0, 1000)) return -1;
    target = &b->drag;
  } else if (!strcmp(name, "thickness")) {
    if (check_range(body_name, name, value, 0, 1)) return -1;
    target = &b->thickness;
  } else if (!strcmp(name, "friction")) {
    if (check_range(body_name, name, value, 0, 10)) return -1;
    target = &b->friction;
  } else if (!strcmp(name, "substeps")) {
    if (check_range(body_name, name, value, 0, SOFT_MAX_SUBSTEPS) || value != floor(value))
      return loom_fail("cloth '%s': 'substeps' must be an integer in [0, %d], got %g", body_name, SOFT_MAX_SUBSTEPS,
                       value);
    b->substeps_user = (int)value;
    b->warned_substeps = 0;
  } else if (!strcmp(name, "iterations")) {
    if (check_range(body_name, name, value, 1, 1000) || value != floor(value))
      return loom_fail("cloth '%s': 'iterations' must be an integer in [1, 1000], got %g", body_name, value);
    b->iterations = (int)value;
  } else {
    return loom_fail("cloth '%s': unknown parameter '%s' (stretch, shear, bend, damping, drag, thickness, friction, "
                     "substeps, iterations)",
                     body_name, name);
  }
  if (target) {
    if (*target == value) return 0;
    *target = value;
  }
  /* only these change the stability estimate (friction and thickness do not) */
  if (strcmp(name, "friction") && strcmp(name, "thickness") && strcmp(name, "iterations")) soft_update_substeps(b, dt);
  return 0;
}

int soft_get_param(const soft_body *b, const char *name, double *out) {
  if (!strcmp(name, "stretch")) *out = b->stretch;
  else if (!strcmp(name, "shear")) *out = b->shear;
  else if (!strcmp(name, "bend")) *out = b->bend;
  else if (!strcmp(name, "damping")) *out = b->damping;
  else if (!strcmp(name, "drag")) *out = b->drag;
  else if (!strcmp(name, "thickness")) *out = b->thickness;
  else if (!strcmp(name, "friction")) *out = b->friction;
  else if (!strcmp(name, "substeps")) *out = b->substeps_user > 0 ? b->substeps_user : b->substeps_auto;
  else if (!strcmp(name, "iterations")) *out = b->iterations;
  else if (!strcmp(name, "stable_substep")) *out = b->h_stable;
  else if (!strcmp(name, "lambda_stretch")) *out = b->lambda_unit[FAM_STRUCTURAL];
  else if (!strcmp(name, "lambda_shear")) *out = b->lambda_unit[FAM_SHEAR];
  else if (!strcmp(name, "lambda_bend")) *out = b->lambda_unit[FAM_BEND];
  else if (!strcmp(name, "model")) *out = b->model;
  else if (!strcmp(name, "integrator")) *out = b->integrator;
  else return loom_fail("cloth: unknown parameter '%s'", name);
  return 0;
}

/* ---- stability --------------------------------------------------------------------------------- */

void soft_update_substeps(soft_body *b, double dt) {
  double h;
  if (b->model == LOOM_MODEL_SPRINGS_PBD) {
    /* Position projection is unconditionally stable; substeps only buy accuracy (001 used
     * 10 substeps of a 60 Hz frame). */
    h = 1.0 / 600.0;
  } else {
    double omega2, margin;
    if (b->spectrum_ok) {
      /* Weyl: lambda_max(sum k_f K_f) <= sum k_f lambda_f; 15 % for the stiffening of stretched
       * or bent configurations, which the rest-state estimate does not see */
      omega2 = 1.15 * (b->stretch * b->lambda_unit[FAM_STRUCTURAL] + b->shear * b->lambda_unit[FAM_SHEAR] +
                       b->bend * b->lambda_unit[FAM_BEND]);
      margin = 0.9;
    } else {
      omega2 = b->model == LOOM_MODEL_BARAFF_WITKIN ? bw_omega2_bound(b) : springs_omega2_bound(b);
      margin = 0.85;
    }
    double beta = b->damping;
    if (omega2 > 0) {
      /* Symplectic Euler on m x'' = -k x - beta k x' is stable iff h^2 w^2 + 2 h beta w^2 < 4
       * (roots of the update's characteristic polynomial inside the unit circle). */
      h = -beta + sqrt(beta * beta + 4.0 / omega2);
      h *= margin;
    } else {
      h = dt;
    }
    if (b->integrator == LOOM_INTEGRATOR_RK4) h *= 1.41; /* RK4 reaches 2.83 on the imaginary axis */
    if (b->drag > 0 && h > 1.0 / b->drag) h = 1.0 / b->drag;
  }
  b->h_stable = h;
  double s = ceil(dt / h - 1e-9);
  if (!(s >= 1)) s = 1;
  if (s > SOFT_MAX_SUBSTEPS) s = SOFT_MAX_SUBSTEPS;
  b->substeps_auto = (int)s;
}

size_t soft_scratch_bytes(const soft_body *b) { return (size_t)b->n * sizeof(vec3) * 10 + 8192; }

void soft_internal_forces(const soft_body *b, const vec3 *x, const vec3 *v, vec3 *F) {
  memset(F, 0, sizeof(vec3) * (size_t)b->n);
  switch (b->model) {
  case LOOM_MODEL_SPRINGS: springs_forces(b, x, v, F); break;
  case LOOM_MODEL_BARAFF_WITKIN: bw_forces(b, x, v, F); break;
  default: break; /* springs_pbd acts through position projection, not forces */
  }
}

double soft_elastic_energy(const soft_body *b, const vec3 *x) {
  switch (b->model) {
  case LOOM_MODEL_SPRINGS: return springs_energy(b, x);
  case LOOM_MODEL_BARAFF_WITKIN: return bw_energy(b, x);
  default: return 0; /* constraint stiffness is dimensionless: no elastic energy is defined */
  }
}
