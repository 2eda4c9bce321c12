/* solid_body.c — solid bodies: definition defaults and validation, lumped masses, the rest-shape
 * quantities, the parameter table, the explicit stability estimate, the kind's step operations
 * (Verlet or backward Euler for one world substep, pins, divergence guard, plasticity, the
 * embedded surface) and the public entry points. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "solid/solid.h"

LOOM_API void loom_solid_def_default(loom_solid_def *def, int model) {
  if (!def) return;
  memset(def, 0, sizeof *def);
  if (model != LOOM_SOLID_NEOHOOKEAN) model = LOOM_SOLID_TESCHNER;
  def->model = model;
  def->integrator = model == LOOM_SOLID_NEOHOOKEAN ? LOOM_INTEGRATOR_IMPLICIT : LOOM_INTEGRATOR_VERLET;
  def->density = 1000;
  def->distance = 20;
  def->volume = 10;
  def->damping = 1;
  def->young = 1e6;
  def->poisson = 0.45;
  def->rayleigh = 0.001;
  def->thickness = 0.002;
  def->friction = 0.5;
  def->creep = 0.5;
  def->cg_tolerance = 1e-4;
  def->cg_iterations = 500;
}

static int check_range(const char *name, const char *field, double value, double lo, double hi) {
  if (!isfinite(value) || value < lo || value > hi)
    return loom_fail("solid '%s': '%s' must be a number in [%g, %g], got %g", name, field, lo, hi, value);
  return 0;
}

static int validate(const loom_solid_def *d) {
  const char *nm = d->name;
  if (!d->mesh) return loom_fail("solid '%s': 'mesh' is required (a tet mesh: loom.mesh.tet_box, tet_fill, load)", nm);
  if (mesh_check_reach(d->mesh->v, d->mesh->nv, "solid", nm)) return -1;
  if (d->model != LOOM_SOLID_TESCHNER && d->model != LOOM_SOLID_NEOHOOKEAN)
    return loom_fail("solid '%s': unknown model %d", nm, d->model);
  if (d->integrator != LOOM_INTEGRATOR_VERLET && d->integrator != LOOM_INTEGRATOR_IMPLICIT)
    return loom_fail("solid '%s': 'integrator' must be 'verlet' or 'implicit'", nm);
  if (d->integrator == LOOM_INTEGRATOR_IMPLICIT && d->model != LOOM_SOLID_NEOHOOKEAN)
    return loom_fail("solid '%s': integrator 'implicit' is for model 'neohookean' (teschner runs document 002's "
                     "Verlet)", nm);
  if (d->integrator == LOOM_INTEGRATOR_VERLET && d->model == LOOM_SOLID_NEOHOOKEAN)
    return loom_fail("solid '%s': model 'neohookean' runs integrator 'implicit' (a real material's stiffness would "
                     "need tiny explicit steps)", nm);
  if (!isfinite(d->distance) || d->distance < 0)
    return loom_fail("solid '%s': 'distance' (k_D) must be a number >= 0, got %g", nm, d->distance);
  if (!isfinite(d->volume) || d->volume < 0)
    return loom_fail("solid '%s': 'volume' (k_V) must be a number >= 0, got %g", nm, d->volume);
  if (!isfinite(d->damping) || d->damping < 0)
    return loom_fail("solid '%s': 'damping' (d_C) must be a number >= 0, got %g", nm, d->damping);
  if (check_range(nm, "distance", d->distance, 0, 1e9) || check_range(nm, "volume", d->volume, 0, 1e9) ||
      check_range(nm, "damping", d->damping, 0, 1e6))
    return -1;
  if (!isfinite(d->young) || !(d->young > 0) || d->young > 1e12)
    return loom_fail("solid '%s': 'young' must be a number in (0, 1e12] Pa, got %g", nm, d->young);
  if (!isfinite(d->poisson) || d->poisson < 0 || d->poisson >= 0.5)
    return loom_fail("solid '%s': 'poisson' must be in [0, 0.5) (0.5 is incompressible, which a displacement "
                     "FEM cannot represent; use 0.49 or 0.495), got %g", nm, d->poisson);
  if (check_range(nm, "rayleigh", d->rayleigh, 0, 10) || check_range(nm, "thickness", d->thickness, 0, 1) ||
      check_range(nm, "friction", d->friction, 0, 10) || check_range(nm, "mass", d->mass, 0, 1e9) ||
      check_range(nm, "node_mass", d->node_mass, 0, 1e9) || check_range(nm, "yield", d->yield, 0, 10) ||
      check_range(nm, "creep", d->creep, 0, 1))
    return -1;
  if (d->mass <= 0 && d->node_mass <= 0 && (!isfinite(d->density) || !(d->density > 0) || d->density > 1e6))
    return loom_fail("solid '%s': 'density' must be a number in (0, 1e6] kg/m^3, got %g", nm, d->density);
  if (d->substeps < 0 || d->substeps > WORLD_MAX_SUBSTEPS)
    return loom_fail("solid '%s': 'substeps' must be an integer in [0, %d] (0 = automatic), got %d", nm,
                     WORLD_MAX_SUBSTEPS, d->substeps);
  if (d->depth_contact != 0 && d->depth_contact != 1)
    return loom_fail("solid '%s': 'depth_contact' must be 0 or 1, got %d", nm, d->depth_contact);
  if (d->self_collision != 0 && d->self_collision != 1)
    return loom_fail("solid '%s': 'self_collision' must be 0 or 1, got %d", nm, d->self_collision);
  if (!isfinite(d->cg_tolerance) || !(d->cg_tolerance > 0) || d->cg_tolerance > 1)
    return loom_fail("solid '%s': 'cg_tolerance' must be a number in (0, 1], got %g", nm, d->cg_tolerance);
  if (d->cg_iterations < 1 || d->cg_iterations > 100000)
    return loom_fail("solid '%s': 'cg_iterations' must be an integer in [1, 100000], got %d", nm, d->cg_iterations);
  if (loom_tet_mesh_check(d->mesh) != 0) {
    loom_error_prefix("solid");
    return -1;
  }
  return 0;
}

static void solid_free(void *data) {
  solid_body *b = data;
  if (!b) return;
  particles_free(&b->p);
  core_free(b->model.tet);
  core_free(b->model.edge);
  core_free(b->model.row);
  core_free(b->model.col);
  core_free(b->model.tet_slot);
  core_free(b->model.adj_row);
  core_free(b->model.adj);
  core_free(b->restq.len0);
  core_free(b->restq.vol0);
  core_free(b->restq.dm_inv);
  core_free(b->state.a_prev);
  core_free(b->state.rest);
  core_free(b->state.cn);
  core_free(b->state.cvn);
  core_free(b->state.cvt);
  core_free(b->state.cmu);
  core_free(b->state.cbody);
  core_free(b->state.ctri);
  core_free(b->state.cw);
  core_free(b->state.damp_prev);
  core_free(b->scratch.row_bound);
  core_free(b->scratch.ism);
  core_free(b->surface.x);
  core_free(b->surface.tri);
  core_free(b->surface.tet);
  core_free(b->surface.w);
  core_free(b);
}

/* Inverse of a row-major 3 x 3 matrix; 0 if singular. */
static int inv3(const double a[9], double o[9]) {
  const double c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6];
  const double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
  if (!(fabs(det) > 0)) return 0;
  const double id = 1.0 / det;
  o[0] = c00 * id, o[1] = (a[2] * a[7] - a[1] * a[8]) * id, o[2] = (a[1] * a[5] - a[2] * a[4]) * id;
  o[3] = c01 * id, o[4] = (a[0] * a[8] - a[2] * a[6]) * id, o[5] = (a[2] * a[3] - a[0] * a[5]) * id;
  o[6] = c02 * id, o[7] = (a[1] * a[6] - a[0] * a[7]) * id, o[8] = (a[0] * a[4] - a[1] * a[3]) * id;
  return 1;
}

