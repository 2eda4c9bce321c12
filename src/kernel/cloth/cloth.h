/* cloth.h — the cloth kind: triangle meshes with mass–spring (001) or Baraff–Witkin models,
 * explicit integrators with automatic substeps. Private to the kernel; the world reaches it only
 * through cloth_kind (world_kinds.c) and contact/ through the particle view and the elements. */
#ifndef LOOM_CLOTH_H
#define LOOM_CLOTH_H

#include "world/world.h"

typedef struct spring {
  int32_t i, j;
  double rest; /* m */
} spring;

/* Baraff–Witkin triangle: weights of the (u, v) -> x map. w_u = sum_k du[k] x_k, w_v = sum_k dv[k] x_k. */
typedef struct bw_tri {
  int32_t v[3];
  double area; /* rest area, m^2 */
  double wa;   /* weight of the stretch and shear energy: area^(2 area_exponent), the area itself at
                * BW's exponent 1/2 (energy per unit area: resolution-independent) */
  double du[3], dv[3];
} bw_tri;

typedef struct bw_hinge {
  int32_t v[4];  /* edge v0 -> v1, wing a (triangle 0), wing b (triangle 1) */
  double weight; /* 3 |e|^2 / (A0 + A1) at rest (dimensionless) */
  double rest;   /* rest dihedral angle, rad */
} bw_hinge;

enum { FAM_STRUCTURAL = 0, FAM_SHEAR = 1, FAM_BEND = 2, FAM_COUNT = 3 };

/* An edge this many times its rest length, over steps spanning at least CLOTH_OVERSTRETCH_TIME, is
 * beyond anything a cloth model holds: the world says so (cloth_commit), once until every edge is
 * back within the second figure. (A state that diverges within a few steps says that instead.) */
#define CLOTH_OVERSTRETCH 4.0
#define CLOTH_OVERSTRETCH_CLEAR 2.5
#define CLOTH_OVERSTRETCH_TIME 0.1

/* Parameters: what the user chose (cloth_param_table in cloth_body.c describes each; thickness and
 * friction live in the particle view, where contacts read them). model and integrator are fixed at
 * creation, the rest is live (body:set). */
typedef struct cloth_params {
  int model, integrator;
  double stretch, shear, bend, damping, drag;
  int substeps_user, iterations;
  double compliance;   /* springs_pbd: 0 = 001's fractions per iteration; > 0: XPBD compliance, m/N */
  double cg_tolerance; /* implicit: relative residual at which CG stops */
  int cg_iterations;   /* implicit: CG iteration cap per substep */
  int preconditioner;  /* implicit: CLOTH_PRECOND_* */
  double relative_damping; /* springs: 001's -c (v_i - v_j) per spring, N s/m (0: off) */
  double area_exponent;    /* baraff_witkin: stretch and shear conditions weighted by area^p (0.5: BW) */
  double strain_limit;     /* largest edge stretch l / L - 1 left after a substep's integrator (0: off) */
  double self_friction;    /* implicit: Coulomb coefficient between the cloth's own layers (0: they slide freely) */
  int newton_iterations;   /* implicit: Newton iterations per substep at most (1: Baraff-Witkin's one step) */
  double newton_tolerance; /* implicit: another iteration while the linear model missed the stretch and
                            * shear energy by more than this fraction of the kinetic plus elastic energy */
} cloth_params;

enum { CLOTH_PRECOND_JACOBI = 1, CLOTH_PRECOND_MULTIGRID = 2 };

/* The model: built once at creation from the mesh, never changed by a step. */
typedef struct cloth_model {
  spring *springs;
  int fam_start[FAM_COUNT + 1]; /* springs of family f are [fam_start[f], fam_start[f+1]) */
  bw_tri *bw;
  int nbw;
  bw_hinge *hinges;
  int nh;
  int grid_nx, grid_ny;
  /* elements for contacts (cloth_elements.c) */
  int ne;
  int32_t *edge;                 /* ne x 2 */
  int32_t *tri_edge;             /* nt x 3 edge indices */
  int32_t *edge_owner;           /* first triangle of each edge: each edge is tested once */
  double max_circumradius;       /* of the rest triangles, m */
  double lambda_unit[FAM_COUNT]; /* lambda_max(M^-1/2 K_f M^-1/2) per family at unit stiffness */
  int spectrum_ok;
  int spectrum_due; /* implicit: no step needs the estimate; it is made when first read */
} cloth_model;

