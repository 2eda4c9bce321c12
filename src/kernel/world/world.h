/* world.h — the world: body slots, body kinds, pin groups, the contact buffer, scratch, messages.
 *
 * Bodies of every kind live in slots; a slot names its kind through a table of operations
 * (body_kind), so the step, snapshots, queries and contacts never branch on "soft or rigid".
 * Kinds whose state is a set of particles (cloth today; tetrahedral solids and simplex meshes
 * later) also expose a `particles` view: the arrays Lua reads and writes, pins, the contact
 * flags, and the per-step scratch the phases share. See docs/architecture.md, "One step". */
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
#define SOFT_MAX_SPEED 1.0e4 /* m/s */
#define SOFT_MAX_VERTEX_MASS 1.0e9 /* kg: a vertex's mass written from Lua (a body's total is bounded alike) */
#define SOFT_MAX_COORD MESH_MAX_COORD /* m: 1e6 (a body's mesh must lie within it, mesh_check_reach) */
#define WORLD_MAX_SUBSTEPS 4096


/* ---- handles: generation (15 bits) << 16 | (slot + 1); 0 is never valid ------------------------ */
static inline int handle_pack(int slot, uint16_t generation) {
  return (int)(((uint32_t)(generation & 0x7fff) << 16) | (uint32_t)(slot + 1));
}
static inline int handle_slot(int handle) { return handle > 0 ? (handle & 0xffff) - 1 : -1; }
static inline int handle_generation(int handle) { return (handle >> 16) & 0x7fff; }

/* ---- the collision pipeline's data per particle body (contact/contact_collide.c) ----------------
 * Built at the pipeline's first use for the body; freed with the particles. */
