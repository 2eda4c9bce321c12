/* harness.c — runs registered tests; usage: test_kernel [--data DIR] [name-substring ...].
 * Last line: "N passed, M failed". */
#define _GNU_SOURCE
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TESTS 1024

typedef struct {
  const char *name, *file;
  test_fn fn;
} test_case;

static test_case tests[MAX_TESTS];
static int test_count;
static int current_failures;
static const char *data_dir = "tests/data";
static long alloc_count;

void harness_register(const char *name, const char *file, test_fn fn) {
  if (test_count < MAX_TESTS) tests[test_count++] = (test_case){name, file, fn};
}

void harness_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "    %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  current_failures++;
}

const char *harness_data_dir(void) { return data_dir; }

const char *harness_data(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", data_dir, name);
  return buf;
}

const char *harness_tmp(const char *name) {
  static char buf[4096];
  const char *dir = getenv("TMPDIR");
  snprintf(buf, sizeof buf, "%s/loom_test_%d_%s", dir ? dir : "/tmp", (int)getpid(), name);
  return buf;
}

long harness_alloc_count(void) { return alloc_count; }

/* Allocation counting through the linker's --wrap: every malloc/calloc/realloc made by the kernel
 * objects linked into this binary goes through these shims. */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n) {
  __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
  return __real_malloc(n);
}
void *__wrap_calloc(size_t a, size_t b) {
  __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
  return __real_calloc(a, b);
}
void *__wrap_realloc(void *p, size_t n) {
  __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
  return __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t a, size_t n) {
  __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED);
  return __real_aligned_alloc(a, n);
}

static int cmp_tests(const void *a, const void *b) {
  const test_case *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv) {
  const char *filters[64];
  int nfilters = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc)
      data_dir = argv[++i];
    else if (nfilters < 64)
      filters[nfilters++] = argv[i];
  }
  qsort(tests, (size_t)test_count, sizeof tests[0], cmp_tests);
  int passed = 0, failed = 0;
  for (int i = 0; i < test_count; i++) {
    int selected = nfilters == 0;
    for (int f = 0; f < nfilters; f++)
      if (strstr(tests[i].name, filters[f]) || strstr(tests[i].file, filters[f])) selected = 1;
    if (!selected) continue;
    current_failures = 0;
    tests[i].fn();
    const char *base = strrchr(tests[i].file, '/');
    base = base ? base + 1 : tests[i].file;
    if (current_failures) {
      failed++;
      fprintf(stderr, "FAIL %s: %s\n", base, tests[i].name);
    } else {
      passed++;
      printf("ok   %s: %s\n", base, tests[i].name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