/* Rest edge lengths, volumes and inverse edge matrices from state.rest. */
void solid_rest_update(solid_body *b) {
  const vec3 *X = b->state.rest;
  for (int k = 0; k < b->model.ne; k++)
    b->restq.len0[k] = v3_len(v3_sub(X[b->model.edge[2 * k + 1]], X[b->model.edge[2 * k]]));
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    b->restq.vol0[k] = tet_signed_volume(X[q[0]], X[q[1]], X[q[2]], X[q[3]]);
    const vec3 e1 = v3_sub(X[q[1]], X[q[0]]), e2 = v3_sub(X[q[2]], X[q[0]]), e3 = v3_sub(X[q[3]], X[q[0]]);
    const double Dm[9] = {e1.x, e2.x, e3.x, e1.y, e2.y, e3.y, e1.z, e2.z, e3.z};
    if (!inv3(Dm, b->restq.dm_inv + 9 * k)) memset(b->restq.dm_inv + 9 * k, 0, 9 * sizeof(double));
  }
}

double solid_current_volume(const solid_body *b, const vec3 *x) {
  double V = 0;
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    V += tet_signed_volume(x[q[0]], x[q[1]], x[q[2]], x[q[3]]);
  }
  return V;
}

static int solid_create(loom_world *w, int slot, const void *vdef) {
  const loom_solid_def *def = vdef;
  if (validate(def) != 0) return -1;
  const loom_tet_mesh *mesh = def->mesh;
  solid_body *b = core_calloc(1, sizeof *b);
  if (!b) return -1;
  w->bodies[slot].data = b;
  w->bodies[slot].pts = &b->p;
  const int n = mesh->nv;
  if (particles_alloc(&b->p, n, mesh->nf) != 0) return -1;
  b->model.nt = mesh->nt;
  b->model.ne = mesh->ne;
  b->model.tet = core_alloc((size_t)mesh->nt * 4, sizeof(int32_t));
  b->model.edge = core_alloc((size_t)mesh->ne * 2, sizeof(int32_t));
  b->restq.len0 = core_alloc((size_t)mesh->ne, sizeof(double));
  b->restq.vol0 = core_alloc((size_t)mesh->nt, sizeof(double));
  b->restq.dm_inv = core_alloc((size_t)mesh->nt * 9, sizeof(double));
  b->state.a_prev = core_calloc((size_t)n, sizeof(vec3));
  b->state.rest = core_alloc((size_t)n, sizeof(vec3));
  b->state.cn = core_calloc((size_t)n, sizeof(vec3));
  b->state.cvn = core_calloc((size_t)n, sizeof(double));
  b->state.cvt = core_calloc((size_t)n, sizeof(vec3));
  b->state.cmu = core_calloc((size_t)n, sizeof(double));
  b->state.cbody = core_calloc((size_t)n, sizeof(int32_t));
  b->state.ctri = core_calloc((size_t)n, sizeof(int32_t));
  b->state.cw = core_calloc((size_t)n, sizeof(vec3));
  if (!b->state.cbody || !b->state.ctri || !b->state.cw) return -1;
  b->state.damp_prev = core_calloc((size_t)n, sizeof(vec3));
  if (!b->state.cvn || !b->state.cvt || !b->state.cmu || !b->state.damp_prev) return -1;
  b->scratch.row_bound = core_alloc((size_t)n, sizeof(double));
  b->scratch.ism = core_alloc((size_t)n, sizeof(double));
  if (!b->scratch.row_bound || !b->scratch.ism) return -1;
  if (!b->state.cn || !b->model.tet || !b->model.edge || !b->restq.len0 || !b->restq.vol0 || !b->restq.dm_inv || !b->state.a_prev ||
      !b->state.rest)
    return -1;
  memcpy(b->model.tet, mesh->tet, sizeof(int32_t) * 4 * (size_t)mesh->nt);
  memcpy(b->model.edge, mesh->edge, sizeof(int32_t) * 2 * (size_t)mesh->ne);
  memcpy(b->p.x, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->p.rest, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->state.rest, mesh->v, sizeof(vec3) * (size_t)n);
  memcpy(b->p.tri, mesh->face, sizeof(int32_t) * 3 * (size_t)mesh->nf);
  solid_params *P = &b->params;
  P->model = def->model;
  P->integrator = def->integrator;
  P->distance = def->distance;
  P->volume = def->volume;
  P->damping = def->damping;
  P->young = def->young;
  P->poisson = def->poisson;
  P->rayleigh = def->rayleigh;
  P->yield = def->yield;
  P->creep = def->creep;
  P->substeps_user = def->substeps;
  P->cg_tolerance = def->cg_tolerance;
  P->cg_iterations = def->cg_iterations;
  b->p.thickness = def->thickness;
  b->p.friction = def->friction;
  b->p.self_collision = def->self_collision;
  b->p.resting = 1;
  solid_rest_update(b);
  /* vertex adjacency (penetration depth propagates along it) */
  b->model.adj_row = core_calloc((size_t)n + 1, sizeof(int32_t));
  b->model.adj = core_alloc((size_t)mesh->ne * 2 + 1, sizeof(int32_t));
  if (!b->model.adj_row || !b->model.adj) return -1;
  for (int k = 0; k < mesh->ne; k++) b->model.adj_row[mesh->edge[2 * k] + 1]++, b->model.adj_row[mesh->edge[2 * k + 1] + 1]++;
  for (int i = 0; i < n; i++) b->model.adj_row[i + 1] += b->model.adj_row[i];
  {
    int32_t *fill = core_alloc((size_t)n + 1, sizeof(int32_t));
    if (!fill) return -1;
    memcpy(fill, b->model.adj_row, sizeof(int32_t) * (size_t)n);
    for (int k = 0; k < mesh->ne; k++) {
      const int i = mesh->edge[2 * k], j = mesh->edge[2 * k + 1];
      b->model.adj[fill[i]++] = j;
      b->model.adj[fill[j]++] = i;
    }
    core_free(fill);
  }
  b->p.depth_contact = def->depth_contact;
  /* lumped masses: a quarter of each tet's mass to each corner (or 002's mass per node) */
  double vol = 0, sumlen = 0;
  for (int k = 0; k < mesh->nt; k++) {
    const int32_t *q = mesh->tet + 4 * k;
    for (int c = 0; c < 4; c++) b->p.m[q[c]] += 0.25 * b->restq.vol0[k];
    vol += b->restq.vol0[k];
  }
  for (int k = 0; k < mesh->ne; k++) sumlen += b->restq.len0[k];
  b->derived.rest_length = sumlen / mesh->ne;
  const double scale = def->mass > 0 ? def->mass / vol : def->density;
  for (int i = 0; i < n; i++) {
    b->p.m[i] = def->node_mass > 0 ? def->node_mass : b->p.m[i] * scale;
    if (!(b->p.m[i] > 0) || !isfinite(b->p.m[i]))
      return loom_fail("solid '%s': vertex %d has no mass (it belongs to no tet of positive volume)", def->name, i);
    b->p.inv_m[i] = 1.0 / b->p.m[i];
    b->p.total_mass += b->p.m[i];
  }
  neohookean_params(P->young, P->poisson, &b->model.mu, &b->model.lambda, &b->model.alpha);
  teschner_unit_bounds(b);
  teschner_spectrum(b);
  if (P->integrator == LOOM_INTEGRATOR_IMPLICIT && solid_implicit_build(b) != 0) return -1;
  return 0;
}