typedef struct particle_collide {
  int ready, warned;
  int ne;
  int32_t *edge;         /* unique edges of the surface triangles: 2 vertices each, lower first */
  bvh tri_tree, edge_tree;
  bvh vert_tree;         /* the vertices' start and end boxes (a list's top-up finds the vertices near a
                          * moved face) */
  vec3 *vert_lo, *vert_hi, *vert_elo, *vert_ehi;
  vec3 *was;             /* a top-up's copy of the vertex, triangle and edge boxes before it */
  int vert_ok;           /* vert_tree was built since the last collection (a top-up refits it) */
  bvh_work bwork;        /* the trees' rebuild buffers */
  vec3 *tri_lo, *tri_hi, *edge_lo, *edge_hi; /* the features' start boxes (the trees' boxes) */
  vec3 *tri_elo, *tri_ehi, *edge_elo, *edge_ehi; /* and their end boxes (bvh_enable_ends) */
  double built_area;     /* summed node box areas right after the last build (quality reference) */
  vec3 *vbar, *vbar0;    /* mean velocity over the substep: corrected, and as predicted */
  vec3 *ecol, *ecol_hi;  /* each vertex's start box and end box when the candidates were last collected
                          * or topped up (contact_collide.c, vertex_boxes) */
  vec3 *ecol_e, *ecol_ehi;
  int ends;              /* how many vertices have an end box that is not their start box */
  double tree_reach;     /* the inflation of the trees' boxes (and the vertex queries') at their last
                          * update */
  double list_margin;    /* the margin the candidate list was last collected with (0: none) */
  double edge_short;     /* the lower quartile of its edges' lengths at first use (the search
                          * margin's room: contact_collide.c, margin_top) */
  double *inv_m;         /* inverse masses in the pipeline: 0 for pinned vertices */
  vec3 *nobs;            /* the (mean) obstacle normal holding a vertex this step (held == 1) */
  uint8_t *held;         /* 0 free, 1 held on one side by an obstacle (moves freely away from it) */
  int32_t *count;        /* Jacobi: contributions per vertex */
  int32_t *stamp;        /* the pass that last changed the vertex's velocity */
  uint8_t *tangled;      /* 1: a triangle of the vertex crossed another at the start of the substep */
  vec3 *xprev;           /* x_sub at the previous run (bounds on how far start distances shrank) */
  int xprev_ok;
  vec3 *xend;            /* x as the last run left it (a later run of the substep: what changed since) */
  vec3 *xdone;           /* x when the last step ended (phase_commit); a step that begins elsewhere
                          * was moved from outside (a pin teleported, positions written) and is
                          * checked for crossings (check_tangles) */
  int xdone_ok;
  vec3 *nobs_prev;       /* nobs and held as the last run saw them */
  uint8_t *held_prev;
  int check_tangles;     /* look for crossings at the start of the next run (first run, after a
                          * fallback, while tangled vertices remain) */
  int32_t *zone;         /* the last step's impact zones: each vertex's zone, -1 for none (the
                          * window's view: loom_body_impact_zones) */
  int zone_any;          /* zone holds some zone (cleared at the next step's start) */
  vec3 frame_v;          /* the search frame the trees' boxes were last made in: moving at frame_v */
  double frame_t;        /* from this time (contact_collide.c, collect) */
  /* smooth patches (contact_patch.c): a fixed hierarchy of the triangles, made at the first use from
   * the rest positions (median splits: patch_tree's items are triangles, PATCH_LEAF per leaf), and
   * what it certifies for the current paths */
  int patches;           /* 1: the body has the hierarchy; 0 not made yet; -1 none (too few
                          * triangles, or out of memory: every self pair is tested) */
  bvh patch_tree;        /* its nodes are the patches, in pre-order */
  int32_t *pt_first, *pt_count; /* per node: its triangles in patch_tree.items [first, first + count) */
  int32_t *pt_nsub;      /* per node: the nodes of its subtree (pre-order: [node, node + nsub)) */
  int32_t *pt_loop, *pt_loop_at, *pt_loop_len; /* the boundary loops of the disk nodes (len 0: not a
                          * disk, or too small to be certified): vertices, each node's start, length */
  int32_t *leaf_v, *leaf_e, *leaf_t; /* the leaf owning each vertex (-1: no triangle), edge, triangle */
  vec3 *pt_axis;         /* per node: the axis of its normal cone over the substep */
  double *pt_cos;        /* and the cosine of its half-angle (-2: no cone within a right angle) */
  int32_t *pt_top;       /* per node: the certified node at or above it whose pairs are skipped, -1 */
  int32_t *pt_list_top;  /* per node: the top under which the candidate list leaves pairs out (pt_top
                          * when it was collected; deeper where a top-up added a lost patch's pairs) */
  int32_t *tri_tag, *edge_tag;    /* per node of tri_tree, edge_tree: the top all its items share, -1 */
  vec3 *vcert;           /* vbar when the patches were last certified */
  uint8_t *pt_dirty;     /* per node: scratch of patch_recheck */
  int pt_certified;      /* certified top nodes of the last certification */
  int pt_valid;          /* pt_axis, pt_cos hold the cones of the paths from x_sub by h vcert, x_sub
                          * that of the substep pt_serial, with step pt_h */
  unsigned pt_serial;
  double pt_h;
} particle_collide;

/* ---- particles: the part every particle-based kind shares ------------------------------------- */
#define CONTACT_MOVABLE 32

