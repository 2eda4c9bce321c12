/* mesh_io.c — OBJ and STL (ASCII and binary) loaders.
 *
 * The whole file is read into memory (so lines may be arbitrarily long) and parsed in place.
 * The format is chosen by content, never by extension:
 *   1. binary STL when the file holds 84 + 50 count bytes or more (count = uint32 at byte 80);
 *      exporters often start binary headers with "solid", so this test comes first;
 *   2. ASCII STL when the text starts with "solid" (if the first bytes are not text, it is a
 *      broken binary STL instead, for the same reason);
 *   3. OBJ when the beginning of the file is text;
 *   4. otherwise, with >= 84 bytes, a binary STL whose triangle count does not fit the file.
 * Every failure returns NULL with "<path>: <problem>" or "<path>:<line>: <problem>". Allocations
 * are bounded by the file size: counts read from a file are checked against the bytes present
 * before anything is allocated for them. */
#define _POSIX_C_SOURCE 200809L
#include "mesh/mesh.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Larger files are refused before reading: the parsers keep byte offsets and counts in ints. */
#define LOAD_MAX_BYTES ((size_t)INT32_MAX)
/* How much of the file the text/binary sniffing looks at. */
#define SNIFF_BYTES 4096

/* Text being parsed: buf[size] is always a NUL (strtod needs a terminator). */
typedef struct source {
  const char *name;
  const char *buf;
  size_t size;
} source;

static int fail_errno(const char *path, const char *what, int err) {
  char why[128];
  if (strerror_r(err, why, sizeof why)) snprintf(why, sizeof why, "error %d", err);
  return loom_fail("%s: %s (%s)", path, what, why);
}

/* ---- reading --------------------------------------------------------------------------------- */

static int read_file(const char *path, char **out, size_t *out_size) {
  *out = NULL;
  *out_size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return fail_errno(path, "cannot open", errno);
  struct stat st;
  int have_stat = fstat(fileno(f), &st) == 0;
  if (have_stat && S_ISDIR(st.st_mode)) {
    fclose(f);
    return fail_errno(path, "cannot read", EISDIR);
  }
  /* Regular files are read in one go (size from fstat, plus the NUL); pipes and special files
   * grow the buffer as they are read. */
  size_t cap = 65536;
  if (have_stat && S_ISREG(st.st_mode) && st.st_size >= 0) {
    if ((uintmax_t)st.st_size > LOAD_MAX_BYTES) {
      fclose(f);
      return loom_fail("%s: file too large (more than %zu bytes)", path, LOAD_MAX_BYTES);
    }
    cap = (size_t)st.st_size + 1;
  }
  char *buf = core_alloc(cap, 1);
  size_t n = 0;
  int err = 0;
  while (buf) {
    size_t want = cap - 1 - n;
    size_t got = want ? fread(buf + n, 1, want, f) : 0;
    n += got;
    if (got < want) break; /* end of file or error */
    int c = fgetc(f);      /* full: is there more? */
    if (c == EOF) break;
    if (cap - 1 >= LOAD_MAX_BYTES) {
      core_free(buf);
      fclose(f);
      return loom_fail("%s: file too large (more than %zu bytes)", path, LOAD_MAX_BYTES);
    }
    size_t ncap = cap > LOAD_MAX_BYTES / 2 ? LOAD_MAX_BYTES + 1 : 2 * cap;
    char *nb = core_realloc(buf, ncap, 1);
    if (!nb) {
      core_free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap = ncap;
    buf[n++] = (char)c;
  }
  if (!buf) {
    fclose(f);
    loom_error_prefix(path);
    return -1;
  }
  if (ferror(f)) err = errno ? errno : EIO;
  fclose(f);
  if (err) {
    core_free(buf);
    return fail_errno(path, "cannot read", err);
  }
  buf[n] = 0;
  *out = buf;
  *out_size = n;
  return 0;
}

/* ---- lexical helpers ------------------------------------------------------------------------- */

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

static const char *skip_space(const char *p, const char *e) {
  while (p < e && is_space(*p)) p++;
  return p;
}

static const char *token_end(const char *p, const char *e) {
  while (p < e && !is_space(*p)) p++;
  return p;
}

static int token_is(const char *s, const char *e, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(e - s) != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != word[i]) return 0;
  }
  return 1;
}

