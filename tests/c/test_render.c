/* test_render.c — the software rasterizer: canvas, projection, triangle coverage and fill rule,
 * shading sides, depth, clipping, robustness, 2D primitives, text, PNG. Tolerances are stated
 * at each check; pixel-exact checks are exact on purpose. */
#define _POSIX_C_SOURCE 200809L /* pthreads: C11 thrd_create bypasses sanitizer interceptors */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "loom.h"

#define PI 3.14159265358979323846

/* ---- helpers --------------------------------------------------------------------------------- */

#define BG 0x000000ffu

/* Camera at (0, -5, 0) looking along +y with z up: world x is screen right, world z screen up,
 * and the plane y = 0 lies at view depth 5. fov 90 makes the focal length h / 2 pixels. */
static loom_camera front_camera(void) {
  return (loom_camera){{0, -5, 0}, {0, 0, 0}, {0, 0, 1}, 90.0, 0.1, 100.0};
}

static loom_canvas *make_canvas(int w, int h) {
  loom_canvas *c = loom_canvas_create(w, h);
  if (c) {
    loom_camera cam = front_camera();
    loom_canvas_set_camera(c, &cam);
    loom_vec3 towards_camera = {0, -1, 0};
    loom_canvas_set_light(c, &towards_camera);
    loom_canvas_clear(c, BG);
  }
  return c;
}

static const uint8_t *px(loom_canvas *c, int i, int j) {
  return loom_canvas_pixels(c) + 4 * ((size_t)j * (size_t)loom_canvas_width(c) + (size_t)i);
}

static int is_bg(loom_canvas *c, int i, int j) {
  const uint8_t *p = px(c, i, j);
  return p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 255;
}

static int count_non_bg(loom_canvas *c) {
  int n = 0;
  for (int j = 0; j < loom_canvas_height(c); j++)
    for (int i = 0; i < loom_canvas_width(c); i++) n += !is_bg(c, i, j);
  return n;
}

/* World point on the plane y = 0 that projects to pixel coordinates (sx, sy). */
static loom_vec3 on_plane(loom_canvas *c, double sx, double sy) {
  loom_vec3 o, d;
  loom_canvas_ray(c, sx, sy, &o, &d);
  double t = -o.y / d.y;
  return (loom_vec3){o.x + t * d.x, 0.0, o.z + t * d.z};
}

static uint32_t rng_state = 12345u;
static uint32_t rng(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return rng_state >> 8;
}
static double rnd(double lo, double hi) { return lo + (hi - lo) * (rng() / 16777216.0); }

/* Triangle with corners at the given pixel positions on the plane y = 0. */
static void draw_screen_tri(loom_canvas *c, const double p[6], uint32_t front, uint32_t back, int flags) {
  loom_vec3 v[3];
  for (int k = 0; k < 3; k++) v[k] = on_plane(c, p[2 * k], p[2 * k + 1]);
  int32_t t[3] = {0, 1, 2};
  loom_canvas_mesh(c, v, 3, t, 1, NULL, NULL, front, back, NULL, flags);
}

/* Adds 1 to count[] for every pixel a single triangle covers (drawn alone on a cleared canvas). */
static void accumulate_coverage(loom_canvas *c, const double p[6], int *count) {
  loom_canvas_clear(c, BG);
  draw_screen_tri(c, p, 0xffffffffu, 0xffffffffu, LOOM_DRAW_FLAT);
  int w = loom_canvas_width(c), h = loom_canvas_height(c);
  for (int j = 0; j < h; j++)
    for (int i = 0; i < w; i++) count[j * w + i] += !is_bg(c, i, j);
}

/* ---- canvas ---------------------------------------------------------------------------------- */

TEST(render_create_validates_size) {
  CHECK(loom_canvas_create(0, 0) == NULL);
  CHECK(loom_canvas_create(20000, 10) == NULL);
  CHECK(loom_canvas_create(10, 16385) == NULL);
  CHECK(loom_canvas_create(-3, 5) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "outside 1..16384");
  loom_canvas *c = loom_canvas_create(16384, 1);
  CHECK(c != NULL);
  CHECK_EQ_INT(loom_canvas_width(c), 16384);
  CHECK_EQ_INT(loom_canvas_height(c), 1);
  loom_canvas_destroy(c);
}

TEST(render_clear_fills_every_pixel) {
  loom_canvas *c = loom_canvas_create(37, 23);
  CHECK(c != NULL);
  if (!c) return;
  const uint32_t cols[2] = {0x11223344u, 0xfe01807fu};
  for (int k = 0; k < 2; k++) {
    loom_canvas_clear(c, cols[k]);
    const uint8_t *p = loom_canvas_pixels(c);
    int bad = 0;
    for (int i = 0; i < 37 * 23; i++)
      bad += p[4 * i] != (cols[k] >> 24) || p[4 * i + 1] != ((cols[k] >> 16) & 255) ||
             p[4 * i + 2] != ((cols[k] >> 8) & 255) || p[4 * i + 3] != (cols[k] & 255);
    CHECK_EQ_INT(bad, 0);
  }
  loom_canvas_destroy(c);
}

TEST(render_resize_and_bad_resize) {
  loom_canvas *c = make_canvas(40, 30);
  if (!c) return;
  CHECK_EQ_INT(loom_canvas_resize(c, 0, 5), -1);
  CHECK_EQ_INT(loom_canvas_resize(c, 5, 20000), -1);
  CHECK_EQ_INT(loom_canvas_width(c), 40);
  CHECK_EQ_INT(loom_canvas_resize(c, 64, 20), 0);
  CHECK_EQ_INT(loom_canvas_width(c), 64);
  CHECK_EQ_INT(loom_canvas_height(c), 20);
  /* The projection follows the new size: the target sits at the new centre. */
  loom_vec3 o = {0, 0, 0};
  double sx, sy, d;
  loom_canvas_project(c, &o, &sx, &sy, &d);
  CHECK_NEAR(sx, 32.0, 1e-12);
  CHECK_NEAR(sy, 10.0, 1e-12);
  loom_canvas_clear(c, 0x102030ffu);
  CHECK(px(c, 63, 19)[2] == 0x30);
  loom_canvas_destroy(c);
}

