/* world_params.c — body:set and body:get for every kind, from the kind's parameter table. */
#include <stdio.h>
#include <string.h>

#include "world/world.h"

static const param_spec *find_param(const body_kind *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, name)) return &k->params[i];
  return NULL;
}

/* "unknown parameter 'strech' (live ones: stretch, shear, ...)" */
static int unknown(const body_slot *b, const char *name, int live_only) {
  char list[512];
  size_t at = 0;
  list[0] = 0;
  for (int i = 0; i < b->ops->nparams; i++) {
    const param_spec *p = &b->ops->params[i];
    if (live_only && !(p->flags & PARAM_LIVE)) continue;
    int n = snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", p->name);
    if (n < 0 || (size_t)n >= sizeof list - at) break;
    at += (size_t)n;
  }
  return loom_fail("%s '%s': unknown parameter '%s' (%s)", b->ops->name, b->name, name, list);
}

static double read_value(const body_slot *b, const param_spec *p) {
  const char *base = b->data;
  if (p->flags & PARAM_INTEGER) {
    int v;
    memcpy(&v, base + p->offset, sizeof v);
    return v;
  }
  double v;
  memcpy(&v, base + p->offset, sizeof v);
  return v;
}

LOOM_API int loom_body_set_param(loom_world *w, int handle, const char *name, double value) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "set_param");
  if (slot < 0) return -1;
  body_slot *b = &w->bodies[slot];
  if (!name) return loom_fail("set_param: parameter name is NULL");
  const param_spec *p = find_param(b->ops, name);
  if (!p || !(p->flags & PARAM_LIVE)) {
    if (p) return loom_fail("%s '%s': '%s' is read only", b->ops->name, b->name, name);
    return unknown(b, name, 1);
  }
  const int integer = (p->flags & PARAM_INTEGER) != 0;
  /* the kind's own check first: it knows limits that depend on the model (and says them better) */
  if (b->ops->check_param && b->ops->check_param(b, p, value) != 0) return -1;
  if (!isfinite(value) || value < p->min || value > p->max || ((p->flags & PARAM_MIN_OPEN) && value == p->min) ||
      (integer && value != floor(value)))
    return loom_fail("%s '%s': '%s' must be %s in [%g, %g]%s%s, got %g", b->ops->name, b->name, name,
                     integer ? "an integer" : "a number", p->min, p->max, p->unit[0] ? " " : "", p->unit, value);
  char *base = b->data;
  if (integer) {
    int v = (int)value, old;
    memcpy(&old, base + p->offset, sizeof old);
    if (old == v) return 0; /* (as for doubles: nothing changed, nothing to redo or wake) */
    memcpy(base + p->offset, &v, sizeof v);
  } else {
    if (read_value(b, p) == value) return 0;
    memcpy(base + p->offset, &value, sizeof value);
  }
  /* self-collision turned on finds the crossings the body already has: the pipeline keeps a
   * crossing-free start free and looks for existing crossings only when told (check_tangles); not
   * told, it held a crumpled cloth's hundreds of crossings where they were, unreported */
  if (b->pts && !strcmp(p->name, "self_collision") && value != 0) b->pts->col.check_tangles = 1;
  if (b->ops->param_changed) b->ops->param_changed(w, b, p);
  return world_reserve_scratch(w);
}

LOOM_API int loom_body_get_param(const loom_world *w, int handle, const char *name, double *out) {
  int slot = world_slot(w, handle, LOOM_KIND_NONE, "get_param");
  if (slot < 0) return -1;
  const body_slot *b = &w->bodies[slot];
  if (!name || !out) return loom_fail("get_param: NULL argument");
  const param_spec *p = find_param(b->ops, name);
  if (!p) return unknown(b, name, 0);
  double v = read_value(b, p);
  *out = b->ops->param_value ? b->ops->param_value(b, p, v) : v;
  return 0;
}
