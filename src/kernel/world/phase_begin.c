/* phase_begin.c — the start of a step: statistics reset, the world's substep count, per-step
 * scratch of the particle bodies, and each kind's begin (kinematic velocities from targets).
 *
 * Substeps: one rule for the whole world. Each body says how many substeps it needs (a cloth: its
 * stability estimate or its user's count; a rigid body: 1) and the world takes the largest, so all
 * bodies predict, collide and respond at the same pace and none runs ahead of another. */
#include <string.h>

#include "world/world.h"

void phase_begin(loom_world *w, step_info *s) {
  w->stats.contacts = 0;
  w->stats.collisions = 0;
  w->stats.impact_zones = 0;
  w->stats.proximity = 0;
  w->stats.ccd_collisions = 0;
  w->stats.candidates = 0;
  w->stats.strain_limited = 0;
  w->stats.collision_iterations = 0;
  w->stats.largest_zone = 0;
  w->stats.unresolved = 0;
  w->stats.tangled = 0;
  w->stats.passed_through = 0;
  w->stats.solid_points = 0;
  w->stats.tool_contacts = w->stats.tool_unresolved = 0;
  w->stats.iterations = 0;
  w->stats.newton_iterations = 0;
  w->stats.cloth_contacts = 0;
  w->stats.contact_resolves = 0;
  w->stats.cg_residual = 0;
  w->stats.substeps = 0;
  w->stats.max_penetration = 0;
  w->oquery.tests = w->oquery.brute_tests = 0;
  w->contacts.count = 0;
  for (int o = 0; o < w->order_count; o++) {
    particles *p = w->bodies[w->order[o]].pts;
    if (!p || !p->col.zone_any) continue;
    for (int i = 0; i < p->n; i++) p->col.zone[i] = -1; /* (the last step's impact zones) */
    p->col.zone_any = 0;
  }
  int S = 1;
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->pts && b->pts->frozen) continue;
    int want = b->ops->substeps ? b->ops->substeps(w, b, s->dt) : 1;
    if (want > S) S = want;
  }
  if (S > WORLD_MAX_SUBSTEPS) S = WORLD_MAX_SUBSTEPS;
  s->substeps = S;
  s->h = s->dt / S;
  w->pairs = ARENA_NEW(&w->scratch, body_pair, (size_t)w->order_count * (size_t)w->order_count / 2 + 1, "pairs");
  w->npairs = 0;
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    particles *p = b->pts;
    if (p) {
      particles_sync_masses(w, w->order[o]);
      memset(p->contact, 0, (size_t)p->n);
      p->x_step = ARENA_NEW(&w->scratch, vec3, p->n, "x at step start");
      p->x_sub = ARENA_NEW(&w->scratch, vec3, p->n, "x at substep start");
      if (!p->x_step || !p->x_sub) {
        world_message(w, LOOM_ERROR, w->order[o], "%s '%s': out of memory in step; body frozen", b->ops->name, b->name);
        p->frozen = 1;
      } else {
        memcpy(p->x_step, p->x, sizeof(vec3) * (size_t)p->n);
        memcpy(p->x_sub, p->x, sizeof(vec3) * (size_t)p->n);
        p->broken_at_start = 0;
        /* moved between steps (a pin group's set_offset, positions written from Lua): crossings
         * it made are looked for at the pipeline's next run, like a body's first state */
        if (p->col.ready && p->col.xdone_ok && memcmp(p->col.xdone, p->x, sizeof(vec3) * (size_t)p->n) != 0)
          p->col.check_tangles = p->check_obstacles = 1;
        for (int i = 0; i < p->n && !p->broken_at_start; i++)
          if (!v3_isfinite(p->x[i]) || !v3_isfinite(p->v[i])) p->broken_at_start = i + 1;
      }
      if (!p->frozen && S > w->stats.substeps) w->stats.substeps = S;
    }
    if (b->ops->begin) b->ops->begin(w, b, s);
  }
}
