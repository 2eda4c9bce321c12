/* fuzz_mesh.h — the body of the OBJ and STL fuzz targets: the input goes to the loaders' parser
 * in memory (mesh_load_memory, what loom_mesh_load runs after reading the file), and a mesh that
 * loads must be sound:
 * counts consistent, indices in range, coordinates finite. Any crash, sanitizer report or leak
 * is a finding. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "loom.h"
#include "mesh/mesh.h"

static void check_mesh(const loom_mesh *m) {
  int nv = loom_mesh_vertex_count(m), nt = loom_mesh_triangle_count(m);
  if (nv < 0 || nt < 0) abort();
  const loom_vec3 *v = loom_mesh_vertices(m);
  const int32_t *t = loom_mesh_triangles(m);
  for (int i = 0; i < nv; i++)
    if (!isfinite(v[i].x) || !isfinite(v[i].y) || !isfinite(v[i].z)) abort();
  for (int i = 0; i < 3 * nt; i++)
    if (t[i] < 0 || t[i] >= nv) abort();
  int ne = loom_mesh_edge_count(m);
  const int32_t *e = loom_mesh_edges(m);
  for (int i = 0; i < 2 * ne; i++)
    if (e[i] < 0 || e[i] >= nv) abort();
}

static int fuzz_mesh_file(const uint8_t *data, size_t size, const char *ext) {
  loom_mesh *m = mesh_load_memory(ext, data, size);
  if (m) {
    check_mesh(m);
    loom_mesh_destroy(m);
  }
  return 0;
}