typedef struct particles {
  int n;
  /* state */
  vec3 *x, *v;
  int frozen;      /* set by the divergence guard */
  int history_ok;  /* an integrator's history (Verlet's previous positions) is valid */
  /* inputs and outputs shared with Lua */
  vec3 *f;         /* external force accumulator, cleared each step */
  double *damp;    /* n x 6: -df/dv of the external forces per vertex, a symmetric 3x3 block stored
                    * (xx, yy, zz, xy, xz, yz), N s/m, cleared each step; the implicit integrator
                    * treats that part of f backward (loom_body_damping) */
  double *m;       /* vertex mass, kg (pinned vertices keep their mass) */
  uint8_t *contact; /* 1 = the vertex was in a contact during the last step (derived from contacts);
                     * within a substep's respond phase also CONTACT_MOVABLE: an obstacle pass gave
                     * it an impulse whose opposite goes to a dynamic rigid body */
  /* model */
  double *inv_m;      /* 1/m, or 0 while the vertex is pinned: the constraint every phase respects */
  double *m_good;     /* the masses as of the last step's start (body.m may be written between steps) */
  int32_t *pin_group; /* group slot per vertex, -1 = free */
  vec3 *rest;
  int nt;
  int32_t *tri; /* surface triangles, nt x 3 (drawing, picking, interpenetration) */
  uint8_t *tri_flat; /* per triangle, 1: of zero area at rest — a cloth's degenerate input, which
                      * the collision pipeline leaves out with the edges only it has (NULL: none) */
  double total_mass;
  double thickness, friction; /* contact parameters against other bodies */
  /* per-step scratch (arena), valid between begin and commit */
  vec3 *x_step; /* positions at the start of the step (divergence guard, CCD) */
  vec3 *x_sub;  /* positions at the start of the current substep */
  int check_obstacles; /* look for triangles across rigid meshes at the end of the step (after a last
                        * resort, a body moved between steps or through which a body passed, while
                        * some remain); shapes are looked at every step (phase_commit) */
  int broken_at_start; /* 1 + the first vertex whose position or velocity was not finite when the step began
                        * (written from outside); 0: none */
  /* a tree over the vertices' paths of the current substep (x_sub -> x), refit when a contact
   * family first needs it in a substep: per-pair candidate searches in O(log n + k) */
  bvh path_tree;
  vec3 *path_lo, *path_hi;
  unsigned path_serial;
  vec3 sub_lo, sub_hi; /* the body's box over the current substep (set by the broad phase) */
  /* collisions between particle bodies and within one (the collision pipeline) */
  int self_collision;  /* 1: the body's own triangles and edges collide with each other */
  double stiffness;    /* N/m, the repulsion spring of proximity contacts (the kind sets it) */
  int resting;         /* 1: its proximity pairs also engage when about to enter the thickness,
                        * and their impulses are iterated (docs/architecture.md, "Resting
                        * contact"): bodies whose vertices carry loads larger than their weight;
                        * 2: only its pairs with other particle bodies (cloth: a pile of one
                        * cloth keeps Bridson's rule) */
  vec3 *accel;         /* an explicit cloth's a_prev (NULL: an implicit cloth, a solid): v reports
                        * the substep's mean velocity extrapolated to its end by accel h / 2, which
                        * the next substep takes off again; the collision pipeline adds a resting
                        * pair's force to both (contact_collide.c, resting_extrapolation; RK4's
                        * accel holds that share only) */
  int depth_contact;   /* 1: against other bodies that set it too, contacts are document 002's
                        * penetration depths (contact_solid.c) instead of the collision pipeline */
  /* the implicit solve's constraints from contact with particle bodies (contact_cloth.c,
   * particle_constraints): per vertex, the nearest triangle of a particle body it was the point of
   * a pair within the thickness with, kept while it stays near (NULL: a body that takes none;
   * state, in checkpoints) */
  vec3 *pc_n;      /* unit, from the triangle to the vertex; zero: none */
  double *pc_dist; /* the pair's distance (when noted, then at each solve) */
  int32_t *pc_tri; /* n x 4: the triangle's body slot and its three vertices */
  vec3 *pc_push;   /* impulses another cloth's constraints gave the vertex in this substep's solves,
                    * taken on before its own solve or after all of them (scratch; zero between
                    * substeps: contact_cloth.c, contact_constraints_react) */
  int pc_pushed;   /* some pc_push is not zero */
  particle_collide col;
} particles;

/* The thickness every contact of a particle body uses: its `thickness`, but never less than
 * SOFT_MIN_THICKNESS (docs/api.md: "thickness = 0 still collides, at that distance"), so that
 * contacts keep a gap their tests can see (the collision pipeline's CCD leaves pairs a tenth of
 * the thickness apart and counts a hundredth as touching). Every contact family reads it here,
 * never the raw value: when only the pipeline had the floor, the obstacle passes and the implicit
 * solve let a cloth of thickness 0 rest a hair above a box's face (0.3 to 1 micrometre), where
 * the pipeline's CCD found its vertices colliding with the box in every step for ever (1 210 a
 * step for an explicit cloth of 10 x 10 cells), and two such cloths dropped on the box diverged.
 * `get` still reports the value given. */
