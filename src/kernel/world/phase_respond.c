/* phase_respond.c — the contact solvers, one family after another: vertices against rigid shapes
 * (projection to the contact distance, inelastic normal response, Coulomb friction), then sharp
 * rigid features against cloth elements where the first family left the cloth; then particle
 * bodies against themselves and each other (the Bridson pipeline, whose vertices held by an
 * obstacle this step count as infinite mass); then each body
 * reconciles its own state with what the contacts changed (Verlet's history). */
#include "contact/contact.h"

void phase_respond(loom_world *w, const step_info *s) {
  contact_vertices_respond(w, s, 0);
  for (int i = 0; i < w->npairs; i++) contact_features_respond(w, &w->pairs[i], s);
  if (contact_collide_respond(w, s)) {
    /* The pipeline may have pressed vertices near an obstacle into it: one more vertex pass over
     * the corrected paths, and if it moved anything, the pipeline once more (it now sees those
     * vertices as held, and does not push them back in). */
    for (int o = 0; o < w->order_count; o++)
      if (w->bodies[w->order[o]].pts) w->bodies[w->order[o]].pts->path_serial = 0; /* paths changed */
    const int first = w->contacts.count;
    for (int i = 0; i < w->npairs; i++) {
      const body_pair *p = &w->pairs[i];
      if (w->bodies[p->a].pts && w->bodies[p->b].ops->id == LOOM_KIND_RIGID) contact_vertices_detect(w, p, s);
    }
    w->obstacle_moves = 0;
    contact_vertices_respond(w, s, first);
    if (w->obstacle_moves) contact_collide_respond(w, s);
  }
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->after_contacts) b->ops->after_contacts(w, b, s);
  }
}
