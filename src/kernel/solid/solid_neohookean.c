/* solid_neohookean.c — the stable Neo-Hookean material (Smith, de Goes, Kim 2018) on linear
 * tetrahedra and its backward-Euler integrator.
 *
 * Energy density Psi(F) = mu/2 (tr F^T F - 3) + lambda/2 (J - alpha)^2 - mu^2 / (2 lambda),
 * J = det F, alpha = 1 + mu / lambda, with mu = mu_L and lambda = lambda_L + mu_L from Young's
 * modulus and Poisson's ratio (the Lame parameters mu_L, lambda_L): its linearisation at F = I is
 * Hooke's law with those Lame parameters, it is zero and stress-free at rest, and it stays finite
 * for inverted elements (no log J). (The paper's optional -mu/2 log(I_C + 1) term is left out;
 * the re-parameterisation above is the one that matches linear elasticity without it.)
 *
 * First Piola-Kirchhoff stress P = mu F + lambda (J - alpha) cof F. Hessian d2Psi/dF2 =
 * mu I + lambda g g^T + lambda (J - alpha) H_J (g = vec cof F, H_J the second derivative of the
 * determinant); it is projected to positive semi-definite by clamping its negative eigenvalues,
 * so the element stiffness V0 B^T (d2Psi) B, and the system matrix, stay positive definite. The
 * eigensystem is known in closed form (Smith, de Goes, Kim 2019, "Analytic eigensystems for
 * isotropic distortion energies"): with the rotation-variant SVD F = U diag(s0, s1, s2) V^T (U, V
 * rotations, the sign of an inversion on s2) and t = lambda (J - alpha),
 *   twist k  U T_k V^T  (T_k the unit skew matrix about axis k):        mu + t s_k
 *   flip k   U L_k V^T  (L_k the unit symmetric off-diagonal pair):     mu - t s_k
 *   scaling  U diag(q) V^T, q an eigenvector of the 3 x 3 matrix A_ij = mu delta_ij
 *            + lambda dJ/ds_i dJ/ds_j + t d2J/ds_i ds_j  (dJ/ds_0 = s1 s2, d2J/ds_0 ds_1 = s2, ...)
 * so only a 3 x 3 decomposition is needed; the projection adds |eigenvalue| q q^T for each
 * negative mode. (project = 2 keeps the numeric 9 x 9 Jacobi clamp, the tests' reference.)
 *
 * vec(F) stacks F's columns f0, f1, f2; F = Ds Dm^-1, Ds = [x1 - x0, x2 - x0, x3 - x0]. */
#include <stdlib.h>
#include <string.h>

#include "solid/solid.h"

void neohookean_params(double E, double nu, double *mu, double *lambda, double *alpha) {
  const double muL = E / (2.0 * (1.0 + nu));
  const double laL = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
  *mu = muL;
  *lambda = laL + muL;
  *alpha = 1.0 + *mu / *lambda;
}

/* column c of a row-major 3 x 3 matrix */
static inline vec3 col(const double A[9], int c) { return v3(A[c], A[3 + c], A[6 + c]); }

/* Symmetric Jacobi eigen-decomposition of an n x n matrix (row major, destroyed): eigenvalues
 * on A's diagonal, eigenvectors in V's columns. */