/* State beyond the particle view (x, v, frozen, history): what a step changes and a checkpoint
 * saves (cloth_state_fields in cloth_body.c lists it). */
typedef struct cloth_state {
  vec3 *dx_prev; /* Verlet: x - x_prev, the last substep's displacement (valid when p.history_ok);
                  * kept as a difference so the recurrence does not lose digits to |x|. After a
                  * substep it is h v - a_prev h^2 / 2 to the bit, and the next substep takes it
                  * from v again (substep_verlet), so a velocity written in between counts */
  double prev_h; /* substep that dx_prev refers to */
  vec3 *a_prev;  /* total acceleration of the last substep (valid when p.history_ok): symplectic
                  * Euler's and Verlet's velocity at the end of a substep */
} cloth_state;

/* Values derived from parameters and dt, recomputed when either changes. */
typedef struct cloth_derived {
  int substeps_auto;
  double h_stable; /* s, stability estimate of the explicit integrators */
  int warned_substeps;
  double warned_dt; /* the world's dt when it warned: a new dt may need a new message */
  double wa_exponent; /* the area_exponent the triangles' weights wa were computed with */
  double dt;          /* the world's dt at the last update of the above */
  int warned_strain;  /* the strain limit's sweeps ran out (said once; again after strain_limit changes) */
  int warned_overstretch; /* an edge stayed over CLOTH_OVERSTRETCH times its rest length (said once;
                           * again after every edge came back within CLOTH_OVERSTRETCH_CLEAR times) */
  double over_since;      /* the time at the end of the first step of the current overstretch (-1: none) */
  unsigned warned_ignored; /* per entry of cloth_body.c's ignored_params: set to a value this cloth's
                            * model or integrator ignores (said once per parameter) */
} cloth_derived;

/* The triangle tree and boxes the contact passes refit from the positions (a cache: rebuilt from
 * the state whenever it is stale, never saved). */
typedef struct cloth_cache {
  vec3 *tri_lo, *tri_hi;
  bvh tri_tree;          /* over triangles, refit when a contact pass needs it */
  unsigned feat_serial;  /* round of the feature passes (world.feature_round) that took feat_lo/hi */
  unsigned refit_serial; /* round whose feature pass refit the tree */
  vec3 feat_lo, feat_hi; /* the cloth's box when that pass began */
  double feat_circ;      /* the largest circumradius of its triangles then (rounded features) */
} cloth_cache;

/* Per-step scratch from the world's arena, valid between begin and commit. */
typedef struct cloth_scratch {
  vec3 *F, *rk_x, *rk_v, *rk_sx, *rk_sv;
  int step_substeps; /* substeps of the world step being taken */
  int cg_iterations;  /* implicit: CG iterations summed over this step's substeps */
  int newton;         /* implicit: Newton iterations after the first, summed over this step's substeps */
  double *lambda;     /* springs_pbd with compliance: XPBD multipliers, one per spring */
  double cg_residual; /* implicit: the largest relative residual of this step's solves */
  int contacts, resolves; /* implicit: contact constraints at the end of each solve, repeated solves */
  struct strain_work *strain; /* strain limit: its scratch (NULL: limit off) */
  int strain_limited;     /* strain limit: edges over it after the integrators of this step's substeps */
} cloth_scratch;

/* The strain limit's scratch (cloth_strain_limit): n vertices, ne edges, in one block of
 * cloth_strain_work_bytes(n, ne) bytes bound by cloth_strain_work_bind. */
typedef struct strain_work {
  int32_t *seen;   /* n: per vertex, the last polishing sweep that moved it */
  vec3 *u;         /* n: J^T lambda */
  vec3 *xb, *vb;   /* n: positions and velocities before a Newton step (backtracking) */
  int32_t *slot;   /* ne: an edge's place in the active list (-1: not in it) */
  int32_t *active; /* ne: the active edges */
  vec3 *g;         /* ne: per active edge, dC/dx of its second end (minus that of its first) */
  double *cval, *lam, *r, *p, *z, *q; /* ne: constraints, multipliers, CG vectors */
} strain_work;

