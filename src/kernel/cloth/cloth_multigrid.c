/* cloth_multigrid.c — smoothed-aggregation algebraic multigrid with 3x3 blocks, the preconditioner
 * of the implicit integrator's filtered CG (cloth_implicit.c).
 *
 * Why: stiff stretch makes M - h df/dv - h^2 df/dx badly conditioned (h^2 k / m reaches 1e5 on a
 * 64 x 64 cloth), and block-Jacobi CG needs a number of iterations that grows with the resolution.
 * A multigrid V-cycle removes the smooth error components on coarse levels, so the count stays
 * nearly flat.
 *
 * What (Vanek, Mandel & Brezina 1996; for cloth, Tamstorf, Jones & McCormick 2015):
 *   - level 0 is the solver's matrix filtered like the CG (rows and columns of constrained vertices
 *     decoupled, their diagonal kept) and restricted to the couplings of the stretch and shear
 *     elements; a bending coupling (hinge wings, bend springs) is lumped on the two diagonal blocks
 *     as |B|_F I, which keeps the matrix symmetric positive definite and above the true one;
 *   - aggregates are built once, greedily in vertex order, from the mesh graph (coarse levels: the
 *     graph of adjacent aggregates); the tentative prolongator is the block identity on each
 *     aggregate (the three translations);
 *   - each substep: P = (I - omega D^-1 A) P_tent with omega = 4/3 / rho(D^-1 A) (a few power steps),
 *     and the coarse matrix P^T A P by two sparse products whose patterns are known from creation;
 *     the coarsest level is factored densely (Cholesky);
 *   - the V-cycle smooths with block Gauss-Seidel, forward before the coarse correction and backward
 *     after it, so the cycle is a symmetric positive definite operator, as CG needs; level 0's rows
 *     are ordered as two halves of the mesh and the band between them (order_level0), so that its
 *     sweeps, the bulk of a cycle, run on two threads;
 *   - the hierarchy's matrices (levels, P, inverse diagonals) are stored in single precision and
 *     used in double arithmetic: the operator stays exactly symmetric, and the sweeps read half
 *     the memory (a 128 x 128 cloth's level 0 does not fit a core's cache; measured 20 % faster
 *     per step there, the same at 64 x 64).
 * Every sum has a fixed order whichever thread computes it: the result is deterministic, and the
 * same with one thread or two. */
#include <stdlib.h>
#include <string.h>

#include "cloth/cloth.h"

enum {
  MG_COARSE_MAX = 48, /* a level this small is the coarsest: dense Cholesky */
  MG_POWER_STEPS = 3, /* power steps estimating rho(D^-1 A): enough for omega (measured: as good as 10) */
  PAR_ROWS = 1024,    /* levels with fewer rows than this are not worth a hand-over to the helper thread */
  PAR_SETUP_BLOCKS = 2048 /* the set-up's block products: levels with this many blocks are */
};

/* ---- symbolic helpers ------------------------------------------------------------------------------ */

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Pattern of X Y: row i holds every column of Y's rows k for k in X's row i (sorted, distinct).
 * xcol indexes Y's rows; Y's columns are < nc. marker: nc ints (left at -1). */
static int pattern_product(int nr, const int32_t *xrow, const int32_t *xcol, const int32_t *yrow,
                           const int32_t *ycol, int nc, int32_t *marker, int32_t **zrow, int32_t **zcol) {
  int32_t *row = core_alloc((size_t)nr + 1, sizeof(int32_t));
  if (!row) return -1;
  for (int c = 0; c < nc; c++) marker[c] = -1;
  int64_t nz = 0;
  for (int i = 0; i < nr; i++) {
    row[i] = (int32_t)nz;
    for (int k = xrow[i]; k < xrow[i + 1]; k++)
      for (int q = yrow[xcol[k]]; q < yrow[xcol[k] + 1]; q++)
        if (marker[ycol[q]] != i) {
          marker[ycol[q]] = i;
          nz++;
        }
  }
  row[nr] = (int32_t)nz;
  int32_t *col = core_alloc((size_t)(nz > 0 ? nz : 1), sizeof(int32_t));
  if (!col || nz > INT32_MAX) {
    core_free(row);
    core_free(col);
    return -1;
  }
  for (int c = 0; c < nc; c++) marker[c] = -1;
  for (int i = 0; i < nr; i++) {
    int32_t m = row[i];
    for (int k = xrow[i]; k < xrow[i + 1]; k++)
      for (int q = yrow[xcol[k]]; q < yrow[xcol[k] + 1]; q++)
        if (marker[ycol[q]] != i) {
          marker[ycol[q]] = i;
          col[m++] = ycol[q];
        }
    qsort(col + row[i], (size_t)(row[i + 1] - row[i]), sizeof(int32_t), cmp_i32);
  }
  for (int c = 0; c < nc; c++) marker[c] = -1;
  *zrow = row;
  *zcol = col;
  return 0;
}

/* Transpose pattern: rows of X^T (nc rows), with for each entry the row of X (tr_col) and the
 * position in X (tr_ent), in increasing X row order. */
static int pattern_transpose(int nr, int nc, const int32_t *xrow, const int32_t *xcol, int32_t **trow,
                             int32_t **tcol, int32_t **tent) {
  const int32_t nz = xrow[nr];
  int32_t *row = core_calloc((size_t)nc + 1, sizeof(int32_t));
  int32_t *col = core_alloc((size_t)(nz > 0 ? nz : 1), sizeof(int32_t));
  int32_t *ent = tent ? core_alloc((size_t)(nz > 0 ? nz : 1), sizeof(int32_t)) : NULL;
  int32_t *fill = core_alloc((size_t)(nc > 0 ? nc : 1), sizeof(int32_t));
  if (!row || !col || (tent && !ent) || !fill) {
    core_free(row);
    core_free(col);
    core_free(ent);
    core_free(fill);
    return -1;
  }
  for (int32_t k = 0; k < nz; k++) row[xcol[k] + 1]++;
  for (int c = 0; c < nc; c++) row[c + 1] += row[c];
  memcpy(fill, row, sizeof(int32_t) * (size_t)nc);
  for (int i = 0; i < nr; i++)
    for (int k = xrow[i]; k < xrow[i + 1]; k++) {
      const int32_t m = fill[xcol[k]]++;
      col[m] = i;
      if (ent) ent[m] = k;
    }
  core_free(fill);
  *trow = row;
  *tcol = col;
  if (tent) *tent = ent;
  return 0;
}

