/* render_raster.c — 3D drawing: meshes (vertex transform, two-sided Lambert/Gouraud shading,
 * near-plane and guard-band clipping, a half-space triangle rasterizer with a top-left fill rule
 * and a float 1/z buffer), and depth-tested 3D lines and points.
 *
 * Per mesh call every vertex is transformed once into canvas-owned scratch (view position, screen
 * position in fixed point, 1/z, lighting), then each triangle is set up once and only its
 * clipped bounding box is scanned with incrementally updated integer edge functions. */
#include "render.h"

#include <math.h>
#include <stdlib.h>

/* Screen positions are snapped to 1/256 px (as D3D-class hardware does). Coverage is decided on
 * these integers with exact 64-bit edge functions, so two triangles sharing an edge agree on
 * every pixel centre: no cracks and no pixel drawn twice. */
#define SUB 256
/* Vertices projecting further than GUARD px from the screen centre are clipped in view space
 * first. This keeps fixed-point coordinates below 2^29 and edge-function values below 2^61. */
#define GUARD 1048576.0
/* View coordinates beyond this many metres are treated like NaN: their triangles are skipped
 * rather than rasterized with meaningless float precision. */
#define COORD_LIMIT 1e15

/* Two-sided Lambert plus a weak headlight, so that faces turned away from the light still show
 * their shape instead of a flat ambient. Clamped to 1. */
#define AMBIENT 0.30f
#define DIFFUSE 0.60f
#define HEADLIGHT 0.20f
/* Wireframe overlays use the surface colour scaled by this. */
#define WIRE_DARKEN 0.35f

enum { V_BAD = 1, V_BEHIND = 2, V_GUARD = 4, V_FAR = 8 };

/* One mesh vertex after the per-call transform. View space is x right, y up, z forward. */
typedef struct rvert {
  float x, y, z;    /* view position, m */
  float sx, sy, iz; /* screen position (px) and 1/z; valid only without V_BAD/V_BEHIND/V_GUARD */
  int32_t X, Y;     /* sx, sy in 1/SUB px */
  float nx, ny, nz; /* smooth shading: sum of adjacent triangle normals, each |n| = 2 x area */
  float lf, lb;     /* intensity of the front and the back side */
  uint32_t flags;
} rvert;

/* Triangle corner handed to the rasterizer. */
typedef struct sv {
  int32_t X, Y;
  float iz;
  float lf, lb;  /* intensity if the triangle turns out front / back facing */
  float r, g, b; /* unshaded colour 0..255 (FILL_RGB only) */
} sv;

/* Corner of a polygon being clipped in view space. */
typedef struct cvert {
  float x, y, z;
  float lf, lb, r, g, b;
  int src; /* mesh vertex it is, or -1 for a point created by clipping */
} cvert;

enum { FILL_FLAT, FILL_SMOOTH, FILL_RGB };

typedef struct style {
  int mode;
  const uint32_t *lut[2]; /* [front, back]: pixel for intensity k / 255 */
} style;

/* Camera data needed per vertex, in the form used by the inner loops. */
typedef struct viewer {
  double cx, cy, f, znear, zfar;
} viewer;

static viewer make_viewer(const loom_canvas *c) {
  return (viewer){0.5 * c->w, 0.5 * c->h, c->focal, c->cam.znear, c->cam.zfar};
}

static void world_to_view(const loom_canvas *c, const loom_vec3 *p, double v[3]) {
  double d[3] = {p->x - c->cam.eye.x, p->y - c->cam.eye.y, p->z - c->cam.eye.z};
  v[0] = d[0] * c->right[0] + d[1] * c->right[1] + d[2] * c->right[2];
  v[1] = d[0] * c->up[0] + d[1] * c->up[1] + d[2] * c->up[2];
  v[2] = d[0] * c->fwd[0] + d[1] * c->fwd[1] + d[2] * c->fwd[2];
}

static void *scratch(loom_canvas *c, size_t bytes) {
  if (bytes <= c->scratch_cap) return c->scratch;
  size_t cap = c->scratch_cap + c->scratch_cap / 2;
  if (cap < bytes) cap = bytes;
  /* Contents need not survive, so free + malloc avoids realloc's copy. */
  free(c->scratch);
  c->scratch = malloc(cap);
  c->scratch_cap = c->scratch ? cap : 0;
  if (!c->scratch) loom_fail("loom_canvas_mesh: out of memory (%zu bytes of scratch)", cap);
  return c->scratch;
}