static void jacobi_eig(double *A, double *V, int n) {
  for (int i = 0; i < n * n; i++) V[i] = 0;
  for (int i = 0; i < n; i++) V[i * n + i] = 1;
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = 0, diag = 0;
    for (int i = 0; i < n; i++) {
      diag += A[i * n + i] * A[i * n + i];
      for (int j = i + 1; j < n; j++) off += A[i * n + j] * A[i * n + j];
    }
    if (off <= 1e-24 * diag || off == 0) break; /* off-diagonal below 1e-12 of the diagonal */
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) {
        const double apq = A[p * n + q];
        if (fabs(apq) < 1e-300) continue;
        const double theta = (A[q * n + q] - A[p * n + p]) / (2.0 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
        const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
        for (int k = 0; k < n; k++) {
          const double akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - s * akq;
          A[k * n + q] = s * akp + c * akq;
        }
        for (int k = 0; k < n; k++) {
          const double apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - s * aqk;
          A[q * n + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < n; k++) {
          const double vkp = V[k * n + p], vkq = V[k * n + q];
          V[k * n + p] = c * vkp - s * vkq;
          V[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
}

static inline void add_cross_block(double *H, int bi, int bj, vec3 a, double s) {
  /* H[block bi, block bj] += s [a]x, [a]x = ((0, -az, ay), (az, 0, -ax), (-ay, ax, 0)) */
  double *h = H + (3 * bi) * 9 + 3 * bj;
  h[0 * 9 + 1] -= s * a.z, h[0 * 9 + 2] += s * a.y;
  h[1 * 9 + 0] += s * a.z, h[1 * 9 + 2] -= s * a.x;
  h[2 * 9 + 0] -= s * a.y, h[2 * 9 + 1] += s * a.x;
}

/* Rotation-variant SVD of F (row major): F = U diag(sg) V^T with U, V proper rotations (columns
 * the singular vectors), |sg0| >= |sg1| >= |sg2| and an inversion's sign on sg2. From the
 * eigenvectors of F^T F (3 x 3 Jacobi); U's first two columns F v_i / s_i (orthogonalised), the
 * third their cross product. */
static void svd3(const double F[9], double U[9], double sg[3], double V[9]) {
  double A[9];
  for (int a = 0; a < 3; a++)
    for (int c = 0; c < 3; c++) A[3 * a + c] = F[a] * F[c] + F[3 + a] * F[3 + c] + F[6 + a] * F[6 + c];
  double W[9];
  jacobi_eig(A, W, 3);
  int ord[3] = {0, 1, 2};
  for (int i = 0; i < 3; i++) /* descending eigenvalues */
    for (int j = i + 1; j < 3; j++)
      if (A[4 * ord[j]] > A[4 * ord[i]]) {
        const int t = ord[i];
        ord[i] = ord[j];
        ord[j] = t;
      }
  vec3 v[3];
  for (int i = 0; i < 3; i++) v[i] = v3(W[ord[i]], W[3 + ord[i]], W[6 + ord[i]]);
  if (v3_dot(v3_cross(v[0], v[1]), v[2]) < 0) v[2] = v3_neg(v[2]);
  const vec3 r0 = v3(F[0], F[1], F[2]), r1 = v3(F[3], F[4], F[5]), r2 = v3(F[6], F[7], F[8]);
  vec3 u[3];
  for (int i = 0; i < 2; i++) u[i] = v3(v3_dot(r0, v[i]), v3_dot(r1, v[i]), v3_dot(r2, v[i]));
  const double scale = fmax(v3_len(u[0]), 1e-300);
  if (v3_len(u[0]) > 1e-12 * fmax(scale, 1.0)) u[0] = v3_scale(u[0], 1.0 / v3_len(u[0]));
  else u[0] = v3(1, 0, 0);
  u[1] = v3_madd(u[1], u[0], -v3_dot(u[1], u[0]));
  if (v3_len(u[1]) > 1e-12 * scale) u[1] = v3_scale(u[1], 1.0 / v3_len(u[1]));
  else { /* flattened to a line: any unit vector across u0 */
    const vec3 a = fabs(u[0].x) < 0.6 ? v3(1, 0, 0) : v3(0, 1, 0);
    u[1] = v3_normalize(v3_madd(a, u[0], -v3_dot(a, u[0])));
  }
  u[2] = v3_cross(u[0], u[1]);
  for (int i = 0; i < 3; i++) {
    const vec3 fv = v3(v3_dot(r0, v[i]), v3_dot(r1, v[i]), v3_dot(r2, v[i]));
    sg[i] = v3_dot(u[i], fv);
    U[i] = (&u[i].x)[0], U[3 + i] = (&u[i].x)[1], U[6 + i] = (&u[i].x)[2];
    V[i] = (&v[i].x)[0], V[3 + i] = (&v[i].x)[1], V[6 + i] = (&v[i].x)[2];
  }
}

/* H += w vec(U M V^T) vec(U M V^T)^T, vec stacking columns (index 3 c + r <-> row r, column c). */
static void add_mode(double H[81], const double U[9], const double M[9], const double V[9], double w) {
  double UM[9], Q[9], q[9];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) UM[3 * r + c] = U[3 * r] * M[c] + U[3 * r + 1] * M[3 + c] + U[3 * r + 2] * M[6 + c];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) Q[3 * r + c] = UM[3 * r] * V[3 * c] + UM[3 * r + 1] * V[3 * c + 1] + UM[3 * r + 2] * V[3 * c + 2];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) q[3 * c + r] = Q[3 * r + c];
  for (int i = 0; i < 9; i++)
    for (int j = 0; j < 9; j++) H[i * 9 + j] += w * q[i] * q[j];
}

/* The negative modes of H (the exact Hessian at F, t = lambda (J - alpha)) lifted to zero. */
static void project_analytic(const double F[9], double mu, double lambda, double t, double H[81]) {
  double U[9], V[9], sg[3];
  svd3(F, U, sg, V);
  const double h = 0.70710678118654752440;
  /* twists and flips about axis k: the pair (i, j) = the other two axes */
  for (int k = 0; k < 3; k++) {
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const double tw = mu + t * sg[k], fl = mu - t * sg[k];
    double M[9] = {0};
    if (tw < 0) {
      M[3 * i + j] = h, M[3 * j + i] = -h;
      add_mode(H, U, M, V, -tw);
    }
    if (fl < 0) {
      memset(M, 0, sizeof M);
      M[3 * i + j] = h, M[3 * j + i] = h;
      add_mode(H, U, M, V, -fl);
    }
  }
  /* scaling: the 3 x 3 block over diag(ds) */
  const double dJ[3] = {sg[1] * sg[2], sg[0] * sg[2], sg[0] * sg[1]};
  double A[9], W[9];
  for (int a = 0; a < 3; a++)
    for (int c = 0; c < 3; c++) A[3 * a + c] = (a == c ? mu : t * sg[3 - a - c]) + lambda * dJ[a] * dJ[c];
  jacobi_eig(A, W, 3);
  for (int m = 0; m < 3; m++) {
    if (!(A[4 * m] < 0)) continue;
    double M[9] = {0};
    for (int a = 0; a < 3; a++) M[4 * a] = W[3 * a + m];
    add_mode(H, U, M, V, -A[4 * m]);
  }
}

double neohookean_psi(const double F[9], double mu, double lambda, double alpha, double P[9], double *d2, int project) {
  const vec3 f0 = col(F, 0), f1 = col(F, 1), f2 = col(F, 2);
  const vec3 g0 = v3_cross(f1, f2), g1 = v3_cross(f2, f0), g2 = v3_cross(f0, f1);
  const double J = v3_dot(f0, g0);
  double Ic = 0;
  for (int i = 0; i < 9; i++) Ic += F[i] * F[i];
  const double psi = 0.5 * mu * (Ic - 3.0) + 0.5 * lambda * (J - alpha) * (J - alpha) - 0.5 * mu * mu / lambda;
  if (P) {
    const double s = lambda * (J - alpha);
    const vec3 g[3] = {g0, g1, g2};
    for (int c = 0; c < 3; c++) {
      P[c] = mu * F[c] + s * g[c].x;
      P[3 + c] = mu * F[3 + c] + s * g[c].y;
      P[6 + c] = mu * F[6 + c] + s * g[c].z;
    }
  }
  if (d2) {
    /* 9 x 9 over vec(F) = (f0, f1, f2) */
    double H[81];
    memset(H, 0, sizeof H);
    const double gv[9] = {g0.x, g0.y, g0.z, g1.x, g1.y, g1.z, g2.x, g2.y, g2.z};
    for (int i = 0; i < 9; i++) {
      H[i * 9 + i] += mu;
      for (int j = 0; j < 9; j++) H[i * 9 + j] += lambda * gv[i] * gv[j];
    }
    const double s = lambda * (J - alpha);
    /* d(f1 x f2) = -[f2]x df1 + [f1]x df2, and cyclically */
    add_cross_block(H, 0, 1, f2, -s), add_cross_block(H, 0, 2, f1, s);
    add_cross_block(H, 1, 2, f0, -s), add_cross_block(H, 1, 0, f2, s);
    add_cross_block(H, 2, 0, f1, -s), add_cross_block(H, 2, 1, f0, s);
    if (!project) {
      memcpy(d2, H, sizeof H);
      return psi;
    }
    /* H = mu I + lambda g g^T + s H_J with g g^T >= 0 and |eigenvalues of H_J| <= sigma_max(F):
     * when mu >= |s| sigma_max it is already positive semi-definite (a stretched element, or one
     * at rest). sigma_max^2 <= the largest Gershgorin row sum of F^T F. */
    double FtF[9];
    for (int a = 0; a < 3; a++)
      for (int c = 0; c < 3; c++) FtF[3 * a + c] = F[a] * F[c] + F[3 + a] * F[3 + c] + F[6 + a] * F[6 + c];
    double smax2 = 0;
    for (int a = 0; a < 3; a++) smax2 = fmax(smax2, fabs(FtF[3 * a]) + fabs(FtF[3 * a + 1]) + fabs(FtF[3 * a + 2]));
    if (mu >= fabs(s) * sqrt(smax2)) {
      memcpy(d2, H, sizeof H);
      return psi;
    }
    if (project == 1) {
      project_analytic(F, mu, lambda, s, H);
      memcpy(d2, H, sizeof H);
      return psi;
    }
    double V[81];
    jacobi_eig(H, V, 9);
    double lam[9];
    int clamp = 0;
    for (int i = 0; i < 9; i++) {
      lam[i] = H[i * 9 + i];
      if (lam[i] < 0) lam[i] = 0, clamp = 1;
    }
    (void)clamp;
    for (int i = 0; i < 9; i++)
      for (int j = 0; j < 9; j++) {
        double a = 0;
        for (int k = 0; k < 9; k++) a += V[i * 9 + k] * lam[k] * V[j * 9 + k];
        d2[i * 9 + j] = a;
      }
  }
  return psi;
}

/* F of tet k at positions x. */
static void deformation(const solid_body *b, int k, const vec3 *x, double F[9]) {
  const int32_t *q = b->model.tet + 4 * k;
  const vec3 e1 = v3_sub(x[q[1]], x[q[0]]), e2 = v3_sub(x[q[2]], x[q[0]]), e3 = v3_sub(x[q[3]], x[q[0]]);
  const double Ds[9] = {e1.x, e2.x, e3.x, e1.y, e2.y, e3.y, e1.z, e2.z, e3.z};
  const double *Di = b->restq.dm_inv + 9 * k;
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) F[3 * r + c] = Ds[3 * r] * Di[c] + Ds[3 * r + 1] * Di[3 + c] + Ds[3 * r + 2] * Di[6 + c];
}