static int32_t find_col(const int32_t *row, const int32_t *col, int i, int j) {
  int lo = row[i], hi = row[i + 1] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (col[mid] == j) return mid;
    if (col[mid] < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* Greedy aggregation of a graph (CSR, the diagonal may be present). Phase 1: a vertex whose
 * neighbours are all free roots an aggregate of itself and them. Phase 2: a free vertex joins the
 * phase-1 aggregate it has most neighbours in (the lowest on ties). Phase 3: what is left roots an
 * aggregate of itself and its free neighbours. Returns the aggregate count. */
static int aggregate(int n, const int32_t *grow, const int32_t *gcol, int32_t *agg, int32_t *count) {
  int na = 0;
  for (int i = 0; i < n; i++) agg[i] = -1;
  for (int i = 0; i < n; i++) {
    if (agg[i] >= 0) continue;
    int free_all = 1;
    for (int k = grow[i]; k < grow[i + 1] && free_all; k++)
      if (agg[gcol[k]] >= 0) free_all = 0;
    if (!free_all) continue;
    agg[i] = na;
    for (int k = grow[i]; k < grow[i + 1]; k++) agg[gcol[k]] = na;
    na++;
  }
  const int na1 = na;
  for (int i = 0; i < n; i++) {
    if (agg[i] >= 0) continue;
    int best = -1, best_count = 0;
    for (int k = grow[i]; k < grow[i + 1]; k++) {
      const int a = agg[gcol[k]];
      if (a < 0 || a >= na1) continue;
      int c = 0;
      for (int q = grow[i]; q < grow[i + 1]; q++) c += agg[gcol[q]] == a;
      if (c > best_count || (c == best_count && a < best)) best = a, best_count = c;
    }
    count[i] = best; /* decided on phase-1 aggregates only: no chains */
  }
  for (int i = 0; i < n; i++)
    if (agg[i] < 0 && count[i] >= 0) agg[i] = count[i];
  for (int i = 0; i < n; i++) {
    if (agg[i] >= 0) continue;
    agg[i] = na;
    for (int k = grow[i]; k < grow[i + 1]; k++)
      if (agg[gcol[k]] < 0) agg[gcol[k]] = na;
    na++;
  }
  return na;
}

/* ---- building --------------------------------------------------------------------------------- */

static void level_free(mg_level *L) {
  core_free(L->row);
  core_free(L->col);
  core_free(L->diag);
  core_free(L->val);
  core_free(L->dinv);
  core_free(L->x);
  core_free(L->b);
  core_free(L->r);
  core_free(L->agg);
  core_free(L->prow);
  core_free(L->pcol);
  core_free(L->pval);
  core_free(L->a2p);
  core_free(L->rrow);
  core_free(L->rfine);
  core_free(L->rent);
  core_free(L->aprow);
  core_free(L->apcol);
  core_free(L->apval);
  memset(L, 0, sizeof *L);
}

void cloth_mg_free(cloth_mg *g) {
  for (int l = 0; l < MG_MAX_LEVELS; l++) level_free(&g->lv[l]);
  core_free(g->fine_map);
  core_free(g->perm);
  core_free(g->iperm);
  core_free(g->marker);
  core_free(g->marker2);
  core_free(g->chol);
  core_free(g->work);
  core_free(g->acc);
  memset(g, 0, sizeof *g);
}

/* Values and vectors of a level whose pattern (n, row, col) is set. */
static int level_alloc(mg_level *L) {
  const size_t n = (size_t)(L->n > 0 ? L->n : 1), nz = (size_t)(L->row[L->n] > 0 ? L->row[L->n] : 1);
  L->diag = core_alloc(n, sizeof(int32_t));
  L->val = core_alloc(nz, sizeof(mat3f));
  L->dinv = core_alloc(n, sizeof(mat3f));
  L->x = core_alloc(n, sizeof(vec3));
  L->b = core_alloc(n, sizeof(vec3));
  L->r = core_alloc(n, sizeof(vec3));
  if (!L->diag || !L->val || !L->dinv || !L->x || !L->b || !L->r) return -1;
  for (int i = 0; i < L->n; i++) {
    L->diag[i] = find_col(L->row, L->col, i, i);
    if (L->diag[i] < 0) return loom_fail("multigrid: a row without its diagonal block");
  }
  return 0;
}

/* Prolongator, A P and coarse patterns below level L (graph: the aggregation graph of L). Fills
 * level C and its aggregation graph. */
static int build_next(cloth_mg *g, mg_level *L, mg_level *C, const int32_t *grow, const int32_t *gcol, int na,
                      int32_t **crow_graph, int32_t **ccol_graph) {
  const int n = L->n;
  int32_t *trow = NULL, *members = NULL, *gt_row = NULL, *gt_col = NULL, *id = NULL;
  int rc = -1;
  /* tentative prolongator T: row i has the single column agg(i) */
  id = core_alloc((size_t)n + 1, sizeof(int32_t));
  if (!id) goto done;
  for (int i = 0; i <= n; i++) id[i] = i;
  /* P pattern = pattern of A T */
  if (pattern_product(n, L->row, L->col, id, L->agg, na, g->marker, &L->prow, &L->pcol)) goto done;
  L->pval = core_alloc((size_t)(L->prow[n] > 0 ? L->prow[n] : 1), sizeof(mat3f));
  L->a2p = core_alloc((size_t)(L->row[n] > 0 ? L->row[n] : 1), sizeof(int32_t));
  if (!L->pval || !L->a2p) goto done;
  for (int i = 0; i < n; i++)
    for (int k = L->row[i]; k < L->row[i + 1]; k++) L->a2p[k] = find_col(L->prow, L->pcol, i, L->agg[L->col[k]]);
  /* R = P^T, A P, and the coarse matrix R (A P) */
  if (pattern_transpose(n, na, L->prow, L->pcol, &L->rrow, &L->rfine, &L->rent)) goto done;
  if (pattern_product(n, L->row, L->col, L->prow, L->pcol, na, g->marker, &L->aprow, &L->apcol)) goto done;
  L->apval = core_alloc((size_t)(L->aprow[n] > 0 ? L->aprow[n] : 1), sizeof(mat3));
  if (!L->apval) goto done;
  C->n = na;
  if (pattern_product(na, L->rrow, L->rfine, L->aprow, L->apcol, na, g->marker, &C->row, &C->col)) goto done;
  if (level_alloc(C)) goto done;
  /* the next aggregation graph: aggregates adjacent in this level's graph, T^T G T */
  if (pattern_transpose(n, na, id, L->agg, &trow, &members, NULL)) goto done;
  if (pattern_product(n, grow, gcol, id, L->agg, na, g->marker, &gt_row, &gt_col)) goto done;
  if (pattern_product(na, trow, members, gt_row, gt_col, na, g->marker, crow_graph, ccol_graph)) goto done;
  rc = 0;
done:
  core_free(id);
  core_free(trow);
  core_free(members);
  core_free(gt_row);
  core_free(gt_col);
  return rc;
}

/* The order of level 0's rows (g->perm: new to old, g->iperm: old to new), so that its Gauss-Seidel
 * sweeps run in two halves side by side. The mesh's vertices split at the middle index; a vertex
 * with a kept coupling to the other half is on the band. New order: the first half's inner
 * vertices, the second half's, then the band, each in mesh order. A sweep over the inner rows of
 * one half reads only that half and the band, so the two halves are independent, and the band,
 * swept alone after them (before them going backward), sees both: the result is the sequential
 * sweep in this order, whichever thread runs what. Small levels keep the mesh order (perm NULL). */
static int order_level0(cloth_mg *g, int n, const int32_t *row, const int32_t *col, const uint8_t *keep) {
  g->part_end[0] = g->part_end[1] = 0;
  if (n < PAR_ROWS) return 0;
  g->perm = core_alloc((size_t)n, sizeof(int32_t));
  g->iperm = core_alloc((size_t)n, sizeof(int32_t));
  if (!g->perm || !g->iperm) return -1;
  const int mid = n / 2;
  for (int i = 0; i < n; i++) {
    int band = 0;
    for (int k = row[i]; k < row[i + 1] && !band; k++) band = (keep[k] || col[k] == i) && (col[k] >= mid) != (i >= mid);
    g->iperm[i] = band ? 2 : i >= mid;
  }
  int at = 0;
  for (int part = 0; part < 3; part++) {
    for (int i = 0; i < n; i++)
      if (g->iperm[i] == part) g->perm[at++] = i;
    if (part < 2) g->part_end[part] = at;
  }
  for (int p = 0; p < n; p++) g->iperm[g->perm[p]] = p;
  return 0;
}

int cloth_mg_build(cloth_mg *g, int n, const int32_t *row, const int32_t *col, const uint8_t *keep) {
  memset(g, 0, sizeof *g);
  int32_t *grow = NULL, *gcol = NULL, *count = NULL, *slot = NULL;
  int rc = -1;
  const int32_t nb = row[n];
  g->fine_map = core_alloc((size_t)(nb > 0 ? nb : 1), sizeof(int32_t));
  g->marker = core_alloc((size_t)(n > 0 ? n : 1), sizeof(int32_t));
  g->marker2 = core_alloc((size_t)(n > 0 ? n : 1), sizeof(int32_t));
  count = core_alloc((size_t)(n > 0 ? n : 1), sizeof(int32_t));
  slot = core_alloc((size_t)(nb > 0 ? nb : 1), sizeof(int32_t));
  mg_level *L = &g->lv[0];
  L->n = n;
  L->row = core_alloc((size_t)n + 1, sizeof(int32_t));
  if (!g->fine_map || !g->marker || !g->marker2 || !count || !slot || !L->row) goto done;
  /* level 0: the kept blocks (the diagonal always), rows in the smoothing order */
  if (order_level0(g, n, row, col, keep)) goto done;
  int32_t nz = 0;
  for (int p = 0; p < n; p++) {
    const int i = g->perm ? g->perm[p] : p;
    L->row[p] = nz;
    for (int k = row[i]; k < row[i + 1]; k++) nz += (keep[k] || col[k] == i);
  }
  L->row[n] = nz;
  L->col = core_alloc((size_t)(nz > 0 ? nz : 1), sizeof(int32_t));
  if (!L->col) goto done;
  for (int p = 0; p < n; p++) {
    /* the row's kept blocks by their new column (insertion sort: a row has a few dozen at most) */
    const int i = g->perm ? g->perm[p] : p;
    int32_t m = L->row[p];
    for (int k = row[i]; k < row[i + 1]; k++) {
      if (!(keep[k] || col[k] == i)) {
        g->fine_map[k] = -1;
        continue;
      }
      const int32_t c = g->iperm ? g->iperm[col[k]] : col[k];
      int32_t q = m++;
      for (; q > L->row[p] && L->col[q - 1] > c; q--) {
        L->col[q] = L->col[q - 1];
        slot[q] = slot[q - 1];
      }
      L->col[q] = c;
      slot[q] = k;
    }
    for (int32_t q = L->row[p]; q < m; q++) g->fine_map[slot[q]] = q;
  }
  if (level_alloc(L)) goto done;
  /* the aggregation graph of level 0 is its pattern */
  grow = core_alloc((size_t)n + 1, sizeof(int32_t));
  gcol = core_alloc((size_t)(nz > 0 ? nz : 1), sizeof(int32_t));
  if (!grow || !gcol) goto done;
  memcpy(grow, L->row, sizeof(int32_t) * ((size_t)n + 1));
  memcpy(gcol, L->col, sizeof(int32_t) * (size_t)(nz > 0 ? nz : 1));
  int l = 0;
  while (1) {
    L = &g->lv[l];
    if (L->n <= MG_COARSE_MAX || l == MG_MAX_LEVELS - 1) break;
    L->agg = core_alloc((size_t)L->n, sizeof(int32_t));
    if (!L->agg) goto done;
    const int na = aggregate(L->n, grow, gcol, L->agg, count);
    if (na >= L->n * 9 / 10) { /* coarsening stalled: stop here */
      core_free(L->agg);
      L->agg = NULL;
      break;
    }
    int32_t *crow = NULL, *ccol = NULL;
    if (build_next(g, L, &g->lv[l + 1], grow, gcol, na, &crow, &ccol)) {
      core_free(crow);
      core_free(ccol);
      goto done;
    }
    core_free(grow);
    core_free(gcol);
    grow = crow;
    gcol = ccol;
    l++;
  }
  g->nlevels = l + 1;
  size_t most = 1;
  for (int k = 0; k + 1 < g->nlevels; k++) {
    const mg_level *F = &g->lv[k], *C = &g->lv[k + 1];
    if ((size_t)F->prow[F->n] > most) most = (size_t)F->prow[F->n];
    if ((size_t)C->row[C->n] > most) most = (size_t)C->row[C->n];
  }
  g->acc = core_alloc(most, sizeof(mat3));
  if (!g->acc) goto done;
  const mg_level *last = &g->lv[l];
  if (last->n <= MG_COARSE_MAX) { /* else (coarsening stalled above it) Gauss-Seidel sweeps */
    const size_t N = 3 * (size_t)last->n;
    g->chol = core_alloc(N * N, sizeof(double));
    g->work = core_alloc(N, sizeof(double));
    if (!g->chol || !g->work) goto done;
  }
  rc = 0;
done:
  core_free(grow);
  core_free(gcol);
  core_free(count);
  core_free(slot);
  if (rc != 0) cloth_mg_free(g);
  return rc;
}

/* ---- per-substep values -------------------------------------------------------------------------- */

static inline mat3 m3_of(const mat3f *a) {
  mat3 r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.m[i][j] = a->m[i][j];
  return r;
}

static inline mat3f m3f_of(const mat3 *a) {
  mat3f r;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) r.m[i][j] = (float)a->m[i][j];
  return r;
}

static inline vec3 m3f_mulv(const mat3f *a, vec3 v) {
  return v3(a->m[0][0] * v.x + a->m[0][1] * v.y + a->m[0][2] * v.z,
            a->m[1][0] * v.x + a->m[1][1] * v.y + a->m[1][2] * v.z,
            a->m[2][0] * v.x + a->m[2][1] * v.y + a->m[2][2] * v.z);
}

static inline vec3 m3f_tmulv(const mat3f *a, vec3 v) {
  return v3(a->m[0][0] * v.x + a->m[1][0] * v.y + a->m[2][0] * v.z,
            a->m[0][1] * v.x + a->m[1][1] * v.y + a->m[2][1] * v.z,
            a->m[0][2] * v.x + a->m[1][2] * v.y + a->m[2][2] * v.z);
}

/* C += A B (single-precision factors, double sums) */
static inline void m3_acc_mul(mat3 *restrict C, const mat3f *restrict A, const mat3f *restrict B) {
  for (int r = 0; r < 3; r++) {
    const double a0 = A->m[r][0], a1 = A->m[r][1], a2 = A->m[r][2];
    C->m[r][0] += a0 * B->m[0][0] + a1 * B->m[1][0] + a2 * B->m[2][0];
    C->m[r][1] += a0 * B->m[0][1] + a1 * B->m[1][1] + a2 * B->m[2][1];
    C->m[r][2] += a0 * B->m[0][2] + a1 * B->m[1][2] + a2 * B->m[2][2];
  }
}

/* C += A^T B */
static inline void m3_acc_tmul(mat3 *restrict C, const mat3f *restrict A, const mat3 *restrict B) {
  for (int r = 0; r < 3; r++) {
    const double a0 = A->m[0][r], a1 = A->m[1][r], a2 = A->m[2][r];
    C->m[r][0] += a0 * B->m[0][0] + a1 * B->m[1][0] + a2 * B->m[2][0];
    C->m[r][1] += a0 * B->m[0][1] + a1 * B->m[1][1] + a2 * B->m[2][1];
    C->m[r][2] += a0 * B->m[0][2] + a1 * B->m[1][2] + a2 * B->m[2][2];
  }
}

static void invert_diagonal(mg_level *L, int lo, int hi) {
  for (int i = lo; i < hi; i++) {
    const mat3 d = m3_of(&L->val[L->diag[i]]);
    mat3 inv;
    if (!m3_inverse(&d, &inv)) inv = m3_identity();
    L->dinv[i] = m3f_of(&inv);
  }
}

static void level_spmv_rows(const mg_level *L, int lo, int hi, const vec3 *restrict p, vec3 *restrict out) {
  for (int i = lo; i < hi; i++) {
    double ox = 0, oy = 0, oz = 0;
    for (int k = L->row[i]; k < L->row[i + 1]; k++) {
      const mat3f *A = &L->val[k];
      const vec3 pj = p[L->col[k]];
      ox += A->m[0][0] * pj.x + A->m[0][1] * pj.y + A->m[0][2] * pj.z;
      oy += A->m[1][0] * pj.x + A->m[1][1] * pj.y + A->m[1][2] * pj.z;
      oz += A->m[2][0] * pj.x + A->m[2][1] * pj.y + A->m[2][2] * pj.z;
    }
    out[i] = v3(ox, oy, oz);
  }
}

/* ---- the two halves ----------------------------------------------------------------------------
 * Row loops split at the middle row, the second half on the world's helper thread (core_par):
 * every row's result is computed the same way whichever thread runs it. Levels below PAR_ROWS
 * rows are not worth a hand-over. */

typedef struct half_ctx {
  cloth_mg *g;
  mg_level *L, *C;
  double omega;
  /* level 0's fill */
  const cloth_solver *s;
  const uint8_t *fixed;
  const vec3 *normal; /* per vertex (NULL: none): a direction the solve constrains, stiffened */
  void (*rows)(struct half_ctx *c, int lo, int hi, int part);
  double sum[2][2];    /* per half: partial sums (power steps) */
} half_ctx;

static void half_rows(void *ctx, int lo, int hi, int part) {
  half_ctx *c = ctx;
  c->rows(c, lo, hi, part);
}

/* c->rows over rows [0, n), in two halves when `worth` it */
static void split_if(cloth_mg *g, half_ctx *c, int n, int worth) {
  if (worth && n >= 2) core_par_rows(g->par, n, half_rows, c);
  else c->rows(c, 0, n, 0);
}

/* ... when the level has PAR_ROWS rows or more */
static void split_rows(cloth_mg *g, half_ctx *c, int n) { split_if(g, c, n, n >= PAR_ROWS); }

/* One power step's rows [lo, hi): w = A v, and the half's partial sums of v . w and v . D v */
static void power_rows(half_ctx *c, int lo, int hi, int part) {
  mg_level *L = c->L;
  const vec3 *v = L->x;
  vec3 *w = L->r;
  double vav = 0, vdv = 0;
  level_spmv_rows(L, lo, hi, v, w);
  for (int i = lo; i < hi; i++) {
    vav += v3_dot(v[i], w[i]);
    vdv += v3_dot(v[i], m3f_mulv(&L->val[L->diag[i]], v[i]));
  }
  c->sum[part][0] = vav;
  c->sum[part][1] = vdv;
}

/* v = D^-1 w, rows [lo, hi), and the half's largest component */
static void power_next_rows(half_ctx *c, int lo, int hi, int part) {
  mg_level *L = c->L;
  double norm = 0;
  for (int i = lo; i < hi; i++) {
    L->x[i] = m3f_mulv(&L->dinv[i], L->r[i]);
    norm = fmax(norm, fmax(fabs(L->x[i].x), fmax(fabs(L->x[i].y), fabs(L->x[i].z))));
  }
  c->sum[part][0] = norm;
}

static void scale_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  for (int i = lo; i < hi; i++) c->L->x[i] = v3_scale(c->L->x[i], c->omega);
}

