/* render.c — the canvas: buffers, clear, camera and light, projection and picking rays, and the 2D
 * overlay primitives (rectangles, lines). Triangles and 3D lines live in render_raster.c, text in
 * render_text.c, PNG files in render_image.c. */
#include "render.h"

#include <math.h>
#include <stdlib.h>

#define DEG2RAD 0.017453292519943295

/* ---- vectors (the renderer may not use the kernel's math headers) ---------------------------- */

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double a[3], const double b[3], double out[3]) {
  double x = a[1] * b[2] - a[2] * b[1];
  double y = a[2] * b[0] - a[0] * b[2];
  double z = a[0] * b[1] - a[1] * b[0];
  out[0] = x;
  out[1] = y;
  out[2] = z;
}

/* Normalises in place; returns the original length (0 leaves v unchanged). */
static double normalize3(double v[3]) {
  double n = sqrt(dot3(v, v));
  if (n > 0) {
    v[0] /= n;
    v[1] /= n;
    v[2] /= n;
  }
  return n;
}

static int finite_vec(const loom_vec3 *v) { return isfinite(v->x) && isfinite(v->y) && isfinite(v->z); }

/* ---- canvas ---------------------------------------------------------------------------------- */

static int valid_size(int w, int h) { return w >= 1 && h >= 1 && w <= RENDER_MAX_SIZE && h <= RENDER_MAX_SIZE; }

/* Basis and focal length from c->cam (already validated) and the current size. */
static void update_camera(loom_canvas *c) {
  const loom_camera *k = &c->cam;
  double f[3] = {k->target.x - k->eye.x, k->target.y - k->eye.y, k->target.z - k->eye.z};
  normalize3(f);
  double up[3] = {k->up.x, k->up.y, k->up.z}, r[3];
  cross3(f, up, r);
  /* An up vector parallel to the view direction (looking straight down with up = z) is a normal
   * request, not an error: fall back to the world axis least aligned with the view. */
  if (!(normalize3(r) > 1e-9 * sqrt(dot3(up, up)))) {
    double ax[3] = {0, 0, 0};
    int m = 0;
    for (int i = 1; i < 3; i++)
      if (fabs(f[i]) < fabs(f[m])) m = i;
    ax[m] = 1;
    cross3(f, ax, r);
    normalize3(r);
  }
  cross3(r, f, up);
  for (int i = 0; i < 3; i++) {
    c->fwd[i] = f[i];
    c->right[i] = r[i];
    c->up[i] = up[i];
  }
  c->focal = 0.5 * c->h / tan(0.5 * k->fov_deg * DEG2RAD);
}

LOOM_API loom_canvas *loom_canvas_create(int w, int h) {
  if (!valid_size(w, h)) {
    loom_fail("loom_canvas_create: size %d x %d outside 1..%d", w, h, RENDER_MAX_SIZE);
    return NULL;
  }
  loom_canvas *c = calloc(1, sizeof *c);
  if (!c) {
    loom_fail("loom_canvas_create: out of memory");
    return NULL;
  }
  /* A usable default view of the origin from the front-right, lit from above the camera. */
  c->cam = (loom_camera){{2.5, -3.5, 2.0}, {0, 0, 0.5}, {0, 0, 1}, 45.0, 0.01, 1000.0};
  double l[3] = {0.4, -0.3, 1.0};
  normalize3(l);
  memcpy(c->light, l, sizeof l);
  if (loom_canvas_resize(c, w, h) != 0) {
    free(c);
    return NULL;
  }
  loom_canvas_clear(c, 0x000000ffu);
  return c;
}

LOOM_API void loom_canvas_destroy(loom_canvas *c) {
  if (!c) return;
  free(c->px);
  free(c->depth);
  free(c->scratch);
  free(c);
}

LOOM_API int loom_canvas_resize(loom_canvas *c, int w, int h) {
  if (!c) return loom_fail("loom_canvas_resize: canvas is NULL");
  if (!valid_size(w, h)) return loom_fail("loom_canvas_resize: size %d x %d outside 1..%d", w, h, RENDER_MAX_SIZE);
  if (c->px && c->w == w && c->h == h) return 0;
  size_t n = (size_t)w * (size_t)h;
  uint32_t *px = malloc(n * sizeof *px);
  float *depth = malloc(n * sizeof *depth);
  if (!px || !depth) {
    free(px);
    free(depth);
    return loom_fail("loom_canvas_resize: out of memory for %d x %d pixels", w, h);
  }
  free(c->px);
  free(c->depth);
  c->px = px;
  c->depth = depth;
  c->w = w;
  c->h = h;
  update_camera(c); /* the focal length depends on the height */
  /* Contents are documented as undefined, but "undefined" should not mean uninitialised memory
   * that valgrind flags or a PNG leaks: start from transparent black at the far plane. */
  loom_canvas_clear(c, 0);
  return 0;
}

