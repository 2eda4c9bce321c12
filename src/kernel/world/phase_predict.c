/* phase_predict.c — every body advances its own dynamics over the substep to candidate positions
 * and velocities; the start of the substep is kept for the contact phases (paths, CCD). */
#include <string.h>

#include "contact/contact.h"

void phase_predict(loom_world *w, const step_info *s) {
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    LOOM_ASSERT(!b->pts || b->pts->frozen || b->pts->x_sub, "begin gave every live particle body its scratch");
    if (b->pts && !b->pts->frozen) memcpy(b->pts->x_sub, b->pts->x, sizeof(vec3) * (size_t)b->pts->n);
  }
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->id == LOOM_KIND_RIGID) {
      rigid_body *r = rigid_of_slot(b);
      r->cloth_force = r->cloth_torque = v3(0, 0, 0);
      r->cloth_under = 0;
      r->cloth_gap = 0;
    }
  }
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (!b->ops->predict) continue;
    if (b->ops->id == LOOM_KIND_CLOTH) contact_constraints_gather(w, w->order[o], s);
    b->ops->predict(w, b, s);
    if (b->ops->id == LOOM_KIND_CLOTH) contact_constraints_react(w, w->order[o], s);
  }
  /* a cloth pushed by the contacts of one solved after it solves again with the push */
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->id == LOOM_KIND_CLOTH && b->pts->pc_pushed) contact_pushed_again(w, w->order[o], s);
  }
}