/* Largest eigenvalue of D^-1 A by a few power steps from a fixed start (Rayleigh quotient in the
 * D inner product: a lower bound that converges from below). The row loops run in the two halves;
 * every sum is the first half's partial plus the second's, so one thread or two give the same. */
static double spectral_radius(cloth_mg *g, mg_level *L, int steps) {
  vec3 *v = L->x;
  for (int i = 0; i < L->n; i++) {
    const unsigned h = (unsigned)i * 2654435761u;
    v[i] = v3(1.0 + (double)(h >> 28) / 16, 1.0 + (double)((h >> 20) & 15) / 16, 1.0 + (double)((h >> 12) & 15) / 16);
  }
  double lambda = 1;
  half_ctx c = {.g = g, .L = L};
  for (int s = 0; s < steps; s++) {
    c.rows = power_rows;
    c.sum[1][0] = c.sum[1][1] = 0; /* (a level too small to split sums in the first half only) */
    split_rows(g, &c, L->n);
    const double vav = c.sum[0][0] + c.sum[1][0], vdv = c.sum[0][1] + c.sum[1][1];
    if (!(vdv > 0)) break;
    lambda = vav / vdv;
    if (s + 1 == steps) break; /* the next vector is not needed */
    c.rows = power_next_rows;
    c.sum[1][0] = 0;
    split_rows(g, &c, L->n);
    const double norm = fmax(c.sum[0][0], c.sum[1][0]);
    if (!(norm > 0)) break;
    c.rows = scale_rows;
    c.omega = 1.0 / norm;
    split_rows(g, &c, L->n);
  }
  return lambda;
}