TEST(render_null_canvas_is_harmless) {
  loom_vec3 a = {0, 0, 0}, b = {1, 1, 1}, o, d;
  int32_t t[3] = {0, 1, 2};
  loom_camera cam = front_camera();
  double sx = 7, sy = 7, dep = 7;
  loom_canvas_destroy(NULL);
  CHECK_EQ_INT(loom_canvas_resize(NULL, 10, 10), -1);
  CHECK_EQ_INT(loom_canvas_width(NULL), 0);
  CHECK_EQ_INT(loom_canvas_height(NULL), 0);
  CHECK(loom_canvas_pixels(NULL) == NULL);
  loom_canvas_clear(NULL, 0);
  loom_canvas_set_camera(NULL, &cam);
  loom_canvas_set_light(NULL, &a);
  loom_canvas_mesh(NULL, &a, 1, t, 1, NULL, NULL, 0, 0, NULL, 0);
  loom_canvas_line3(NULL, &a, &b, 0);
  loom_canvas_point3(NULL, &a, 3, 0);
  loom_canvas_rect(NULL, 0, 0, 5, 5, 0);
  loom_canvas_line2(NULL, 0, 0, 5, 5, 0);
  CHECK(loom_canvas_text(NULL, 0, 0, "x", 0, 1) == 0.0);
  CHECK_EQ_INT(loom_canvas_project(NULL, &a, &sx, &sy, &dep), 0);
  loom_canvas_ray(NULL, 1, 1, &o, &d);
  CHECK_EQ_INT(loom_canvas_write_png(NULL, harness_tmp("null.png")), -1);
  CHECK(loom_canvas_read_png(NULL) == NULL);
  CHECK(loom_text_width(NULL, 1) == 0.0);
  /* NULL inner arguments with a real canvas: nothing drawn, nothing crashes. */
  loom_canvas *c = make_canvas(16, 16);
  if (!c) return;
  loom_canvas_mesh(c, NULL, 3, t, 1, NULL, NULL, 0xffffffffu, 0, NULL, 0);
  loom_canvas_mesh(c, &a, 1, NULL, 1, NULL, NULL, 0xffffffffu, 0, NULL, 0);
  loom_canvas_line3(c, NULL, &b, 0xffffffffu);
  loom_canvas_point3(c, NULL, 3, 0xffffffffu);
  loom_canvas_set_camera(c, NULL);
  loom_canvas_set_light(c, NULL);
  CHECK(loom_canvas_text(c, 0, 0, NULL, 0xffffffffu, 1) == 0.0);
  CHECK_EQ_INT(loom_canvas_project(c, NULL, &sx, &sy, &dep), 0);
  CHECK_EQ_INT(count_non_bg(c), 0);
  loom_canvas_destroy(c);
}

TEST(render_bad_camera_is_rejected) {
  loom_canvas *c = make_canvas(32, 32);
  if (!c) return;
  loom_camera bad = front_camera();
  bad.fov_deg = 180;
  loom_canvas_set_camera(c, &bad);
  CHECK_STR_CONTAINS(loom_last_error(), "fov_deg");
  bad = front_camera();
  bad.target = bad.eye;
  loom_canvas_set_camera(c, &bad);
  CHECK_STR_CONTAINS(loom_last_error(), "coincide");
  bad = front_camera();
  bad.znear = 0;
  loom_canvas_set_camera(c, &bad);
  CHECK_STR_CONTAINS(loom_last_error(), "znear");
  /* The previous camera is still in force: the origin projects to the centre at depth 5. */
  loom_vec3 o = {0, 0, 0};
  double sx, sy, d;
  CHECK_EQ_INT(loom_canvas_project(c, &o, &sx, &sy, &d), 1);
  CHECK_NEAR(d, 5.0, 1e-12);
  /* Looking straight down with up = z is legitimate and must give a usable camera. */
  loom_camera down = {{0, 0, 5}, {0, 0, 0}, {0, 0, 1}, 60, 0.1, 100};
  loom_canvas_set_camera(c, &down);
  CHECK_EQ_INT(loom_canvas_project(c, &o, &sx, &sy, &d), 1);
  CHECK_NEAR(sx, 16.0, 1e-9);
  CHECK_NEAR(sy, 16.0, 1e-9);
  CHECK_NEAR(d, 5.0, 1e-12);
  loom_canvas_destroy(c);
}

/* ---- projection ------------------------------------------------------------------------------ */

TEST(render_project_centre_and_sides) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  double sx, sy, d;
  loom_vec3 target = {0, 0, 0};
  CHECK_EQ_INT(loom_canvas_project(c, &target, &sx, &sy, &d), 1);
  CHECK_NEAR(sx, 32.0, 1e-12);
  CHECK_NEAR(sy, 24.0, 1e-12);
  CHECK_NEAR(d, 5.0, 1e-12);
  /* fov 90: f = h / 2 = 24 px; x = 1 at depth 5 lands 24 / 5 px right of the centre. */
  loom_vec3 right = {1, 0, 0}, left = {-1, 0, 0}, up = {0, 0, 1}, down = {0, 0, -1};
  loom_canvas_project(c, &right, &sx, &sy, &d);
  CHECK_NEAR(sx, 32.0 + 24.0 / 5.0, 1e-12);
  CHECK_NEAR(sy, 24.0, 1e-12);
  loom_canvas_project(c, &left, &sx, &sy, &d);
  CHECK(sx < 32.0);
  loom_canvas_project(c, &up, &sx, &sy, &d);
  CHECK_NEAR(sy, 24.0 - 24.0 / 5.0, 1e-12); /* up in the world is up on screen: smaller y */
  CHECK_NEAR(sx, 32.0, 1e-12);
  loom_canvas_project(c, &down, &sx, &sy, &d);
  CHECK(sy > 24.0);
  loom_vec3 behind = {0, -10, 0};
  CHECK_EQ_INT(loom_canvas_project(c, &behind, &sx, &sy, &d), 0);
  CHECK(d < 0);
  loom_canvas_destroy(c);
}

TEST(render_ray_inverts_project) {
  loom_canvas *c = loom_canvas_create(640, 360);
  if (!c) return;
  double worst = 0;
  for (int trial = 0; trial < 200; trial++) {
    loom_camera cam = {{rnd(-10, 10), rnd(-10, 10), rnd(-10, 10)},
                       {rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)},
                       {rnd(-1, 1), rnd(-1, 1), rnd(-1, 1)},
                       rnd(10, 120),
                       0.01,
                       1000};
    loom_canvas_set_camera(c, &cam);
    loom_vec3 p = {rnd(-20, 20), rnd(-20, 20), rnd(-20, 20)};
    double sx, sy, d;
    if (!loom_canvas_project(c, &p, &sx, &sy, &d)) continue;
    loom_vec3 o, dir;
    loom_canvas_ray(c, sx, sy, &o, &dir);
    CHECK_NEAR(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z, 1.0, 1e-12);
    double dist = sqrt((p.x - o.x) * (p.x - o.x) + (p.y - o.y) * (p.y - o.y) + (p.z - o.z) * (p.z - o.z));
    loom_vec3 q = {o.x + dist * dir.x, o.y + dist * dir.y, o.z + dist * dir.z};
    double err = sqrt((q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y) + (q.z - p.z) * (q.z - p.z)) / dist;
    if (err > worst) worst = err;
    /* And the other way round: a point on the ray projects back to the pixel. */
    loom_vec3 r = {o.x + 3 * dir.x, o.y + 3 * dir.y, o.z + 3 * dir.z};
    double rx, ry;
    loom_canvas_project(c, &r, &rx, &ry, &d);
    CHECK_NEAR(rx, sx, 1e-6 * (1 + fabs(sx)));
    CHECK_NEAR(ry, sy, 1e-6 * (1 + fabs(sy)));
  }
  CHECK_MSG(worst <= 1e-6, "ray(project(p)) relative error %g > 1e-6", worst);
  loom_canvas_destroy(c);
}

