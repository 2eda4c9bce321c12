/* phase_commit.c — the end of a step: each kind commits (divergence guard, poses on their
 * targets), pin offsets reach their targets, time advances, statistics are summed. */
#include "world/world.h"

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
  }
  w->stats.frozen = frozen;
  w->pairs = NULL;
  w->npairs = 0;
}
