/* ode_scene.c — a Loom scene of rigid bodies (written by export_scene.lua) in ODE: the same shapes,
 * masses, inertias (the diagonal of Loom's), poses; friction per contact sqrt(mu_a mu_b) as Loom
 * combines it, restitution the larger. Convex shapes are dConvex over the hull's triangles (one
 * plane each), cylinders and capsules ODE's own. ODE's configuration as ode_stack.c: quickstep
 * (20 iterations), global ERP 0.2 and CFM 1e-5, up to 4 contact points per pair, friction pyramid,
 * auto-disable on, one step per dt.
 *
 *   ode_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME]
 *
 * Prints one JSON line: ms per step over the first 2 s (median of R runs after a warm-up, a fresh
 * world each), then, continuing the last run to 10 s, the bodies lost (centre below z = -1 m: out
 * of the bin and falling) and, of the others, the largest distance one moved in the last second
 * (creep), how many are still enabled (awake), and the lowest and highest centre. */
#define _POSIX_C_SOURCE 200809L
#include <ode/ode.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_clock.h"

#define MAX_CONTACTS 4
#define MAX_LINE (1 << 20)

typedef struct bdef {
  char name[64], kind[16], shape[16];
  double mass, inertia[3], friction, restitution, pos[3], q[4];
  double *p; /* the shape's numbers */
  int np;
  /* convex: planes and polygons as ODE wants them */
  dReal *planes, *points;
  unsigned *polys;
  int nplanes, npoints;
} bdef;

typedef struct scene {
  double gravity[3];
  bdef *b;
  int n;
} scene;

typedef struct sim {
  dWorldID world;
  dSpaceID space;
  dJointGroupID contacts;
  dBodyID *body; /* NULL for static ones */
  const scene *s;
} sim;

static int load(const char *path, scene *s) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char *line = malloc(MAX_LINE);
  memset(s, 0, sizeof *s);
  s->gravity[2] = -9.81;
  int cap = 0;
  while (fgets(line, MAX_LINE, f)) {
    if (!strncmp(line, "gravity ", 8)) {
      sscanf(line + 8, "%lf %lf %lf", &s->gravity[0], &s->gravity[1], &s->gravity[2]);
      continue;
    }
    if (strncmp(line, "body ", 5)) continue;
    if (s->n == cap) s->b = realloc(s->b, sizeof(bdef) * (size_t)(cap = cap ? 2 * cap : 64));
    bdef *b = &s->b[s->n];
    memset(b, 0, sizeof *b);
    int used = 0;
    if (sscanf(line + 5, "%63s %15s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %15s%n", b->name, b->kind, &b->mass,
               &b->inertia[0], &b->inertia[1], &b->inertia[2], &b->friction, &b->restitution, &b->pos[0], &b->pos[1],
               &b->pos[2], &b->q[0], &b->q[1], &b->q[2], &b->q[3], b->shape, &used) != 16) {
      fprintf(stderr, "ode_scene: %s: bad body line\n", path);
      return -1;
    }
    char *c = line + 5 + used, *e;
    int pcap = 16;
    b->p = malloc(sizeof(double) * (size_t)pcap);
    for (double x = strtod(c, &e); e != c; c = e, x = strtod(c, &e)) {
      if (b->np == pcap) b->p = realloc(b->p, sizeof(double) * (size_t)(pcap *= 2));
      b->p[b->np++] = x;
    }
    if (!strcmp(b->shape, "convex")) {
      const int nv = (int)b->p[0], nt = (int)b->p[1 + 3 * nv];
      const double *v = b->p + 1, *t = b->p + 2 + 3 * nv;
      b->npoints = nv;
      b->nplanes = nt;
      b->points = malloc(sizeof(dReal) * 3 * (size_t)nv);
      b->planes = malloc(sizeof(dReal) * 4 * (size_t)nt);
      b->polys = malloc(sizeof(unsigned) * 4 * (size_t)nt);
      for (int i = 0; i < 3 * nv; i++) b->points[i] = v[i];
      for (int k = 0; k < nt; k++) {
        const int i = (int)t[3 * k], j = (int)t[3 * k + 1], l = (int)t[3 * k + 2];
        const double *A = v + 3 * i, *B = v + 3 * j, *C = v + 3 * l;
        double u[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]}, w[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
        double nrm[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
        for (int a = 0; a < 3; a++) nrm[a] /= len;
        double d = nrm[0] * A[0] + nrm[1] * A[1] + nrm[2] * A[2];
        unsigned *poly = b->polys + 4 * k;
        poly[0] = 3, poly[1] = (unsigned)i, poly[2] = (unsigned)j, poly[3] = (unsigned)l;
        if (d < 0) { /* the origin (centre of mass) is inside: the plane must face away from it */
          for (int a = 0; a < 3; a++) nrm[a] = -nrm[a];
          d = -d;
          poly[2] = (unsigned)l, poly[3] = (unsigned)j;
        }
        b->planes[4 * k] = nrm[0], b->planes[4 * k + 1] = nrm[1], b->planes[4 * k + 2] = nrm[2], b->planes[4 * k + 3] = d;
      }
    }
    s->n++;
  }
  free(line);
  fclose(f);
  return s->n > 0 ? 0 : -1;
}

