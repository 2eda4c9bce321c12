/* ode_stack.c — ODE's rigid bodies on Loom's stack benchmarks (loom bench tower_10, pyramid_210):
 * 0.2 m cubes, density 1000 (8 kg), friction 0.5, restitution 0, on a static ground box; the
 * pyramid's boxes 2 mm apart in a row. ODE's defaults otherwise: quickstep (20 iterations, SOR
 * 1.3), global ERP 0.2 and CFM 1e-5, up to 4 contact points per box pair, friction pyramid
 * (dContactApprox1) with mu = 0.5; auto-disable on (ODE's sleeping, off by default: without it
 * the pyramid never rests and the comparison would not be like for like), one step per dt.
 *
 *   ode_stack tower|pyramid DT_INVERSE [--runs R]
 *
 * Prints one JSON line: ms per step over the first 2 s (median of R runs after one warm-up, a
 * fresh world each) and the largest distance any box moved from where it was placed after 10 s.
 * (ODE's quickstep shuffles its constraints randomly: runs differ slightly.) */
#define _POSIX_C_SOURCE 200809L
#include <ode/ode.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peer_clock.h"

#define MAX_BOXES 256
#define MAX_CONTACTS 4

typedef struct stack {
  dWorldID world;
  dSpaceID space;
  dJointGroupID contacts;
  dGeomID ground;
  dBodyID body[MAX_BOXES];
  double start[MAX_BOXES][3];
  int n;
} stack;

static void near_cb(void *data, dGeomID a, dGeomID b) {
  stack *s = data;
  dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
  if (ba && bb && dAreConnected(ba, bb)) return;
  dContact c[MAX_CONTACTS];
  const int k = dCollide(a, b, MAX_CONTACTS, &c[0].geom, sizeof(dContact));
  for (int i = 0; i < k; i++) {
    c[i].surface.mode = dContactApprox1;
    c[i].surface.mu = 0.5;
    c[i].surface.bounce = 0;
    dJointID j = dJointCreateContact(s->world, s->contacts, &c[i]);
    dJointAttach(j, ba, bb);
  }
}

static void add_box(stack *s, double x, double z) {
  dBodyID b = dBodyCreate(s->world);
  dMass m;
  dMassSetBox(&m, 1000, 0.2, 0.2, 0.2);
  dBodySetMass(b, &m);
  dBodySetPosition(b, x, 0, z);
  dGeomID g = dCreateBox(s->space, 0.2, 0.2, 0.2);
  dGeomSetBody(g, b);
  s->start[s->n][0] = x;
  s->start[s->n][1] = 0;
  s->start[s->n][2] = z;
  s->body[s->n++] = b;
}

static void stack_init(stack *s, int tower) {
  memset(s, 0, sizeof *s);
  s->world = dWorldCreate();
  s->space = dHashSpaceCreate(0);
  s->contacts = dJointGroupCreate(0);
  dWorldSetGravity(s->world, 0, 0, -9.81);
  dWorldSetAutoDisableFlag(s->world, 1);
  s->ground = dCreateBox(s->space, 40, 40, 1);
  dGeomSetPosition(s->ground, 0, 0, -0.5);
  if (tower) {
    for (int i = 0; i < 10; i++) add_box(s, 0, 0.1 + 0.2 * i);
  } else {
    for (int row = 0; row < 20; row++)
      for (int i = 0; i < 20 - row; i++) add_box(s, (i - (19 - row) / 2.0) * 0.202, 0.1 + 0.2 * row);
  }
}

static void stack_step(stack *s, double dt) {
  dSpaceCollide(s->space, s, near_cb);
  dWorldQuickStep(s->world, dt);
  dJointGroupEmpty(s->contacts);
}

static double stack_drift(const stack *s) {
  double worst = 0;
  for (int i = 0; i < s->n; i++) {
    const dReal *p = dBodyGetPosition(s->body[i]);
    const double dx = p[0] - s->start[i][0], dy = p[1] - s->start[i][1], dz = p[2] - s->start[i][2];
    const double d = sqrt(dx * dx + dy * dy + dz * dz);
    if (d > worst) worst = d;
  }
  return worst;
}

static void stack_free(stack *s) {
  dJointGroupDestroy(s->contacts);
  dSpaceDestroy(s->space);
  dWorldDestroy(s->world);
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "tower") && strcmp(argv[1], "pyramid"))) {
    fprintf(stderr, "usage: ode_stack tower|pyramid DT_INVERSE [--runs R]\n");
    return 2;
  }
  const int tower = !strcmp(argv[1], "tower");
  const double dt = 1.0 / atof(argv[2]);
  int runs = 3;
  for (int i = 3; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
  if (runs < 1 || runs > 100 || !(dt > 0)) {
    fprintf(stderr, "ode_stack: DT_INVERSE > 0 and 1 <= R <= 100\n");
    return 2;
  }
  dInitODE();
  const int steps2 = (int)lround(2 / dt), steps10 = (int)lround(10 / dt);
  double ms[101], drift = 0;
  for (int r = 0; r <= runs; r++) {
    stack s;
    stack_init(&s, tower);
    const double t0 = now();
    for (int k = 0; k < steps2; k++) stack_step(&s, dt);
    const double el = now() - t0;
    for (int k = steps2; k < steps10; k++) stack_step(&s, dt);
    drift = stack_drift(&s);
    stack_free(&s);
    if (r > 0) ms[r - 1] = el / steps2 * 1000; /* run 0 is the warm-up */
  }
  qsort(ms, (size_t)runs, sizeof(double), cmp_double);
  printf("{\"engine\":\"ode\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"drift_mm\":%.3f}\n",
         argv[1], 1 / dt, ms[runs / 2], ms[0], ms[runs - 1], drift * 1000);
  dCloseODE();
  return 0;
}
