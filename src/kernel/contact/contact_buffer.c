/* contact_buffer.c — the world's contact buffer: one record per contact (public, read by Lua as
 * world:contacts()) and the solver's working data beside it. */
#include <string.h>

#include "world/world.h"

loom_contact *contacts_push(loom_world *w, contact_work **work) {
  contact_buffer *c = &w->contacts;
  if (c->count == c->cap) {
    int cap = c->cap ? 2 * c->cap : 256;
    loom_contact *items = core_realloc(c->items, (size_t)cap, sizeof(loom_contact));
    if (!items) {
      c->dropped++;
      return NULL;
    }
    c->items = items;
    contact_work *wk = core_realloc(c->work, (size_t)cap, sizeof(contact_work));
    if (!wk) {
      c->dropped++;
      return NULL;
    }
    c->work = wk;
    c->cap = cap;
  }
  loom_contact *k = &c->items[c->count];
  memset(k, 0, sizeof *k);
  k->toi = -1;
  if (work) {
    *work = &c->work[c->count];
    memset(*work, 0, sizeof **work);
  }
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