/* dF column c / dx_a = w[c][a] I: w[c][a] = Dm^-1[a - 1][c] for a = 1..3, w[c][0] = -sum. */
static void shape_weights(const double *Di, double w[3][4]) {
  for (int c = 0; c < 3; c++) {
    w[c][1] = Di[0 * 3 + c];
    w[c][2] = Di[1 * 3 + c];
    w[c][3] = Di[2 * 3 + c];
    w[c][0] = -(w[c][1] + w[c][2] + w[c][3]);
  }
}

void neohookean_forces(const solid_body *b, const vec3 *x, vec3 *Fo) {
  const double mu = b->model.mu, la = b->model.lambda, al = b->model.alpha;
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    double F[9], P[9], w[3][4];
    deformation(b, k, x, F);
    neohookean_psi(F, mu, la, al, P, NULL, 0);
    shape_weights(b->restq.dm_inv + 9 * k, w);
    const double V0 = b->restq.vol0[k];
    /* f_a = -V0 sum_c P[:, c] w[c][a] */
    for (int a = 0; a < 4; a++) {
      vec3 f = v3(0, 0, 0);
      for (int c = 0; c < 3; c++) f = v3_madd(f, col(P, c), w[c][a]);
      Fo[q[a]] = v3_madd(Fo[q[a]], f, -V0);
    }
  }
}