/* ---- triangles ------------------------------------------------------------------------------- */

TEST(render_front_and_back_colours) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  /* Counter-clockwise on screen (bottom-left, bottom-right, top), covering the centre. */
  const double ccw[6] = {8, 44, 56, 44, 32, 4}, cw[6] = {8, 44, 32, 4, 56, 44};
  const uint32_t front = 0xc83214ffu, back = 0x1450c8ffu;
  draw_screen_tri(c, ccw, front, back, 0);
  const uint8_t *p = px(c, 32, 30);
  /* Shading scales all channels alike (to within byte rounding): the hue is the front colour's. */
  CHECK(p[0] > 100);
  CHECK_NEAR((double)p[1] / p[0], 50.0 / 200.0, 0.02);
  CHECK_NEAR((double)p[2] / p[0], 20.0 / 200.0, 0.02);
  CHECK_EQ_INT(p[3], 255);

  loom_canvas_clear(c, BG);
  draw_screen_tri(c, cw, front, back, 0);
  p = px(c, 32, 30);
  CHECK(p[2] > 100);
  CHECK_NEAR((double)p[0] / p[2], 20.0 / 200.0, 0.02);
  CHECK_NEAR((double)p[1] / p[2], 80.0 / 200.0, 0.02);
  loom_canvas_destroy(c);
}

TEST(render_lambert_follows_light) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  const double ccw[6] = {8, 44, 56, 44, 32, 4};
  draw_screen_tri(c, ccw, 0xffffffffu, 0xffffffffu, 0);
  int lit = px(c, 32, 30)[0];
  loom_vec3 away = {0, 1, 0}; /* the light behind the triangle: only ambient and headlight */
  loom_canvas_set_light(c, &away);
  loom_canvas_clear(c, BG);
  draw_screen_tri(c, ccw, 0xffffffffu, 0xffffffffu, 0);
  int unlit = px(c, 32, 30)[0];
  CHECK_MSG(lit > unlit + 60, "lit %d vs unlit %d", lit, unlit);
  CHECK(unlit > 40); /* ambient keeps it visible */
  /* Two-sided: what counts is the side facing the camera, whatever the winding. The reversed
   * triangle shows its back, which is just as unlit with the light behind, and as lit with the
   * light at the camera. */
  const double cw[6] = {8, 44, 32, 4, 56, 44};
  loom_canvas_clear(c, BG);
  draw_screen_tri(c, cw, 0xffffffffu, 0xffffffffu, 0);
  CHECK_EQ_INT(px(c, 32, 30)[0], unlit);
  loom_vec3 towards = {0, -1, 0};
  loom_canvas_set_light(c, &towards);
  loom_canvas_clear(c, BG);
  draw_screen_tri(c, cw, 0xffffffffu, 0xffffffffu, 0);
  CHECK_EQ_INT(px(c, 32, 30)[0], lit);
  loom_canvas_destroy(c);
}

/* UV sphere of radius r around the origin, outward-facing (counter-clockwise from outside). */
static int make_sphere(int slices, int stacks, double r, loom_vec3 *v, int32_t *t) {
  int nt = 0;
  for (int i = 0; i <= stacks; i++)
    for (int j = 0; j < slices; j++) {
      double th = PI * i / stacks, ph = 2 * PI * j / slices;
      v[i * slices + j] = (loom_vec3){r * sin(th) * cos(ph), r * sin(th) * sin(ph), r * cos(th)};
    }
  for (int i = 0; i < stacks; i++)
    for (int j = 0; j < slices; j++) {
      int a = i * slices + j, b = i * slices + (j + 1) % slices, cc = a + slices, d = b + slices;
      int32_t q[6] = {a, cc, d, a, d, b};
      memcpy(t + 3 * nt, q, sizeof q);
      nt += 2;
    }
  return nt;
}

TEST(render_smooth_sphere_is_lit_from_above) {
  loom_canvas *c = make_canvas(96, 96);
  if (!c) return;
  enum { SL = 24, ST = 16 };
  static loom_vec3 v[(ST + 1) * SL];
  static int32_t t[3 * 2 * SL * ST];
  int nt = make_sphere(SL, ST, 1.5, v, t);
  loom_vec3 up = {0, 0, 1};
  loom_canvas_set_light(c, &up);
  loom_canvas_mesh(c, v, (ST + 1) * SL, t, nt, NULL, NULL, 0xffffffffu, 0xff0000ffu, NULL, 0);
  loom_vec3 top = {0, -1.2, 0.8}, bottom = {0, -1.2, -0.8};
  double tx, ty, bx, by, d;
  loom_canvas_project(c, &top, &tx, &ty, &d);
  loom_canvas_project(c, &bottom, &bx, &by, &d);
  const uint8_t *pt = px(c, (int)tx, (int)ty), *pb = px(c, (int)bx, (int)by);
  CHECK_MSG(pt[0] > pb[0] + 50, "top %d bottom %d", pt[0], pb[0]);
  /* Closed outward mesh: only front faces are visible (no back colour anywhere). */
  int red = 0;
  for (int j = 0; j < 96; j++)
    for (int i = 0; i < 96; i++) {
      const uint8_t *p = px(c, i, j);
      red += p[0] > 0 && p[1] == 0 && p[2] == 0;
    }
  CHECK_EQ_INT(red, 0);
  /* Smooth shading has no facets: neighbouring pixels from the top point to the bottom point (all
   * on the sphere) differ gently. */
  int maxstep = 0;
  for (int j = (int)ty; j < (int)by; j++) {
    int a = px(c, (int)tx, j)[0], b = px(c, (int)tx, j + 1)[0];
    if (abs(a - b) > maxstep) maxstep = abs(a - b);
  }
  CHECK_MSG(maxstep <= 12, "largest step between vertical neighbours %d", maxstep);
  loom_canvas_destroy(c);
}

TEST(render_per_vertex_colours) {
  loom_canvas *c = make_canvas(96, 96);
  if (!c) return;
  const double p[6] = {10, 86, 86, 86, 48, 10};
  loom_vec3 v[3];
  for (int k = 0; k < 3; k++) v[k] = on_plane(c, p[2 * k], p[2 * k + 1]);
  int32_t t[3] = {0, 1, 2};
  uint32_t cols[3] = {0xff0000ffu, 0x00ff00ffu, 0x0000ffffu};
  loom_canvas_mesh(c, v, 3, t, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, cols, 0);
  const uint8_t *a = px(c, 14, 83), *b = px(c, 81, 83), *cc = px(c, 48, 16), *m = px(c, 48, 61);
  CHECK(a[0] > 3 * a[1] && a[0] > 3 * a[2]);
  CHECK(b[1] > 3 * b[0] && b[1] > 3 * b[2]);
  CHECK(cc[2] > 3 * cc[0] && cc[2] > 3 * cc[1]);
  /* The centroid mixes the three equally (the triangle faces the camera: affine = perspective). */
  CHECK_NEAR(m[0], m[1], 8);
  CHECK_NEAR(m[1], m[2], 8);
  CHECK(m[0] > 40);
  loom_canvas_destroy(c);
}