/* Copies a token for a message: at most 40 characters, non-printable bytes as '?'. */
static const char *quote(char out[48], const char *s, const char *e) {
  size_t n = (size_t)(e - s), k = 0;
  for (; k < n && k < 40; k++) out[k] = (s[k] >= 32 && s[k] < 127) ? s[k] : '?';
  if (n > 40) {
    memcpy(out + k, "...", 3);
    k += 3;
  }
  out[k] = 0;
  return out;
}

/* Parses the whole token [s, e) as a double; 0 or -1.
 * Fast path (Clinger 1990, "How to read floating point numbers accurately"): a decimal with at
 * most 15 significant digits and a power of ten |k| <= 22 is m * 10^k or m / 10^-k with both
 * operands exact, so one IEEE operation gives the correctly rounded result, the same as
 * strtod. Everything else (17-digit round-trip output, hex, inf/nan) goes to strtod, which the
 * caller runs under the C locale. */
static int parse_double(const char *s, const char *e, double *out) {
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char *p = s;
  int neg = 0;
  if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
  uint64_t mant = 0;
  int sig = 0, frac = 0, digits = 0, fast = 1;
  for (; p < e && is_digit(*p); p++, digits++) {
    if (mant || *p != '0') sig++;
    mant = mant * 10 + (uint64_t)(*p - '0');
    if (sig > 15) fast = 0;
  }
  if (p < e && *p == '.') {
    for (p++; p < e && is_digit(*p); p++, digits++) {
      if (++frac > 400) fast = 0; /* also keeps ex - frac below from overflowing */
      if (mant || *p != '0') sig++;
      mant = mant * 10 + (uint64_t)(*p - '0');
      if (sig > 15) fast = 0;
    }
  }
  int ex = 0;
  if (digits && p < e && (*p == 'e' || *p == 'E')) {
    const char *q = p + 1;
    int eneg = 0;
    if (q < e && (*q == '+' || *q == '-')) eneg = *q++ == '-';
    if (q < e && is_digit(*q)) {
      for (; q < e && is_digit(*q); q++)
        if (ex < 100000) ex = ex * 10 + (*q - '0');
      ex = eneg ? -ex : ex;
      p = q;
    }
  }
  if (fast && digits && p == e) {
    int k = ex - frac;
    if (mant == 0) {
      *out = neg ? -0.0 : 0.0;
      return 0;
    }
    if (k >= -22 && k <= 22) {
      double m = (double)mant; /* exact: mant < 10^15 < 2^53 */
      double r = k >= 0 ? m * pow10[k] : m / pow10[-k];
      *out = neg ? -r : r;
      return 0;
    }
  }
  char *end;
  double r = strtod(s, &end);
  if (end != e || s == e) return -1;
  *out = r;
  return 0;
}

/* Line iterator: '\n', "\r\n" and a lone '\r' end lines; '#' starts a comment. */
typedef struct line_iter {
  const char *p, *end;
  int line;
} line_iter;

static int next_line(line_iter *it, const char **s, const char **e) {
  if (it->p >= it->end) return 0;
  const char *a = it->p;
  const char *nl = memchr(a, '\n', (size_t)(it->end - a));
  const char *b = nl ? nl : it->end;
  const char *cr = memchr(a, '\r', (size_t)(b - a));
  if (cr && cr + 1 < b) { /* a lone '\r' (classic Mac) ends the line */
    b = cr;
    it->p = cr + 1;
  } else {
    it->p = nl ? nl + 1 : it->end;
  }
  it->line++;
  const char *hash = memchr(a, '#', (size_t)(b - a));
  *s = a;
  *e = hash ? hash : b;
  return 1;
}

/* ---- post-processing shared by all formats --------------------------------------------------- */