#define SOFT_MIN_THICKNESS 1e-5 /* m */
static inline double particles_thickness(const particles *p) {
  return p->thickness > SOFT_MIN_THICKNESS ? p->thickness : SOFT_MIN_THICKNESS;
}

/* ---- the contact buffer ------------------------------------------------------------------------ */
/* What a solver needs of a contact beyond the public record (same index as items). */
typedef struct contact_work {
  int slot_a, slot_b;
  vec3 pc, nl, p0; /* vertex–shape: corrected point, normal and path start in b's frame */
  int collided;    /* the path crossed a mesh triangle */
  double vn_b;     /* vertex–shape: the normal velocity of b's surface point (m/s, along normal) */
  vec3 vt_b;       /* vertex–shape: its tangential part (m/s) */
  double mu;       /* vertex–shape: the pair's friction coefficient */
  int resolved;    /* the response was applied */
} contact_work;

typedef struct contact_buffer {
  loom_contact *items;
  contact_work *work;
  int count, cap;
  int dropped; /* contacts lost because memory ran out (counted, reported) */
} contact_buffer;

/* Appends a contact (the buffer grows only when a substep finds more than any before); NULL when
 * out of memory: the contact is then dropped and counted. */
loom_contact *contacts_push(struct loom_world *w, contact_work **work);
/* Room for at least cap contacts (0, or -1 when out of memory). */
int contacts_reserve(struct loom_world *w, int cap);
/* Fills in the persistent ids of the buffer's contacts (at commit). */
void contacts_finish(struct loom_world *w);
/* Persistent id of a contact from its bodies and features: the same pair of features gets the
 * same id from step to step (for warm starts). */
int contact_id(int body_a, int type_a, int feature_a, int body_b, int type_b, int feature_b);

/* ---- body kinds ----------------------------------------------------------------------------- */
struct body_slot;

/* One step, as the phases see it: h = dt / substeps; the current substep spans the fractions
 * a0 .. a1 of the step. */
typedef struct step_info {
  double dt, h, a0, a1;
  int substep, substeps;
} step_info;

/* A parameter of a kind: the one table from which C setters and getters, the Lua checks
 * (loom_kind_param) and the parameter tables of docs/api.md come. */
typedef enum param_flags {
  PARAM_LIVE = 1,      /* body:set may change it while running */
  PARAM_INTEGER = 2,   /* an integer value */
  PARAM_READONLY = 4,  /* a derived value body:get reports */
  PARAM_MIN_OPEN = 8,  /* the minimum itself is excluded */
} param_flags;

typedef struct param_spec {
  const char *name, *unit, *doc;
  double min, max;
  int flags;
  size_t offset;  /* of the double or int in the kind's struct (see flags) */
} param_spec;

/* A field of a body's state: `offset` in the kind's struct holds the value itself, or (per_vertex)
 * a pointer to one element per particle. */
typedef struct state_field {
  const char *name;
  size_t offset, size;
  int per_vertex;
} state_field;