/* A 3x3 block in single precision: the multigrid hierarchy's matrices are stored this way (half
 * the memory traffic of its sweeps; arithmetic stays double). */
typedef struct mat3f {
  float m[3][3];
} mat3f;

/* One level of the multigrid preconditioner (cloth_multigrid.c). Patterns, aggregates and the
 * index maps of the Galerkin product are built once; values are refilled each substep. */
typedef struct mg_level {
  int n;                   /* block rows */
  int32_t *row, *col;      /* this level's matrix: CSR of 3x3 blocks, columns sorted */
  int32_t *diag;           /* block (i, i) of each row */
  mat3f *val;              /* values */
  mat3f *dinv;             /* inverse diagonal blocks (Gauss-Seidel, prolongator smoothing) */
  vec3 *x, *b, *r;         /* solution, right-hand side, residual of the V-cycle */
  /* level 0 during a cycle with a smoothing order (cloth_mg_apply): the first sweep reads row i's
   * right-hand side from in[perm[i]], the last writes its result to out[perm[i]] too */
  const vec3 *in;
  vec3 *out;
  const int32_t *perm;
  /* to the next coarser level (all NULL on the coarsest) */
  int32_t *agg;            /* aggregate of each row */
  int32_t *prow, *pcol;    /* prolongator P (n x n_next), one Jacobi smoothing of the aggregates' */
  mat3f *pval;
  int32_t *a2p;            /* per block (i, j) of the matrix: the entry of P row i in column agg(j) */
  int32_t *rrow, *rfine, *rent; /* P^T by coarse rows: fine row and P entry of each */
  int32_t *aprow, *apcol;  /* A P */
  mat3 *apval;
} mg_level;

#define MG_MAX_LEVELS 16

typedef struct cloth_mg {
  int nlevels;       /* 0: not built */
  mg_level lv[MG_MAX_LEVELS];
  int32_t *fine_map; /* per block of the solver's matrix: its block in level 0, -1 if lumped */
  int32_t *perm;     /* level 0's rows in smoothing order: new row -> vertex (NULL: mesh order) */
  int32_t *iperm;    /* vertex -> new row */
  int part_end[2];   /* level 0: rows [0, e0) and [e0, e1) are the halves' inner rows, [e1, n) the band */
  int32_t *marker;   /* Gustavson accumulator: position of each coarse column in the row being built */
  int32_t *marker2;  /* the same for the second half's rows (built beside the first's) */
  core_par *par;     /* the world's helper thread (set by the solver each substep; NULL: inline) */
  double *chol;      /* dense Cholesky factor of the coarsest level (lower, row-major), NULL if too big */
  double *work;      /* dense vector of the coarsest level */
  mat3 *acc;         /* double accumulators of the set-up's sums (the largest P or coarse matrix) */
  int chol_ok;       /* the factorisation of this substep succeeded */
} cloth_mg;

/* Bodies one cloth's contacts can move within its solve; contacts with more bodies treat the rest
 * as immovable during the solve (they still receive the impulses). */
#define CLOTH_CONTACT_BODIES 32

/* A held pair (cloth_implicit.c, "held pairs"): J dv = sum_a c_a dv_v[a], the relative velocity
 * change of a vertex (v[0], c = 1) and the point of a triangle of its own cloth (c = -w, its
 * weights); normal part n . J dv, tangential part (I - n n^T) J dv */
typedef struct cloth_held_pair {
  int32_t v[4];
  double c[4];
  vec3 n;           /* unit, from the triangle towards the vertex */
  double gap;       /* the speed at which the pair may still close (m/s) */
  double mu;        /* Coulomb's coefficient (the cloth's self_friction) */
  double k, g, lam; /* normal: penalty, target of n . J dv (m/s), multiplier (N s) */
  double kt;        /* tangential penalty while it sticks (0: sliding, or no friction) */
  vec3 gt, lt;      /* tangential target of J dv (m/s) and multiplier (N s) */
  vec3 kf;          /* kinetic friction while it slides (N s, on the vertex) */
  uint8_t on;       /* in the system (released when it pulls) */
  uint8_t touch;    /* touching when gathered: with friction it starts sticking */
} cloth_held_pair;

