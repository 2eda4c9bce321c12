/* phase_commit.c — the end of a step: each kind commits (divergence guard, poses on their
 * targets), pin offsets reach their targets, time advances, statistics are summed. */
#include <stdio.h>
#include <string.h>

#include "contact/contact.h"

/* Cloth the contact passes could not keep out of a rigid body — squeezed between two obstacles, a
 * stretched triangle round a thin one, a body moved through it between steps — is not hidden:
 * analytic shapes are looked at after every step (a box test per triangle, then the exact one
 * where the boxes meet), triangle meshes while a body is flagged (check_obstacles). The count is
 * stats.obstacle_crossings; the world says so once per simulated second. Triangles that pins
 * hold across (a node pinned within the body's contact margin, which no contact pass moves: the
 * user drove it there) are counted too, and said apart, naming the pins: the pipeline leaves such
 * elements out of its tests against that body, and the check after the step used to leave them
 * out as well, so a pin group driven through a box left its crossings unsaid. */
static void obstacle_crossings(loom_world *w) {
  w->stats.obstacle_crossings = 0;
  int first = -1, first_tri = -1, first_rigid = -1, total = 0, passes = 0;
  int pfirst = -1, pinned = 0;
  obstacle_crossing_info pin = {0, -1, -1, 0, -1, -1, {0}, 0};
  for (int o = 0; o < w->order_count; o++) {
    const int slot = w->order[o];
    particles *p = w->bodies[slot].pts;
    if (!p || p->frozen || p->nt <= 0 || w->bodies[slot].ops->id != LOOM_KIND_CLOTH) continue;
    obstacle_crossing_info in;
    const int meshes = p->check_obstacles;
    const int n = contact_obstacle_crossings(w, slot, meshes, &in);
    p->check_obstacles = meshes && n > 0;
    /* the next run looks for them again and leaves their pairs with that body out (find_inside;
     * the pinned ones are out of its tests already) */
    if (in.count > 0 && p->col.ready) p->col.check_tangles = 1;
    if (in.count > 0 && first < 0) first = slot, first_tri = in.first_tri, first_rigid = in.first_rigid;
    if (in.pinned > 0 && pfirst < 0) pfirst = slot, pin = in;
    passes += in.count;
    pinned += in.pinned;
    total += n;
  }
  w->stats.obstacle_crossings = total;
  if (passes > 0 && w->time >= w->obstacle_warned_until) {
    w->obstacle_warned_until = w->time + 1.0;
    const body_slot *c = &w->bodies[first], *r = &w->bodies[first_rigid];
    world_message(w, LOOM_WARNING, first,
                  "collisions: %d cloth triangles lie across rigid bodies at t = %.4f s (first: %s '%s' triangle %d in "
                  "%s '%s'): squeezed between obstacles, moved through one, or a thin one cut between the vertices; "
                  "the contact passes push the vertices out where they can (stats.obstacle_crossings counts them; "
                  "further cases in the next second are counted only)",
                  passes, w->time, c->ops->name, c->name, first_tri, r->ops->name, r->name);
  }
  if (pinned > 0 && w->time >= w->pinned_warned_until) {
    w->pinned_warned_until = w->time + 1.0;
    const body_slot *c = &w->bodies[pfirst], *r = &w->bodies[pin.pinned_rigid];
    char list[96];
    size_t at = 0;
    list[0] = 0;
    for (int k = 0; k < pin.npinned_vertex; k++) {
      const int m = snprintf(list + at, sizeof list - at, "%s%d", k ? ", " : "", pin.pinned_vertex[k]);
      if (m < 0 || (size_t)m >= sizeof list - at) break;
      at += (size_t)m;
    }
    const int more = pin.npinned_vertex == (int)(sizeof pin.pinned_vertex / sizeof pin.pinned_vertex[0]);
    world_message(w, LOOM_WARNING, pfirst,
                  "collisions: %d cloth triangles lie across rigid bodies at t = %.4f s, held there by pins (first: "
                  "%s '%s' triangle %d in %s '%s', pinned vertices %s%s within its contact margin): pins ignore "
                  "contacts, so nothing takes these out; move the pins out of the body (stats.obstacle_crossings "
                  "counts them; further cases in the next second are counted only)",
                  pinned, w->time, c->ops->name, c->name, pin.pinned_tri, r->ops->name, r->name, list,
                  more ? ", ..." : "");
  }
}