typedef struct body_kind {
  const char *name; /* "cloth", "rigid", ... as Lua names it */
  int id;           /* loom_kind */
  const param_spec *params;
  int nparams;
  /* optional checks beyond the table's range (a model's own limits); 0 or -1 with a message */
  int (*check_param)(const struct body_slot *b, const param_spec *p, double value);
  /* the value body:get reports when it is not the stored one (an automatic value); NULL = stored */
  double (*param_value)(const struct body_slot *b, const param_spec *p, double stored);
  /* after a parameter changed (derived values such as the substep estimate) */
  void (*param_changed)(struct loom_world *w, struct body_slot *b, const param_spec *p);
  /* state beyond particles: the one list snapshots, hashes, checkpoints and transplants copy */
  const state_field *state;
  int nstate;
  /* hot reload: after the state was copied from a body of the old world with the same name and
   * model hash; may refuse (return 0) or adjust. NULL = always carry. */
  int (*transplant)(struct body_slot *dst, const struct body_slot *src);
  /* a hash of the model (topology, rest shape, masses, fixed parameters) */
  uint64_t (*model_hash)(const struct body_slot *b, uint64_t h);
  void (*free)(void *data);
  /* the step */
  size_t (*scratch_bytes)(const struct body_slot *b);
  int (*substeps)(struct loom_world *w, struct body_slot *b, double dt); /* world substeps it needs */
  void (*begin)(struct loom_world *w, struct body_slot *b, const step_info *s);
  void (*predict)(struct loom_world *w, struct body_slot *b, const step_info *s);
  void (*after_contacts)(struct loom_world *w, struct body_slot *b, const step_info *s);
  void (*commit)(struct loom_world *w, struct body_slot *b, const step_info *s);
  /* world box of the body over the current substep (from the start to the candidate positions) */
  void (*bounds)(const struct loom_world *w, const struct body_slot *b, const step_info *s, vec3 *lo, vec3 *hi);
  /* world box of the body now (no padding) */
  void (*aabb)(const struct body_slot *b, vec3 *lo, vec3 *hi);
  double (*elastic_energy)(const struct body_slot *b);
  /* distance from the world point p to the body's contact surface (its shape grown by its skin),
   * negative inside where the kind can tell; NULL = particles never touch this kind's surface */
  double (*surface_distance)(const struct body_slot *b, vec3 p);
  /* 1 if the body moves under its own dynamics and contacts between two bodies of the kind are
   * wanted (a dynamic rigid body); NULL = never */
  int (*moves)(const struct body_slot *b);
  /* kinetic and potential (gravity g) energy of a kind without particles; NULL = none */
  void (*energy)(const struct body_slot *b, vec3 g, double *kinetic, double *potential);
} body_kind;

typedef struct body_slot {
  const body_kind *ops; /* NULL = free slot */
  uint16_t generation;
  char *name;
  void *data;     /* the kind's own struct */
  particles *pts; /* particle kinds: their arrays; NULL otherwise */
  int pairs_off;  /* world:pair overrides with collide = false that name this body (world_pair_off) */
} body_slot;

/* The kinds compiled in (world_kinds.c); NULL when unknown. */
const body_kind *world_kind(int id);
const body_kind *world_kind_named(const char *name);
/* Adds a kind at run time (the C tests plug in a test-only kind this way). */
int world_register_kind(const body_kind *k);

typedef struct pin_group {
  int alive;
  uint16_t generation;
  int body;    /* slot of the particle body */
  int count;
  int32_t *idx;
  vec3 *rest;  /* rest positions (re-based on hold) */
  vec3 offset; /* current offset */
  vec3 target; /* offset at the end of the next step */
  int held;
} pin_group;

/* A candidate pair of features for the collision pipeline: PT (vertex fa of body a against
 * triangle fb of body b) or EE (edge fa of a against edge fb of b); a and b index the pipeline's
 * list of bodies for the substep. */
typedef struct collide_pair {
  int32_t type; /* 0 point-triangle, 1 edge-edge */
  int32_t a, b, fa, fb;
  int32_t g[4]; /* the four nodes' global vertex indices (triangle then point; edge then edge) */
} collide_pair;

/* world:pair overrides of two bodies (handles, lower first), kept sorted by (a, b); a body's are
 * dropped with it. */
typedef struct pair_override {
  int a, b;
  double friction, restitution; /* < 0: combined from the bodies */
  int collide;
} pair_override;

/* How the queries of soft-body vertices against the triangles of mesh obstacles (the vertex
 * passes, contact_obstacle.c; the implicit cloth's contact constraints, contact_cloth.c; the
 * pipeline's look for vertices starting inside, contact_collide.c) find them: through the
 * obstacle's tree, or with brute set by scanning every triangle (loom_world_set_brute_obstacles, a
 * reference for tests). Either way they count the exact triangle tests they make and those a scan
 * of every triangle would make for the same queries (stats.obstacle_tests, obstacle_tests_brute;
 * zeroed by phase_begin). These queries run on the stepping thread only. */
