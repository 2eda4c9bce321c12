/* cloth_implicit.c — the implicit integrator of Baraff & Witkin 1998 ("Large steps in cloth
 * simulation", §5): one Newton step of backward Euler per substep,
 *
 *     (M - h df/dv - h^2 df/dx) dv = h (f0 + h df/dx v0),    x += h (v0 + dv),
 *
 * solved by their modified preconditioned conjugate gradient, whose filter makes the constrained
 * directions of each vertex exact (pins and scripted velocities: all three directions).
 *
 * The matrix is sparse with 3x3 blocks (one per pair of vertices sharing an element: triangle,
 * bending hinge or spring). Its pattern is built once when the cloth is created, together with the
 * position of every element block in it, so a step only refills values; nothing is allocated in a
 * step.
 *
 * Jacobians. Each force comes from an energy E = k/2 C(x)^2 (stretch, shear, bend, springs), so
 * df/dx = -k (dC dC^T + C d2C). The second term is indefinite; like Baraff–Witkin (and every
 * production solver since), the matrix keeps only its positive part so that it stays symmetric
 * positive definite:
 *   - stretch (C = a^1/2 (|w| - 1)): d2C is (1/|w|)(I - w w^T/|w|^2) per pair weight; kept while
 *     the triangle is stretched (|w| > 1), dropped in compression;
 *   - springs: the same with |d| / L;
 *   - shear (C = a^1/2 w_u . w_v) and bend (C = theta - theta0 on the discrete-shell hinge): the
 *     d2C term is dropped (Gauss–Newton).
 * bw_tri_jacobian(..., exact = 1) gives the full Jacobian (tests compare it with finite
 * differences); the solver uses exact = 0. Damping forces -kd C' dC give df/dv = -kd dC dC^T; their
 * df/dx is neglected, as in BW98. Air drag -drag m (v - wind) is diagonal in df/dv. */
#include <stdlib.h>
#include <string.h>

#include "cloth/cloth.h"

/* ---- the pattern -------------------------------------------------------------------------------- */

typedef struct pair_list {
  int32_t *a, *b;
  int count;
} pair_list;

static void add_pair(pair_list *l, int i, int j) {
  l->a[l->count] = i;
  l->b[l->count] = j;
  l->count++;
}