TEST(render_depth_test_nearer_wins) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  /* Two screen-filling triangles at y = -1 (near) and y = +1 (far). */
  loom_vec3 nearv[3] = {{-20, -1, -20}, {20, -1, -20}, {0, -1, 20}};
  loom_vec3 farv[3] = {{-20, 1, -20}, {20, 1, -20}, {0, 1, 20}};
  int32_t t[3] = {0, 1, 2};
  for (int order = 0; order < 2; order++) {
    loom_canvas_clear(c, BG);
    for (int k = 0; k < 2; k++) {
      int near_now = (k == 0) == (order == 0);
      loom_canvas_mesh(c, near_now ? nearv : farv, 3, t, 1, NULL, NULL, near_now ? 0x00ff00ffu : 0xff0000ffu,
                       near_now ? 0x00ff00ffu : 0xff0000ffu, NULL, LOOM_DRAW_FLAT);
    }
    int green = 0, other = 0;
    for (int j = 0; j < 48; j++)
      for (int i = 0; i < 64; i++) {
        const uint8_t *p = px(c, i, j);
        if (p[1] > 0 && p[0] == 0)
          green++;
        else
          other++;
      }
    CHECK_EQ_INT(green, 64 * 48);
    CHECK_EQ_INT(other, 0);
  }
  /* Clearing resets depth: the far triangle alone now shows. */
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, farv, 3, t, 1, NULL, NULL, 0xff0000ffu, 0xff0000ffu, NULL, 0);
  CHECK(px(c, 32, 24)[0] > 0);
  loom_canvas_destroy(c);
}

TEST(render_far_plane_clips) {
  loom_canvas *c = make_canvas(32, 32);
  if (!c) return;
  loom_camera cam = front_camera();
  cam.zfar = 10;
  loom_canvas_set_camera(c, &cam);
  loom_canvas_clear(c, BG);
  loom_vec3 v[3] = {{-50, 20, -50}, {50, 20, -50}, {0, 20, 50}}; /* depth 25 */
  int32_t t[3] = {0, 1, 2};
  loom_canvas_mesh(c, v, 3, t, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, 0);
  CHECK_EQ_INT(count_non_bg(c), 0);
  loom_canvas_destroy(c);
}

/* Convex hull (counter-clockwise in a y-up frame, strictly convex) of integer points. */
static long cross_i(const long *o, const long *a, const long *b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}
static int cmp_pt(const void *a, const void *b) {
  const long *p = a, *q = b;
  return p[0] != q[0] ? (p[0] < q[0] ? -1 : 1) : (p[1] < q[1] ? -1 : p[1] > q[1]);
}
static int hull(long (*pts)[2], int n, long (*out)[2]) {
  qsort(pts, (size_t)n, sizeof pts[0], cmp_pt);
  int k = 0;
  for (int i = 0; i < n; i++) {
    while (k >= 2 && cross_i(out[k - 2], out[k - 1], pts[i]) <= 0) k--;
    out[k][0] = pts[i][0];
    out[k][1] = pts[i][1];
    k++;
  }
  for (int i = n - 2, lo = k + 1; i >= 0; i--) {
    while (k >= lo && cross_i(out[k - 2], out[k - 1], pts[i]) <= 0) k--;
    out[k][0] = pts[i][0];
    out[k][1] = pts[i][1];
    k++;
  }
  return k - 1;
}

/* The fill rule at its hardest: every vertex on a pixel centre, so edges pass through rows of
 * centres. A convex polygon is fanned from an interior centre and, separately, from one of its
 * corners. Each fan must cover each pixel at most once, both must cover the same set, and that
 * set must be exactly the centres strictly inside the polygon plus some of those on its rim. */
TEST(render_shared_edges_no_gaps_no_overlap) {
  enum { W = 48, H = 48 };
  loom_canvas *c = make_canvas(W, H);
  if (!c) return;
  static int cnt_a[W * H], cnt_b[W * H];
  int failures = 0, interior_checked = 0;
  for (int trial = 0; trial < 40 && failures == 0; trial++) {
    long cx = 24, cy = 24, pts[24][2], hl[25][2];
    int n = 0;
    for (int k = 0; k < 12; k++) {
      double a = rnd(0, 2 * PI), r = rnd(4, 20);
      pts[n][0] = cx + lround(r * cos(a));
      pts[n][1] = cy + lround(r * sin(a));
      n++;
    }
    int m = hull(pts, n, hl);
    long centre[2] = {cx, cy};
    int inside = m >= 3;
    for (int k = 0; k < m && inside; k++) inside = cross_i(hl[k], hl[(k + 1) % m], centre) > 0;
    if (!inside) continue; /* centre on or outside the hull: fan from it would degenerate */
    memset(cnt_a, 0, sizeof cnt_a);
    memset(cnt_b, 0, sizeof cnt_b);
    for (int k = 0; k < m; k++) {
      const long *p = hl[k], *q = hl[(k + 1) % m];
      double ta[6] = {cx + 0.5, cy + 0.5, p[0] + 0.5, p[1] + 0.5, q[0] + 0.5, q[1] + 0.5};
      accumulate_coverage(c, ta, cnt_a);
      if (k >= 1 && k + 1 < m) {
        double tb[6] = {hl[0][0] + 0.5, hl[0][1] + 0.5, p[0] + 0.5, p[1] + 0.5, q[0] + 0.5, q[1] + 0.5};
        accumulate_coverage(c, tb, cnt_b);
      }
    }
    for (int j = 0; j < H; j++)
      for (int i = 0; i < W; i++) {
        int a = cnt_a[j * W + i], b = cnt_b[j * W + i];
        long q[2] = {i, j};
        int strictly_in = 1, strictly_out = 0;
        for (int k = 0; k < m; k++) {
          long s = cross_i(hl[k], hl[(k + 1) % m], q);
          if (s <= 0) strictly_in = 0;
          if (s < 0) strictly_out = 1;
        }
        int bad = a > 1 || b > 1 || a != b || (strictly_in && a != 1) || (strictly_out && a != 0);
        interior_checked += strictly_in;
        if (bad && failures++ < 5)
          harness_fail(__FILE__, __LINE__, "trial %d pixel (%d,%d): fan-centre %d, fan-corner %d, inside %d outside %d",
                       trial, i, j, a, b, strictly_in, strictly_out);
      }
  }
  CHECK(interior_checked > 1000);
  loom_canvas_destroy(c);
}

/* The same with arbitrary (sub-pixel) positions: a random convex quad split along either
 * diagonal covers the same pixels, each once. */