double neohookean_energy(const solid_body *b, const vec3 *x) {
  double E = 0;
  for (int k = 0; k < b->model.nt; k++) {
    double F[9];
    deformation(b, k, x, F);
    E += b->restq.vol0[k] * neohookean_psi(F, b->model.mu, b->model.lambda, b->model.alpha, NULL, NULL, 0);
  }
  return E;
}

/* ---- the implicit solve --------------------------------------------------------------------- */

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return x < y ? -1 : x > y;
}

/* The block pattern: row i holds i and its edge neighbours, sorted. */
int solid_implicit_build(solid_body *b) {
  const int n = b->p.n, ne = b->model.ne;
  int32_t *deg = core_calloc((size_t)n + 1, sizeof(int32_t));
  if (!deg) return -1;
  for (int k = 0; k < ne; k++) deg[b->model.edge[2 * k]]++, deg[b->model.edge[2 * k + 1]]++;
  int32_t *row = core_alloc((size_t)n + 1, sizeof(int32_t));
  if (!row) return core_free(deg), -1;
  row[0] = 0;
  for (int i = 0; i < n; i++) row[i + 1] = row[i] + deg[i] + 1;
  const int nnz = row[n];
  int32_t *colv = core_alloc((size_t)nnz, sizeof(int32_t));
  int32_t *slot = core_alloc((size_t)b->model.nt * 16, sizeof(int32_t));
  if (!colv || !slot) {
    core_free(deg), core_free(row), core_free(colv), core_free(slot);
    return -1;
  }
  for (int i = 0; i < n; i++) colv[row[i]] = i, deg[i] = 1;
  for (int k = 0; k < ne; k++) {
    const int i = b->model.edge[2 * k], j = b->model.edge[2 * k + 1];
    colv[row[i] + deg[i]++] = j;
    colv[row[j] + deg[j]++] = i;
  }
  for (int i = 0; i < n; i++) qsort(colv + row[i], (size_t)(row[i + 1] - row[i]), sizeof(int32_t), cmp_i32);
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    for (int a = 0; a < 4; a++)
      for (int c = 0; c < 4; c++) {
        const int32_t key = q[c];
        const int32_t *f = bsearch(&key, colv + row[q[a]], (size_t)(row[q[a] + 1] - row[q[a]]), sizeof(int32_t), cmp_i32);
        LOOM_ASSERT(f, "every tet corner pair is an edge or a diagonal");
        slot[16 * k + 4 * a + c] = (int32_t)(f - colv);
      }
  }
  core_free(deg);
  b->model.row = row;
  b->model.col = colv;
  b->model.tet_slot = slot;
  b->model.nnz = nnz;
  return 0;
}

