/* world_diverge.c — what the divergence guard tells the user: the body, the time, the vertex,
 * what was wrong with it, and the causes the world can see with advice that works:
 *   - the vertex was in a contact with a body during the last substep (name it);
 *   - pinned vertices of the body lie inside another body's contact margin (pins cannot move,
 *     so free vertices between them and the obstacle are squeezed every substep);
 *   - the body was asked for fewer substeps than its stability estimate;
 *   - its state was already not finite when the step began (written from outside);
 *   - an implicit body had external forces (force fields act explicitly in its step).
 * Force fields are Lua's: the Lua layer checks their output and names them. */
#include <stdio.h>
#include <string.h>

#include "world/world.h"

/* Appends "; " + text to buf (truncating safely). */
static void add(char *buf, size_t cap, const char *text) {
  size_t at = strlen(buf);
  if (at + 3 < cap) snprintf(buf + at, cap - at, "%s%s", at ? "; " : "", text);
}

void world_diverged(loom_world *w, int slot, int vertex, const char *what, const step_info *s) {
  body_slot *b = &w->bodies[slot];
  char causes[WORLD_MESSAGE_LEN] = "";
  char line[200];
  /* contacts of the vertex (or its body) in the last substep */
  const int h = world_handle(w, slot);
  int other = -1;
  for (int i = 0; i < w->contacts.count; i++) {
    const loom_contact *c = &w->contacts.items[i];
    if (c->body_a != h) continue;
    if (c->type_a == LOOM_FEATURE_VERTEX && c->feature_a == vertex) {
      other = handle_slot(c->body_b);
      break;
    }
    if (other < 0) other = handle_slot(c->body_b);
  }
  /* pins inside another body's margin */
  pin_margin pm;
  const int pinned_in = pins_in_margin(w, slot, -1, -1, &pm) > 0 ? pm.other : -1;
  if (pinned_in >= 0) {
    snprintf(line, sizeof line, "pinned vertices lie within %s '%s''s contact margin: move the pins away from it or "
                                "reduce the thicknesses",
             w->bodies[pinned_in].ops->name, w->bodies[pinned_in].name);
    add(causes, sizeof causes, line);
  }
  if (other >= 0 && other != pinned_in) {
    snprintf(line, sizeof line, "it was in contact with %s '%s'", w->bodies[other].ops->name, w->bodies[other].name);
    add(causes, sizeof causes, line);
  }
  /* a state that was already broken when the step began came from outside the kernel */
  const particles *p = b->pts;
  int broken_before = p && p->x_step && p->broken_at_start, pushed = 0;
  if (broken_before) {
    /* the vertex that was written, not the first one the step spread it to (an implicit solve
     * couples every vertex) */
    vertex = p->broken_at_start - 1;
    what = v3_isfinite(p->x_step[vertex]) ? "non-finite velocity" : "non-finite position";
  }
  if (p)
    for (int i = 0; i < p->n && !pushed; i++) pushed = p->f[i].x != 0 || p->f[i].y != 0 || p->f[i].z != 0;
  if (broken_before)
    add(causes, sizeof causes, "its positions or velocities were already not finite when the step began: "
                               "something wrote them between steps");
  double stable = 0, integrator = 0;
  if (loom_body_get_param(w, h, "integrator", &integrator) == 0 && integrator == LOOM_INTEGRATOR_IMPLICIT) {
    if (pushed && !broken_before)
      add(causes, sizeof causes, "the implicit integrator treats external forces explicitly: give a "
                                 "velocity-dependent force field's -df/dv (body:add_damping), or reduce dt");
  } else if (loom_body_get_param(w, h, "stable_substep", &stable) == 0 && stable > 0 && s->h > stable * 1.0001) {
    if (s->dt / stable > WORLD_MAX_SUBSTEPS) /* automatic substeps were capped: more is not possible */
      snprintf(line, sizeof line, "its substep %.3g s is above the stable %.3g s, beyond the %d substeps a step "
                                  "can take: use integrator = 'implicit', or reduce dt or the stiffness",
               s->h, stable, WORLD_MAX_SUBSTEPS);
    else
      snprintf(line, sizeof line, "its substep %.3g s is above the stable %.3g s: raise 'substeps' or set it to 0 "
                                  "(automatic)", s->h, stable);
    add(causes, sizeof causes, line);
  }
  if (!causes[0]) add(causes, sizeof causes, "reduce dt or stiffness, or look for forces that grow without bound");
  world_message(w, LOOM_ERROR, slot, "%s '%s' diverged at t = %.3f s (%s at vertex %d): %s", b->ops->name, b->name,
                w->time + s->dt, what, vertex, causes);
  loom_clear_error();
}