TEST(render_quad_diagonals_agree) {
  enum { W = 40, H = 40 };
  loom_canvas *c = make_canvas(W, H);
  if (!c) return;
  static int cnt_a[W * H], cnt_b[W * H];
  int failures = 0, covered = 0;
  for (int trial = 0; trial < 60; trial++) {
    double q[8];
    for (int k = 0; k < 4; k++) {
      double a = (k + rnd(0.1, 0.9)) * PI / 2, r = rnd(5, 18);
      q[2 * k] = 20 + r * cos(a);
      q[2 * k + 1] = 20 + r * sin(a);
    }
    /* Quarter-sector corners keep the quad convex only if each corner sees the next two turn the
     * same way; skip the rare reflex ones. */
    int convex = 1;
    for (int k = 0; k < 4; k++) {
      const double *o = q + 2 * k, *a = q + 2 * ((k + 1) % 4), *b = q + 2 * ((k + 2) % 4);
      if ((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]) <= 1e-3) convex = 0;
    }
    if (!convex) continue;
    memset(cnt_a, 0, sizeof cnt_a);
    memset(cnt_b, 0, sizeof cnt_b);
    double t1[6] = {q[0], q[1], q[2], q[3], q[4], q[5]}, t2[6] = {q[0], q[1], q[4], q[5], q[6], q[7]};
    double t3[6] = {q[2], q[3], q[4], q[5], q[6], q[7]}, t4[6] = {q[2], q[3], q[6], q[7], q[0], q[1]};
    accumulate_coverage(c, t1, cnt_a);
    accumulate_coverage(c, t2, cnt_a);
    accumulate_coverage(c, t3, cnt_b);
    accumulate_coverage(c, t4, cnt_b);
    for (int k = 0; k < W * H; k++) {
      covered += cnt_a[k] == 1;
      if ((cnt_a[k] > 1 || cnt_b[k] > 1 || cnt_a[k] != cnt_b[k]) && failures++ < 5)
        harness_fail(__FILE__, __LINE__, "trial %d pixel %d: %d vs %d", trial, k, cnt_a[k], cnt_b[k]);
    }
  }
  CHECK(covered > 5000);
  loom_canvas_destroy(c);
}

TEST(render_near_plane_clipping) {
  enum { W = 64, H = 48 };
  loom_canvas *c = loom_canvas_create(W, H);
  if (!c) return;
  /* Eye 1 m above a floor, looking at the horizon: the horizon is row 24; the floor triangle
   * reaches far behind the eye. Projected without clipping, its rear part would land (mirrored)
   * in the upper half of the image. */
  loom_camera cam = {{0, 0, 1}, {0, 10, 1}, {0, 0, 1}, 90, 0.1, 1000};
  loom_canvas_set_camera(c, &cam);
  int32_t t[3] = {0, 1, 2};
  const double spans[2] = {50, 1e7}; /* the second also exercises the guard-band clip */
  for (int s = 0; s < 2; s++) {
    double a = spans[s];
    loom_vec3 v[3] = {{-a, -a, 0}, {a, -a, 0}, {0, a, 0}};
    loom_canvas_clear(c, BG);
    loom_canvas_mesh(c, v, 3, t, 1, NULL, NULL, 0x808080ffu, 0x808080ffu, NULL, 0);
    int sky = 0, ground_missing = 0;
    for (int j = 0; j < H; j++)
      for (int i = 0; i < W; i++) {
        if (j < 24) sky += !is_bg(c, i, j);
        if (j >= 30) ground_missing += is_bg(c, i, j);
      }
    CHECK_EQ_INT(sky, 0);
    CHECK_EQ_INT(ground_missing, 0);
  }
  /* Entirely behind the eye: nothing. */
  loom_vec3 behind[3] = {{-5, -3, 0}, {5, -3, 0}, {0, -1, 2}};
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, behind, 3, t, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, 0);
  CHECK_EQ_INT(count_non_bg(c), 0);
  /* A wall crossing the near plane at an angle: drawn where in front, and the depth it leaves
   * matches the wall (a point just in front of the wall stays visible). */
  loom_vec3 wall[3] = {{-0.5, -2, -3}, {4, 6, -3}, {-0.5, -2, 4}};
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, wall, 3, t, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, 0);
  CHECK(count_non_bg(c) > 100);
  CHECK(is_bg(c, 2, 24)); /* left of the wall's trace */
  loom_canvas_destroy(c);
}

/* Watertightness survives near-plane clipping: a jittered floor grid running from behind the eye
 * to far ahead, each triangle drawn alone, covers every ground pixel exactly once. */
TEST(render_clipped_grid_is_watertight) {
  enum { W = 64, H = 48, N = 9 };
  loom_canvas *c = loom_canvas_create(W, H);
  if (!c) return;
  loom_camera cam = {{0, 0, 0.5}, {0, 10, 0.5}, {0, 0, 1}, 90, 0.1, 100};
  loom_canvas_set_camera(c, &cam);
  static int count[W * H];
  int failures = 0, clipped = 0;
  for (int trial = 0; trial < 6; trial++) {
    loom_vec3 v[N * N];
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++) {
        int edge = i == 0 || j == 0 || i == N - 1 || j == N - 1;
        v[j * N + i] = (loom_vec3){-6 + 12.0 * i / (N - 1) + (edge ? 0 : rnd(-0.6, 0.6)),
                                   -4 + 12.0 * j / (N - 1) + (edge ? 0 : rnd(-0.6, 0.6)), 0};
      }
    memset(count, 0, sizeof count);
    for (int j = 0; j < N - 1; j++)
      for (int i = 0; i < N - 1; i++) {
        int a = j * N + i;
        int32_t t[6] = {a, a + 1, a + N + 1, a, a + N + 1, a + N};
        for (int k = 0; k < 2; k++) {
          clipped += v[t[3 * k]].y < 0.1 || v[t[3 * k + 1]].y < 0.1 || v[t[3 * k + 2]].y < 0.1;
          loom_canvas_clear(c, BG);
          loom_canvas_mesh(c, v, N * N, t + 3 * k, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, LOOM_DRAW_FLAT);
          for (int q = 0; q < W * H; q++) count[q] += !is_bg(c, q % W, q / W);
        }
      }
    /* The far edge (y = 8) projects to row 25.5; from row 27 down all pixels are ground. */
    for (int q = 0; q < W * H; q++) {
      int row = q / W, bad = count[q] > 1 || (row >= 27 && count[q] != 1) || (row < 24 && count[q] != 0);
      if (bad && failures++ < 5)
        harness_fail(__FILE__, __LINE__, "trial %d pixel (%d,%d) covered %d times", trial, q % W, row, count[q]);
    }
  }
  CHECK(clipped > 50);
  loom_canvas_destroy(c);
}