static void near_cb(void *data, dGeomID a, dGeomID b) {
  sim *m = data;
  dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
  if (!ba && !bb) return;
  const bdef *da = dGeomGetData(a), *db = dGeomGetData(b);
  dContact c[MAX_CONTACTS];
  const int k = dCollide(a, b, MAX_CONTACTS, &c[0].geom, sizeof(dContact));
  for (int i = 0; i < k; i++) {
    c[i].surface.mode = dContactApprox1 | dContactBounce;
    c[i].surface.mu = sqrt(da->friction * db->friction);
    c[i].surface.bounce = da->restitution > db->restitution ? da->restitution : db->restitution;
    c[i].surface.bounce_vel = 0.5;
    dJointID j = dJointCreateContact(m->world, m->contacts, &c[i]);
    dJointAttach(j, ba, bb);
  }
}

static void sim_init(sim *m, const scene *s) {
  memset(m, 0, sizeof *m);
  m->s = s;
  m->world = dWorldCreate();
  m->space = dHashSpaceCreate(0);
  m->contacts = dJointGroupCreate(0);
  dWorldSetGravity(m->world, s->gravity[0], s->gravity[1], s->gravity[2]);
  dWorldSetAutoDisableFlag(m->world, 1);
  m->body = calloc((size_t)s->n, sizeof(dBodyID));
  for (int i = 0; i < s->n; i++) {
    bdef *b = &s->b[i];
    const double *p = b->p;
    dGeomID g;
    if (!strcmp(b->shape, "sphere")) g = dCreateSphere(m->space, p[0]);
    else if (!strcmp(b->shape, "box")) g = dCreateBox(m->space, 2 * p[0], 2 * p[1], 2 * p[2]);
    else if (!strcmp(b->shape, "cylinder")) g = dCreateCylinder(m->space, p[0], 2 * p[1]);
    else if (!strcmp(b->shape, "capsule")) g = dCreateCapsule(m->space, p[0], 2 * p[1]);
    else if (!strcmp(b->shape, "convex"))
      g = dCreateConvex(m->space, b->planes, (unsigned)b->nplanes, b->points, (unsigned)b->npoints, b->polys);
    else {
      fprintf(stderr, "ode_scene: body %s: unknown shape %s\n", b->name, b->shape);
      exit(1);
    }
    dGeomSetData(g, b);
    dQuaternion q = {b->q[0], b->q[1], b->q[2], b->q[3]};
    if (!strcmp(b->kind, "dynamic")) {
      dBodyID body = dBodyCreate(m->world);
      dMass ms;
      dMassSetParameters(&ms, b->mass, 0, 0, 0, b->inertia[0], b->inertia[1], b->inertia[2], 0, 0, 0);
      dBodySetMass(body, &ms);
      dBodySetPosition(body, b->pos[0], b->pos[1], b->pos[2]);
      dBodySetQuaternion(body, q);
      dGeomSetBody(g, body);
      m->body[i] = body;
    } else {
      dGeomSetPosition(g, b->pos[0], b->pos[1], b->pos[2]);
      dGeomSetQuaternion(g, q);
    }
  }
}

