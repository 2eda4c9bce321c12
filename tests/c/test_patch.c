/* test_patch.c — smooth patches (contact_patch.c): the certificate that a patch of a surface cannot
 * touch itself over a substep (continuous normal cone, Tang et al. 2009; star-shaped contour,
 * Schvartzman, Perez & Otaduy 2010; winding once), checked on flat and bent sheets, on what it must
 * refuse (a fold, a sheet turning over, a double cover whose every edge still turns the right way)
 * and, on random deformations and motions, against the exact continuous tests: no pair of
 * features of a certified patch meets during the substep. */
#include <stdlib.h>
#include <string.h>

#include "kernel_fixtures.h"
#include "contact/contact.h"
#include "geom/geom.h"

/* A surface of n vertices starting at x0 and moving by d over the substep (h = 1: vbar = d), rest
 * positions rest (x0 when NULL), triangles tri (nt x 3), its unique edges as the pipeline makes
 * them. Freed with surface_free. */
static particles *surface(int n, const vec3 *rest, const vec3 *x0, const vec3 *d, int nt, const int32_t *tri) {
  particles *p = calloc(1, sizeof *p);
  if (!p || particles_alloc(p, n, nt)) return p;
  memcpy(p->tri, tri, sizeof(int32_t) * 3 * (size_t)nt);
  memcpy(p->rest, rest ? rest : x0, sizeof(vec3) * (size_t)n);
  p->x_sub = core_alloc((size_t)n, sizeof(vec3));
  p->col.vbar = core_alloc((size_t)n, sizeof(vec3));
  memcpy(p->x_sub, x0, sizeof(vec3) * (size_t)n);
  memcpy(p->col.vbar, d, sizeof(vec3) * (size_t)n);
  p->col.ne = contact_unique_edges(tri, nt, NULL, &p->col.edge);
  return p;
}

static void surface_free(particles *p) {
  if (!p) return;
  core_free(p->x_sub);
  p->x_sub = NULL;
  particles_free(p);
  free(p);
}

/* Triangles of a grid of nx x ny vertices (vertex i + nx j), counter-clockwise seen from +z when
 * the grid lies in the xy plane with x along i. */
static int grid_tris(int nx, int ny, int32_t *tri) {
  int nt = 0;
  for (int j = 0; j + 1 < ny; j++)
    for (int i = 0; i + 1 < nx; i++) {
      const int32_t a = i + nx * j, b = a + 1, c = a + nx, d = c + 1;
      tri[3 * nt] = a, tri[3 * nt + 1] = b, tri[3 * nt + 2] = d, nt++;
      tri[3 * nt] = a, tri[3 * nt + 1] = d, tri[3 * nt + 2] = c, nt++;
    }
  return nt;
}

enum { G = 9 }; /* grid side in vertices: 128 triangles, a hierarchy of several levels */

static uint8_t scratch[4096]; /* (patch_certify's: a byte per vertex) */

TEST(patch_flat_and_bent_sheets_are_one_patch) {
  int32_t tri[6 * (G - 1) * (G - 1)];
  const int nt = grid_tris(G, G, tri);
  vec3 rest[G * G], x0[G * G], d[G * G];
  fx_rng r = {7};
  for (int bent = 0; bent < 2; bent++) {
    for (int j = 0; j < G; j++)
      for (int i = 0; i < G; i++) {
        const double u = (double)i / (G - 1), v = (double)j / (G - 1);
        rest[i + G * j] = v3(u, v, 0);
        /* bent: a cylinder arc of 60 degrees about the y axis, radius 1 m */
        const double a = (u - 0.5) * FX_PI / 3;
        x0[i + G * j] = bent ? v3(sin(a), v, 1 - cos(a)) : v3(u, v, 0);
        /* falling and drifting together, each vertex jittered by a fifth of a cell */
        d[i + G * j] = v3_add(v3(0.3, -0.1, -0.5), v3_scale(fx_vec(&r), 0.2 / (G - 1)));
      }
    particles *p = surface(G * G, rest, x0, d, nt, tri);
    CHECK(p && patch_build(p) == 0);
    CHECK_EQ_INT(patch_certify(p, 1.0, 1, NULL, 0, scratch), 1);
    for (int t = 0; t < nt; t++) CHECK_EQ_INT(patch_top(p->col.pt_top, p->col.leaf_t, t), 0);
    for (int e = 0; e < p->col.ne; e++) CHECK_EQ_INT(patch_top(p->col.pt_top, p->col.leaf_e, e), 0);
    CHECK(patch_skips_point(&p->col, 0, nt - 1) && patch_skips_edges(&p->col, 0, p->col.ne - 1));
    /* switched off: no patch, nothing skipped */
    CHECK_EQ_INT(patch_certify(p, 1.0, 0, NULL, 0, scratch), 0);
    CHECK(!patch_skips_point(&p->col, 0, nt - 1) && !patch_skips_edges(&p->col, 0, p->col.ne - 1));
    surface_free(p);
  }
}