LOOM_API int loom_canvas_width(const loom_canvas *c) { return c ? c->w : 0; }
LOOM_API int loom_canvas_height(const loom_canvas *c) { return c ? c->h : 0; }
LOOM_API uint8_t *loom_canvas_pixels(loom_canvas *c) { return c ? (uint8_t *)c->px : NULL; }

LOOM_API void loom_canvas_clear(loom_canvas *c, uint32_t rgba) {
  if (!c) return;
  size_t n = (size_t)c->w * (size_t)c->h;
  uint32_t v = render_from_rgba(rgba);
  float far = (float)(1.0 / c->cam.zfar);
  uint32_t *px = c->px;
  float *depth = c->depth;
  for (size_t i = 0; i < n; i++) px[i] = v;
  for (size_t i = 0; i < n; i++) depth[i] = far;
}

LOOM_API void loom_canvas_set_camera(loom_canvas *c, const loom_camera *cam) {
  if (!c || !cam) return;
  if (!finite_vec(&cam->eye) || !finite_vec(&cam->target) || !finite_vec(&cam->up)) {
    loom_fail("loom_canvas_set_camera: eye, target and up must be finite");
    return;
  }
  double d[3] = {cam->target.x - cam->eye.x, cam->target.y - cam->eye.y, cam->target.z - cam->eye.z};
  double u[3] = {cam->up.x, cam->up.y, cam->up.z};
  if (!(dot3(d, d) > 0)) {
    loom_fail("loom_canvas_set_camera: eye and target coincide");
    return;
  }
  if (!(dot3(u, u) > 0)) {
    loom_fail("loom_canvas_set_camera: up is zero");
    return;
  }
  if (!(cam->fov_deg > 0 && cam->fov_deg < 180)) {
    loom_fail("loom_canvas_set_camera: fov_deg must be in (0, 180), got %g", cam->fov_deg);
    return;
  }
  if (!(cam->znear > 0 && cam->zfar > cam->znear && isfinite(cam->znear))) {
    loom_fail("loom_canvas_set_camera: need 0 < znear < zfar, got znear %g, zfar %g", cam->znear, cam->zfar);
    return;
  }
  c->cam = *cam;
  update_camera(c);
}

LOOM_API void loom_canvas_set_light(loom_canvas *c, const loom_vec3 *dir) {
  if (!c || !dir) return;
  double l[3] = {dir->x, dir->y, dir->z};
  if (!finite_vec(dir) || !(normalize3(l) > 0)) {
    loom_fail("loom_canvas_set_light: direction must be finite and non-zero");
    return;
  }
  memcpy(c->light, l, sizeof l);
}

/* ---- projection ------------------------------------------------------------------------------ */

LOOM_API int loom_canvas_project(const loom_canvas *c, const loom_vec3 *p, double *sx, double *sy, double *depth) {
  double x = 0, y = 0, z = 0;
  int front = 0;
  if (c && p) {
    double d[3] = {p->x - c->cam.eye.x, p->y - c->cam.eye.y, p->z - c->cam.eye.z};
    double vx = dot3(d, c->right), vy = dot3(d, c->up);
    z = dot3(d, c->fwd);
    x = 0.5 * c->w;
    y = 0.5 * c->h;
    /* Behind the eye the same formula gives the mirrored position, which callers that ignore the
     * return value would misread less badly than a NaN; on the eye plane it is undefined. */
    if (z != 0) {
      x += c->focal * vx / z;
      y -= c->focal * vy / z;
    }
    front = z > 0;
  }
  if (sx) *sx = x;
  if (sy) *sy = y;
  if (depth) *depth = z;
  return front;
}

LOOM_API void loom_canvas_ray(const loom_canvas *c, double sx, double sy, loom_vec3 *origin, loom_vec3 *dir) {
  double o[3] = {0, 0, 0}, d[3] = {0, 0, 0};
  if (c) {
    /* Exact inverse of loom_canvas_project: the point at view depth 1 under pixel (sx, sy). */
    double u = (sx - 0.5 * c->w) / c->focal, v = (0.5 * c->h - sy) / c->focal;
    for (int i = 0; i < 3; i++) d[i] = c->fwd[i] + u * c->right[i] + v * c->up[i];
    normalize3(d);
    o[0] = c->cam.eye.x;
    o[1] = c->cam.eye.y;
    o[2] = c->cam.eye.z;
  }
  if (origin) *origin = (loom_vec3){o[0], o[1], o[2]};
  if (dir) *dir = (loom_vec3){d[0], d[1], d[2]};
}

