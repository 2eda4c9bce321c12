/* phase_respond.c — the contact solvers, one family after another: rigid bodies with their
 * contacts among themselves (contact_rigid.c), vertices against rigid shapes
 * (projection to the contact distance, inelastic normal response, Coulomb friction), then sharp
 * rigid features against cloth elements where the first family left the cloth; then particle
 * bodies against themselves and each other (the Bridson pipeline, whose vertices held by an
 * obstacle this step count as infinite mass); then each body
 * reconciles its own state with what the contacts changed (Verlet's history). */
#include "contact/contact.h"
#include "contact/contact_rigid.h"

void phase_respond(loom_world *w, const step_info *s) {
  /* rigid bodies first: the other families then see their motion over the substep */
  contact_rigid_respond(w, s);
  contact_vertices_respond(w, s, 0);
  w->feature_round++;
  for (int i = 0; i < w->npairs; i++) contact_features_respond(w, &w->pairs[i], s);
  /* The pipeline may press vertices near an obstacle into it: the obstacle passes run again over
   * the corrected paths, and while they move anything, the pipeline again (it sees the vertices
   * the obstacles now hold as held, and does not push them back in). A few rounds at most. */
  for (int round = 0; contact_collide_respond(w, s); round++) {
    /* the pipeline has the last word: a crossing the obstacle passes made is never left behind (a
     * vertex it then presses slightly into an obstacle comes out in the next substep) */
    if (round == 4) break;
    for (int o = 0; o < w->order_count; o++)
      if (w->bodies[w->order[o]].pts) w->bodies[w->order[o]].pts->path_serial = 0; /* paths changed */
    const int first = w->contacts.count;
    detect_vertex_contacts(w, s);
    w->obstacle_moves = 0;
    contact_vertices_respond(w, s, first);
    w->feature_round++; /* (the pipeline moved the cloth: its box and tree are taken again) */
    for (int i = 0; i < w->npairs; i++) contact_features_respond(w, &w->pairs[i], s);
    if (!w->obstacle_moves) break;
  }
  contact_solid_respond(w, s);
  contact_solid_shapes(w, s);
  contact_simplex_tools(w, s);
  contact_rigid_couple(w, 0); /* (the vertex records come from detect, before the rigid ones) */
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->after_contacts) b->ops->after_contacts(w, b, s);
    if (b->pts)
      for (int i = 0; i < b->pts->n; i++) b->pts->contact[i] &= (uint8_t)~CONTACT_MOVABLE;
  }
}
