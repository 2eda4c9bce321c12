/* libFuzzer target: the checkpoint loader (make fuzz). The input's frame (size and checksum) is
 * fixed up before loading, so the fuzzer reaches the parser behind the checksum; the first byte
 * chooses force. Each input is loaded into a world built like the seed's
 * (tests/fuzz/make_checkpoint_seed.lua): a 7 x 7 cloth pinned at one corner and a static sphere,
 * put back to its pristine checkpoint first. Loading must fail cleanly or leave a world that
 * steps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loom.h"

static loom_world *make_world(void) {
  loom_world *w = loom_world_create(NULL);
  loom_mesh *m = loom_mesh_grid(1, 1, 6, 6, NULL, LOOM_PLANE_XY);
  loom_cloth_def c;
  loom_cloth_def_default(&c, LOOM_MODEL_SPRINGS);
  c.name = "cloth";
  c.mesh = m;
  int h = loom_cloth_create(w, &c);
  loom_mesh_destroy(m);
  loom_rigid_def r;
  loom_rigid_def_default(&r);
  r.name = "ball";
  r.radius = 0.3;
  r.position.z = -0.5;
  loom_rigid_create(w, &r);
  int32_t v0 = 0;
  loom_pins_create(w, h, &v0, 1);
  return w;
}

static uint64_t fnv(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > (1u << 20)) return 0;
  int force = data[0] & 1;
  data++;
  size--;
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  if (size >= 24) {
    uint32_t total = (uint32_t)size;
    memcpy(buf + 12, &total, sizeof total);
    uint64_t sum = fnv(buf + 24, size - 24);
    memcpy(buf + 16, &sum, sizeof sum);
  }
  static loom_world *w;
  static uint8_t *pristine;
  static int pristine_size;
  if (!w) {
    w = make_world();
    pristine_size = loom_world_checkpoint_size(w, 0);
    pristine = malloc((size_t)pristine_size);
    if (!pristine || loom_world_checkpoint_write(w, NULL, 0, pristine, pristine_size) != pristine_size) abort();
  }
  if (loom_world_checkpoint_read(w, pristine, pristine_size, 0) != 0) abort();
  if (loom_world_checkpoint_read(w, buf, (int)size, force) == 0) {
    for (int s = 0; s < 3; s++) loom_world_step(w);
  }
  free(buf);
  return 0;
}
