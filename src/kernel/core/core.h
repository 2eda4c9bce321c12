/* core.h — kernel-wide helpers: error messages, checked allocation, the mark/release arena. */
#ifndef LOOM_CORE_H
#define LOOM_CORE_H

#include <stddef.h>
#include <stdint.h>
#include "loom.h"

#if defined(__GNUC__)
#define LOOM_PRINTF(a, b) __attribute__((format(printf, a, b)))
/* for the few inner-loop helpers the compiler leaves out of line otherwise (measured) */
#define LOOM_INLINE inline __attribute__((always_inline))
#else
#define LOOM_PRINTF(a, b)
#define LOOM_INLINE inline
#endif

/* Sets this thread's error message (printf style); always returns -1 for `return loom_fail(...)`. */
int loom_fail(const char *fmt, ...) LOOM_PRINTF(1, 2);
/* Prefixes the current error message with "prefix: ". */
void loom_error_prefix(const char *prefix);
/* FNV-1a (64-bit) of n bytes continuing from h (start with CORE_FNV_START): the kernel's one hash
 * for model hashes, state hashes and checkpoint checksums. */
#define CORE_FNV_START 1469598103934665603ull
uint64_t core_fnv1a(uint64_t h, const void *p, size_t n);
/* A broken internal invariant (LOOM_ASSERT in checked builds): prints and aborts. */
void core_assert_fail(const char *cond, const char *msg, const char *file, int line);
/* Internal invariants: checked in sanitizer builds (make asan defines LOOM_CHECKED), free otherwise.
 * Bad input from outside is never asserted: public entry points return errors for it. */
#ifdef LOOM_CHECKED
#define LOOM_ASSERT(cond, msg) ((cond) ? (void)0 : core_assert_fail(#cond, (msg), __FILE__, __LINE__))
#else
#define LOOM_ASSERT(cond, msg) ((void)0)
#endif

/* Allocation that reports failure through loom_fail (returns NULL). count * size is checked for
 * overflow; a zero-sized request returns a valid unique pointer. */
void *core_alloc(size_t count, size_t size);
void *core_calloc(size_t count, size_t size);
void *core_realloc(void *p, size_t count, size_t size);
void core_free(void *p);
/* Copies a NUL-terminated string (NULL on failure). */
char *core_strdup(const char *s);

/* A helper thread for two-way data-parallel loops (core_par.c): core_par_run calls fn(ctx, 0) on
 * the calling thread and fn(ctx, 1) on the helper, and returns when both are done; with p == NULL
 * it calls both in order. The parts must write disjoint data and compute the same bits whichever
 * thread runs them. One per world (no globals); NULL from create when no thread can be made. */
typedef struct core_par core_par;
typedef void (*core_par_fn)(void *ctx, int part);
core_par *core_par_create(void);
void core_par_destroy(core_par *p);
void core_par_run(core_par *p, core_par_fn fn, void *ctx);
/* Rows [0, n) in two halves: fn(ctx, 0, n/2, 0) here and fn(ctx, n/2, n, 1) on the helper (through
 * core_par_run). */
typedef void (*core_rows_fn)(void *ctx, int lo, int hi, int part);
void core_par_rows(core_par *p, int n, core_rows_fn fn, void *ctx);

/* Mark/release scratch arena. Allocations are 32-byte aligned and come from one base block;
 * a request that does not fit gets its own overflow block (and grow_count is incremented) so it
 * never fails while memory lasts. release() rewinds to a mark and frees overflow blocks made after
 * it; when the arena is empty again and overflow happened, the base block is enlarged to the high
 * water mark so that the next identical step allocates nothing. A test asserts that steady-state
 * steps never grow the arena. */
typedef struct arena_block arena_block;
typedef struct arena {
  unsigned char *base;   /* base block */
  size_t size;           /* its size in bytes */
  size_t used;           /* bytes used in the base block */
  arena_block *overflow; /* newest overflow block */
  size_t overflow_bytes; /* bytes in live overflow blocks */
  size_t high_water;     /* largest used + overflow_bytes seen */
  int grow_count;        /* overflow blocks made since creation */
  const char *last_name; /* name of the last allocation (diagnostics) */
} arena;

typedef struct arena_mark {
  size_t used;
  arena_block *overflow;
} arena_mark;

int arena_init(arena *a, size_t initial_bytes);
void arena_destroy(arena *a);
/* Ensures the base block holds at least `bytes` (call only while the arena is empty). */
int arena_reserve(arena *a, size_t bytes);
arena_mark arena_get_mark(const arena *a);
void arena_release(arena *a, arena_mark m);
/* Named allocation (the name is kept for diagnostics); NULL only when out of memory. */
void *arena_alloc(arena *a, size_t bytes, const char *name);
#define ARENA_NEW(a, type, count, name) ((type *)arena_alloc((a), sizeof(type) * (size_t)(count), (name)))

#endif
