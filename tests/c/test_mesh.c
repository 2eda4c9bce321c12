/* test_mesh.c — triangle meshes: generators (counts, closedness, orientation, Euler
 * characteristic, volumes against analytic values), adjacency and hinge conventions against a
 * brute-force reference, vertex merging against a brute-force reference, OBJ/STL loading of
 * good and malformed files, OBJ round trips, and the small API (transform, copy, NULL meshes). */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "test_rng.h"
#include "mesh/mesh.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const double PI = 3.14159265358979323846;

/* ---- helpers --------------------------------------------------------------------------------- */



/* Signed volume by the divergence theorem: sum of a . (b x c) / 6 over triangles. */
static double signed_volume(const loom_mesh *m) {
  const vec3 *v = loom_mesh_vertices(m);
  const int32_t *t = loom_mesh_triangles(m);
  double vol = 0;
  for (int i = 0; i < loom_mesh_triangle_count(m); i++)
    vol += v3_dot(v[t[3 * i]], v3_cross(v[t[3 * i + 1]], v[t[3 * i + 2]]));
  return vol / 6.0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Closed, consistently oriented 2-manifold check computed from the triangles alone: every
 * directed edge (a, b) occurs exactly once and its reverse (b, a) occurs exactly once. Returns
 * the number of undirected edges (or -1 after reporting the failure). */
static int check_closed_oriented(const loom_mesh *m, const char *what) {
  int nt = loom_mesh_triangle_count(m), nv = loom_mesh_vertex_count(m);
  const int32_t *t = loom_mesh_triangles(m);
  uint64_t *d = malloc(sizeof *d * 3 * (size_t)(nt ? nt : 1));
  for (int i = 0; i < nt; i++)
    for (int k = 0; k < 3; k++) d[3 * i + k] = (uint64_t)t[3 * i + k] * (uint64_t)nv + (uint64_t)t[3 * i + (k + 1) % 3];
  qsort(d, 3 * (size_t)nt, sizeof *d, cmp_u64);
  int ok = 1;
  for (size_t i = 1; i < 3 * (size_t)nt && ok; i++)
    if (d[i] == d[i - 1]) {
      harness_fail(__FILE__, __LINE__, "%s: directed edge %llu->%llu used twice", what,
                   (unsigned long long)(d[i] / nv), (unsigned long long)(d[i] % nv));
      ok = 0;
    }
  for (size_t i = 0; i < 3 * (size_t)nt && ok; i++) {
    uint64_t rev = (d[i] % nv) * (uint64_t)nv + d[i] / nv;
    if (!bsearch(&rev, d, 3 * (size_t)nt, sizeof *d, cmp_u64)) {
      harness_fail(__FILE__, __LINE__, "%s: edge %llu->%llu has no opposite (boundary or flipped)", what,
                   (unsigned long long)(d[i] / nv), (unsigned long long)(d[i] % nv));
      ok = 0;
    }
  }
  free(d);
  return ok ? 3 * nt / 2 : -1;
}

static int cmp_vec3(const void *a, const void *b) {
  const vec3 *p = a, *q = b;
  if (p->x != q->x) return p->x < q->x ? -1 : 1;
  if (p->y != q->y) return p->y < q->y ? -1 : 1;
  if (p->z != q->z) return p->z < q->z ? -1 : 1;
  return 0;
}

/* 1 if two vertices have bitwise-equal positions (sort, then compare neighbours). */
static int has_duplicate_vertices(const loom_mesh *m) {
  int nv = loom_mesh_vertex_count(m);
  vec3 *v = malloc(sizeof *v * (size_t)(nv ? nv : 1));
  memcpy(v, loom_mesh_vertices(m), sizeof *v * (size_t)nv);
  qsort(v, (size_t)nv, sizeof *v, cmp_vec3);
  int dup = 0;
  for (int i = 1; i < nv; i++)
    if (!cmp_vec3(&v[i], &v[i - 1])) dup = 1;
  free(v);
  return dup;
}

/* Reference adjacency by brute force (quadratic, small meshes only): unique edges sorted, the
 * first two triangles by index on each, hinges per the convention in mesh.h. */
static void check_adjacency_reference(const loom_mesh *m, const char *what) {
  int nt = m->nt;
  int32_t *e = malloc(sizeof *e * 6 * (size_t)(nt ? nt : 1));
  int ne = 0;
  for (int t = 0; t < nt; t++)
    for (int k = 0; k < 3; k++) {
      int32_t a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
      int32_t lo = a < b ? a : b, hi = a < b ? b : a;
      int found = 0;
      for (int i = 0; i < ne && !found; i++) found = e[2 * i] == lo && e[2 * i + 1] == hi;
      if (!found) {
        /* insertion keeps the list sorted */
        int pos = ne;
        while (pos > 0 && (e[2 * pos - 2] > lo || (e[2 * pos - 2] == lo && e[2 * pos - 1] > hi))) {
          e[2 * pos] = e[2 * pos - 2];
          e[2 * pos + 1] = e[2 * pos - 1];
          pos--;
        }
        e[2 * pos] = lo;
        e[2 * pos + 1] = hi;
        ne++;
      }
    }
  CHECK_MSG(m->ne == ne, "%s: %d edges, reference %d", what, m->ne, ne);
  int nh = 0, bad = 0;
  for (int i = 0; i < ne && i < m->ne && !bad; i++) {
    int32_t lo = e[2 * i], hi = e[2 * i + 1];
    if (m->edge[2 * i] != lo || m->edge[2 * i + 1] != hi) {
      harness_fail(__FILE__, __LINE__, "%s: edge %d is (%d, %d), reference (%d, %d)", what, i, (int)m->edge[2 * i],
                   (int)m->edge[2 * i + 1], (int)lo, (int)hi);
      bad = 1;
      break;
    }
    int tris[3] = {-1, -1, -1}, kk[3] = {0, 0, 0}, n = 0;
    for (int t = 0; t < nt; t++)
      for (int k = 0; k < 3; k++) {
        int32_t a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
        if ((a == lo && b == hi) || (a == hi && b == lo)) {
          if (n < 3) {
            tris[n] = t;
            kk[n] = k;
          }
          n++;
        }
      }
    int t0 = tris[0], t1 = n >= 2 ? tris[1] : -1;
    if (m->edge_tri[2 * i] != t0 || m->edge_tri[2 * i + 1] != t1) {
      harness_fail(__FILE__, __LINE__, "%s: edge %d triangles (%d, %d), reference (%d, %d)", what, i,
                   (int)m->edge_tri[2 * i], (int)m->edge_tri[2 * i + 1], t0, t1);
      bad = 1;
    }
    if (n == 2) {
      int32_t want[4] = {m->tri[3 * t0 + kk[0]], m->tri[3 * t0 + (kk[0] + 1) % 3], m->tri[3 * t0 + (kk[0] + 2) % 3],
                         m->tri[3 * t1 + (kk[1] + 2) % 3]};
      if (nh >= m->nh || memcmp(m->hinge + 4 * nh, want, sizeof want)) {
        harness_fail(__FILE__, __LINE__, "%s: hinge %d differs from (%d, %d, %d, %d)", what, nh, (int)want[0],
                     (int)want[1], (int)want[2], (int)want[3]);
        bad = 1;
      }
      nh++;
    }
  }
  CHECK_MSG(bad || m->nh == nh, "%s: %d hinges, reference %d", what, m->nh, nh);
  free(e);
}

/* Everything a loaded or generated mesh promises, checked from the outside. */
static void check_mesh_invariants(const loom_mesh *m, const char *what) {
  CHECK_MSG(mesh_validate(m) == 0, "%s: %s", what, loom_last_error());
  for (int i = 1; i < m->ne; i++) {
    const int32_t *a = m->edge + 2 * (i - 1), *b = m->edge + 2 * i;
    if (!(a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]))) {
      harness_fail(__FILE__, __LINE__, "%s: edges not strictly sorted at %d", what, i);
      break;
    }
  }
  for (int i = 0; i < m->ne; i++)
    if (!(m->edge[2 * i] < m->edge[2 * i + 1])) {
      harness_fail(__FILE__, __LINE__, "%s: edge %d not v0 < v1", what, i);
      break;
    }
}

static loom_mesh *load_text(const char *name, const char *text) {
  return mesh_load_memory(name, text, strlen(text));
}

static int write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

/* ---- grid ------------------------------------------------------------------------------------ */

static const vec3 PLANE_NORMAL[3] = {{0, 0, 1}, {0, -1, 0}, {1, 0, 0}};
static const int PLANE_AXES[3][2] = {{0, 1}, {0, 2}, {1, 2}};

TEST(mesh_grid_counts) {
  static const int dims[][2] = {{1, 1}, {2, 3}, {7, 4}, {16, 16}, {1, 9}};
  for (int plane = 0; plane < 3; plane++)
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
      int nx = dims[d][0], ny = dims[d][1];
      loom_mesh *m = loom_mesh_grid(2.0, 1.5, nx, ny, NULL, plane);
      CHECK(m != NULL);
      if (!m) continue;
      int ne = nx * (ny + 1) + ny * (nx + 1) + nx * ny;
      CHECK_EQ_INT(loom_mesh_vertex_count(m), (nx + 1) * (ny + 1));
      CHECK_EQ_INT(loom_mesh_triangle_count(m), 2 * nx * ny);
      CHECK_EQ_INT(loom_mesh_edge_count(m), ne);
      CHECK_EQ_INT(loom_mesh_hinge_count(m), ne - 2 * (nx + ny)); /* interior edges */
      int gx = -1, gy = -1;
      CHECK_EQ_INT(loom_mesh_grid_dims(m, &gx, &gy), 1);
      CHECK_EQ_INT(gx, nx + 1);
      CHECK_EQ_INT(gy, ny + 1);
      check_mesh_invariants(m, "grid");
      check_adjacency_reference(m, "grid");
      loom_mesh_destroy(m);
    }
}

