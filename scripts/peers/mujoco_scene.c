/* mujoco_scene.c — a Loom scene of rigid bodies (written by export_scene.lua) in MuJoCo: the same
 * shapes, masses, inertias (the diagonal of Loom's), poses and per-body friction (MuJoCo takes the
 * larger of two geoms' coefficients where Loom takes sqrt(mu_a mu_b); torsional and rolling at
 * MuJoCo's defaults). Convex shapes are mesh geoms over the hull's vertices (MuJoCo collides a
 * mesh as its convex hull), cylinders and capsules MuJoCo's own. MuJoCo's defaults otherwise
 * (Newton solver, pyramidal cones, soft contacts), sparse Jacobians and contact buffers of 4
 * contacts per body (the warnings count says if any were dropped), one mj_step per dt. MuJoCo has
 * no sleeping.
 *
 *   mujoco_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME] [--settle 0|1]
 *
 * Prints one JSON line: ms per step over the first 2 s (median of R runs after a warm-up, a fresh
 * model and data each), then, continuing the last run to 10 s, the bodies lost (centre below
 * z = -1 m: out of the bin and falling) and, of the others, the largest distance one moved in the
 * last second (creep), how many still move faster than 1 cm/s, and the lowest and highest centre
 * (--settle 0 leaves that out, reported as -1: MuJoCo's 500-sphere pile at dt = 1/60 takes about
 * 9 minutes to reach 10 s on a 2-core machine). */
#define _POSIX_C_SOURCE 200809L
#include <mujoco/mujoco.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peer_clock.h"

#define MAX_LINE (1 << 20)

