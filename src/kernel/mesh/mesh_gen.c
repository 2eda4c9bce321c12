/* mesh_gen.c — procedural meshes: the cloth grid and the closed shapes used for obstacles and
 * rigid-body render meshes (box, UV sphere, cylinder, capsule, torus).
 *
 * Closed shapes are manifold, have no duplicate vertices and wind counter-clockwise seen from
 * outside (positive signed volume). Segment counts are capped at MESH_MAX_SEGMENTS (box
 * divisions at 1024) so that no argument can ask for more than ~2^25 triangles. */
#include "mesh/mesh.h"

#include <string.h>

#define BOX_MAX_DIVISIONS 1024
#define CAPSULE_MAX_RINGS (MESH_MAX_SEGMENTS / 2)


/* ---- argument checks (messages name the parameter as loom.h does) ---------------------------- */

static int check_positive(const char *name, double x) {
  if (!isfinite(x) || !(x > 0)) return loom_fail("%s must be a finite number > 0 (got %g)", name, x);
  return 0;
}

static int check_count(const char *name, int n, int lo, int hi) {
  if (n < lo || n > hi) return loom_fail("%s must be in [%d, %d] (got %d)", name, lo, hi, n);
  return 0;
}

/* Final step shared by the generators: reject coordinates that overflowed (huge but finite
 * arguments) and build the adjacency. Frees m on failure. */
static loom_mesh *finish(loom_mesh *m) {
  for (int i = 0; i < m->nv; i++)
    if (!v3_isfinite(m->v[i])) {
      loom_mesh_destroy(m);
      loom_fail("arguments too large: vertex coordinates overflow");
      return NULL;
    }
  if (mesh_build_adjacency(m)) {
    loom_mesh_destroy(m);
    return NULL;
  }
  return m;
}

/* Splits the quad a b c d (counter-clockwise) into triangles t[0..5] along a-c or b-d. */
static void quad(int32_t *t, int32_t a, int32_t b, int32_t c, int32_t d, int diag_bd) {
  if (!diag_bd) {
    int32_t q[6] = {a, b, c, a, c, d};
    memcpy(t, q, sizeof q);
  } else {
    int32_t q[6] = {a, b, d, b, c, d};
    memcpy(t, q, sizeof q);
  }
}

/* (2 i - n) / (2 n): the parameter of sample i of n intervals on [-1/2, 1/2]. Numerator and
 * denominator are exact, so samples i and n - i are exact negatives and the ends are exactly
 * +-1/2: the grid is symmetric about its centre. */
static double sample(int i, int n) { return (double)(2 * i - n) / (2.0 * n); }

/* ---- grid ------------------------------------------------------------------------------------ */

LOOM_API loom_mesh *loom_mesh_grid(double w, double h, int nx, int ny, const loom_vec3 *center, int plane) {
  if (check_positive("w", w) || check_positive("h", h) || check_count("nx", nx, 1, MESH_MAX_SEGMENTS) ||
      check_count("ny", ny, 1, MESH_MAX_SEGMENTS))
    return NULL;
  if (plane != LOOM_PLANE_XY && plane != LOOM_PLANE_XZ && plane != LOOM_PLANE_YZ) {
    loom_fail("plane must be LOOM_PLANE_XY, LOOM_PLANE_XZ or LOOM_PLANE_YZ (got %d)", plane);
    return NULL;
  }
  vec3 c = center ? *center : v3(0, 0, 0);
  if (!v3_isfinite(c)) {
    loom_fail("center must be finite");
    return NULL;
  }
  /* u, v axes with n = u x v: XY -> (x, y), n = +z; XZ -> (x, z), n = -y; YZ -> (y, z), n = +x. */
  static const int axes[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  int ua = axes[plane][0], va = axes[plane][1];
  int gx = nx + 1, gy = ny + 1;
  loom_mesh *m = mesh_alloc(gx * gy, 2 * nx * ny);
  if (!m) return NULL;
  for (int j = 0; j < gy; j++)
    for (int i = 0; i < gx; i++) {
      double p[3] = {c.x, c.y, c.z};
      p[ua] += w * sample(i, nx);
      p[va] += h * sample(j, ny);
      m->v[j * gx + i] = v3(p[0], p[1], p[2]);
    }
  /* Alternating diagonals ((i + j) parity) keep the grid free of a preferred shear direction. */
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++) {
      int32_t a = j * gx + i, b = a + 1, d = a + gx, cc = d + 1;
      quad(m->tri + 6 * ((size_t)j * nx + i), a, b, cc, d, (i + j) & 1);
    }
  m->grid_nx = gx;
  m->grid_ny = gy;
  return finish(m);
}

/* ---- box ------------------------------------------------------------------------------------- */