TEST(mesh_grid_orientation_and_area) {
  for (int plane = 0; plane < 3; plane++) {
    double w = 3.0, h = 2.0;
    int nx = 6, ny = 5;
    loom_mesh *m = loom_mesh_grid(w, h, nx, ny, NULL, plane);
    CHECK(m != NULL);
    if (!m) continue;
    const vec3 *v = loom_mesh_vertices(m);
    const int32_t *t = loom_mesh_triangles(m);
    double total = 0;
    for (int i = 0; i < loom_mesh_triangle_count(m); i++) {
      vec3 n = v3_cross(v3_sub(v[t[3 * i + 1]], v[t[3 * i]]), v3_sub(v[t[3 * i + 2]], v[t[3 * i]]));
      /* each triangle is half a cell, its normal along the plane's +n */
      CHECK_NEAR(v3_dot(n, PLANE_NORMAL[plane]), w / nx * h / ny, 1e-12);
      CHECK_NEAR(v3_len(n), w / nx * h / ny, 1e-12);
      total += 0.5 * v3_len(n);
    }
    CHECK_NEAR(total, w * h, 1e-12);
    loom_mesh_destroy(m);
  }
}

TEST(mesh_grid_bounds_and_indexing) {
  vec3 c = v3(1, -2, 3);
  double w = 4.0, h = 1.0;
  int nx = 8, ny = 3;
  for (int plane = 0; plane < 3; plane++) {
    loom_mesh *m = loom_mesh_grid(w, h, nx, ny, &c, plane);
    CHECK(m != NULL);
    if (!m) continue;
    int ua = PLANE_AXES[plane][0], va = PLANE_AXES[plane][1];
    loom_vec3 lo, hi;
    loom_mesh_aabb(m, &lo, &hi);
    double clo[3] = {c.x, c.y, c.z}, chi[3] = {c.x, c.y, c.z};
    clo[ua] -= w / 2;
    chi[ua] += w / 2;
    clo[va] -= h / 2;
    chi[va] += h / 2;
    for (int k = 0; k < 3; k++) {
      CHECK_NEAR(v3_comp(lo, k), clo[k], 1e-15);
      CHECK_NEAR(v3_comp(hi, k), chi[k], 1e-15);
    }
    /* vertex (i, j) at j (nx + 1) + i, i along u */
    const vec3 *v = loom_mesh_vertices(m);
    for (int j = 0; j <= ny; j++)
      for (int i = 0; i <= nx; i++) {
        double p[3] = {c.x, c.y, c.z};
        p[ua] += -w / 2 + w * i / nx;
        p[va] += -h / 2 + h * j / ny;
        vec3 q = v[j * (nx + 1) + i];
        CHECK_NEAR(q.x, p[0], 1e-14);
        CHECK_NEAR(q.y, p[1], 1e-14);
        CHECK_NEAR(q.z, p[2], 1e-14);
      }
    /* alternating diagonals: cell (i, j) -> triangles 2 (j nx + i), +1 as documented in mesh.h */
    const int32_t *t = loom_mesh_triangles(m);
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        int32_t a = j * (nx + 1) + i, b = a + 1, d = a + nx + 1, cc = d + 1;
        int32_t even[6] = {a, b, cc, a, cc, d}, odd[6] = {a, b, d, b, cc, d};
        const int32_t *want = (i + j) % 2 ? odd : even;
        CHECK_MSG(!memcmp(t + 6 * (j * nx + i), want, sizeof even), "plane %d cell (%d, %d) triangles", plane, i, j);
      }
    loom_mesh_destroy(m);
  }
}

TEST(mesh_grid_symmetric_and_exact_ends) {
  loom_mesh *m = loom_mesh_grid(0.3, 0.7, 7, 3, NULL, LOOM_PLANE_XY);
  CHECK(m != NULL);
  if (!m) return;
  const vec3 *v = loom_mesh_vertices(m);
  CHECK(v[0].x == -0.15 && v[7].x == 0.15 && v[0].y == -0.35 && v[8 * 3].y == 0.35);
  for (int i = 0; i <= 7; i++) CHECK(v[i].x == -v[7 - i].x); /* mirror symmetric bit for bit */
  loom_mesh_destroy(m);
}

TEST(mesh_grid_rejects_bad_arguments) {
  struct {
    double w, h;
    int nx, ny, plane;
    const char *needle;
  } cases[] = {
      {0, 1, 2, 2, 0, "w must be"},         {-1, 1, 2, 2, 0, "w must be"}, {NAN, 1, 2, 2, 0, "w must be"},
      {INFINITY, 1, 2, 2, 0, "w must be"},  {1, 0, 2, 2, 0, "h must be"},  {1, 1, 0, 2, 0, "nx must be in [1, 4096]"},
      {1, 1, 4097, 2, 0, "nx must be"},     {1, 1, 2, -3, 0, "ny must be"}, {1, 1, 2, 1 << 30, 0, "ny must be"},
      {1, 1, 2, 2, 3, "plane must be"},     {1, 1, 2, 2, -1, "plane must be"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    loom_clear_error();
    loom_mesh *m = loom_mesh_grid(cases[i].w, cases[i].h, cases[i].nx, cases[i].ny, NULL, cases[i].plane);
    CHECK_MSG(m == NULL, "case %zu accepted", i);
    CHECK_STR_CONTAINS(loom_last_error(), cases[i].needle);
    loom_mesh_destroy(m);
  }
  vec3 bad = v3(0, NAN, 0);
  CHECK(loom_mesh_grid(1, 1, 2, 2, &bad, 0) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "center");
  vec3 huge = v3(1e308, 0, 0);
  CHECK(loom_mesh_grid(1.7e308, 1, 2, 2, &huge, 0) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "overflow");
}

/* ---- closed generators ----------------------------------------------------------------------- */

typedef struct closed_case {
  const char *name;
  loom_mesh *m;
  int euler;     /* expected V - E + F */
  int nv, nt;    /* expected counts */
  double volume; /* analytic volume of the smooth shape */
  double rtol;   /* accepted relative volume error of the tessellation */
} closed_case;

static void check_closed(const closed_case *c) {
  CHECK_MSG(c->m != NULL, "%s: %s", c->name, loom_last_error());
  if (!c->m) return;
  const loom_mesh *m = c->m;
  CHECK_MSG(loom_mesh_vertex_count(m) == c->nv, "%s: %d vertices, expected %d", c->name, loom_mesh_vertex_count(m), c->nv);
  CHECK_MSG(loom_mesh_triangle_count(m) == c->nt, "%s: %d triangles, expected %d", c->name,
            loom_mesh_triangle_count(m), c->nt);
  int ne = check_closed_oriented(m, c->name);
  CHECK_MSG(ne == loom_mesh_edge_count(m), "%s: %d edges, independent count %d", c->name, loom_mesh_edge_count(m), ne);
  /* closed manifold: every edge is a hinge, and every edge has two triangles */
  CHECK_EQ_INT(loom_mesh_hinge_count(m), loom_mesh_edge_count(m));
  for (int e = 0; e < m->ne; e++)
    if (m->edge_tri[2 * e] < 0 || m->edge_tri[2 * e + 1] < 0) {
      harness_fail(__FILE__, __LINE__, "%s: edge %d has fewer than two triangles", c->name, e);
      break;
    }
  int chi = loom_mesh_vertex_count(m) - ne + loom_mesh_triangle_count(m);
  CHECK_MSG(chi == c->euler, "%s: Euler characteristic %d, expected %d", c->name, chi, c->euler);
  CHECK_MSG(!has_duplicate_vertices(m), "%s: duplicate vertices", c->name);
  double vol = signed_volume(m);
  CHECK_MSG(vol > 0, "%s: signed volume %g (inward winding)", c->name, vol);
  CHECK_MSG(fabs(vol - c->volume) <= c->rtol * c->volume, "%s: volume %.12g vs analytic %.12g (rel %.3g > %.3g)",
            c->name, vol, c->volume, fabs(vol / c->volume - 1), c->rtol);
  check_mesh_invariants(m, c->name);
  CHECK_EQ_INT(loom_mesh_grid_dims(m, NULL, NULL), 0);
}

TEST(mesh_closed_generators_topology_and_volume) {
  double r = 0.7, hh = 1.3, R = 2.0, rt = 0.5;
  /* An inscribed polygon of n sides loses a fraction ~ (2 pi / n)^2 / 6 of the circle's area;
   * the bounds are that estimate with a 1.5 margin, summed over the azimuthal (tol_s) and the
   * meridian direction (tol_k for K bands over a half circle, 4 tol_k for the torus tube's K
   * segments over a full circle). */
  int S = 128, K = 64;
  double tol_s = 1.5 * pow(2 * PI / S, 2) / 6, tol_k = 1.5 * pow(PI / K, 2) / 6;
  closed_case cases[] = {
      {"box d=1", loom_mesh_box(0.5, 1.0, 1.5, 1), 2, 8, 12, 8 * 0.5 * 1.0 * 1.5, 1e-14},
      {"box d=5", loom_mesh_box(0.5, 1.0, 1.5, 5), 2, 6 * 25 + 2, 12 * 25, 8 * 0.5 * 1.0 * 1.5, 1e-13},
      {"sphere", loom_mesh_sphere(r, S, K), 2, S * (K - 1) + 2, 2 * S * (K - 1), 4.0 / 3 * PI * r * r * r,
       tol_s + tol_k},
      {"sphere minimal", loom_mesh_sphere(r, 3, 2), 2, 5, 6, 4.0 / 3 * PI * r * r * r, 0.9},
      {"cylinder", loom_mesh_cylinder(r, hh, S, 7), 2, S * 8 + 2, 2 * S + 2 * S * 7, PI * r * r * 2 * hh, tol_s},
      {"cylinder minimal", loom_mesh_cylinder(r, hh, 3, 1), 2, 8, 12, PI * r * r * 2 * hh, 0.7},
      {"capsule", loom_mesh_capsule(r, hh, S, K / 2), 2, S * K + 2, 2 * S * K,
       PI * r * r * 2 * hh + 4.0 / 3 * PI * r * r * r, tol_s + tol_k},
      {"capsule h=0", loom_mesh_capsule(r, 0.0, S, K / 2), 2, S * (K - 1) + 2, 2 * S * (K - 1),
       4.0 / 3 * PI * r * r * r, tol_s + tol_k},
      {"capsule minimal", loom_mesh_capsule(r, hh, 3, 1), 2, 8, 12, PI * r * r * 2 * hh + 4.0 / 3 * PI * r * r * r, 0.7},
      {"torus", loom_mesh_torus(R, rt, S, K), 0, S * K, 2 * S * K, 2 * PI * PI * R * rt * rt, tol_s + 4 * tol_k},
      {"torus minimal", loom_mesh_torus(R, rt, 3, 3), 0, 9, 18, 2 * PI * PI * R * rt * rt, 0.9},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_closed(&cases[i]);
    loom_mesh_destroy(cases[i].m);
  }
}

TEST(mesh_generators_converge_second_order) {
  /* Halving the facet size divides the volume error by ~4 (inscribed polyhedra). */
  double r = 1.0;
  struct {
    const char *name;
    double exact;
  } shapes[] = {{"sphere", 4.0 / 3 * PI}, {"cylinder", PI * 2}, {"torus", 2 * PI * PI * 2.0 * 0.25}};
  for (int s = 0; s < 3; s++) {
    double err[2];
    for (int level = 0; level < 2; level++) {
      int n = 32 << level;
      loom_mesh *m = s == 0 ? loom_mesh_sphere(r, n, n / 2) : s == 1 ? loom_mesh_cylinder(r, 1.0, n, 3) : loom_mesh_torus(2.0, 0.5, n, n);
      CHECK(m != NULL);
      if (!m) return;
      err[level] = fabs(signed_volume(m) - shapes[s].exact) / shapes[s].exact;
      loom_mesh_destroy(m);
    }
    double ratio = err[0] / err[1];
    CHECK_MSG(ratio > 3.5 && ratio < 4.5, "%s: error ratio %.3f (errors %.3g, %.3g), expected ~4", shapes[s].name, ratio,
              err[0], err[1]);
  }
}

TEST(mesh_generators_adjacency_matches_reference) {
  loom_mesh *ms[] = {loom_mesh_sphere(1, 7, 5), loom_mesh_torus(2, 1, 5, 4), loom_mesh_box(1, 2, 3, 2),
                     loom_mesh_cylinder(1, 1, 5, 2), loom_mesh_capsule(1, 0.5, 6, 3)};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    CHECK(ms[i] != NULL);
    if (ms[i]) check_adjacency_reference(ms[i], "generator");
    loom_mesh_destroy(ms[i]);
  }
}