typedef struct obstacle_query {
  int brute;
  double tests, brute_tests; /* (doubles: exact integers far beyond an int's range) */
} obstacle_query;

/* A candidate pair from the broad phase: slots in creation order of the first. */
typedef struct body_pair {
  int a, b;
} body_pair;

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
  contact_buffer contacts;
  unsigned substep_serial; /* counts substeps since creation (not state: passes use it to run once) */
  unsigned feature_round;  /* counts the feature passes' rounds since creation (not state: a
                            * cloth's box and tree, taken once for all obstacles, last a round) */
  body_pair *pairs; /* broad-phase pairs of the current substep (scratch) */
  int npairs;
  /* the collision pipeline's work (not state): candidate feature pairs */
  collide_pair *cpairs;
  double *cdist; /* per candidate: its distance at the substep's start, or a lower bound >= the thickness */
  int ncpairs, cpair_cap;
  collide_pair *cpairs2; /* a collection's second part on the helper thread, appended to cpairs */
  int ncpairs2, cpair2_cap;
  int32_t *cadj_first, *cadj; /* per global vertex, the candidates it is a node of (CSR) */
  int32_t *cseen;             /* per candidate, the last pass that visited it */
  int cadj_vcap;
  int cadj_ok;                /* cadj_first/cadj are those of the current list */
  unsigned cdist_serial; /* the substep whose start positions cdist was found at */
  int cpair_valid;      /* the list may serve the next substep (see contact_collide.c) */
  int cpair_base;       /* cpairs[0, base) the collected run (its length when last collected in full),
                         * [base, ncpairs) the top-ups', each sorted */
  int ctopups;          /* top-ups made (for tests) */
  int ctopup_off;       /* tests: collect afresh where a top-up would do */
  int ctopup_check;     /* tests: after each top-up, count the pairs a full traversal adds */
  int ctopup_missing;   /* (those pairs: 0 when every top-up was complete) */
  double ctopup_listed; /* (pairs a top-up's queries found that the list held already, for tests) */
  uint64_t cpair_sig;   /* what it was collected for */
  int cround_ok;        /* the last run of the pipeline left every path free of collisions, in the
                         * substep cround_serial with the bodies of cround_sig (contact_collide.c) */
  unsigned cround_serial;
  uint64_t cround_sig;
  int cround_off;       /* tests: every run of the pipeline tests every candidate */
  int cpatch_off;       /* tests: no smooth patches (contact_patch.c): every self pair is tested */
  double cmargin;       /* tests: the candidate search's margin in half thicknesses per substep (0: default) */
  int clater_runs;      /* (later runs that tested only what changed, for tests) */
  double cpairs_tested; /* (candidates the passes selected, for tests) */
  vec3 cframe_v;        /* the frame it was collected in: moving at this velocity (contact_collide.c) */
  double cframe_t;      /* from this time (the collecting substep's start) */
  /* the candidate search's margin, chosen from how the lists fare (contact_collide.c, margin_served
   * and margin_collected): not state — the margin changes no result */
  int cm_level, cm_ceiling; /* the margin's rung; the highest allowed plus one (0: no ceiling) */
  int cm_served, cm_topups; /* substeps the current list served, and those that topped it up */
  int cm_probe, cm_pending; /* the list was collected one rung up to try it; a new rung waits */
  int cm_collections;       /* fresh collections since the ceiling was last lifted */
  double collide_warned_until; /* the pipeline's last-resort warning is quiet until then (s) */
  double passed_warned_until;  /* the warning of a dynamic body through a cloth, the same */
  double tangle_warned_until;  /* and its warning about crossings already there */
  double inside_warned_until;  /* and about soft vertices that began inside an obstacle */
  double obstacle_warned_until; /* and about cloth left across an obstacle (phase_commit) */
  double pinned_warned_until;   /* and about cloth that pins hold across an obstacle */
  int obstacle_moves; /* vertex positions the obstacle response changed (counted, not state) */
  obstacle_query oquery; /* (not state: the switch changes no result beyond exact ties) */
  struct rigid_work *rigid; /* the rigid contact solver's manifolds and warm-start impulses */
  int threads;        /* 1 or 2: loops split in two run on a helper thread too (same results) */
  core_par *par;      /* that helper, made at its first use (world_par) */
  pair_override *overrides; /* world:pair */
  int noverrides, override_cap;
  int npairs_off;           /* overrides with collide = false (0: every pair of bodies collides) */
  loom_stats stats;
  char messages[WORLD_MESSAGES][WORLD_MESSAGE_LEN];
  int message_severity[WORLD_MESSAGES];
  int message_body[WORLD_MESSAGES];
  int message_count;
  /* mouse grab */
  int grab_slot, grab_vertex;
  vec3 grab_target;
  double grab_omega;
};

