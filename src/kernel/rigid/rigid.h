/* rigid.h — the rigid kind: static, kinematic and dynamic bodies (document 003): shape, mass
 * properties, pose over a step, kinematic targets, free motion, sharp features for cloth
 * contacts. Drawing data is not kept here: the renderer asks for a tessellation
 * (loom_rigid_shape_mesh builds it). Contacts between rigid bodies are solved in
 * contact/contact_rigid.c. */
#ifndef LOOM_RIGID_H
#define LOOM_RIGID_H

#include "world/world.h"

/* A convex polytope in the body frame (box; cylinder as a prism) for the rigid narrow phase:
 * vertices, faces as vertex loops (counter-clockwise seen from outside) with their planes
 * n . x = d, and the distinct edge directions. */
#define RIGID_POLY_MAX_FACE 64    /* sides of a prism */
#define RIGID_POLY_MAX_VERTS 128  /* a convex hull's vertices, faces and edges at most */
#define RIGID_POLY_MAX_FACES 128
#define RIGID_POLY_MAX_EDGES 256
typedef struct rigid_poly {
  int nv, nf, ndir, ne;
  double radius; /* of a sphere about the origin that holds it */
  vec3 *v;
  int32_t *face_first, *face_count, *face_v; /* face f: face_v[face_first[f] .. + face_count[f]] */
  vec3 *face_n;
  double *face_d;
  vec3 *dir; /* unit edge directions, one per family of parallel edges */
  int32_t *edge_v, *edge_f; /* hulls and prisms: each edge's two vertices and its two faces (Gauss-map tests) */
  int hull;                 /* a convex hull: hull pairs test only the edge pairs the Gauss map keeps */
} rigid_poly;

/* Mesh-based shapes (a triangle mesh, a convex hull) answer distance queries from their mesh. */
static inline int rigid_shape_has_mesh(int shape_type) { return shape_type == LOOM_SHAPE_MESH || shape_type == LOOM_SHAPE_CONVEX; }

/* The model: the shape and what is derived from it, built once at creation. */
typedef struct rigid_model {
  int shape_type;
  /* mass properties (dynamic bodies; static and kinematic ones keep them for reports): kg, and
   * the inertia tensor about the centre of mass in the body frame (kg m^2) with its inverse */
  double mass, inv_mass;
  mat3 inertia, inv_inertia;
  rigid_poly *poly; /* box and cylinder (prism): the polytope the narrow phase clips */
  geom_shape shape; /* analytic shapes */
  double rounded;   /* spheres and capsules: the radius (their contact points lie that far from the axis), else 0 */
  loom_mesh *mesh;  /* LOOM_SHAPE_MESH: shape in body frame */
  bvh tree;         /* over mesh triangles, body frame */
  vec3 *tri_normal; /* unit normals of mesh triangles */
  int32_t *tri_adj;    /* per mesh triangle edge k -> k + 1: the triangle across it, -1 none */
  uint8_t *tri_convex; /* per mesh triangle, bit k: edge k -> k + 1 is a convex fold, bit k + 3: of more than 10 degrees (rigid_mesh_edges) */
  /* a closed triangle mesh (manifold, consistently wound counter-clockwise from outside, enclosing
   * a positive volume) has an inside: its distance is signed, by the angle-weighted pseudo-normal
   * of the nearest feature (Baerentzen and Aanaes 2005); vert_pn holds the vertices' ones (the
   * edges' are the sums of their two triangles' normals), NULL for any other mesh */
  vec3 *vert_pn;
  vec3 local_lo, local_hi;
  /* sharp features (body frame) with outward hints: box corners/edges, cylinder rims, sharp mesh edges */
  vec3 *feat_pt, *feat_pt_n, *feat_seg, *feat_seg_n;
  double *feat_pt_r, *feat_seg_r; /* radius of rounded features (sphere centre, capsule and cylinder axes), else 0 */
  uint8_t *feat_seg_side;         /* 1: a cylinder's axis, tested beside the segment only, not beyond its ends */
  uint8_t *feat_pt_hard, *feat_seg_hard; /* 1: a hard feature, whose faces turn by more than 60 degrees (box
                                          * edges and corners, cylinder rims, boundary and such mesh edges and
                                          * their ends), which holds a cloth in its implicit solve */
  double feat_round_r;            /* the largest radius of a rounded feature, 0 without one */
  int nfeat_pt, nfeat_seg;
  /* the faces, convex edges (any angle, and boundary edges) and their corners of a box or mesh (a
   * static or kinematic sphere's icosphere, a cylinder's prism) as an immovable particle body the
   * collision pipeline tests continuously against cloth (contact_collide.c): ccd->tri and
   * ccd->col.edge index ccd_local, body frame */
  particles *ccd;
  vec3 *ccd_local;
  uint8_t *ccd_corner; /* 1: an end of a kept edge (tested against cloth triangles) */
  int ccd_core;        /* ccd is the shape's core (a capsule's axis, a dynamic sphere's centre or cylinder's axis), not its surface */
} rigid_model;