static inline float shade(float ndotl, float ndote) {
  float s = AMBIENT + DIFFUSE * (ndotl > 0 ? ndotl : 0.0f) + HEADLIGHT * (ndote > 0 ? ndote : 0.0f);
  return s < 1.0f ? s : 1.0f;
}

/* NaN-safe: anything not above 0 maps to 0. */
static inline int lut_index(float s) {
  float t = s * 255.0f + 0.5f;
  return t > 0.0f ? (t < 255.0f ? (int)t : 255) : 0;
}

static inline unsigned channel(float v) {
  v += 0.5f;
  return v > 0.0f ? (v < 255.0f ? (unsigned)v : 255u) : 0u;
}

static inline int64_t floor_div(int64_t a, int64_t d) { return a >= 0 ? a / d : -((-a + d - 1) / d); }

/* ---- triangle rasterizer --------------------------------------------------------------------- */

typedef struct plane {
  float v, gx, gy; /* value at the first pixel centre of the box, gradient per pixel */
} plane;

static plane make_plane(double a0, double a1, double a2, double x1, double y1, double x2, double y2, double inv_area,
                        double ox, double oy) {
  double gx = ((a1 - a0) * y2 - (a2 - a0) * y1) * inv_area;
  double gy = ((a2 - a0) * x1 - (a1 - a0) * x2) * inv_area;
  return (plane){(float)(a0 + gx * ox + gy * oy), (float)gx, (float)gy};
}

/* Pineda 1988 ("A parallel algorithm for polygon rasterization"): a pixel is inside when all three
 * edge functions are non-negative; each is affine, so it advances by a constant per pixel. */
