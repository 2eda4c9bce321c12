/* contact_rigid.h — contacts between rigid bodies: the narrow phase (contact_rigid_narrow.c) and
 * the solver (contact_rigid.c). */
#ifndef LOOM_CONTACT_RIGID_H
#define LOOM_CONTACT_RIGID_H

#include "rigid/rigid.h"

#define RIGID_MANIFOLD_MAX 4

typedef struct rigid_mpoint {
  vec3 p;      /* world, midway between the two surfaces */
  double sep;  /* m, negative when the shapes overlap */
  uint32_t id; /* feature id: the same while the same features touch */
} rigid_mpoint;

typedef struct rigid_manifold {
  vec3 n; /* unit, world, from B towards A */
  int count;
  rigid_mpoint pt[RIGID_MANIFOLD_MAX];
} rigid_manifold;

/* The manifold of A at (pa, qa) against B at (pb, qb): points within `margin` of touching. Returns
 * the point count. Pairs no test covers (mesh–mesh) give 0. */
int rigid_collide(const rigid_body *a, vec3 pa, quat qa, const rigid_body *b, vec3 pb, quat qb, double margin,
                  rigid_manifold *m);
/* All the manifolds of the pair, at most cap (a polytope on a triangle mesh can touch it with
 * several normals: a groove, a ridge, a step; every other pair has one): m[0 .. returned). */
#define RIGID_PAIR_MANIFOLDS 8
/* Tests only: when non-zero, a polytope against a mesh triangle tries every pair of edge
 * directions (the reference the Gauss-map pruning of hulls and prisms is checked against). */
extern int rigid_narrow_reference;
int rigid_collide_all(const rigid_body *a, vec3 pa, quat qa, const rigid_body *b, vec3 pb, quat qb, double margin,
                      rigid_manifold *m, int cap);

/* The rigid family in the step: manifolds of the broad phase's rigid pairs at the substep's start
 * (detect), then every awake dynamic body integrated with its contacts (respond). */
void contact_rigid_detect(loom_world *w, const step_info *s);
void contact_rigid_respond(loom_world *w, const step_info *s);
/* The opposite of the impulses cloth contacts (from record `first` on) gave the cloth, to the
 * dynamic rigid bodies they touched. */
void contact_rigid_couple(loom_world *w, int first);

#endif
