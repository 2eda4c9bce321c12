/* phase_commit.c — the end of a step: each kind commits (divergence guard, poses on their
 * targets), pin offsets reach their targets, time advances, statistics are summed. */
#include <string.h>

#include "contact/contact.h"

/* Cloth the contact passes could not keep out of a rigid body — squeezed between two obstacles, a
 * stretched triangle round a thin one, a body moved through it between steps — is not hidden:
 * analytic shapes are looked at after every step (a box test per triangle, then the exact one
 * where the boxes meet), triangle meshes while a body is flagged (check_obstacles). The count is
 * stats.obstacle_crossings; the world says so once per simulated second. */
static void obstacle_crossings(loom_world *w) {
  w->stats.obstacle_crossings = 0;
  int first = -1, first_tri = -1, first_rigid = -1, total = 0;
  for (int o = 0; o < w->order_count; o++) {
    const int slot = w->order[o];
    particles *p = w->bodies[slot].pts;
    if (!p || p->frozen || p->nt <= 0 || w->bodies[slot].ops->id != LOOM_KIND_CLOTH) continue;
    int ft, fr;
    const int meshes = p->check_obstacles;
    const int n = contact_obstacle_crossings(w, slot, meshes, &ft, &fr);
    p->check_obstacles = meshes && n > 0;
    /* the next run looks for them again and leaves their pairs with that body out (find_inside) */
    if (n > 0 && p->col.ready) p->col.check_tangles = 1;
    if (n > 0 && first < 0) first = slot, first_tri = ft, first_rigid = fr;
    total += n;
  }
  w->stats.obstacle_crossings = total;
  if (total > 0 && w->time >= w->obstacle_warned_until) {
    w->obstacle_warned_until = w->time + 1.0;
    const body_slot *c = &w->bodies[first], *r = &w->bodies[first_rigid];
    world_message(w, LOOM_WARNING, first,
                  "collisions: %d cloth triangles lie across rigid bodies at t = %.4f s (first: %s '%s' triangle %d in "
                  "%s '%s'): squeezed between obstacles, moved through one, or a thin one cut between the vertices; "
                  "the contact passes push the vertices out where they can (stats.obstacle_crossings counts them; "
                  "further cases in the next second are counted only)",
                  total, w->time, c->ops->name, c->name, first_tri, r->ops->name, r->name);
  }
}

void phase_commit(loom_world *w, const step_info *s) {
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->commit) b->ops->commit(w, b, s);
  }
  for (int g = 0; g < w->group_slots; g++)
    if (w->groups[g].alive) w->groups[g].offset = w->groups[g].target;
  contacts_finish(w);
  w->time += s->dt;
  w->steps += 1;
  int frozen = 0;
  for (int o = 0; o < w->order_count; o++) {
    particles *p = w->bodies[w->order[o]].pts;
    if (!p) continue;
    frozen += p->frozen;
    for (int i = 0; i < p->n; i++) w->stats.contacts += p->contact[i] & 1;
    p->x_step = p->x_sub = NULL;
    if (p->col.ready) {
      memcpy(p->col.xdone, p->x, sizeof(vec3) * (size_t)p->n);
      p->col.xdone_ok = 1;
    }
  }
  w->stats.frozen = frozen;
  obstacle_crossings(w);
  w->pairs = NULL;
  w->npairs = 0;
}