LOOM_API loom_mesh *loom_mesh_box(double hx, double hy, double hz, int divisions) {
  if (check_positive("hx", hx) || check_positive("hy", hy) || check_positive("hz", hz) ||
      check_count("divisions", divisions, 1, BOX_MAX_DIVISIONS))
    return NULL;
  int d = divisions, g = d + 1;
  double half[3] = {hx, hy, hz};
  /* Each face is a grid over (u, v) with u x v the outward normal; faces sample their
   * coordinates from one table per axis, so vertices shared by two or three faces are bitwise
   * identical and an exact merge (tol = 0) welds them. */
  static const struct { int n, s, u, v; } face[6] = {
      {0, +1, 1, 2}, {0, -1, 2, 1}, {1, +1, 2, 0}, {1, -1, 0, 2}, {2, +1, 0, 1}, {2, -1, 1, 0}};
  double *tab = core_alloc(3 * (size_t)g, sizeof *tab);
  if (!tab) return NULL;
  for (int a = 0; a < 3; a++)
    for (int i = 0; i < g; i++) tab[a * g + i] = half[a] * (2.0 * sample(i, d));
  loom_mesh *m = mesh_alloc(6 * g * g, 12 * d * d);
  if (!m) {
    core_free(tab);
    return NULL;
  }
  for (int f = 0; f < 6; f++) {
    int32_t base = f * g * g;
    for (int j = 0; j < g; j++)
      for (int i = 0; i < g; i++) {
        double p[3];
        p[face[f].n] = face[f].s * half[face[f].n];
        p[face[f].u] = tab[face[f].u * g + i];
        p[face[f].v] = tab[face[f].v * g + j];
        m->v[base + j * g + i] = v3(p[0], p[1], p[2]);
      }
    for (int j = 0; j < d; j++)
      for (int i = 0; i < d; i++) {
        int32_t a = base + j * g + i, b = a + 1, dd = a + g, c = dd + 1;
        quad(m->tri + 6 * ((size_t)f * d * d + (size_t)j * d + i), a, b, c, dd, (i + j) & 1);
      }
  }
  core_free(tab);
  if (mesh_merge_vertices(m, 0.0)) {
    loom_mesh_destroy(m);
    return NULL;
  }
  return m;
}

/* ---- surfaces of revolution about z ---------------------------------------------------------- */

/* Closed surface of revolution: a pole at (0, 0, z_top), `nc` circles of radius rho[k] at
 * height z[k] from top to bottom with `seg` vertices each, a pole at (0, 0, z_bot). Fans close
 * both ends, quads (two triangles) join consecutive circles. V = seg nc + 2, F = 2 seg nc,
 * E = 3 seg nc: V - E + F = 2. Vertex 0 is the top pole, 1 + k seg + j is sample j of circle k,
 * the last vertex is the bottom pole. */
static loom_mesh *revolve(int seg, int nc, const double *rho, const double *z, double z_top, double z_bot) {
  loom_mesh *m = mesh_alloc(seg * nc + 2, 2 * seg * nc);
  if (!m) return NULL;
  double *cs = core_alloc(2 * (size_t)seg, sizeof *cs);
  if (!cs) {
    loom_mesh_destroy(m);
    return NULL;
  }
  for (int j = 0; j < seg; j++) {
    double phi = 2.0 * LOOM_PI * j / seg;
    cs[2 * j] = cos(phi);
    cs[2 * j + 1] = sin(phi);
  }
  int32_t top = 0, bot = seg * nc + 1;
  m->v[top] = v3(0, 0, z_top);
  m->v[bot] = v3(0, 0, z_bot);
  for (int k = 0; k < nc; k++)
    for (int j = 0; j < seg; j++) m->v[1 + k * seg + j] = v3(rho[k] * cs[2 * j], rho[k] * cs[2 * j + 1], z[k]);
  core_free(cs);

  /* Seen from outside with z up, increasing phi runs to the right, so (upper-left, lower-left,
   * lower-right, upper-right) is counter-clockwise; the top fan is counter-clockwise seen from
   * +z and the bottom fan seen from -z. */
  int32_t *t = m->tri;
  for (int j = 0; j < seg; j++) {
    int j1 = (j + 1) % seg;
    *t++ = top;
    *t++ = 1 + j;
    *t++ = 1 + j1;
  }
  for (int k = 0; k + 1 < nc; k++)
    for (int j = 0; j < seg; j++) {
      int j1 = (j + 1) % seg;
      int32_t a = 1 + k * seg + j, a1 = 1 + k * seg + j1, b = a + seg, b1 = a1 + seg;
      quad(t, a, b, b1, a1, 0);
      t += 6;
    }
  for (int j = 0; j < seg; j++) {
    int j1 = (j + 1) % seg;
    *t++ = bot;
    *t++ = 1 + (nc - 1) * seg + j1;
    *t++ = 1 + (nc - 1) * seg + j;
  }
  return finish(m);
}

LOOM_API loom_mesh *loom_mesh_sphere(double r, int segments, int rings) {
  if (check_positive("r", r) || check_count("segments", segments, 3, MESH_MAX_SEGMENTS) ||
      check_count("rings", rings, 2, MESH_MAX_SEGMENTS))
    return NULL;
  int nc = rings - 1;
  double *rho = core_alloc(2 * (size_t)nc, sizeof *rho);
  if (!rho) return NULL;
  double *z = rho + nc;
  for (int k = 0; k < nc; k++) {
    double th = LOOM_PI * (k + 1) / rings; /* polar angle from +z */
    rho[k] = r * sin(th);
    z[k] = r * cos(th);
  }
  loom_mesh *m = revolve(segments, nc, rho, z, r, -r);
  core_free(rho);
  return m;
}

