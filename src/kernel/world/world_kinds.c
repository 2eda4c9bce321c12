/* world_kinds.c — the registry of body kinds. Adding a kind means a folder with its operations
 * (a body_kind) and one line here; the tests plug in a test-only kind with world_register_kind. */
#include <string.h>

#include "world/world.h"

extern const body_kind cloth_kind, rigid_kind, solid_kind, simplex_kind;

#define MAX_KINDS 16
static const body_kind *kinds[MAX_KINDS] = {&cloth_kind, &rigid_kind, &solid_kind, &simplex_kind};
static int nkinds = 4;

const body_kind *world_kind(int id) {
  for (int i = 0; i < nkinds; i++)
    if (kinds[i]->id == id) return kinds[i];
  return NULL;
}

const body_kind *world_kind_named(const char *name) {
  for (int i = 0; name && i < nkinds; i++)
    if (!strcmp(kinds[i]->name, name)) return kinds[i];
  return NULL;
}

/* Not thread-safe: register kinds before worlds are stepped on other threads. */
int world_register_kind(const body_kind *k) {
  if (!k || !k->name || world_kind(k->id) || world_kind_named(k->name))
    return loom_fail("register_kind: missing or duplicate kind");
  if (nkinds == MAX_KINDS) return loom_fail("register_kind: too many kinds");
  kinds[nkinds++] = k;
  return 0;
}

LOOM_API const char *loom_kind_name(int kind) {
  const body_kind *k = world_kind(kind);
  return k ? k->name : NULL;
}

LOOM_API int loom_kind_param_count(int kind) {
  const body_kind *k = world_kind(kind);
  return k ? k->nparams : -1;
}

LOOM_API int loom_kind_param_info(int kind, int i, loom_param_info *out) {
  const body_kind *k = world_kind(kind);
  if (!k) return loom_fail("param_info: unknown kind %d", kind);
  if (i < 0 || i >= k->nparams) return loom_fail("param_info: %s has %d parameters, asked for %d", k->name, k->nparams, i);
  if (!out) return loom_fail("param_info: output is NULL");
  const param_spec *p = &k->params[i];
  out->name = p->name;
  out->unit = p->unit;
  out->doc = p->doc;
  out->min = p->min;
  out->max = p->max;
  out->flags = p->flags;
  return 0;
}
