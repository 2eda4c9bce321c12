/* contact.h — the contact families and their solvers. Kinds meet here: this folder may include
 * every kind's header. Each family detects into the world's contact buffer during the detect
 * phase and resolves its contacts in the respond phase (docs/architecture.md). */
#ifndef LOOM_CONTACT_H
#define LOOM_CONTACT_H

#include "cloth/cloth.h"
#include "rigid/rigid.h"

/* Vertex against rigid shape (contact_obstacle.c): particles of body pair->a against the static or
 * kinematic shape of pair->b over the current substep. */
void contact_vertices_detect(loom_world *w, const body_pair *pair, const step_info *s);
/* contact_vertices_detect for every broad-phase pair of a particle body with a rigid one
 * (phase_detect.c). */
void detect_vertex_contacts(loom_world *w, const step_info *s);
/* Resolves the vertex contacts of this substep in buffer order (Gauss–Seidel): a vertex that an
 * earlier contact already moved is evaluated again where it is now. */
void contact_vertices_respond(loom_world *w, const step_info *s, int first);
/* contact_cloth.c: contacts as constraints of the implicit cloth solve. Before a cloth's implicit
 * substep the vertices at or near rigid bodies become constraints; after it their impulses go to
 * the dynamic bodies. */
/* How much farther than the contact distance a vertex must stay from a rounded body (sphere,
 * capsule, cylinder side) for the cloth triangles between vertices to stay outside it too
 * (contact_features.c); 0 when the vertices alone keep the cloth out. A cylinder's side asks it
 * beside the side only, not beyond the caps: that part in *side. */
double contact_rounded_clearance(const cloth_body *b, const rigid_body *r, double pad, double *side);
/* The implicit solve's skin, a fraction of the contact distance: its speculative contacts land a
 * vertex this much beyond the contact distance, and a vertex within twice it is touching (so
 * that static friction holds it). */
#define CONTACT_SKIN 1e-6
void contact_constraints_gather(loom_world *w, int slot, const step_info *s);
void contact_constraints_react(loom_world *w, int slot, const step_info *s);
/* After every solve of the substep: a cloth that other cloths' contacts pushed after its own
 * solve takes the push (cloth_implicit_again, or as a velocity change). */
void contact_pushed_again(loom_world *w, int slot, const step_info *s);
/* Sharp features of rigid shapes against cloth triangles and edges (contact_features.c), found
 * where the vertex response left the cloth and resolved at once. */
void contact_features_respond(loom_world *w, const body_pair *pair, const step_info *s);
/* fn(triangle, ctx) for every triangle of tree t whose box comes within pad of segment p0-p1. */
void contact_query_segment_padded(const bvh *t, vec3 p0, vec3 p1, double pad, int (*fn)(int, void *), void *ctx);

/* Crossings among the triangles of particle bodies (slots, self flags) at the substep's start:
 * fn for each crossing pair; the count, -1 out of memory (contact_query.c). */
/* Whether vertex i of p, at x, is pinned within the contact margin of obstacle ob (closer to its
 * surface than particles_thickness(p)): pins ignore contacts, so the elements at such a pin are
 * the user's (warned when the pins are made), not the contact passes'. */
static inline int contact_pin_in_margin(const body_slot *ob, const particles *p, int i, vec3 x) {
  return ob->ops->surface_distance && p->inv_m[i] == 0 && ob->ops->surface_distance(ob, x) < particles_thickness(p);
}

/* Triangles of particle body `slot` that cross a rigid body at the current positions and poses
 * (loom_world_interpenetrations' tests), against analytic shapes always and against triangle
 * meshes when `meshes` (and, whatever `meshes`, the triangles with a node pinned within a mesh's
 * contact margin): how many in all. Those with such a node — held across by the user's pins, which
 * no contact pass moves — are counted apart. */