static loom_mesh *finish_load(const char *name, loom_mesh *m) {
  int nt_in = m->nt;
  loom_vec3 lo, hi;
  loom_mesh_aabb(m, &lo, &hi);
  /* Duplicates closer than 1e-9 of the bounding-box diagonal are the same point written twice
   * (STL stores every corner per facet); halves avoid overflow near DBL_MAX. */
  double tol = 2e-9 * hypot(hypot(0.5 * hi.x - 0.5 * lo.x, 0.5 * hi.y - 0.5 * lo.y), 0.5 * hi.z - 0.5 * lo.z);
  /* Half extents up to DBL_MAX on all three axes still overflow the diagonal (sqrt 3 DBL_MAX);
   * quarters cannot. Only such meshes take this path, so every other tolerance is unchanged. */
  if (!isfinite(tol))
    tol = 4e-9 * hypot(hypot(0.25 * hi.x - 0.25 * lo.x, 0.25 * hi.y - 0.25 * lo.y), 0.25 * hi.z - 0.25 * lo.z);
  /* the vertex farthest out, for the message when the tolerance that far vertex sets welds the
   * rest together */
  int far = 0;
  double far_c = -1;
  for (int i = 0; i < m->nv; i++) {
    const double c = fmax(fabs(m->v[i].x), fmax(fabs(m->v[i].y), fabs(m->v[i].z)));
    if (c > far_c) {
      far_c = c;
      far = i;
    }
  }
  const loom_vec3 far_v = m->nv > 0 ? m->v[far] : (loom_vec3){0, 0, 0};
  if (mesh_merge_vertices(m, tol)) {
    loom_error_prefix(name);
    loom_mesh_destroy(m);
    return NULL;
  }
  if (m->nt == 0) {
    if (nt_in > 0 && far_c > MESH_MAX_COORD)
      loom_fail("%s: no triangles (all %d are degenerate once points closer than %.3g m are merged, a billionth "
                "of the mesh's size): vertex %d at (%.6g, %.6g, %.6g) lies beyond the %.0e m from the origin the "
                "world reaches; is the file in metres?", name, nt_in, tol, far + 1, far_v.x, far_v.y, far_v.z,
                MESH_MAX_COORD);
    else if (nt_in > 0)
      loom_fail("%s: no triangles (all %d are degenerate)", name, nt_in);
    else
      loom_fail("%s: no triangles", name);
    loom_mesh_destroy(m);
    return NULL;
  }
  return m;
}

/* ---- OBJ ------------------------------------------------------------------------------------- */

/* One face corner "i", "i/j", "i//k" or "i/j/k" (only i is used). Returns 0 and the signed
 * index in *idx, 1 on overflow, -1 on bad syntax. */
static int parse_corner(const char *s, const char *e, long long *idx) {
  const char *p = s;
  int neg = 0, overflow = 0;
  if (p < e && (*p == '+' || *p == '-')) neg = *p++ == '-';
  if (!(p < e && is_digit(*p))) return -1;
  long long v = 0;
  for (; p < e && is_digit(*p); p++) {
    v = v * 10 + (*p - '0');
    if (v > INT32_MAX) {
      overflow = 1;
      v = INT32_MAX;
    }
  }
  for (int field = 0; field < 2 && p < e && *p == '/'; field++) {
    p++;
    if (p < e && (*p == '+' || *p == '-')) p++;
    while (p < e && is_digit(*p)) p++;
  }
  if (p != e) return -1;
  *idx = neg ? -v : v;
  return overflow;
}