/* A body the divergence guard stops goes back to where its step began, while the others moved on
 * (it left the collision pipeline in the substep it diverged in, and frozen it stays out): what
 * now crosses it is said in the step that stops it — the crossings (over a thousand pairs with
 * a kinematic ball at 100 m/s through a pinned net and a patch at 200 m/s onto it) had ended the
 * step with tangled and unresolved 0 and nothing said. The pairs with at least one side stopped
 * in this step (`stopped`, per body in order) are counted. */
typedef struct stopped_ctx {
  const unsigned char *stopped_slot; /* per slot listed: 1 stopped in this step */
  const int *slots;
  int nslots, count, sa, ta, sb, tb;
} stopped_ctx;

static int listed_stopped(const stopped_ctx *c, int slot) {
  for (int k = 0; k < c->nslots; k++)
    if (c->slots[k] == slot) return c->stopped_slot[k];
  return 0;
}

static void stopped_cb(int slot_a, int ta, int slot_b, int tb, void *ud) {
  stopped_ctx *c = ud;
  if (!listed_stopped(c, slot_a) && !listed_stopped(c, slot_b)) return;
  if (c->count++ == 0) c->sa = slot_a, c->ta = ta, c->sb = slot_b, c->tb = tb;
}

static void stopped_crossings(loom_world *w, const unsigned char *stopped) {
  int slots[64], nslots = 0, any = 0;
  unsigned char self[64], mine[64];
  for (int o = 0; o < w->order_count && nslots < 64; o++) {
    const particles *p = w->bodies[w->order[o]].pts;
    if (!p || p->nt <= 0 || (p->frozen && !stopped[o])) continue;
    slots[nslots] = w->order[o];
    self[nslots] = (unsigned char)(p->self_collision != 0);
    mine[nslots] = stopped[o];
    any |= stopped[o];
    nslots++;
  }
  if (!any) return;
  stopped_ctx c = {mine, slots, nslots, 0, -1, -1, -1, -1};
  if (contact_soft_crossings_now(w, slots, self, nslots, stopped_cb, &c) <= 0 || c.count == 0) return;
  const int first = listed_stopped(&c, c.sa) ? c.sa : c.sb;
  const body_slot *F = &w->bodies[first], *A = &w->bodies[c.sa], *B = &w->bodies[c.sb];
  world_message(w, LOOM_WARNING, first,
                "collisions: %d triangle pairs cross %s '%s' at t = %.4f s, which the divergence guard stopped where "
                "the step began while the bodies round it moved on (first: %s '%s' triangle %d and %s '%s' triangle "
                "%d); a frozen body is out of the collision pipeline, so nothing takes them out "
                "(world:interpenetrations(true) lists them)",
                c.count, F->ops->name, F->name, w->time, A->ops->name, A->name, c.ta, B->ops->name, B->name, c.tb);
}

void phase_commit(loom_world *w, const step_info *s) {
  /* the bodies the divergence guard stops in this step (stopped_crossings) */
  unsigned char *stopped = ARENA_NEW(&w->scratch, unsigned char, (size_t)w->order_count + 1, "stopped bodies");
  for (int o = 0; o < w->order_count && stopped; o++) {
    const particles *p = w->bodies[w->order[o]].pts;
    stopped[o] = (unsigned char)(p && !p->frozen);
  }
  for (int o = 0; o < w->order_count; o++) {
    body_slot *b = &w->bodies[w->order[o]];
    if (b->ops->commit) b->ops->commit(w, b, s);
  }
  for (int o = 0; o < w->order_count && stopped; o++) {
    const particles *p = w->bodies[w->order[o]].pts;
    stopped[o] = (unsigned char)(stopped[o] && p->frozen);
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
  if (stopped && frozen > 0) stopped_crossings(w, stopped);
  w->pairs = NULL;
  w->npairs = 0;
}