TEST(mesh_generators_exact_extents) {
  loom_vec3 lo, hi;
  loom_mesh *b = loom_mesh_box(0.25, 0.5, 2.0, 3);
  loom_mesh_aabb(b, &lo, &hi);
  CHECK(lo.x == -0.25 && hi.x == 0.25 && lo.y == -0.5 && hi.y == 0.5 && lo.z == -2.0 && hi.z == 2.0);
  loom_mesh_destroy(b);
  loom_mesh *s = loom_mesh_sphere(1.5, 16, 8);
  loom_mesh_aabb(s, &lo, &hi);
  CHECK(lo.z == -1.5 && hi.z == 1.5 && hi.x == 1.5);
  for (int i = 0; i < loom_mesh_vertex_count(s); i++) CHECK_NEAR(v3_len(loom_mesh_vertices(s)[i]), 1.5, 1e-15);
  loom_mesh_destroy(s);
  loom_mesh *c = loom_mesh_capsule(0.5, 1.0, 16, 4);
  loom_mesh_aabb(c, &lo, &hi);
  CHECK(lo.z == -1.5 && hi.z == 1.5);
  loom_mesh_destroy(c);
  loom_mesh *t = loom_mesh_torus(3.0, 1.0, 12, 8);
  loom_mesh_aabb(t, &lo, &hi);
  CHECK(hi.x == 4.0 && lo.z == -1.0 && hi.z == 1.0);
  loom_mesh_destroy(t);
}

TEST(mesh_generators_reject_bad_arguments) {
#define EXPECT_FAIL(call, needle)                 \
  do {                                            \
    loom_clear_error();                           \
    loom_mesh *m_ = (call);                       \
    CHECK_MSG(m_ == NULL, "%s accepted", #call);  \
    CHECK_STR_CONTAINS(loom_last_error(), needle); \
    loom_mesh_destroy(m_);                        \
  } while (0)
  EXPECT_FAIL(loom_mesh_box(0, 1, 1, 1), "hx must be");
  EXPECT_FAIL(loom_mesh_box(1, -1, 1, 1), "hy must be");
  EXPECT_FAIL(loom_mesh_box(1, 1, NAN, 1), "hz must be");
  EXPECT_FAIL(loom_mesh_box(1, 1, 1, 0), "divisions must be in [1, 1024]");
  EXPECT_FAIL(loom_mesh_box(1, 1, 1, 100000), "divisions must be");
  EXPECT_FAIL(loom_mesh_sphere(-1, 8, 4), "r must be");
  EXPECT_FAIL(loom_mesh_sphere(1, 2, 4), "segments must be in [3, 4096]");
  EXPECT_FAIL(loom_mesh_sphere(1, 8, 1), "rings must be in [2, 4096]");
  EXPECT_FAIL(loom_mesh_sphere(1, 1 << 30, 1 << 30), "segments must be");
  EXPECT_FAIL(loom_mesh_cylinder(1, 0, 8, 1), "half_h must be");
  EXPECT_FAIL(loom_mesh_cylinder(INFINITY, 1, 8, 1), "r must be");
  EXPECT_FAIL(loom_mesh_cylinder(1, 1, 8, 0), "rings must be in [1, 4096]");
  EXPECT_FAIL(loom_mesh_capsule(1, -0.1, 8, 2), "half_h must be a finite number >= 0");
  EXPECT_FAIL(loom_mesh_capsule(1, 1, 8, 0), "rings must be in [1, 2048]");
  EXPECT_FAIL(loom_mesh_capsule(0, 1, 8, 2), "r must be");
  EXPECT_FAIL(loom_mesh_torus(1, 1, 8, 8), "r must be smaller than R");
  EXPECT_FAIL(loom_mesh_torus(1, 2, 8, 8), "r must be smaller than R");
  EXPECT_FAIL(loom_mesh_torus(-1, 0.5, 8, 8), "R must be");
  EXPECT_FAIL(loom_mesh_torus(2, 1, 2, 8), "major must be in [3, 4096]");
  EXPECT_FAIL(loom_mesh_torus(2, 1, 8, 5000), "minor must be");
  EXPECT_FAIL(loom_mesh_torus(1.5e308, 1e308, 8, 8), "overflow");
#undef EXPECT_FAIL
}

/* ---- adjacency and hinges -------------------------------------------------------------------- */

TEST(mesh_hinge_convention) {
  /* Unit square split along 0-2. Triangle 0 = (0, 1, 2) visits 2 then 0, so the hinge is
   * (2, 0, 1, 3): v0 -> v1 in triangle 0's order, then its third vertex, then triangle 1's. */
  vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  int32_t t1[6] = {0, 1, 2, 0, 2, 3};
  loom_mesh *m = loom_mesh_from_arrays(v, 4, t1, 2);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_edge_count(m), 5);
  CHECK_EQ_INT(loom_mesh_hinge_count(m), 1);
  const int32_t *h = loom_mesh_hinges(m);
  CHECK(h[0] == 2 && h[1] == 0 && h[2] == 1 && h[3] == 3);
  int32_t want_edges[10] = {0, 1, 0, 2, 0, 3, 1, 2, 2, 3};
  CHECK(!memcmp(loom_mesh_edges(m), want_edges, sizeof want_edges));
  int32_t want_et[10] = {0, -1, 0, 1, 1, -1, 0, -1, 1, -1};
  CHECK(!memcmp(m->edge_tri, want_et, sizeof want_et));
  loom_mesh_destroy(m);

  /* Same square, triangles listed the other way round: triangle 0 = (0, 2, 3) visits 0 then 2. */
  int32_t t2[6] = {0, 2, 3, 0, 1, 2};
  m = loom_mesh_from_arrays(v, 4, t2, 2);
  CHECK(m != NULL);
  if (!m) return;
  h = loom_mesh_hinges(m);
  CHECK(h[0] == 0 && h[1] == 2 && h[2] == 3 && h[3] == 1);
  loom_mesh_destroy(m);
}

TEST(mesh_hinges_follow_triangle_zero_everywhere) {
  loom_mesh *m = loom_mesh_sphere(1.0, 9, 6);
  CHECK(m != NULL);
  if (!m) return;
  int hh = 0;
  for (int e = 0; e < m->ne; e++) {
    if (m->edge_tri[2 * e + 1] < 0) continue;
    const int32_t *h = m->hinge + 4 * hh++;
    const int32_t *a = m->tri + 3 * m->edge_tri[2 * e], *b = m->tri + 3 * m->edge_tri[2 * e + 1];
    int ok0 = 0, ok1 = 0;
    for (int k = 0; k < 3; k++) {
      if (a[k] == h[0] && a[(k + 1) % 3] == h[1] && a[(k + 2) % 3] == h[2]) ok0 = 1;
      /* consistently oriented: triangle 1 runs v1 -> v0 */
      if (b[k] == h[1] && b[(k + 1) % 3] == h[0] && b[(k + 2) % 3] == h[3]) ok1 = 1;
    }
    CHECK_MSG(ok0 && ok1, "hinge %d (%d %d %d %d)", hh - 1, (int)h[0], (int)h[1], (int)h[2], (int)h[3]);
    CHECK(m->edge_tri[2 * e] < m->edge_tri[2 * e + 1]);
  }
  CHECK_EQ_INT(hh, m->nh);
  loom_mesh_destroy(m);
}

