/* rigid.h — the rigid kind: static and kinematic bodies today (dynamic ones come with document
 * 003): shape, pose over a step, kinematic targets, sharp features for cloth contacts. Drawing
 * data is not kept here: the renderer asks for a tessellation (loom_rigid_shape_mesh builds it). */
#ifndef LOOM_RIGID_H
#define LOOM_RIGID_H

#include "world/world.h"

/* The model: the shape and what is derived from it, built once at creation. */
typedef struct rigid_model {
  int shape_type;
  geom_shape shape; /* analytic shapes */
  loom_mesh *mesh;  /* LOOM_SHAPE_MESH: shape in body frame */
  bvh tree;         /* over mesh triangles, body frame */
  vec3 *tri_normal; /* unit normals of mesh triangles */
  vec3 local_lo, local_hi;
  /* sharp features (body frame) with outward hints: box corners/edges, cylinder rims, sharp mesh edges */
  vec3 *feat_pt, *feat_pt_n, *feat_seg, *feat_seg_n;
  double *feat_pt_r, *feat_seg_r; /* radius of rounded features (sphere centre, capsule axis), else 0 */
  int nfeat_pt, nfeat_seg;
  /* the faces, convex edges (any angle, and boundary edges) and their corners of a box or mesh as
   * an immovable particle body the collision pipeline tests continuously against cloth
   * (contact_collide.c): ccd->tri and ccd->col.edge index ccd_local, body frame; NULL for smooth
   * shapes */
  particles *ccd;
  vec3 *ccd_local;
  uint8_t *ccd_corner; /* 1: an end of a kept edge (tested against cloth triangles) */
} rigid_model;

/* Parameters (rigid_param_table in rigid_kind.c); motion is fixed at creation. */
typedef struct rigid_params {
  int motion;
  double friction, restitution, thickness;
} rigid_params;

/* State: what a step (or a trajectory) changes; rigid_state_fields lists it for snapshots. */
typedef struct rigid_state {
  vec3 pos, pos0; /* now; at the start of the step being taken */
  quat q, q0;
  vec3 target_pos;
  quat target_q;
  int has_target;
  vec3 vel, omega; /* over the current/last step */
} rigid_state;

typedef struct rigid_body {
  rigid_model model;
  rigid_params params;
  rigid_state state;
} rigid_body;

extern const body_kind rigid_kind;

static inline rigid_body *rigid_of_slot(const body_slot *b) { return (rigid_body *)b->data; }

int rigid_create(loom_world *w, int slot, const void *def);
void rigid_free(void *data);
/* Pose at fraction a in [0, 1] of the current step. */
void rigid_pose_at(const rigid_body *r, double a, vec3 *pos, quat *q);
/* World AABB of the shape swept over the current step, inflated by `pad`. */
void rigid_swept_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi);
/* Velocity of the body's material point at world position p (current step). */
vec3 rigid_point_velocity(const rigid_body *r, vec3 p);
/* Signed distance and outward normal at a point in the body frame (meshes: unsigned). */
double rigid_local_distance(const rigid_body *r, vec3 p, vec3 *n);
/* Sharp features of the shape (rigid_features.c). */
int rigid_build_features(rigid_body *r);
/* The pipeline's body of corners and convex edges (model.ccd), and its positions over the substep
 * [a0, a1] of the current step (x_sub at a0, x at a1, and their box). */
int rigid_build_ccd(rigid_body *r);
void rigid_ccd_place(rigid_body *r, double a0, double a1);
void rigid_ccd_free(rigid_model *m);

#endif
