/* core.c — error messages, checked allocation, scratch arena, clocks. */
#define _POSIX_C_SOURCE 200809L
#include "core/core.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char error_buf[1024];

int loom_fail(const char *fmt, ...) {
  char tmp[sizeof error_buf];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  memcpy(error_buf, tmp, sizeof tmp);
  return -1;
}

void loom_error_prefix(const char *prefix) {
  char tmp[sizeof error_buf];
  size_t n = strlen(prefix);
  if (n > sizeof tmp - 3) n = sizeof tmp - 3;
  memcpy(tmp, prefix, n);
  tmp[n] = ':';
  tmp[n + 1] = ' ';
  size_t rest = sizeof tmp - n - 3;
  size_t m = strlen(error_buf);
  if (m > rest) m = rest;
  memcpy(tmp + n + 2, error_buf, m);
  tmp[n + 2 + m] = 0;
  memcpy(error_buf, tmp, sizeof tmp);
}

LOOM_API const char *loom_last_error(void) { return error_buf; }
LOOM_API void loom_clear_error(void) { error_buf[0] = 0; }
LOOM_API const char *loom_version(void) { return "0.1.0"; }

LOOM_API double loom_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

LOOM_API double loom_wall_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void *core_alloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    loom_fail("allocation of %zu x %zu bytes overflows", count, size);
    return NULL;
  }
  size_t bytes = count * size;
  void *p = malloc(bytes ? bytes : 1);
  if (!p) loom_fail("out of memory (%zu bytes)", bytes);
  return p;
}

void *core_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    loom_fail("allocation of %zu x %zu bytes overflows", count, size);
    return NULL;
  }
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) loom_fail("out of memory (%zu bytes)", count * size);
  return p;
}

void *core_realloc(void *p, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    loom_fail("allocation of %zu x %zu bytes overflows", count, size);
    return NULL;
  }
  size_t bytes = count * size;
  void *q = realloc(p, bytes ? bytes : 1);
  if (!q) loom_fail("out of memory (%zu bytes)", bytes);
  return q;
}

void core_free(void *p) { free(p); }

char *core_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *r = core_alloc(n, 1);
  if (r) memcpy(r, s, n);
  return r;
}

/* ---- arena ---------------------------------------------------------------------------------- */

struct arena_block {
  arena_block *prev;
  size_t size;
  _Alignas(32) unsigned char data[];
};

static size_t align32(size_t n) { return (n + 31) & ~(size_t)31; }

static unsigned char *base_new(size_t size) { return aligned_alloc(32, align32(size)); }

int arena_init(arena *a, size_t initial_bytes) {
  memset(a, 0, sizeof *a);
  if (initial_bytes < 4096) initial_bytes = 4096;
  a->size = align32(initial_bytes);
  a->base = base_new(a->size);
  if (!a->base) return loom_fail("out of memory (scratch arena of %zu bytes)", a->size);
  return 0;
}

void arena_destroy(arena *a) {
  arena_block *b = a->overflow;
  while (b) {
    arena_block *p = b->prev;
    free(b);
    b = p;
  }
  free(a->base);
  memset(a, 0, sizeof *a);
}

int arena_reserve(arena *a, size_t bytes) {
  bytes = align32(bytes);
  if (bytes <= a->size) return 0;
  if (a->used != 0 || a->overflow) return loom_fail("arena_reserve called while scratch memory is in use");
  unsigned char *b = base_new(bytes);
  if (!b) return loom_fail("out of memory (scratch arena of %zu bytes)", bytes);
  free(a->base);
  a->base = b;
  a->size = bytes;
  return 0;
}

arena_mark arena_get_mark(const arena *a) {
  arena_mark m = {a->used, a->overflow};
  return m;
}

void arena_release(arena *a, arena_mark m) {
  while (a->overflow && a->overflow != m.overflow) {
    arena_block *p = a->overflow->prev;
    a->overflow_bytes -= a->overflow->size;
    free(a->overflow);
    a->overflow = p;
  }
  a->used = m.used;
  if (a->used == 0 && !a->overflow && a->high_water > a->size) {
    /* Consolidate: the next step of the same size fits in the base block. */
    size_t size = align32(a->high_water + a->high_water / 4);
    unsigned char *b = base_new(size);
    if (b) {
      free(a->base);
      a->base = b;
      a->size = size;
    }
  }
}

void *arena_alloc(arena *a, size_t bytes, const char *name) {
  bytes = align32(bytes ? bytes : 1);
  a->last_name = name;
  if (a->size - a->used >= bytes) {
    void *p = a->base + a->used;
    a->used += bytes;
    if (a->used + a->overflow_bytes > a->high_water) a->high_water = a->used + a->overflow_bytes;
    return p;
  }
  arena_block *b = aligned_alloc(32, align32(sizeof(arena_block) + bytes)); /* (data 32-byte aligned too) */
  if (!b) {
    loom_fail("out of memory (scratch '%s', %zu bytes)", name ? name : "?", bytes);
    return NULL;
  }
  b->prev = a->overflow;
  b->size = bytes;
  a->overflow = b;
  a->overflow_bytes += bytes;
  a->grow_count++;
  if (a->used + a->overflow_bytes > a->high_water) a->high_water = a->used + a->overflow_bytes;
  return b->data;
}

void core_assert_fail(const char *cond, const char *msg, const char *file, int line) {
  fprintf(stderr, "%s:%d: internal invariant broken: %s (%s)\n", file, line, msg, cond);
  abort();
}

uint64_t core_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
  return h;
}