static void sim_step(sim *m, double dt) {
  dSpaceCollide(m->space, m, near_cb);
  dWorldQuickStep(m->world, dt);
  dJointGroupEmpty(m->contacts);
}

static void sim_free(sim *m) {
  dJointGroupDestroy(m->contacts);
  dSpaceDestroy(m->space);
  dWorldDestroy(m->world);
  free(m->body);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: ode_scene SCENE.txt DT_INVERSE [--runs R] [--name NAME]\n");
    return 2;
  }
  const char *name = argv[1];
  const double dt = 1.0 / atof(argv[2]);
  int runs = 3;
  for (int i = 3; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--name")) name = argv[i + 1];
  }
  if (runs < 1 || runs > 100 || !(dt > 0)) {
    fprintf(stderr, "ode_scene: DT_INVERSE > 0 and 1 <= R <= 100\n");
    return 2;
  }
  scene s;
  if (load(argv[1], &s) != 0) {
    fprintf(stderr, "ode_scene: cannot read %s\n", argv[1]);
    return 1;
  }
  dInitODE();
  const int steps2 = (int)lround(2 / dt), steps9 = (int)lround(9 / dt), steps10 = (int)lround(10 / dt);
  double ms[101], creep = 0, low = 1e9, high = -1e9;
  int awake = 0, lost = 0;
  for (int r = 0; r <= runs; r++) {
    sim m;
    sim_init(&m, &s);
    const double t0 = now();
    for (int k = 0; k < steps2; k++) sim_step(&m, dt);
    const double el = now() - t0;
    if (r > 0) ms[r - 1] = el / steps2 * 1000; /* run 0 is the warm-up */
    if (r == runs) {
      for (int k = steps2; k < steps9; k++) sim_step(&m, dt);
      double *before = malloc(sizeof(double) * 3 * (size_t)s.n);
      for (int i = 0; i < s.n; i++)
        if (m.body[i]) memcpy(before + 3 * i, dBodyGetPosition(m.body[i]), 3 * sizeof(double));
      for (int k = steps9; k < steps10; k++) sim_step(&m, dt);
      for (int i = 0; i < s.n; i++) {
        if (!m.body[i]) continue;
        const dReal *p = dBodyGetPosition(m.body[i]);
        if (p[2] < -1) { /* fell out of the scene */
          lost++;
          continue;
        }
        const double dx = p[0] - before[3 * i], dy = p[1] - before[3 * i + 1], dz = p[2] - before[3 * i + 2];
        const double d = sqrt(dx * dx + dy * dy + dz * dz);
        if (d > creep) creep = d;
        awake += dBodyIsEnabled(m.body[i]);
        low = p[2] < low ? p[2] : low, high = p[2] > high ? p[2] : high;
      }
      free(before);
    }
    sim_free(&m);
  }
  qsort(ms, (size_t)runs, sizeof(double), cmp_double);
  printf("{\"engine\":\"ode\",\"case\":\"%s\",\"dt_inverse\":%g,\"ms_per_step_median\":%.4f,\"min\":%.4f,\"max\":%.4f,"
         "\"lost\":%d,\"creep_mm_last_second\":%.3f,\"awake_after_10s\":%d,\"centre_z_min\":%.4f,\"centre_z_max\":%.4f}\n",
         name, 1 / dt, ms[runs / 2], ms[0], ms[runs - 1], lost, creep * 1000, awake, low, high);
  dCloseODE();
  return 0;
}