TEST(mesh_adjacency_non_manifold) {
  /* Three triangles on edge 0-1: the first two are kept, no hinge is made for it. */
  vec3 v[5] = {{0, 0, 0}, {1, 0, 0}, {0.5, 1, 0}, {0.5, -1, 0}, {0.5, 0, 1}};
  int32_t t[9] = {0, 1, 2, 1, 0, 3, 0, 1, 4};
  loom_mesh *m = loom_mesh_from_arrays(v, 5, t, 3);
  CHECK(m != NULL);
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_edge_count(m), 7);
  CHECK_EQ_INT(loom_mesh_hinge_count(m), 0);
  CHECK(m->edge[0] == 0 && m->edge[1] == 1 && m->edge_tri[0] == 0 && m->edge_tri[1] == 1);
  check_adjacency_reference(m, "non-manifold");
  loom_mesh_destroy(m);
}

TEST(mesh_adjacency_random_soups_match_reference) {
  rng r = {0x9E3779B97F4A7C15ull};
  for (int round = 0; round < 20; round++) {
    int nv = 4 + rng_int(&r, 12), nt = 1 + rng_int(&r, 30);
    vec3 v[16];
    int32_t t[90];
    for (int i = 0; i < nv; i++) v[i] = v3(rng_unit(&r), rng_unit(&r), rng_unit(&r));
    for (int i = 0; i < nt; i++) {
      do {
        for (int k = 0; k < 3; k++) t[3 * i + k] = rng_int(&r, nv);
      } while (t[3 * i] == t[3 * i + 1] || t[3 * i + 1] == t[3 * i + 2] || t[3 * i] == t[3 * i + 2]);
    }
    loom_mesh *m = loom_mesh_from_arrays(v, nv, t, nt);
    CHECK(m != NULL);
    if (!m) continue;
    check_adjacency_reference(m, "soup");
    loom_mesh_destroy(m);
  }
}

TEST(mesh_adjacency_high_valence_is_not_quadratic) {
  /* A fan of n triangles around vertex 0: valence n. Sorting by insertion per vertex or pairing
   * edges by scanning would take ~n^2 = 4e10 steps; the counting sort takes milliseconds. */
  int n = 200000;
  vec3 *v = malloc(sizeof *v * (size_t)(n + 2));
  int32_t *t = malloc(sizeof *t * 3 * (size_t)n);
  v[0] = v3(0, 0, 0);
  for (int i = 0; i <= n; i++) v[i + 1] = v3(cos(2 * PI * i / (n + 1)), sin(2 * PI * i / (n + 1)), 0);
  for (int i = 0; i < n; i++) {
    t[3 * i] = 0;
    t[3 * i + 1] = i + 1;
    t[3 * i + 2] = i + 2;
  }
  /* no timing assertion (speed belongs to `make bench`); a quadratic pass would make this test
   * take minutes, which CI's time limit notices */
  loom_mesh *m = loom_mesh_from_arrays(v, n + 2, t, n);
  CHECK(m != NULL);
  if (m) {
    CHECK_EQ_INT(loom_mesh_edge_count(m), 2 * n + 1);
    CHECK_EQ_INT(loom_mesh_hinge_count(m), n - 1);
    CHECK(m->edge[0] == 0 && m->edge[1] == 1 && m->edge[2 * n] == 0 && m->edge[2 * n + 1] == n + 1);
  }
  loom_mesh_destroy(m);
  free(v);
  free(t);
}

/* ---- merging --------------------------------------------------------------------------------- */

/* The merge rule from mesh.h implemented the slow, obvious way. */
static void reference_merge(const vec3 *v, int nv, const int32_t *tri, int nt, double tol, vec3 *ov, int *onv,
                            int32_t *otri, int *ont) {
  int32_t *map = malloc(sizeof *map * (size_t)nv), *idx = malloc(sizeof *idx * (size_t)nv);
  for (int i = 0; i < nv; i++) {
    map[i] = i;
    for (int r = 0; r < i; r++)
      if (map[r] == r && v3_dist2(v[r], v[i]) <= tol * tol) {
        map[i] = r;
        break;
      }
  }
  int n = 0;
  for (int t = 0; t < nt; t++) {
    int32_t a = map[tri[3 * t]], b = map[tri[3 * t + 1]], c = map[tri[3 * t + 2]];
    if (a == b || b == c || a == c) continue;
    otri[3 * n] = a;
    otri[3 * n + 1] = b;
    otri[3 * n + 2] = c;
    n++;
  }
  for (int i = 0; i < nv; i++) idx[i] = -1;
  for (int k = 0; k < 3 * n; k++) idx[otri[k]] = 0;
  int m = 0;
  for (int i = 0; i < nv; i++)
    if (idx[i] == 0) {
      idx[i] = m;
      ov[m++] = v[i];
    }
  for (int k = 0; k < 3 * n; k++) otri[k] = idx[otri[k]];
  *onv = m;
  *ont = n;
  free(map);
  free(idx);
}

TEST(mesh_merge_matches_reference_on_random_clusters) {
  rng r = {42};
  for (int round = 0; round < 30; round++) {
    double tol = round % 3 == 0 ? 1e-3 : round % 3 == 1 ? 0.37 : 2.5e-7;
    /* dense (cells sized by tol) or spread far wider than tol (cells sized by the extent) */
    double spread = round % 2 ? 50 * tol : 3e7 * tol;
    int nv = 300, nt = 200;
    vec3 *v = malloc(sizeof *v * (size_t)nv);
    int32_t *t = malloc(sizeof *t * 3 * (size_t)nt);
    /* Points near a few random centres at distances spread around tol (0.5 tol .. 1.5 tol),
     * at random offsets from the hash cells, so merges, near misses and cell borders mix. */
    for (int i = 0; i < nv; i++) {
      if (i < 20 || rng_int(&r, 4) == 0) {
        v[i] = v3(rng_unit(&r) * spread, rng_unit(&r) * spread, rng_unit(&r) * spread - 7 * tol);
      } else {
        vec3 base = v[rng_int(&r, i)];
        vec3 dir = v3_normalize(v3(rng_unit(&r) - 0.5, rng_unit(&r) - 0.5, rng_unit(&r) - 0.5));
        v[i] = v3_madd(base, dir, tol * (0.5 + rng_unit(&r)));
        if (rng_int(&r, 5) == 0) v[i] = base; /* exact duplicate */
      }
    }
    for (int k = 0; k < 3 * nt; k++) t[k] = rng_int(&r, nv);
    loom_mesh *m = mesh_alloc(nv, nt);
    memcpy(m->v, v, sizeof *v * (size_t)nv);
    memcpy(m->tri, t, sizeof *t * 3 * (size_t)nt);
    vec3 *ov = malloc(sizeof *ov * (size_t)nv);
    int32_t *ot = malloc(sizeof *ot * 3 * (size_t)nt);
    int onv, ont;
    reference_merge(v, nv, t, nt, tol, ov, &onv, ot, &ont);
    CHECK_MSG(mesh_merge_vertices(m, tol) == 0, "%s", loom_last_error());
    CHECK_MSG(m->nv == onv && m->nt == ont, "round %d: %d/%d vertices, %d/%d triangles", round, m->nv, onv, m->nt, ont);
    if (m->nv == onv && m->nt == ont) {
      CHECK_MSG(!memcmp(m->v, ov, sizeof *ov * (size_t)onv), "round %d: vertices differ", round);
      CHECK_MSG(!memcmp(m->tri, ot, sizeof *ot * 3 * (size_t)ont), "round %d: triangles differ", round);
    }
    loom_mesh_destroy(m);
    free(v);
    free(t);
    free(ov);
    free(ot);
  }
}

TEST(mesh_merge_tolerance_boundary) {
  /* In many directions and at many offsets against the cell grid: 0.999 tol merges, 1.001 tol
   * does not; with cells sized by tol (1e-4) and by the extent (1e-9 << 5 x 2^-20). */
  rng r = {7};
  for (int i = 0; i < 1000; i++) {
    double tol = i % 2 ? 1e-4 : 1e-9;
    vec3 p = v3(rng_unit(&r), rng_unit(&r), rng_unit(&r));
    vec3 dir = v3_normalize(v3(rng_unit(&r) - 0.5, rng_unit(&r) - 0.5, rng_unit(&r) - 0.5));
    for (int far = 0; far < 2; far++) {
      vec3 v[4] = {p, v3(5, 0, 0), v3(0, 5, 0), v3_madd(p, dir, tol * (far ? 1.001 : 0.999))};
      int32_t t[6] = {0, 1, 2, 3, 1, 2};
      loom_mesh *m = mesh_alloc(4, 2);
      memcpy(m->v, v, sizeof v);
      memcpy(m->tri, t, sizeof t);
      CHECK(mesh_merge_vertices(m, tol) == 0);
      CHECK_EQ_INT(m->nv, far ? 4 : 3);
      /* merged: the duplicate triangle (0, 1, 2) stays twice; the first position is kept */
      CHECK(m->v[0].x == p.x && m->v[0].y == p.y && m->v[0].z == p.z);
      loom_mesh_destroy(m);
    }
  }
}