static void raster_tri(loom_canvas *c, const sv *p0, const sv *p1, const sv *p2, const style *st) {
  int64_t area = (int64_t)(p1->X - p0->X) * (p2->Y - p0->Y) - (int64_t)(p1->Y - p0->Y) * (p2->X - p0->X);
  if (area == 0) return;
  /* Screen y points down, so a positive area is clockwise as seen: the back side. The rasterizer
   * works with positive area, i.e. all edge functions positive inside. */
  int back = area > 0;
  if (!back) {
    const sv *t = p1;
    p1 = p2;
    p2 = t;
    area = -area;
  }
  int64_t minx = p0->X, maxx = p0->X, miny = p0->Y, maxy = p0->Y;
  if (p1->X < minx) minx = p1->X;
  if (p1->X > maxx) maxx = p1->X;
  if (p2->X < minx) minx = p2->X;
  if (p2->X > maxx) maxx = p2->X;
  if (p1->Y < miny) miny = p1->Y;
  if (p1->Y > maxy) maxy = p1->Y;
  if (p2->Y < miny) miny = p2->Y;
  if (p2->Y > maxy) maxy = p2->Y;
  /* Pixels whose centres (i + 1/2) * SUB lie within [min, max]. */
  int64_t i0 = -floor_div(SUB / 2 - minx, SUB), i1 = floor_div(maxx - SUB / 2, SUB);
  int64_t j0 = -floor_div(SUB / 2 - miny, SUB), j1 = floor_div(maxy - SUB / 2, SUB);
  if (i0 < 0) i0 = 0;
  if (j0 < 0) j0 = 0;
  if (i1 > c->w - 1) i1 = c->w - 1;
  if (j1 > c->h - 1) j1 = c->h - 1;
  if (i0 > i1 || j0 > j1) return;

  const sv *v[3] = {p0, p1, p2};
  int64_t e[3], ex[3], ey[3];
  int64_t px = i0 * SUB + SUB / 2, py = j0 * SUB + SUB / 2;
  for (int k = 0; k < 3; k++) {
    /* Edge k runs from corner k+1 to corner k+2; E >= 0 on the side of corner k. */
    const sv *a = v[(k + 1) % 3], *b = v[(k + 2) % 3];
    int64_t dx = (int64_t)b->X - a->X, dy = (int64_t)b->Y - a->Y;
    e[k] = dx * (py - a->Y) - dy * (px - a->X);
    /* Top-left rule: a centre exactly on an edge belongs to the triangle only if the edge is a
     * top edge (horizontal, interior below) or a left edge (interior to its right). With y down
     * and positive area these are dy < 0, or dy == 0 with dx > 0. The rule is antisymmetric in
     * the edge direction, so the two triangles sharing an edge never both take its pixels. */
    if (!(dy < 0 || (dy == 0 && dx > 0))) e[k] -= 1;
    ex[k] = -dy * SUB;
    ey[k] = dx * SUB;
  }

  double x0 = p0->X * (1.0 / SUB), y0 = p0->Y * (1.0 / SUB);
  double x1 = (p1->X - p0->X) * (1.0 / SUB), y1 = (p1->Y - p0->Y) * (1.0 / SUB);
  double x2 = (p2->X - p0->X) * (1.0 / SUB), y2 = (p2->Y - p0->Y) * (1.0 / SUB);
  double inv_area = (double)(SUB * SUB) / (double)area;
  double ox = (double)i0 + 0.5 - x0, oy = (double)j0 + 0.5 - y0;
  plane z = make_plane(p0->iz, p1->iz, p2->iz, x1, y1, x2, y2, inv_area, ox, oy);

  /* Shading attributes are interpolated as a/z and divided by the interpolated 1/z per pixel
   * (both are affine in screen space; Heckbert & Moreton 1991): perspective-correct Gouraud, so
   * large triangles seen at an angle do not warp. */
  float s0 = back ? p0->lb : p0->lf, s1 = back ? p1->lb : p1->lf, s2 = back ? p2->lb : p2->lf;
  const uint32_t *lut = st->lut[back];
  int w = c->w;
  int64_t n = i1 - i0;

  if (st->mode == FILL_FLAT) {
    uint32_t col = lut[lut_index(s0)];
    for (int64_t j = j0; j <= j1; j++) {
      int64_t e0 = e[0], e1 = e[1], e2 = e[2];
      float zr = z.v + z.gy * (float)(j - j0);
      uint32_t *prow = c->px + j * w + i0;
      float *zrow = c->depth + j * w + i0;
      for (int64_t i = 0, seen = 0; i <= n; i++) {
        if ((e0 | e1 | e2) >= 0) {
          seen = 1;
          float zz = zr + z.gx * (float)i;
          if (zz > zrow[i]) {
            zrow[i] = zz;
            prow[i] = col;
          }
        } else if (seen) {
          break; /* a triangle's row is one span: once left, done */
        }
        e0 += ex[0];
        e1 += ex[1];
        e2 += ex[2];
      }
      e[0] += ey[0];
      e[1] += ey[1];
      e[2] += ey[2];
    }
  } else if (st->mode == FILL_SMOOTH) {
    plane s = make_plane(s0 * p0->iz, s1 * p1->iz, s2 * p2->iz, x1, y1, x2, y2, inv_area, ox, oy);
    for (int64_t j = j0; j <= j1; j++) {
      int64_t e0 = e[0], e1 = e[1], e2 = e[2];
      float zr = z.v + z.gy * (float)(j - j0), sr = s.v + s.gy * (float)(j - j0);
      uint32_t *prow = c->px + j * w + i0;
      float *zrow = c->depth + j * w + i0;
      for (int64_t i = 0, seen = 0; i <= n; i++) {
        if ((e0 | e1 | e2) >= 0) {
          seen = 1;
          float zz = zr + z.gx * (float)i;
          if (zz > zrow[i]) {
            zrow[i] = zz;
            prow[i] = lut[lut_index((sr + s.gx * (float)i) / zz)];
          }
        } else if (seen) {
          break;
        }
        e0 += ex[0];
        e1 += ex[1];
        e2 += ex[2];
      }
      e[0] += ey[0];
      e[1] += ey[1];
      e[2] += ey[2];
    }
  } else {
    float w0 = s0 * p0->iz, w1 = s1 * p1->iz, w2 = s2 * p2->iz;
    plane r = make_plane(p0->r * w0, p1->r * w1, p2->r * w2, x1, y1, x2, y2, inv_area, ox, oy);
    plane g = make_plane(p0->g * w0, p1->g * w1, p2->g * w2, x1, y1, x2, y2, inv_area, ox, oy);
    plane b = make_plane(p0->b * w0, p1->b * w1, p2->b * w2, x1, y1, x2, y2, inv_area, ox, oy);
    for (int64_t j = j0; j <= j1; j++) {
      int64_t e0 = e[0], e1 = e[1], e2 = e[2];
      float fj = (float)(j - j0);
      float zr = z.v + z.gy * fj, rr = r.v + r.gy * fj, gr = g.v + g.gy * fj, br = b.v + b.gy * fj;
      uint32_t *prow = c->px + j * w + i0;
      float *zrow = c->depth + j * w + i0;
      for (int64_t i = 0, seen = 0; i <= n; i++) {
        if ((e0 | e1 | e2) >= 0) {
          seen = 1;
          float fi = (float)i;
          float zz = zr + z.gx * fi;
          if (zz > zrow[i]) {
            zrow[i] = zz;
            float inv = 1.0f / zz;
            prow[i] = render_pack(channel((rr + r.gx * fi) * inv), channel((gr + g.gx * fi) * inv),
                                  channel((br + b.gx * fi) * inv), 255u);
          }
        } else if (seen) {
          break;
        }
        e0 += ex[0];
        e1 += ex[1];
        e2 += ex[2];
      }
      e[0] += ey[0];
      e[1] += ey[1];
      e[2] += ey[2];
    }
  }
}

