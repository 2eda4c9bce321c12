/* render_text.c — ASCII text from stb_easy_font's segment font: each glyph is a handful of
 * axis-aligned quads, filled here as pixel rectangles scaled by `scale`. */
#include "render.h"

#include <math.h>

#include <stb/stb_easy_font.h>

#define LINE_HEIGHT 12 /* px at scale 1, stb_easy_font's line advance */
#define MAX_QUADS 64   /* per glyph; the largest glyph uses 11 */

/* stb_easy_font's tables cover ' '..'~' and are indexed without checks, so every byte is mapped
 * onto that range first: tab becomes a space, carriage return disappears (CRLF text), anything
 * else unprintable (including UTF-8 bytes) becomes '?'. Returns 0 for "no glyph". */
static int glyph_char(unsigned char ch) {
  if (ch == '\t') return ' ';
  if (ch == '\r') return 0;
  if (ch < 32 || ch > 126) return '?';
  return ch;
}

/* Pen advance in font units (1 unit = 1 px at scale 1); glyph ink lies within [0, advance) x
 * [0, 10), which keeps every pixel drawn inside the box reported by loom_text_width/height. */
static int glyph_advance(int ch) {
  char s[2] = {(char)ch, 0};
  return stb_easy_font_width(s);
}

/* Extents in font units: widest line, and LINE_HEIGHT per line, where a final line counts only
 * if it is not empty (stb_easy_font_height's convention: "a\n" is one line high). */
static void text_extent(const char *s, int *width, int *height) {
  int w = 0, line = 0, lines = 0, nonempty = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\n') {
      lines++;
      nonempty = 0;
      line = 0;
      continue;
    }
    nonempty = 1;
    int ch = glyph_char(*p);
    if (ch) line += glyph_advance(ch);
    if (line > w) w = line;
  }
  *width = w;
  *height = LINE_HEIGHT * (lines + nonempty);
}

static int scale_ok(double scale) { return scale > 0 && isfinite(scale); }

LOOM_API double loom_text_width(const char *s, double scale) {
  if (!s || !scale_ok(scale)) return 0;
  int w, h;
  text_extent(s, &w, &h);
  return w * scale;
}

LOOM_API double loom_text_height(const char *s, double scale) {
  if (!s || !scale_ok(scale)) return 0;
  int w, h;
  text_extent(s, &w, &h);
  return h * scale;
}

typedef struct span {
  int i0, i1;
} span;

/* Draws one glyph with its origin at pixel position (x, y). Quads of a glyph overlap at some
 * corners, so each row's spans are merged first: a translucent glyph blends every pixel once. */
static void draw_glyph(loom_canvas *c, int ch, double x, double y, double scale, uint32_t rgba) {
  _Alignas(16) char vbuf[MAX_QUADS * 64];
  char s[2] = {(char)ch, 0};
  int nq = stb_easy_font_print(0, 0, s, NULL, vbuf, (int)sizeof vbuf);
  int box[MAX_QUADS][4], nb = 0, jlo = c->h, jhi = -1;
  for (int q = 0; q < nq && q < MAX_QUADS; q++) {
    float lo[2], hi[2]; /* corners 0 and 2 of the quad are its min and max */
    memcpy(lo, vbuf + 64 * q, sizeof lo);
    memcpy(hi, vbuf + 64 * q + 32, sizeof hi);
    int *b = box[nb];
    if (!render_centre_range(x + scale * lo[0], x + scale * hi[0], c->w, &b[0], &b[1]) ||
        !render_centre_range(y + scale * lo[1], y + scale * hi[1], c->h, &b[2], &b[3]))
      continue;
    if (b[2] < jlo) jlo = b[2];
    if (b[3] > jhi) jhi = b[3];
    nb++;
  }
  for (int j = jlo; j <= jhi; j++) {
    span sp[MAX_QUADS];
    int n = 0;
    for (int k = 0; k < nb; k++) {
      if (j < box[k][2] || j > box[k][3]) continue;
      span t = {box[k][0], box[k][1]};
      int m = n++;
      while (m > 0 && sp[m - 1].i0 > t.i0) {
        sp[m] = sp[m - 1];
        m--;
      }
      sp[m] = t;
    }
    for (int k = 0; k < n;) {
      int i0 = sp[k].i0, i1 = sp[k].i1;
      for (k++; k < n && sp[k].i0 <= i1 + 1; k++)
        if (sp[k].i1 > i1) i1 = sp[k].i1;
      render_blend_span(c, j, i0, i1, rgba);
    }
  }
}

LOOM_API double loom_canvas_text(loom_canvas *c, double x, double y, const char *s, uint32_t rgba, double scale) {
  if (!c || !s || !scale_ok(scale) || !isfinite(x) || !isfinite(y)) return 0;
  int pen = 0, row = 0, widest = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '\n') {
      pen = 0;
      row++;
      continue;
    }
    int ch = glyph_char(*p);
    if (!ch) continue;
    double gx = x + scale * pen, gy = y + scale * (double)row * LINE_HEIGHT;
    /* Skip glyphs wholly off the canvas; the pen still advances. */
    if (ch != ' ' && gx < c->w && gy < c->h && gx + scale * LINE_HEIGHT > 0 && gy + scale * LINE_HEIGHT > 0)
      draw_glyph(c, ch, gx, gy, scale, rgba);
    pen += glyph_advance(ch);
    if (pen > widest) widest = pen;
  }
  return widest * scale;
}