/* ---- parameters -------------------------------------------------------------------------------- */

#define SOLID_PARAM(name, unit, lo, hi, flags, field, doc) {name, unit, doc, lo, hi, flags, offsetof(solid_body, field)}

static const param_spec solid_param_table[] = {
  SOLID_PARAM("distance", "J", 0, 1e9, PARAM_LIVE, params.distance,
              "teschner: k_D, stiffness of the edge distance constraints C = (l - l0) / l0"),
  SOLID_PARAM("volume", "J", 0, 1e9, PARAM_LIVE, params.volume,
              "teschner: k_V, stiffness of the tet volume constraints C = (V - V0) / V0"),
  SOLID_PARAM("damping", "J s", 0, 1e6, PARAM_LIVE, params.damping,
              "teschner: d_C, damping of the distance constraints' rate dC/dt"),
  SOLID_PARAM("young", "Pa", 0, 1e12, PARAM_LIVE | PARAM_MIN_OPEN, params.young, "neohookean: Young's modulus E"),
  SOLID_PARAM("poisson", "", 0, 0.4999, PARAM_LIVE, params.poisson, "neohookean: Poisson's ratio nu, [0, 0.5)"),
  SOLID_PARAM("rayleigh", "s", 0, 10, PARAM_LIVE, params.rayleigh,
              "neohookean: stiffness-proportional damping beta (damping matrix beta K)"),
  SOLID_PARAM("thickness", "m", 0, 1, PARAM_LIVE, p.thickness, "other bodies keep at least this far from the surface"),
  SOLID_PARAM("friction", "", 0, 10, PARAM_LIVE, p.friction, "Coulomb coefficient against other bodies"),
  SOLID_PARAM("self_collision", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, p.self_collision,
              "1: the surface never passes through itself (the collision pipeline)"),
  SOLID_PARAM("depth_contact", "", 0, 1, PARAM_LIVE | PARAM_INTEGER, p.depth_contact,
              "1: against other solids that set it, document 002's penetration depths instead of the pipeline"),
  SOLID_PARAM("yield", "", 0, 10, PARAM_LIVE, params.yield,
              "plasticity: strain past which the rest shape follows the deformation (0 = elastic)"),
  SOLID_PARAM("creep", "", 0, 1, PARAM_LIVE, params.creep,
              "plasticity: fraction of the strain beyond yield the rest shape absorbs per step"),
  SOLID_PARAM("substeps", "", 0, WORLD_MAX_SUBSTEPS, PARAM_LIVE | PARAM_INTEGER, params.substeps_user,
              "substeps per step; 0 = automatic (explicit: from the stability estimate; implicit: 1)"),
  SOLID_PARAM("cg_tolerance", "", 1e-12, 1, PARAM_LIVE, params.cg_tolerance,
              "implicit: CG stops when the residual is this fraction of the right-hand side's"),
  SOLID_PARAM("cg_iterations", "", 1, 100000, PARAM_LIVE | PARAM_INTEGER, params.cg_iterations,
              "implicit: CG iteration cap per solve"),
  SOLID_PARAM("stable_substep", "s", 0, 0, PARAM_READONLY, derived.h_stable,
              "explicit: largest stable substep of the estimate"),
  SOLID_PARAM("model", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.model, "loom_solid_model (1 teschner, 2 neohookean)"),
  SOLID_PARAM("integrator", "", 0, 0, PARAM_READONLY | PARAM_INTEGER, params.integrator,
              "loom_integrator (2 verlet, 4 implicit)"),
};