/* Position of block (i, j) in row i (the columns of a row are sorted). */
static int32_t find_block(const cloth_solver *s, int i, int j) {
  int lo = s->row[i], hi = s->row[i + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (s->col[mid] == j) return mid;
    if (s->col[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Where an element's term for block (i, j) goes (cloth_solver.tri_blocks): the stored block, or
 * -1 - the stored mirror when (i, j) lies left of the diagonal. */
static int32_t term_slot(const cloth_solver *s, int i, int j) {
  const int32_t u = s->ublk[find_block(s, i, j)];
  return j >= i ? u : -1 - u;
}

/* Orders elements (count of them, `per` vertices each, through vert(e, k)) into the part whose
 * rows hold all their vertices (0: below half, 1: from half) and the band across, keeping their
 * order within a group; part[] gets where each group starts. */
static int32_t *partition(int count, int per, int half, int32_t (*vert)(const cloth_body *, int, int),
                          const cloth_body *b, int part[4]) {
  int32_t *order = core_alloc((size_t)(count > 0 ? count : 1), sizeof(int32_t));
  if (!order) return NULL;
  int m = 0;
  for (int g = 0; g < 3; g++) {
    part[g] = m;
    for (int e = 0; e < count; e++) {
      int lo = 0, hi = 0;
      for (int k = 0; k < per; k++) {
        const int v = vert(b, e, k);
        lo += v < half;
        hi += v >= half;
      }
      const int grp = lo == per ? 0 : hi == per ? 1 : 2;
      if (grp == g) order[m++] = e;
    }
  }
  part[3] = m;
  return order;
}
static int32_t tri_vert(const cloth_body *b, int e, int k) { return b->model.bw[e].v[k]; }
static int32_t hinge_vert(const cloth_body *b, int e, int k) { return b->model.hinges[e].v[k]; }
static int32_t spring_vert(const cloth_body *b, int e, int k) {
  return k == 0 ? b->model.springs[e].i : b->model.springs[e].j;
}

int cloth_solver_build(cloth_body *b) {
  cloth_solver *s = &b->solver;
  const int n = b->p.n;
  /* every ordered pair of vertices of each element, the diagonal included */
  const int nsp = b->model.fam_start[FAM_COUNT];
  size_t cap = (size_t)n + 9 * (size_t)b->model.nbw + 16 * (size_t)b->model.nh + 4 * (size_t)nsp;
  pair_list l = {core_alloc(cap, sizeof(int32_t)), core_alloc(cap, sizeof(int32_t)), 0};
  int32_t *count = core_calloc((size_t)n + 1, sizeof(int32_t));
  uint8_t *keep = NULL;
  int rc = -1;
  if (!l.a || !l.b || !count) goto done;
  for (int i = 0; i < n; i++) add_pair(&l, i, i);
  for (int t = 0; t < b->model.nbw; t++)
    for (int k = 0; k < 3; k++)
      for (int m = 0; m < 3; m++) add_pair(&l, b->model.bw[t].v[k], b->model.bw[t].v[m]);
  for (int h = 0; h < b->model.nh; h++)
    for (int k = 0; k < 4; k++)
      for (int m = 0; m < 4; m++) add_pair(&l, b->model.hinges[h].v[k], b->model.hinges[h].v[m]);
  for (int q = 0; q < nsp; q++) {
    const spring *sp = &b->model.springs[q];
    add_pair(&l, sp->i, sp->i);
    add_pair(&l, sp->i, sp->j);
    add_pair(&l, sp->j, sp->i);
    add_pair(&l, sp->j, sp->j);
  }
  /* rows: bucket by row, then sort and deduplicate each row's columns */
  for (int k = 0; k < l.count; k++) count[l.a[k] + 1]++;
  for (int i = 0; i < n; i++) count[i + 1] += count[i];
  int32_t *cols = core_alloc((size_t)l.count, sizeof(int32_t));
  int32_t *fill = core_alloc((size_t)n, sizeof(int32_t));
  if (!cols || !fill) {
    core_free(cols);
    core_free(fill);
    goto done;
  }
  memcpy(fill, count, sizeof(int32_t) * (size_t)n);
  for (int k = 0; k < l.count; k++) cols[fill[l.a[k]]++] = l.b[k];
  core_free(fill);
  s->row = core_alloc((size_t)n + 1, sizeof(int32_t));
  int nb = 0;
  if (s->row) {
    for (int i = 0; i < n; i++) {
      int32_t *c = cols + count[i];
      int len = count[i + 1] - count[i];
      qsort(c, (size_t)len, sizeof(int32_t), cmp_i32);
      s->row[i] = nb;
      for (int k = 0; k < len; k++)
        if (k == 0 || c[k] != c[k - 1]) cols[nb++] = c[k]; /* nb <= count[i] + k: in place is safe */
    }
    s->row[n] = nb;
  }
  s->nb = nb;
  s->col = core_alloc((size_t)(nb > 0 ? nb : 1), sizeof(int32_t));
  s->diag = core_alloc((size_t)n, sizeof(int32_t));
  s->urow = core_alloc((size_t)n + 1, sizeof(int32_t));
  s->ublk = core_alloc((size_t)(nb > 0 ? nb : 1), sizeof(int32_t));
  if (s->row && s->col) memcpy(s->col, cols, sizeof(int32_t) * (size_t)nb);
  core_free(cols);
  s->tri_blocks = core_alloc((size_t)(b->model.nbw > 0 ? b->model.nbw : 1) * 9, sizeof(int32_t));
  s->hinge_blocks = core_alloc((size_t)(b->model.nh > 0 ? b->model.nh : 1) * 16, sizeof(int32_t));
  s->spring_blocks = core_alloc((size_t)(nsp > 0 ? nsp : 1) * 4, sizeof(int32_t));
  const size_t nv = (size_t)(n > 0 ? n : 1);
  s->dv = core_alloc(nv, sizeof(vec3));
  s->rhs = core_alloc(nv, sizeof(vec3));
  s->r = core_alloc(nv, sizeof(vec3));
  s->c = core_alloc(nv, sizeof(vec3));
  s->q = core_alloc(nv, sizeof(vec3));
  s->z = core_alloc(nv, sizeof(vec3));
  s->f0 = core_alloc(nv, sizeof(vec3));
  s->pinv = core_alloc(nv, sizeof(mat3));
  s->fixed = core_alloc(nv, sizeof(uint8_t));
  s->con = core_calloc(nv, sizeof(uint8_t));
  s->con_n = core_alloc(nv, sizeof(vec3));
  s->con_v = core_alloc(nv, sizeof(vec3));
  s->con_j = core_alloc(nv, sizeof(vec3));
  s->con_mu = core_alloc(nv, sizeof(double));
  s->con_b = core_alloc(nv, sizeof(int32_t));
  s->con_gap = core_alloc(nv, sizeof(double));
  s->y = core_alloc(nv, sizeof(vec3));
  s->e1 = core_alloc(nv, sizeof(vec3));
  s->nx = core_alloc(nv, sizeof(vec3));
  s->nv = core_alloc(nv, sizeof(vec3));
  s->ndv = core_alloc(nv, sizeof(vec3));
  s->fric = core_alloc(nv, sizeof(vec3));
  s->mgfix = core_alloc(nv, sizeof(uint8_t));
  s->mgn = core_alloc(nv, sizeof(vec3));
  s->con_b2 = core_alloc(nv, sizeof(int32_t));
  s->con_load = core_alloc(nv, sizeof(double));
  s->con_feat = core_calloc(nv, sizeof(uint8_t));
  s->fric_pre = core_calloc(nv, sizeof(uint8_t));
  s->kfric = core_calloc(nv, sizeof(vec3));
  s->con_tri = core_calloc(nv, 3 * sizeof(int32_t));
  s->con_w = core_calloc(nv, 3 * sizeof(double));
  s->con_lam = core_calloc(nv, sizeof(double));
  s->pair_k = core_calloc(nv, sizeof(double));
  s->pair_g = core_calloc(nv, sizeof(double));
  s->pair_kt = core_calloc(nv, sizeof(double));
  s->pair_gt = core_calloc(nv, sizeof(vec3));
  s->pair_lt = core_calloc(nv, sizeof(vec3));
  s->con0 = core_calloc(nv, sizeof(uint8_t));
  s->react = core_calloc(nv, sizeof(vec3));
  s->held = core_calloc(nv, sizeof(cloth_held_pair)); /* (at most one per vertex: its note's triangle) */
  s->held_cap = b->p.n;
  if (!s->con_tri || !s->con_w || !s->con_lam || !s->pair_k || !s->pair_g || !s->con0 || !s->react || !s->held) goto done;
  if (!s->pair_kt || !s->pair_gt || !s->pair_lt) goto done;
  if (!s->y || !s->e1 || !s->nx || !s->nv || !s->ndv || !s->fric || !s->mgfix || !s->mgn || !s->con_b2 ||
      !s->con_load || !s->kfric || !s->con_feat || !s->fric_pre)
    goto done;
  if (!s->con || !s->con_n || !s->con_v || !s->con_j || !s->con_mu || !s->con_b || !s->con_gap)
    goto done;
  if (!s->row || !s->col || !s->diag || !s->urow || !s->ublk || !s->tri_blocks || !s->hinge_blocks ||
      !s->spring_blocks || !s->dv || !s->rhs || !s->r || !s->c || !s->q || !s->z || !s->f0 || !s->pinv || !s->fixed)
    goto done;
  for (int i = 0; i < n; i++) s->diag[i] = find_block(s, i, i);
  /* the stored (upper) blocks: row i's from its diagonal on, in order; a block left of the
   * diagonal is its mirror's, transposed */
  s->urow[0] = 0;
  for (int i = 0; i < n; i++) s->urow[i + 1] = s->urow[i] + (s->row[i + 1] - s->diag[i]);
  s->nub = s->urow[n];
  for (int i = 0; i < n; i++)
    for (int k = s->row[i]; k < s->row[i + 1]; k++)
      s->ublk[k] = k >= s->diag[i] ? s->urow[i] + (k - s->diag[i]) : s->ublk[find_block(s, s->col[k], i)];
  s->val = core_alloc((size_t)(s->nub > 0 ? s->nub : 1), sizeof(mat3));
  if (!s->val) goto done;
  for (int t = 0; t < b->model.nbw; t++)
    for (int k = 0; k < 3; k++)
      for (int m = 0; m < 3; m++)
        s->tri_blocks[9 * t + 3 * k + m] = term_slot(s, b->model.bw[t].v[k], b->model.bw[t].v[m]);
  for (int h = 0; h < b->model.nh; h++)
    for (int k = 0; k < 4; k++)
      for (int m = 0; m < 4; m++)
        s->hinge_blocks[16 * h + 4 * k + m] = term_slot(s, b->model.hinges[h].v[k], b->model.hinges[h].v[m]);
  for (int q = 0; q < nsp; q++) {
    const spring *sp = &b->model.springs[q];
    s->spring_blocks[4 * q + 0] = term_slot(s, sp->i, sp->i);
    s->spring_blocks[4 * q + 1] = term_slot(s, sp->i, sp->j);
    s->spring_blocks[4 * q + 2] = term_slot(s, sp->j, sp->i);
    s->spring_blocks[4 * q + 3] = term_slot(s, sp->j, sp->j);
  }
  /* the halves core_par_rows makes: rows below n / 2 and from it */
  s->tri_order = partition(b->model.nbw, 3, n / 2, tri_vert, b, s->tri_part);
  s->hinge_order = partition(b->model.nh, 4, n / 2, hinge_vert, b, s->hinge_part);
  s->spring_order = partition(nsp, 2, n / 2, spring_vert, b, s->spring_part);
  if (!s->tri_order || !s->hinge_order || !s->spring_order) goto done;
  /* each hinge after every triangle of its group that shares a vertex with it (so after every
   * one that fills one of its blocks), and after the hinges before it */
  s->hinge_ready = core_alloc((size_t)(b->model.nh > 0 ? b->model.nh : 1), sizeof(int32_t));
  int32_t *last = core_alloc((size_t)(n > 0 ? n : 1), sizeof(int32_t));
  if (!s->hinge_ready || !last) {
    core_free(last);
    goto done;
  }
  for (int g = 0; g < 3; g++) {
    for (int i = 0; i < n; i++) last[i] = s->tri_part[g];
    for (int k = s->tri_part[g]; k < s->tri_part[g + 1]; k++)
      for (int j = 0; j < 3; j++) last[b->model.bw[s->tri_order[k]].v[j]] = k + 1;
    int ready = s->tri_part[g];
    for (int k = s->hinge_part[g]; k < s->hinge_part[g + 1]; k++) {
      for (int j = 0; j < 4; j++) {
        const int v = b->model.hinges[s->hinge_order[k]].v[j];
        if (last[v] > ready) ready = last[v];
      }
      s->hinge_ready[k] = ready;
    }
  }
  core_free(last);
  /* the multigrid hierarchy keeps the couplings of the stretch and shear elements (triangles or
   * structural and shear springs); bending couplings are lumped (cloth_multigrid.c) */
  keep = core_calloc((size_t)(nb > 0 ? nb : 1), sizeof(uint8_t));
  if (!keep) goto done;
  for (int t = 0; t < b->model.nbw; t++)
    for (int k = 0; k < 3; k++)
      for (int m = 0; m < 3; m++) keep[find_block(s, b->model.bw[t].v[k], b->model.bw[t].v[m])] = 1;
  if (b->params.model != LOOM_MODEL_BARAFF_WITKIN)
    for (int q = b->model.fam_start[FAM_STRUCTURAL]; q < b->model.fam_start[FAM_BEND]; q++) {
      const spring *sp = &b->model.springs[q];
      keep[find_block(s, sp->i, sp->i)] = keep[find_block(s, sp->i, sp->j)] = 1;
      keep[find_block(s, sp->j, sp->i)] = keep[find_block(s, sp->j, sp->j)] = 1;
    }
  if (cloth_mg_build(&s->mg, n, s->row, s->col, keep) != 0) goto done;
  rc = 0;
done:
  core_free(l.a);
  core_free(l.b);
  core_free(count);
  core_free(keep);
  if (rc != 0) loom_fail("cloth: out of memory building the implicit solver");
  return rc;
}

void cloth_solver_free(cloth_solver *s) {
  core_free(s->row);
  core_free(s->col);
  core_free(s->val);
  core_free(s->diag);
  core_free(s->urow);
  core_free(s->ublk);
  core_free(s->tri_blocks);
  core_free(s->hinge_blocks);
  core_free(s->spring_blocks);
  core_free(s->tri_order);
  core_free(s->hinge_order);
  core_free(s->hinge_ready);
  core_free(s->spring_order);
  core_free(s->dv);
  core_free(s->rhs);
  core_free(s->r);
  core_free(s->c);
  core_free(s->q);
  core_free(s->z);
  core_free(s->f0);
  core_free(s->pinv);
  core_free(s->fixed);
  core_free(s->con);
  core_free(s->con_n);
  core_free(s->con_v);
  core_free(s->con_j);
  core_free(s->con_mu);
  core_free(s->con_b);
  core_free(s->con_gap);
  core_free(s->y);
  core_free(s->e1);
  core_free(s->nx);
  core_free(s->nv);
  core_free(s->ndv);
  core_free(s->fric);
  core_free(s->mgfix);
  core_free(s->mgn);
  core_free(s->con_b2);
  core_free(s->con_load);
  core_free(s->con_feat);
  core_free(s->fric_pre);
  core_free(s->con_tri);
  core_free(s->con_w);
  core_free(s->con_lam);
  core_free(s->pair_k);
  core_free(s->pair_g);
  core_free(s->pair_kt);
  core_free(s->pair_gt);
  core_free(s->pair_lt);
  core_free(s->con0);
  core_free(s->react);
  core_free(s->held);
  core_free(s->kfric);
  cloth_mg_free(&s->mg);
  memset(s, 0, sizeof *s);
}

/* ---- element Jacobians ------------------------------------------------------------------------- */


/* K += t and, unless L is NULL, L += t^T: the assembly's innermost step, written out (a block
 * pair's 18 additions with no loop around them) */
static inline void add_block_pair(mat3 *K, mat3 *L, const double t[3][3]) {
  K->m[0][0] += t[0][0], K->m[0][1] += t[0][1], K->m[0][2] += t[0][2];
  K->m[1][0] += t[1][0], K->m[1][1] += t[1][1], K->m[1][2] += t[1][2];
  K->m[2][0] += t[2][0], K->m[2][1] += t[2][1], K->m[2][2] += t[2][2];
  if (!L) return;
  L->m[0][0] += t[0][0], L->m[1][0] += t[0][1], L->m[2][0] += t[0][2];
  L->m[0][1] += t[1][0], L->m[1][1] += t[1][1], L->m[2][1] += t[1][2];
  L->m[0][2] += t[2][0], L->m[1][2] += t[2][1], L->m[2][2] += t[2][2];
}

/* K += s (a c^T) and, unless L is NULL, L += its transpose; each entry (a_r c_q) s, the product
 * first, so a c = a a^T adds a term symmetric to the bit */
static inline void add_outer_pair(mat3 *K, mat3 *L, vec3 a, vec3 c, double s) {
  const double t[3][3] = {{(a.x * c.x) * s, (a.x * c.y) * s, (a.x * c.z) * s},
                          {(a.y * c.x) * s, (a.y * c.y) * s, (a.y * c.z) * s},
                          {(a.z * c.x) * s, (a.z * c.y) * s, (a.z * c.z) * s}};
  add_block_pair(K, L, t);
}

/* An element's term t for the block pair (k, l), (l, k) into the stored one of the two
 * (term_slot): t itself, or its transpose into the mirror. The stored block sums the same terms
 * in the same order as a full matrix's would, so it holds the same bits. */
static inline void add_term(mat3 *val, int32_t e, const double t[3][3]) {
  if (e >= 0) {
    add_block_pair(&val[e], NULL, t);
    return;
  }
  mat3 *U = &val[-1 - e];
  U->m[0][0] += t[0][0], U->m[1][0] += t[0][1], U->m[2][0] += t[0][2];
  U->m[0][1] += t[1][0], U->m[1][1] += t[1][1], U->m[2][1] += t[1][2];
  U->m[0][2] += t[2][0], U->m[1][2] += t[2][1], U->m[2][2] += t[2][2];
}

static inline void add_outer_term(mat3 *val, int32_t e, vec3 a, vec3 c, double s) {
  const double t[3][3] = {{(a.x * c.x) * s, (a.x * c.y) * s, (a.x * c.z) * s},
                          {(a.y * c.x) * s, (a.y * c.y) * s, (a.y * c.z) * s},
                          {(a.z * c.x) * s, (a.z * c.y) * s, (a.z * c.z) * s}};
  add_term(val, e, t);
}

static inline void add_outer(mat3 *K, vec3 a, vec3 c, double s) { add_outer_pair(K, NULL, a, c, s); }

static inline void add_identity(mat3 *K, double s) {
  K->m[0][0] += s;
  K->m[1][1] += s;
  K->m[2][2] += s;
}

/* Stretch of one direction w = sum_k d_k x_k: E = ks a/2 (|w| - 1)^2. d2E/dx_k dx_l =
 * ks a d_k d_l [u u^T + (1 - 1/|w|)(I - u u^T)]: H below is that bracket; in compression the
 * second term is negative and dropped unless exact. */
static void stretch_hessian(vec3 w, int exact, mat3 *H, mat3 *P) {
  memset(H, 0, sizeof *H);
  memset(P, 0, sizeof *P);
  const double l = v3_len(w);
  if (!(l > 1e-12)) return;
  const vec3 u = v3_scale(w, 1.0 / l);
  add_outer(P, u, u, 1.0); /* projection on u: the damping term */
  double g = 1.0 - 1.0 / l;
  if (!exact && g < 0) g = 0;
  add_identity(H, g);
  add_outer(H, u, u, 1.0 - g);
}

void bw_tri_jacobian(const cloth_body *b, const bw_tri *q, const vec3 *x, int exact, mat3 Kx[3][3], mat3 Kv[3][3]) {
  const double ks = b->params.stretch, ksh = b->params.shear;
  const double ds = b->params.damping * ks, dsh = b->params.damping * ksh;
  const double a = q->wa;
  vec3 wu = v3(0, 0, 0), wv = v3(0, 0, 0);
  for (int k = 0; k < 3; k++) {
    wu = v3_madd(wu, x[q->v[k]], q->du[k]);
    wv = v3_madd(wv, x[q->v[k]], q->dv[k]);
  }
  memset(Kx, 0, 9 * sizeof(mat3));
  memset(Kv, 0, 9 * sizeof(mat3));
  mat3 Hu, Pu, Hv, Pv;
  stretch_hessian(wu, exact, &Hu, &Pu);
  stretch_hessian(wv, exact, &Hv, &Pv);
  const double C = v3_dot(wu, wv); /* shear condition (per sqrt(a)) */
  vec3 g[3];
  for (int k = 0; k < 3; k++) g[k] = v3_add(v3_scale(wv, q->du[k]), v3_scale(wu, q->dv[k]));
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3; l++) {
      mat3 *X = &Kx[k][l], *V = &Kv[k][l];
      const double su = a * q->du[k] * q->du[l], sv = a * q->dv[k] * q->dv[l];
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
          X->m[r][c] -= ks * (su * Hu.m[r][c] + sv * Hv.m[r][c]);
          V->m[r][c] -= ds * (su * Pu.m[r][c] + sv * Pv.m[r][c]);
        }
      add_outer(X, g[k], g[l], -ksh * a);
      add_outer(V, g[k], g[l], -dsh * a);
      if (exact) add_identity(X, -ksh * a * C * (q->du[k] * q->dv[l] + q->dv[k] * q->du[l]));
    }
}

void bw_hinge_jacobian(const cloth_body *b, const bw_hinge *q, const vec3 *x, mat3 Kx[4][4], mat3 Kv[4][4]) {
  vec3 g[4];
  bw_hinge_angle(x, q->v, g);
  const double kb = b->params.bend * q->weight, db = b->params.damping * b->params.bend * q->weight;
  for (int k = 0; k < 4; k++)
    for (int l = 0; l < 4; l++) {
      memset(&Kx[k][l], 0, sizeof(mat3));
      memset(&Kv[k][l], 0, sizeof(mat3));
      add_outer(&Kx[k][l], g[k], g[l], -kb);
      add_outer(&Kv[k][l], g[k], g[l], -db);
    }
}

void spring_jacobian(const cloth_body *b, int q, const vec3 *x, int exact, mat3 *Kx, mat3 *Kv) {
  /* f_i = (k (l - L) + c vrel) u + c_r (v_j - v_i) with d = x_j - x_i:
   * df_i/dx_j = k [u u^T + (1 - L/l)(I - u u^T)] = -df_i/dx_i, df_i/dv_j = c u u^T + c_r I;
   * returned: Kx = df_i/dx_j, Kv = df_i/dv_j (the (i, j) blocks; (i, i) are their negatives). */
  const spring *sp = &b->model.springs[q];
  int fam = 0;
  while (fam < FAM_COUNT - 1 && q >= b->model.fam_start[fam + 1]) fam++;
  const double k = fam == FAM_STRUCTURAL ? b->params.stretch : fam == FAM_SHEAR ? b->params.shear : b->params.bend;
  memset(Kx, 0, sizeof *Kx);
  memset(Kv, 0, sizeof *Kv);
  /* 001's relative damping -c (v_i - v_j): df_i/dv_j = c I */
  add_identity(Kv, b->params.relative_damping);
  const vec3 d = v3_sub(x[sp->j], x[sp->i]);
  const double l = v3_len(d);
  if (!(l > 1e-12) || k == 0) return;
  const vec3 u = v3_scale(d, 1.0 / l);
  double gl = 1.0 - sp->rest / l;
  if (!exact && gl < 0) gl = 0;
  add_identity(Kx, k * gl);
  add_outer(Kx, u, u, k * (1.0 - gl));
  add_outer(Kv, u, u, b->params.damping * k);
}

/* ---- assembly ---------------------------------------------------------------------------------- */

/* A_block += -h Kv - h^2 Kx (A NULL: the block's mirror is the one stored, and takes the same
 * term: a spring's blocks are symmetric to the bit); y_k += Kx v0 (for the right-hand side). */
static inline void scatter(mat3 *A, const mat3 *Kx, const mat3 *Kv, double h, vec3 *y, vec3 v0) {
  const double h2 = h * h;
  if (A)
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) A->m[r][c] -= h * Kv->m[r][c] + h2 * Kx->m[r][c];
  *y = v3_add(*y, m3_mulv(Kx, v0));
}

/* A_kl += T and A_lk += T^T with T = s_u Bu + s_v Bv + c g_k g_l^T (Bu, Bv symmetric: T^T is the
 * (l, k) term, so each pair of blocks is computed once and A is symmetric to the bit); only the
 * stored one of the two is written (add_term) */
static inline void add_tri_block(mat3 *val, int32_t e, double su, const mat3 *Bu, double sv, const mat3 *Bv, double c,
                                 vec3 g, vec3 gl) {
  const double gk[3] = {g.x, g.y, g.z}, gv[3] = {gl.x, gl.y, gl.z};
  double t[3][3];
  for (int r = 0; r < 3; r++)
    for (int q = 0; q < 3; q++) t[r][q] = su * Bu->m[r][q] + sv * Bv->m[r][q] + c * (gk[r] * gv[q]);
  add_term(val, e, t);
}

/* One Baraff-Witkin triangle into A and y: bw_tri_jacobian's blocks (exact = 0) without forming
 * them. Each is a combination of three matrices shared by the triangle,
 *   -Kx_kl = a ks (du_k du_l Hu + dv_k dv_l Hv) + a ksh g_k g_l^T   (Kv: the same with the damping
 * stiffnesses and Pu, Pv), so A_kl += du_k du_l Bu + dv_k dv_l Bv + cs g_k g_l^T, and
 * y_k = sum_l Kx_kl v_l needs only the sums over l of du_l v_l, dv_l v_l and g_l . v_l. */
static void assemble_tri(cloth_body *b, int t, const vec3 *x, const vec3 *v, double h, vec3 *y, vec3 *f) {
  cloth_solver *s = &b->solver;
  const bw_tri *q = &b->model.bw[t];
  const double ks = b->params.stretch, ksh = b->params.shear;
  const double ds = b->params.damping * ks, dsh = b->params.damping * ksh;
  const double a = q->wa, h2 = h * h;
  vec3 wu = v3(0, 0, 0), wv = v3(0, 0, 0), su = v3(0, 0, 0), sv = v3(0, 0, 0);
  for (int k = 0; k < 3; k++) {
    wu = v3_madd(wu, x[q->v[k]], q->du[k]);
    wv = v3_madd(wv, x[q->v[k]], q->dv[k]);
    su = v3_madd(su, v[q->v[k]], q->du[k]);
    sv = v3_madd(sv, v[q->v[k]], q->dv[k]);
  }
  /* the triangle's force, as bw_tri_forces computes it, from the same w_u, w_v */
  vec3 fu = v3(0, 0, 0), fv = v3(0, 0, 0);
  if (ks > 0) {
    const double lu = v3_len(wu), lv = v3_len(wv);
    if (lu > 1e-12) {
      const vec3 uh = v3_scale(wu, 1.0 / lu);
      fu = v3_scale(uh, -a * (ks * (lu - 1.0) + ds * v3_dot(uh, su)));
    }
    if (lv > 1e-12) {
      const vec3 vh = v3_scale(wv, 1.0 / lv);
      fv = v3_scale(vh, -a * (ks * (lv - 1.0) + ds * v3_dot(vh, sv)));
    }
  }
  if (ksh > 0) {
    const double sh = -a * (ksh * v3_dot(wu, wv) + dsh * (v3_dot(wv, su) + v3_dot(wu, sv)));
    fu = v3_madd(fu, wv, sh);
    fv = v3_madd(fv, wu, sh);
  }
  mat3 Hu, Pu, Hv, Pv, Bu, Bv;
  stretch_hessian(wu, 0, &Hu, &Pu);
  stretch_hessian(wv, 0, &Hv, &Pv);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      Bu.m[r][c] = a * (h * ds * Pu.m[r][c] + h2 * ks * Hu.m[r][c]);
      Bv.m[r][c] = a * (h * ds * Pv.m[r][c] + h2 * ks * Hv.m[r][c]);
    }
  const double cs = a * (h * dsh + h2 * ksh);
  vec3 g[3];
  double gv = 0;
  for (int k = 0; k < 3; k++) {
    g[k] = v3_add(v3_scale(wv, q->du[k]), v3_scale(wu, q->dv[k]));
    gv += v3_dot(g[k], v[q->v[k]]);
  }
  const vec3 hu = m3_mulv(&Hu, su), hv = m3_mulv(&Hv, sv);
  const int32_t *blk = &s->tri_blocks[9 * t];
  for (int k = 0; k < 3; k++) {
    for (int l = k; l < 3; l++)
      add_tri_block(s->val, blk[3 * k + l], q->du[k] * q->du[l], &Bu,
                    q->dv[k] * q->dv[l], &Bv, cs, g[k], g[l]);
    vec3 *yk = &y[q->v[k]];
    *yk = v3_madd(*yk, hu, -a * ks * q->du[k]);
    *yk = v3_madd(*yk, hv, -a * ks * q->dv[k]);
    *yk = v3_madd(*yk, g[k], -a * ksh * gv);
    f[q->v[k]] = v3_add(f[q->v[k]], v3_add(v3_scale(fu, q->du[k]), v3_scale(fv, q->dv[k])));
  }
}