/* P rows [lo, hi): S_iJ = sum of A_ij over j in aggregate J, then P_iJ = delta - omega D_i^-1 S_iJ */
static void prolongator_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  mg_level *L = c->L;
  mat3 *acc = c->g->acc;
  const double omega = c->omega;
  memset(acc + L->prow[lo], 0, sizeof(mat3) * (size_t)(L->prow[hi] - L->prow[lo]));
  for (int i = lo; i < hi; i++) {
    for (int k = L->row[i]; k < L->row[i + 1]; k++) {
      mat3 *S = &acc[L->a2p[k]];
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) S->m[r][q] += L->val[k].m[r][q];
    }
    const mat3f *Di = &L->dinv[i];
    for (int p = L->prow[i]; p < L->prow[i + 1]; p++) {
      const mat3 *S = &acc[p];
      mat3f *P = &L->pval[p];
      const int own = L->pcol[p] == L->agg[i];
      for (int r = 0; r < 3; r++) {
        const double d0 = Di->m[r][0], d1 = Di->m[r][1], d2 = Di->m[r][2];
        for (int q = 0; q < 3; q++) {
          const double v = d0 * S->m[0][q] + d1 * S->m[1][q] + d2 * S->m[2][q];
          P->m[r][q] = (float)((own && r == q ? 1.0 : 0.0) - omega * v);
        }
      }
    }
  }
}