TEST(render_bad_input_never_crashes) {
  loom_canvas *c = make_canvas(48, 48);
  if (!c) return;
  loom_canvas *ref = make_canvas(48, 48);
  if (!ref) return;
  double nan = NAN, inf = INFINITY;
  loom_vec3 v[8] = {{-2, 0, -2}, {2, 0, -2}, {0, 0, 2},       {nan, 0, 0},
                    {1e30, 0, 1}, {inf, 0, 0}, {-1e300, 0, 1e300}, {0, -4.99999, -1}};
  int32_t t[] = {0, 1, 2,  3, 1, 2,  0, 4, 2,  5, 6, 0,  0, 1, 8,  -1, 0, 1,  INT32_MIN, 2, 1,
                 0, 1, 1000000, 7, 0, 1, 4, 6, 7};
  int nt = (int)(sizeof t / sizeof t[0] / 3);
  int flags[4] = {0, LOOM_DRAW_FLAT, LOOM_DRAW_WIREFRAME, LOOM_DRAW_NO_FILL};
  for (int f = 0; f < 4; f++) {
    loom_canvas_clear(c, BG);
    loom_canvas_mesh(c, v, 8, t, nt, NULL, NULL, 0xffffffffu, 0x808080ffu, NULL, flags[f]);
    CHECK(count_non_bg(c) > (flags[f] == LOOM_DRAW_NO_FILL ? 40 : 400)); /* the valid triangles still draw */
    /* Outside the valid geometry the picture is the same as drawing just that geometry. */
    loom_canvas_clear(ref, BG);
    int32_t good[6] = {0, 1, 2, 7, 0, 1};
    loom_canvas_mesh(ref, v, 8, good, 2, NULL, NULL, 0xffffffffu, 0x808080ffu, NULL, flags[f]);
    int diff = 0;
    for (int k = 0; k < 48 * 48 * 4; k++) diff += loom_canvas_pixels(c)[k] != loom_canvas_pixels(ref)[k];
    CHECK_EQ_INT(diff, 0);
  }
  /* Empty and negative counts, bad poses. */
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, v, 0, t, 1, NULL, NULL, 0xffffffffu, 0, NULL, 0);
  loom_canvas_mesh(c, v, 3, t, 0, NULL, NULL, 0xffffffffu, 0, NULL, 0);
  loom_canvas_mesh(c, v, -5, t, -1, NULL, NULL, 0xffffffffu, 0, NULL, 0);
  loom_quat zero = {0, 0, 0, 0};
  loom_canvas_mesh(c, v, 3, t, 1, NULL, &zero, 0xffffffffu, 0, NULL, 0);
  CHECK_STR_CONTAINS(loom_last_error(), "rotation");
  loom_vec3 nanpos = {nan, 0, 0};
  loom_canvas_mesh(c, v, 3, t, 1, &nanpos, NULL, 0xffffffffu, 0, NULL, 0);
  CHECK_EQ_INT(count_non_bg(c), 0);
  /* Lines, points and 2D calls with non-finite or huge values. */
  loom_vec3 a = {nan, 0, 0}, b = {1e300, -1e300, 5}, o = {0, 0, 0}, e = {0, -5, 0};
  loom_canvas_line3(c, &a, &o, 0xffffffffu);
  loom_canvas_line3(c, &b, &o, 0xffffffffu);
  loom_canvas_line3(c, &e, &o, 0xffffffffu); /* starts at the eye itself */
  loom_canvas_point3(c, &a, 5, 0xffffffffu);
  loom_canvas_point3(c, &o, nan, 0xffffffffu);
  loom_canvas_point3(c, &o, 1e300, 0xffffffffu);
  loom_canvas_rect(c, nan, 0, 5, 5, 0xffffffffu);
  loom_canvas_rect(c, -1e300, -1e300, 1e300, inf, 0xffffffffu);
  loom_canvas_line2(c, nan, 0, 5, 5, 0xffffffffu);
  loom_canvas_line2(c, -1e300, 3, 1e300, 4, 0xffffffffu);
  loom_canvas_line2(c, 3, -1e308, 4, 1e308, 0xffffffffu);
  loom_canvas_text(c, nan, 0, "abc", 0xffffffffu, 1);
  loom_canvas_text(c, 1e300, -1e300, "abc", 0xffffffffu, 1e300);
  loom_canvas_text(c, 0, 0, "\x01\x7f\xff\xc3\xa9\t\r", 0xffffffffu, 1);
  loom_canvas_destroy(c);
  loom_canvas_destroy(ref);
}

TEST(render_big_mesh_scratch_grows_then_allocates_nothing) {
  loom_canvas *c = make_canvas(128, 128);
  if (!c) return;
  /* 400 x 400 grid: 160,801 vertices, well past any fixed buffer one might have chosen. */
  enum { N = 401 };
  loom_vec3 *v = malloc(sizeof *v * N * N);
  int32_t *t = malloc(sizeof *t * 6 * (N - 1) * (N - 1));
  if (!v || !t) return;
  int k = 0;
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) v[j * N + i] = (loom_vec3){4.0 * i / (N - 1) - 2, 0, 4.0 * j / (N - 1) - 2};
  for (int j = 0; j < N - 1; j++)
    for (int i = 0; i < N - 1; i++) {
      int a = j * N + i;
      int32_t q[6] = {a, a + 1, a + N + 1, a, a + N + 1, a + N};
      memcpy(t + k, q, sizeof q);
      k += 6;
    }
  loom_canvas_mesh(c, v, 3, t, 1, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, 0); /* small first */
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, v, N * N, t, k / 3, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, LOOM_DRAW_WIREFRAME);
  /* The grid spans 4 m at depth 5 with fov 90: 4 / 10 of the width, centred. */
  CHECK(!is_bg(c, 64, 64));
  CHECK(is_bg(c, 5, 64));
  long before = harness_alloc_count();
  loom_canvas_clear(c, BG);
  loom_canvas_mesh(c, v, N * N, t, k / 3, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, LOOM_DRAW_WIREFRAME);
  loom_canvas_mesh(c, v, N * N, t, k / 3, NULL, NULL, 0xffffffffu, 0xffffffffu, NULL, 0);
  CHECK_EQ_INT(harness_alloc_count() - before, 0);
  free(v);
  free(t);
  loom_canvas_destroy(c);
}

TEST(render_pose_moves_mesh) {
  loom_canvas *c = make_canvas(64, 64);
  if (!c) return;
  /* A small triangle around the origin, turned 180 degrees about z and moved 1 m right: now seen
   * from the back, and centred 32 * 1 / 5 = 6.4 px right of the screen centre. */
  const double tri[6] = {28, 36, 36, 36, 32, 28};
  loom_vec3 v[3];
  for (int k = 0; k < 3; k++) v[k] = on_plane(c, tri[2 * k], tri[2 * k + 1]);
  int32_t t[3] = {0, 1, 2};
  loom_vec3 pos = {1, 0, 0};
  loom_quat q = {0, 0, 0, 1}; /* 180 degrees about z */
  loom_canvas_mesh(c, v, 3, t, 1, &pos, &q, 0xff0000ffu, 0x0000ffffu, NULL, LOOM_DRAW_FLAT);
  double sx, sy, d;
  loom_canvas_project(c, &pos, &sx, &sy, &d);
  CHECK_NEAR(sx, 32 + 6.4, 1e-9);
  const uint8_t *p = px(c, (int)sx, 33);
  CHECK(p[2] > 0 && p[0] == 0); /* back colour: rotation about z mirrors the winding as seen */
  CHECK(is_bg(c, 32, 33));      /* nothing left at the original place */
  loom_canvas_destroy(c);
}