/* The implicit integrator's linear system (cloth_implicit.c): block-sparse rows with 3x3 blocks,
 * pattern and element-to-block maps built once at creation, values and vectors refilled each
 * substep (no allocation in a step). */
typedef struct cloth_solver {
  int nb;                 /* blocks of the pattern */
  int32_t *row, *col;     /* row i's blocks are [row[i], row[i+1]), columns sorted */
  int32_t *diag;          /* block (i, i) of each row */
  /* A = M - h df/dv - h^2 df/dx is symmetric to the bit, so only its blocks on and right of the
   * diagonal are stored: row i's are val[urow[i] .. urow[i+1]), the pattern's blocks
   * [diag[i], row[i+1]) in order (val[urow[i]] is the diagonal block). Block k of the pattern is
   * val[ublk[k]], transposed when it lies left of the diagonal (col[k] < its row). */
  int nub;                /* stored blocks */
  int32_t *urow, *ublk;
  mat3 *val;
  /* per element block pair, where its term goes: an index e >= 0 adds the element's block to
   * val[e], e < 0 its transpose to val[-1 - e] (the pair's upper block) */
  int32_t *tri_blocks;    /* per BW triangle: the 3 x 3 pairs (k, l) */
  int32_t *hinge_blocks;  /* per hinge: 4 x 4 */
  int32_t *spring_blocks; /* per spring: (i,i) (i,j) (j,i) (j,j) */
  /* the two halves (rows below n / 2 and from it, as core_par_rows splits): the elements whose
   * vertices all lie in one half fill only that half's rows and can be assembled beside the other
   * half's; the rest (the band across) come after both. Per kind, the elements in that order, and
   * where each group starts (part 0, part 1, band, end). */
  int32_t *tri_order, *hinge_order, *spring_order;
  int tri_part[4], hinge_part[4], spring_part[4];
  int32_t *hinge_ready; /* per position in hinge_order: the triangles of its group (positions in
                         * tri_order) to assemble before it (cloth_implicit.c, assemble_group) */
  core_par *par; /* the world's helper thread during a substep (NULL: inline) */
  vec3 *dv, *rhs, *r, *c, *q, *z, *f0;
  mat3 *pinv;     /* inverse diagonal blocks (the block-Jacobi preconditioner) */
  cloth_mg mg;    /* the multigrid preconditioner */
  uint8_t *fixed; /* per vertex: all directions constrained (pin, scripted velocity) */
  /* contact constraints (BW98 section 5.3, one direction; contact/contact_cloth.c): a vertex at or
   * near an obstacle moves along con_n with con_v (the obstacle's velocity less the gap it may
   * close); con_j is the impulse the obstacle gave it in the solve (normal and friction) */
  uint8_t *con; /* 0 free; 1 sliding (normal); 2 sticking (all); 3 pressed, sticking; 4 pressed, sliding;
                 * paired with a triangle of its own cloth: 5 sliding (pair_k, pair_g; its kinetic
                 * friction after the solve, in fric), 6 sticking (also pair_kt, pair_gt, pair_lt) */
  vec3 *con_n, *con_v, *con_j;
  double *con_mu, *con_gap; /* friction; the speed at which the vertex may still approach (m/s) */
  int32_t *con_b; /* index of the vertex's body in cbody */
  /* cloth between a movable body and an immovable one (a plate on a tablecloth on a table): the
   * normal is the immovable body's (con_b2), the tangential motion the movable one's (con_b), with
   * friction bounded by mu x con_load, the movable body's weight shared by its vertices (N s) */
  int32_t *con_b2;
  double *con_load;
  uint8_t *con_feat; /* the contact comes from a sharp feature near the vertex's element (contact_cloth.c):
                      * it slides, with Coulomb's kinetic friction, and never starts sticking */
  vec3 *kfric; /* the kinetic friction impulse on a pressed, sliding vertex (in rhs) */
  uint8_t *fric_pre; /* a sliding vertex on another cloth's triangle whose friction (fric) stops it: applied
                      * before the positions (static friction), not after them */
  double fric_pre_v;  /* ... when the slip it stops is at most this (m/s): |g| h */
  /* a vertex resting on a cloth's triangle (contact_cloth.c, particle_constraints): the
   * triangle's vertices and the weights of the vertex's point on it. On its own cloth's triangle
   * the contact is a pair in the solve (con 5; cloth_implicit.c, "a cloth's own contacts as
   * pairs"): the penalty on the pair's relative normal velocity, its target (m/s) and its
   * multiplier (N s); sticking, the same for its tangential relative velocity */
  int32_t *con_tri;
  double *con_w;
  double *pair_k, *pair_g, *con_lam;
  double *pair_kt;
  vec3 *pair_gt, *pair_lt;
  int npair;
  /* held pairs (cloth_implicit.c, "held pairs"): a vertex an obstacle holds, pressed by a triangle
   * of its own cloth */
  struct cloth_held_pair *held; /* held_cap = n: one per vertex at most */
  int nheld, held_cap;
  uint8_t *con0; /* con as the substep's first solve started (when ncon0 > 0) */
  int ncon0;
  vec3 *react; /* per vertex: the opposite impulses its triangles took (for the Newton residual) */
  int ncon, released; /* constrained vertices this substep, constraints released as pulling */
  /* the bodies the contacts touch: their velocity at the end of the substep without contacts
   * (v_free, w_free), inverse mass and world inverse inertia (0: immovable), centre of mass; the
   * solve iterates their velocities with the contact impulses (v, w) */
  struct cloth_contact_body {
    vec3 c, v_free, w_free; /* centre of mass; velocities at the end of the substep without contacts */
    double m;               /* mass, and world inertia, of a movable body */
    mat3 I;
    int movable, lin, ang;  /* part of the solve; which of its motions are */
    int pts;                /* cbody_r is a particle body (its triangles, particle_constraints) */
    vec3 du, dw;            /* the solve's change of its velocities over v_free, w_free */
  } cbody[CLOTH_CONTACT_BODIES];
  /* the coupled solve's body vectors (contact_passes in cloth_implicit.c) and its scratch */
  vec3 bx[CLOTH_CONTACT_BODIES][2], br[CLOTH_CONTACT_BODIES][2], bc[CLOTH_CONTACT_BODIES][2];
  vec3 bq[CLOTH_CONTACT_BODIES][2], bt[CLOTH_CONTACT_BODIES][2];
  mat3 bpinv[CLOTH_CONTACT_BODIES][2];
  uint8_t *mgfix; /* pinned or sticking: what the multigrid hierarchy decouples */
  vec3 *mgn;      /* per vertex: a sliding contact's normal, else zero (the hierarchy stiffens it) */
  vec3 *nx, *nv, *ndv; /* a further Newton iteration's linearisation point, and the dv it starts from */
  double delta_first, newton_ref; /* the substep's first solve's preconditioned rhs norm^2; a Newton
                                   * correction's stopping reference (0: its own rhs) */
  vec3 *y, *e1, *fric; /* fric: the kinetic friction of sliding contacts (a velocity change; a sliding
                        * pair's: the impulse on its vertex) */
  const void *cbody_r[CLOTH_CONTACT_BODIES]; /* which body each is (compared only) */
  int ncbody, coupling_passes;
  int last_iterations;
  int last_newton; /* Newton iterations after the first in the last substep */
  int pushed;      /* other cloths' contacts pushed it before this substep's solve (in react too) */
  double last_residual;
  int warned; /* the non-convergence warning was given */
  int bad_damping, bad_damping_vertex; /* external damping blocks refused this substep (not finite or
                                        * not positive semi-definite), and the first such vertex */
  int warned_damping;
  int breakdown, warned_breakdown; /* CG met a direction of non-positive curvature this substep */
} cloth_solver;