static double solid_param_value(const body_slot *s, const param_spec *p, double stored) {
  const solid_body *b = solid_of(s);
  if (!strcmp(p->name, "substeps") && stored == 0)
    return b->params.integrator == LOOM_INTEGRATOR_IMPLICIT ? 1 : b->derived.substeps_auto;
  return stored;
}

static void solid_param_changed(loom_world *w, body_slot *s, const param_spec *p) {
  solid_body *b = solid_of(s);
  if (p && !strcmp(p->name, "substeps")) b->derived.warned_substeps = 0;
  if (p && (!strcmp(p->name, "young") || !strcmp(p->name, "poisson")))
    neohookean_params(b->params.young, b->params.poisson, &b->model.mu, &b->model.lambda, &b->model.alpha);
  solid_update_substeps(b, w->dt);
}

/* The largest squared frequency of the rest shape (Weyl: lambda(kD K_D + kV K_V) <= kD lambda_D +
 * kV lambda_V) with 15 % for what the power iteration has not reached. */
static double omega2_rest(const solid_body *b) {
  const double *l = b->model.lambda_unit;
  return 1.15 * (b->params.distance * l[0] + b->params.volume * l[1]);
}

/* Explicit Verlet (symplectic Euler in positions) on m x'' = -k x is stable iff h^2 w^2 < 4; w^2
 * from the power-iteration estimate at the rest shape (solid_substeps scales it by how much
 * stiffer the current shape's Gershgorin bound is than the rest shape's). The damping,
 * integrated implicitly, does not limit the step. */
void solid_update_substeps(solid_body *b, double dt) {
  double h = dt;
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT) {
    const double omega2 = omega2_rest(b);
    const double gamma = 0; /* the damping is integrated implicitly (teschner_damp) */
    if (omega2 > 0)
      h = 0.9 * (-gamma + sqrt(gamma * gamma + 4.0 * omega2)) / omega2;
    else if (gamma > 0)
      h = 0.9 * 2.0 / gamma;
  }
  b->derived.h_stable = h;
  double S = ceil(dt / h - 1e-9);
  if (!(S >= 1)) S = 1;
  if (S > WORLD_MAX_SUBSTEPS) S = WORLD_MAX_SUBSTEPS;
  b->derived.substeps_auto = (int)S;
}

static const state_field solid_state_fields[] = {
  {"a_prev", offsetof(solid_body, state.a_prev), sizeof(vec3), 1},
  {"rest", offsetof(solid_body, state.rest), sizeof(vec3), 1},
  {"contact_normal", offsetof(solid_body, state.cn), sizeof(vec3), 1},
  {"contact_speed", offsetof(solid_body, state.cvn), sizeof(double), 1},
  {"contact_slide", offsetof(solid_body, state.cvt), sizeof(vec3), 1},
  {"contact_friction", offsetof(solid_body, state.cmu), sizeof(double), 1},
  {"contact_body", offsetof(solid_body, state.cbody), sizeof(int32_t), 1},
  {"contact_triangle", offsetof(solid_body, state.ctri), sizeof(int32_t), 1},
  {"contact_weights", offsetof(solid_body, state.cw), sizeof(vec3), 1},
  {"damping_change", offsetof(solid_body, state.damp_prev), sizeof(vec3), 1},
};

static uint64_t solid_model_hash(const body_slot *s, uint64_t h) {
  const solid_body *b = solid_of(s);
  h = core_fnv1a(h, &b->p.n, sizeof b->p.n);
  h = core_fnv1a(h, &b->model.nt, sizeof b->model.nt);
  h = core_fnv1a(h, b->model.tet, sizeof(int32_t) * 4 * (size_t)b->model.nt);
  h = core_fnv1a(h, b->p.rest, sizeof(vec3) * (size_t)b->p.n);
  h = core_fnv1a(h, b->p.m, sizeof(double) * (size_t)b->p.n);
  h = core_fnv1a(h, &b->params.model, sizeof b->params.model);
  h = core_fnv1a(h, &b->params.integrator, sizeof b->params.integrator);
  return h;
}

static int solid_transplant(body_slot *dst, const body_slot *src) {
  solid_body *a = solid_of(dst);
  const solid_body *b = solid_of(src);
  if (a->model.nt != b->model.nt || memcmp(a->model.tet, b->model.tet, sizeof(int32_t) * 4 * (size_t)a->model.nt))
    return 0;
  solid_rest_update(a); /* the carried rest shape */
  particles_transplant_pins(&a->p, &b->p);
  return 1;
}

static size_t solid_scratch_bytes(const body_slot *s) {
  const solid_body *b = solid_of(s);
  size_t bytes = (size_t)b->p.n * sizeof(vec3) * 10 + (size_t)b->model.ne * sizeof(vec3) + 8192;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT)
    bytes += (size_t)b->model.nnz * 9 * sizeof(double) + (size_t)b->p.n * 9 * sizeof(double);
  /* document 002's contacts (contact_solid.c): the point hash (table, chains, stamps, owners and
   * the colliding-point records) and the triangle hash (boxes, up to 64 entries a triangle, stamps) */
  bytes += (size_t)b->p.n * (3 * sizeof(int32_t) + 2 * sizeof(int32_t) + 96) +
           (size_t)b->p.nt * (2 * sizeof(vec3) + 64 * 2 * sizeof(int32_t) + 4 * sizeof(int32_t) + 16) + 4096;
  return bytes;
}