TEST(mesh_merge_rules) {
  /* exact duplicates, a collapsed triangle, a collinear triangle, an unused vertex, and a chain
   * of points 0.9 tol apart (not transitive: 0 and 1.8 tol stay apart) */
  double tol = 0.1;
  vec3 v[10] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0},    {0, 1, 0},
                {9, 9, 9}, {2, 0, 0}, {0, 0, 5}, {0.09, 0, 5}, {0.18, 0, 5}};
  int32_t t[15] = {0, 1, 2,   /* kept */
                   3, 0, 4,   /* = (1, 0, 2): kept, shares edges with the first */
                   0, 3, 1,   /* collapses (3 == 1) */
                   0, 1, 6,   /* collinear, distinct corners: kept */
                   8, 9, 6};  /* 8 merges into 7, 9 does not (0.18 > tol from 7; 8 is not kept) */
  loom_mesh *m = mesh_alloc(10, 5);
  memcpy(m->v, v, sizeof v);
  memcpy(m->tri, t, sizeof t);
  CHECK(mesh_merge_vertices(m, tol) == 0);
  /* survivors in order: 0, 1, 2, 6, 7, 9 (5 unused, 3/4/8 merged) */
  CHECK_EQ_INT(m->nv, 6);
  CHECK_EQ_INT(m->nt, 4);
  int32_t want[12] = {0, 1, 2, 1, 0, 2, 0, 1, 3, 4, 5, 3};
  CHECK(m->nt == 4 && !memcmp(m->tri, want, sizeof want));
  CHECK(m->nv == 6 && m->v[3].x == 2 && m->v[4].x == 0 && m->v[4].z == 5 && m->v[5].x == 0.18);
  check_adjacency_reference(m, "merged");
  loom_mesh_destroy(m);

  loom_mesh *g = loom_mesh_grid(1, 1, 2, 2, NULL, 0);
  CHECK(mesh_merge_vertices(g, 0) == 0);
  CHECK_EQ_INT(loom_mesh_grid_dims(g, NULL, NULL), 1); /* nothing merged: still a grid */
  CHECK(mesh_merge_vertices(g, 0.6) == 0);
  CHECK_EQ_INT(loom_mesh_grid_dims(g, NULL, NULL), 0); /* renumbered: no longer a grid */
  loom_mesh_destroy(g);

  loom_mesh *s = loom_mesh_sphere(1, 8, 4);
  CHECK(mesh_merge_vertices(s, -1) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "tolerance");
  CHECK(mesh_merge_vertices(s, NAN) == -1);
  CHECK_EQ_INT(loom_mesh_vertex_count(s), 8 * 3 + 2); /* unchanged on failure */
  loom_mesh_destroy(s);
}

static int cmp_tri_pos(const void *a, const void *b) {
  const vec3 *p = a, *q = b;
  for (int k = 0; k < 3; k++) {
    int c = cmp_vec3(&p[k], &q[k]);
    if (c) return c;
  }
  return 0;
}

/* Triangles as position triples, each rotated to start at its smallest corner, sorted: the
 * geometry independent of vertex numbering and triangle order. */
static vec3 *canonical_triangles(const loom_mesh *m) {
  vec3 *out = malloc(sizeof *out * 3 * (size_t)(m->nt ? m->nt : 1));
  for (int t = 0; t < m->nt; t++) {
    vec3 p[3] = {m->v[m->tri[3 * t]], m->v[m->tri[3 * t + 1]], m->v[m->tri[3 * t + 2]]};
    int s = 0;
    for (int k = 1; k < 3; k++)
      if (cmp_vec3(&p[k], &p[s]) < 0) s = k;
    for (int k = 0; k < 3; k++) out[3 * t + k] = p[(s + k) % 3];
  }
  qsort(out, (size_t)m->nt, 3 * sizeof *out, cmp_tri_pos);
  return out;
}

TEST(mesh_merge_independent_of_input_order) {
  /* A sphere exploded into a triangle soup (every corner its own vertex) twice, once with the
   * soup shuffled: exact duplicates merge back to the same geometry whatever the order. With
   * jitter below tol/2 the clusters are unambiguous, so the counts must not depend on it either. */
  loom_mesh *s = loom_mesh_sphere(1, 12, 7);
  int nt = s->nt;
  rng r = {99};
  int32_t *perm = malloc(sizeof *perm * (size_t)nt);
  for (int i = 0; i < nt; i++) perm[i] = i;
  for (int i = nt - 1; i > 0; i--) {
    int j = rng_int(&r, i + 1);
    int32_t x = perm[i];
    perm[i] = perm[j];
    perm[j] = x;
  }
  for (int jitter = 0; jitter < 2; jitter++) {
    double tol = 1e-3;
    loom_mesh *a = mesh_alloc(3 * nt, nt), *b = mesh_alloc(3 * nt, nt);
    for (int t = 0; t < nt; t++)
      for (int k = 0; k < 3; k++) {
        vec3 p = s->v[s->tri[3 * t + k]];
        vec3 j = jitter ? v3(0.2 * tol * (rng_unit(&r) - 0.5), 0.2 * tol * (rng_unit(&r) - 0.5), 0) : v3(0, 0, 0);
        a->v[3 * t + k] = v3_add(p, j);
        a->tri[3 * t + k] = 3 * t + k;
        /* b: triangles in shuffled order, corners rotated */
        b->v[3 * perm[t] + (k + 1) % 3] = v3_add(p, j);
        b->tri[3 * perm[t] + k] = 3 * perm[t] + k;
      }
    /* rotate b's corner order back so windings agree: corner k of t sits at slot (k + 1) % 3 */
    for (int t = 0; t < nt; t++) {
      int32_t *c = b->tri + 3 * t;
      int32_t x = c[0];
      c[0] = c[1];
      c[1] = c[2];
      c[2] = x;
    }
    CHECK(mesh_merge_vertices(a, tol) == 0 && mesh_merge_vertices(b, tol) == 0);
    CHECK_EQ_INT(a->nv, s->nv);
    CHECK_EQ_INT(b->nv, s->nv);
    CHECK_EQ_INT(a->nt, nt);
    CHECK_EQ_INT(b->nt, nt);
    if (!jitter && a->nt == nt && b->nt == nt) {
      vec3 *ca = canonical_triangles(a), *cb = canonical_triangles(b), *cs = canonical_triangles(s);
      CHECK(!memcmp(ca, cb, sizeof *ca * 3 * (size_t)nt));
      CHECK(!memcmp(ca, cs, sizeof *ca * 3 * (size_t)nt));
      free(ca);
      free(cb);
      free(cs);
      CHECK(check_closed_oriented(b, "re-merged soup") == s->ne);
    }
    loom_mesh_destroy(a);
    loom_mesh_destroy(b);
  }
  free(perm);
  loom_mesh_destroy(s);
}

TEST(mesh_merge_large_is_fast) {
  /* 300k corners of a 100k-triangle soup: spatial hashing keeps this linear. */
  loom_mesh *g = loom_mesh_grid(1, 1, 250, 200, NULL, 0);
  int nt = g->nt;
  loom_mesh *soup = mesh_alloc(3 * nt, nt);
  for (int k = 0; k < 3 * nt; k++) {
    soup->v[k] = g->v[g->tri[k]];
    soup->tri[k] = k;
  }
  CHECK(mesh_merge_vertices(soup, 1e-9) == 0);
  CHECK_EQ_INT(soup->nv, g->nv);
  CHECK_EQ_INT(soup->ne, g->ne);
  loom_mesh_destroy(soup);
  loom_mesh_destroy(g);
}

/* ---- from_arrays, transform, copy, NULL ------------------------------------------------------ */

TEST(mesh_from_arrays_validates_and_copies) {
  /* vertex 3 sits on vertex 1: merged, the two triangles would share all three edges */
  vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 0, 0}};
  int32_t t[6] = {0, 1, 2, 2, 3, 0};
  loom_mesh *m = loom_mesh_from_arrays(v, 4, t, 2);
  CHECK(m != NULL);
  if (m) {
    CHECK_EQ_INT(loom_mesh_vertex_count(m), 4); /* no merging */
    CHECK_EQ_INT(loom_mesh_edge_count(m), 5);
    CHECK_EQ_INT(loom_mesh_hinge_count(m), 1);
    v[0].x = 42;
    t[0] = 2;
    CHECK(loom_mesh_vertices(m)[0].x == 0 && loom_mesh_triangles(m)[0] == 0); /* copied */
    loom_mesh_destroy(m);
  }
  v[0].x = 0;
  t[0] = 0;
  loom_mesh *e = loom_mesh_from_arrays(NULL, 0, NULL, 0);
  CHECK(e != NULL && loom_mesh_vertex_count(e) == 0 && loom_mesh_edge_count(e) == 0);
  CHECK(loom_mesh_edges(e) != NULL && loom_mesh_hinges(e) != NULL);
  loom_mesh_destroy(e);

#define EXPECT_ARRAYS_FAIL(vv, nv, tt, nt, needle)                     \
  do {                                                                 \
    loom_mesh *m_ = loom_mesh_from_arrays(vv, nv, tt, nt);             \
    CHECK_MSG(m_ == NULL, "accepted: %s", needle);                     \
    CHECK_STR_CONTAINS(loom_last_error(), needle);                     \
    loom_mesh_destroy(m_);                                             \
  } while (0)
  EXPECT_ARRAYS_FAIL(v, -1, t, 1, "vertex count must be >= 0");
  EXPECT_ARRAYS_FAIL(v, 4, t, -2, "triangle count must be >= 0");
  EXPECT_ARRAYS_FAIL(NULL, 4, t, 1, "vertex array is NULL");
  EXPECT_ARRAYS_FAIL(v, 4, NULL, 1, "triangle array is NULL");
  int32_t out_of_range[3] = {0, 1, 4};
  EXPECT_ARRAYS_FAIL(v, 4, out_of_range, 1, "triangle 0: vertex index 4 out of range (4 vertices)");
  int32_t negative[3] = {0, -1, 2};
  EXPECT_ARRAYS_FAIL(v, 4, negative, 1, "vertex index -1 out of range");
  int32_t repeated[6] = {0, 1, 2, 2, 1, 2};
  EXPECT_ARRAYS_FAIL(v, 4, repeated, 2, "triangle 1 has repeated corners");
  vec3 nan_v[3] = {{0, 0, 0}, {1, NAN, 0}, {0, 1, 0}};
  EXPECT_ARRAYS_FAIL(nan_v, 3, t, 1, "vertex 1 has a non-finite coordinate");
  vec3 inf_v[3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, -INFINITY}};
  EXPECT_ARRAYS_FAIL(inf_v, 3, t, 1, "vertex 2 has a non-finite coordinate");
