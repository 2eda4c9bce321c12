/* simplex.h — the simplex kind: deformable surfaces on simplex-2 meshes (document 004). Models:
 * 004's "new scheme" (simplex_mra: each vertex anchored to its rest position and coupled to its
 * three neighbours through rest offset vectors, Eq. 6.3) and a rotation-invariant variant
 * (simplex_shape: the offsets and anchors rotate with shape-matched rotations of each vertex's
 * neighbourhood and of the whole body). Integrators: 004's central differences (default), explicit
 * Euler, Heun and RK4, all two-phase (every force from the old positions, then every update).
 * Private to the kernel; the world reaches it through simplex_kind and contact/ through the
 * particle view and this header. */
#ifndef LOOM_SIMPLEX_H
#define LOOM_SIMPLEX_H

#include "world/world.h"

typedef struct simplex_params {
  int model, integrator;
  double k, k_anchor, damping; /* N/m, N/m, N s/m per vertex */
  int substeps_user;
  int response;                /* loom_simplex_response */
  double kp, kd;               /* PD response gains */
  int hold;                    /* 004's contact hold */
  int passes;                  /* project response: re-query passes per substep */
} simplex_params;

typedef struct simplex_model {
  int ne;
  int32_t *nbr;   /* n x 3, 004's rotational order */
  int32_t *edge;  /* ne x 2 */
  vec3 *orig;     /* the original shape (reset) */
  double scale2;  /* mean squared rest edge length (weights the normal term of the rotation fit) */
} simplex_model;

/* What a step changes beyond x and v (simplex_state_fields lists it for checkpoints). */
typedef struct simplex_state {
  vec3 *rest;     /* per vertex: the rest shape (set_rest moves it) */
  double *rot;    /* per vertex: the neighbourhood's rotation as a quaternion (w, x, y, z), the
                   * shape model's warm start */
  double rot_body[4]; /* the whole body's rotation (shape model) */
  vec3 *pd;       /* per vertex: PD response target offset found by the last contact pass (m) */
  uint8_t *held;  /* per vertex: 1 = touching a tool that did not move (004's hold) */
} simplex_state;

typedef struct simplex_derived {
  double h_stable;
  int substeps_auto, warned_substeps, warned_unresolved;
} simplex_derived;

typedef struct simplex_scratch {
  vec3 *F, *a, *x1, *v1, *xacc, *vacc; /* arena, valid during a step */
  double *rot_tmp;                     /* n x 4 (heap): rotations of intermediate stages */
  int tool_contacts, tool_unresolved;
} simplex_scratch;

typedef struct simplex_body {
  particles p;
  simplex_params params;
  simplex_model model;
  simplex_state state;
  simplex_derived derived;
  simplex_scratch scratch;
} simplex_body;

static inline simplex_body *simplex_of(const body_slot *s) { return (simplex_body *)s->data; }

/* simplex_model.c */
/* Internal forces at positions x into F (overwritten); rot (n x 4) and rot_body (4) are the shape
 * model's warm starts, updated in place (ignored by simplex_mra). */
void simplex_forces(const simplex_body *b, const vec3 *x, vec3 *F, double *rot, double *rot_body);
double simplex_energy(const simplex_body *b, const vec3 *x);
/* The rotation that best maps rest offsets onto current ones, R maximising tr(R^T A): Newton steps
 * (Mueller et al. 2016's step where Newton's is not defined) warm-started from q (updated). */
void simplex_extract_rotation(const mat3 *A, double q[4], int iterations);
/* The largest squared frequency bound (k_anchor + 6 k) / m_min, 1/s^2. */
double simplex_omega2(const simplex_body *b);

/* 004's 1-D oscillator m x'' + b x' + k x = 0: exact state at t (any damping). */
void oscillator_exact(double m, double b, double k, double x0, double v0, double t, double *x, double *v);

#endif