static loom_mesh *load_obj(const source *src, const char *start) {
  const char *end = src->buf + src->size;
  const char *s, *e;
  char q[48];

  /* Pass 1: count vertices and fan triangles so that pass 2 allocates once and checks positive
   * indices against the final vertex count (OBJ allows faces before their vertices). */
  uint64_t nv = 0, nt = 0;
  line_iter it = {start, end, 0};
  while (next_line(&it, &s, &e)) {
    const char *a = skip_space(s, e), *b = token_end(a, e);
    if (b - a != 1) continue;
    if (*a == 'v') {
      nv++;
    } else if (*a == 'f') {
      uint64_t corners = 0;
      for (const char *p = skip_space(b, e); p < e; p = skip_space(token_end(p, e), e)) corners++;
      if (corners >= 3) nt += corners - 2;
    }
  }
  if (nv > MESH_MAX_VERTICES) {
    loom_fail("%s: too many vertices (%llu; at most %d)", src->name, (unsigned long long)nv, (int)MESH_MAX_VERTICES);
    return NULL;
  }
  if (nt > MESH_MAX_TRIANGLES) {
    loom_fail("%s: too many triangles (%llu; at most %d)", src->name, (unsigned long long)nt, (int)MESH_MAX_TRIANGLES);
    return NULL;
  }
  loom_mesh *m = mesh_alloc((int)nv, (int)nt);
  if (!m) {
    loom_error_prefix(src->name);
    return NULL;
  }

  /* Pass 2: parse. */
  int iv = 0, ntri = 0;
  it = (line_iter){start, end, 0};
  while (next_line(&it, &s, &e)) {
    const char *a = skip_space(s, e), *b = token_end(a, e);
    if (b - a != 1 || (*a != 'v' && *a != 'f')) continue; /* vt, vn, vp, o, g, s, usemtl, l, ...: ignored */
    if (*a == 'v') {
      double x[3];
      int k = 0;
      for (const char *p = skip_space(b, e); p < e && k < 3; p = skip_space(p, e), k++) {
        const char *pe = token_end(p, e);
        if (parse_double(p, pe, &x[k])) {
          loom_fail("%s:%d: bad number '%s'", src->name, it.line, quote(q, p, pe));
          goto fail;
        }
        if (!isfinite(x[k])) {
          loom_fail("%s:%d: non-finite coordinate '%s'", src->name, it.line, quote(q, p, pe));
          goto fail;
        }
        p = pe;
      }
      /* a fourth number (w, for rational curves) or vertex colours are ignored */
      if (k < 3) {
        loom_fail("%s:%d: vertex needs 3 coordinates (got %d)", src->name, it.line, k);
        goto fail;
      }
      m->v[iv++] = v3(x[0], x[1], x[2]);
    } else {
      int corners = 0;
      int32_t first = 0, prev = 0;
      for (const char *p = skip_space(b, e); p < e; p = skip_space(p, e)) {
        const char *pe = token_end(p, e);
        long long idx;
        int r = parse_corner(p, pe, &idx);
        if (r < 0) {
          loom_fail("%s:%d: bad face corner '%s'", src->name, it.line, quote(q, p, pe));
          goto fail;
        }
        if (r > 0) {
          loom_fail("%s:%d: face index %s overflows", src->name, it.line, quote(q, p, pe));
          goto fail;
        }
        int32_t vi;
        if (idx > 0) {
          if (idx > (long long)nv) {
            loom_fail("%s:%d: face index %lld out of range (%d vertices)", src->name, it.line, idx, (int)nv);
            goto fail;
          }
          vi = (int32_t)(idx - 1);
        } else if (idx < 0) {
          /* Relative index: -1 is the last vertex defined above this line. */
          if (-idx > iv) {
            loom_fail("%s:%d: face index %lld out of range (%d vertices defined before this line)", src->name,
                      it.line, idx, iv);
            goto fail;
          }
          vi = (int32_t)(iv + idx);
        } else {
          loom_fail("%s:%d: face index 0 is invalid (OBJ indices start at 1)", src->name, it.line);
          goto fail;
        }
        /* Fan from the first corner: (c0, c[k-1], c[k]). */
        if (corners == 0) {
          first = vi;
        } else if (corners >= 2) {
          int32_t *t = m->tri + 3 * (size_t)ntri++;
          t[0] = first;
          t[1] = prev;
          t[2] = vi;
        }
        prev = vi;
        corners++;
        p = pe;
      }
      if (corners < 3) {
        loom_fail("%s:%d: face with %d corner%s (need at least 3)", src->name, it.line, corners,
                  corners == 1 ? "" : "s");
        goto fail;
      }
    }
  }
  /* Pass 1 and 2 tokenise identically, so the counts agree. */
  if (iv != (int)nv || ntri != (int)nt) {
    loom_fail("%s: internal error: OBJ passes disagree", src->name);
    goto fail;
  }
  return finish_load(src->name, m);
fail:
  loom_mesh_destroy(m);
  return NULL;
}

/* ---- ASCII STL ------------------------------------------------------------------------------- */

typedef struct lexer {
  const source *src;
  const char *p, *end;
  int line;       /* line of p */
  int tok_line;   /* line of the last token read */
  const char *s, *e; /* the last token */
} lexer;

/* Next whitespace-separated token; 0 at the end of the text. */
static int lex(lexer *lx) {
  const char *p = lx->p;
  for (; p < lx->end && (is_space(*p) || *p == '\n'); p++)
    if (*p == '\n') lx->line++;
  if (p >= lx->end) { /* end of file is reported at the last token's line */
    lx->p = lx->s = lx->e = p;
    return 0;
  }
  lx->tok_line = lx->line;
  lx->s = p;
  while (p < lx->end && !is_space(*p) && *p != '\n') p++;
  lx->e = lx->p = p;
  return 1;
}

static void skip_line(lexer *lx) {
  const char *nl = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
  lx->p = nl ? nl : lx->end; /* the '\n' itself is counted by lex */
}