/* A P rows [lo, hi), through the marker of the half */
static void ap_rows(half_ctx *c, int lo, int hi, int part) {
  mg_level *L = c->L;
  int32_t *mk = part ? c->g->marker2 : c->g->marker;
  memset(L->apval + L->aprow[lo], 0, sizeof(mat3) * (size_t)(L->aprow[hi] - L->aprow[lo]));
  for (int i = lo; i < hi; i++) {
    for (int q = L->aprow[i]; q < L->aprow[i + 1]; q++) mk[L->apcol[q]] = q;
    for (int k = L->row[i]; k < L->row[i + 1]; k++) {
      const int j = L->col[k];
      for (int p = L->prow[j]; p < L->prow[j + 1]; p++) m3_acc_mul(&L->apval[mk[L->pcol[p]]], &L->val[k], &L->pval[p]);
    }
  }
}

/* P^T (A P), coarse rows [lo, hi) */
static void rap_rows(half_ctx *c, int lo, int hi, int part) {
  mg_level *L = c->L, *C = c->C;
  int32_t *mk = part ? c->g->marker2 : c->g->marker;
  mat3 *acc = c->g->acc;
  memset(acc + C->row[lo], 0, sizeof(mat3) * (size_t)(C->row[hi] - C->row[lo]));
  for (int I = lo; I < hi; I++) {
    for (int q = C->row[I]; q < C->row[I + 1]; q++) mk[C->col[q]] = q;
    for (int e = L->rrow[I]; e < L->rrow[I + 1]; e++) {
      const int i = L->rfine[e];
      const mat3f *Pt = &L->pval[L->rent[e]];
      for (int q = L->aprow[i]; q < L->aprow[i + 1]; q++) m3_acc_tmul(&acc[mk[L->apcol[q]]], Pt, &L->apval[q]);
    }
  }
  for (int32_t q = C->row[lo]; q < C->row[hi]; q++) C->val[q] = m3f_of(&acc[q]);
}