/* One hinge into A, y and the force f: its Gauss-Newton blocks are rank one, Kx_kl = -kb g_k g_l^T
 * and Kv_kl = -db g_k g_l^T (bw_hinge_jacobian); its force (bw_hinge_forces) comes from the same
 * angle and gradient, the costly part, so it is added here rather than computed twice. */
static void assemble_hinge(cloth_body *b, int hh, const vec3 *x, const vec3 *v, double h, vec3 *y, vec3 *f) {
  cloth_solver *s = &b->solver;
  const bw_hinge *q = &b->model.hinges[hh];
  vec3 g[4];
  const double theta = bw_hinge_angle(x, q->v, g);
  const double kb = b->params.bend * q->weight, db = b->params.damping * b->params.bend * q->weight;
  const double c = h * db + h * h * kb;
  double gv = 0;
  for (int k = 0; k < 4; k++) gv += v3_dot(g[k], v[q->v[k]]);
  const double fs = -(kb * (theta - q->rest) + db * gv);
  const int32_t *blk = &s->hinge_blocks[16 * hh];
  for (int k = 0; k < 4; k++) {
    add_outer_term(s->val, blk[4 * k + k], g[k], g[k], c);
    for (int l = k + 1; l < 4; l++) /* c g_k g_l^T and its transpose, the (l, k) block's term */
      add_outer_term(s->val, blk[4 * k + l], g[k], g[l], c);
    y[q->v[k]] = v3_madd(y[q->v[k]], g[k], -kb * gv);
    f[q->v[k]] = v3_madd(f[q->v[k]], g[k], fs);
  }
}

/* One spring into A and y (its Jacobian's four blocks). */
static void assemble_spring(cloth_body *b, int q, const vec3 *x, const vec3 *v, double h, vec3 *y) {
  cloth_solver *s = &b->solver;
  const spring *sp = &b->model.springs[q];
  mat3 X, V, nX, nV;
  spring_jacobian(b, q, x, 0, &X, &V);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      nX.m[r][c] = -X.m[r][c];
      nV.m[r][c] = -V.m[r][c];
    }
  const int32_t *blk = &s->spring_blocks[4 * q];
  scatter(&s->val[blk[0]], &nX, &nV, h, &y[sp->i], v[sp->i]);
  scatter(blk[1] >= 0 ? &s->val[blk[1]] : NULL, &X, &V, h, &y[sp->i], v[sp->j]);
  scatter(blk[2] >= 0 ? &s->val[blk[2]] : NULL, &X, &V, h, &y[sp->j], v[sp->i]);
  scatter(&s->val[blk[3]], &nX, &nV, h, &y[sp->j], v[sp->j]);
}

typedef struct assemble_ctx {
  cloth_body *b;
  const vec3 *x, *v;
  double h, drag, grab_k, grab_c;
  int grab_vertex;
  int bad[2], bad_vertex[2]; /* refused damping blocks per part, and the first one's vertex */
} assemble_ctx;

/* Rows [lo, hi) of half `part` made ready for the elements: cleared, then their mass, drag,
 * external damping and grab terms. */
static void prepare_rows(assemble_ctx *a, int lo, int hi, int part) {
  cloth_body *b = a->b;
  cloth_solver *s = &b->solver;
  const double h = a->h;
  memset(s->val + s->urow[lo], 0, sizeof(mat3) * (size_t)(s->urow[hi] - s->urow[lo]));
  vec3 *y = s->q;
  memset(y + lo, 0, sizeof(vec3) * (size_t)(hi - lo));
  for (int i = lo; i < hi; i++) {
    /* mass and air drag (df/dv = -drag m I) */
    add_identity(cloth_solver_diag(s, i), b->p.m[i] * (1.0 + h * a->drag));
  }
  /* the external forces' velocity Jacobian (loom_body_damping): D_i = -df_i/dv_i joins A_ii as h D_i.
   * Only finite, symmetric positive semi-definite blocks are taken (every principal minor >= 0), so
   * A stays positive definite; the others are counted and reported. */
  for (int i = lo; i < hi; i++) {
    const double *d = &b->p.damp[6 * i];
    if (d[0] == 0 && d[1] == 0 && d[2] == 0 && d[3] == 0 && d[4] == 0 && d[5] == 0) continue;
    const double xx = d[0], yy = d[1], zz = d[2], xy = d[3], xz = d[4], yz = d[5];
    const double det = xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz);
    /* minors of a rank-one or rank-two block are zero up to rounding: allow that, relative to the trace */
    const double tr = fabs(xx) + fabs(yy) + fabs(zz), e2 = 1e-10 * tr * tr, e3 = e2 * tr;
    const int finite = isfinite(xx) && isfinite(yy) && isfinite(zz) && isfinite(xy) && isfinite(xz) && isfinite(yz);
    if (!finite || xx < 0 || yy < 0 || zz < 0 || xx * yy - xy * xy < -e2 || xx * zz - xz * xz < -e2 ||
        yy * zz - yz * yz < -e2 || det < -e3) {
      if (a->bad[part]++ == 0) a->bad_vertex[part] = i;
      continue;
    }
    mat3 *A = cloth_solver_diag(s, i);
    A->m[0][0] += h * xx;
    A->m[1][1] += h * yy;
    A->m[2][2] += h * zz;
    A->m[0][1] += h * xy;
    A->m[1][0] += h * xy;
    A->m[0][2] += h * xz;
    A->m[2][0] += h * xz;
    A->m[1][2] += h * yz;
    A->m[2][1] += h * yz;
  }
  if (a->grab_vertex >= lo && a->grab_vertex < hi) {
    /* the mouse spring: df/dx = -k I, df/dv = -c I */
    const int gv = a->grab_vertex;
    add_identity(cloth_solver_diag(s, gv), h * a->grab_c + h * h * a->grab_k);
    y[gv] = v3_madd(y[gv], a->v[gv], -a->grab_k);
  }
}

/* The rows of a half made ready so far (prepare_rows), just ahead of the elements that reach
 * them: the rows an element fills are then still in the cache when it comes. */
typedef struct row_cursor {
  int next, end, part;
} row_cursor;

static inline void rows_ready(assemble_ctx *a, row_cursor *rc, int v) {
  if (v < rc->next) return;
  const int to = v + 1 < rc->end ? v + 1 : rc->end;
  prepare_rows(a, rc->next, to, rc->part);
  rc->next = to;
}

/* The largest of an element's k vertex indices (the last row it fills). */
static inline int last_row(const int32_t *v, int k) {
  int m = v[0];
  for (int j = 1; j < k; j++) m = v[j] > m ? v[j] : m;
  return m;
}

/* The triangle at position kt of tri_order, its rows made ready first. */
static inline void assemble_tri_at(assemble_ctx *a, row_cursor *rc, int kt) {
  cloth_body *b = a->b;
  const int t = b->solver.tri_order[kt];
  rows_ready(a, rc, last_row(b->model.bw[t].v, 3));
  assemble_tri(b, t, a->x, a->v, a->h, b->solver.q, b->solver.f0);
}

/* The elements of group g (0, 1: a half; 2: the band) into A, y and f0, its rows made ready as
 * the elements reach them (rc; the band's are all ready). A block sums its terms in one order
 * whatever the interleaving: rows ready before any element, the group's triangles in their order,
 * then its hinges in theirs. Each hinge waits only for the triangles that share a vertex with it
 * (hinge_ready), so the two kinds walk the mesh side by side instead of one after the other over
 * the whole matrix. */
static void assemble_group(assemble_ctx *a, int g, row_cursor *rc) {
  cloth_body *b = a->b;
  cloth_solver *s = &b->solver;
  vec3 *y = s->q;
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN) {
    const int tris = b->params.stretch > 0 || b->params.shear > 0, hinges = b->params.bend > 0;
    int kt = s->tri_part[g];
    const int kt1 = tris ? s->tri_part[g + 1] : kt;
    if (hinges)
      for (int kh = s->hinge_part[g]; kh < s->hinge_part[g + 1]; kh++) {
        for (const int need = tris ? s->hinge_ready[kh] : kt; kt < need; kt++) assemble_tri_at(a, rc, kt);
        const int hh = s->hinge_order[kh];
        rows_ready(a, rc, last_row(b->model.hinges[hh].v, 4));
        assemble_hinge(b, hh, a->x, a->v, a->h, y, s->f0);
      }
    for (; kt < kt1; kt++) assemble_tri_at(a, rc, kt);
  } else {
    rows_ready(a, rc, rc->end - 1);
    for (int k = s->spring_part[g]; k < s->spring_part[g + 1]; k++) assemble_spring(b, s->spring_order[k], a->x, a->v, a->h, y);
  }
}

/* Half `part` of the assembly: its rows and the elements that lie in it. */
static void assemble_half(void *ctx, int lo, int hi, int part) {
  assemble_ctx *a = ctx;
  a->bad[part] = 0;
  row_cursor rc = {lo, hi, part};
  assemble_group(a, part, &rc);
  rows_ready(a, &rc, hi - 1); /* (rows no element of the half reaches) */
}

/* Fills A = M - h df/dv - h^2 df/dx and y = df/dx v0 (in s->q). Baraff-Witkin element forces
 * (triangles and hinges) are added to s->f0 here, from the quantities their Jacobians need anyway
 * (the same formulas as bw_tri_forces and bw_hinge_forces); the springs' come from the explicit
 * integrators' routine. The two halves of the rows are filled side by side (the second on the
 * world's helper thread when it has one), then the elements across them: every block sums its
 * terms in the same order either way. */
static void assemble(cloth_body *b, const vec3 *x, const vec3 *v, double h, double drag, double grab_k,
                     double grab_c, int grab_vertex) {
  cloth_solver *s = &b->solver;
  assemble_ctx a = {b, x, v, h, drag, grab_k, grab_c, grab_vertex, {0, 0}, {-1, -1}};
  core_par_rows(s->par, b->p.n, assemble_half, &a);
  row_cursor band = {b->p.n, b->p.n, 0};
  assemble_group(&a, 2, &band);
  s->bad_damping = a.bad[0] + a.bad[1];
  s->bad_damping_vertex = a.bad[0] ? a.bad_vertex[0] : a.bad_vertex[1];
}

/* ---- the filtered PCG ----------------------------------------------------------------------------- */

typedef struct spmv_ctx {
  const cloth_solver *s;
  const vec3 *p;
  vec3 *out;
} spmv_ctx;

/* out = A p over rows [lo, hi): each row sums its blocks in column order, those left of the
 * diagonal read transposed from the rows above (stored a few rows back, so still in the cache:
 * half the matrix's memory traffic for the same bits as a full matrix) */
static void spmv_rows(const cloth_solver *s, int lo, int hi, const vec3 *restrict p, vec3 *restrict out) {
  for (int i = lo; i < hi; i++) {
    double ox = 0, oy = 0, oz = 0;
    const int d = s->diag[i];
    for (int k = s->row[i]; k < d; k++) {
      const mat3 *U = &s->val[s->ublk[k]];
      const vec3 pj = p[s->col[k]];
      ox += U->m[0][0] * pj.x + U->m[1][0] * pj.y + U->m[2][0] * pj.z;
      oy += U->m[0][1] * pj.x + U->m[1][1] * pj.y + U->m[2][1] * pj.z;
      oz += U->m[0][2] * pj.x + U->m[1][2] * pj.y + U->m[2][2] * pj.z;
    }
    const mat3 *A = &s->val[s->urow[i]];
    for (int k = d; k < s->row[i + 1]; k++, A++) {
      const vec3 pj = p[s->col[k]];
      ox += A->m[0][0] * pj.x + A->m[0][1] * pj.y + A->m[0][2] * pj.z;
      oy += A->m[1][0] * pj.x + A->m[1][1] * pj.y + A->m[1][2] * pj.z;
      oz += A->m[2][0] * pj.x + A->m[2][1] * pj.y + A->m[2][2] * pj.z;
    }
    out[i] = v3(ox, oy, oz);
  }
}

static void spmv_half(void *ctx, int lo, int hi, int part) {
  (void)part;
  const spmv_ctx *c = ctx;
  spmv_rows(c->s, lo, hi, c->p, c->out);
}

/* ---- a cloth's own contacts as pairs in the solve ------------------------------------------------
 * A vertex resting on a triangle of its own cloth (con 5) is not held at a velocity the triangle
 * had at the substep's start: the pair's relative normal velocity J dv = n . (dv_i - sum_q w_q
 * dv_tq) joins the system as a penalty, k (J dv - g)^2 / 2 with the multiplier con_lam, so the two
 * meet at a common velocity inside the solve and the impulse each takes is the other's opposite
 * (the pair's terms move no momentum). The penalty k is PAIR_STIFF times the pair's effective mass
 * along the normal (from the diagonal blocks), and the contact passes raise the multiplier to the
 * impulse the pair needs (an augmented Lagrangian), or release the pair when it pulls. The
 * diagonal blocks of k J^T J are added to the stored matrix (so the preconditioners see them);
 * the blocks between the vertex and its triangle's vertices are applied matrix-free. With the
 * cloth's friction a touching pair starts sticking (con 6): its relative tangential velocity is
 * held the same way (penalty pair_kt, target pair_gt, multiplier pair_lt), so the penalty on the
 * pair's relative velocity is kn n n^T + kt (I - n n^T); outside Coulomb's cone it slides (con 5)
 * with kinetic friction (kfric, on the right-hand side; contact_passes). */
#ifndef PAIR_STIFF
#define PAIR_STIFF 3.0
#endif

/* A pair (con 5 sliding, 6 sticking) */
static inline int is_pair(int c) { return c == 5 || c == 6; }

/* J p for pair i (its normal part) */
static inline double pair_rel(const cloth_solver *s, int i, const vec3 *p) {
  const vec3 nn = s->con_n[i];
  double r = v3_dot(nn, p[i]);
  for (int q = 0; q < 3; q++) r -= s->con_w[3 * i + q] * v3_dot(nn, p[s->con_tri[3 * i + q]]);
  return r;
}