static int expect_fail(lexer *lx, const char *what, int have) {
  char q[48];
  if (!have) return loom_fail("%s:%d: expected %s, got end of file", lx->src->name, lx->tok_line, what);
  return loom_fail("%s:%d: expected %s, got '%s'", lx->src->name, lx->tok_line, what, quote(q, lx->s, lx->e));
}

static int expect(lexer *lx, const char *word) {
  int have = lex(lx);
  if (have && token_is(lx->s, lx->e, word)) return 0;
  char what[32];
  snprintf(what, sizeof what, "'%s'", word);
  return expect_fail(lx, what, have);
}

/* Three numbers; coordinates (finite = 1) must be finite, facet normals are parsed and ignored
 * (some exporters write nan normals for slivers). */
static int lex_vec3(lexer *lx, vec3 *out, int finite) {
  double x[3];
  char q[48];
  for (int k = 0; k < 3; k++) {
    if (!lex(lx)) return expect_fail(lx, "a number", 0);
    if (parse_double(lx->s, lx->e, &x[k]))
      return loom_fail("%s:%d: bad number '%s'", lx->src->name, lx->tok_line, quote(q, lx->s, lx->e));
    if (finite && !isfinite(x[k]))
      return loom_fail("%s:%d: non-finite coordinate '%s'", lx->src->name, lx->tok_line, quote(q, lx->s, lx->e));
  }
  *out = v3(x[0], x[1], x[2]);
  return 0;
}

static loom_mesh *load_stl_ascii(const source *src, const char *start) {
  lexer lx = {src, start, src->buf + src->size, 1, 1, start, start};
  vec3 *v = NULL;
  size_t nv = 0, cap = 0;
  if (expect(&lx, "solid")) return NULL;
  skip_line(&lx); /* solid name */
  for (;;) {
    int have = lex(&lx);
    if (have && token_is(lx.s, lx.e, "endsolid")) {
      skip_line(&lx);
      if (!lex(&lx)) break;
      if (token_is(lx.s, lx.e, "solid")) { /* several solids in one file */
        skip_line(&lx);
        continue;
      }
      expect_fail(&lx, "'solid' or end of file", 1);
      goto fail;
    }
    if (!have || !token_is(lx.s, lx.e, "facet")) {
      expect_fail(&lx, have ? "'facet' or 'endsolid'" : "'endsolid'", have);
      goto fail;
    }
    vec3 normal;
    if (expect(&lx, "normal") || lex_vec3(&lx, &normal, 0) || expect(&lx, "outer") || expect(&lx, "loop")) goto fail;
    if (nv + 3 > cap) {
      if (nv + 3 > (size_t)MESH_MAX_VERTICES) {
        loom_fail("%s:%d: too many triangles", src->name, lx.tok_line);
        goto fail;
      }
      size_t nc = cap ? 2 * cap : 3 * 1024;
      vec3 *nvp = core_realloc(v, nc, sizeof *v);
      if (!nvp) {
        loom_error_prefix(src->name);
        goto fail;
      }
      v = nvp;
      cap = nc;
    }
    for (int k = 0; k < 3; k++)
      if (expect(&lx, "vertex") || lex_vec3(&lx, &v[nv + (size_t)k], 1)) goto fail;
    if (expect(&lx, "endloop") || expect(&lx, "endfacet")) goto fail;
    nv += 3;
  }
  loom_mesh *m = mesh_alloc((int)nv, (int)(nv / 3));
  if (!m) {
    loom_error_prefix(src->name);
    goto fail;
  }
  if (nv) memcpy(m->v, v, nv * sizeof *v);
  for (size_t i = 0; i < nv; i++) m->tri[i] = (int32_t)i;
  core_free(v);
  return finish_load(src->name, m);
fail:
  core_free(v);
  return NULL;
}

