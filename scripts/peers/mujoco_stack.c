/* mujoco_stack.c — MuJoCo's rigid bodies on Loom's stack benchmarks (loom bench tower_10,
 * pyramid_210): 0.2 m cubes, density 1000 (8 kg), friction 0.5 (MuJoCo's torsional and rolling
 * defaults), on a static ground box; the pyramid's boxes 2 mm apart in a row. MuJoCo's defaults
 * otherwise (Newton solver, pyramidal friction cones, soft contacts with solref 0.02 1), the
 * contact buffers sized so that nothing is dropped (pyramid: nconmax 2500, njmax 10000; MuJoCo 2.2
 * drops contacts silently when they are too small: the warnings count says so), one mj_step per
 * dt. MuJoCo has no sleeping.
 *
 *   mujoco_stack tower|pyramid DT_INVERSE [--runs R] [--solver newton|cg|pgs]
 *
 * Prints one JSON line: ms per step over the first 2 s (median of R runs after one warm-up, a
 * fresh model and data each) and the largest distance any box moved from where it was placed
 * after 10 s. */
#define _POSIX_C_SOURCE 200809L
#include <mujoco/mujoco.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peer_clock.h"

#define MAX_BOXES 256

static double start[MAX_BOXES][3];
static int nbox;

/* The scene as MJCF, written to path. */
static int write_model(const char *path, int tower, double dt, const char *solver) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "<mujoco>\n  <option timestep=\"%.17g\" gravity=\"0 0 -9.81\" solver=\"%s\"/>\n", dt, solver);
  fprintf(f, "  <size nconmax=\"%d\" njmax=\"%d\"/>\n", tower ? 200 : 2500, tower ? 1000 : 10000);
  fprintf(f, "  <default><geom friction=\"0.5 0.005 0.0001\" density=\"1000\"/></default>\n  <worldbody>\n");
  fprintf(f, "    <geom name=\"ground\" type=\"box\" size=\"20 20 0.5\" pos=\"0 0 -0.5\"/>\n");
  nbox = 0;
  if (tower) {
    for (int i = 0; i < 10; i++) start[nbox][0] = 0, start[nbox][1] = 0, start[nbox++][2] = 0.1 + 0.2 * i;
  } else {
    for (int row = 0; row < 20; row++)
      for (int i = 0; i < 20 - row; i++)
        start[nbox][0] = (i - (19 - row) / 2.0) * 0.202, start[nbox][1] = 0, start[nbox++][2] = 0.1 + 0.2 * row;
  }
  for (int b = 0; b < nbox; b++)
    fprintf(f, "    <body pos=\"%.17g %.17g %.17g\"><freejoint/><geom type=\"box\" size=\"0.1 0.1 0.1\"/></body>\n",
            start[b][0], start[b][1], start[b][2]);
  fprintf(f, "  </worldbody>\n</mujoco>\n");
  return fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "tower") && strcmp(argv[1], "pyramid"))) {
    fprintf(stderr, "usage: mujoco_stack tower|pyramid DT_INVERSE [--runs R] [--solver newton|cg|pgs]\n");
    return 2;
  }
  const int tower = !strcmp(argv[1], "tower");
  const double dt = 1.0 / atof(argv[2]);
  int runs = 3;
  const char *solver = "Newton";
  for (int i = 3; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--solver"))
      solver = !strcmp(argv[i + 1], "cg") ? "CG" : !strcmp(argv[i + 1], "pgs") ? "PGS" : "Newton";
  }
  if (runs < 1 || runs > 100 || !(dt > 0)) {
    fprintf(stderr, "mujoco_stack: DT_INVERSE > 0 and 1 <= R <= 100\n");
    return 2;
  }
  char path[4096];
  /* the model is written to a file by name, as mj_loadXML reads it */
  const int made = peer_model_file(path, sizeof path, "mujoco_stack");
  if (made < 0 || write_model(path, tower, dt, solver) != 0) {
    fprintf(stderr, "mujoco_stack: cannot write the model\n");
    if (made == 0) remove(path);
    return 1;
  }
  char err[1000] = "";
  const int steps2 = (int)lround(2 / dt), steps10 = (int)lround(10 / dt);
  double ms[101], drift = 0;
  int warnings = 0;
  for (int r = 0; r <= runs; r++) {
    mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
    if (!m) {
      fprintf(stderr, "mujoco_stack: %s\n", err);
      remove(path);
      return 1;
    }
    mjData *d = mj_makeData(m);
    const double t0 = now();
    for (int k = 0; k < steps2; k++) mj_step(m, d);
    const double el = now() - t0;
    for (int k = steps2; k < steps10; k++) mj_step(m, d);
    drift = 0;
    for (int b = 0; b < nbox; b++) {
      const mjtNum *q = d->qpos + 7 * b;
      const double dx = q[0] - start[b][0], dy = q[1] - start[b][1], dz = q[2] - start[b][2];
      const double dd = sqrt(dx * dx + dy * dy + dz * dz);
      if (dd > drift) drift = dd;
    }
    for (int w = 0; w < mjNWARNING; w++) warnings += d->warning[w].number;
    mj_deleteData(d);
    mj_deleteModel(m);
    if (r > 0) ms[r - 1] = el / steps2 * 1000; /* run 0 is the warm-up */
  }
  remove(path);
  qsort(ms, (size_t)runs, sizeof(double), cmp_double);
  printf("{\"engine\":\"mujoco\",\"solver\":\"%s\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,"
         "\"min\":%.4f,\"max\":%.4f,\"drift_mm\":%.3f,\"warnings\":%d}\n",
         solver, argv[1], 1 / dt, ms[runs / 2], ms[0], ms[runs - 1], drift * 1000, warnings);
  return 0;
}
