/* peer_clock.h — what the C peer programs (ode_stack.c, mujoco_stack.c) share: a monotonic clock
 * in seconds and the comparison that sorts run times for their median. */
#ifndef PEER_CLOCK_H
#define PEER_CLOCK_H

#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#endif