/* ---- binary STL ------------------------------------------------------------------------------ */

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float le_float(const unsigned char *p) {
  uint32_t u = le32(p);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* 80-byte header, uint32 count, then per triangle 12 little-endian floats (normal, 3 corners)
 * and a 16-bit attribute: 50 bytes. Bytes after the last triangle are ignored. */
static loom_mesh *load_stl_binary(const source *src) {
  const unsigned char *b = (const unsigned char *)src->buf;
  uint32_t count = le32(b + 80);
  uint64_t need = 84 + 50 * (uint64_t)count;
  if (src->size < need) {
    loom_fail("%s: truncated binary STL (expected %lu triangles, got %zu)", src->name, (unsigned long)count,
              (src->size - 84) / 50);
    return NULL;
  }
  if (count == 0) {
    loom_fail("%s: no triangles", src->name);
    return NULL;
  }
  if (count > MESH_MAX_TRIANGLES) {
    loom_fail("%s: too many triangles (%lu; at most %d)", src->name, (unsigned long)count, (int)MESH_MAX_TRIANGLES);
    return NULL;
  }
  loom_mesh *m = mesh_alloc(3 * (int)count, (int)count);
  if (!m) {
    loom_error_prefix(src->name);
    return NULL;
  }
  for (uint32_t t = 0; t < count; t++) {
    const unsigned char *r = b + 84 + 50 * (size_t)t + 12; /* skip the normal */
    for (int k = 0; k < 3; k++) {
      vec3 p = v3(le_float(r + 12 * k), le_float(r + 12 * k + 4), le_float(r + 12 * k + 8));
      if (!v3_isfinite(p)) {
        loom_fail("%s: non-finite coordinate in triangle %lu", src->name, (unsigned long)t + 1);
        loom_mesh_destroy(m);
        return NULL;
      }
      m->v[3 * t + (uint32_t)k] = p;
      m->tri[3 * t + (uint32_t)k] = (int32_t)(3 * t + (uint32_t)k);
    }
  }
  return finish_load(src->name, m);
}

/* ---- format detection ------------------------------------------------------------------------ */

/* Text if the first bytes hold no control characters other than whitespace (bytes >= 0x80 are
 * allowed for UTF-8 comments). Binary STL data and random bytes almost always fail this. */
static int looks_text(const char *p, size_t n) {
  if (n > SNIFF_BYTES) n = SNIFF_BYTES;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') || c == 0x7f) return 0;
  }
  return 1;
}

static loom_mesh *parse(const source *src) {
  if (src->size == 0) {
    loom_fail("%s: empty file", src->name);
    return NULL;
  }
  const unsigned char *b = (const unsigned char *)src->buf;
  if (src->size >= 84 && src->size >= 84 + 50 * (uint64_t)le32(b + 80)) return load_stl_binary(src);

  const char *end = src->buf + src->size, *start = src->buf;
  if (src->size >= 3 && !memcmp(start, "\xEF\xBB\xBF", 3)) start += 3; /* UTF-8 byte order mark */
  const char *w = start;
  while (w < end && (is_space(*w) || *w == '\n')) w++;
  const char *we = w;
  while (we < end && !is_space(*we) && *we != '\n') we++;
  int solid = token_is(w, we, "solid");
  int text = looks_text(src->buf, src->size);
  /* A truncated binary STL often starts with "solid" too: its binary body tells it apart. */
  if (solid && (text || src->size < 84)) return load_stl_ascii(src, start);
  if (text && !solid) return load_obj(src, start);
  if (src->size >= 84) return load_stl_binary(src); /* reports the count that does not fit */
  loom_fail("%s: unrecognised format (binary data too short for a binary STL, %zu bytes)", src->name, src->size);
  return NULL;
}

/* Runs the parser under the C numeric locale so that strtod reads '.' whatever the host set. */
static loom_mesh *parse_c_locale(const source *src) {
  locale_t c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = c_loc ? uselocale(c_loc) : (locale_t)0;
  loom_mesh *m = parse(src);
  if (c_loc) {
    uselocale(old);
    freelocale(c_loc);
  }
  return m;
}

LOOM_API loom_mesh *loom_mesh_load(const char *path) {
  if (!path) {
    loom_fail("path is NULL");
    return NULL;
  }
  char *buf;
  size_t n;
  if (read_file(path, &buf, &n)) return NULL;
  source src = {path, buf, n};
  loom_mesh *m = parse_c_locale(&src);
  core_free(buf);
  return m;
}

loom_mesh *mesh_load_memory(const char *name, const void *data, size_t size) {
  if (!name) name = "(memory)";
  if (!data && size) {
    loom_fail("%s: data is NULL", name);
    return NULL;
  }
  if (size > LOAD_MAX_BYTES) {
    loom_fail("%s: too large (more than %zu bytes)", name, LOAD_MAX_BYTES);
    return NULL;
  }
  char *buf = core_alloc(size + 1, 1);
  if (!buf) {
    loom_error_prefix(name);
    return NULL;
  }
  if (size) memcpy(buf, data, size);
  buf[size] = 0;
  source src = {name, buf, size};
  loom_mesh *m = parse_c_locale(&src);
  core_free(buf);
  return m;
}