#undef EXPECT_ARRAYS_FAIL
}

TEST(mesh_transform_scale_rotate_translate) {
  vec3 v[3] = {{1, 1, 1}, {2, 0, 0}, {0, 0, 3}};
  int32_t t[3] = {0, 1, 2};
  loom_mesh *m = loom_mesh_from_arrays(v, 3, t, 1);
  /* 90 degrees about z, given unnormalised (times 2): x' = R (s x) + t */
  loom_quat q = {2 * cos(PI / 4), 0, 0, 2 * sin(PI / 4)};
  loom_vec3 s = {2, 3, 4}, d = {1, 2, 3};
  loom_mesh_transform(m, &s, &q, &d);
  const vec3 *p = loom_mesh_vertices(m);
  /* (1,1,1) -> s: (2,3,4) -> R: (-3,2,4) -> +t: (-2,4,7) */
  CHECK_NEAR(p[0].x, -2, 1e-14);
  CHECK_NEAR(p[0].y, 4, 1e-14);
  CHECK_NEAR(p[0].z, 7, 1e-14);
  CHECK_NEAR(p[1].x, 1, 1e-14);
  CHECK_NEAR(p[1].y, 6, 1e-14);
  CHECK_NEAR(p[2].z, 15, 1e-14);
  /* NULL arguments are the identity */
  vec3 before = p[1];
  loom_mesh_transform(m, NULL, NULL, NULL);
  CHECK(p[1].x == before.x && p[1].y == before.y && p[1].z == before.z);
  /* a rotation alone preserves lengths and the triangle */
  loom_quat q2 = {0.3, -0.4, 1.2, 0.5};
  double l01 = v3_dist(p[0], p[1]);
  loom_mesh_transform(m, NULL, &q2, NULL);
  CHECK_NEAR(v3_dist(p[0], p[1]), l01, 1e-13);
  CHECK(loom_mesh_triangles(m)[0] == 0 && loom_mesh_edge_count(m) == 3);
  loom_mesh_destroy(m);

  /* a transformed sphere keeps its volume under rotation and scales it by sx sy sz */
  loom_mesh *sp = loom_mesh_sphere(1, 24, 12);
  double v0 = signed_volume(sp);
  loom_vec3 sc = {2, 0.5, 3};
  loom_mesh_transform(sp, &sc, &q2, &d);
  CHECK_NEAR(signed_volume(sp), 3 * v0, 1e-12 * v0);
  loom_mesh_destroy(sp);
}

TEST(mesh_copy_is_deep) {
  loom_mesh *g = loom_mesh_grid(2, 1, 4, 3, NULL, LOOM_PLANE_XZ);
  loom_mesh *c = loom_mesh_copy(g);
  CHECK(c != NULL);
  if (!c) return;
  CHECK(c->nv == g->nv && c->nt == g->nt && c->ne == g->ne && c->nh == g->nh);
  CHECK(!memcmp(c->v, g->v, sizeof *c->v * (size_t)g->nv));
  CHECK(!memcmp(c->tri, g->tri, sizeof *c->tri * 3 * (size_t)g->nt));
  CHECK(!memcmp(c->edge, g->edge, sizeof *c->edge * 2 * (size_t)g->ne));
  CHECK(!memcmp(c->edge_tri, g->edge_tri, sizeof *c->edge_tri * 2 * (size_t)g->ne));
  CHECK(!memcmp(c->hinge, g->hinge, sizeof *c->hinge * 4 * (size_t)g->nh));
  int nx, ny;
  CHECK(loom_mesh_grid_dims(c, &nx, &ny) == 1 && nx == 5 && ny == 4);
  CHECK(c->v != g->v && c->tri != g->tri && c->hinge != g->hinge);
  loom_vec3 d = {1, 1, 1};
  loom_mesh_transform(c, NULL, NULL, &d);
  CHECK(g->v[0].x == -1.0); /* the original did not move */
  loom_mesh_destroy(c);
  loom_mesh_destroy(g);
}

TEST(mesh_null_tolerance) {
  loom_vec3 lo = {9, 9, 9}, hi = {9, 9, 9};
  int nx = 9, ny = 9;
  loom_mesh_destroy(NULL);
  loom_mesh_transform(NULL, NULL, NULL, NULL);
  loom_mesh_aabb(NULL, &lo, &hi);
  CHECK(lo.x == 0 && hi.z == 0);
  loom_mesh_aabb(NULL, NULL, NULL);
  CHECK(loom_mesh_vertex_count(NULL) == 0 && loom_mesh_triangle_count(NULL) == 0);
  CHECK(loom_mesh_edge_count(NULL) == 0 && loom_mesh_hinge_count(NULL) == 0);
  CHECK(!loom_mesh_vertices(NULL) && !loom_mesh_triangles(NULL) && !loom_mesh_edges(NULL) && !loom_mesh_hinges(NULL));
  CHECK(loom_mesh_grid_dims(NULL, &nx, &ny) == 0 && nx == 0 && ny == 0);
  CHECK(loom_mesh_copy(NULL) == NULL);
  CHECK(loom_mesh_save_obj(NULL, NULL, harness_tmp("null.obj")) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "mesh is NULL");
  CHECK(loom_mesh_load(NULL) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "path is NULL");
  CHECK(mesh_validate(NULL) == -1 && mesh_build_adjacency(NULL) == -1 && mesh_merge_vertices(NULL, 0) == -1);
  loom_mesh *s = loom_mesh_sphere(1, 4, 3);
  CHECK(loom_mesh_save_obj(s, NULL, NULL) == -1);
  loom_mesh_destroy(s);
}

/* ---- OBJ output and round trip --------------------------------------------------------------- */

TEST(mesh_save_obj_round_trip_is_exact) {
  loom_quat q = {0.9, 0.1, -0.3, 0.2};
  loom_vec3 d = {0.1, -1.0 / 3, 1e-7};
  loom_mesh *ms[] = {loom_mesh_sphere(0.7, 17, 9), loom_mesh_torus(1.1, 0.3, 13, 7), loom_mesh_grid(1, 2, 5, 4, &d, 1),
                     loom_mesh_box(1e-3, 2e5, 1, 2)};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
    loom_mesh *m = ms[i];
    loom_mesh_transform(m, NULL, &q, &d); /* coordinates with all 17 digits in play */
    const char *path = harness_tmp("round_trip.obj");
    CHECK_MSG(loom_mesh_save_obj(m, NULL, path) == 0, "%s", loom_last_error());
    loom_mesh *b = loom_mesh_load(path);
    CHECK_MSG(b != NULL, "%s", loom_last_error());
    if (b) {
      CHECK(b->nv == m->nv && b->nt == m->nt && b->ne == m->ne && b->nh == m->nh);
      CHECK_MSG(b->nv == m->nv && !memcmp(b->v, m->v, sizeof *b->v * (size_t)m->nv), "mesh %zu: vertices differ", i);
      CHECK_MSG(b->nt == m->nt && !memcmp(b->tri, m->tri, sizeof *b->tri * 3 * (size_t)m->nt), "mesh %zu: triangles", i);
    }
    loom_mesh_destroy(b);
    /* x replaces the positions */
    vec3 *x = malloc(sizeof *x * (size_t)m->nv);
    for (int k = 0; k < m->nv; k++) x[k] = v3_scale(m->v[k], -2.5);
    CHECK(loom_mesh_save_obj(m, x, path) == 0);
    b = loom_mesh_load(path);
    CHECK(b != NULL && b->nv == m->nv && !memcmp(b->v, x, sizeof *x * (size_t)m->nv));
    loom_mesh_destroy(b);
    free(x);
    remove(path);
    loom_mesh_destroy(m);
  }
}

TEST(mesh_save_obj_errors) {
  loom_mesh *s = loom_mesh_sphere(1, 4, 3);
  CHECK(loom_mesh_save_obj(s, NULL, "/nonexistent-dir/x.obj") == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "/nonexistent-dir/x.obj: cannot open for writing (No such file or directory)");
  vec3 x[6] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, NAN}, {0, 0, 1}, {1, 1, 1}};
  const char *path = harness_tmp("nan.obj");
  CHECK(loom_mesh_save_obj(s, x, path) == -1);
  CHECK_STR_CONTAINS(loom_last_error(), "vertex 3 has a non-finite coordinate");
  if (!access("/dev/full", W_OK)) {
    CHECK(loom_mesh_save_obj(s, NULL, "/dev/full") == -1);
    CHECK_STR_CONTAINS(loom_last_error(), "/dev/full: write failed (No space left on device)");
  }
  loom_mesh_destroy(s);
}

/* ---- loading: good files --------------------------------------------------------------------- */

static loom_mesh *load_data(const char *name) {
  loom_mesh *m = loom_mesh_load(harness_data(name));
  CHECK_MSG(m != NULL, "%s: %s", name, loom_last_error());
  if (m) check_mesh_invariants(m, name);
  return m;
}