TEST(patch_refuses_a_fold_and_a_sheet_turning_over) {
  int32_t tri[6 * (G - 1) * (G - 1)];
  const int nt = grid_tris(G, G, tri);
  vec3 rest[G * G], x0[G * G], d[G * G];
  for (int kind = 0; kind < 2; kind++) {
    for (int j = 0; j < G; j++)
      for (int i = 0; i < G; i++) {
        const double u = (double)i / (G - 1), v = (double)j / (G - 1);
        rest[i + G * j] = v3(u, v, 0);
        if (kind == 0) {
          /* folded in half over x = 0.5 (a U of radius 5 mm): two layers */
          const double a = u < 0.5 ? 0 : (u - 0.5) * 8;
          const double ang = a < FX_PI ? a : FX_PI;
          x0[i + G * j] = u < 0.5 ? v3(u, v, 0) : v3(0.5 + 0.005 * sin(ang) - (a > FX_PI ? (a - FX_PI) / 8 : 0), v, 0.005 * (1 - cos(ang)));
          d[i + G * j] = v3(0, 0, 0);
        } else {
          /* flat, and mirrored through x = 0.5 by the end of the substep: it turns over */
          x0[i + G * j] = v3(u, v, 0);
          d[i + G * j] = v3(1 - 2 * u, 0, 0.01);
        }
      }
    particles *p = surface(G * G, rest, x0, d, nt, tri);
    CHECK(p && patch_build(p) == 0);
    patch_certify(p, 1.0, 1, NULL, 0, scratch);
    CHECK(p->col.pt_top[0] < 0);
    if (kind == 1) CHECK_EQ_INT(p->col.pt_certified, 0); /* every triangle turns over */
    surface_free(p);
  }
}

/* A fan of 96 triangles around a centre whose rim winds twice around it, rising 0.05 mm per
 * triangle: a disk whose triangles all face up and whose rim edges all turn the right way around
 * the centre, but which covers the plane twice. Only the winding number refuses it. */
TEST(patch_refuses_a_double_cover) {
  enum { R = 96 };
  vec3 x0[R + 1], d[R + 1];
  int32_t tri[3 * R];
  x0[R] = v3(0, 0, 0.0024);
  for (int k = 0; k < R; k++) {
    const double a = 2 * (2 * FX_PI) * k / R;
    x0[k] = v3(0.1 * cos(a), 0.1 * sin(a), 0.00005 * k);
    tri[3 * k] = R, tri[3 * k + 1] = k, tri[3 * k + 2] = (k + 1) % R;
  }
  for (int k = 0; k <= R; k++) d[k] = v3(0, 0, -0.01);
  particles *p = surface(R + 1, NULL, x0, d, R, tri);
  CHECK(p && patch_build(p) == 0);
  patch_certify(p, 1.0, 1, NULL, 0, scratch);
  /* the premises: a disk (its loop is the rim), every triangle within the cone, every rim edge
   * turning around the mean of the rim */
  CHECK_EQ_INT(p->col.pt_loop_len[0], R);
  CHECK(p->col.pt_cos[0] > 0.5);
  vec3 o = v3(0, 0, 0);
  for (int k = 0; k < R; k++) o = v3_add(o, x0[k]);
  o = v3_scale(o, 1.0 / R);
  for (int k = 0; k < R; k++) CHECK(v3_cross(v3_sub(x0[k], o), v3_sub(x0[(k + 1) % R], o)).z > 0);
  CHECK_EQ_INT(p->col.pt_certified, 0);
  CHECK(p->col.pt_top[0] < 0);
  surface_free(p);
}

