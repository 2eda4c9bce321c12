/* render.h — private to src/render: the canvas object and the helpers its files share.
 *
 * Layering: src/render sees only libc/libm, stb and ../loom.h, never src/kernel/. Conventions
 * used throughout the renderer:
 *   - pixels are stored as uint32_t whose *memory* bytes are R, G, B, A (so the buffer handed out
 *     by loom_canvas_pixels is RGBA8 on any endianness); colours in the API are 0xRRGGBBAA values.
 *   - pixel (i, j) covers [i, i + 1) x [j, j + 1); its centre is (i + 0.5, j + 0.5); y points down.
 *   - the depth buffer holds 1 / view depth (larger = nearer). 1/z is affine in screen space, so it
 *     interpolates exactly with plane equations, and in float it keeps most precision near the
 *     camera, where it matters. Clearing stores 1 / zfar, which makes the far plane a per-pixel
 *     test at no cost.
 *   - view space: x right, y up, z forward (positive in front of the eye).
 */
#ifndef LOOM_RENDER_H
#define LOOM_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../loom.h"

/* The kernel owns the per-thread error message behind loom_last_error() (src/kernel/core.c). The
 * renderer may not include kernel headers, but loom_fail is linked into the same library, so it is
 * declared here and called directly. printf-style; always returns -1. */
int loom_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define RENDER_MAX_SIZE 16384

struct loom_canvas {
  int w, h;
  uint32_t *px;  /* w * h pixels, row-major, top row first */
  float *depth;  /* w * h values of 1 / view depth; 1 / zfar after a clear */

  loom_camera cam;      /* as last accepted by loom_canvas_set_camera (sanitised) */
  double right[3];      /* camera basis in world coordinates (orthonormal) */
  double up[3];
  double fwd[3];
  double focal;         /* pixels per unit of tan(angle) = (h / 2) / tan(fov / 2) */
  double light[3];      /* unit direction towards the light, world frame */

  void *scratch;        /* per-call working memory for meshes, grown on demand, never shrunk */
  size_t scratch_cap;   /* bytes */
};

/* Packs bytes so that the uint32_t's memory order is R, G, B, A. */
static inline uint32_t render_pack(unsigned r, unsigned g, unsigned b, unsigned a) {
  uint8_t q[4] = {(uint8_t)r, (uint8_t)g, (uint8_t)b, (uint8_t)a};
  uint32_t v;
  memcpy(&v, q, 4);
  return v;
}

/* A 0xRRGGBBAA API colour as a stored pixel. */
static inline uint32_t render_from_rgba(uint32_t rgba) {
  return render_pack(rgba >> 24, (rgba >> 16) & 255u, (rgba >> 8) & 255u, rgba & 255u);
}

/* Source-over blend of an API colour into one pixel. Each channel is
 * round((src * a + dst * (255 - a)) / 255) with a the source alpha, computed exactly in integers
 * as (x + 127) / 255 (255 is odd, so no quotient is ever exactly half way). Alpha 255 copies and
 * alpha 0 leaves the pixel unchanged. */
static inline void render_blend(uint32_t *dst, uint32_t rgba) {
  unsigned a = rgba & 255u;
  if (a == 255u) {
    *dst = render_from_rgba(rgba);
    return;
  }
  if (a == 0u) return;
  uint8_t d[4];
  memcpy(d, dst, 4);
  unsigned s[4] = {rgba >> 24, (rgba >> 16) & 255u, (rgba >> 8) & 255u, 255u};
  uint8_t o[4];
  for (int k = 0; k < 4; k++) o[k] = (uint8_t)((s[k] * a + d[k] * (255u - a) + 127u) / 255u);
  memcpy(dst, o, 4);
}

/* Blends rgba over pixels [i0, i1] (inclusive, already clipped to the canvas) of row j. */
void render_blend_span(loom_canvas *c, int j, int i0, int i1, uint32_t rgba);

/* Pixel index range [*i0, *i1] whose centres lie in [a, b) along an axis of n pixels. Returns 0
 * if the range is empty (also for NaN input). Shared by rectangles and text so that they round
 * identically. */
int render_centre_range(double a, double b, int n, int *i0, int *i1);

/* Lines and points drawn over surfaces are moved towards the eye by this fraction of their depth
 * (a line at 3 m by ~6 mm) so that they win against the surface they lie on, whose depth at a
 * given pixel centre differs from the line's by up to half a pixel's worth of slope. */
#define RENDER_DEPTH_BIAS (1.0f / 512.0f)

/* One-pixel-wide line from (x0, y0) to (x1, y1) in pixels, alpha blended. With depth != 0, z0 and
 * z1 are 1 / view depth at the endpoints (interpolated linearly in screen space, which is exact
 * for 1/z), pixels are depth tested with RENDER_DEPTH_BIAS and the depth buffer keeps the nearer
 * value. Any finite coordinates are accepted; off-canvas parts are skipped. */
void render_line(loom_canvas *c, double x0, double y0, double z0, double x1, double y1, double z1, uint32_t rgba,
                 int depth);

#endif