TEST(mesh_load_simple_cloth_stl) {
  /* The 000 document's simpleCloth: 2 facets covering -0.5..0.5 in x and y at z = 1.2. */
  loom_mesh *m = load_data("simpleCloth.stl");
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_vertex_count(m), 4);
  CHECK_EQ_INT(loom_mesh_triangle_count(m), 2);
  CHECK_EQ_INT(loom_mesh_edge_count(m), 5);
  CHECK_EQ_INT(loom_mesh_hinge_count(m), 1);
  loom_vec3 lo, hi;
  loom_mesh_aabb(m, &lo, &hi);
  CHECK(lo.x == -0.5 && lo.y == -0.5 && hi.x == 0.5 && hi.y == 0.5 && lo.z == 1.2 && hi.z == 1.2);
  for (int t = 0; t < 2; t++) {
    const int32_t *c = m->tri + 3 * t;
    vec3 n = v3_cross(v3_sub(m->v[c[1]], m->v[c[0]]), v3_sub(m->v[c[2]], m->v[c[0]]));
    CHECK_NEAR(n.z, 1.0, 1e-15); /* facing +z, half the square each */
  }
  loom_mesh_destroy(m);
}

TEST(mesh_load_binary_stl_cube) {
  /* 12 facets, 36 corners -> 8 vertices, closed, volume 8 (side 2). */
  loom_mesh *a = load_data("cube_binary.stl");
  loom_mesh *b = load_data("cube_binary_solid_header.stl"); /* "solid" header + padding: still binary */
  if (!a || !b) {
    loom_mesh_destroy(a);
    loom_mesh_destroy(b);
    return;
  }
  closed_case c = {"cube_binary.stl", a, 2, 8, 12, 8.0, 1e-15};
  check_closed(&c);
  CHECK(a->nv == b->nv && a->nt == b->nt && !memcmp(a->v, b->v, sizeof *a->v * (size_t)a->nv) &&
        !memcmp(a->tri, b->tri, sizeof *a->tri * 3 * (size_t)a->nt));
  loom_mesh_destroy(a);
  loom_mesh_destroy(b);
}

TEST(mesh_load_obj_polygons_fan_from_first_corner) {
  loom_mesh *m = load_data("polygons.obj");
  if (!m) return;
  int32_t want[15] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7, 4, 7, 8};
  CHECK_EQ_INT(loom_mesh_vertex_count(m), 9);
  CHECK(loom_mesh_triangle_count(m) == 5 && !memcmp(loom_mesh_triangles(m), want, sizeof want));
  CHECK(m->v[6].x == 4.5 && m->v[6].y == 1);
  loom_mesh_destroy(m);
}

TEST(mesh_load_obj_negative_indices) {
  loom_mesh *m = load_data("negative.obj");
  if (!m) return;
  int32_t want[6] = {0, 1, 2, 1, 3, 2}; /* -3 -1 -2 after the 4th vertex: 2 4 3 */
  CHECK(loom_mesh_triangle_count(m) == 2 && !memcmp(loom_mesh_triangles(m), want, sizeof want));
  loom_mesh_destroy(m);
}

TEST(mesh_load_obj_corner_forms_and_ignored_keywords) {
  loom_mesh *m = load_data("forms.obj");
  if (!m) return;
  int32_t want[9] = {0, 1, 2, 0, 2, 3, 1, 4, 2};
  CHECK_EQ_INT(loom_mesh_vertex_count(m), 5);
  CHECK(loom_mesh_triangle_count(m) == 3 && !memcmp(loom_mesh_triangles(m), want, sizeof want));
  CHECK(m->v[0].x == 0 && m->v[0].y == 0 && m->v[0].z == 0); /* w ignored */
  loom_mesh_destroy(m);
}

TEST(mesh_load_obj_crlf_and_comments) {
  loom_mesh *m = load_data("crlf.obj");
  if (m) {
    CHECK_EQ_INT(loom_mesh_vertex_count(m), 4);
    CHECK_EQ_INT(loom_mesh_triangle_count(m), 2);
    CHECK(m->v[2].x == 1 && m->v[2].y == 1 && m->v[2].z == 0);
    loom_mesh_destroy(m);
  }
  m = load_data("comments.obj");
  if (m) {
    CHECK_EQ_INT(loom_mesh_vertex_count(m), 3);
    CHECK_EQ_INT(loom_mesh_triangle_count(m), 1);
    loom_mesh_destroy(m);
  }
  /* classic Mac line ends (lone CR) and a byte order mark */
  m = load_text("cr.obj", "\xEF\xBB\xBFv 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r");
  CHECK_MSG(m != NULL, "%s", loom_last_error());
  if (m) CHECK(m->nv == 3 && m->nt == 1 && m->v[1].x == 1);
  loom_mesh_destroy(m);
}

TEST(mesh_load_drops_degenerate_keeps_collinear) {
  loom_mesh *m = load_data("mixed_degenerate.obj");
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_vertex_count(m), 4);
  CHECK_EQ_INT(loom_mesh_triangle_count(m), 2);
  int32_t want[6] = {0, 1, 2, 0, 1, 3};
  CHECK(m->nt == 2 && !memcmp(m->tri, want, sizeof want));
  loom_mesh_destroy(m);
}

TEST(mesh_load_long_lines) {
  /* A 1 MB comment, a padded vertex line and one polygon of 100000 corners on a single line. */
  int n = 100000;
  size_t cap = 64 + (size_t)n * 60 + 2000000;
  char *text = malloc(cap);
  size_t k = 0;
  text[k++] = '#';
  memset(text + k, 'x', 1000000);
  k += 1000000;
  text[k++] = '\n';
  for (int i = 0; i < n; i++) {
    double a = 2 * PI * i / n;
    k += (size_t)snprintf(text + k, cap - k, "v %.17g %.17g 0\n", cos(a), sin(a));
  }
  k += (size_t)snprintf(text + k, cap - k, "v%*s1 1 1\n", 500000, "");
  text[k++] = 'f';
  for (int i = 1; i <= n; i++) k += (size_t)snprintf(text + k, cap - k, " %d", i);
  text[k++] = '\n';
  const char *path = harness_tmp("long_lines.obj");
  CHECK(write_file(path, text, k) == 0);
  free(text);
  loom_mesh *m = loom_mesh_load(path);
  remove(path);
  CHECK_MSG(m != NULL, "%s", loom_last_error());
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_vertex_count(m), n); /* the padded vertex is unused: dropped */
  CHECK_EQ_INT(loom_mesh_triangle_count(m), n - 2);
  CHECK(m->tri[3 * (n - 3)] == 0 && m->tri[3 * (n - 3) + 1] == n - 2 && m->tri[3 * (n - 3) + 2] == n - 1);
  loom_mesh_destroy(m);
}

TEST(mesh_load_numbers_match_strtod) {
  /* The fast decimal path and strtod must agree bit for bit (correct rounding either way). */
  const char *fixed[] = {"0.1",     "-2.5e-3", "1e22",   "1e23",  "123456789012345", "1234567890123456789",
                         "0.30000000000000004",  "4.9e-324", "2.2250738585072014e-308", "+7",  "-0",
                         ".5",      "5.",      "1E5",    "0x1p-3", "3.14159265358979323846264338327950288",
                         "9007199254740993",   "1e-22", "0.000001", "-1.7976931348623157e308", "00000.000125"};
  size_t nf = sizeof fixed / sizeof fixed[0];
  for (size_t i = 0; i < nf; i++) {
    char text[256];
    snprintf(text, sizeof text, "v %s 0 0\nv %s 1 0\nv %s 0 1\nf 1 2 3\n", fixed[i], fixed[i], fixed[i]);
    loom_mesh *m = load_text("num.obj", text);
    CHECK_MSG(m != NULL, "%s: %s", fixed[i], loom_last_error());
    if (!m) continue;
    double want = strtod(fixed[i], NULL);
    CHECK_MSG(!memcmp(&m->v[0].x, &want, sizeof want), "'%s' read as %.17g, strtod %.17g", fixed[i], m->v[0].x, want);
    loom_mesh_destroy(m);
  }
  /* random decimals of 1..17 digits, magnitudes 1e-4 .. 1e3, one triangle each */
  rng r = {2024};
  int n = 3000;
  size_t cap = (size_t)n * 200;
  char *text = malloc(cap), (*strs)[40] = malloc(sizeof *strs * (size_t)n);
  size_t k = 0;
  for (int i = 0; i < n; i++) {
    int digits = 1 + rng_int(&r, 17), point = rng_int(&r, digits + 1);
    char *s = strs[i];
    int j = 0;
    if (rng_int(&r, 2)) s[j++] = '-';
    for (int d = 0; d < digits; d++) {
      if (d == point && d > 0) s[j++] = '.';
      s[j++] = (char)('0' + (d == 0 ? 1 + rng_int(&r, 9) : rng_int(&r, 10)));
    }
    int ex = rng_int(&r, 8) - 4 - (digits - point);
    j += sprintf(s + j, "e%d", ex);
    double x = strtod(s, NULL);
    if (!(fabs(x) < 1e3)) {
      sprintf(s, "%d.5", i % 100);
    }
    k += (size_t)snprintf(text + k, cap - k, "v %s %d 0\nv %s %d 0\nv %s %d 1\nf -3 -2 -1\n", s, 2 * i, s, 2 * i + 1, s,
                          2 * i);
  }
  loom_mesh *m = mesh_load_memory("random_numbers.obj", text, k);
  CHECK_MSG(m != NULL, "%s", loom_last_error());
  if (m) {
    CHECK_EQ_INT(m->nv, 3 * n);
    int bad = 0;
    for (int i = 0; i < n && m->nv == 3 * n && bad < 5; i++) {
      double want = strtod(strs[i], NULL);
      if (memcmp(&m->v[3 * i].x, &want, sizeof want)) {
        harness_fail(__FILE__, __LINE__, "'%s' read as %.17g, strtod %.17g", strs[i], m->v[3 * i].x, want);
        bad++;
      }
    }
    loom_mesh_destroy(m);
  }
  free(text);
  free(strs);
}