/* ---- clipping -------------------------------------------------------------------------------- */

/* Point where edge p-q crosses a plane (signed distances dp, dq of opposite sign). The endpoints
 * are put in a canonical order first, so that the two triangles sharing an edge compute bitwise
 * the same point and stay watertight after clipping. */
static cvert intersect(const cvert *p, const cvert *q, float dp, float dq) {
  if (p->x > q->x || (p->x == q->x && (p->y > q->y || (p->y == q->y && p->z > q->z)))) {
    const cvert *t = p;
    p = q;
    q = t;
    float d = dp;
    dp = dq;
    dq = d;
  }
  float t = dp / (dp - dq);
  cvert o;
  o.x = p->x + t * (q->x - p->x);
  o.y = p->y + t * (q->y - p->y);
  o.z = p->z + t * (q->z - p->z);
  o.lf = p->lf + t * (q->lf - p->lf);
  o.lb = p->lb + t * (q->lb - p->lb);
  o.r = p->r + t * (q->r - p->r);
  o.g = p->g + t * (q->g - p->g);
  o.b = p->b + t * (q->b - p->b);
  o.src = -1;
  return o;
}

/* Sutherland & Hodgman 1974, against a*x + b*y + c*z + d >= 0; a convex polygon gains at most
 * one corner per plane. */
static int clip_plane(const cvert *in, int n, cvert *out, const float pl[4]) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    const cvert *p = &in[i], *q = &in[i + 1 < n ? i + 1 : 0];
    float dp = pl[0] * p->x + pl[1] * p->y + pl[2] * p->z + pl[3];
    float dq = pl[0] * q->x + pl[1] * q->y + pl[2] * q->z + pl[3];
    if (dp >= 0) out[m++] = *p;
    if ((dp >= 0) != (dq >= 0)) out[m++] = intersect(p, q, dp, dq);
  }
  return m;
}

/* A triangle that crosses the near plane or leaves the guard band: clip it in view space against
 * the near plane and the four guard planes |f x| <= GUARD z, |f y| <= GUARD z, then rasterize the
 * convex remainder as a fan. Corners that are unclipped mesh vertices reuse the screen positions
 * of the vertex pass, so that edges shared with unclipped neighbours match exactly. */
static void raster_clipped(loom_canvas *c, const viewer *vw, const rvert *rv, cvert poly[3], const style *st) {
  cvert buf[2][16];
  int n = 3;
  memcpy(buf[0], poly, 3 * sizeof *poly);
  float f = (float)vw->f, g = (float)GUARD;
  const float planes[5][4] = {{0, 0, 1, (float)-vw->znear}, {-f, 0, g, 0}, {f, 0, g, 0}, {0, -f, g, 0}, {0, f, g, 0}};
  int cur = 0;
  for (int k = 0; k < 5 && n >= 3; k++) {
    n = clip_plane(buf[cur], n, buf[cur ^ 1], planes[k]);
    cur ^= 1;
  }
  if (n < 3) return;
  sv s[16];
  for (int i = 0; i < n; i++) {
    const cvert *p = &buf[cur][i];
    sv *o = &s[i];
    if (p->src >= 0 && !(rv[p->src].flags & (V_BEHIND | V_GUARD))) {
      o->X = rv[p->src].X;
      o->Y = rv[p->src].Y;
      o->iz = rv[p->src].iz;
    } else {
      double z = p->z > vw->znear ? p->z : vw->znear;
      double iz = 1.0 / z;
      double sx = vw->f * p->x * iz, sy = -vw->f * p->y * iz;
      /* On a guard plane up to float rounding; clamp keeps fixed point in range regardless. */
      if (sx > GUARD) sx = GUARD;
      if (sx < -GUARD) sx = -GUARD;
      if (sy > GUARD) sy = GUARD;
      if (sy < -GUARD) sy = -GUARD;
      o->X = (int32_t)floor((vw->cx + sx) * SUB + 0.5);
      o->Y = (int32_t)floor((vw->cy + sy) * SUB + 0.5);
      o->iz = (float)iz;
    }
    o->lf = p->lf;
    o->lb = p->lb;
    o->r = p->r;
    o->g = p->g;
    o->b = p->b;
  }
  for (int i = 1; i + 1 < n; i++) raster_tri(c, &s[0], &s[i], &s[i + 1], st);
}