/* the tangential part of the pair's relative vector p_i - sum_q w_q p_tq */
static inline vec3 pair_rel_t(const cloth_solver *s, int i, const vec3 *p) {
  vec3 r = p[i];
  for (int q = 0; q < 3; q++) r = v3_madd(r, p[s->con_tri[3 * i + q]], -s->con_w[3 * i + q]);
  return v3_madd(r, s->con_n[i], -v3_dot(r, s->con_n[i]));
}

/* out += J^T a for pair i: a on the vertex, its opposite on the triangle by the weights */
static inline void pair_apply_v(const cloth_solver *s, int i, vec3 a, vec3 *out) {
  out[i] = v3_add(out[i], a);
  for (int q = 0; q < 3; q++) {
    const int t = s->con_tri[3 * i + q];
    out[t] = v3_madd(out[t], a, -s->con_w[3 * i + q]);
  }
}

/* out += J^T mu for pair i (along its normal) */
static inline void pair_apply(const cloth_solver *s, int i, double mu, vec3 *out) {
  const vec3 nn = s->con_n[i];
  out[i] = v3_madd(out[i], nn, mu);
  for (int q = 0; q < 3; q++) {
    const int t = s->con_tri[3 * i + q];
    out[t] = v3_madd(out[t], nn, -s->con_w[3 * i + q] * mu);
  }
}

/* the normal impulse pair i's vertex takes at the velocity change dv (its triangle the opposite) */
static inline double pair_impulse(const cloth_solver *s, int i, const vec3 *dv) {
  return s->pair_k[i] * (s->pair_g[i] - pair_rel(s, i, dv)) + s->con_lam[i];
}

/* the tangential impulse a sticking pair's vertex takes at dv */
static inline vec3 pair_impulse_t(const cloth_solver *s, int i, const vec3 *dv) {
  return v3_add(v3_scale(v3_sub(s->pair_gt[i], pair_rel_t(s, i, dv)), s->pair_kt[i]), s->pair_lt[i]);
}

/* D += c (kn n n^T + kt (I - n n^T)) */
static inline void add_pair_block(mat3 *D, vec3 nn, double kn, double kt, double c) {
  add_outer(D, nn, nn, c * (kn - kt));
  if (kt != 0)
    for (int a = 0; a < 3; a++) D->m[a][a] += c * kt;
}

/* the diagonal blocks of k J^T J (normal kn, tangential kt) into the stored matrix */
static void pair_diag_part(cloth_solver *s, int i, double kn, double kt) {
  const vec3 nn = s->con_n[i];
  add_pair_block(cloth_solver_diag(s, i), nn, kn, kt, 1);
  for (int q = 0; q < 3; q++) {
    const double w = s->con_w[3 * i + q];
    add_pair_block(cloth_solver_diag(s, s->con_tri[3 * i + q]), nn, kn, kt, w * w);
  }
}

/* the diagonal blocks of pair i's penalty as it stands, times sign */
static void pair_diag(cloth_solver *s, int i, double sign) {
  pair_diag_part(s, i, sign * s->pair_k[i], s->con[i] == 6 ? sign * s->pair_kt[i] : 0);
}

/* ---- held pairs ------------------------------------------------------------------------------------
 * A vertex an obstacle holds (its contact constraint, con 1-4) has no room for a pair with a
 * triangle of its own cloth lying on it: the triangle pressing on it fell into it in the solve,
 * the collision pipeline pushed the two apart after it, and a cloth lying in two layers over an
 * obstacle never came to rest (docs/architecture.md, "Held pairs"). Such a pair is held in the
 * system as a cloth's own pairs are: a penalty on J dv = dv_i - sum_q w_q dv_tq, k (n . J dv - g)^2
 * / 2 along the normal n (from the triangle to the vertex) with a multiplier the contact passes
 * raise, released when it pulls; with the cloth's self_friction a touching pair starts sticking
 * (the same on the tangential part, kt and lt) and slides once it leaves Coulomb's cone, with
 * kinetic friction along the tangential impulse it had. The obstacle's constraint filters the
 * vertex's part along its normal, so the pair stops the triangle at the vertex, and the vertex's
 * reaction goes into its constraint. */
static inline vec3 held_rel_v(const cloth_held_pair *q, const vec3 *p) {
  vec3 r = v3(0, 0, 0);
  for (int a = 0; a < 4; a++) r = v3_madd(r, p[q->v[a]], q->c[a]);
  return r;
}

static inline double held_rel(const cloth_held_pair *q, const vec3 *p) { return v3_dot(q->n, held_rel_v(q, p)); }

static inline vec3 held_rel_t(const cloth_held_pair *q, const vec3 *p) {
  const vec3 r = held_rel_v(q, p);
  return v3_madd(r, q->n, -v3_dot(r, q->n));
}

/* out += J^T a for a held pair (a: the impulse on its vertex) */
static inline void held_apply(const cloth_held_pair *q, vec3 a, vec3 *out) {
  for (int k = 0; k < 4; k++) out[q->v[k]] = v3_madd(out[q->v[k]], a, q->c[k]);
}

/* the normal impulse a held pair gives its vertex at the velocity change dv */
static inline double held_impulse(const cloth_held_pair *q, const vec3 *dv) {
  return q->k * (q->g - held_rel(q, dv)) + q->lam;
}

/* the tangential impulse of a sticking held pair at dv */
static inline vec3 held_impulse_t(const cloth_held_pair *q, const vec3 *dv) {
  return v3_add(v3_scale(v3_sub(q->gt, held_rel_t(q, dv)), q->kt), q->lt);
}

/* the whole impulse on the vertex at dv (NULL: zero): normal, tangential while it sticks, the
 * kinetic friction while it slides */
static vec3 held_impulse_v(const cloth_held_pair *q, const vec3 *dv) {
  const double pn = dv ? held_impulse(q, dv) : q->k * q->g + q->lam;
  const vec3 pt = q->kt > 0 ? (dv ? held_impulse_t(q, dv) : v3_madd(q->lt, q->gt, q->kt)) : q->kf;
  return v3_madd(pt, q->n, pn);
}

/* the diagonal blocks of a held pair's penalty (normal kn, tangential kt), times sign, into the
 * stored matrix */
static void held_diag(cloth_solver *s, const cloth_held_pair *q, double kn, double kt) {
  for (int a = 0; a < 4; a++)
    if (q->c[a] != 0) add_pair_block(cloth_solver_diag(s, q->v[a]), q->n, kn, kt, q->c[a] * q->c[a]);
}

/* out += the off-diagonal blocks of the held pairs' penalties times p: row a of J^T K J p less
 * its diagonal block's term is c_a (K J p - c_a K p_a), K = kn n n^T + kt (I - n n^T) */
static void held_product(const cloth_solver *s, const vec3 *p, vec3 *out) {
  for (int k = 0; k < s->nheld; k++) {
    const cloth_held_pair *q = &s->held[k];
    if (!q->on) continue;
    vec3 kp[4], S = v3(0, 0, 0);
    for (int a = 0; a < 4; a++) {
      const vec3 pa = p[q->v[a]];
      kp[a] = v3_madd(v3_scale(pa, q->kt), q->n, (q->k - q->kt) * v3_dot(q->n, pa));
      S = v3_madd(S, kp[a], q->c[a]);
    }
    for (int a = 0; a < 4; a++)
      if (q->c[a] != 0) out[q->v[a]] = v3_madd(out[q->v[a]], v3_madd(S, kp[a], -q->c[a]), q->c[a]);
  }
}

/* out += the off-diagonal blocks of the pairs' k J^T J times p (serial: pairs share vertices) */
static void pair_product(const cloth_solver *s, int n, const vec3 *p, vec3 *out) {
  if (s->nheld) held_product(s, p, out);
  if (!s->npair) return;
  for (int i = 0; i < n; i++) {
    if (!is_pair(s->con[i])) continue;
    const vec3 nn = s->con_n[i];
    const double k = s->pair_k[i], *w = &s->con_w[3 * i];
    const int32_t *t = &s->con_tri[3 * i];
    if (s->con[i] == 6) {
      /* with the coefficients c = (1, -w0, -w1, -w2) of the vertex and its triangle's, row a of
       * k J^T K J p less its diagonal block's term is c_a (K J p - c_a K p_a) */
      const double kt = s->pair_kt[i], c[4] = {1, -w[0], -w[1], -w[2]};
      const int vi[4] = {i, t[0], t[1], t[2]};
      vec3 kp[4], S = v3(0, 0, 0);
      for (int a = 0; a < 4; a++) {
        const vec3 pa = p[vi[a]];
        kp[a] = v3_madd(v3_scale(pa, kt), nn, (k - kt) * v3_dot(nn, pa));
        S = v3_madd(S, kp[a], c[a]);
      }
      for (int a = 0; a < 4; a++) out[vi[a]] = v3_madd(out[vi[a]], v3_madd(S, kp[a], -c[a]), c[a]);
      continue;
    }
    const double pi = v3_dot(nn, p[i]);
    const double p0 = v3_dot(nn, p[t[0]]), p1 = v3_dot(nn, p[t[1]]), p2 = v3_dot(nn, p[t[2]]);
    out[i] = v3_madd(out[i], nn, -k * (w[0] * p0 + w[1] * p1 + w[2] * p2));
    out[t[0]] = v3_madd(out[t[0]], nn, k * w[0] * (w[1] * p1 + w[2] * p2 - pi));
    out[t[1]] = v3_madd(out[t[1]], nn, k * w[1] * (w[0] * p0 + w[2] * p2 - pi));
    out[t[2]] = v3_madd(out[t[2]], nn, k * w[2] * (w[0] * p0 + w[1] * p1 - pi));
  }
}

/* The pairs' penalties from the assembled diagonal (first solve of a substep: k and the diagonal;
 * again after a Newton iteration's assembly: the diagonal with the same k). The tangential
 * penalty of a pair with friction is PAIR_STIFF times its effective mass from the masses alone:
 * across the normal the diagonal is the membrane's stiffness (h^2 k, thousands of times the
 * mass), and a penalty that stiff turns the CG's tolerance into tangential impulses several times
 * the friction cone (a patch at rest on its own cloth never stuck). */
static void pair_setup(const cloth_body *b, cloth_solver *s, int n, int first) {
  for (int k = 0; k < s->nheld; k++) {
    cloth_held_pair *q = &s->held[k];
    if (first) {
      /* (PAIR_STIFF times the effective masses, as a cloth's own pairs: along the normal from the
       * diagonal blocks, across it from the masses alone; a touching pair with friction starts
       * sticking) */
      double inv = 0, invt = 0;
      for (int a = 0; a < 4; a++) {
        if (q->c[a] == 0 || s->fixed[q->v[a]]) continue;
        inv += q->c[a] * q->c[a] / v3_dot(q->n, m3_mulv(cloth_solver_diag(s, q->v[a]), q->n));
        invt += q->c[a] * q->c[a] * b->p.inv_m[q->v[a]];
      }
      q->k = isfinite(inv) && inv > 0 ? PAIR_STIFF / inv : 0;
      q->kt = q->mu > 0 && q->touch && isfinite(invt) && invt > 0 ? PAIR_STIFF / invt : 0;
      if (q->k == 0) q->on = 0;
    }
    if (q->on) held_diag(s, q, q->k, q->kt);
  }
  if (!s->npair) return;
  for (int i = 0; i < n && first; i++) {
    if (!is_pair(s->con[i])) continue;
    const vec3 nn = s->con_n[i];
    double inv = 1.0 / v3_dot(nn, m3_mulv(cloth_solver_diag(s, i), nn)), invt = b->p.inv_m[i];
    for (int q = 0; q < 3; q++) {
      const int t = s->con_tri[3 * i + q];
      if (s->fixed[t]) continue;
      const double w = s->con_w[3 * i + q];
      inv += w * w / v3_dot(nn, m3_mulv(cloth_solver_diag(s, t), nn));
      invt += w * w * b->p.inv_m[t];
    }
    s->pair_k[i] = isfinite(inv) && inv > 0 ? PAIR_STIFF / inv : 0;
    s->pair_kt[i] = s->con_mu[i] > 0 && isfinite(invt) && invt > 0 ? PAIR_STIFF / invt : 0;
    if (s->con[i] == 6 && s->pair_kt[i] == 0) s->con[i] = 5;
  }
  for (int i = 0; i < n; i++)
    if (is_pair(s->con[i])) pair_diag(s, i, 1);
}

/* the whole impulse pair i gives its vertex at dv (base NULL: zero): normal, tangential while it
 * sticks, kinetic friction while it slides */
static vec3 pair_impulse_v(const cloth_solver *s, int i, const vec3 *base) {
  const double pn = base ? pair_impulse(s, i, base) : s->pair_k[i] * s->pair_g[i] + s->con_lam[i];
  vec3 a = v3_add(v3_scale(s->con_n[i], pn), s->kfric[i]);
  if (s->con[i] == 6)
    a = v3_add(a, base ? pair_impulse_t(s, i, base) : v3_madd(s->pair_lt[i], s->pair_gt[i], s->pair_kt[i]));
  return a;
}

/* rhs += J^T (k (g - J base) + lam), and the kinetic friction, for every pair */
static void pair_rhs(cloth_solver *s, int n, const vec3 *base) {
  for (int k = 0; k < s->nheld; k++) {
    const cloth_held_pair *q = &s->held[k];
    if (q->on) held_apply(q, held_impulse_v(q, base), s->rhs);
  }
  if (!s->npair) return;
  for (int i = 0; i < n; i++) {
    if (!is_pair(s->con[i])) continue;
    if (s->con[i] == 5 && s->kfric[i].x == 0 && s->kfric[i].y == 0 && s->kfric[i].z == 0)
      pair_apply(s, i, base ? pair_impulse(s, i, base) : s->pair_k[i] * s->pair_g[i] + s->con_lam[i], s->rhs);
    else pair_apply_v(s, i, pair_impulse_v(s, i, base), s->rhs);
  }
}

/* out = A p, the two halves of the rows side by side */
static void spmv(const cloth_solver *s, int n, const vec3 *p, vec3 *out) {
  spmv_ctx c = {s, p, out};
  core_par_rows(s->par, n, spmv_half, &c);
  if (s->ncon || s->nheld) pair_product(s, n, p, out);
}

/* ---- the CG iteration's vector work, fused, in the two halves of the rows ---------------------
 * Used when no movable body shares the solve (T is the filter S alone). Each pass reads and
 * writes a vertex's rows only, and a dot product is the sum of the two halves' partial sums,
 * first half first: the same bits with one thread or two. */
static inline vec3 filter_one(const cloth_solver *s, int i, vec3 a) {
  if (s->fixed[i]) return v3(0, 0, 0);
  if (!s->ncon || !s->con[i] || is_pair(s->con[i])) return a;
  if (s->con[i] == 2 || s->con[i] == 3) return v3(0, 0, 0);
  return v3_madd(a, s->con_n[i], -v3_dot(a, s->con_n[i]));
}

typedef struct cg_ctx {
  const cloth_solver *s;
  vec3 *c, *e, *q, *r, *t, *y;
  double alpha, beta;
  double part[2];
} cg_ctx;