TEST(mesh_load_merges_within_relative_tolerance) {
  /* Two facets sharing an edge whose shared corners are written slightly differently: 1e-12
   * apart (well inside 1e-9 x diagonal) they merge, 1e-6 apart they do not. */
  for (int far = 0; far < 2; far++) {
    double e = far ? 1e-6 : 1e-12;
    char text[1024];
    snprintf(text, sizeof text,
             "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n"
             "facet normal 0 0 1\nouter loop\nvertex %.17g 0 0\nvertex 1 1 0\nvertex 0 %.17g 0\nendloop\nendfacet\n"
             "endsolid s\n",
             1 + e, 1 - e);
    loom_mesh *m = load_text("near.stl", text);
    CHECK_MSG(m != NULL, "%s", loom_last_error());
    if (!m) continue;
    CHECK_EQ_INT(m->nv, far ? 6 : 4);
    CHECK_EQ_INT(m->nh, far ? 0 : 1);
    loom_mesh_destroy(m);
  }
}

TEST(mesh_load_extreme_extent) {
  /* Found while writing the fuzz targets (their message check flags it): finite coordinates
   * near +-DBL_MAX on all three axes made the merge tolerance (1e-9 x the diagonal) infinite,
   * and the file was refused with "merge tolerance must be finite". It loads with its four
   * distinct corners. */
  loom_mesh *m = load_data("extreme_extent.obj");
  if (!m) return;
  CHECK_EQ_INT(loom_mesh_vertex_count(m), 4);
  CHECK_EQ_INT(loom_mesh_triangle_count(m), 2);
  CHECK(m->v[0].x == -1.7e308 && m->v[1].y == 1.7e308 && m->v[2].z == 0 && m->v[3].z == -1.7e308);
  loom_mesh_destroy(m);
}

/* ---- loading: malformed files ---------------------------------------------------------------- */

TEST(mesh_load_malformed_files_report_file_line_problem) {
  struct {
    const char *file, *problem;
  } cases[] = {
      {"truncated.stl", ": truncated binary STL (expected 1200 triangles, got 37)"},
      {"huge_count.stl", ": truncated binary STL (expected 2147483648 triangles, got 2)"},
      {"random.bin", ": truncated binary STL (expected "},
      {"nonfinite_binary.stl", ": non-finite coordinate in triangle 2"},
      {"empty.obj", ": empty file"},
      {"bad_keyword.stl", ":7: expected 'vertex', got 'vertx'"},
      {"nonfinite_ascii.stl", ":5: non-finite coordinate 'inf'"},
      {"bad_number.stl", ":5: bad number '0,5'"},
      {"missing_endsolid.stl", ":8: expected 'endsolid', got end of file"},
      {"four_vertices.stl", ":7: expected 'endloop', got 'vertex'"},
      {"empty_solid.stl", ": no triangles"},
      {"bad_index.obj", ":12: face index 40 out of range (9 vertices)"},
      {"index_zero.obj", ":4: face index 0 is invalid"},
      {"index_overflow.obj", ":4: face index 99999999999999999999 overflows"},
      {"negative_out_of_range.obj", ":3: face index -3 out of range (2 vertices defined before this line)"},
      {"two_corners.obj", ":5: face with 2 corners (need at least 3)"},
      {"nonfinite.obj", ":3: non-finite coordinate 'nan'"},
      {"huge_number.obj", ":2: non-finite coordinate '1e999'"},
      {"bad_number.obj", ":3: bad number '1.5.2'"},
      {"bad_corner.obj", ":4: bad face corner '2/x'"},
      {"short_vertex.obj", ":2: vertex needs 3 coordinates (got 2)"},
      {"no_faces.obj", ": no triangles"},
      {"degenerate.obj", ": no triangles (all 2 are degenerate)"},
      {"does_not_exist.obj", ": cannot open (No such file or directory)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[4096], want[4096];
    snprintf(path, sizeof path, "%s", harness_data(cases[i].file));
    snprintf(want, sizeof want, "%s%s", path, cases[i].problem);
    loom_clear_error();
    loom_mesh *m = loom_mesh_load(path);
    CHECK_MSG(m == NULL, "%s loaded", cases[i].file);
    loom_mesh_destroy(m);
    /* the message starts with the path: nothing (such as a Lua prefix) before it */
    const char *msg = loom_last_error();
    CHECK_MSG(!strncmp(msg, want, strlen(want)), "%s: message \"%s\", expected \"%s...\"", cases[i].file, msg, want);
  }
  /* a directory */
  loom_mesh *m = loom_mesh_load(harness_data_dir());
  CHECK(m == NULL);
  loom_mesh_destroy(m);
  char want[4096];
  snprintf(want, sizeof want, "%s: cannot read (Is a directory)", harness_data_dir());
  CHECK_STR_CONTAINS(loom_last_error(), want);
  /* in-memory edge cases */
  struct {
    const char *text, *problem;
  } mem[] = {
      {"   \n\t\n", "m.obj: no triangles"},
      {"f 1 2 3\n", "m.obj:1: face index 1 out of range (0 vertices)"},
      {"v 1 2 3\nf 1 1\n", "m.obj:2: face with 2 corners"},
      {"v 1 2 3\nf\n", "m.obj:2: face with 0 corners"},
      {"v 1 2 3\nf 1//\n", "m.obj:2: face with 1 corner (need"},
      {"v 1 2 3\nf 1/2/3/4 1 1\n", "m.obj:2: bad face corner '1/2/3/4'"},
      {"v 1 2 3\nf -99999999999999999999 1 1\n", "m.obj:2: face index -99999999999999999999 overflows"},
      {"v 1 2 3\nf 2147483648 1 1\n", "m.obj:2: face index 2147483648 overflows"},
      {"v\n", "m.obj:1: vertex needs 3 coordinates (got 0)"},
      {"v 1 2 3e\n", "m.obj:1: bad number '3e'"},
      {"v 1 2 0x\n", "m.obj:1: bad number '0x'"},
      {"solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid x\n"
       "garbage\n",
       "m.obj:10: expected 'solid' or end of file, got 'garbage'"},
      {"solid x\nfacet normal 0 0\nouter loop\n", "m.obj:3: bad number 'outer'"},
      {"solid x\nfacet\n", "m.obj:2: expected 'normal', got end of file"},
      {"solid\n", "m.obj:1: expected 'endsolid', got end of file"},
      {"solid x\nvertex 1 2 3\n", "m.obj:2: expected 'facet' or 'endsolid', got 'vertex'"},
      {"\x01\x02\x03", "m.obj: unrecognised format"},
      /* one vertex far out sets the merge tolerance (a billionth of the size) that welds the rest:
       * the message names it and the world's reach */
      {"v 0 0 1\nv 1e12 0 1\nv 0 1 1\nv 1 1 1\nf 1 2 3\nf 1 3 4\n",
       "m.obj: no triangles (all 2 are degenerate once points closer than 1e+03 m are merged, a billionth of the "
       "mesh's size): vertex 2 at (1e+12, 0, 1) lies beyond the 1e+06 m from the origin the world reaches"},
  };
  for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
    loom_mesh *mm = load_text("m.obj", mem[i].text);
    CHECK_MSG(mm == NULL, "case %zu loaded", i);
    loom_mesh_destroy(mm);
    CHECK_STR_CONTAINS(loom_last_error(), mem[i].problem);
  }
}

TEST(mesh_load_survives_mutations) {
  /* Random byte edits, insertions and truncations of valid files: every outcome is either a
   * valid mesh or NULL with a message naming the input. Under ASan and valgrind this also
   * checks that no error path reads out of bounds or leaks. */
  const char *files[] = {"simpleCloth.stl", "cube_binary.stl", "polygons.obj", "forms.obj", "negative.obj"};
  static const char alphabet[] = "0123456789+-.eE/ \n\r\tvfsolidfacetnormalvertex#\0\xff";
  rng r = {31337};
  int loaded = 0, failed = 0;
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    FILE *fp = fopen(harness_data(files[f]), "rb");
    CHECK(fp != NULL);
    if (!fp) continue;
    char orig[4096];
    size_t n = fread(orig, 1, sizeof orig, fp);
    fclose(fp);
    for (int iter = 0; iter < 400; iter++) {
      char buf[4200];
      size_t len = n;
      memcpy(buf, orig, n);
      int edits = 1 + rng_int(&r, 4);
      for (int e = 0; e < edits; e++) {
        int kind = rng_int(&r, 4);
        size_t at = len ? (size_t)rng_int(&r, (int)len) : 0;
        char c = alphabet[rng_int(&r, (int)sizeof alphabet - 1)];
        if (kind == 0 && len) buf[at] = c;
        else if (kind == 1 && len < sizeof buf - 1) {
          memmove(buf + at + 1, buf + at, len - at);
          buf[at] = c;
          len++;
        } else if (kind == 2 && len) {
          memmove(buf + at, buf + at + 1, len - at - 1);
          len--;
        } else if (kind == 3) {
          len = at;
        }
      }
      loom_mesh *m = mesh_load_memory("fuzz.bin", buf, len);
      if (m) {
        loaded++;
        CHECK(m->nt > 0);
        check_mesh_invariants(m, "fuzz");
        loom_mesh_destroy(m);
      } else {
        failed++;
        CHECK_MSG(!strncmp(loom_last_error(), "fuzz.bin", 8), "message \"%s\"", loom_last_error());
      }
    }
  }
  CHECK(loaded > 100 && failed > 100); /* the mutations exercise both outcomes */
}