/* ---- 2D primitives --------------------------------------------------------------------------- */

int render_centre_range(double a, double b, int n, int *i0, int *i1) {
  if (!(a < b)) return 0;
  /* Clamp before converting so that huge values never overflow an int. */
  if (a < -1.0) a = -1.0;
  if (b > n + 1.0) b = n + 1.0;
  if (!(a < b)) return 0;
  int lo = (int)ceil(a - 0.5), hi = (int)ceil(b - 0.5) - 1;
  if (lo < 0) lo = 0;
  if (hi > n - 1) hi = n - 1;
  if (lo > hi) return 0;
  *i0 = lo;
  *i1 = hi;
  return 1;
}

void render_blend_span(loom_canvas *c, int j, int i0, int i1, uint32_t rgba) {
  uint32_t *row = c->px + (size_t)j * (size_t)c->w;
  if ((rgba & 255u) == 255u) {
    uint32_t v = render_from_rgba(rgba);
    for (int i = i0; i <= i1; i++) row[i] = v;
  } else {
    for (int i = i0; i <= i1; i++) render_blend(&row[i], rgba);
  }
}

/* Covers the pixels whose centres lie in [x, x + w) x [y, y + h); non-positive sizes draw nothing. */
LOOM_API void loom_canvas_rect(loom_canvas *c, double x, double y, double w, double h, uint32_t rgba) {
  if (!c) return;
  int i0, i1, j0, j1;
  if (!render_centre_range(x, x + w, c->w, &i0, &i1) || !render_centre_range(y, y + h, c->h, &j0, &j1)) return;
  for (int j = j0; j <= j1; j++) render_blend_span(c, j, i0, i1, rgba);
}

void render_line(loom_canvas *c, double x0, double y0, double z0, double x1, double y1, double z1, uint32_t rgba,
                 int depth) {
  if (!(isfinite(x0) && isfinite(y0) && isfinite(x1) && isfinite(y1))) return;
  /* Step one pixel at a time along the major axis: every column (row) from the one holding the
   * first endpoint to the one holding the last gets exactly one pixel, taken where the line
   * crosses that column's centre (clamped to the segment). Both endpoint pixels are drawn, and a
   * pixel is never visited twice, so translucent lines blend evenly. */
  int xmajor = fabs(x1 - x0) >= fabs(y1 - y0);
  double u0 = xmajor ? x0 : y0, u1 = xmajor ? x1 : y1;
  double v0 = xmajor ? y0 : x0, v1 = xmajor ? y1 : x1;
  if (u0 > u1) {
    double t = u0;
    u0 = u1;
    u1 = t;
    t = v0;
    v0 = v1;
    v1 = t;
    t = z0;
    z0 = z1;
    z1 = t;
  }
  int nu = xmajor ? c->w : c->h, nv = xmajor ? c->h : c->w;
  if (u1 < 0 || u0 >= nu) return;
  /* floor() of the endpoint columns, clamped to the canvas; u0 < nu and u1 >= 0 here, so
   * truncation is floor wherever the clamp does not apply (and avoids a libm call per line). */
  int ia = u0 <= 0 ? 0 : (int)u0, ib = u1 >= nu - 1 ? nu - 1 : (int)u1;
  double du = u1 - u0, dv = v1 - v0, dz = z1 - z0, inv = du > 0 ? 1.0 / du : 0.0;
  /* Locals, so that stores into the buffers cannot force reloads of the canvas fields. */
  uint32_t *px = c->px;
  float *zb = c->depth;
  size_t su = xmajor ? 1 : (size_t)c->w, sv = xmajor ? (size_t)c->w : 1;
  int opaque = (rgba & 255u) == 255u;
  uint32_t solid = render_from_rgba(rgba);
  for (int i = ia; i <= ib; i++) {
    double uc = i + 0.5;
    if (uc < u0) uc = u0;
    if (uc > u1) uc = u1;
    double t = (uc - u0) * inv, v = v0 + t * dv;
    if (!(v >= 0 && v < nv)) continue; /* also rejects NaN; makes truncation equal floor */
    size_t k = (size_t)i * su + (size_t)(int)v * sv;
    if (depth) {
      float z = (float)(z0 + t * dz);
      if (!(z * (1.0f + RENDER_DEPTH_BIAS) > zb[k])) continue;
      if (z > zb[k]) zb[k] = z;
    }
    if (opaque)
      px[k] = solid;
    else
      render_blend(&px[k], rgba);
  }
}

LOOM_API void loom_canvas_line2(loom_canvas *c, double x0, double y0, double x1, double y1, uint32_t rgba) {
  if (!c) return;
  render_line(c, x0, y0, 0, x1, y1, 0, rgba, 0);
}