/* P = (I - omega D^-1 A) T, A P, and the coarse matrix P^T (A P); sums in double (g->acc), the
 * results stored in single precision. */
static void galerkin(cloth_mg *g, mg_level *L, mg_level *C) {
  const double rho = spectral_radius(g, L, MG_POWER_STEPS), omega = rho > 0 ? 4.0 / 3.0 / rho : 0;
  /* products of 3 x 3 blocks: a level of a few hundred rows is worth the hand-over already */
  const int worth = L->row[L->n] >= PAR_SETUP_BLOCKS;
  half_ctx c = {.g = g, .L = L, .C = C, .omega = omega, .rows = prolongator_rows};
  split_if(g, &c, L->n, worth);
  c.rows = ap_rows;
  split_if(g, &c, L->n, worth);
  c.rows = rap_rows; /* a coarse row sums the fine rows of its aggregate */
  split_if(g, &c, C->n, worth);
}

/* Dense Cholesky of the coarsest level (lower factor, row-major). Returns 0 on success. */
static int factor_coarsest(cloth_mg *g) {
  const mg_level *L = &g->lv[g->nlevels - 1];
  const int N = 3 * L->n;
  double *a = g->chol;
  memset(a, 0, sizeof(double) * (size_t)N * (size_t)N);
  for (int i = 0; i < L->n; i++)
    for (int k = L->row[i]; k < L->row[i + 1]; k++)
      for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
          a[(size_t)(3 * i + r) * (size_t)N + (size_t)(3 * L->col[k] + c)] = L->val[k].m[r][c];
  for (int j = 0; j < N; j++) {
    double *aj = a + (size_t)j * (size_t)N;
    double d = aj[j];
    for (int k = 0; k < j; k++) d -= aj[k] * aj[k];
    if (!(d > 1e-300)) return -1;
    d = sqrt(d);
    aj[j] = d;
    for (int i = j + 1; i < N; i++) {
      double *ai = a + (size_t)i * (size_t)N;
      double s = ai[j];
      for (int k = 0; k < j; k++) s -= ai[k] * aj[k];
      ai[j] = s / d;
    }
  }
  return 0;
}

/* Level 0 rows [lo, hi): the filtered matrix, bending couplings lumped on the diagonal, and the
 * inverse diagonal. */
static void level0_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  cloth_mg *g = c->g;
  mg_level *L = &g->lv[0];
  const cloth_solver *s = c->s;
  const int32_t *row = s->row, *col = s->col;
  const uint8_t *fixed = c->fixed;
  for (int i = lo; i < hi; i++) {
    double lump = 0;
    for (int k = row[i]; k < row[i + 1]; k++) {
      const int j = col[k], d = g->fine_map[k];
      const int cut = j != i && (fixed[i] || fixed[j]);
      if (d >= 0) {
        if (cut) memset(&L->val[d], 0, sizeof(mat3f));
        else {
          const mat3 B = cloth_solver_block(s, i, k);
          L->val[d] = m3f_of(&B);
        }
      } else if (!cut) {
        const mat3 B = cloth_solver_block(s, i, k);
        double f = 0;
        for (int r = 0; r < 3; r++)
          for (int q = 0; q < 3; q++) f += B.m[r][q] * B.m[r][q];
        lump += sqrt(f);
      }
    }
    /* the diagonal block with its lumped couplings, summed in double and rounded once */
    mat3 D = *cloth_solver_diag(s, i);
    for (int r = 0; r < 3; r++) D.m[r][r] += lump;
    if (c->normal && !fixed[i]) {
      /* a direction the solve constrains (a sliding contact's normal): stiffened by the block's
       * mean diagonal, so the hierarchy sees the vertex held along it as the filtered system does */
      const vec3 nn = c->normal[i];
      const double kap = (D.m[0][0] + D.m[1][1] + D.m[2][2]) / 3;
      const double nv[3] = {nn.x, nn.y, nn.z};
      for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++) D.m[r][q] += kap * nv[r] * nv[q];
    }
    const int p = g->iperm ? g->iperm[i] : i; /* the vertex's row in level 0 */
    L->val[L->diag[p]] = m3f_of(&D);
    invert_diagonal(L, p, p + 1);
  }
}

