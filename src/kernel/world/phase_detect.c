/* phase_detect.c — the broad phase over all bodies, then each contact family's narrow phase for
 * the pairs it handles, into the contact buffer. The buffer holds the contacts of the current
 * substep (after the step: of the last one). */
#include "contact/contact.h"
#include "contact/contact_rigid.h"

/* Vertex paths against rigid shapes for every broad-phase pair, appended to the buffer (also run
 * again by the respond phase after the collision pipeline changed paths). */
void detect_vertex_contacts(loom_world *w, const step_info *s) {
  for (int i = 0; i < w->npairs; i++) {
    const body_pair *p = &w->pairs[i];
    if (w->bodies[p->a].pts && w->bodies[p->b].ops->id == LOOM_KIND_RIGID) contact_vertices_detect(w, p, s);
  }
}

void phase_detect(loom_world *w, const step_info *s) {
  w->contacts.count = 0;
  broadphase_pairs(w, s);
  detect_vertex_contacts(w, s);
  contact_rigid_detect(w, s);
}