/* The override of two bodies (slots), or NULL (a binary search). */
const pair_override *world_pair_override(const loom_world *w, int slot_a, int slot_b);

/* Whether world:pair(a, b, {collide = false}) holds for two bodies (slots): nothing between them is
 * made or looked for, in any contact family, the collision pipeline or the crossing checks. A
 * body's own pairs are never off (world:pair refuses a body twice). Two loads when neither body
 * is in such a pair, which is every pair of a world without one. */
static inline int world_pair_off(const loom_world *w, int slot_a, int slot_b) {
  if (!w->bodies[slot_a].pairs_off || !w->bodies[slot_b].pairs_off || slot_a == slot_b) return 0;
  const pair_override *o = world_pair_override(w, slot_a, slot_b);
  return o && !o->collide;
}

/* Two bodies (slots) collide again that world:pair let pass through each other (collide turned
 * back on, or a state saved with their pair off loaded where it is on): what they made through
 * each other is there now, and the next step looks for it as for crossings already there (a cloth
 * across the other, vertices inside a rigid body), as when self_collision is turned on. */
void world_pair_look(loom_world *w, int slot_a, int slot_b);

/* The rigid solver's remembered impulses as state (contact/contact_rigid.c): entry size, count,
 * and the entries (count >= 0: resized to count, for loading; -1: as they are). */
size_t rigid_cache_entry_size(void);
int rigid_cache_count(const loom_world *w);
void *rigid_cache_data(loom_world *w, int count);
/* Hot reload: the old world's remembered impulses between two bodies the new world also has,
 * under the new slots (slot_map: old slot -> new slot, or -1 to leave the body's out), in place of
 * the new world's. Returns the entries carried, or -1 when out of memory. */
int rigid_cache_transplant(loom_world *dst, const loom_world *src, const int32_t *slot_map);
/* Whether two rigid bodies (slots) have the same shape kind and motion (rigid/rigid_kind.c): the
 * impulses remembered for one's contact features then fit the other's. */
int rigid_slot_same_shape(const body_slot *a, const body_slot *b);

/* Frees the rigid solver's work (contact/contact_rigid.c). */
void rigid_work_free(struct rigid_work *rw);

/* ---- world.c ---------------------------------------------------------------------------------- */
/* Slot of a valid handle of the given kind (LOOM_KIND_NONE = any), or -1 with a message. */
int world_slot(const loom_world *w, int handle, int kind, const char *fn);
int world_handle(const loom_world *w, int slot);
/* The slot of a live body's handle, -1 if the handle is stale (no message). */
int world_live_slot(const loom_world *w, int handle);
/* Slot of a valid handle of a particle kind, or -1 with a message. */
int world_particle_slot(const loom_world *w, int handle, const char *fn);
/* Creates a body of a kind: reserves a slot with a unique name, calls create(w, slot, def), and
 * makes it live; returns the handle or 0 (message set). */
int world_add_body(loom_world *w, const body_kind *k, const char *name, int (*create)(loom_world *, int, const void *),
                   const void *def);