/* The scene file as MJCF, written to out; the number of dynamic bodies in *ndyn. */
static int convert(const char *path, const char *out, double dt, int *ndyn) {
  FILE *f = fopen(path, "r"), *o = fopen(out, "w");
  if (!f || !o) return -1;
  char *line = malloc(MAX_LINE), name[64], kind[16], shape[16];
  double g[3] = {0, 0, -9.81};
  int nbody = 0;
  *ndyn = 0;
  /* three passes: gravity and the body count, the convex meshes (assets), the bodies */
  fprintf(o, "<mujoco>\n");
  for (int pass = 0; pass < 3; pass++) {
    rewind(f);
    if (pass == 1) {
      /* contact buffers: 4 contacts per body, sparse Jacobians (the warnings count says if the
       * buffers overflow; larger ones do not fit in memory for 500 bodies: some of MuJoCo's
       * matrices grow with njmax^2) */
      fprintf(o, "  <option timestep=\"%.17g\" gravity=\"%.17g %.17g %.17g\" jacobian=\"sparse\"/>\n", dt, g[0], g[1], g[2]);
      fprintf(o, "  <size nconmax=\"%d\" njmax=\"%d\"/>\n  <asset>\n", 4 * nbody + 100, 12 * nbody + 400);
    }
    if (pass == 2) fprintf(o, "  </asset>\n  <worldbody>\n");
    nbody = 0;
    while (fgets(line, MAX_LINE, f)) {
      if (!strncmp(line, "gravity ", 8)) sscanf(line + 8, "%lf %lf %lf", &g[0], &g[1], &g[2]);
      if (strncmp(line, "body ", 5)) continue;
      double mass, I[3], fr, e, p[3], q[4];
      int used = 0;
      if (sscanf(line + 5, "%63s %15s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %15s%n", name, kind, &mass, &I[0],
                 &I[1], &I[2], &fr, &e, &p[0], &p[1], &p[2], &q[0], &q[1], &q[2], &q[3], shape, &used) != 16)
        return -1;
      const char *rest = line + 5 + used;
      char *end;
      const int dyn = !strcmp(kind, "dynamic");
      nbody++;
      if (pass == 0) {
        *ndyn += dyn;
        continue;
      }
      if (pass == 1) {
        if (!strcmp(shape, "convex")) {
          const int nv = (int)strtol(rest, &end, 10);
          fprintf(o, "    <mesh name=\"m%d\" vertex=\"", nbody);
          for (int i = 0; i < 3 * nv; i++) fprintf(o, "%.17g ", strtod(end, &end));
          fprintf(o, "\"/>\n");
        }
        continue;
      }
      char geom[512];
      double a = strtod(rest, &end), b = strtod(end, &end), c = strtod(end, &end);
      if (!strcmp(shape, "sphere")) snprintf(geom, sizeof geom, "type=\"sphere\" size=\"%.17g\"", a);
      else if (!strcmp(shape, "box")) snprintf(geom, sizeof geom, "type=\"box\" size=\"%.17g %.17g %.17g\"", a, b, c);
      else if (!strcmp(shape, "cylinder")) snprintf(geom, sizeof geom, "type=\"cylinder\" size=\"%.17g %.17g\"", a, b);
      else if (!strcmp(shape, "capsule")) snprintf(geom, sizeof geom, "type=\"capsule\" size=\"%.17g %.17g\"", a, b);
      else if (!strcmp(shape, "convex")) snprintf(geom, sizeof geom, "type=\"mesh\" mesh=\"m%d\"", nbody);
      else return -1;
      if (dyn)
        fprintf(o,
                "    <body pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\"><freejoint/>"
                "<inertial pos=\"0 0 0\" mass=\"%.17g\" diaginertia=\"%.17g %.17g %.17g\"/>"
                "<geom %s friction=\"%.17g 0.005 0.0001\"/></body>\n",
                p[0], p[1], p[2], q[0], q[1], q[2], q[3], mass, I[0], I[1], I[2], geom, fr);
      else
        fprintf(o, "    <geom pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\" %s friction=\"%.17g 0.005 0.0001\"/>\n",
                p[0], p[1], p[2], q[0], q[1], q[2], q[3], geom, fr);
    }
  }
  fprintf(o, "  </worldbody>\n</mujoco>\n");
  free(line);
  fclose(f);
  return fclose(o);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mujoco_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME]\n");
    return 2;
  }
  const char *name = argv[1];
  const double dt = 1.0 / atof(argv[2]);
  int runs = 1, settle = 1;
  for (int i = 3; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--settle")) settle = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--name")) name = argv[i + 1];
  }
  if (runs < 1 || runs > 100 || !(dt > 0)) {
    fprintf(stderr, "mujoco_scene: DT_INVERSE > 0 and 1 <= R <= 100\n");
    return 2;
  }
  char path[4096];
  /* the model is written to a file by name, as mj_loadXML reads it */
  const int made = peer_model_file(path, sizeof path, "mujoco_scene");
  int ndyn = 0;
  if (made < 0 || convert(argv[1], path, dt, &ndyn) != 0) {
    fprintf(stderr, "mujoco_scene: cannot convert %s\n", argv[1]);
    if (made == 0) remove(path);
    return 1;
  }
  char err[1000] = "";
  const int steps2 = (int)lround(2 / dt), steps9 = (int)lround(9 / dt), steps10 = (int)lround(10 / dt);
  double ms[101], creep = 0, low = 1e9, high = -1e9;
  int warnings = 0, moving = 0, lost = 0;
  for (int r = 0; r <= runs; r++) {
    mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
    if (!m) {
      fprintf(stderr, "mujoco_scene: %s\n", err);
      remove(path);
      return 1;
    }
    mjData *d = mj_makeData(m);
    const double t0 = now();
    for (int k = 0; k < steps2; k++) mj_step(m, d);
    const double el = now() - t0;
    if (r > 0) ms[r - 1] = el / steps2 * 1000; /* run 0 is the warm-up */
    if (r == runs && settle) {
      for (int k = steps2; k < steps9; k++) mj_step(m, d);
      double *before = malloc(sizeof(double) * 3 * (size_t)(ndyn + 1));
      for (int b = 0; b < ndyn; b++) memcpy(before + 3 * b, d->qpos + 7 * b, 3 * sizeof(double));
      for (int k = steps9; k < steps10; k++) mj_step(m, d);
      for (int b = 0; b < ndyn; b++) {
        const mjtNum *q = d->qpos + 7 * b, *v = d->qvel + 6 * b;
        if (q[2] < -1) { /* fell out of the scene */
          lost++;
          continue;
        }
        const double dx = q[0] - before[3 * b], dy = q[1] - before[3 * b + 1], dz = q[2] - before[3 * b + 2];
        const double dd = sqrt(dx * dx + dy * dy + dz * dz);
        if (dd > creep) creep = dd;
        moving += sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) > 0.01;
        low = q[2] < low ? q[2] : low, high = q[2] > high ? q[2] : high;
      }
      free(before);
    }
    for (int w = 0; w < mjNWARNING; w++) warnings += d->warning[w].number;
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  remove(path);
  qsort(ms, (size_t)runs, sizeof(double), cmp_double);
  if (!settle) lost = moving = -1, creep = -1e-3, low = high = 0; /* (not measured) */
  printf("{\"engine\":\"mujoco\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"lost\":%d,\"creep_mm_last_second\":%.3f,\"moving_after_10s\":%d,\"centre_z_min\":%.4f,"
         "\"centre_z_max\":%.4f,\"warnings\":%d}\n",
         name, 1 / dt, ms[runs / 2], ms[0], ms[runs - 1], lost, creep * 1000, moving, low, high, warnings);
  return 0;
}