/* y = A x over the block matrix. */
static void spmv(const solid_body *b, const double *A, const vec3 *x, vec3 *y) {
  const int32_t *row = b->model.row, *colv = b->model.col;
  for (int i = 0; i < b->p.n; i++) {
    double sx = 0, sy = 0, sz = 0;
    for (int k = row[i]; k < row[i + 1]; k++) {
      const double *a = A + 9 * k;
      const vec3 v = x[colv[k]];
      sx += a[0] * v.x + a[1] * v.y + a[2] * v.z;
      sy += a[3] * v.x + a[4] * v.y + a[5] * v.z;
      sz += a[6] * v.x + a[7] * v.y + a[8] * v.z;
    }
    y[i] = v3(sx, sy, sz);
  }
}

static inline vec3 m3v(const double *a, vec3 v) {
  return v3(a[0] * v.x + a[1] * v.y + a[2] * v.z, a[3] * v.x + a[4] * v.y + a[5] * v.z,
            a[6] * v.x + a[7] * v.y + a[8] * v.z);
}

static void inv3_sym(const double a[9], double o[9]) {
  const double c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6];
  const double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
  if (!(fabs(det) > 1e-300)) {
    memset(o, 0, 9 * sizeof(double));
    for (int i = 0; i < 3; i++) o[4 * i] = a[4 * i] > 0 ? 1.0 / a[4 * i] : 0;
    return;
  }
  const double id = 1.0 / det;
  o[0] = c00 * id, o[1] = (a[2] * a[7] - a[1] * a[8]) * id, o[2] = (a[1] * a[5] - a[2] * a[4]) * id;
  o[3] = c01 * id, o[4] = (a[0] * a[8] - a[2] * a[6]) * id, o[5] = (a[2] * a[3] - a[0] * a[5]) * id;
  o[6] = c02 * id, o[7] = (a[1] * a[6] - a[0] * a[7]) * id, o[8] = (a[0] * a[4] - a[1] * a[3]) * id;
}

/* Holds vertex i of an implicit solid on triangle tri of the solid with handle `other` in the next
 * solve (state.cn and the rest): along n, or when n is zero along the line from the triangle's
 * nearest point if it lies within `reach`; only a vertex resting on a surface below it (the normal
 * within 60 degrees of up: two bodies holding each other's vertices at the other's last velocity
 * kept both jittering) and only on an implicit solid (a light cloth would hold a heavy vertex as if
 * it were immovable). 1 if held. */
static int hold_on(const loom_world *w, solid_body *b, int i, int other, int tri, vec3 n, double reach) {
  const int slot = world_live_slot(w, other);
  if (slot < 0 || w->bodies[slot].ops->id != LOOM_KIND_SOLID) return 0;
  const solid_body *ob = solid_of(&w->bodies[slot]);
  const particles *o = &ob->p;
  if (ob->params.integrator != LOOM_INTEGRATOR_IMPLICIT || o->frozen || tri < 0 || tri >= o->nt) return 0;
  const int32_t *t = o->tri + 3 * tri;
  double bary[3];
  const vec3 q = geom_closest_on_triangle(b->p.x[i], o->x[t[0]], o->x[t[1]], o->x[t[2]], bary);
  if (n.x == 0 && n.y == 0 && n.z == 0) {
    const vec3 d = v3_sub(b->p.x[i], q);
    const double l = v3_len(d);
    if (!(l > 0) || !(l < reach)) return 0;
    n = v3_scale(d, 1 / l);
  }
  const double gl = v3_len(w->gravity);
  if (!(gl > 0) || !(v3_dot(n, w->gravity) < -0.5 * gl) || !v3_isfinite(n)) return 0;
  vec3 vo = v3(0, 0, 0);
  for (int j = 0; j < 3; j++) vo = v3_madd(vo, o->v[t[j]], bary[j]);
  if (!v3_isfinite(vo)) return 0;
  b->state.cn[i] = n;
  b->state.cvn[i] = v3_dot(vo, n);
  b->state.cvt[i] = v3_madd(vo, n, -b->state.cvn[i]);
  b->state.cmu[i] = sqrt(b->p.friction * o->friction);
  b->state.cbody[i] = other;
  b->state.ctri[i] = tri;
  b->state.cw[i] = v3(bary[0], bary[1], bary[2]);
  return 1;
}

