/* world.h — private data model of a world: bodies, pin groups, scratch, messages. Model
 * (topology, rest state, parameters) and state (positions, velocities, time) live side by side in
 * each body but are copied separately by snapshots and transplants (world_state.c). */
#ifndef LOOM_WORLD_H
#define LOOM_WORLD_H

#include "bvh/bvh.h"
#include "core/core.h"
#include "geom/geom.h"
#include "math/math_vec.h"
#include "mesh/mesh.h"

#define WORLD_MAX_BODIES 65535
#define WORLD_MESSAGES 64
#define WORLD_MESSAGE_LEN 320
/* Divergence guard thresholds: a state beyond these is treated like a non-finite one. */
#define SOFT_MAX_SPEED 1.0e4    /* m/s */
#define SOFT_MAX_COORD 1.0e6    /* m */
#define SOFT_MAX_SUBSTEPS 4096

typedef struct spring {
  int32_t i, j;
  double rest; /* m */
} spring;

/* Baraff–Witkin triangle: weights of the (u, v) -> x map. w_u = sum_k du[k] x_k, w_v = sum_k dv[k] x_k. */
typedef struct bw_tri {
  int32_t v[3];
  double area; /* rest area, m^2 */
  double du[3], dv[3];
} bw_tri;

typedef struct bw_hinge {
  int32_t v[4];  /* edge v0 -> v1, wing a (triangle 0), wing b (triangle 1) */
  double weight; /* 3 |e|^2 / (A0 + A1) at rest (dimensionless) */
  double rest;   /* rest dihedral angle, rad */
} bw_hinge;

enum { FAM_STRUCTURAL = 0, FAM_SHEAR = 1, FAM_BEND = 2, FAM_COUNT = 3 };

typedef struct soft_body {
  int n, nt;
  /* state */
  vec3 *x, *v, *x_prev; /* x_prev: Verlet's previous position (valid when has_prev) */
  double prev_h;        /* substep that x_prev refers to */
  int has_prev;
  int frozen;
  /* inputs/outputs shared with Lua */
  vec3 *f;     /* external force accumulator, cleared each step */
  double *m;   /* current mass (0 while pinned) — what Lua sees as body.m */
  /* model */
  double *mass;  /* real vertex mass, kg */
  double total_mass; /* kg */
  double *inv_m; /* 0 = pinned */
  vec3 *rest;
  int32_t *tri;
  int32_t *pin_group; /* group slot per vertex, -1 = free */
  uint8_t *contact;
  int model, integrator;
  double stretch, shear, bend, damping, drag, thickness, friction;
  int substeps_user, iterations;
  int substeps_auto;
  double h_stable; /* s, stability estimate of the explicit integrators */
  double lambda_unit[FAM_COUNT]; /* lambda_max(M^-1/2 K_f M^-1/2) per family at unit stiffness */
  int spectrum_ok;
  spring *springs;
  int fam_start[FAM_COUNT + 1]; /* springs of family f are [fam_start[f], fam_start[f+1]) */
  bw_tri *bw;
  int nbw;
  bw_hinge *hinges;
  int nh;
  int grid_nx, grid_ny;
  int warned_substeps;
  /* elements for obstacle-feature contacts (contact_features.c) */
  int ne;
  int32_t *edge;       /* ne x 2 */
  int32_t *tri_edge;   /* nt x 3 edge indices */
  int32_t *edge_owner; /* first triangle of each edge: each edge is tested once */
  vec3 *tri_lo, *tri_hi;
  double max_circumradius; /* of the rest triangles, m */
  bvh tri_tree;        /* over triangles, refit each substep that needs it */
} soft_body;

typedef struct rigid_body {
  int shape_type;
  geom_shape shape;  /* analytic shapes */
  loom_mesh *mesh;   /* LOOM_SHAPE_MESH: shape in body frame */
  bvh tree;          /* over mesh triangles, body frame */
  vec3 *tri_normal;  /* unit normals of mesh triangles */
  loom_mesh *render; /* tessellation for drawing */
  vec3 local_lo, local_hi;
  int motion;
  vec3 pos, pos0;      /* now; at the start of the step being taken */
  quat q, q0;
  vec3 target_pos;
  quat target_q;
  int has_target;
  vec3 vel, omega; /* over the current/last step */
  double friction, restitution, thickness;
  /* sharp features (body frame) with outward hints: box corners/edges, cylinder rims, sharp mesh edges */
  vec3 *feat_pt, *feat_pt_n, *feat_seg, *feat_seg_n;
  double *feat_pt_r, *feat_seg_r; /* radius of rounded features (sphere centre, capsule axis), else 0 */
  int nfeat_pt, nfeat_seg;
} rigid_body;

typedef struct body_slot {
  int kind;           /* loom_kind; LOOM_KIND_NONE = free slot */
  uint16_t generation;
  char *name;
  soft_body *soft;
  rigid_body *rigid;
} body_slot;

typedef struct pin_group {
  int alive;
  uint16_t generation;
  int body;     /* slot of the soft body */
  int count;
  int32_t *idx;
  vec3 *rest;   /* rest positions (re-based on hold) */
  vec3 offset;  /* current offset */
  vec3 target;  /* offset at the end of the next step */
  int held;
} pin_group;

