/* solid.h — the solid kind: volumetric bodies on tetrahedral meshes. Models: Teschner et al.'s
 * constraint-based mass-spring (document 002: edge distance and tet volume constraints,
 * explicit Verlet with automatic substeps) and a stable Neo-Hookean FEM (Smith et al. 2018) on
 * linear tets integrated by backward Euler with a filtered conjugate gradient. An optional fine
 * surface is embedded by barycentric coordinates. Private to the kernel; the world reaches it
 * through solid_kind (world_kinds.c) and contact/ through the particle view. */
#ifndef LOOM_SOLID_H
#define LOOM_SOLID_H

#include "world/world.h"

typedef struct solid_params {
  int model, integrator;
  double distance, volume, damping; /* teschner: k_D (J), k_V (J), d_C (J s) */
  double young, poisson;            /* neohookean: E (Pa), nu */
  double rayleigh;                  /* neohookean: stiffness-proportional damping (s) */
  double yield, creep;              /* plasticity: yield strain (0 = elastic) and flow fraction per step */
  int substeps_user;
  double cg_tolerance;
  int cg_iterations;
} solid_params;

typedef struct solid_model {
  int nt, ne;
  int32_t *tet;       /* nt x 4, positive orientation */
  int32_t *edge;      /* ne x 2 */
  double *tet_vol0;   /* rest volumes, m^3 (plasticity moves them: see state) */
  double mu, lambda, alpha; /* neohookean: Smith et al.'s parameters from E and nu */
  double omega2_unit[3];    /* Gershgorin bounds at unit k_D, k_V, d_C (1/s^2, 1/s^2, 1/s) */
  double lambda_unit[2];    /* lambda_max at unit k_D and k_V by power iteration (1/s^2) */
  /* the implicit solver's matrix pattern: block CSR over vertices (row = vertex, sorted cols) */
  int32_t *row, *col;  /* n + 1, nnz */
  int32_t *tet_slot;   /* nt x 16: the block of (corner a, corner b) in col */
  int nnz;
  int32_t *adj_row, *adj; /* vertex adjacency over the edges (CSR, n + 1 and 2 ne) */
} solid_model;

/* What a step changes beyond x and v (solid_state_fields lists it for checkpoints). */
typedef struct solid_state {
  vec3 *a_prev;      /* per vertex: the last substep's acceleration (the end-of-substep velocity) */
  vec3 *rest;        /* per vertex: the rest shape (plasticity moves it; else the mesh's) */
  vec3 *cn;          /* per vertex: the normal of the obstacle it touched in the last substep (zero:
                      * none); the implicit solve holds its normal velocity (a constraint) */
  double *cvn;       /* per vertex: that obstacle's normal velocity there (a moving press), m/s */
  vec3 *cvt;         /* per vertex: its tangential velocity there, m/s */
  double *cmu;       /* per vertex: that contact's friction coefficient */
  int32_t *cbody;    /* per vertex (implicit solids): the handle of the soft body whose triangle it
                      * touched in the last substep through the collision pipeline (0: none); the
                      * solve holds it like an obstacle contact and gives that body the reaction */
  int32_t *ctri;     /* per vertex: that triangle */
  vec3 *cw;          /* per vertex: the weights of its point nearest the vertex */
  vec3 *damp_prev;   /* per vertex: the velocity change of the last substep's damping solve (its
                      * first guess in the next, teschner_damp), m/s */
} solid_state;

typedef struct solid_derived {
  double h_stable;
  int substeps_auto, warned_substeps;
  int warned_cg, warned_inverted;
  double rest_length, rest_area_min; /* mean rest edge length (m) */
} solid_derived;

/* Rest-shape quantities recomputed from state.rest (at creation, and when plasticity moves it). */
typedef struct solid_rest {
  double *len0;      /* ne: rest edge lengths */
  double *vol0;      /* nt: rest volumes */
  double *dm_inv;    /* nt x 9: inverse of the rest edge matrix [x1-x0, x2-x0, x3-x0], row major */
} solid_rest;

typedef struct solid_surface {
  int nv, nt;
  vec3 *x;           /* embedded vertices, moved with the lattice at each step's end */
  int32_t *tri;
  int32_t *tet;      /* enclosing (or nearest) tet per vertex */
  double *w;         /* 4 barycentric weights per vertex */
  int outside;       /* vertices outside every tet (placed by their nearest tet) */
} solid_surface;

typedef struct solid_scratch {
  vec3 *F, *u, *r, *d, *q, *s, *rhs, *dv;
  double *blocks;    /* nnz x 9: the system matrix */
  double *diag_inv;  /* n x 9: inverse diagonal blocks */
  double *row_bound; /* n: Gershgorin row sums (explicit substep estimate), the damping's Jacobi */
  double *ism;       /* n: 1 / sqrt(m) for the bound (teschner_omega2_now) */
  vec3 *edge_u;      /* ne: edge directions times sqrt(h d_C / l0^2), the damping solve (arena) */
  vec3 *v0;          /* n: velocities before the damping solve (arena) */
  vec3 *cimp;        /* n: the impulse a vertex's contact constraint gave it in the solve (arena) */
  int cg_iterations;
  double cg_residual;
} solid_scratch;

typedef struct solid_body {
  particles p;
  solid_params params;
  solid_model model;
  solid_rest restq;
  solid_state state;
  solid_derived derived;
  solid_surface surface;
  solid_scratch scratch;
} solid_body;

static inline solid_body *solid_of(const body_slot *s) { return (solid_body *)s->data; }

/* solid_teschner.c */
/* Forces of document 002's model with its damping d_C (teschner_forces) or with a given one. */
void teschner_forces(const solid_body *b, const vec3 *x, const vec3 *v, vec3 *F);
void teschner_forces_damped(const solid_body *b, const vec3 *x, const vec3 *v, vec3 *F, double dc);
/* The distance constraints' damping applied to velocities v over h, implicitly edge by edge. */
void teschner_damp(const solid_body *b, const vec3 *x, vec3 *v, double h);
double teschner_energy(const solid_body *b, const vec3 *x);
void teschner_unit_bounds(solid_body *b);
void teschner_spectrum(solid_body *b);
/* The stiffness bound at the current shape (scratch.row_bound must be set); 1/s^2. */
double teschner_omega2_now(const solid_body *b);

/* solid_neohookean.c */
void neohookean_params(double young, double poisson, double *mu, double *lambda, double *alpha);
/* Energy density, first Piola-Kirchhoff stress (row major) and, when d2 is not NULL, the 9 x 9
 * Hessian dP/dF over vec(F) = F's columns stacked, projected to positive semi-definite when
 * project is 1 (negative eigenvalues clamped to 0). */
double neohookean_psi(const double F[9], double mu, double lambda, double alpha, double P[9], double *d2, int project);
void neohookean_forces(const solid_body *b, const vec3 *x, vec3 *F);
double neohookean_energy(const solid_body *b, const vec3 *x);
int solid_implicit_build(solid_body *b);
void solid_implicit_substep(solid_body *b, double h, vec3 g, const vec3 *pin_v, int grab_vertex, vec3 grab_target,
                            double grab_k, double grab_c);
/* The obstacle contacts of this substep (the world's contact buffer) as constraints of the next
 * implicit solve. */
void solid_record_contacts(loom_world *w, body_slot *s);

/* solid_body.c */
void solid_rest_update(solid_body *b);
void solid_update_substeps(solid_body *b, double dt);
double solid_current_volume(const solid_body *b, const vec3 *x);

#endif
