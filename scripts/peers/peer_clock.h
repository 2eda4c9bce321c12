/* peer_clock.h — what the C peer programs (ode_stack.c, ode_scene.c, mujoco_stack.c,
 * mujoco_scene.c) share: a monotonic clock in seconds, the comparison that sorts run times for their
 * median, and a fresh file for a generated model. */
#ifndef PEER_CLOCK_H
#define PEER_CLOCK_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A new, empty file for a model the program writes and MuJoCo then reads by name: in $TMPDIR (or
 * /tmp), named after the program and the process, created exclusively (never someone else's file).
 * Its path in path; 0, or -1 when none could be made. */
static inline int peer_model_file(char *path, size_t n, const char *program) {
  const char *dir = getenv("TMPDIR");
  for (int k = 0; k < 100; k++) {
    snprintf(path, n, "%s/%s_%ld_%d.xml", dir && *dir ? dir : "/tmp", program, (long)getpid(), k);
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) return close(fd);
  }
  return -1;
}

#endif