void solid_record_contacts(loom_world *w, body_slot *s) {
  solid_body *b = solid_of(s);
  const int handle = world_handle(w, (int)(s - w->bodies));
  const int n = b->p.n;
  const int implicit = b->params.integrator == LOOM_INTEGRATOR_IMPLICIT;
  const arena_mark mark = arena_get_mark(&w->scratch);
  /* the holds on other solids of the last substep (kept below while the vertex stays near) */
  int32_t *was_body = implicit ? ARENA_NEW(&w->scratch, int32_t, 2 * (size_t)n, "last holds") : NULL;
  if (was_body) memcpy(was_body, b->state.cbody, sizeof(int32_t) * (size_t)n);
  if (was_body) memcpy(was_body + n, b->state.ctri, sizeof(int32_t) * (size_t)n);
  memset(b->state.cn, 0, sizeof(vec3) * (size_t)n);
  memset(b->state.cvn, 0, sizeof(double) * (size_t)n);
  memset(b->state.cvt, 0, sizeof(vec3) * (size_t)n);
  memset(b->state.cmu, 0, sizeof(double) * (size_t)n);
  memset(b->state.cbody, 0, sizeof(int32_t) * (size_t)n);
  for (int k = 0; k < w->contacts.count; k++) {
    const loom_contact *c = &w->contacts.items[k];
    if (c->solver != 1 || c->body_a != handle || c->type_a != LOOM_FEATURE_VERTEX) continue;
    if (c->feature_a < 0 || c->feature_a >= n || !v3_isfinite(c->normal)) continue;
    if (!w->contacts.work[k].resolved) continue;
    b->state.cn[c->feature_a] = c->normal;
    const contact_work *kw = &w->contacts.work[k];
    const int ok = isfinite(kw->vn_b) && v3_isfinite(kw->vt_b) && isfinite(kw->mu);
    b->state.cvn[c->feature_a] = ok ? kw->vn_b : 0;
    b->state.cvt[c->feature_a] = ok ? kw->vt_b : v3(0, 0, 0);
    b->state.cmu[c->feature_a] = ok ? kw->mu : 0;
  }
  if (!implicit) return;
  /* implicit solids: a vertex the collision pipeline kept off another solid's triangle is held
   * along that contact's normal in the next solve, moving with the triangle (its velocity now, at
   * the vertex's nearest point), and the solve gives that solid the reaction: without it the
   * solve let the body relax against a free surface each step, and stacked rubber cubes at
   * dt = 1/60 sank into each other and slid off (docs/architecture.md, "Solids on solids") */
  for (int k = 0; k < w->contacts.count; k++) {
    const loom_contact *c = &w->contacts.items[k];
    if ((c->solver != 3 && c->solver != 4) || c->body_a != handle || c->body_b == handle) continue;
    if (c->type_a != LOOM_FEATURE_VERTEX || c->type_b != LOOM_FEATURE_TRIANGLE) continue;
    const int i = c->feature_a;
    if (i < 0 || i >= n || b->p.inv_m[i] == 0) continue;
    const vec3 held = b->state.cn[i];
    if (held.x != 0 || held.y != 0 || held.z != 0) continue; /* an obstacle's, or the first */
    hold_on(w, b, i, c->body_b, c->feature_b, v3(c->normal.x, c->normal.y, c->normal.z), 0);
  }
  /* a vertex held still on a surface gets no impulse from the pipeline, so no record: it stays
   * held while it is within 1.5 thicknesses of the same triangle (the solve releases it when the
   * constraint would pull) */
  if (was_body)
    for (int i = 0; i < n; i++) {
      const vec3 held = b->state.cn[i];
      if (!was_body[i] || held.x != 0 || held.y != 0 || held.z != 0 || b->p.inv_m[i] == 0) continue;
      const int slot = world_live_slot(w, was_body[i]);
      if (slot < 0 || !w->bodies[slot].pts) continue;
      const double thick = 0.5 * (particles_thickness(&b->p) + particles_thickness(w->bodies[slot].pts));
      hold_on(w, b, i, was_body[i], was_body[n + i], v3(0, 0, 0), 1.5 * thick);
    }
  arena_release(&w->scratch, mark);
}

/* The constraint filter of Baraff and Witkin: pinned vertices keep all three directions, vertices
 * on an obstacle their normal one, the others none. */
static inline vec3 filter(const solid_body *b, int i, vec3 a) {
  if (b->p.inv_m[i] == 0) return v3(0, 0, 0);
  const vec3 n = b->state.cn[i];
  if (n.x == 0 && n.y == 0 && n.z == 0) return a;
  return v3_madd(a, n, -v3_dot(a, n));
}

/* One backward-Euler step linearised once (Baraff-Witkin): with K = -df/dx (projected PSD),
 * (M + h beta K + h^2 K) dv = h (f0 - h K v0), f0 = f_el(x0) - beta K v0 + m g + f_ext;
 * pinned vertices' dv is fixed (BW's filter: their rows and columns leave the system, their known
 * dv enters the right-hand side through the initial guess), then v = v0 + dv, x = x0 + h v. */