/* ---- 3D lines and points --------------------------------------------------------------------- */

/* Line between two view-space points: clipped to the near plane, then drawn in screen space. */
static void line_view(loom_canvas *c, const viewer *vw, double a[3], double b[3], uint32_t rgba) {
  if (a[2] < vw->znear && b[2] < vw->znear) return;
  if (a[2] < vw->znear || b[2] < vw->znear) {
    double *p = a[2] < vw->znear ? a : b, *q = p == a ? b : a;
    double t = (vw->znear - p[2]) / (q[2] - p[2]);
    for (int i = 0; i < 3; i++) p[i] += t * (q[i] - p[i]);
    p[2] = vw->znear;
  }
  double ia = 1.0 / a[2], ib = 1.0 / b[2];
  render_line(c, vw->cx + vw->f * a[0] * ia, vw->cy - vw->f * a[1] * ia, ia, vw->cx + vw->f * b[0] * ib,
              vw->cy - vw->f * b[1] * ib, ib, rgba, 1);
}

LOOM_API void loom_canvas_line3(loom_canvas *c, const loom_vec3 *a, const loom_vec3 *b, uint32_t rgba) {
  if (!c || !a || !b) return;
  double va[3], vb[3];
  world_to_view(c, a, va);
  world_to_view(c, b, vb);
  for (int i = 0; i < 3; i++)
    if (!(fabs(va[i]) <= COORD_LIMIT && fabs(vb[i]) <= COORD_LIMIT)) return;
  viewer vw = make_viewer(c);
  line_view(c, &vw, va, vb, rgba);
}

LOOM_API void loom_canvas_point3(loom_canvas *c, const loom_vec3 *p, double size, uint32_t rgba) {
  if (!c || !p) return;
  double v[3];
  world_to_view(c, p, v);
  if (!(v[2] >= c->cam.znear && fabs(v[0]) <= COORD_LIMIT && fabs(v[1]) <= COORD_LIMIT && v[2] <= COORD_LIMIT)) return;
  double iz = 1.0 / v[2];
  double sx = 0.5 * c->w + c->focal * v[0] * iz, sy = 0.5 * c->h - c->focal * v[1] * iz;
  if (!(size >= 1.0)) size = 1.0;
  if (size > RENDER_MAX_SIZE) size = RENDER_MAX_SIZE;
  int i0, i1, j0, j1;
  if (!render_centre_range(sx - 0.5 * size, sx + 0.5 * size, c->w, &i0, &i1) ||
      !render_centre_range(sy - 0.5 * size, sy + 0.5 * size, c->h, &j0, &j1))
    return;
  float z = (float)iz, zt = z * (1.0f + RENDER_DEPTH_BIAS);
  for (int j = j0; j <= j1; j++)
    for (int i = i0; i <= i1; i++) {
      size_t k = (size_t)j * (size_t)c->w + (size_t)i;
      if (!(zt > c->depth[k])) continue;
      if (z > c->depth[k]) c->depth[k] = z;
      render_blend(&c->px[k], rgba);
    }
}

/* ---- meshes ---------------------------------------------------------------------------------- */

/* World-from-model pose composed with view-from-world: view = m * x + t. */
static int mesh_transform(const loom_canvas *c, const loom_vec3 *pos, const loom_quat *rot, double m[3][3],
                          double t[3]) {
  double q[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  if (rot) {
    double w = rot->w, x = rot->x, y = rot->y, z = rot->z;
    double n = sqrt(w * w + x * x + y * y + z * z);
    if (!(n > 0 && isfinite(n))) return loom_fail("loom_canvas_mesh: rotation is not a finite non-zero quaternion");
    w /= n;
    x /= n;
    y /= n;
    z /= n;
    double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    memcpy(q, r, sizeof q);
  }
  const double *basis[3] = {c->right, c->up, c->fwd};
  loom_vec3 p = pos ? *pos : (loom_vec3){0, 0, 0};
  if (!(isfinite(p.x) && isfinite(p.y) && isfinite(p.z))) return loom_fail("loom_canvas_mesh: position is not finite");
  double d[3] = {p.x - c->cam.eye.x, p.y - c->cam.eye.y, p.z - c->cam.eye.z};
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) m[i][j] = basis[i][0] * q[0][j] + basis[i][1] * q[1][j] + basis[i][2] * q[2][j];
    t[i] = basis[i][0] * d[0] + basis[i][1] * d[1] + basis[i][2] * d[2];
  }
  return 0;
}