static void dinv_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  invert_diagonal(c->L, lo, hi);
}

void cloth_mg_setup(cloth_mg *g, int n, const cloth_solver *s, const uint8_t *fixed, const vec3 *normal) {
  half_ctx c = {.g = g, .L = &g->lv[0], .s = s, .fixed = fixed, .normal = normal, .rows = level0_rows};
  split_rows(g, &c, n);
  for (int l = 0; l < g->nlevels; l++) {
    if (l > 0) {
      half_ctx d = {.g = g, .L = &g->lv[l], .rows = dinv_rows};
      split_rows(g, &d, g->lv[l].n);
    }
    if (l + 1 < g->nlevels) galerkin(g, &g->lv[l], &g->lv[l + 1]);
  }
  g->chol_ok = g->chol && factor_coarsest(g) == 0;
}

/* ---- the V-cycle ------------------------------------------------------------------------------- */

/* sum of A_k x_col(k) over blocks [k0, k1), in two interleaved partial sums: the additions of a
 * long row do not wait on each other (the rounding is that order's, fixed) */
static LOOM_INLINE vec3 row_dot(const mg_level *L, int k0, int k1, const vec3 *x) {
  double ax = 0, ay = 0, az = 0, bx = 0, by = 0, bz = 0;
  int k = k0;
  for (; k + 1 < k1; k += 2) {
    const mat3f *A = &L->val[k], *B = &L->val[k + 1];
    const vec3 xa = x[L->col[k]], xb = x[L->col[k + 1]];
    ax += A->m[0][0] * xa.x + A->m[0][1] * xa.y + A->m[0][2] * xa.z;
    ay += A->m[1][0] * xa.x + A->m[1][1] * xa.y + A->m[1][2] * xa.z;
    az += A->m[2][0] * xa.x + A->m[2][1] * xa.y + A->m[2][2] * xa.z;
    bx += B->m[0][0] * xb.x + B->m[0][1] * xb.y + B->m[0][2] * xb.z;
    by += B->m[1][0] * xb.x + B->m[1][1] * xb.y + B->m[1][2] * xb.z;
    bz += B->m[2][0] * xb.x + B->m[2][1] * xb.y + B->m[2][2] * xb.z;
  }
  if (k < k1) {
    const mat3f *A = &L->val[k];
    const vec3 xa = x[L->col[k]];
    ax += A->m[0][0] * xa.x + A->m[0][1] * xa.y + A->m[0][2] * xa.z;
    ay += A->m[1][0] * xa.x + A->m[1][1] * xa.y + A->m[1][2] * xa.z;
    az += A->m[2][0] * xa.x + A->m[2][1] * xa.y + A->m[2][2] * xa.z;
  }
  return v3(ax + bx, ay + by, az + bz);
}

/* One Gauss-Seidel row: x_i = D_i^-1 (b_i - sum over j != i of A_ij x_j). The block of the
 * neighbour updated just before (k_last: the last one left of the diagonal going forward, the
 * first right of it going backward) is subtracted last, so the rest of the row is summed while
 * that neighbour is still being computed: the chain from row to row is one block long. */
static LOOM_INLINE void gs_row(mg_level *L, int i, int k_last) {
  const int k0 = L->row[i], d = L->diag[i], k1 = L->row[i + 1];
  vec3 s;
  if (k_last < 0) {
    s = v3_add(row_dot(L, k0, d, L->x), row_dot(L, d + 1, k1, L->x));
  } else if (k_last < d) {
    s = v3_add(row_dot(L, k0, k_last, L->x), row_dot(L, d + 1, k1, L->x));
  } else {
    s = v3_add(row_dot(L, k0, d, L->x), row_dot(L, k_last + 1, k1, L->x));
  }
  vec3 acc = v3_sub(L->b[i], s);
  if (k_last >= 0) acc = v3_sub(acc, m3f_mulv(&L->val[k_last], L->x[L->col[k_last]]));
  L->x[i] = m3f_mulv(&L->dinv[i], acc);
}

/* Forward block Gauss-Seidel from x = 0 over rows [lo, hi): only the blocks left of the diagonal
 * contribute. */
static void gs_first_rows(mg_level *L, int lo, int hi) {
  for (int i = lo; i < hi; i++) {
    const int k0 = L->row[i], d = L->diag[i];
    if (L->in) L->b[i] = L->in[L->perm[i]];
    vec3 acc = L->b[i];
    if (d > k0) {
      acc = v3_sub(acc, row_dot(L, k0, d - 1, L->x));
      acc = v3_sub(acc, m3f_mulv(&L->val[d - 1], L->x[L->col[d - 1]]));
    }
    L->x[i] = m3f_mulv(&L->dinv[i], acc);
  }
}

/* The residual a first forward sweep leaves, rows [lo, hi): b_i - sum_j A_ij x_j vanishes for
 * j <= i by construction, so only the blocks right of the diagonal remain — half a product. */
static void first_residual_rows(mg_level *L, int lo, int hi) {
  for (int i = lo; i < hi; i++) L->r[i] = v3_neg(row_dot(L, L->diag[i] + 1, L->row[i + 1], L->x));
}

static void gs_forward_rows(mg_level *L, int lo, int hi) {
  for (int i = lo; i < hi; i++) gs_row(L, i, L->diag[i] > L->row[i] ? L->diag[i] - 1 : -1);
}

static void gs_backward_rows(mg_level *L, int lo, int hi) {
  for (int i = hi - 1; i >= lo; i--) {
    gs_row(L, i, L->diag[i] + 1 < L->row[i + 1] ? L->diag[i] + 1 : -1);
    if (L->out) L->out[L->perm[i]] = L->x[i];
  }
}

/* One block Gauss-Seidel sweep on L->x for L->b, forward or backward. */
static void gauss_seidel(mg_level *L, int forward) {
  if (forward) gs_forward_rows(L, 0, L->n);
  else gs_backward_rows(L, 0, L->n);
}

