/* world_step.c — one step of the whole world, in phases (docs/architecture.md, "One step"):
 *
 *   begin                      targets, per-step scratch, the world's substep count S
 *   S times:  predict          every body's candidate state for the substep
 *             detect           broad phase over all bodies, narrow phase into the contact buffer
 *             respond          the contact solvers, family after family
 *   commit                     divergence guards, poses, pin offsets, time
 *
 * No body finishes a substep before every body has predicted it. */
#include "world/world.h"

LOOM_API int loom_world_step(loom_world *w) {
  if (!w) return 0;
  double t0 = loom_clock();
  int messages_before = w->message_count;
  arena_mark mark = arena_get_mark(&w->scratch);
  step_info s = {w->dt, w->dt, 0, 1, 0, 1};
  phase_begin(w, &s);
  for (int k = 0; k < s.substeps; k++) {
    s.substep = k;
    s.a0 = (double)k / s.substeps;
    s.a1 = (double)(k + 1) / s.substeps;
    w->substep_serial++;
    phase_predict(w, &s);
    phase_detect(w, &s);
    phase_respond(w, &s);
  }
  phase_commit(w, &s);
  arena_release(&w->scratch, mark);
  w->stats.step_seconds = loom_clock() - t0;
  return w->message_count - messages_before;
}