static void transform_vertices(const viewer *vw, const loom_vec3 *x, int nv, double m[3][3], const double t[3],
                               rvert *rv) {
  for (int i = 0; i < nv; i++) {
    double px = x[i].x, py = x[i].y, pz = x[i].z;
    double vx = m[0][0] * px + m[0][1] * py + m[0][2] * pz + t[0];
    double vy = m[1][0] * px + m[1][1] * py + m[1][2] * pz + t[1];
    double vz = m[2][0] * px + m[2][1] * py + m[2][2] * pz + t[2];
    rvert *r = &rv[i];
    *r = (rvert){(float)vx, (float)vy, (float)vz, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    if (!(fabs(vx) <= COORD_LIMIT && fabs(vy) <= COORD_LIMIT && fabs(vz) <= COORD_LIMIT)) {
      r->flags = V_BAD;
      continue;
    }
    if (vz > vw->zfar) r->flags |= V_FAR;
    if (vz < vw->znear) {
      r->flags |= V_BEHIND;
      continue;
    }
    double iz = 1.0 / vz, sx = vw->f * vx * iz, sy = -vw->f * vy * iz;
    if (!(fabs(sx) <= GUARD && fabs(sy) <= GUARD)) {
      r->flags |= V_GUARD;
      continue;
    }
    r->sx = (float)(vw->cx + sx);
    r->sy = (float)(vw->cy + sy);
    r->iz = (float)iz;
    r->X = (int32_t)floor((vw->cx + sx) * SUB + 0.5);
    r->Y = (int32_t)floor((vw->cy + sy) * SUB + 0.5);
  }
}

/* Outward normal of triangle a, b, c (counter-clockwise as seen from outside), scaled by twice
 * its area. View space (x right, y up, z forward) is left-handed, hence (c - a) x (b - a). */
static void tri_normal(const rvert *a, const rvert *b, const rvert *c, float n[3]) {
  float ux = c->x - a->x, uy = c->y - a->y, uz = c->z - a->z;
  float wx = b->x - a->x, wy = b->y - a->y, wz = b->z - a->z;
  n[0] = uy * wz - uz * wy;
  n[1] = uz * wx - ux * wz;
  n[2] = ux * wy - uy * wx;
}

/* Intensities of both sides of a surface with normal n (any length) at view position p. */
static void light_both(const float n[3], float px, float py, float pz, const float lv[3], float *lf, float *lb) {
  float nn = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  float pp = sqrtf(px * px + py * py + pz * pz);
  float ndl = 0, nde = 0;
  if (nn > 0 && isfinite(nn)) {
    ndl = (n[0] * lv[0] + n[1] * lv[1] + n[2] * lv[2]) / nn;
    /* Headlight: direction towards the eye, which sits at the view-space origin. */
    if (pp > 0 && isfinite(pp)) nde = -(n[0] * px + n[1] * py + n[2] * pz) / (nn * pp);
  }
  *lf = shade(ndl, nde);
  *lb = shade(-ndl, -nde);
}

static inline int tri_valid(const int32_t *t, int nv) {
  return (uint32_t)t[0] < (uint32_t)nv && (uint32_t)t[1] < (uint32_t)nv && (uint32_t)t[2] < (uint32_t)nv;
}

/* Gouraud 1971 smooth shading: vertex normals are the sum of the adjacent face normals, here
 * weighted by area (the unnormalised cross products), then lit once per vertex and side. */
static void vertex_lighting(rvert *rv, int nv, const int32_t *tri, int nt, const float lv[3]) {
  for (int k = 0; k < nt; k++) {
    const int32_t *t = tri + 3 * (size_t)k;
    if (!tri_valid(t, nv)) continue;
    rvert *a = &rv[t[0]], *b = &rv[t[1]], *d = &rv[t[2]];
    if ((a->flags | b->flags | d->flags) & V_BAD) continue;
    float n[3];
    tri_normal(a, b, d, n);
    a->nx += n[0];
    a->ny += n[1];
    a->nz += n[2];
    b->nx += n[0];
    b->ny += n[1];
    b->nz += n[2];
    d->nx += n[0];
    d->ny += n[1];
    d->nz += n[2];
  }
  for (int i = 0; i < nv; i++) {
    rvert *r = &rv[i];
    if (r->flags & V_BAD) continue;
    float n[3] = {r->nx, r->ny, r->nz};
    light_both(n, r->x, r->y, r->z, lv, &r->lf, &r->lb);
  }
}

static void build_lut(uint32_t rgba, uint32_t lut[256]) {
  float r = (float)(rgba >> 24), g = (float)((rgba >> 16) & 255u), b = (float)((rgba >> 8) & 255u);
  for (int k = 0; k < 256; k++) {
    float s = (float)k / 255.0f;
    lut[k] = render_pack(channel(r * s), channel(g * s), channel(b * s), 255u);
  }
}

static void unpack_rgb(uint32_t rgba, float *r, float *g, float *b) {
  *r = (float)(rgba >> 24);
  *g = (float)((rgba >> 16) & 255u);
  *b = (float)((rgba >> 8) & 255u);
}

static uint32_t scale_rgb(uint32_t rgba, float s, unsigned alpha) {
  float r, g, b;
  unpack_rgb(rgba, &r, &g, &b);
  return (uint32_t)channel(r * s) << 24 | (uint32_t)channel(g * s) << 16 | (uint32_t)channel(b * s) << 8 | alpha;
}

static void draw_edge(loom_canvas *c, const viewer *vw, const rvert *a, const rvert *b, uint32_t rgba) {
  uint32_t f = a->flags | b->flags;
  if (f & V_BAD) return;
  if (!(f & (V_BEHIND | V_GUARD))) {
    render_line(c, a->sx, a->sy, a->iz, b->sx, b->sy, b->iz, rgba, 1);
    return;
  }
  double pa[3] = {a->x, a->y, a->z}, pb[3] = {b->x, b->y, b->z};
  line_view(c, vw, pa, pb, rgba);
}

/* Draws every distinct edge once. A closed or grid mesh lists each interior edge twice (once per
 * side) and boundary edges once, so the undirected edges are bucketed by their smaller vertex
 * (a counting sort over the scratch arrays) and repeats inside a bucket are skipped with a
 * last-seen mark per vertex: linear time whatever the vertex valences. */
static void mesh_edges(loom_canvas *c, const viewer *vw, const rvert *rv, int nv, const int32_t *tri, int nt,
                       int32_t *start, int32_t *mark, int32_t *other, uint32_t front, const uint32_t *colors,
                       int filled) {
  for (int i = 0; i <= nv; i++) start[i] = 0;
  for (int k = 0; k < nt; k++) {
    const int32_t *t = tri + 3 * (size_t)k;
    if (!tri_valid(t, nv)) continue;
    for (int e = 0; e < 3; e++) {
      int32_t a = t[e], b = t[e < 2 ? e + 1 : 0];
      start[(a < b ? a : b) + 1]++;
    }
  }
  for (int i = 0; i < nv; i++) start[i + 1] += start[i];
  /* mark doubles as the fill cursor of each bucket, then as the last-seen table. */
  for (int i = 0; i < nv; i++) mark[i] = start[i];
  for (int k = 0; k < nt; k++) {
    const int32_t *t = tri + 3 * (size_t)k;
    if (!tri_valid(t, nv)) continue;
    for (int e = 0; e < 3; e++) {
      int32_t a = t[e], b = t[e < 2 ? e + 1 : 0];
      if (a < b)
        other[mark[a]++] = b;
      else
        other[mark[b]++] = a;
    }
  }
  for (int i = 0; i < nv; i++) mark[i] = -1;

  float s = filled ? WIRE_DARKEN : 1.0f;
  /* Over a fill the overlay must contrast, so it is opaque and dark; alone it keeps the caller's
   * colour and alpha. */
  uint32_t col = scale_rgb(front, s, filled ? 255u : (front & 255u));
  for (int a = 0; a < nv; a++) {
    for (int32_t k = start[a]; k < start[a + 1]; k++) {
      int32_t b = other[k];
      if (mark[b] == a) continue;
      mark[b] = a;
      if (colors) {
        /* Per-vertex colours: the edge takes the mean of its ends. */
        uint32_t ca = colors[a], cb = colors[b], m = 0;
        for (int sh = 8; sh < 32; sh += 8) m |= ((((ca >> sh) & 255u) + ((cb >> sh) & 255u) + 1u) / 2u) << sh;
        col = scale_rgb(m, s, filled ? 255u : ((ca & 255u) + (cb & 255u) + 1u) / 2u);
      }
      draw_edge(c, vw, &rv[a], &rv[b], col);
    }
  }
}

LOOM_API void loom_canvas_mesh(loom_canvas *c, const loom_vec3 *x, int nv, const int32_t *tri, int nt,
                               const loom_vec3 *position, const loom_quat *rotation, uint32_t front, uint32_t back,
                               const uint32_t *colors, int flags) {
  if (!c || !x || !tri || nv <= 0 || nt <= 0) return;
  double m[3][3], t[3];
  if (mesh_transform(c, position, rotation, m, t) != 0) return;
  int edges = (flags & (LOOM_DRAW_WIREFRAME | LOOM_DRAW_NO_FILL)) != 0;
  if (edges && nt > INT32_MAX / 3) {
    /* Edge bucketing indexes 3 nt half-edges with int32; no real mesh comes near this. */
    loom_fail("loom_canvas_mesh: %d triangles is too many for edge drawing", nt);
    edges = 0;
  }
  /* Scratch: nv rverts, then for edges nv + 1 bucket starts, nv marks and 3 nt edge ends. */
  size_t bytes = (size_t)nv * sizeof(rvert);
  if (edges) bytes += ((size_t)nv + 1 + (size_t)nv + 3 * (size_t)nt) * sizeof(int32_t);
  rvert *rv = scratch(c, bytes);
  if (!rv) return;
  viewer vw = make_viewer(c);
  transform_vertices(&vw, x, nv, m, t, rv);

  int fill = !(flags & LOOM_DRAW_NO_FILL), flat = (flags & LOOM_DRAW_FLAT) != 0;
  if (fill) {
    float lv[3];
    const double *basis[3] = {c->right, c->up, c->fwd};
    for (int i = 0; i < 3; i++)
      lv[i] = (float)(basis[i][0] * c->light[0] + basis[i][1] * c->light[1] + basis[i][2] * c->light[2]);
    if (!flat) vertex_lighting(rv, nv, tri, nt, lv);

    uint32_t lut[2][256];
    build_lut(front, lut[0]);
    build_lut(back, lut[1]);
    style st = {colors ? FILL_RGB : flat ? FILL_FLAT : FILL_SMOOTH, {lut[0], lut[1]}};

    for (int k = 0; k < nt; k++) {
      const int32_t *tk = tri + 3 * (size_t)k;
      if (!tri_valid(tk, nv)) continue;
      const rvert *r[3] = {&rv[tk[0]], &rv[tk[1]], &rv[tk[2]]};
      uint32_t any = r[0]->flags | r[1]->flags | r[2]->flags, all = r[0]->flags & r[1]->flags & r[2]->flags;
      if ((any & V_BAD) || (all & (V_BEHIND | V_FAR))) continue;
      float flf = 0, flb = 0;
      if (flat) {
        float n[3];
        tri_normal(r[0], r[1], r[2], n);
        light_both(n, (r[0]->x + r[1]->x + r[2]->x) * (1.0f / 3), (r[0]->y + r[1]->y + r[2]->y) * (1.0f / 3),
                   (r[0]->z + r[1]->z + r[2]->z) * (1.0f / 3), lv, &flf, &flb);
      }
      if (!(any & (V_BEHIND | V_GUARD))) {
        sv s[3];
        for (int i = 0; i < 3; i++) {
          s[i].X = r[i]->X;
          s[i].Y = r[i]->Y;
          s[i].iz = r[i]->iz;
          s[i].lf = flat ? flf : r[i]->lf;
          s[i].lb = flat ? flb : r[i]->lb;
          if (colors) unpack_rgb(colors[tk[i]], &s[i].r, &s[i].g, &s[i].b);
        }
        raster_tri(c, &s[0], &s[1], &s[2], &st);
      } else {
        cvert poly[3];
        for (int i = 0; i < 3; i++) {
          cvert *p = &poly[i];
          p->x = r[i]->x;
          p->y = r[i]->y;
          p->z = r[i]->z;
          p->lf = flat ? flf : r[i]->lf;
          p->lb = flat ? flb : r[i]->lb;
          p->r = p->g = p->b = 0;
          if (colors) unpack_rgb(colors[tk[i]], &p->r, &p->g, &p->b);
          p->src = tk[i];
        }
        raster_clipped(c, &vw, rv, poly, &st);
      }
    }
  }
  if (edges) {
    int32_t *start = (int32_t *)(rv + nv), *mark = start + nv + 1, *other = mark + nv;
    mesh_edges(c, &vw, rv, nv, tri, nt, start, mark, other, front, colors, fill);
  }
}