/* Level 0's two halves (order_level0) side by side: the first forward sweep with its residual,
 * and the last backward sweep, the band alone after the halves (before them going backward). */
typedef struct sweep_ctx {
  mg_level *L;
  int lo[2], hi[2];
  void (*rows)(mg_level *L, int lo, int hi);
} sweep_ctx;

static void sweep_part(void *ctx, int part) {
  sweep_ctx *c = ctx;
  c->rows(c->L, c->lo[part], c->hi[part]);
}

static void residual_half(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  first_residual_rows(c->L, lo, hi);
}

/* Forward block Gauss-Seidel from x = 0 and the residual it leaves. */
static void gauss_seidel_first(cloth_mg *g, int l) {
  mg_level *L = &g->lv[l];
  if (l > 0 || !g->perm) {
    gs_first_rows(L, 0, L->n);
    first_residual_rows(L, 0, L->n);
    return;
  }
  sweep_ctx c = {L, {0, g->part_end[0]}, {g->part_end[0], g->part_end[1]}, gs_first_rows};
  core_par_run(g->par, sweep_part, &c);
  gs_first_rows(L, g->part_end[1], L->n);
  half_ctx r = {.g = g, .L = L, .rows = residual_half};
  split_rows(g, &r, L->n);
}

/* The backward sweep closing a V-cycle. */
static void gauss_seidel_last(cloth_mg *g, int l) {
  mg_level *L = &g->lv[l];
  if (l > 0 || !g->perm) {
    gs_backward_rows(L, 0, L->n);
    return;
  }
  gs_backward_rows(L, g->part_end[1], L->n);
  sweep_ctx c = {L, {0, g->part_end[0]}, {g->part_end[0], g->part_end[1]}, gs_backward_rows};
  core_par_run(g->par, sweep_part, &c);
}

static void coarse_solve(cloth_mg *g, mg_level *L) {
  if (g->chol_ok) {
    const int N = 3 * L->n;
    const double *a = g->chol;
    double *y = g->work;
    for (int i = 0; i < L->n; i++) {
      y[3 * i] = L->b[i].x;
      y[3 * i + 1] = L->b[i].y;
      y[3 * i + 2] = L->b[i].z;
    }
    for (int i = 0; i < N; i++) {
      const double *ai = a + (size_t)i * (size_t)N;
      double s = y[i];
      for (int k = 0; k < i; k++) s -= ai[k] * y[k];
      y[i] = s / ai[i];
    }
    for (int i = N - 1; i >= 0; i--) {
      double s = y[i];
      for (int k = i + 1; k < N; k++) s -= a[(size_t)k * (size_t)N + (size_t)i] * y[k];
      y[i] = s / a[(size_t)i * (size_t)N + (size_t)i];
    }
    for (int i = 0; i < L->n; i++) L->x[i] = v3(y[3 * i], y[3 * i + 1], y[3 * i + 2]);
    return;
  }
  /* too big to factor, or not positive: symmetric Gauss-Seidel sweeps */
  memset(L->x, 0, sizeof(vec3) * (size_t)L->n);
  for (int s = 0; s < 4; s++) {
    gauss_seidel(L, 1);
    gauss_seidel(L, 0);
  }
}

/* b_c = P^T r, coarse rows [lo, hi) */
static void restrict_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  const mg_level *L = c->L;
  mg_level *C = c->C;
  for (int I = lo; I < hi; I++) {
    vec3 bc = v3(0, 0, 0);
    for (int e = L->rrow[I]; e < L->rrow[I + 1]; e++) bc = v3_add(bc, m3f_tmulv(&L->pval[L->rent[e]], L->r[L->rfine[e]]));
    C->b[I] = bc;
  }
}

/* x += P x_c, fine rows [lo, hi) */
static void prolong_rows(half_ctx *c, int lo, int hi, int part) {
  (void)part;
  mg_level *L = c->L;
  const mg_level *C = c->C;
  for (int i = lo; i < hi; i++) {
    vec3 x = L->x[i];
    for (int p = L->prow[i]; p < L->prow[i + 1]; p++) x = v3_add(x, m3f_mulv(&L->pval[p], C->x[L->pcol[p]]));
    L->x[i] = x;
  }
}

/* x = V(b) on level l: forward Gauss-Seidel, coarse correction, backward Gauss-Seidel (the adjoint
 * of the first sweep), so V is symmetric. */
static void vcycle(cloth_mg *g, int l) {
  mg_level *L = &g->lv[l];
  if (l == g->nlevels - 1) {
    coarse_solve(g, L);
    return;
  }
  mg_level *C = &g->lv[l + 1];
  gauss_seidel_first(g, l);
  half_ctx c = {.g = g, .L = L, .C = C, .rows = restrict_rows};
  split_if(g, &c, C->n, L->n >= PAR_ROWS); /* (it reads the fine level's rows) */
  vcycle(g, l + 1);
  c.rows = prolong_rows;
  split_rows(g, &c, L->n);
  gauss_seidel_last(g, l);
}

void cloth_mg_apply(cloth_mg *g, const vec3 *r, vec3 *z) {
  mg_level *L = &g->lv[0];
  if (g->perm && g->nlevels > 1) {
    /* the smoothing order's gather and scatter ride on the first and last sweeps (in their
     * halves): two passes over the vertices less, one of them on one thread */
    L->in = r;
    L->out = z;
    L->perm = g->perm;
    vcycle(g, 0);
    L->in = NULL;
    L->out = NULL;
    return;
  }
  if (g->perm)
    for (int p = 0; p < L->n; p++) L->b[p] = r[g->perm[p]];
  else memcpy(L->b, r, sizeof(vec3) * (size_t)L->n);
  vcycle(g, 0);
  if (g->perm)
    for (int p = 0; p < L->n; p++) z[g->perm[p]] = L->x[p];
  else memcpy(z, L->x, sizeof(vec3) * (size_t)L->n);
}