typedef struct obstacle_crossing_info {
  int count, first_tri, first_rigid;   /* triangles the contact passes had to keep out; the first (slot) */
  int pinned, pinned_tri, pinned_rigid; /* triangles held across by pins; the first */
  int pinned_vertex[8], npinned_vertex; /* pinned nodes in the margin of pinned_rigid, of those triangles (the first 8) */
} obstacle_crossing_info;
int contact_obstacle_crossings(loom_world *w, int slot, int meshes, obstacle_crossing_info *out);
/* Whether triangle t of particle body `slot` at positions x lies across rigid body `rslot` at pose
 * (pos, q), whose box there is rlo..rhi (the exact test of loom_world_interpenetrations), leaving
 * out a triangle with a node pinned within the body's contact margin. */
int contact_triangle_across(const loom_world *w, int slot, const vec3 *x, int t, int rslot, vec3 pos, quat q, vec3 rlo,
                            vec3 rhi);
int contact_soft_crossings_at_start(loom_world *w, const int *slots, const unsigned char *self, int nslots,
                                    void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud);
/* The same at the current positions (x). */
int contact_soft_crossings_now(loom_world *w, const int *slots, const unsigned char *self, int nslots,
                               void (*fn)(int slot_a, int ta, int slot_b, int tb, void *ud), void *ud);

/* Particle bodies against themselves (self_collision) and each other (contact_collide.c): the
 * Bridson-Fedkiw-Anderson pipeline over the substep, after the obstacle families. */
int contact_collide_respond(loom_world *w, const step_info *s); /* vertices it changed */
/* The unique edges of nt triangles (tri: nt x 3), lower vertex first, sorted, into *edges
 * (core_alloc'd, the caller frees it): how many, or -1 out of memory. */
int contact_unique_edges(const int32_t *tri, int nt, const uint8_t *skip, int32_t **edges);
/* Its formulas, exposed for unit tests. Repulsion of a proximity pair with weights w, node inverse
 * masses inv_m (0 = infinite) and masses m, unit normal n from the second feature to the first,
 * relative velocity vrel, distance dist < thick: the relative velocity change (normal: inelastic
 * part plus the spring h k d (1/m_A + 1/m_B), limited to leave 0.1 (thick - dist) / h; tangential:
 * Coulomb, at most mu times the normal change) in *dvrel; 1 if it applies (approaching faster than
 * the limit allows), else 0. */
int contact_repulsion(const double w[4], const double inv_m[4], const double m[4], vec3 n, vec3 vrel, double dist,
                      double thick, double k, double mu, double h, vec3 *dvrel);
/* A resting pair at dist >= thick whose relative velocity would bring it within the thickness
 * over the substep h: the change that makes it arrive there exactly (normal) with Coulomb friction
 * of at most mu times that (tangential), in *dvrel; 1 if it applies, else 0. */
int contact_resting(vec3 n, vec3 vrel, double dist, double thick, double mu, double h, vec3 *dvrel);
/* The relative normal velocity change an inelastic CCD impulse asks for: the pair ends the substep
 * 0.1 thick apart along n (0: it already separates at least that fast). */
double contact_ccd_target(const double w[4], const vec3 x0[4], const vec3 v[4], vec3 n, double thick, double h);
/* What a pair's relative normal velocity v (weights w) still approaches along n after an
 * inelastic CCD impulse of relative change dvn (contact_ccd_target): the mean velocity keeps so
 * much approach as brings the pair to 0.1 thick, and the pair is then in contact, with no relative
 * normal velocity at the substep's end (the impulse is inelastic); this is taken off the end
 * velocity alone. 0 when the pair separates, or the impulse already stops it. */
double contact_ccd_rest(const double w[4], const vec3 v[4], vec3 n, double dvn);