struct loom_world {
  double dt, time, steps;
  vec3 gravity, wind;
  body_slot *bodies;
  int body_cap, body_slots; /* slots used (including freed ones) */
  int32_t *order;           /* live body slots in creation order */
  int order_count;
  pin_group *groups;
  int group_cap, group_slots;
  arena scratch;
  loom_stats stats;
  char messages[WORLD_MESSAGES][WORLD_MESSAGE_LEN];
  int message_count;
  /* mouse grab */
  int grab_slot, grab_vertex;
  vec3 grab_target;
  double grab_omega;
};

/* ---- world.c -------------------------------------------------------------------------------- */
/* Slot of a valid handle of the given kind (LOOM_KIND_NONE = any), or -1 with a message. */
int world_slot(const loom_world *w, int handle, int kind, const char *fn);
int world_handle(const loom_world *w, int slot);
/* Reserves a new body slot with a unique name; returns the slot or -1 (message set). */
int world_new_body(loom_world *w, const char *name, const char *fn);
/* Appends a message (printf style) to the world's ring. */
void world_message(loom_world *w, const char *fmt, ...) LOOM_PRINTF(2, 3);
/* Grows the scratch arena so one step of any body fits without allocating. */
int world_reserve_scratch(loom_world *w);

/* ---- soft_cloth.c (creation, masses, parameters, stability estimate) ------------------------ */
int soft_create(loom_world *w, int slot, const loom_cloth_def *def);
void soft_free(soft_body *b);
int soft_set_param(soft_body *b, const char *name, double value, double dt, const char *body_name);
int soft_get_param(const soft_body *b, const char *name, double *out);
/* Recomputes h_stable and substeps_auto for the world step dt. */
void soft_update_substeps(soft_body *b, double dt);
/* soft_stability.c: per-family spectral estimate at rest (call after the model is built). */
int soft_estimate_spectrum(soft_body *b);
/* Bytes of scratch one step of this body needs. */
size_t soft_scratch_bytes(const soft_body *b);
/* Internal (model) forces into F (overwritten) at positions x and velocities v. */
void soft_internal_forces(const soft_body *b, const vec3 *x, const vec3 *v, vec3 *F);
/* Elastic energy of the model at x. */
double soft_elastic_energy(const soft_body *b, const vec3 *x);

/* ---- soft_springs.c ----------------------------------------------------------------------------- */
/* Builds the three spring families (grid topology when known, else edges + hinge wings). */
int springs_build(soft_body *b, const loom_mesh *m);
void springs_forces(const soft_body *b, const vec3 *x, const vec3 *v, vec3 *F);
double springs_energy(const soft_body *b, const vec3 *x);
/* Position-based projection of every spring family once (001 constraint variant). */
void springs_project(const soft_body *b, vec3 *x);
/* Gershgorin bound of omega^2 = lambda_max(M^-1 K) at rest. */
double springs_omega2_bound(const soft_body *b);

/* ---- soft_baraff_witkin.c ----------------------------------------------------------------------- */
int bw_build(soft_body *b, const loom_mesh *m);
void bw_forces(const soft_body *b, const vec3 *x, const vec3 *v, vec3 *F);
double bw_energy(const soft_body *b, const vec3 *x);
double bw_omega2_bound(const soft_body *b);
/* Signed dihedral angle of a hinge and its gradient (4 x 3) — exposed for the unit tests. */
double bw_hinge_angle(const vec3 *x, const int32_t v[4], vec3 grad[4]);

/* ---- integrate_explicit.c ----------------------------------------------------------------------- */
/* Advances one soft body by dt (substeps, pins, contacts, divergence guard). */
void soft_step(loom_world *w, int slot, double dt);

/* ---- rigid_body.c -------------------------------------------------------------------------------- */
int rigid_create(loom_world *w, int slot, const loom_rigid_def *def);
void rigid_free(rigid_body *r);
/* Pose at fraction a in [0, 1] of the current step. */
void rigid_pose_at(const rigid_body *r, double a, vec3 *pos, quat *q);
/* World AABB of the shape swept over the current step, inflated by `pad`. */
void rigid_swept_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi);
/* Velocity of the body's material point at world position p (current step). */
vec3 rigid_point_velocity(const rigid_body *r, vec3 p);
/* Signed distance and outward normal at a point in the body frame (meshes: unsigned). */
double rigid_local_distance(const rigid_body *r, vec3 p, vec3 *n);

/* ---- contact_obstacle.c --------------------------------------------------------------------------- */
/* Keeps the vertices of a soft body outside every rigid body after a substep from x_start to x
 * (fraction a0 -> a1 of the step): projection to thickness, segment test against meshes, Coulomb
 * friction on the velocity. Updates flags and stats. */
void contact_soft_obstacles(loom_world *w, soft_body *b, const vec3 *x_start, double a0, double a1, double h);

/* ---- contact_features.c ----------------------------------------------------------------------------- */
/* Sharp features of a rigid body's shape (box corners and edges, cylinder rims, sharp mesh edges). */
int rigid_build_features(rigid_body *r);
/* Edges, triangle-edge map and triangle tree of a soft body. */
int soft_build_elements(soft_body *b, const loom_mesh *m);
/* Obstacle features against cloth triangles and edges at the end of a substep (fraction a1). */
void contact_soft_features(loom_world *w, soft_body *b, double a1);

#endif