static double solid_energy(const body_slot *s) {
  const solid_body *b = solid_of(s);
  return b->params.model == LOOM_SOLID_NEOHOOKEAN ? neohookean_energy(b, b->p.x) : teschner_energy(b, b->p.x);
}

/* ---- the step ------------------------------------------------------------------------------- */

/* More automatic substeps than this per step: one warning that says what to do. */
#define SOLID_MANY_SUBSTEPS 200

static int solid_substeps(loom_world *w, body_slot *s, double dt) {
  solid_body *b = solid_of(s);
  if (b->p.frozen) return 1;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    if (b->params.substeps_user > 0) return b->params.substeps_user;
    /* stable at any step; but contacts act between solves, so no vertex may travel more than a
     * tenth of an edge in one: a fast body gets substeps (a ball landing at 4 m/s at dt = 1/60 with
     * 4 cm cells: 17), a resting one does one solve per step */
    double vmax = 0;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < b->p.n; i++) {
      vmax = fmax(vmax, v3_len2(b->p.v[i]));
      lo = v3_min(lo, b->p.x[i]), hi = v3_max(hi, b->p.x[i]);
    }
    vmax = sqrt(vmax);
    /* only near another body: what the step can reach */
    const double reach = vmax * dt + particles_thickness(&b->p);
    lo = v3_sub(lo, v3(reach, reach, reach)), hi = v3_add(hi, v3(reach, reach, reach));
    int near = 0;
    for (int o = 0; o < w->order_count && !near; o++) {
      const body_slot *other = &w->bodies[w->order[o]];
      if (other == s) continue;
      vec3 ol, oh;
      if (other->ops->aabb) other->ops->aabb(other, &ol, &oh);
      else if (other->pts) particles_box(other->pts, &ol, &oh);
      else continue;
      near = bvh_box_overlap(lo, hi, ol, oh);
    }
    if (!near) return 1;
    const double S = ceil(vmax * dt / (0.1 * b->derived.rest_length) - 1e-9);
    return S < 1 || !isfinite(S) ? 1 : S > 64 ? 64 : (int)S;
  }
  int S = b->params.substeps_user > 0 ? b->params.substeps_user : b->derived.substeps_auto;
  if (b->params.substeps_user == 0) {
    /* the shape now may be stiffer than the rest shape (a crushed lattice): the rest estimate grows
     * by the ratio of the Gershgorin bounds now and at rest, and far from rest the bound decides */
    const double now = teschner_omega2_now(b);
    const double *u = b->model.omega2_unit;
    const double rest = b->params.distance * u[0] + b->params.volume * u[1];
    /* far from the rest shape (a bound half again above its rest value) the Gershgorin bound itself */
    const double omega2 = rest > 0 && now < 1.5 * rest ? omega2_rest(b) * fmax(1.0, now / rest) : now;
    if (omega2 > 0) {
      const double S_now = ceil(dt / (0.9 * 2.0 / sqrt(omega2)) - 1e-9);
      if (S_now > S) S = S_now > WORLD_MAX_SUBSTEPS ? WORLD_MAX_SUBSTEPS : (int)S_now;
    }
  }
  if (!b->derived.warned_substeps) {
    if (b->params.substeps_user > 0 && dt / S > b->derived.h_stable * 1.0001) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "solid '%s': %d substeps per step is below the stable estimate of %d (substep %.3g s > %.3g s); "
                    "it may diverge",
                    s->name, S, (int)ceil(dt / b->derived.h_stable), dt / S, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    } else if (b->params.substeps_user == 0 && S > SOLID_MANY_SUBSTEPS) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "solid '%s': Verlet needs %d substeps per step at dt = %.3g s (stable substep %.3g s); lower "
                    "'distance', 'volume' or 'damping', raise the node masses, or use model 'neohookean' (implicit)",
                    s->name, S, dt, b->derived.h_stable);
      b->derived.warned_substeps = 1;
    }
  }
  return S < 1 ? 1 : S;
}

static void solid_begin(loom_world *w, body_slot *s, const step_info *si) {
  (void)si;
  solid_body *b = solid_of(s);
  const int n = b->p.n;
  arena *A = &w->scratch;
  solid_scratch *sc = &b->scratch;
  sc->cg_iterations = 0;
  sc->cg_residual = 0;
  sc->F = ARENA_NEW(A, vec3, n, "solid forces");
  sc->u = ARENA_NEW(A, vec3, n, "solid velocities");
  sc->r = ARENA_NEW(A, vec3, n, "cg r");
  sc->d = ARENA_NEW(A, vec3, n, "cg d");
  sc->q = ARENA_NEW(A, vec3, n, "cg q");
  sc->s = ARENA_NEW(A, vec3, n, "cg s");
  sc->edge_u = ARENA_NEW(A, vec3, b->model.ne, "edge directions");
  sc->v0 = ARENA_NEW(A, vec3, n, "velocities before damping");
  int ok = sc->F && sc->u && sc->r && sc->d && sc->q && sc->s && sc->edge_u && sc->v0;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    sc->rhs = ARENA_NEW(A, vec3, n, "rhs");
    sc->dv = ARENA_NEW(A, vec3, n, "dv");
    sc->blocks = ARENA_NEW(A, double, (size_t)b->model.nnz * 9, "solid matrix");
    sc->diag_inv = ARENA_NEW(A, double, (size_t)n * 9, "solid preconditioner");
    sc->cimp = ARENA_NEW(A, vec3, n, "contact impulses");
    ok = ok && sc->rhs && sc->dv && sc->blocks && sc->diag_inv && sc->cimp;
  }
  /* the repulsion spring of the collision pipeline: a stiffness of the lattice's order */
  b->p.stiffness = b->params.model == LOOM_SOLID_NEOHOOKEAN ? b->params.young * b->derived.rest_length
                                                            : b->params.distance / (b->derived.rest_length * b->derived.rest_length);
  if (!ok) {
    world_message(w, LOOM_ERROR, (int)(s - w->bodies), "solid '%s': out of memory in step; body frozen", s->name);
    b->p.frozen = 1;
  }
}

