/* contact_buffer.c — the world's contact buffer: one record per contact (public, read by Lua as
 * world:contacts()) and the solver's working data beside it. */
#include <string.h>

#include "world/world.h"

int contacts_reserve(loom_world *w, int cap) {
  contact_buffer *c = &w->contacts;
  if (c->cap >= cap) return 0;
  loom_contact *items = core_realloc(c->items, (size_t)cap, sizeof(loom_contact));
  if (!items) return -1;
  c->items = items;
  contact_work *wk = core_realloc(c->work, (size_t)cap, sizeof(contact_work));
  if (!wk) return -1;
  c->work = wk;
  c->cap = cap;
  return 0;
}

loom_contact *contacts_push(loom_world *w, contact_work **work) {
  contact_buffer *c = &w->contacts;
  if (c->count == c->cap && contacts_reserve(w, c->cap ? 2 * c->cap : 256) != 0) {
    c->dropped++;
    return NULL;
  }
  /* no clearing: every family fills every field of its records */
  loom_contact *k = &c->items[c->count];
  k->toi = -1;
  k->impulse = (vec3){0, 0, 0};
  if (work) *work = &c->work[c->count];
  c->count++;
  return k;
}

/* A 31-bit mix of the contact's identity (splitmix64 finaliser): stable from step to step. */
int contact_id(int body_a, int type_a, int feature_a, int body_b, int type_b, int feature_b) {
  uint64_t h = (uint64_t)(uint32_t)body_a * 0x9e3779b97f4a7c15ull;
  h ^= (uint64_t)(uint32_t)body_b + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
  h ^= ((uint64_t)(uint32_t)feature_a << 3 | (uint64_t)(uint32_t)type_a) + (h << 6) + (h >> 2);
  h ^= ((uint64_t)(uint32_t)feature_b << 3 | (uint64_t)(uint32_t)type_b) + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return (int)(h & 0x7fffffff);
}

LOOM_API const loom_contact *loom_world_contacts(const loom_world *w, int *count) {
  if (count) *count = w ? w->contacts.count : 0;
  return w ? w->contacts.items : NULL;
}

/* Ids are a function of the record's bodies and features, so they are computed once per step for
 * the contacts that remain visible (the last substep's), not for every substep. */
void contacts_finish(loom_world *w) {
  contact_buffer *c = &w->contacts;
  for (int i = 0; i < c->count; i++) {
    loom_contact *k = &c->items[i];
    k->id = contact_id(k->body_a, k->type_a, k->feature_a, k->body_b, k->type_b, k->feature_b);
  }
}