/* A scene touching every drawing path, for the thread test. */
static void draw_scene(loom_canvas *c) {
  enum { SL = 20, ST = 12 };
  loom_vec3 v[(ST + 1) * SL];
  int32_t t[3 * 2 * SL * ST];
  int nt = make_sphere(SL, ST, 1.2, v, t);
  loom_camera cam = {{1, -4, 1.5}, {0, 0, 0}, {0, 0, 1}, 50, 0.1, 100};
  loom_canvas_set_camera(c, &cam);
  loom_canvas_clear(c, 0x202020ffu);
  loom_vec3 pos = {0.3, 0, 0};
  loom_canvas_mesh(c, v, (ST + 1) * SL, t, nt, &pos, NULL, 0xc04040ffu, 0x4040c0ffu, NULL, LOOM_DRAW_WIREFRAME);
  loom_vec3 a = {-2, 0, 0}, b = {2, 0, 0};
  loom_canvas_line3(c, &a, &b, 0xffff00ffu);
  loom_canvas_point3(c, &a, 4, 0x00ffffffu);
  loom_canvas_rect(c, 4, 4, 80, 20, 0x00000080u);
  loom_canvas_text(c, 6, 6, "thread-safe?", 0xffffffffu, 1.5);
}

static void *draw_scene_thread(void *arg) {
  draw_scene(arg);
  return NULL;
}

/* No shared mutable state: canvases drawn concurrently match one drawn alone, byte for byte. */
TEST(render_canvases_in_parallel_threads) {
  loom_canvas *ref = loom_canvas_create(160, 120), *c[2] = {loom_canvas_create(160, 120), loom_canvas_create(160, 120)};
  if (!ref || !c[0] || !c[1]) return;
  draw_scene(ref);
  pthread_t th[2];
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < 2; k++) CHECK_EQ_INT(pthread_create(&th[k], NULL, draw_scene_thread, c[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) CHECK(memcmp(loom_canvas_pixels(c[k]), loom_canvas_pixels(ref), 160 * 120 * 4) == 0);
  }
  CHECK(count_non_bg(ref) > 1000);
  loom_canvas_destroy(ref);
  loom_canvas_destroy(c[0]);
  loom_canvas_destroy(c[1]);
}

/* ---- edges, lines, points -------------------------------------------------------------------- */

TEST(render_wireframe_and_no_fill) {
  loom_canvas *c = make_canvas(64, 64);
  if (!c) return;
  const double tri[6] = {8, 56, 56, 56, 32, 8};
  draw_screen_tri(c, tri, 0xffffffffu, 0xffffffffu, LOOM_DRAW_WIREFRAME);
  /* The bottom edge lies on y = 56, the boundary of rows 55 and 56: the overlay puts it in row 56
   * in the darkened colour (neither background 0 nor fill 255); the middle is the bright fill. */
  int dark_bottom = 0;
  for (int i = 16; i < 48; i++) dark_bottom += px(c, i, 56)[0] > 40 && px(c, i, 56)[0] < 128;
  CHECK(dark_bottom == 32);
  CHECK(px(c, 32, 40)[0] > 200);
  loom_canvas_clear(c, BG);
  draw_screen_tri(c, tri, 0x00ff00ffu, 0x00ff00ffu, LOOM_DRAW_NO_FILL);
  CHECK(is_bg(c, 32, 40)); /* no fill */
  int edge = 0;
  for (int i = 16; i < 48; i++) edge += px(c, i, 55)[1] == 255 || px(c, i, 56)[1] == 255;
  CHECK(edge >= 30);
  loom_canvas_destroy(c);
}

TEST(render_line3_and_point3_depth) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  loom_vec3 wall[3] = {{-20, 0, -20}, {20, 0, -20}, {0, 0, 20}};
  int32_t t[3] = {0, 1, 2};
  loom_canvas_mesh(c, wall, 3, t, 1, NULL, NULL, 0x808080ffu, 0x808080ffu, NULL, LOOM_DRAW_FLAT);
  const double ys[3] = {-1.0, 0.0, 1.0}; /* in front of, on, behind the wall */
  const int rows[3] = {10, 24, 38};
  for (int k = 0; k < 3; k++) {
    /* A horizontal line across the view at screen row rows[k]. */
    double z = (24.0 - (rows[k] + 0.5)) * (5.0 + ys[k]) / 24.0;
    loom_vec3 a = {-6, ys[k], z}, b = {6, ys[k], z};
    loom_canvas_line3(c, &a, &b, 0xff0000ffu);
  }
  int red[3] = {0, 0, 0};
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 64; i++) red[k] += px(c, i, rows[k])[0] == 255 && px(c, i, rows[k])[1] == 0;
  CHECK(red[0] > 50);
  CHECK(red[1] > 50); /* lying on the surface: visible thanks to the bias */
  CHECK_EQ_INT(red[2], 0);
  loom_vec3 pf = {0, -1, 0}, pb = {0.5, 1, 0};
  loom_canvas_point3(c, &pf, 5, 0x00ff00ffu);
  loom_canvas_point3(c, &pb, 5, 0x0000ffffu);
  int green = 0, blue = 0;
  for (int j = 0; j < 48; j++)
    for (int i = 0; i < 64; i++) {
      const uint8_t *p = px(c, i, j);
      green += p[1] == 255 && p[0] == 0;
      blue += p[2] == 255 && p[0] == 0;
    }
  CHECK_EQ_INT(green, 25);
  CHECK_EQ_INT(blue, 0);
  loom_canvas_destroy(c);
}

TEST(render_line3_clipped_at_near_plane) {
  loom_canvas *c = make_canvas(64, 48);
  if (!c) return;
  /* A line 1 m below the eye running from behind it to far ahead: in view it stays below the
   * horizon (row 24). Unclipped, its rear part would project mirrored above the horizon. */
  loom_vec3 a = {0.3, -30, -1}, b = {0.3, 30, -1};
  loom_canvas_line3(c, &a, &b, 0xffffffffu);
  int above = 0, below = 0;
  for (int j = 0; j < 48; j++)
    for (int i = 0; i < 64; i++) {
      if (is_bg(c, i, j)) continue;
      above += j < 24;
      below += j >= 24;
    }
  CHECK_EQ_INT(above, 0);
  CHECK(below >= 20); /* from the bottom edge up to near the horizon, one pixel per row */
  loom_canvas_destroy(c);
}

TEST(render_line2_pixels) {
  loom_canvas *c = make_canvas(32, 32);
  if (!c) return;
  loom_canvas_line2(c, 2.5, 5.5, 10.5, 5.5, 0xffffffffu);
  for (int i = 0; i < 32; i++) CHECK_EQ_INT(!is_bg(c, i, 5), i >= 2 && i <= 10);
  CHECK_EQ_INT(count_non_bg(c), 9);
  /* A translucent diagonal: one pixel per column, each blended exactly once. */
  loom_canvas_clear(c, BG);
  loom_canvas_line2(c, 3.5, 3.5, 20.5, 28.5, 0xffffff80u);
  int n = 0, uniform = 1;
  for (int j = 0; j < 32; j++) {
    int in_row = 0;
    for (int i = 0; i < 32; i++)
      if (!is_bg(c, i, j)) {
        n++;
        in_row++;
        uniform &= px(c, i, j)[0] == 128;
      }
    if (j >= 3 && j <= 28) CHECK_EQ_INT(in_row, 1); /* y-major: one pixel per row */
  }
  CHECK_EQ_INT(n, 26);
  CHECK(uniform);
  loom_canvas_destroy(c);
}