void solid_implicit_substep(solid_body *b, double h, vec3 g, const vec3 *pin_v, int grab_vertex, vec3 grab_target,
                            double grab_k, double grab_c) {
  const int n = b->p.n;
  solid_scratch *sc = &b->scratch;
  double *A = sc->blocks;
  vec3 *x = b->p.x, *v = b->p.v;
  const double beta = b->params.rayleigh;
  const double mu = b->model.mu, la = b->model.lambda, al = b->model.alpha;
  memset(A, 0, sizeof(double) * 9 * (size_t)b->model.nnz);
  vec3 *f = sc->F, *Kv = sc->q;
  memset(f, 0, sizeof(vec3) * (size_t)n);
  /* K blocks and elastic forces */
  for (int k = 0; k < b->model.nt; k++) {
    const int32_t *q = b->model.tet + 4 * k;
    double F[9], P[9], H[81], w[3][4];
    deformation(b, k, x, F);
    neohookean_psi(F, mu, la, al, P, H, 1);
    shape_weights(b->restq.dm_inv + 9 * k, w);
    const double V0 = b->restq.vol0[k];
    for (int a = 0; a < 4; a++) {
      vec3 fa = v3(0, 0, 0);
      for (int c = 0; c < 3; c++) fa = v3_madd(fa, col(P, c), w[c][a]);
      f[q[a]] = v3_madd(f[q[a]], fa, -V0);
      for (int bb = 0; bb < 4; bb++) {
        double *blk = A + 9 * b->model.tet_slot[16 * k + 4 * a + bb];
        /* K_ab[r][s] = V0 sum_{c,d} w[c][a] w[d][bb] H[3c + r][3d + s] */
        for (int c = 0; c < 3; c++) {
          const double wa = V0 * w[c][a];
          if (wa == 0) continue;
          for (int d = 0; d < 3; d++) {
            const double s = wa * w[d][bb];
            if (s == 0) continue;
            const double *Hb = H + (3 * c) * 9 + 3 * d;
            for (int r = 0; r < 3; r++)
              for (int t = 0; t < 3; t++) blk[3 * r + t] += s * Hb[r * 9 + t];
          }
        }
      }
    }
  }
  /* right-hand side: h (f_el - (beta + h) K v0 + m g + f_ext + grab) */
  spmv(b, A, v, Kv);
  vec3 *rhs = sc->rhs;
  for (int i = 0; i < n; i++) {
    vec3 fi = v3_add(f[i], v3_add(b->p.f[i], v3_scale(g, b->p.m[i])));
    fi = v3_madd(fi, Kv[i], -(beta + h));
    rhs[i] = v3_scale(fi, h);
  }
  /* A = M + (h beta + h^2) K (+ the grab's spring and damper on its vertex) */
  const double kscale = h * beta + h * h;
  for (int i = 0; i < 9 * b->model.nnz; i++) A[i] *= kscale;
  for (int i = 0; i < n; i++) {
    int kd = -1;
    for (int k = b->model.row[i]; k < b->model.row[i + 1]; k++)
      if (b->model.col[k] == i) {
        kd = k;
        break;
      }
    double *d = A + 9 * kd;
    d[0] += b->p.m[i], d[4] += b->p.m[i], d[8] += b->p.m[i];
    if (i == grab_vertex) {
      const double c = h * grab_c + h * h * grab_k;
      d[0] += c, d[4] += c, d[8] += c;
      rhs[i] = v3_add(rhs[i], v3_scale(v3_madd(v3_scale(v3_sub(grab_target, x[i]), grab_k), v[i], -(grab_c + h * grab_k)), h));
    }
    inv3_sym(d, sc->diag_inv + 9 * i);
  }
  /* filtered PCG (Baraff-Witkin's modified PCG): dv starts at the constrained values (a pin's
   * known change; no normal velocity on an obstacle), the filter keeps them. A contact whose
   * constraint force would pull the vertex onto the obstacle is released and the system solved
   * again (at most twice). */
  vec3 *dv = sc->dv, *r = sc->r, *dd = sc->d, *qv = sc->q, *s = sc->s;
  const double *im = b->p.inv_m;
  int it = 0;
  double rr = 0, rr0 = 0;
  /* the free vertices' first guess: the last substep's change h a_prev (state: a restored
   * checkpoint continues bit for bit; the stopping test is relative to the right-hand side, so a
   * good guess saves iterations without loosening the solve); after a released contact, the last
   * round's answer */
  const int warm = b->p.history_ok;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < n; i++) {
      const vec3 cn = b->state.cn[i];
      if (im[i] == 0) dv[i] = v3_sub(pin_v[i], v[i]);
      else if (cn.x != 0 || cn.y != 0 || cn.z != 0) dv[i] = v3_scale(cn, b->state.cvn[i] - v3_dot(v[i], cn));
      else if (round == 0) dv[i] = warm ? v3_scale(b->state.a_prev[i], h) : v3(0, 0, 0);
    }
    spmv(b, A, dv, qv);
    rr0 = 0;
    for (int i = 0; i < n; i++) {
      r[i] = filter(b, i, v3_sub(rhs[i], qv[i]));
      const vec3 fr = filter(b, i, rhs[i]);
      rr0 += v3_dot(fr, fr);
    }
    double rz = 0;
    for (int i = 0; i < n; i++) {
      dd[i] = filter(b, i, m3v(sc->diag_inv + 9 * i, r[i]));
      rz += v3_dot(r[i], dd[i]);
    }
    const double tol2 = b->params.cg_tolerance * b->params.cg_tolerance * rr0;
    rr = 0;
    for (int i = 0; i < n; i++) rr += v3_dot(r[i], r[i]);
    for (int k = 0; k < b->params.cg_iterations && rr > tol2 && rr > 1e-300; k++) {
      spmv(b, A, dd, qv);
      double dq = 0;
      for (int i = 0; i < n; i++) {
        qv[i] = filter(b, i, qv[i]);
        dq += v3_dot(dd[i], qv[i]);
      }
      if (!(dq > 0)) break;
      const double alpha = rz / dq;
      double rz1 = 0;
      rr = 0;
      for (int i = 0; i < n; i++) {
        dv[i] = v3_madd(dv[i], dd[i], alpha);
        r[i] = v3_madd(r[i], qv[i], -alpha);
        s[i] = filter(b, i, m3v(sc->diag_inv + 9 * i, r[i]));
        rz1 += v3_dot(r[i], s[i]);
        rr += v3_dot(r[i], r[i]);
      }
      const double bt = rz1 / rz;
      rz = rz1;
      for (int i = 0; i < n; i++) dd[i] = v3_madd(s[i], dd[i], bt);
      it++;
    }
    /* the constraint forces: A dv = rhs + h lambda n, so (A dv - rhs) . n is h times the force the
     * obstacle gives along its normal; a pulling one (negative) lets go */
    spmv(b, A, dv, qv);
    int released = 0;
    for (int i = 0; i < n; i++) {
      const vec3 cn = b->state.cn[i];
      if (im[i] == 0 || (cn.x == 0 && cn.y == 0 && cn.z == 0)) continue;
      if (v3_dot(v3_sub(qv[i], rhs[i]), cn) < 0) {
        b->state.cn[i] = v3(0, 0, 0);
        released++;
      }
    }
    if (!released) break;
  }
  /* a right-hand side whose norm is not finite has no finite answer: the guard stops the body
   * (the CG above stops at once on the non-finite test and would leave it still, silently) */
  if (!isfinite(rr0) || !isfinite(rr)) v3_poison_largest(dv, rhs, im, n);
  sc->cg_iterations += it;
  const double res = rr0 > 0 ? sqrt(rr / rr0) : 0;
  if (res > sc->cg_residual) sc->cg_residual = res;
  for (int i = 0; i < n; i++) {
    b->state.a_prev[i] = v3_scale(dv[i], 1.0 / h);
    sc->cimp[i] = v3(0, 0, 0);
    if (im[i] == 0) continue;
    v[i] = v3_add(v[i], dv[i]);
    const vec3 cn = b->state.cn[i];
    if (cn.x != 0 || cn.y != 0 || cn.z != 0) {
      /* Coulomb friction with the constraint's normal impulse (A dv - rhs) . n (qv = A dv of the
       * final solve): the vertex's velocity along the obstacle, relative to the obstacle's, loses
       * at most mu J_n / m. The solve holds only the normal direction, so the obstacle passes
       * after it see no approach and could not give friction themselves. */
      const double jn = v3_dot(v3_sub(qv[i], rhs[i]), cn);
      const vec3 rv = v3_sub(v[i], b->state.cvt[i]);
      const vec3 vt = v3_madd(rv, cn, -v3_dot(rv, cn));
      const double lt = v3_len(vt), most = b->state.cmu[i] * d_max(jn, 0) / b->p.m[i];
      const double take = lt <= most ? 1.0 : most / lt;
      v[i] = v3_madd(v[i], vt, -take);
      /* the impulse the contact gave the vertex (its reaction goes to another solid's triangle) */
      sc->cimp[i] = v3_madd(v3_scale(cn, d_max(jn, 0)), vt, -take * b->p.m[i]);
    }
    x[i] = v3_madd(x[i], v[i], h);
  }
  b->p.history_ok = 1;
}