/* The certificate's promise, against the exact continuous tests: random sheets (smooth waves of
 * random amplitude, jitter, and motions from gentle to folding ones); for every certified patch,
 * no vertex-triangle or edge-edge pair of its features that shares no vertex meets during the
 * substep. Many patches are certified and many refused. */
TEST(patch_certified_patches_never_touch_themselves) {
  enum { N = 10 };
  int32_t tri[6 * (N - 1) * (N - 1)];
  const int nt = grid_tris(N, N, tri);
  vec3 rest[N * N], x0[N * N], d[N * N];
  fx_rng r = {2026};
  int certified = 0, refused = 0, tested = 0, met = 0;
  for (int trial = 0; trial < 600; trial++) {
    const double amp = 0.25 * fx_unit(&r), jitter = 0.2 * fx_unit(&r), motion = 2.0 * fx_unit(&r) * fx_unit(&r);
    const double kx = 1 + 4 * fx_unit(&r), ky = 1 + 4 * fx_unit(&r), ph = 6 * fx_unit(&r);
    const vec3 drift = v3_scale(fx_vec(&r), 0.5);
    const double wx = 1 + 8 * fx_unit(&r), wph = 6 * fx_unit(&r), wamp = motion * fx_sym(&r);
    /* every third sheet a ramp wound around an axis (a helicoid strip of 1 to 2.5 turns, its
     * normals close to the axis) that the motion squeezes flat: layers over one another, which
     * only the contour tells apart from a smooth sheet */
    const int wound = trial % 3 == 2;
    const double turns = 1 + 1.5 * fx_unit(&r), pitch = 0.05 + 0.2 * fx_unit(&r), squeeze = 2 * fx_unit(&r);
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        const double u = (double)i / (N - 1), v = (double)j / (N - 1);
        const int k = i + N * j;
        rest[k] = v3(u, v, 0);
        if (wound) {
          const double a = 2 * FX_PI * turns * u, rad = 0.3 + 0.3 * v;
          x0[k] = v3(rad * cos(a), rad * sin(a), pitch * turns * u);
          d[k] = v3_add(drift, v3(0, 0, -squeeze * x0[k].z));
          continue;
        }
        x0[k] = v3_add(v3(u, v, amp * sin(kx * u + ky * v + ph)), v3_scale(fx_vec(&r), jitter / (N - 1)));
        /* a common drift, a travelling wave and per-vertex noise */
        d[k] = v3_add(drift, v3_add(v3(0, 0, wamp * sin(wx * u + wph)), v3_scale(fx_vec(&r), motion / (N - 1))));
      }
    particles *p = surface(N * N, rest, x0, d, nt, tri);
    CHECK(p && patch_build(p) == 0);
    if (!p || p->col.patches != 1) {
      surface_free(p);
      continue;
    }
    if (patch_certify(p, 1.0, 1, NULL, 0, scratch)) certified++;
    else refused++;
    const particle_collide *c = &p->col;
    /* vertex-triangle pairs the pipeline would skip */
    for (int v = 0; v < N * N; v++)
      for (int t = 0; t < nt; t++) {
        const int32_t *tr = &tri[3 * t];
        if (tr[0] == v || tr[1] == v || tr[2] == v || !patch_skips_point(c, v, t)) continue;
        const vec3 x[4] = {x0[tr[0]], x0[tr[1]], x0[tr[2]], x0[v]}, dd[4] = {d[tr[0]], d[tr[1]], d[tr[2]], d[v]};
        tested++;
        met += geom_ccd_point_triangle(x, dd, 1e-9, NULL);
      }
    for (int e = 0; e < c->ne; e++)
      for (int f = e + 1; f < c->ne; f++) {
        const int32_t *a = &c->edge[2 * e], *b = &c->edge[2 * f];
        if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1] || !patch_skips_edges(c, e, f)) continue;
        const vec3 x[4] = {x0[a[0]], x0[a[1]], x0[b[0]], x0[b[1]]}, dd[4] = {d[a[0]], d[a[1]], d[b[0]], d[b[1]]};
        tested++;
        met += geom_ccd_edge_edge(x, dd, 1e-9, NULL);
      }
    surface_free(p);
  }
  CHECK_EQ_INT(met, 0);
  CHECK_MSG(certified > 80 && refused > 100, "certified %d, refused %d", certified, refused);
  CHECK_MSG(tested > 1000000, "only %d skipped pairs tested", tested);
}