/* ---- 2D: rectangles, text ---------------------------------------------------------------------- */

TEST(render_rect_blending_exact) {
  loom_canvas *c = loom_canvas_create(16, 16);
  if (!c) return;
  loom_canvas_clear(c, 0x0000ffffu);
  /* Centres in [2.5, 6.5) x [3.2, 5.2): columns 2..5, rows 3..4. */
  loom_canvas_rect(c, 2.5, 3.2, 4.0, 2.0, 0xff000080u);
  int n = 0;
  for (int j = 0; j < 16; j++)
    for (int i = 0; i < 16; i++) {
      const uint8_t *p = px(c, i, j);
      int in = i >= 2 && i <= 5 && j >= 3 && j <= 4;
      if (!in) {
        CHECK(p[0] == 0 && p[1] == 0 && p[2] == 255 && p[3] == 255);
        continue;
      }
      n++;
      /* round((s * a + d * (255 - a)) / 255): R (255 * 128) / 255 = 128, B (255 * 127) / 255 = 127. */
      CHECK_EQ_INT(p[0], 128);
      CHECK_EQ_INT(p[1], 0);
      CHECK_EQ_INT(p[2], 127);
      CHECK_EQ_INT(p[3], 255);
    }
  CHECK_EQ_INT(n, 8);
  /* Second layer, green at alpha 64 over (128, 0, 127): R 128 * 191 / 255 = 95.87 -> 96,
   * G 255 * 64 / 255 = 64, B 127 * 191 / 255 = 95.13 -> 95. */
  loom_canvas_rect(c, 2, 3, 1, 1, 0x00ff0040u);
  const uint8_t *p = px(c, 2, 3);
  CHECK_EQ_INT(p[0], 96);
  CHECK_EQ_INT(p[1], 64);
  CHECK_EQ_INT(p[2], 95);
  CHECK_EQ_INT(p[3], 255);
  /* Alpha 0 changes nothing; alpha 255 replaces; non-positive sizes draw nothing. */
  loom_canvas_rect(c, 0, 0, 16, 16, 0xffffff00u);
  CHECK_EQ_INT(px(c, 2, 3)[0], 96);
  loom_canvas_rect(c, 0, 0, -4, 3, 0xffffffffu);
  loom_canvas_rect(c, 0, 0, 3, 0, 0xffffffffu);
  CHECK_EQ_INT(px(c, 0, 0)[0], 0);
  loom_canvas_rect(c, 0, 0, 1, 1, 0x123456ffu);
  CHECK(px(c, 0, 0)[0] == 0x12 && px(c, 0, 0)[1] == 0x34 && px(c, 0, 0)[2] == 0x56 && px(c, 0, 0)[3] == 0xff);
  loom_canvas_destroy(c);
}

TEST(render_text_within_reported_box) {
  loom_canvas *c = loom_canvas_create(200, 100);
  if (!c) return;
  const char *s = "Hello, {Wg}|\nquick_j0\n";
  const double scales[3] = {1.0, 2.0, 1.5};
  for (int k = 0; k < 3; k++) {
    double sc = scales[k], x0 = 10.0, y0 = 7.0;
    loom_canvas_clear(c, BG);
    double w = loom_canvas_text(c, x0, y0, s, 0xffffffffu, sc);
    CHECK_NEAR(w, loom_text_width(s, sc), 0);
    CHECK_NEAR(loom_text_height(s, sc), 24 * sc, 0); /* two lines; the trailing '\n' adds none */
    int inside = 0, outside = 0, maxi = -1;
    for (int j = 0; j < 100; j++)
      for (int i = 0; i < 200; i++) {
        if (is_bg(c, i, j)) continue;
        int in = i + 0.5 >= x0 && i + 0.5 < x0 + w && j + 0.5 >= y0 && j + 0.5 < y0 + 24 * sc;
        inside += in;
        outside += !in;
        if (i > maxi) maxi = i;
      }
    CHECK(inside > 60 * sc * sc);
    CHECK_EQ_INT(outside, 0);
    CHECK(maxi + 0.5 > x0 + w - 8 * sc); /* the box is tight: ink reaches its last glyph */
  }
  CHECK_NEAR(loom_text_height("a", 1), 12, 0);
  CHECK_NEAR(loom_text_height("a\nb", 1), 24, 0);
  CHECK_NEAR(loom_text_width("", 1), 0, 0);
  CHECK_NEAR(loom_text_width("ab\nabcd\nabc", 1), loom_text_width("abcd", 1), 0);
  CHECK_NEAR(loom_text_width("abcd", 3), 3 * loom_text_width("abcd", 1), 0);
  CHECK_NEAR(loom_text_width("abc", -1), 0, 0);
  loom_canvas_destroy(c);
}

TEST(render_text_translucent_blends_once) {
  loom_canvas *c = loom_canvas_create(120, 40);
  if (!c) return;
  loom_canvas_clear(c, BG);
  /* Glyph segments overlap at some corners; every inked pixel must still be blended once. */
  loom_canvas_text(c, 2, 2, "08BQ#@&%$", 0xffffff80u, 3);
  int n = 0, other = 0;
  for (int j = 0; j < 40; j++)
    for (int i = 0; i < 120; i++) {
      if (is_bg(c, i, j)) continue;
      n++;
      other += px(c, i, j)[0] != 128;
    }
  CHECK(n > 200);
  CHECK_EQ_INT(other, 0);
  loom_canvas_destroy(c);
}

/* ---- PNG ------------------------------------------------------------------------------------- */

TEST(render_png_roundtrip_exact) {
  loom_canvas *c = loom_canvas_create(53, 17);
  if (!c) return;
  uint8_t *p = loom_canvas_pixels(c);
  for (int k = 0; k < 53 * 17 * 4; k++) p[k] = (uint8_t)(rng() & 255);
  const char *path = harness_tmp("roundtrip.png");
  CHECK_EQ_INT(loom_canvas_write_png(c, path), 0);
  loom_canvas *r = loom_canvas_read_png(path);
  CHECK(r != NULL);
  if (r) {
    CHECK_EQ_INT(loom_canvas_width(r), 53);
    CHECK_EQ_INT(loom_canvas_height(r), 17);
    CHECK(memcmp(loom_canvas_pixels(r), p, 53 * 17 * 4) == 0);
    loom_canvas_destroy(r);
  }
  remove(path);
  CHECK(loom_canvas_read_png(harness_tmp("does_not_exist.png")) == NULL);
  CHECK_STR_CONTAINS(loom_last_error(), "cannot read");
  CHECK_EQ_INT(loom_canvas_write_png(c, "/nonexistent-dir/x.png"), -1);
  CHECK_STR_CONTAINS(loom_last_error(), "cannot write");
  loom_canvas_destroy(c);
}