/* out = S in over rows [lo, hi) (in place when in == out), and the sum of a . out there */
static double filter_dot_rows(const cloth_solver *s, int lo, int hi, const vec3 *in, vec3 *out, const vec3 *a) {
  double d = 0;
  for (int i = lo; i < hi; i++) {
    out[i] = filter_one(s, i, in[i]);
    d += a[i].x * out[i].x + a[i].y * out[i].y + a[i].z * out[i].z;
  }
  return d;
}

/* q = A c, e = S q and the partial sums of c . e */
static void cg_product_half(void *ctx, int lo, int hi, int part) {
  cg_ctx *g = ctx;
  spmv_rows(g->s, lo, hi, g->c, g->q);
  g->part[part] = filter_dot_rows(g->s, lo, hi, g->q, g->e, g->c);
}

/* e = S q (q = A c already) and the partial sums of c . e */
static void cg_filter_q_half(void *ctx, int lo, int hi, int part) {
  cg_ctx *g = ctx;
  g->part[part] = filter_dot_rows(g->s, lo, hi, g->q, g->e, g->c);
}

/* y += alpha c, r -= alpha e */
static void cg_update_half(void *ctx, int lo, int hi, int part) {
  (void)part;
  cg_ctx *g = ctx;
  for (int i = lo; i < hi; i++) {
    g->y[i] = v3_madd(g->y[i], g->c[i], g->alpha);
    g->r[i] = v3_madd(g->r[i], g->e[i], -g->alpha);
  }
}

/* t = S t and the partial sums of r . t */
static void cg_filter_dot_half(void *ctx, int lo, int hi, int part) {
  cg_ctx *g = ctx;
  g->part[part] = filter_dot_rows(g->s, lo, hi, g->t, g->t, g->r);
}

/* c = S (t + beta c) */
static void cg_direction_half(void *ctx, int lo, int hi, int part) {
  (void)part;
  cg_ctx *g = ctx;
  for (int i = lo; i < hi; i++) g->c[i] = filter_one(g->s, i, v3_madd(g->t[i], g->c[i], g->beta));
}

/* The vertices the multigrid hierarchy decouples: pinned ones and contacts constrained in all
 * three directions (sticking). */
static inline uint8_t mg_fix_of(const cloth_solver *s, int i) {
  return s->fixed[i] || (s->ncon && (s->con[i] == 2 || s->con[i] == 3));
}

static const uint8_t *mg_fixed(cloth_solver *s, int n) {
  for (int i = 0; i < n; i++) s->mgfix[i] = mg_fix_of(s, i);
  return s->ncon ? s->mgfix : s->fixed;
}

/* The directions the multigrid hierarchy stiffens: sliding contacts' normals (zero elsewhere;
 * NULL without contacts). */
static inline vec3 mg_normal_of(const cloth_solver *s, int i) {
  return s->ncon && (s->con[i] == 1 || s->con[i] == 4) ? s->con_n[i] : v3(0, 0, 0);
}

static const vec3 *mg_normals(cloth_solver *s, int n) {
  for (int i = 0; i < n; i++) s->mgn[i] = mg_normal_of(s, i);
  return s->ncon ? s->mgn : NULL;
}

/* A contact changed what the hierarchy decouples or stiffens since mg_fixed and mg_normals last
 * wrote it (only called after they did; they write it with contacts or without, so that a solve
 * again after a set-up without contacts compares with what that set-up saw). */
static int mg_constraints_changed(const cloth_solver *s, int n) {
  for (int i = 0; i < n; i++) {
    const vec3 nn = mg_normal_of(s, i);
    if (s->mgfix[i] != mg_fix_of(s, i) || s->mgn[i].x != nn.x || s->mgn[i].y != nn.y || s->mgn[i].z != nn.z) return 1;
  }
  return 0;
}

/* The filter S_i: a fixed vertex (pinned, scripted) has all three directions constrained, a
 * vertex in contact the one along its contact normal (S_i = I - n n^T). */
static inline void filter(const cloth_solver *s, int n, vec3 *a) {
  for (int i = 0; i < n; i++) a[i] = filter_one(s, i, a[i]);
}

static double dot(int n, const vec3 *a, const vec3 *c) {
  double d = 0;
  for (int i = 0; i < n; i++) d += a[i].x * c[i].x + a[i].y * c[i].y + a[i].z * c[i].z;
  return d;
}

/* out = B r: the preconditioner, block-Jacobi or one multigrid V-cycle (both symmetric positive
 * definite; CG filters what they return). */
static void precondition(cloth_solver *s, int n, int multigrid, const vec3 *r, vec3 *out) {
  if (multigrid) cloth_mg_apply(&s->mg, r, out);
  else
    for (int i = 0; i < n; i++) out[i] = m3_mulv(&s->pinv[i], r[i]);
}

/* The size of the unfiltered right-hand side in the preconditioned norm, roughly (the diagonal's
 * mean as each vertex's mass): the scale below which a filtered residual is rounding. */
static double rhs_scale(const cloth_solver *s, int n) {
  double d = 0;
  for (int i = 0; i < n; i++) {
    const mat3 *D = cloth_solver_diag(s, i);
    const double m = (D->m[0][0] + D->m[1][1] + D->m[2][2]) / 3;
    if (m > 0) d += v3_len2(s->rhs[i]) / m;
  }
  return d;
}

/* ---- contacts in the solve ------------------------------------------------------------------------ */

#define CONTACT_PASSES 4
#ifndef REACT_TOL
#define REACT_TOL 0.1
#endif
#define CLOTH_PAR_VERTICES 256

/* The constrained part N_i a of a contact vertex's vector (all of it when sticking, the normal
 * when sliding) and the free part S_i a = a - N_i a the filter keeps. */
static inline vec3 constrained_part(const cloth_solver *s, int i, vec3 a) {
  if (s->con[i] == 2) return a;
  if (s->con[i] == 3) return v3_madd(a, s->con_n[i], -v3_dot(a, s->con_n[i])); /* the tangential part */
  return v3_scale(s->con_n[i], v3_dot(a, s->con_n[i]));
}

/* The vertex moves with a movable body in the solve (a pressed, sliding vertex does not). */
static inline int on_movable(const cloth_solver *s, int i) {
  return s->con[i] && s->con[i] != 4 && s->cbody[s->con_b[i]].movable;
}

/* The velocity of the obstacle at contact vertex i after the solve (a movable body's includes
 * its change; the tangential part is what friction compares with). */
static inline vec3 obstacle_velocity(const cloth_solver *s, const vec3 *x, int i) {
  if (!s->cbody[s->con_b[i]].movable) return s->con_v[i];
  const struct cloth_contact_body *cb = &s->cbody[s->con_b[i]];
  return v3_add(v3_add(cb->v_free, cb->du), v3_cross(v3_add(cb->w_free, cb->dw), v3_sub(x[i], cb->c)));
}

/* The coupled system. A movable body's change of velocity U = (du, dw) over its free motion is
 * an unknown next to the cloth's: a contact vertex's constrained part moves with the body,
 * dv_i = S_i y_i + N_i G_i U (G_i U = du + dw x r_i), on top of the prescribed offsets z, and the
 * body's momentum balance M U = -sum G_i^T (contact impulse on i) closes the system. With T the map
 * (y, U) -> dv the reduced matrix T^T A T + diag(M) is symmetric positive definite, and the
 * modified PCG runs on it: pins and contacts with immovable bodies stay exact through the filter,
 * contacts with movable bodies are exact through the coupling, and momentum is exchanged within
 * the solve (no lag, nothing to iterate between the cloth and the body). */
static void expand(const cloth_solver *s, int n, const vec3 *y, vec3 (*U)[2], const vec3 *x, vec3 *out) {
  memcpy(out, y, sizeof(vec3) * (size_t)n);
  filter(s, n, out);
  for (int i = 0; i < n; i++) {
    if (!on_movable(s, i)) continue;
    const int k = s->con_b[i];
    const vec3 g = v3_add(U[k][0], v3_cross(U[k][1], v3_sub(x[i], s->cbody[k].c)));
    out[i] = v3_add(out[i], constrained_part(s, i, g));
  }
}

/* (y, U) <- T^T q (+ M U for the body rows when U is given) */
static void reduce(const cloth_solver *s, int n, const vec3 *q, const vec3 *x, vec3 (*Uin)[2], vec3 *y,
                   vec3 (*U)[2]) {
  memcpy(y, q, sizeof(vec3) * (size_t)n);
  filter(s, n, y);
  for (int k = 0; k < s->ncbody; k++) {
    const struct cloth_contact_body *cb = &s->cbody[k];
    U[k][0] = Uin ? v3_scale(Uin[k][0], cb->m) : v3(0, 0, 0);
    U[k][1] = Uin ? m3_mulv(&cb->I, Uin[k][1]) : v3(0, 0, 0);
  }
  for (int i = 0; i < n; i++) {
    if (!on_movable(s, i)) continue;
    const int k = s->con_b[i];
    const vec3 nq = constrained_part(s, i, q[i]);
    U[k][0] = v3_add(U[k][0], nq);
    U[k][1] = v3_add(U[k][1], v3_cross(v3_sub(x[i], s->cbody[k].c), nq));
  }
}

/* A body's directions that cannot move (linear or angular motion switched off) stay zero. */
static void body_filter(const cloth_solver *s, vec3 (*U)[2]) {
  for (int k = 0; k < s->ncbody; k++) {
    if (!s->cbody[k].lin) U[k][0] = v3(0, 0, 0);
    if (!s->cbody[k].ang) U[k][1] = v3(0, 0, 0);
  }
}

static double body_dot(const cloth_solver *s, vec3 (*a)[2], vec3 (*b)[2]) {
  double d = 0;
  for (int k = 0; k < s->ncbody; k++) d += v3_dot(a[k][0], b[k][0]) + v3_dot(a[k][1], b[k][1]);
  return d;
}

/* The block-Jacobi part of a body: the inverses of its linear and angular diagonal blocks of the
 * reduced matrix (mass and inertia plus what its contact vertices add). */
static void body_preconditioner(cloth_solver *s, int n, const vec3 *x) {
  mat3 D[CLOTH_CONTACT_BODIES][2];
  for (int k = 0; k < s->ncbody; k++) {
    D[k][0] = m3_identity();
    for (int a = 0; a < 3; a++) D[k][0].m[a][a] = s->cbody[k].m;
    D[k][1] = s->cbody[k].I;
  }
  for (int i = 0; i < n; i++) {
    if (!on_movable(s, i)) continue;
    const int k = s->con_b[i];
    const mat3 *Aii = cloth_solver_diag(s, i);
    mat3 NAN_;
    const vec3 nn = s->con_n[i];
    if (s->con[i] == 2) {
      NAN_ = *Aii;
    } else if (s->con[i] == 3) { /* P A P with P = I - n n^T */
      const vec3 An = m3_mulv(Aii, nn), nA = m3_tmulv(Aii, nn);
      const mat3 a = m3_outer(nn, nA), c = m3_outer(An, nn), d = m3_outer(nn, v3_scale(nn, v3_dot(nn, An)));
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) NAN_.m[r][q] = Aii->m[r][q] - a.m[r][q] - c.m[r][q] + d.m[r][q];
    } else {
      NAN_ = m3_outer(nn, v3_scale(nn, v3_dot(nn, m3_mulv(Aii, nn))));
    }
    const vec3 r = v3_sub(x[i], s->cbody[k].c);
    /* G_ang = -[r]x, so G_ang^T X G_ang = -[r]x X [r]x */
    mat3 R = {{{0, -r.z, r.y}, {r.z, 0, -r.x}, {-r.y, r.x, 0}}};
    mat3 XR = m3_mul(&NAN_, &R), RXR = m3_mul(&R, &XR);
    for (int a = 0; a < 3; a++)
      for (int c = 0; c < 3; c++) {
        D[k][0].m[a][c] += NAN_.m[a][c];
        D[k][1].m[a][c] -= RXR.m[a][c];
      }
  }
  for (int k = 0; k < s->ncbody; k++)
    for (int j = 0; j < 2; j++)
      if (!m3_inverse(&D[k][j], &s->bpinv[k][j])) s->bpinv[k][j] = m3_identity();
}

/* BW98 §5.3: the modified PCG, on the coupled system (without movable bodies, on the cloth alone).
 * The unknowns are the free parts y (and the bodies' U); Δv = z + T (y, U) starts at the
 * constrained values z (a pinned vertex's change to its pin's velocity, a contact's to its
 * obstacle's), every residual and search direction is filtered so constrained directions never
 * change, and the loop stops when the preconditioned residual falls below tol^2 times that of the
 * right-hand side. Returns iterations, the relative residual in *res; on return s->dv = Δv and each
 * movable body's U in cbody[].du, dw. `again`: start from the last solution (the preconditioner
 * stays). */