typedef struct cloth_body {
  particles p; /* first member: the world's particle view of this body */
  cloth_params params;
  cloth_model model;
  cloth_state state;
  cloth_derived derived;
  cloth_cache cache;
  cloth_scratch scratch;
  cloth_solver solver; /* integrator 'implicit' only */
} cloth_body;

extern const body_kind cloth_kind;

/* A triangle too flat to have a deformation map (twice its area below 1e-12 of its longer edge
 * from r0, squared): no Baraff-Witkin element (bw_build), and said at creation (cloth_body.c). */
static inline int cloth_tri_flat(vec3 r0, vec3 r1, vec3 r2) {
  const double a2 = v3_len(v3_cross(v3_sub(r1, r0), v3_sub(r2, r0)));
  const double scale = fmax(v3_len2(v3_sub(r1, r0)), v3_len2(v3_sub(r2, r0)));
  return !(a2 > 1e-12 * scale);
}

static inline cloth_body *cloth_of(const body_slot *b) { return (cloth_body *)b->data; }

/* ---- cloth_body.c ------------------------------------------------------------------------------ */
int cloth_create(loom_world *w, int slot, const void *def);
void cloth_free(void *data);
/* Recomputes h_stable and substeps_auto for the world step dt. */
void cloth_update_substeps(cloth_body *b, double dt);
/* Internal (model) forces into F (overwritten) at positions x and velocities v. */
void cloth_internal_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F);
double cloth_elastic_energy(const cloth_body *b, const vec3 *x);
/* cloth_stability.c: per-family spectral estimate at rest (call after the model is built). */
int cloth_estimate_spectrum(cloth_body *b);