/* Appends a message to the world's ring; body = slot or -1. */
void world_message(loom_world *w, int severity, int body, const char *fmt, ...) LOOM_PRINTF(4, 5);
/* Grows the scratch arena so one step of every body fits without allocating. */
int world_reserve_scratch(loom_world *w);
/* Allocates the particle arrays of a body (n vertices, nt triangles); -1 when out of memory. */
int particles_alloc(particles *p, int n, int nt);
void particles_free(particles *p);
/* Index of the first vertex whose state is not finite or beyond the guard limits (SOFT_MAX_SPEED,
 * SOFT_MAX_COORD), -1 if none; *what describes the problem. */
int particles_find_divergence(const particles *p, const char **what);
/* The fastest approach (m/s) of a free vertex of the particle body at `slot` towards a rigid body it
 * can reach within a step of dt, from the velocities at the step's start (0: none faster than two
 * thicknesses per step). contact/contact_obstacle.c */
double particles_obstacle_approach(loom_world *w, int slot, double dt);
/* The box of a particle body's current positions. */
void particles_box(const particles *p, vec3 *lo, vec3 *hi);
/* Hot reload, after the state copy: a vertex the new scene pins and the old one left free holds
 * still until its pin's trajectory moves it; one pinned in both keeps the velocity its pin gave it
 * (zeroing it changed the rounding of the next step: a reload of an unchanged file then went on
 * differently). */
void particles_transplant_pins(particles *dst, const particles *src);
/* The box of a particle body over the current substep (from x_sub to x), grown by its thickness:
 * the body_kind.bounds of cloth and solids. */
void particles_bounds(const loom_world *w, const body_slot *b, const step_info *s, vec3 *lo, vec3 *hi);
/* The path tree refit for the current substep (once per substep). */
const bvh *particles_path_tree(loom_world *w, particles *p);

/* ---- the step phases (world_step.c runs them in order) ----------------------------------------- */
void phase_begin(loom_world *w, step_info *s);            /* phase_begin.c */
void phase_predict(loom_world *w, const step_info *s);    /* phase_predict.c */
void phase_detect(loom_world *w, const step_info *s);     /* phase_detect.c */
void phase_respond(loom_world *w, const step_info *s);    /* phase_respond.c */
void phase_commit(loom_world *w, const step_info *s);     /* phase_commit.c */
/* Sweep-and-prune over the bodies' boxes of the current substep: fills w->pairs (deterministic
 * order: by the first body's creation order, then the second's). */
void broadphase_pairs(loom_world *w, const step_info *s);  /* world_broadphase.c */

/* The divergence guard's report: names the body, time, vertex, and the causes the world can
 * see (contacts of that vertex, pins inside another body's margin, substeps below the estimate). */
void world_diverged(loom_world *w, int slot, int vertex, const char *what, const step_info *s); /* world_diverge.c */

/* ---- pins (world_pins.c) ------------------------------------------------------------------------ */
/* Puts every held pin of body `slot` at rest + lerp(offset, target, a), velocity = change / dt. */
void pins_apply(const loom_world *w, int slot, double a, double dt);
/* At the start of a step: inverse masses and the total mass from body.m, refusing bad values. */
void particles_sync_masses(loom_world *w, int slot);
/* The velocity each held pin of body `slot` has over this step (what pins_apply gives it) into v;
 * other entries are left as they are. */
void pins_velocities(const loom_world *w, int slot, double dt, vec3 *v);

/* Pinned vertices of particle body `slot` (of pin group `group`, or all when group < 0) that lie
 * within the contact margin (particles_thickness) of another body's surface (`other`, or any body
 * when other < 0): how many, and the deepest one. */
typedef struct pin_margin {
  int count, vertex, other; /* other: the body's slot */
  double distance, margin;  /* of `vertex` from the other body's surface; the margin it is within */
} pin_margin;
int pins_in_margin(const loom_world *w, int slot, int group, int other, pin_margin *out);
/* The same as a warning message naming both bodies, the distance and the margin. */
void pins_warn_margin(loom_world *w, int slot, int group, int other);

/* The world's helper thread for two-way loops (made on first use), or NULL to run both parts
 * inline (threads = 1, or no thread could be made). */
core_par *world_par(loom_world *w);

#endif