static void grab_of(const loom_world *w, const body_slot *s, int *vertex, vec3 *target, double *omega) {
  const solid_body *b = solid_of(s);
  *vertex = -1;
  if (w->grab_slot == (int)(s - w->bodies) && w->grab_vertex >= 0 && w->grab_vertex < b->p.n &&
      b->p.inv_m[w->grab_vertex] > 0) {
    *vertex = w->grab_vertex;
    *target = w->grab_target;
    *omega = w->grab_omega;
  }
}

/* Verlet: positions x' = 2x - x_prev + h^2 a, written as u' = u + h a, x' = x + h u' with u the
 * velocity over the last substep (document 002's recurrence). v keeps the end-of-substep velocity
 * u' + a h / 2 (exact for constant acceleration; 002's central difference lags it by h / 2); the
 * damping forces see u. Pinned vertices follow their pins. */
static void substep_verlet(loom_world *w, body_slot *s, const step_info *si) {
  solid_body *b = solid_of(s);
  const double h = si->h;
  const int n = b->p.n;
  vec3 *x = b->p.x, *v = b->p.v, *ap = b->state.a_prev, *F = b->scratch.F;
  const vec3 g = w->gravity;
  if (!b->p.history_ok) {
    for (int i = 0; i < n; i++) ap[i] = v3_madd(g, b->p.f[i], 1.0 / b->p.m[i]);
    b->p.history_ok = 1;
  }
  for (int i = 0; i < n; i++)
    if (b->p.inv_m[i] > 0) v[i] = v3_madd(v[i], ap[i], -0.5 * h);
  memset(F, 0, sizeof(vec3) * (size_t)n);
  teschner_forces_damped(b, x, v, F, 0); /* the damping comes after, implicitly (teschner_damp) */
  int gv;
  vec3 gt = v3(0, 0, 0);
  double om = 0;
  grab_of(w, s, &gv, &gt, &om);
  if (gv >= 0) {
    /* the mouse's line force (002): a spring to the pointer, capped for explicit stability */
    const double m = b->p.m[gv], M = b->p.total_mass;
    const double k = fmin(M * om * om, m * 0.25 / (h * h)), damp = fmin(2.0 * om * M, 0.5 * m / h);
    F[gv] = v3_add(F[gv], v3_madd(v3_scale(v3_sub(gt, x[gv]), k), v[gv], -damp));
  }
  /* u' = u + h a, then the damping on u' (implicit, edge by edge), then x' = x + h u' */
  vec3 *u = b->scratch.u;
  for (int i = 0; i < n; i++) {
    const vec3 a = v3_madd(g, v3_add(b->p.f[i], F[i]), 1.0 / b->p.m[i]);
    ap[i] = a;
    u[i] = b->p.inv_m[i] == 0 ? v[i] : v3_madd(v[i], a, h);
  }
  /* a vertex that rested on an obstacle in the last substep does not move into it (the obstacle's
   * reaction), and the damping solve holds its normal velocity: otherwise its neighbours would
   * lean on a vertex the contact later stops, and a compressed layer would stay compressed */
  for (int i = 0; i < n; i++) {
    const vec3 cn = b->state.cn[i];
    if (cn.x == 0 && cn.y == 0 && cn.z == 0) continue;
    const double un = v3_dot(u[i], cn) - b->state.cvn[i];
    if (un < 0) u[i] = v3_madd(u[i], cn, -un);
  }
  teschner_damp(b, x, u, h);
  for (int i = 0; i < n; i++) {
    if (b->p.inv_m[i] == 0) continue;
    /* v = u' + a h / 2 with a the forces' acceleration (the damping is already in u'), and the
     * next substep recovers u' = v - a h / 2 exactly */
    x[i] = v3_madd(x[i], u[i], h);
    v[i] = v3_madd(u[i], ap[i], 0.5 * h);
  }
}

static void solid_after_contacts(loom_world *w, body_slot *s, const step_info *si) {
  (void)si;
  solid_body *b = solid_of(s);
  if (!b->p.frozen) solid_record_contacts(w, s);
}

/* The reactions of the solve's contact constraints on other solids' triangles: the impulse each
 * held vertex received goes, opposite, to the triangle's nodes by their weights (momentum kept; a
 * pinned node takes none), in their velocities: the body under it takes it in its next solve, and
 * its surface velocity that the held vertices follow includes it. (Given as forces to the next
 * solve of the body underneath, or with that body solved after the one resting on it so that it
 * took the load in the same substep, the held vertices followed a surface that had since moved
 * away: the top cube of a rubber pair bounced and slid off; measured, docs/architecture.md.) */
static void contact_reactions(loom_world *w, solid_body *b) {
  for (int i = 0; i < b->p.n; i++) {
    if (!b->state.cbody[i]) continue;
    const int slot = world_live_slot(w, b->state.cbody[i]);
    if (slot < 0 || w->bodies[slot].ops->id != LOOM_KIND_SOLID) continue;
    particles *o = w->bodies[slot].pts;
    if (o->frozen || b->state.ctri[i] < 0 || b->state.ctri[i] >= o->nt) continue;
    const int32_t *t = o->tri + 3 * b->state.ctri[i];
    const vec3 J = b->scratch.cimp[i], cw = b->state.cw[i];
    const double wk[3] = {cw.x, cw.y, cw.z};
    for (int k = 0; k < 3; k++)
      if (o->inv_m[t[k]] > 0) o->v[t[k]] = v3_madd(o->v[t[k]], J, -wk[k] * o->inv_m[t[k]]);
  }
}