static int modified_pcg(cloth_solver *s, const cloth_body *b, int n, int multigrid, double tol, int max_iter,
                        int again, const vec3 *guess, double *res) {
  const vec3 *x = b->p.x;
  vec3 *y = s->y, *r = s->r, *c = s->c, *q = s->q, *t = s->f0, *e = s->e1;
  vec3 (*bx)[2] = s->bx, (*br)[2] = s->br, (*bc)[2] = s->bc, (*bq)[2] = s->bq, (*bt)[2] = s->bt;
  if (!again) {
    if (multigrid) cloth_mg_setup(&s->mg, n, s, mg_fixed(s, n), mg_normals(s, n));
    else
      for (int i = 0; i < n; i++)
        if (!m3_inverse(cloth_solver_diag(s, i), &s->pinv[i])) s->pinv[i] = m3_identity();
    body_preconditioner(s, n, x);
    if (guess)
      for (int i = 0; i < n; i++) y[i] = v3_sub(guess[i], s->z[i]);
    else memset(y, 0, sizeof(vec3) * (size_t)n);
    for (int k = 0; k < s->ncbody; k++) bx[k][0] = bx[k][1] = v3(0, 0, 0);
  } else if (multigrid && mg_constraints_changed(s, n)) {
    /* contacts released or sliding now: a hierarchy still holding them fixed would leave those
     * directions to CG alone (several times the iterations) */
    cloth_mg_setup(&s->mg, n, s, mg_fixed(s, n), mg_normals(s, n));
  }
  filter(s, n, y);
  body_filter(s, bx);
  /* the right-hand side: T^T (rhs - A z) */
  spmv(s, n, s->z, q);
  for (int i = 0; i < n; i++) e[i] = v3_sub(s->rhs[i], q[i]);
  vec3 bb[CLOTH_CONTACT_BODIES][2];
  reduce(s, n, e, x, NULL, t, bb);
  /* a pressed vertex sliding under its upper body: the kinetic friction in rhs is the cloth's
   * side, the body takes the opposite */
  for (int i = 0; i < n; i++) {
    if (s->con[i] != 4 || !s->cbody[s->con_b[i]].movable) continue;
    const int k = s->con_b[i];
    const vec3 f = s->kfric[i];
    bb[k][0] = v3_sub(bb[k][0], f);
    bb[k][1] = v3_sub(bb[k][1], v3_cross(v3_sub(x[i], s->cbody[k].c), f));
  }
  body_filter(s, bb);
  /* r = b - K x */
  expand(s, n, y, bx, x, e);
  spmv(s, n, e, q);
  reduce(s, n, q, x, bx, r, br);
  for (int i = 0; i < n; i++) r[i] = v3_sub(t[i], r[i]);
  for (int k = 0; k < s->ncbody; k++)
    for (int j = 0; j < 2; j++) br[k][j] = v3_sub(bb[k][j], br[k][j]);
  body_filter(s, br);
  /* delta0 from the right-hand side */
  precondition(s, n, multigrid, t, c);
  filter(s, n, c);
  double delta0 = dot(n, t, c);
  for (int k = 0; k < s->ncbody; k++)
    for (int j = 0; j < 2; j++) bc[k][j] = m3_mulv(&s->bpinv[k][j], bb[k][j]);
  body_filter(s, bc);
  delta0 += body_dot(s, bb, bc);
  precondition(s, n, multigrid, r, c);
  filter(s, n, c);
  for (int k = 0; k < s->ncbody; k++)
    for (int j = 0; j < 2; j++) bc[k][j] = m3_mulv(&s->bpinv[k][j], br[k][j]);
  body_filter(s, bc);
  double delta = dot(n, r, c) + body_dot(s, br, bc);
  if (guess && !again && !(delta <= delta0)) {
    /* the first guess is farther from the answer than zero (motion that changed abruptly: an
     * impact): start from zero, whose residual is the right-hand side */
    memset(y, 0, sizeof(vec3) * (size_t)n);
    memcpy(r, t, sizeof(vec3) * (size_t)n);
    for (int k = 0; k < s->ncbody; k++)
      for (int j = 0; j < 2; j++) br[k][j] = bb[k][j];
    precondition(s, n, multigrid, r, c);
    filter(s, n, c);
    for (int k = 0; k < s->ncbody; k++)
      for (int j = 0; j < 2; j++) bc[k][j] = m3_mulv(&s->bpinv[k][j], br[k][j]);
    body_filter(s, bc);
    delta = dot(n, r, c) + body_dot(s, br, bc);
  }
  int it = 0;
  s->breakdown = 0;
  /* the right-hand side (forces, or the guess) is not finite or its norm overflows: no finite
   * velocity answers it (iterating would stop at once on the non-finite test and leave the cloth
   * still, silently): v3_poison_largest below */
  const int overflow = !isfinite(delta0) || !isfinite(delta);
  if (overflow) delta = NAN;
  /* a Newton correction (newton_again) stops where the first solve of the substep did, at tol of
   * that one's right-hand side: its own is the first answer's small residual */
  if (!again && s->newton_ref == 0) s->delta_first = delta0;
  const double ref = d_max(s->newton_ref > 0 ? s->newton_ref : delta0, 1e-20 * rhs_scale(s, n)), stop = tol * tol * ref;
  int movable = 0;
  for (int k = 0; k < s->ncbody; k++) movable |= s->cbody[k].movable;
  if (!movable) {
    /* the same iteration with only the filter in T (the body rows of immovable bodies stay
     * zero), its vector work fused (cg_ctx): c is filtered already, so A c needs no expansion */
    cg_ctx g = {.s = s, .c = c, .e = e, .q = q, .r = r, .t = t, .y = y};
    while (delta > stop && it < max_iter) {
      if ((s->ncon && s->npair) || s->nheld) {
        spmv(s, n, c, q);
        core_par_rows(s->par, n, cg_filter_q_half, &g);
      } else {
        core_par_rows(s->par, n, cg_product_half, &g);
      }
      const double cq = g.part[0] + g.part[1];
      if (cq == 0 && delta < 1e-200) break;
      if (!(cq > 0)) {
        s->breakdown = 1;
        break;
      }
      g.alpha = delta / cq;
      core_par_rows(s->par, n, cg_update_half, &g);
      precondition(s, n, multigrid, r, t);
      core_par_rows(s->par, n, cg_filter_dot_half, &g);
      const double old = delta;
      delta = g.part[0] + g.part[1];
      g.beta = delta / old;
      core_par_rows(s->par, n, cg_direction_half, &g);
      it++;
    }
  }
  while (movable && delta > stop && it < max_iter) {
    expand(s, n, c, bc, x, e);
    spmv(s, n, e, q);
    reduce(s, n, q, x, bc, e, bq); /* e: the cloth rows of K c */
    body_filter(s, bq);
    const double cq = dot(n, c, e) + body_dot(s, bc, bq);
    if (cq == 0 && delta < 1e-200) break; /* converged to underflow */
    if (!(cq > 0)) {
      /* c^T K c <= 0 for a non-zero direction: K is not positive definite (or not finite), which
       * the assembly rules out for finite input; the solve stops with what it has and says so */
      s->breakdown = 1;
      break;
    }
    const double alpha = delta / cq;
    for (int i = 0; i < n; i++) {
      y[i] = v3_madd(y[i], c[i], alpha);
      r[i] = v3_madd(r[i], e[i], -alpha);
    }
    for (int k = 0; k < s->ncbody; k++)
      for (int j = 0; j < 2; j++) {
        bx[k][j] = v3_madd(bx[k][j], bc[k][j], alpha);
        br[k][j] = v3_madd(br[k][j], bq[k][j], -alpha);
      }
    precondition(s, n, multigrid, r, t);
    filter(s, n, t);
    for (int k = 0; k < s->ncbody; k++)
      for (int j = 0; j < 2; j++) bt[k][j] = m3_mulv(&s->bpinv[k][j], br[k][j]);
    body_filter(s, bt);
    const double old = delta;
    delta = dot(n, r, t) + body_dot(s, br, bt);
    const double beta = delta / old;
    for (int i = 0; i < n; i++) c[i] = v3_madd(t[i], c[i], beta);
    for (int k = 0; k < s->ncbody; k++)
      for (int j = 0; j < 2; j++) bc[k][j] = v3_madd(bt[k][j], bc[k][j], beta);
    filter(s, n, c);
    body_filter(s, bc);
    it++;
  }
  *res = ref > 0 ? sqrt(fmax(delta, 0) / ref) : 0;
  expand(s, n, y, bx, x, s->dv);
  for (int i = 0; i < n; i++) s->dv[i] = v3_add(s->dv[i], s->z[i]);
  if (overflow) v3_poison_largest(s->dv, s->rhs, b->p.inv_m, n);
  for (int k = 0; k < s->ncbody; k++) {
    s->cbody[k].du = bx[k][0];
    s->cbody[k].dw = bx[k][1];
  }
  return it;
}

/* Contacts in the solve (BW98 5.3, with friction as they do it): a touching contact vertex with
 * friction starts sticking (all three directions constrained: to the obstacle's velocity con_v,
 * or moving with a movable body), other contacts sliding (the normal only). After each solve the
 * impulse the obstacle gives the vertex is what the constraint removed from its equation,
 * e = N_i (A dv - rhs)_i; then
 *   - a contact whose normal impulse pulls (e.n < 0) is released (the cloth lifts off, or never
 *     reaches the body);
 *   - a sticking contact whose tangential impulse exceeds mu e.n (outside the friction cone)
 *     slides: only its normal stays constrained;
 * and while anything changed the system is solved again from the last answer (contacts only go
 * from sticking to sliding to free, so the passes end). Sliding contacts then get Coulomb's kinetic
 * friction: their velocity relative to the obstacle loses its tangential part, at most
 * mu e.n / m_i. On return con_j holds the impulse each contact gave its vertex (the body takes
 * the opposite). */
/* Whether vertex i's contact is with a triangle of its own cloth (contact_cloth.c,
 * particle_constraints). */
static inline int own_contact(const cloth_solver *s, const cloth_body *b, int i) {
  return s->cbody_r[s->con_b[i]] == (const void *)&b->p;
}

static int contact_passes(cloth_solver *s, const cloth_body *b, int n, int multigrid, double *res) {
  const vec3 *v = b->p.v;
  int it = 0;
  for (int pass = 0;; pass++) {
    spmv(s, n, s->dv, s->q);
    if (pass == CONTACT_PASSES) break;
    int again = 0;
    for (int i = 0; i < n; i++) {
      if (!s->con[i]) continue;
      if (is_pair(s->con[i])) {
        /* a pair: the impulse it needs now; released when it pulls, else the multiplier takes
         * it while it changes by more than REACT_TOL. With friction, a sticking pair whose
         * tangential impulse leaves mu times the normal one's cone slides, with Coulomb's
         * kinetic friction against its relative sliding in the system, and sticks again (in the
         * first half of the passes) when that friction would drive the sliding instead of
         * opposing it; what it still overshoots after the last pass is taken back after the
         * solve (pair_friction) */
        const double mu = pair_impulse(s, i, s->dv);
        if (mu < 0) {
          if (s->con[i] == 5 && s->kfric[i].x == 0 && s->kfric[i].y == 0 && s->kfric[i].z == 0)
            pair_apply(s, i, -(s->pair_k[i] * s->pair_g[i] + s->con_lam[i]), s->rhs);
          else pair_apply_v(s, i, v3_neg(pair_impulse_v(s, i, NULL)), s->rhs);
          pair_diag(s, i, -1);
          s->con[i] = 0;
          s->ncon--;
          s->npair--;
          s->released++;
          s->con_lam[i] = 0;
          s->pair_lt[i] = s->kfric[i] = v3(0, 0, 0);
          again = 1;
          continue;
        }
        const double cap = s->con_mu[i] * mu;
        if (s->con[i] == 6) {
          const vec3 pt = pair_impulse_t(s, i, s->dv);
          const double lt = v3_len(pt);
          if (lt > cap) { /* outside the cone: slides */
            pair_apply_v(s, i, v3_neg(v3_madd(s->pair_lt[i], s->pair_gt[i], s->pair_kt[i])), s->rhs);
            pair_diag_part(s, i, 0, -s->pair_kt[i]);
            s->con[i] = 5;
            s->pair_lt[i] = v3(0, 0, 0);
            s->kfric[i] = v3_scale(pt, cap / lt);
            pair_apply_v(s, i, s->kfric[i], s->rhs);
            again = 1;
          } else if (v3_dist(pt, s->pair_lt[i]) > REACT_TOL * d_max(lt, v3_len(s->pair_lt[i])) &&
                     v3_dist(pt, s->pair_lt[i]) > 1e-12) {
            pair_apply_v(s, i, v3_sub(pt, s->pair_lt[i]), s->rhs);
            s->pair_lt[i] = pt;
            again = 1;
          }
        } else if (s->pair_kt[i] > 0) {
          /* sliding (also one that started so, not yet touching, once it pushes): the friction
           * that would stop the relative sliding now, projected onto the cone (sticks again, in
           * the first half of the passes, when it lies inside) */
          const vec3 vr = v3_add(pair_rel_t(s, i, v), pair_rel_t(s, i, s->dv));
          const vec3 fs = v3_madd(s->kfric[i], vr, -s->pair_kt[i] / PAIR_STIFF);
          const double ls = v3_len(fs);
          if (ls <= cap && pass < CONTACT_PASSES / 2) {
            pair_apply_v(s, i, v3_neg(s->kfric[i]), s->rhs);
            s->kfric[i] = v3(0, 0, 0);
            s->con[i] = 6;
            pair_diag_part(s, i, 0, s->pair_kt[i]);
            pair_apply_v(s, i, v3_scale(s->pair_gt[i], s->pair_kt[i]), s->rhs);
            again = 1;
          } else {
            const vec3 f = ls > cap ? v3_scale(fs, cap / ls) : fs;
            if (v3_dist(f, s->kfric[i]) > 1e-3 * cap) {
              pair_apply_v(s, i, v3_sub(f, s->kfric[i]), s->rhs);
              s->kfric[i] = f;
              again = 1;
            }
          }
        }
        if (fabs(mu - s->con_lam[i]) > REACT_TOL * d_max(mu, s->con_lam[i]) && fabs(mu - s->con_lam[i]) > 1e-12) {
          pair_apply(s, i, mu - s->con_lam[i], s->rhs);
          s->con_lam[i] = mu;
          again = 1;
        }
        continue;
      }
      const vec3 nn = s->con_n[i];
      const vec3 e = v3_sub(s->q[i], s->rhs[i]);
      const double en = v3_dot(e, nn);
      if (en < 0) { /* pulls: released */
        s->con[i] = 0;
        s->z[i] = v3(0, 0, 0);
        s->ncon--;
        s->released++;
        again = 1;
      } else if (s->con[i] == 2 && v3_len2(v3_madd(e, nn, -en)) > s->con_mu[i] * s->con_mu[i] * en * en) {
        s->con[i] = 1; /* outside the cone: slides */
        s->z[i] = v3_scale(nn, v3_dot(nn, v3_sub(s->con_v[i], v[i])));
        again = 1;
      } else if (s->con[i] == 3 && v3_len(v3_madd(e, nn, -en)) > s->con_mu[i] * s->con_load[i]) {
        /* pressed, and the upper body's grip is exceeded: slides under it, with the kinetic
         * friction mu N along the grip it needed, in the system (cloth and body) */
        const vec3 et = v3_madd(e, nn, -en);
        const vec3 f = v3_scale(et, s->con_mu[i] * s->con_load[i] / v3_len(et));
        s->con[i] = 4;
        s->kfric[i] = f;
        s->rhs[i] = v3_add(s->rhs[i], f);
        s->z[i] = v3_scale(nn, v3_dot(nn, v3_sub(s->con_v[i], v[i])));
        again = 1;
      } else if (s->con[i] == 4 && s->cbody[s->con_b[i]].movable) {
        /* the friction must oppose the sliding the solve gave; when it does not (the cloth now
         * moves with the body) the vertex sticks again, in the first half of the passes */
        const vec3 vr = v3_sub(v3_add(v[i], s->dv[i]), obstacle_velocity(s, b->p.x, i));
        const vec3 st = v3_madd(vr, nn, -v3_dot(vr, nn));
        const double ls = v3_len(st), cap = s->con_mu[i] * s->con_load[i];
        if (v3_dot(st, s->kfric[i]) > 0 && pass < CONTACT_PASSES / 2) {
          s->rhs[i] = v3_sub(s->rhs[i], s->kfric[i]);
          s->kfric[i] = v3(0, 0, 0);
          s->con[i] = 3;
          s->z[i] = v3_sub(s->con_v[i], v[i]);
          again = 1;
        } else if (ls > 1e-9) {
          const vec3 f = v3_scale(st, -cap / ls);
          if (v3_dist(f, s->kfric[i]) > 1e-3 * cap) {
            s->rhs[i] = v3_add(s->rhs[i], v3_sub(f, s->kfric[i]));
            s->kfric[i] = f;
            again = 1;
          }
        }
      }
    }
    for (int k = 0; k < s->nheld; k++) {
      /* a held pair: released when it pulls, else its multiplier takes the impulse it needs while
       * that changes by more than REACT_TOL; sticking, it slides once its tangential impulse
       * leaves mu times the normal one's cone, with Coulomb's kinetic friction along it (as a
       * cloth's own pairs, without their sticking again) */
      cloth_held_pair *q = &s->held[k];
      if (!q->on) continue;
      const double mu = held_impulse(q, s->dv);
      if (mu < 0) {
        held_apply(q, v3_neg(held_impulse_v(q, NULL)), s->rhs);
        held_diag(s, q, -q->k, -q->kt);
        q->on = 0;
        q->lam = q->kt = 0;
        q->lt = q->kf = v3(0, 0, 0);
        s->released++;
        again = 1;
        continue;
      }
      const double cap = q->mu * mu;
      if (q->kt > 0) {
        const vec3 pt = held_impulse_t(q, s->dv);
        const double lt = v3_len(pt);
        if (lt > cap) {
          held_apply(q, v3_neg(v3_madd(q->lt, q->gt, q->kt)), s->rhs);
          held_diag(s, q, 0, -q->kt);
          q->kt = 0;
          q->lt = v3(0, 0, 0);
          q->kf = v3_scale(pt, cap / lt);
          held_apply(q, q->kf, s->rhs);
          again = 1;
        } else if (v3_dist(pt, q->lt) > REACT_TOL * d_max(lt, v3_len(q->lt)) && v3_dist(pt, q->lt) > 1e-12) {
          held_apply(q, v3_sub(pt, q->lt), s->rhs);
          q->lt = pt;
          again = 1;
        }
      } else if (v3_len2(q->kf) > 0) {
        const vec3 f = v3_scale(q->kf, cap / v3_len(q->kf));
        if (v3_dist(f, q->kf) > 1e-3 * cap) {
          held_apply(q, v3_sub(f, q->kf), s->rhs);
          q->kf = f;
          again = 1;
        }
      }
      if (fabs(mu - q->lam) > REACT_TOL * d_max(mu, q->lam) && fabs(mu - q->lam) > 1e-12) {
        held_apply(q, v3_scale(q->n, mu - q->lam), s->rhs);
        q->lam = mu;
        again = 1;
      }
    }
    if (!again) break;
    s->coupling_passes++;
    double r2 = 0;
    it += modified_pcg(s, b, n, multigrid, b->params.cg_tolerance, b->params.cg_iterations, 1, NULL, &r2);
    *res = r2;
  }
  for (int i = 0; i < n; i++) {
    if (!s->con[i]) continue;
    const vec3 nn = s->con_n[i];
    if (is_pair(s->con[i])) { /* the impulse the pair's vertex took (its triangle the opposite) */
      const double pn = pair_impulse(s, i, s->dv);
      vec3 jt = s->con[i] == 6 ? pair_impulse_t(s, i, s->dv) : s->kfric[i];
      s->fric[i] = v3(0, 0, 0);
      if (s->con[i] == 5 && (s->kfric[i].x != 0 || s->kfric[i].y != 0 || s->kfric[i].z != 0)) {
        /* the kinetic friction overshot (the pair now slides the other way): as much of it back
         * as stops the relative sliding, for pair_friction (the pair's effective mass is pair_kt /
         * PAIR_STIFF) */
        const vec3 vr = v3_add(pair_rel_t(s, i, v), pair_rel_t(s, i, s->dv));
        if (v3_dot(vr, s->kfric[i]) > 0) {
          vec3 back = v3_scale(vr, -s->pair_kt[i] / PAIR_STIFF);
          const double lb = v3_len(back), lk = v3_len(s->kfric[i]);
          if (lb > lk) back = v3_scale(back, lk / lb);
          s->fric[i] = back;
          jt = v3_add(jt, back);
        }
      }
      s->con_j[i] = v3_madd(jt, nn, pn);
      continue;
    }
    const vec3 e = constrained_part(s, i, v3_sub(s->q[i], s->rhs[i]));
    if (s->con[i] == 2 || s->con[i] == 3) {
      s->con_j[i] = e; /* (pressed: the tangential part, the upper body's) */
      continue;
    }
    if (s->con[i] == 4) {
      s->con_j[i] = s->kfric[i]; /* the friction, in the solve; the normal is the lower body's */
      s->fric[i] = v3(0, 0, 0);
      continue;
    }
    const double lam = d_max(0, v3_dot(e, nn));
    const vec3 vrel = v3_sub(v3_add(v[i], s->dv[i]), obstacle_velocity(s, b->p.x, i));
    const vec3 vt = v3_madd(vrel, nn, -v3_dot(vrel, nn));
    const double lt = v3_len(vt), cap = s->con_mu[i] * lam * b->p.inv_m[i];
    const vec3 dvt = lt <= cap ? v3_neg(vt) : v3_scale(vt, -cap / lt);
    s->fric[i] = dvt;
    /* against another cloth's triangle, friction that stops the sliding altogether acts before
     * the positions (static friction), when the slip it stops is no more than gravity gives in
     * the substep (fric_pre_v = |g| h): after them, each step moved the vertex by h dv_t, and a
     * patch on a cloth on a 20 degree slope crept at 1.5 mm/s. A larger slip is the cloths' own
     * motion (a fold settling, the other cloth's velocity a solve behind); stopping it on the
     * positions too made vertices of two cloths draped over a box jump at 3-4 m/s */
    s->fric_pre[i] = (uint8_t)(lt <= cap && lt <= s->fric_pre_v && s->cbody[s->con_b[i]].pts && !own_contact(s, b, i));
    if (s->cbody[s->con_b[i]].pts) {
      /* another cloth's triangle: the impulse as the vertex took it (also a last pass's pull),
       * whose opposite that cloth takes (contact_constraints_react) */
      s->con_j[i] = v3_madd(v3_scale(dvt, b->p.m[i]), nn, v3_dot(e, nn));
      continue;
    }
    s->con_j[i] = v3_madd(v3_scale(dvt, b->p.m[i]), nn, lam);
  }
  return it;
}

