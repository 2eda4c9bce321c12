/* math_lanes.h — four doubles as one vector (GCC vector extensions), and the build that compiles
 * vector code twice.
 *
 * LOOM_CLONES compiles a function twice, for plain x86-64 (a vector is two SSE2 registers) and for
 * AVX2 (one register), and the loader picks one by the processor. Both do the same operations per
 * lane and the build keeps products and sums apart (-ffp-contract=off), so they give the same
 * numbers; LOOM_NO_CLONES builds the plain one alone, the check that they do. */
#ifndef LOOM_MATH_LANES_H
#define LOOM_MATH_LANES_H

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(LOOM_NO_CLONES)
#define LOOM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define LOOM_CLONES
#endif

/* Vectors pass between a file's static functions only, never through a call's ABI: GCC's warning
 * about that ABI, wherever they are used in the plain build, is off in the including file. */
#pragma GCC diagnostic ignored "-Wpsabi"

typedef double lanes __attribute__((vector_size(32)));

/* four doubles from anywhere */
static inline lanes lanes_load(const double *p) {
  lanes r;
  memcpy(&r, p, sizeof r);
  return r;
}

#endif