static void solid_predict(loom_world *w, body_slot *s, const step_info *si) {
  solid_body *b = solid_of(s);
  if (b->p.frozen) return;
  const int slot = (int)(s - w->bodies);
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    vec3 *pin_v = b->scratch.u;
    memcpy(pin_v, b->p.v, sizeof(vec3) * (size_t)b->p.n);
    pins_velocities(w, slot, si->dt, pin_v);
    int gv;
    vec3 gt = v3(0, 0, 0);
    double om = 0;
    grab_of(w, s, &gv, &gt, &om);
    const double M = b->p.total_mass;
    solid_implicit_substep(b, si->h, w->gravity, pin_v, gv, gt, M * om * om, 2.0 * om * M);
    contact_reactions(w, b);
  } else {
    substep_verlet(w, s, si);
  }
  pins_apply(w, slot, si->a1, si->dt);
}

/* Plasticity: where an edge (teschner) or a tet's stretch (neohookean) is strained beyond the
 * yield strain, the rest shape moves toward the current one by `creep` of the excess. The rest
 * shape is per-vertex state, moved by the mean of the rest-edge corrections. */
static void plastic_flow(solid_body *b) {
  const double ys = b->params.yield, cr = b->params.creep;
  if (!(ys > 0) || !(cr > 0)) return;
  const int n = b->p.n;
  vec3 *dx = b->scratch.F; /* reused: the step's forces are no longer needed */
  memset(dx, 0, sizeof(vec3) * (size_t)n);
  int moved = 0;
  const vec3 *X = b->state.rest, *x = b->p.x;
  for (int k = 0; k < b->model.ne; k++) {
    const int i = b->model.edge[2 * k], j = b->model.edge[2 * k + 1];
    const double l0 = b->restq.len0[k], l = v3_len(v3_sub(x[j], x[i]));
    const double strain = (l - l0) / l0;
    if (fabs(strain) <= ys) continue;
    const double excess = strain - (strain > 0 ? ys : -ys);
    const double dl = cr * excess * l0; /* the rest length grows (or shrinks) by this */
    const vec3 u = v3_scale(v3_sub(X[j], X[i]), 1.0 / l0);
    dx[i] = v3_madd(dx[i], u, -0.25 * dl);
    dx[j] = v3_madd(dx[j], u, 0.25 * dl);
    moved = 1;
  }
  if (!moved) return;
  for (int i = 0; i < n; i++) b->state.rest[i] = v3_add(b->state.rest[i], dx[i]);
  /* a rest shape with an inverted tet is refused: go back */
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    if (!(tet_signed_volume(X[q[0]], X[q[1]], X[q[2]], X[q[3]]) > 0.05 * b->restq.vol0[k])) {
      for (int i = 0; i < n; i++) b->state.rest[i] = v3_sub(b->state.rest[i], dx[i]);
      return;
    }
  }
  solid_rest_update(b);
}

static void surface_update(solid_body *b) {
  solid_surface *S = &b->surface;
  for (int i = 0; i < S->nv; i++) {
    const int32_t *q = b->model.tet + 4 * S->tet[i];
    const double *wt = S->w + 4 * i;
    vec3 p = v3_scale(b->p.x[q[0]], wt[0]);
    for (int c = 1; c < 4; c++) p = v3_madd(p, b->p.x[q[c]], wt[c]);
    S->x[i] = p;
  }
}

static void solid_commit(loom_world *w, body_slot *s, const step_info *si) {

  solid_body *b = solid_of(s);
  const int n = b->p.n;
  if (b->p.frozen && !b->p.x_step) return;
  if (b->params.integrator == LOOM_INTEGRATOR_IMPLICIT) {
    w->stats.iterations += b->scratch.cg_iterations;
    w->stats.cg_residual = fmax(w->stats.cg_residual, b->scratch.cg_residual);
    if (b->scratch.cg_residual > b->params.cg_tolerance && !b->derived.warned_cg && !b->p.frozen) {
      world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                    "solid '%s': CG did not converge in %d iterations at t = %.3f s (relative residual %.3g > "
                    "cg_tolerance %.3g); the step completed with the partial solution",
                    s->name, b->params.cg_iterations, w->time + si->dt, b->scratch.cg_residual, b->params.cg_tolerance);
      b->derived.warned_cg = 1;
    }
  } else {
    w->stats.iterations += si->substeps;
  }
  const char *what = NULL;
  int bad = b->p.frozen ? -1 : particles_find_divergence(&b->p, &what);
  if (bad >= 0) {
    memcpy(b->p.x, b->p.x_step, sizeof(vec3) * (size_t)n);
    memset(b->p.v, 0, sizeof(vec3) * (size_t)n);
    b->p.history_ok = 0;
    b->p.frozen = 1;
    world_diverged(w, (int)(s - w->bodies), bad, what, si);
    return;
  }
  if (!b->p.frozen) {
    plastic_flow(b);
    if (!b->derived.warned_inverted) {
      for (int k = 0; k < b->model.nt; k++) {
        const int32_t *q = b->model.tet + 4 * k;
        if (tet_signed_volume(b->p.x[q[0]], b->p.x[q[1]], b->p.x[q[2]], b->p.x[q[3]]) <= 0) {
          world_message(w, LOOM_WARNING, (int)(s - w->bodies),
                        "solid '%s': tet %d is inverted at t = %.3f s (corners %d %d %d %d); %s",
                        s->name, k, w->time + si->dt, q[0], q[1], q[2], q[3],
                        b->params.model == LOOM_SOLID_TESCHNER
                            ? "raise 'volume' (k_V) or lower dt"
                            : "the stable Neo-Hookean energy pushes it back; more 'substeps' or a lower dt avoid it");
          b->derived.warned_inverted = 1;
          break;
        }
      }
    }
  }
  surface_update(b);
}

const body_kind solid_kind = {
  .name = "solid",
  .id = LOOM_KIND_SOLID,
  .params = solid_param_table,
  .nparams = (int)(sizeof solid_param_table / sizeof solid_param_table[0]),
  .param_value = solid_param_value,
  .param_changed = solid_param_changed,
  .state = solid_state_fields,
  .nstate = (int)(sizeof solid_state_fields / sizeof solid_state_fields[0]),
  .transplant = solid_transplant,
  .model_hash = solid_model_hash,
  .free = solid_free,
  .scratch_bytes = solid_scratch_bytes,
  .substeps = solid_substeps,
  .begin = solid_begin,
  .predict = solid_predict,
  .after_contacts = solid_after_contacts,
  .commit = solid_commit,
  .bounds = particles_bounds,
  .elastic_energy = solid_energy,
};