/* ---- one substep ------------------------------------------------------------------------------- */

/* The forces of a step at (x, v) into f: internal (springs here; Baraff-Witkin elements come with
 * their Jacobians in assemble, so they start at zero), the external field, gravity, air drag and
 * the mouse spring. */
static void forces_at(cloth_body *b, const cloth_implicit_ctx *c, const vec3 *x, const vec3 *v, vec3 *f) {
  const int n = b->p.n;
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN) memset(f, 0, sizeof(vec3) * (size_t)n);
  else cloth_internal_forces(b, x, v, f);
  const double drag = b->params.drag;
  for (int i = 0; i < n; i++) {
    const double m = b->p.m[i];
    vec3 fi = v3_add(f[i], v3_add(b->p.f[i], v3_scale(c->g, m)));
    if (drag > 0) fi = v3_madd(fi, v3_sub(v[i], c->wind), -drag * m);
    f[i] = fi;
  }
  if (c->grab_vertex >= 0) {
    const int i = c->grab_vertex;
    f[i] = v3_add(f[i], v3_madd(v3_scale(v3_sub(c->grab_target, x[i]), c->grab_k), v[i], -c->grab_c));
  }
}

/* cloth_model_excess over the elements [lo, hi) (triangles, or springs); *e gets their E(x1). */
static double model_excess_range(const cloth_body *b, const vec3 *x0, const vec3 *x1, int lo, int hi, double *e) {
  double excess = 0, en = 0;
  if (b->params.model == LOOM_MODEL_BARAFF_WITKIN) {
    const double ks = b->params.stretch, ksh = b->params.shear;
    for (int t = lo; t < hi; t++) {
      const bw_tri *q = &b->model.bw[t];
      vec3 wu = v3(0, 0, 0), wv = v3(0, 0, 0), du = v3(0, 0, 0), dv = v3(0, 0, 0);
      for (int k = 0; k < 3; k++) {
        const vec3 d = v3_sub(x1[q->v[k]], x0[q->v[k]]);
        wu = v3_madd(wu, x0[q->v[k]], q->du[k]);
        wv = v3_madd(wv, x0[q->v[k]], q->dv[k]);
        du = v3_madd(du, d, q->du[k]);
        dv = v3_madd(dv, d, q->dv[k]);
      }
      /* stretch of each direction, E = (|w| - 1)^2 / 2, against its model about w0 with the
       * Hessian's tension term only while stretched (g); shear C = w_u . w_v, E = C^2 / 2,
       * against Gauss-Newton's */
      double et = 0, qt = 0;
      const vec3 w0[2] = {wu, wv}, dw[2] = {du, dv};
      for (int j = 0; j < 2; j++) {
        const double l0 = v3_len(w0[j]), l1 = v3_len(v3_add(w0[j], dw[j]));
        if (!(l0 > 1e-12)) continue;
        const double a = v3_dot(w0[j], dw[j]) / l0, d2 = v3_len2(dw[j]), g = d_max(1.0 - 1.0 / l0, 0);
        et += 0.5 * (l1 - 1) * (l1 - 1);
        qt += 0.5 * (l0 - 1) * (l0 - 1) + (l0 - 1) * a + 0.5 * (a * a + g * (d2 - a * a));
      }
      const double c0 = v3_dot(wu, wv), c1 = v3_dot(v3_add(wu, du), v3_add(wv, dv));
      const double dc = v3_dot(wv, du) + v3_dot(wu, dv);
      const double es = 0.5 * c1 * c1, qs = 0.5 * c0 * c0 + c0 * dc + 0.5 * dc * dc;
      en += q->wa * (ks * et + ksh * es);
      excess += q->wa * (ks * (et - qt) + ksh * (es - qs));
    }
  } else {
    for (int k = lo; k < hi; k++) {
      const spring *sp = &b->model.springs[k];
      const double kk = k >= b->model.fam_start[FAM_BEND]    ? b->params.bend
                        : k >= b->model.fam_start[FAM_SHEAR] ? b->params.shear
                                                             : b->params.stretch;
      const vec3 d0 = v3_sub(x0[sp->j], x0[sp->i]), dd = v3_sub(v3_sub(x1[sp->j], x1[sp->i]), d0);
      const double l0 = v3_len(d0), l1 = v3_len(v3_add(d0, dd)), L = sp->rest;
      if (!(l0 > 1e-12) || kk == 0) continue;
      const double a = v3_dot(d0, dd) / l0, d2 = v3_len2(dd), g = d_max(1.0 - L / l0, 0);
      const double et = 0.5 * (l1 - L) * (l1 - L);
      const double qt = 0.5 * (l0 - L) * (l0 - L) + (l0 - L) * a + 0.5 * (a * a + g * (d2 - a * a));
      en += kk * et;
      excess += kk * (et - qt);
    }
  }
  *e = en;
  return excess;
}

static int excess_elements(const cloth_body *b) {
  return b->params.model == LOOM_MODEL_BARAFF_WITKIN ? b->model.nbw : b->model.fam_start[FAM_COUNT];
}

double cloth_model_excess(const cloth_body *b, const vec3 *x0, const vec3 *x1, double *e1) {
  return model_excess_range(b, x0, x1, 0, excess_elements(b), e1);
}

/* The Newton iterations' test in two halves (side by side on the world's helper thread): the
 * end positions xb of the last answer and the kinetic energy there (rows), then the model's
 * excess and the elastic energy (elements). Each half sums its own; the halves add in one order,
 * so the result is the same on one thread or two. */
typedef struct excess_ctx {
  const cloth_body *b;
  const vec3 *xa;
  vec3 *xb;
  double h, part[2], energy[2];
} excess_ctx;

static void end_rows(void *ctx, int lo, int hi, int part) {
  excess_ctx *c = ctx;
  const cloth_body *b = c->b;
  double ke = 0;
  for (int i = lo; i < hi; i++) {
    const vec3 vi = v3_add(b->p.v[i], b->solver.dv[i]);
    c->xb[i] = v3_madd(b->p.x[i], vi, c->h);
    ke += 0.5 * b->p.m[i] * v3_len2(vi);
  }
  c->part[part] = ke;
}

static void excess_rows(void *ctx, int lo, int hi, int part) {
  excess_ctx *c = ctx;
  c->part[part] = model_excess_range(c->b, c->xa, c->xb, lo, hi, &c->energy[part]);
}

/* A further Newton iteration of backward Euler from the first one's answer dv1 (in s->dv): with
 * x1 = x0 + h (v0 + dv1), v1 = v0 + dv1, the residual of M dv = h f(x0 + h (v0 + dv), v0 + dv) is
 * h f(x1, v1) - M dv1 (less the external damping blocks' h D dv1, which the first solve took
 * backward), and the correction solves (M - h df/dv - h^2 df/dx)|_(x1, v1) d = that residual with
 * the constrained directions held (d = 0 there: the first solve put them where they must be). */
static int newton_again(cloth_body *b, const cloth_implicit_ctx *c, int multigrid, double *res) {
  cloth_solver *s = &b->solver;
  const int n = b->p.n;
  const double h = c->h;
  const vec3 *x = b->p.x, *v = b->p.v;
  vec3 *x1 = s->nx, *v1 = s->nv;
  for (int i = 0; i < n; i++) {
    s->ndv[i] = s->dv[i];
    v1[i] = v3_add(v[i], s->dv[i]);
    x1[i] = v3_madd(x[i], v1[i], h);
  }
  forces_at(b, c, x1, v1, s->f0);
  assemble(b, x1, v1, h, b->params.drag, c->grab_k, c->grab_c, c->grab_vertex);
  if (s->ncon || s->nheld) pair_setup(b, s, n, 0);
  for (int i = 0; i < n; i++) {
    vec3 r = v3_sub(v3_scale(s->f0[i], h), v3_scale(s->dv[i], b->p.m[i]));
    const double *d = &b->p.damp[6 * i];
    const vec3 u = s->dv[i];
    const vec3 Du = v3(d[0] * u.x + d[3] * u.y + d[4] * u.z, d[3] * u.x + d[1] * u.y + d[5] * u.z,
                       d[4] * u.x + d[5] * u.y + d[2] * u.z);
    s->rhs[i] = v3_madd(r, Du, -h);
    if (s->ncon || s->pushed) s->rhs[i] = v3_add(s->rhs[i], s->react[i]); /* (external, as gravity) */
    s->z[i] = v3(0, 0, 0);
  }
  if (s->ncon || s->nheld) pair_rhs(s, n, s->ndv);
  s->newton_ref = s->delta_first;
  int it = modified_pcg(s, b, n, multigrid, b->params.cg_tolerance, b->params.cg_iterations, 0, NULL, res);
  s->newton_ref = 0;
  for (int i = 0; i < n; i++) s->dv[i] = v3_add(s->ndv[i], s->dv[i]); /* (held directions: d = 0 exactly) */
  return it;
}

/* Newton iterations after Baraff-Witkin's first (newton_iterations, newton_tolerance): while the
 * last linear model missed the stretch and shear energy at its answer by more than the tolerance
 * times the kinetic plus elastic energy there, solve again linearised there. With a large step
 * and a turning cloth, one linearised step stretches every turning edge by about half its angle
 * squared, and a stiff cloth stores it: a 64 x 64 sheet with stretch 20 000 N/m at dt = 1/30 s
 * gained 2.5 times its energy in 0.17 s with one iteration, none with more. Where the model
 * misses at the full answer, the answer is first drawn halfway back towards the iteration's start
 * (the constrained directions stay: they do not differ), up to four times, until the model holds
 * there, and the next iteration starts from that point: springs at rest have no stiffness across
 * their length in the model, and their first answer can stretch them several times over, too far
 * for the next linearisation (the same sheet with springs: 940 times its energy in one step
 * without this, 1.06 times with it; tests/lua/implicit_test.lua). Not with a movable body in the
 * solve (its coupling is solved with the first iteration's constraints and impulses); contacts
 * keep the first iteration's constraints. Returns the CG iterations; s->last_newton the
 * iterations added. */