/* Parameters (rigid_param_table in rigid_kind.c); motion is fixed at creation. */
typedef struct rigid_params {
  int motion;
  double friction, restitution, thickness;
  int linear, angular;        /* dynamic bodies: translation and rotation enabled (003's kinds) */
  int integrator;             /* free motion: RIGID_SYMPLECTIC, RIGID_RK4, RIGID_EULER */
  double linear_damping, angular_damping; /* 1/s */
  double gravity_scale;
  int altitude_gravity;       /* 003's g (1 - 2 z / R_earth) */
  int can_sleep;
  double rolling, torsion; /* m: rolling and torsional resistance lever arms (0: none) */
  int layers, mask; /* collision filtering: two bodies touch when each one's layers meet the other's mask */
} rigid_params;

enum { RIGID_SYMPLECTIC = 0, RIGID_RK4 = 1, RIGID_EULER = 2 };

/* Contacts between rigid bodies are made within this distance before they touch (speculative
 * contacts: the solver lets the gap close, not more), m. */
#define RIGID_SPECULATIVE 0.02

/* State: what a step (or a trajectory) changes; rigid_state_fields lists it for snapshots. */
typedef struct rigid_state {
  vec3 pos, pos0; /* now; at the start of the step being taken */
  quat q, q0;
  vec3 target_pos;
  quat target_q;
  int has_target;
  vec3 vel, omega; /* over the current/last step (dynamic: now, world frame, about the centre
                    * of mass, which is the body origin) */
  vec3 force, torque; /* dynamic: accumulated for the next step (N, N m), cleared by commit */
  double sleep_time;  /* s the body has been nearly still */
  int asleep;
  /* the span of the step the pose pair (pos0, q0) -> (target_pos, target_q) covers: the whole
   * step for static and kinematic bodies, the current substep for dynamic ones */
  double span0, span1;
} rigid_state;

typedef struct rigid_body {
  rigid_model model;
  rigid_params params;
  rigid_state state;
  int solver_index; /* the rigid solver's index of the body in the current substep, or -1 */
  int fresh;        /* created since the last rigid narrow phase (overlaps at creation are reported) */
  /* what implicit cloth's contacts exert on the body over the current substep (N, N m), spread
   * over it like gravity (contact/contact_cloth.c); zero outside the substep's respond phase */
  vec3 cloth_force, cloth_torque;
  int cloth_under;   /* this substep, cloth lies between the body and an immovable one it rests on */
  double cloth_gap;  /* and keeps them this far apart (twice the cloth's thickness) */
} rigid_body;

extern const body_kind rigid_kind;

static inline rigid_body *rigid_of_slot(const body_slot *b) { return (rigid_body *)b->data; }

