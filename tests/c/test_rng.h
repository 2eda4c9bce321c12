/* test_rng.h — the tests' deterministic random numbers: splitmix64 (Steele, Lea, Flood 2014),
 * one state per test so every test sees the same data on every run. */
#ifndef LOOM_TEST_RNG_H
#define LOOM_TEST_RNG_H

#include <stdint.h>

#include "math/math_vec.h"

typedef struct rng {
  uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
/* uniform in [0, 1) */
static inline double rng_unit(rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }
static inline double rng_range(rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unit(r); }
static inline int rng_int(rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static inline vec3 rng_vec(rng *r, double lo, double hi) {
  double x = rng_range(r, lo, hi), y = rng_range(r, lo, hi);
  return v3(x, y, rng_range(r, lo, hi));
}

#endif