LOOM_API loom_mesh *loom_mesh_cylinder(double r, double half_h, int segments, int rings) {
  if (check_positive("r", r) || check_positive("half_h", half_h) ||
      check_count("segments", segments, 3, MESH_MAX_SEGMENTS) || check_count("rings", rings, 1, MESH_MAX_SEGMENTS))
    return NULL;
  int nc = rings + 1;
  double *rho = core_alloc(2 * (size_t)nc, sizeof *rho);
  if (!rho) return NULL;
  double *z = rho + nc;
  for (int k = 0; k < nc; k++) {
    rho[k] = r;
    z[k] = -2.0 * half_h * sample(k, rings); /* +half_h .. -half_h, exact at both ends */
  }
  /* The poles are the cap centres, level with the end circles: flat fan caps. */
  loom_mesh *m = revolve(segments, nc, rho, z, half_h, -half_h);
  core_free(rho);
  return m;
}

/* `rings` counts the latitude bands of each hemispherical cap (>= 1; 1 gives cones); the
 * cylindrical part is a single band since subdividing a straight side adds no shape. With
 * half_h = 0 the two equators coincide and are emitted once: the result is a sphere. */
LOOM_API loom_mesh *loom_mesh_capsule(double r, double half_h, int segments, int rings) {
  if (check_positive("r", r)) return NULL;
  if (!isfinite(half_h) || !(half_h >= 0)) {
    loom_fail("half_h must be a finite number >= 0 (got %g)", half_h);
    return NULL;
  }
  if (check_count("segments", segments, 3, MESH_MAX_SEGMENTS) || check_count("rings", rings, 1, CAPSULE_MAX_RINGS))
    return NULL;
  int nc = half_h > 0 ? 2 * rings : 2 * rings - 1;
  double *rho = core_alloc(2 * (size_t)nc, sizeof *rho);
  if (!rho) return NULL;
  double *z = rho + nc;
  for (int k = 0; k < rings; k++) {
    /* Circle k + 1 of the top cap at polar angle (k + 1) / rings * pi / 2; the equator is set
     * exactly (cos(pi / 2) is 6e-17, not 0), and the bottom cap mirrors the top bit for bit. */
    double th = 0.5 * LOOM_PI * (k + 1) / rings;
    double s = k + 1 == rings ? 1.0 : sin(th), c = k + 1 == rings ? 0.0 : cos(th);
    rho[k] = r * s;
    z[k] = half_h + r * c;
    rho[nc - 1 - k] = r * s;
    z[nc - 1 - k] = -(half_h + r * c);
  }
  loom_mesh *m = revolve(segments, nc, rho, z, half_h + r, -(half_h + r));
  core_free(rho);
  return m;
}

/* ---- torus ----------------------------------------------------------------------------------- */

LOOM_API loom_mesh *loom_mesh_torus(double R, double r, int major, int minor) {
  if (check_positive("R", R) || check_positive("r", r)) return NULL;
  if (!(r < R)) {
    loom_fail("r must be smaller than R (got r = %g, R = %g)", r, R);
    return NULL;
  }
  if (check_count("major", major, 3, MESH_MAX_SEGMENTS) || check_count("minor", minor, 3, MESH_MAX_SEGMENTS))
    return NULL;
  loom_mesh *m = mesh_alloc(major * minor, 2 * major * minor);
  if (!m) return NULL;
  double *cs = core_alloc(2 * (size_t)minor, sizeof *cs);
  if (!cs) {
    loom_mesh_destroy(m);
    return NULL;
  }
  for (int j = 0; j < minor; j++) {
    double th = 2.0 * LOOM_PI * j / minor; /* around the tube, 0 = outer equator */
    cs[2 * j] = cos(th);
    cs[2 * j + 1] = sin(th);
  }
  for (int i = 0; i < major; i++) {
    double phi = 2.0 * LOOM_PI * i / major, cp = cos(phi), sp = sin(phi);
    for (int j = 0; j < minor; j++) {
      double rho = R + r * cs[2 * j];
      m->v[i * minor + j] = v3(rho * cp, rho * sp, r * cs[2 * j + 1]);
    }
  }
  core_free(cs);
  /* d/dphi x d/dtheta points away from the tube centre, so (i, j), (i+1, j), (i+1, j+1),
   * (i, j+1) is counter-clockwise seen from outside. */
  for (int i = 0; i < major; i++)
    for (int j = 0; j < minor; j++) {
      int i1 = (i + 1) % major, j1 = (j + 1) % minor;
      quad(m->tri + 6 * ((size_t)i * minor + j), i * minor + j, i1 * minor + j, i1 * minor + j1, i * minor + j1,
           (i + j) & 1);
    }
  return finish(m);
}