/* ---- cloth_springs.c ----------------------------------------------------------------------------- */
/* Builds the three spring families (grid topology when known, else edges + hinge wings). */
int springs_build(cloth_body *b, const loom_mesh *m);
void springs_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F);
double springs_energy(const cloth_body *b, const vec3 *x);
/* Position-based projection of every spring family once (001 constraint variant). */
void springs_project(const cloth_body *b, vec3 *x);
/* The same springs as XPBD constraints of compliance params.compliance / fraction (m/N) at
 * substep h; lambda (one per spring) accumulates over a substep's iterations. */
void springs_project_xpbd(const cloth_body *b, vec3 *x, double hh, double *lambda);
/* Gershgorin bound of omega^2 = lambda_max(M^-1 K) at rest. */
double springs_omega2_bound(const cloth_body *b);
/* Gershgorin bound (1/s) of the rate of 001's relative damping, 0 when it is off (allocates: call
 * outside steps). */
double springs_relative_damping_bound(const cloth_body *b);

/* ---- cloth_baraff_witkin.c ----------------------------------------------------------------------- */
int bw_build(cloth_body *b, const loom_mesh *m);
void bw_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F);
/* The two halves of bw_forces (the implicit integrator adds the hinges' while it assembles). */
void bw_tri_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F);
/* Recomputes the triangles' energy weights wa = area^(2 area_exponent) (after a change of it). */
void bw_set_area_exponent(cloth_body *b);
void bw_hinge_forces(const cloth_body *b, const vec3 *x, const vec3 *v, vec3 *F);
double bw_energy(const cloth_body *b, const vec3 *x);
double bw_omega2_bound(const cloth_body *b);
/* Signed dihedral angle of a hinge and its gradient (4 x 3) — exposed for the unit tests. */
double bw_hinge_angle(const vec3 *x, const int32_t v[4], vec3 grad[4]);

/* ---- cloth_elements.c ------------------------------------------------------------------------------ */
/* Edges, triangle-edge map and triangle tree of a cloth. */
int cloth_build_elements(cloth_body *b, const loom_mesh *m);
/* Triangle boxes from the current positions, then the tree's node boxes. */
void cloth_refit_tree(cloth_body *b);

/* ---- cloth_implicit.c ------------------------------------------------------------------------------ */
/* What one implicit substep needs from the world. pin_v: per vertex, the velocity a constrained
 * vertex must have over the substep (read for fixed vertices only). */