/* Smooth patches (contact_patch.c): parts of a self-colliding body certified, for the substep's
 * paths x_sub + t h vbar, not to touch themselves, whose pairs of features the pipeline skips.
 * patch_build makes the body's fixed hierarchy at its first use (0, or -1 when the body has none:
 * too few triangles, out of memory; its pairs are then all tested). patch_certify finds the
 * certified nodes for the current paths (pt_top: per node, the certified node above or at it, -1
 * none; enabled 0: none) and returns how many; serial numbers the substep whose x_sub the paths start from (within
 * one, only the cones of paths that changed are found again), par is the world's helper (or NULL)
 * and changed n bytes of scratch. patch_recheck, after impulses changed some paths, checks the
 * certified nodes they belong to again and finds the tops afresh if one fails (returns 1: the tops
 * changed).
 * The candidate list holds every pair within reach but those its patches leave out (pt_list_top:
 * the current tops when it is collected, patch_list_made); where the current tops leave out less
 * (patch_shrunk), patch_mark_shrunk marks the vertices whose pairs a top-up adds, skipping only
 * what both leave out, after which the list's patches are those (patch_list_checked). Where the
 * current tops leave out more, the list keeps its pairs and the passes skip them. patch_tree_tags
 * labels the nodes of the triangle and edge trees for a collection's traversals (after every
 * update of the trees). */
int patch_build(particles *p);
int patch_certify(particles *p, double h, int enabled, core_par *par, unsigned serial, uint8_t *changed);
int patch_recheck(particles *p, double h, core_par *par, unsigned serial, uint8_t *changed);
int patch_shrunk(const particles *p);
/* Marks in out (n bytes) the vertices of the triangles of every patch that skips less than when the
 * list was last checked (the vertices whose pairs a top-up must add); returns how many it marked
 * that were not marked. */
int patch_mark_shrunk(const particles *p, uint8_t *out);
void patch_list_made(particles *p);
void patch_list_checked(particles *p);
void patch_tree_tags(particles *p);
/* The certified node under which feature i is left out of pairs (tops: per node, pt_top or
 * pt_list_top; leaf: the owner leaves of its kind, leaf_v, leaf_e or leaf_t), -1 none. */
static inline int32_t patch_top(const int32_t *tops, const int32_t *leaf, int32_t i) {
  return leaf[i] >= 0 ? tops[leaf[i]] : -1;
}
static inline int patch_same(const particle_collide *c, const int32_t *tops, const int32_t *leaf_a, int32_t a,
                             const int32_t *leaf_b, int32_t b) {
  if (c->patches != 1) return 0;
  const int32_t k = patch_top(tops, leaf_a, a);
  return k >= 0 && k == patch_top(tops, leaf_b, b);
}
/* Pair (vertex v, triangle t), and pair of edges (e, f), of one body lie in one certified patch. */
static inline int patch_skips_point(const particle_collide *c, int32_t v, int32_t t) {
  return patch_same(c, c->pt_top, c->leaf_v, v, c->leaf_t, t);
}
static inline int patch_skips_edges(const particle_collide *c, int32_t e, int32_t f) {
  return patch_same(c, c->pt_top, c->leaf_e, e, c->leaf_e, f);
}
/* The same, for the patches whose pairs the candidate list leaves out: pairs it does not hold. */
static inline int patch_skipped_point(const particle_collide *c, int32_t v, int32_t t) {
  return patch_same(c, c->pt_list_top, c->leaf_v, v, c->leaf_t, t);
}
static inline int patch_skipped_edges(const particle_collide *c, int32_t e, int32_t f) {
  return patch_same(c, c->pt_list_top, c->leaf_e, e, c->leaf_e, f);
}

/* Solids with depth_contact against each other (contact_solid.c): document 002's spatial hash,
 * point-in-tet tests, consistent penetration depth and response. Returns the points it moved. */
int contact_solid_respond(loom_world *w, const step_info *s);
/* Spheres and capsules against solids' surface triangles (contact_solid.c). */
void contact_solid_shapes(loom_world *w, const step_info *s);
/* Kinematic and static spheres and capsules against simplex bodies' surfaces (contact_simplex.c):
 * document 004's tool response, continuous and re-queried. */
void contact_simplex_tools(loom_world *w, const step_info *s);

#endif