static int newton_iterations(cloth_body *b, const cloth_implicit_ctx *c, int multigrid, double *res) {
  cloth_solver *s = &b->solver;
  const int n = b->p.n;
  s->last_newton = 0;
  if (b->params.newton_iterations < 2) return 0;
  for (int k = 0; k < s->ncbody; k++)
    if (s->cbody[k].movable) return 0;
  excess_ctx e = {.b = b, .xa = b->p.x, .xb = s->e1 /* (free between solves) */, .h = c->h};
  int it = 0;
  const vec3 *base = s->z; /* the iteration's start: the constrained values, then the last answer */
  for (int k = 1; k < b->params.newton_iterations; k++) {
    double alpha = 1;
    int good;
    for (;;) {
      core_par_rows(s->par, n, end_rows, &e);
      const double ke = e.part[0] + e.part[1];
      core_par_rows(s->par, excess_elements(b), excess_rows, &e);
      const double missed = e.part[0] + e.part[1], e1 = e.energy[0] + e.energy[1];
      good = !(missed > b->params.newton_tolerance * (ke + e1));
      if (good || alpha <= 1.0 / 16) break;
      alpha *= 0.5;
      for (int i = 0; i < n; i++) s->dv[i] = v3_add(base[i], v3_scale(v3_sub(s->dv[i], base[i]), 0.5));
    }
    if (good && alpha == 1) break;
    it += newton_again(b, c, multigrid, res);
    s->last_newton++;
    base = s->ndv;
    e.xa = s->nx; /* the point newton_again linearised at */
  }
  return it;
}

/* With nothing holding the cloth in the substep (no pinned or scripted vertex, no contact in the
 * solve, no external damping block, no grab), its internal forces and their Jacobians move no
 * momentum (their rows of A sum to zero over the translations: A 1 = M' 1 with M' the mass and drag
 * diagonal), so the exact answer has sum_i m'_i dv_i = sum_i rhs_i (the first solve's), the external
 * forces' impulse `imp` (a Newton iteration's answer as well: it solves the same balance again).
 * CG stopped at its tolerance leaves part of its error along the translations, which changed the
 * momentum of a cloth in free flight (an implicit springs cloth with relative damping in zero
 * gravity: 10 % of it in 120 steps at the default tolerance). That part is taken out:
 * dv += (sum rhs - sum m' dv) / sum m', the correction along the translations that is orthogonal
 * in A, so it only lowers the solve's error in the energy norm. */
static void balance_momentum(cloth_body *b, const cloth_implicit_ctx *c, vec3 imp) {
  const cloth_solver *s = &b->solver;
  const int n = b->p.n;
  if (s->ncon || s->nheld || c->grab_vertex >= 0) return;
  for (int i = 0; i < n; i++)
    if (s->fixed[i]) return;
  for (int i = 0; i < 6 * n; i++)
    if (b->p.damp[i] != 0) return;
  const double drag = 1.0 + c->h * b->params.drag;
  vec3 mom = v3(0, 0, 0);
  double mass = 0;
  for (int i = 0; i < n; i++) {
    const double m = b->p.m[i] * drag;
    mom = v3_madd(mom, s->dv[i], m);
    mass += m;
  }
  if (!(mass > 0)) return;
  const vec3 d = v3_scale(v3_sub(imp, mom), 1.0 / mass);
  if (!v3_isfinite(d)) return;
  for (int i = 0; i < n; i++) s->dv[i] = v3_add(s->dv[i], d);
}

/* Whether vertex i's friction after the solve (fric) goes before the positions (fric_pre, set by
 * contact_passes) or after them. */
static inline int friction_first(const cloth_solver *s, int i) {
  return s->ncon && s->con[i] == 1 && s->fric_pre[i];
}

/* What the kinetic friction of the sliding pairs overshot, taken back after the positions (as the
 * friction of sliding contacts at obstacles acts; contact_passes left the impulse on the vertex
 * in fric): the vertex takes it, its triangle's vertices the opposite by the weights (sign -1
 * undoes it) */
static void pair_friction(cloth_body *b, double sign) {
  cloth_solver *s = &b->solver;
  if (!s->npair) return;
  const double *im = b->p.inv_m;
  vec3 *v = b->p.v;
  for (int i = 0; i < b->p.n; i++) {
    if (s->con[i] != 5 || (s->fric[i].x == 0 && s->fric[i].y == 0 && s->fric[i].z == 0)) continue;
    const vec3 J = v3_scale(s->fric[i], sign);
    v[i] = v3_madd(v[i], J, im[i]);
    for (int q = 0; q < 3; q++) {
      const int t = s->con_tri[3 * i + q];
      v[t] = v3_madd(v[t], J, -s->con_w[3 * i + q] * im[t]);
    }
  }
}

void cloth_implicit_substep(cloth_body *b, const cloth_implicit_ctx *c) {
  cloth_solver *s = &b->solver;
  /* two halves side by side only when they are worth a hand-over (a few tens of microseconds of
   * work each); the results are the same either way */
  const int n = b->p.n;
  s->par = n >= CLOTH_PAR_VERTICES ? c->par : NULL;
  s->mg.par = s->par;
  const double h = c->h;
  s->fric_pre_v = v3_len(c->g) * h;
  vec3 *x = b->p.x, *v = b->p.v;
  /* f0: internal + drag + grab + external + gravity, at x0, v0 */
  forces_at(b, c, x, v, s->f0);
  const double drag = b->params.drag;
  /* constraints: pinned vertices take the velocity of their pin over this step; a vertex in
   * contact takes the obstacle's velocity along the contact normal (s->con, set by the caller) */
  s->npair = 0;
  for (int i = 0; i < n; i++) {
    s->fixed[i] = b->p.inv_m[i] == 0;
    s->z[i] = s->fixed[i] ? v3_sub(c->pin_v[i], v[i]) : v3(0, 0, 0);
    if (s->ncon && s->con[i]) {
      s->kfric[i] = v3(0, 0, 0);
      if (s->fixed[i]) {
        s->con[i] = 0;
        s->ncon--;
      } else if (s->con[i] == 1 && own_contact(s, b, i)) {
        /* on its own cloth's triangle: a pair in the solve, whose relative normal velocity at
         * the end may close the gap beyond the thickness and no more; touching, with friction,
         * it starts sticking: no relative tangential velocity at the end */
        s->con[i] = s->con_mu[i] > 0 && !s->con_feat[i] ? 6 : 5;
        s->npair++;
        s->pair_g[i] = -s->con_gap[i] - pair_rel(s, i, v);
        s->pair_gt[i] = v3_neg(pair_rel_t(s, i, v));
        s->con_lam[i] = 0;
        s->pair_lt[i] = v3(0, 0, 0);
      } else if (s->con[i] == 3 && s->con_mu[i] > 0) {
        s->z[i] = v3_sub(s->con_v[i], v[i]); /* pressed: normal to the lower body, tangent with the upper */
      } else if (s->con[i] == 3) {
        s->con[i] = 4;
        s->z[i] = v3_scale(s->con_n[i], v3_dot(s->con_n[i], v3_sub(s->con_v[i], v[i])));
      } else if (s->con_mu[i] > 0 && s->con_gap[i] == 0 && !s->con_feat[i]) {
        /* a touching contact with friction starts sticking: all directions move with the
         * obstacle (a speculative one, not touching yet, slides: no friction before it pushes) */
        s->con[i] = 2;
        s->z[i] = v3_sub(s->con_v[i], v[i]);
      } else {
        s->con[i] = 1;
        s->z[i] = v3_scale(s->con_n[i], v3_dot(s->con_n[i], v3_sub(s->con_v[i], v[i])));
      }
    }
  }
  /* held pairs (contact_cloth.c): their targets, from the velocities now */
  for (int k = 0; k < s->nheld; k++) {
    cloth_held_pair *q = &s->held[k];
    const vec3 rel = held_rel_v(q, v);
    const double rn = v3_dot(q->n, rel);
    q->on = 1;
    q->lam = 0;
    q->lt = q->kf = v3(0, 0, 0);
    q->g = -q->gap - rn;
    q->gt = v3_neg(v3_madd(rel, q->n, -rn));
  }
  /* (the contacts as the solve starts with them: a second solve takes back those the passes
   * released, cloth_implicit_again) */
  s->ncon0 = s->ncon;
  if (s->ncon) memcpy(s->con0, s->con, (size_t)n);
  assemble(b, x, v, h, drag, c->grab_k, c->grab_c, c->grab_vertex);
  /* rhs = h (f0 + h df/dx v0); assemble left df/dx v0 in s->q */
  vec3 impulse = v3(0, 0, 0); /* the external forces' impulse, as the first solve's rhs sums it */
  for (int i = 0; i < n; i++) {
    s->rhs[i] = v3_scale(v3_madd(s->f0[i], s->q[i], h), h);
    impulse = v3_add(impulse, s->rhs[i]);
  }
  if (s->ncon || s->nheld) {
    pair_setup(b, s, n, 1);
    pair_rhs(s, n, NULL);
  }
  double res = 0;
  const int multigrid = b->params.preconditioner == CLOTH_PRECOND_MULTIGRID;
  if (!s->ncon) s->ncbody = 0;
  s->pushed = b->p.pc_pushed;
  if (s->ncon || s->pushed) {
    memset(s->react, 0, sizeof(vec3) * (size_t)n);
  }
  if (s->pushed) {
    /* the impulses other cloths' contacts gave the vertices before this solve (contact_cloth.c):
     * external, as gravity, for the Newton iterations too */
    for (int i = 0; i < n; i++) {
      s->rhs[i] = v3_add(s->rhs[i], b->p.pc_push[i]);
      s->react[i] = v3_add(s->react[i], b->p.pc_push[i]);
      impulse = v3_add(impulse, b->p.pc_push[i]);
    }
    memset(b->p.pc_push, 0, sizeof(vec3) * (size_t)n);
    b->p.pc_pushed = 0;
  }
  /* the first guess: the last substep's velocity change, h a_prev (state, so a restored
   * checkpoint continues bit-identically); the stopping test is relative to the right-hand side,
   * so a good guess saves iterations without loosening the solve */
  vec3 *guess = NULL;
  if (b->p.history_ok) {
    guess = s->dv;
    for (int i = 0; i < n; i++) guess[i] = s->ncon && s->con[i] && !is_pair(s->con[i]) ? s->z[i] : v3_scale(b->state.a_prev[i], h);
  }
  int it = modified_pcg(s, b, n, multigrid, b->params.cg_tolerance, b->params.cg_iterations, 0, guess, &res);
  s->released = 0;
  s->coupling_passes = 0;
  if (s->ncon || s->nheld) it += contact_passes(s, b, n, multigrid, &res);
  it += newton_iterations(b, c, multigrid, &res);
  balance_momentum(b, c, impulse);
  s->last_iterations = it;
  s->last_residual = res;
  for (int i = 0; i < n; i++) {
    v[i] = v3_add(v[i], s->dv[i]);
    if (friction_first(s, i)) v[i] = v3_add(v[i], s->fric[i]);
    x[i] = v3_madd(x[i], v[i], h);
    b->state.a_prev[i] = v3_scale(s->dv[i], 1.0 / h);
  }
  b->p.history_ok = 1;
  /* friction of sliding contacts changes the velocity only, after the positions: the
   * configuration stays the one the solve found, so friction can only take energy away (but for
   * the static friction against another cloth's triangle, fric_pre, which went before them) */
  if (s->ncon) {
    for (int i = 0; i < n; i++)
      if (s->con[i] == 1 && !friction_first(s, i)) v[i] = v3_add(v[i], s->fric[i]);
    pair_friction(b, 1);
  }
}

/* A second solve of the substep's system for the impulses J that another cloth's contacts gave
 * this cloth's vertices after its solve (contact_cloth.c): the right-hand side takes them, and the
 * CG continues from the last answer. The vertex's contacts with other cloths' triangles keep the
 * impulses they gave (those cloths took the opposite already): in this solve they are external
 * impulses, not constraints; its own contacts stay pairs in the system, with their multipliers. */
int cloth_implicit_again(cloth_body *b, const vec3 *J, double h) {
  cloth_solver *s = &b->solver;
  const int n = b->p.n;
  /* (not after Newton iterations, whose system is another linearisation's; nor with a strain
   * limit, which moved the vertices after the solve, or a movable body in the solve, which took
   * its impulses already: then the caller's velocity change) */
  if (b->params.integrator != LOOM_INTEGRATOR_IMPLICIT || !s->dv || !b->p.x_sub || b->params.strain_limit > 0 ||
      s->last_newton > 0)
    return 0;
  for (int k = 0; k < s->ncbody; k++)
    if (s->cbody[k].movable) return 0;
  vec3 *v = b->p.v, *x = b->p.x;
  const vec3 *xs = b->p.x_sub;
  const int had = s->ncon0 > 0; /* the substep's solve started with contacts (con and react are its) */
  if (had) pair_friction(b, -1);
  for (int i = 0; i < n; i++) {
    if (s->fixed[i]) continue;
    if (had && s->con[i] == 1) v[i] = v3_sub(v[i], s->fric[i]);
    v[i] = v3_sub(v[i], s->dv[i]); /* the substep's start */
    s->rhs[i] = v3_add(s->rhs[i], J[i]);
    if (had) {
      s->react[i] = v3_add(s->react[i], J[i]);
      if (s->con[i] && s->cbody[s->con_b[i]].pts && !own_contact(s, b, i)) {
        s->rhs[i] = v3_add(s->rhs[i], s->con_j[i]);
        s->con[i] = 0;
        s->z[i] = v3(0, 0, 0);
        s->ncon--;
      }
      /* a contact the first passes released as pulling, or let slide, is back as it started:
       * the push may press the vertex into that body now, or within its friction cone (left
       * free or sliding, the vertices of a cloth on a slope that another cloth on it pushed
       * crept down it; the passes release it again if it still pulls or slips) */
      const int kind = s->con0[i];
      if ((kind == 1 || kind == 2) && s->con[i] < kind &&
          !(s->cbody[s->con_b[i]].pts && s->cbody_r[s->con_b[i]] != (const void *)&b->p)) {
        const vec3 nn = s->con_n[i];
        if (!s->con[i]) s->ncon++;
        s->con[i] = (uint8_t)kind;
        s->z[i] = kind == 2 ? v3_sub(s->con_v[i], v[i]) : v3_scale(nn, v3_dot(nn, v3_sub(s->con_v[i], v[i])));
      }
    }
  }
  const int multigrid = b->params.preconditioner == CLOTH_PRECOND_MULTIGRID;
  double res = 0;
  int it = modified_pcg(s, b, n, multigrid, b->params.cg_tolerance, b->params.cg_iterations, 1, NULL, &res);
  if (s->ncon || s->nheld) it += contact_passes(s, b, n, multigrid, &res);
  b->scratch.cg_iterations += it;
  if (res > b->scratch.cg_residual) b->scratch.cg_residual = res;
  for (int i = 0; i < n; i++) {
    if (s->fixed[i]) continue;
    v[i] = v3_add(v[i], s->dv[i]);
    const int pre = friction_first(s, i);
    if (pre) v[i] = v3_add(v[i], s->fric[i]);
    x[i] = v3_madd(xs[i], v[i], h);
    b->state.a_prev[i] = v3_scale(s->dv[i], 1.0 / h);
    if (s->ncon && s->con[i] == 1 && !pre) v[i] = v3_add(v[i], s->fric[i]);
  }
  if (s->ncon) pair_friction(b, 1);
  return 1;
}