int rigid_create(loom_world *w, int slot, const void *def);
void rigid_free(void *data);
/* Mass properties of a shape of density rho (mesh: closed, outward triangles; exact polyhedral
 * integrals): mass, centre of mass and inertia about it in the shape frame. -1 with a message for
 * an open or inside-out mesh or a non-positive volume. (rigid_mass.c) */
int rigid_mass_properties(int shape_type, const geom_shape *s, const loom_mesh *mesh, double rho, double *mass, vec3 *com,
                          mat3 *inertia);
/* The polytope of a box or of a cylinder (a prism of `sides` sides); NULL when out of memory. */
rigid_poly *rigid_poly_box(vec3 half);
rigid_poly *rigid_poly_prism(double radius, double half_h, int sides);
/* The polytope of a closed convex mesh: coplanar triangles merged into faces; NULL with a message
 * when it has more than RIGID_POLY_MAX_* vertices, faces or edges, or no memory. */
rigid_poly *rigid_poly_hull(const loom_mesh *hull);
void rigid_poly_free(rigid_poly *p);

/* Free motion of a dynamic body over h (rigid_dynamics.c): velocities from forces and gravity (with
 * the implicit gyroscopic term), then the pose; rk4 and euler integrate (x, q, P, L) together. */
void rigid_integrate_velocity(const loom_world *w, rigid_body *r, double h);
void rigid_integrate_pose(rigid_body *r, double h);
void rigid_free_motion(const loom_world *w, rigid_body *r, double h);
/* World inverse inertia R I0^-1 R^T at orientation q. */
mat3 rigid_world_inv_inertia(const rigid_body *r, quat q);
static inline int rigid_is_dynamic(const rigid_body *r) { return r->params.motion == LOOM_DYNAMIC; }

/* Pose at fraction a in [0, 1] of the current step. */
void rigid_pose_at(const rigid_body *r, double a, vec3 *pos, quat *q);
/* World AABB of the shape swept over the current step, inflated by `pad`. */
void rigid_swept_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi);
/* The box of the body where it is now (state.pos, state.q), grown by pad. */
void rigid_current_aabb(const rigid_body *r, double pad, vec3 *lo, vec3 *hi);
/* Velocity of the body's material point at world position p (current step). */
vec3 rigid_point_velocity(const rigid_body *r, vec3 p);
/* Signed distance and outward normal at a point in the body frame (open meshes and meshes that are
 * not closed: unsigned, the normal pointing from the nearest point to p). */
double rigid_local_distance(const rigid_body *r, vec3 p, vec3 *n);
/* The same, its mesh queries made and counted as mq says (NULL: through the tree, uncounted). */
double rigid_local_distance_q(const rigid_body *r, vec3 p, vec3 *n, obstacle_query *mq);
/* The nearest triangle of a mesh body to p (body frame) within max_dist, as bvh_closest_triangle:
 * through the body's tree, or scanning every triangle when mq->brute; mq may be NULL. */
int rigid_mesh_closest(const rigid_body *r, vec3 p, double max_dist, double *dist, vec3 *closest, double bary[3],
                       obstacle_query *mq);
/* The triangles' neighbours across their edges (adj: 3 per triangle, -1 at a boundary) and which
 * edges are convex folds (bit k of convex[t]; bit k + 3: by more than 10 degrees), seen from the
 * front (rigid_body.c); 0 or -1. */
int rigid_mesh_edges(const loom_mesh *m, int32_t **adj, uint8_t **convex);
/* Sharp features of the shape (rigid_features.c). */
int rigid_build_features(rigid_body *r);
/* The pipeline's body of corners and convex edges (model.ccd), and its positions over the substep
 * [a0, a1] of the current step (x_sub at a0, x at a1, and their box). */
int rigid_build_ccd(rigid_body *r);
void rigid_ccd_place(rigid_body *r, double a0, double a1);
void rigid_ccd_free(rigid_model *m);

#endif
