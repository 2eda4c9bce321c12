/* render_image.c — PNG files: written with stb_image_write, read with stb_image (PNG only). The
 * stb implementations are compiled here, static, so that a host linking its own copy of stb
 * cannot collide with ours. */
#include "render.h"

#include <stdlib.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

/* With STB_IMAGE_STATIC, stb_image declares two functions it compiles out under STBI_ONLY_PNG
 * ("declared static but never defined"). GCC reports that at the end of the translation unit, so
 * the suppression must stay on to the end; this file defines no static functions of its own. */
#pragma GCC diagnostic ignored "-Wunused-function"
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

/* stb tries all five PNG row filters by default, which nearly doubles the encoding time of a
 * rendered frame for a 2 % smaller file; the "sub" filter and a light compression level write a
 * 1280x720 frame in about 29 ms instead of 50. Set once when the library loads (the variables are
 * this file's own, static copies). */
__attribute__((constructor)) static void png_settings(void) {
  stbi_write_force_png_filter = 1;
  stbi_write_png_compression_level = 2;
}

LOOM_API int loom_canvas_write_png(const loom_canvas *c, const char *path) {
  if (!c || !path) return loom_fail("loom_canvas_write_png: %s is NULL", c ? "path" : "canvas");
  /* The pixel buffer's memory order is already R, G, B, A, top row first: what PNG wants. */
  if (!stbi_write_png(path, c->w, c->h, 4, c->px, c->w * 4))
    return loom_fail("loom_canvas_write_png: cannot write '%s'", path);
  return 0;
}

LOOM_API loom_canvas *loom_canvas_read_png(const char *path) {
  if (!path) {
    loom_fail("loom_canvas_read_png: path is NULL");
    return NULL;
  }
  int w, h, comp;
  unsigned char *data = stbi_load(path, &w, &h, &comp, 4);
  if (!data) {
    loom_fail("loom_canvas_read_png: cannot read '%s' (%s)", path, stbi_failure_reason());
    return NULL;
  }
  loom_canvas *c = loom_canvas_create(w, h); /* validates the size and sets the message */
  if (c) memcpy(c->px, data, (size_t)w * (size_t)h * 4);
  stbi_image_free(data);
  return c;
}