/* ---- public entry points ------------------------------------------------------------------- */

LOOM_API int loom_solid_create(loom_world *w, const loom_solid_def *def) {
  if (!w) return loom_fail("solid: world is NULL"), 0;
  if (!def) return loom_fail("solid: definition is NULL"), 0;
  return world_add_body(w, &solid_kind, def->name, solid_create, def);
}

static solid_body *solid_handle(const loom_world *w, int handle, const char *fn) {
  const int slot = world_slot(w, handle, LOOM_KIND_SOLID, fn);
  return slot < 0 ? NULL : solid_of(&w->bodies[slot]);
}

LOOM_API double loom_solid_volume(const loom_world *w, int body) {
  const solid_body *b = solid_handle(w, body, "volume");
  return b ? solid_current_volume(b, b->p.x) : -1;
}

LOOM_API const int32_t *loom_solid_tets(const loom_world *w, int body, int *count) {
  const solid_body *b = solid_handle(w, body, "tets");
  if (count) *count = b ? b->model.nt : 0;
  return b ? b->model.tet : NULL;
}

LOOM_API double loom_solid_depth(const loom_world *w, int body, const loom_vec3 *p) {
  const solid_body *b = solid_handle(w, body, "depth");
  if (!b) return -1;
  const vec3 q = v3(p->x, p->y, p->z);
  if (!v3_isfinite(q)) return loom_fail("solid '%s': depth: the point must be finite", loom_body_name(w, body));
  const vec3 *x = b->p.x;
  int inside = 0;
  for (int t = 0; t < b->model.nt && !inside; t++) {
    const int32_t *k = b->model.tet + 4 * t;
    double wt[4];
    tet_barycentric(q, x[k[0]], x[k[1]], x[k[2]], x[k[3]], wt);
    inside = wt[0] >= 0 && wt[1] >= 0 && wt[2] >= 0 && wt[3] >= 0;
  }
  if (!inside) return 0;
  double best = INFINITY;
  for (int t = 0; t < b->p.nt; t++) {
    const int32_t *f = b->p.tri + 3 * t;
    best = fmin(best, v3_dist(geom_closest_on_triangle(q, x[f[0]], x[f[1]], x[f[2]], NULL), q));
  }
  return best;
}

LOOM_API int loom_solid_embed(loom_world *w, int body, const loom_mesh *m) {
  solid_body *b = solid_handle(w, body, "embed");
  if (!b) return -1;
  if (!m || m->nv < 1 || m->nt < 1) return loom_fail("solid '%s': embed needs a triangle mesh with triangles", loom_body_name(w, body));
  solid_surface S = {0};
  S.nv = m->nv;
  S.nt = m->nt;
  S.x = core_alloc((size_t)m->nv, sizeof(vec3));
  S.tri = core_alloc((size_t)m->nt * 3, sizeof(int32_t));
  S.tet = core_alloc((size_t)m->nv, sizeof(int32_t));
  S.w = core_alloc((size_t)m->nv * 4, sizeof(double));
  if (!S.x || !S.tri || !S.tet || !S.w) {
    core_free(S.x), core_free(S.tri), core_free(S.tet), core_free(S.w);
    return -1;
  }
  memcpy(S.tri, m->tri, sizeof(int32_t) * 3 * (size_t)m->nt);
  /* locate in the current lattice (the mesh as it is now) */
  loom_tet_mesh lattice = {.nv = b->p.n, .nt = b->model.nt, .v = b->p.x, .tet = b->model.tet};
  int first = -1;
  double worst = 0;
  for (int i = 0; i < m->nv; i++) {
    double d;
    S.tet[i] = tet_mesh_locate(&lattice, m->v[i], S.w + 4 * i, &d);
    if (d > 0) {
      if (first < 0) first = i;
      worst = fmax(worst, d);
      S.outside++;
    }
  }
  core_free(b->surface.x), core_free(b->surface.tri), core_free(b->surface.tet), core_free(b->surface.w);
  b->surface = S;
  surface_update(b);
  if (S.outside > 0)
    world_message(w, LOOM_WARNING, world_slot(w, body, LOOM_KIND_SOLID, "embed"),
                  "solid '%s': %d embedded surface vertices lie outside every tet (first: vertex %d, farthest %.3g m); "
                  "they follow their nearest tet",
                  loom_body_name(w, body), S.outside, first, worst);
  return S.outside;
}

LOOM_API const loom_vec3 *loom_solid_surface_vertices(const loom_world *w, int body, int *nv) {
  const solid_body *b = solid_handle(w, body, "surface_vertices");
  if (nv) *nv = b ? b->surface.nv : 0;
  return b && b->surface.nv ? b->surface.x : NULL;
}

LOOM_API const int32_t *loom_solid_surface_triangles(const loom_world *w, int body, int *nt) {
  const solid_body *b = solid_handle(w, body, "surface_triangles");
  if (nt) *nt = b ? b->surface.nt : 0;
  return b && b->surface.nt ? b->surface.tri : NULL;
}

LOOM_API int loom_solid_set_rest(loom_world *w, int body, int reset) {
  solid_body *b = solid_handle(w, body, "set_rest");
  if (!b) return -1;
  const vec3 *src = reset ? b->p.rest : b->p.x;
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    if (!(tet_signed_volume(src[q[0]], src[q[1]], src[q[2]], src[q[3]]) > 0))
      return loom_fail("solid '%s': set_rest: tet %d is inverted or flat in the current shape", loom_body_name(w, body), k);
  }
  memcpy(b->state.rest, src, sizeof(vec3) * (size_t)b->p.n);
  solid_rest_update(b);
  teschner_unit_bounds(b);
  teschner_spectrum(b);
  solid_update_substeps(b, w->dt);
  return 0;
}
