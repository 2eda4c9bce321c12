/* harness.h — a tiny unit-test harness: TEST(name) { ... } registers a test; CHECK* macros record
 * failures with file:line and keep going; tolerances are explicit at every call site. */
#ifndef LOOM_TEST_HARNESS_H
#define LOOM_TEST_HARNESS_H

#include <math.h>
#include <stdio.h>

typedef void (*test_fn)(void);
void harness_register(const char *name, const char *file, test_fn fn);
void harness_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Directory holding tests/data (set from the command line; default "tests/data"). */
const char *harness_data_dir(void);
/* Path to a file in the data directory (static buffer, valid until the next call). */
const char *harness_data(const char *name);
/* Path of a scratch file unique to this run (static buffer, valid until the next call). */
const char *harness_tmp(const char *name);
/* Allocation counter maintained by the --wrap=malloc/calloc/realloc shims of the test binary. */
long harness_alloc_count(void);

#define TEST(name)                                                                     \
  static void test_##name(void);                                                       \
  __attribute__((constructor)) static void register_##name(void) {                     \
    harness_register(#name, __FILE__, test_##name);                                    \
  }                                                                                    \
  static void test_##name(void)

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) harness_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                 \
  } while (0)

#define CHECK_MSG(cond, ...)                                                           \
  do {                                                                                 \
    if (!(cond)) harness_fail(__FILE__, __LINE__, __VA_ARGS__);                        \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                             \
  do {                                                                                 \
    long long a_ = (long long)(a), b_ = (long long)(b);                                \
    if (a_ != b_) harness_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                          \
  do {                                                                                 \
    double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);                     \
    if (!(fabs(a_ - b_) <= t_))                                                        \
      harness_fail(__FILE__, __LINE__, "%s ~ %s: %.17g vs %.17g (|diff| %.3g > %.3g)", #a, #b, a_, b_, \
                   fabs(a_ - b_), t_);                                                 \
  } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                                \
  do {                                                                                 \
    const char *h_ = (hay), *n_ = (needle);                                            \
    if (!h_ || !strstr(h_, n_))                                                        \
      harness_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", h_ ? h_ : "(null)", n_); \
  } while (0)

#endif