typedef struct cloth_implicit_ctx {
  double h;
  vec3 g, wind;
  const vec3 *pin_v;
  int grab_vertex; /* -1: none */
  vec3 grab_target;
  double grab_k, grab_c;
  core_par *par; /* the world's helper thread for the two halves (NULL: both inline) */
} cloth_implicit_ctx;
int cloth_solver_build(cloth_body *b);
/* Block k of row i of the solver's matrix (the stored block, or the transpose of its mirror). */
static inline mat3 cloth_solver_block(const cloth_solver *s, int i, int k) {
  const mat3 *u = &s->val[s->ublk[k]];
  if (s->col[k] >= i) return *u;
  mat3 t;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) t.m[r][c] = u->m[c][r];
  return t;
}
/* The diagonal block of row i. */
static inline mat3 *cloth_solver_diag(const cloth_solver *s, int i) { return &s->val[s->urow[i]]; }
void cloth_solver_free(cloth_solver *s);
void cloth_implicit_substep(cloth_body *b, const cloth_implicit_ctx *c);
/* After the substep's solve: the impulses J another cloth's contacts gave its vertices, in a
 * second solve of the same system (see cloth_implicit.c). Returns 0 when the cloth cannot take
 * them so (the caller gives them as a velocity change). */
int cloth_implicit_again(cloth_body *b, const vec3 *J, double h);
/* ---- cloth_multigrid.c ------------------------------------------------------------------------------ */
/* Pattern-dependent setup, once: n block rows of the pattern (row, col); keep[k] = 1 for the blocks
 * the hierarchy keeps (the others are lumped on the diagonal each substep). */
int cloth_mg_build(cloth_mg *g, int n, const int32_t *row, const int32_t *col, const uint8_t *keep);
void cloth_mg_free(cloth_mg *g);
/* Value-dependent setup, each substep: the matrix (same pattern), the constrained vertices (cut
 * loose) and, if normal is not NULL, per vertex a unit direction the solve constrains (zero for
 * none), stiffened on level 0 by the diagonal block's mean diagonal. */
void cloth_mg_setup(cloth_mg *g, int n, const cloth_solver *s, const uint8_t *fixed, const vec3 *normal);
/* z = B r, one V-cycle: B is symmetric positive definite (fixed vertices: their diagonal block's inverse). */
void cloth_mg_apply(cloth_mg *g, const vec3 *r, vec3 *z);
/* How far a Newton step's linear model misses the stretch and shear energy (Baraff-Witkin
 * triangles, or all springs) at x1: E(x1) - Q(x1), Q the quadratic model about x0 the implicit
 * solve uses (energy, gradient, and the Hessian without its indefinite parts). An edge turning by
 * an angle t in a step comes out longer by about t^2/2 of itself than the model says (the model
 * moves it along its tangent). *e1 gets E(x1). (cloth_implicit.c) */
double cloth_model_excess(const cloth_body *b, const vec3 *x0, const vec3 *x1, double *e1);

/* Force Jacobians (df/dx, df/dv) of one element at x. exact = 1: the full derivative (tests);
 * 0: the positive-definite part the solver uses (see cloth_implicit.c). */
void bw_tri_jacobian(const cloth_body *b, const bw_tri *q, const vec3 *x, int exact, mat3 Kx[3][3], mat3 Kv[3][3]);
/* Gauss–Newton (exact where theta = rest). */
void bw_hinge_jacobian(const cloth_body *b, const bw_hinge *q, const vec3 *x, mat3 Kx[4][4], mat3 Kv[4][4]);
/* Spring q: the (i, j) block df_i/dx_j and df_i/dv_j; the (i, i) block is their negative. */
void spring_jacobian(const cloth_body *b, int q, const vec3 *x, int exact, mat3 *Kx, mat3 *Kv);

/* ---- cloth_step.c: the kind's step operations ---------------------------------------------------- */
int cloth_substeps(loom_world *w, body_slot *s, double dt);
void cloth_begin(loom_world *w, body_slot *s, const step_info *si);
void cloth_predict(loom_world *w, body_slot *s, const step_info *si);
/* The strain limit over one substep of length h (params.strain_limit > 0). Returns the edges
 * over the limit when it began; *left: the largest stretch still over the limit when its
 * iterations ran out (0: none). */
size_t cloth_strain_work_bytes(int n, int ne);
void cloth_strain_work_bind(strain_work *wk, void *mem, int n, int ne);
int cloth_strain_limit(cloth_body *b, double h, strain_work *wk, double *left);
void cloth_after_contacts(loom_world *w, body_slot *s, const step_info *si);
void cloth_commit(loom_world *w, body_slot *s, const step_info *si);

#endif
