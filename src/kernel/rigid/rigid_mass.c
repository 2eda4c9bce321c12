/* rigid_mass.c — mass properties of rigid shapes and the convex polytopes of the narrow phase.
 *
 * Analytic shapes use the closed forms (sphere 2/5 m r^2; box m/12 (b^2 + c^2); cylinder along z
 * m (3 r^2 + l^2)/12 across, m r^2/2 along; capsule: the cylinder plus two hemispheres shifted by
 * the parallel-axis theorem). A closed triangle mesh is integrated exactly: the solid is the
 * signed sum of the tetrahedra (0, a, b, c) over its outward triangles, each with volume
 * det[a b c]/6, first moment volume (a + b + c)/4 and second moment
 * det/120 (a a^T + b b^T + c c^T + s s^T), s = a + b + c — the same integrals as Mirtich (1996),
 * by the divergence theorem on tetrahedra instead of projections. */
#include <string.h>

#include "rigid/rigid.h"

static mat3 diag3(double a, double b, double c) {
  mat3 m = {{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
  return m;
}

/* The second-moment matrix C = integral of x x^T dV (shape frame, density 1) of a closed mesh,
 * its volume and first moment. */
static int mesh_moments(const loom_mesh *m, double *vol, vec3 *first, mat3 *C) {
  *vol = 0;
  *first = v3(0, 0, 0);
  memset(C, 0, sizeof *C);
  for (int t = 0; t < m->nt; t++) {
    vec3 a = m->v[m->tri[3 * t]], b = m->v[m->tri[3 * t + 1]], c = m->v[m->tri[3 * t + 2]];
    double det = v3_dot(a, v3_cross(b, c));
    vec3 s = v3_add(a, v3_add(b, c));
    *vol += det / 6;
    *first = v3_madd(*first, s, det / 24);
    const vec3 p[4] = {a, b, c, s};
    for (int k = 0; k < 4; k++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) C->m[i][j] += det / 120 * v3_comp(p[k], i) * v3_comp(p[k], j);
  }
  return 0;
}

int rigid_mass_properties(int shape_type, const geom_shape *s, const loom_mesh *mesh, double rho, double *mass, vec3 *com,
                          mat3 *inertia) {
  if (!(rho > 0) || !isfinite(rho)) return loom_fail("mass properties: density must be positive, got %g", rho);
  *com = v3(0, 0, 0);
  double m, r = s ? s->radius : 0, hh = s ? s->half_h : 0;
  switch (shape_type) {
  case LOOM_SHAPE_SPHERE:
    m = rho * 4.0 / 3.0 * LOOM_PI * r * r * r;
    *inertia = diag3(0.4 * m * r * r, 0.4 * m * r * r, 0.4 * m * r * r);
    break;
  case LOOM_SHAPE_BOX: {
    vec3 e = v3_scale(s->half, 2);
    m = rho * e.x * e.y * e.z;
    *inertia = diag3(m / 12 * (e.y * e.y + e.z * e.z), m / 12 * (e.x * e.x + e.z * e.z), m / 12 * (e.x * e.x + e.y * e.y));
    break;
  }
  case LOOM_SHAPE_CYLINDER: {
    double l = 2 * hh;
    m = rho * LOOM_PI * r * r * l;
    double across = m * (3 * r * r + l * l) / 12;
    *inertia = diag3(across, across, 0.5 * m * r * r);
    break;
  }
  case LOOM_SHAPE_CAPSULE: {
    double l = 2 * hh;
    double mc = rho * LOOM_PI * r * r * l, ms = rho * 4.0 / 3.0 * LOOM_PI * r * r * r; /* cylinder, both caps */
    m = mc + ms;
    /* a hemisphere's centroid is 3r/8 from its flat face; about its own centroid its transverse
     * moment is (83/320) m r^2; shifted to the capsule centre by hh + 3r/8 */
    double d = hh + 3.0 * r / 8.0;
    double across = mc * (3 * r * r + l * l) / 12 + ms * (83.0 / 320.0 * r * r + d * d);
    *inertia = diag3(across, across, 0.5 * mc * r * r + 0.4 * ms * r * r);
    break;
  }
  case LOOM_SHAPE_MESH: {
    if (!mesh || mesh->nt < 4) return loom_fail("mass properties: a solid mesh needs at least 4 triangles");
    int32_t ea, eb;
    const int open = mesh_open_edge(mesh, &ea, &eb);
    if (open < 0) return loom_fail("mass properties: out of memory");
    if (open)
      return loom_fail("mass properties: the mesh is open (an edge is not shared by exactly two triangles in opposite "
                       "directions); a density needs a closed surface");
    double vol;
    vec3 first;
    mat3 C;
    mesh_moments(mesh, &vol, &first, &C);
    if (!(fabs(vol) > 0) || !isfinite(vol)) return loom_fail("mass properties: the mesh encloses no volume");
    if (vol < 0) return loom_fail("mass properties: the mesh is inside out (its triangles face inwards)");
    m = rho * vol;
    vec3 c = v3_scale(first, 1.0 / vol);
    *com = c;
    /* about the centre of mass: C_c = C - V c c^T; I = tr(C) 1 - C, times the density */
    double cc[3] = {c.x, c.y, c.z};
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) C.m[i][j] -= vol * cc[i] * cc[j];
    double tr = C.m[0][0] + C.m[1][1] + C.m[2][2];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) inertia->m[i][j] = rho * ((i == j ? tr : 0) - C.m[i][j]);
    break;
  }
  default: return loom_fail("mass properties: unknown shape %d", shape_type);
  }
  *mass = m;
  return 0;
}

LOOM_API int loom_mesh_mass_properties(const loom_mesh *mesh, double density, double *mass, loom_vec3 *com,
                                       double inertia[9]) {
  if (!mesh) return loom_fail("mass_properties: mesh is NULL");
  double m;
  vec3 c;
  mat3 I;
  if (rigid_mass_properties(LOOM_SHAPE_MESH, NULL, mesh, density, &m, &c, &I) != 0) return -1;
  if (mass) *mass = m;
  if (com) *com = c;
  if (inertia)
    for (int i = 0; i < 9; i++) inertia[i] = I.m[i / 3][i % 3];
  return 0;
}

/* ---- polytopes ------------------------------------------------------------------------------- */

void rigid_poly_free(rigid_poly *p) {
  if (!p) return;
  core_free(p->edge_v);
  core_free(p->edge_f);
  core_free(p->v);
  core_free(p->face_first);
  core_free(p->face_count);
  core_free(p->face_v);
  core_free(p->face_n);
  core_free(p->face_d);
  core_free(p->dir);
  core_free(p);
}

static rigid_poly *poly_alloc(int nv, int nf, int nfv, int ndir) {
  rigid_poly *p = core_calloc(1, sizeof *p);
  if (!p) return NULL;
  p->nv = nv;
  p->nf = nf;
  p->ndir = ndir;
  p->v = core_alloc((size_t)nv, sizeof(vec3));
  p->face_first = core_alloc((size_t)nf, sizeof(int32_t));
  p->face_count = core_alloc((size_t)nf, sizeof(int32_t));
  p->face_v = core_alloc((size_t)nfv, sizeof(int32_t));
  p->face_n = core_alloc((size_t)nf, sizeof(vec3));
  p->face_d = core_alloc((size_t)nf, sizeof(double));
  p->dir = core_alloc((size_t)ndir, sizeof(vec3));
  if (!p->v || !p->face_first || !p->face_count || !p->face_v || !p->face_n || !p->face_d || !p->dir) {
    rigid_poly_free(p);
    return NULL;
  }
  return p;
}

/* Face planes from the loops (Newell's normal: exact for planar loops, robust for any order), and
 * the bounding radius. */
static void poly_planes(rigid_poly *p) {
  p->radius = 0;
  for (int i = 0; i < p->nv; i++) p->radius = d_max(p->radius, v3_len(p->v[i]));
  for (int f = 0; f < p->nf; f++) {
    vec3 n = v3(0, 0, 0), c = v3(0, 0, 0);
    const int32_t *l = p->face_v + p->face_first[f];
    const int k = p->face_count[f];
    for (int i = 0; i < k; i++) {
      vec3 a = p->v[l[i]], b = p->v[l[(i + 1) % k]];
      n.x += (a.y - b.y) * (a.z + b.z);
      n.y += (a.z - b.z) * (a.x + b.x);
      n.z += (a.x - b.x) * (a.y + b.y);
      c = v3_add(c, a);
    }
    p->face_n[f] = v3_normalize(n);
    p->face_d[f] = v3_dot(p->face_n[f], v3_scale(c, 1.0 / k));
  }
}

rigid_poly *rigid_poly_box(vec3 h) {
  rigid_poly *p = poly_alloc(8, 6, 24, 3);
  if (!p) return NULL;
  for (int i = 0; i < 8; i++) p->v[i] = v3(i & 1 ? h.x : -h.x, i & 2 ? h.y : -h.y, i & 4 ? h.z : -h.z);
  /* loops counter-clockwise seen from outside: -x, +x, -y, +y, -z, +z */
  static const int32_t loops[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
  for (int f = 0; f < 6; f++) {
    p->face_first[f] = 4 * f;
    p->face_count[f] = 4;
    for (int k = 0; k < 4; k++) p->face_v[4 * f + k] = loops[f][k];
  }
  poly_planes(p);
  p->dir[0] = v3(1, 0, 0);
  p->dir[1] = v3(0, 1, 0);
  p->dir[2] = v3(0, 0, 1);
  return p;
}

rigid_poly *rigid_poly_prism(double r, double hh, int sides) {
  if (sides < 3 || sides > RIGID_POLY_MAX_FACE) return NULL;
  rigid_poly *p = poly_alloc(2 * sides, sides + 2, 4 * sides + 2 * sides, sides + 1);
  if (!p) return NULL;
  /* the circumscribed prism would poke out; the vertices lie on the cylinder (a 24-gon is within
   * 0.86 % of the radius on its flats) */
  for (int i = 0; i < sides; i++) {
    double a = 2 * LOOM_PI * i / sides;
    p->v[i] = v3(r * cos(a), r * sin(a), -hh);
    p->v[sides + i] = v3(r * cos(a), r * sin(a), hh);
  }
  int at = 0;
  for (int i = 0; i < sides; i++) {
    int j = (i + 1) % sides;
    p->face_first[i] = at;
    p->face_count[i] = 4;
    p->face_v[at++] = i;
    p->face_v[at++] = j;
    p->face_v[at++] = sides + j;
    p->face_v[at++] = sides + i;
    vec3 e = v3_sub(p->v[j], p->v[i]);
    p->dir[i] = v3_normalize(e);
  }
  p->dir[sides] = v3(0, 0, 1);
  p->face_first[sides] = at; /* bottom: clockwise seen from above */
  p->face_count[sides] = sides;
  for (int i = 0; i < sides; i++) p->face_v[at++] = sides - 1 - i;
  p->face_first[sides + 1] = at;
  p->face_count[sides + 1] = sides;
  for (int i = 0; i < sides; i++) p->face_v[at++] = sides + i;
  poly_planes(p);
  /* an even prism has parallel side edges in pairs: keep one direction of each */
  int nd = 0;
  for (int i = 0; i <= sides; i++) {
    int dup = 0;
    for (int k = 0; k < nd && !dup; k++) dup = v3_len2(v3_cross(p->dir[k], p->dir[i])) < 1e-20;
    if (!dup) p->dir[nd++] = p->dir[i];
  }
  p->ndir = nd;
  /* the edges with their two faces: vertical edge i between side faces i - 1 and i, the bottom and
   * top edges of side face i with the caps */
  p->ne = 3 * sides;
  p->edge_v = core_alloc((size_t)2 * p->ne, sizeof(int32_t));
  p->edge_f = core_alloc((size_t)2 * p->ne, sizeof(int32_t));
  if (!p->edge_v || !p->edge_f) {
    rigid_poly_free(p);
    return NULL;
  }
  for (int i = 0; i < sides; i++) {
    const int j = (i + 1) % sides, e = 3 * i;
    const int32_t ev[6] = {i, sides + i, i, j, sides + i, sides + j};
    const int32_t ef[6] = {(i + sides - 1) % sides, i, i, sides, i, sides + 1};
    memcpy(p->edge_v + 2 * e, ev, sizeof ev);
    memcpy(p->edge_f + 2 * e, ef, sizeof ef);
  }
  return p;
}

/* ---- hulls ------------------------------------------------------------------------------------ */

rigid_poly *rigid_poly_hull(const loom_mesh *m) {
  if (m->nv > RIGID_POLY_MAX_VERTS)
    return loom_fail("convex shape: the hull has %d vertices (at most %d); simplify the mesh", m->nv, RIGID_POLY_MAX_VERTS), NULL;
  /* triangles grouped by plane (same unit normal and offset within 1e-9 of the size) */
  vec3 lo, hi;
  loom_mesh_aabb(m, &lo, &hi);
  const double tol = 1e-9 * (v3_len(v3_sub(hi, lo)) + 1e-300);
  int32_t *group = core_alloc((size_t)m->nt, sizeof(int32_t));
  vec3 *tn = core_alloc((size_t)m->nt, sizeof(vec3));
  if (!group || !tn) {
    core_free(group);
    core_free(tn);
    return loom_fail("convex shape: out of memory"), NULL;
  }
  int nf = 0;
  for (int t = 0; t < m->nt; t++) {
    vec3 a = m->v[m->tri[3 * t]], b = m->v[m->tri[3 * t + 1]], c = m->v[m->tri[3 * t + 2]];
    tn[t] = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(c, a)));
    group[t] = -1;
    for (int u = 0; u < t && group[t] < 0; u++)
      if (v3_dot(tn[u], tn[t]) > 1 - 1e-9 && fabs(v3_dot(tn[u], v3_sub(a, m->v[m->tri[3 * u]]))) < tol) group[t] = group[u];
    if (group[t] < 0) group[t] = nf++;
  }
  if (nf > RIGID_POLY_MAX_FACES) {
    core_free(group);
    core_free(tn);
    return loom_fail("convex shape: the hull has %d faces (at most %d); simplify the mesh", nf, RIGID_POLY_MAX_FACES), NULL;
  }
  /* each face's vertices, ordered counter-clockwise around its normal */
  rigid_poly *result = NULL;
  int *fv = core_alloc((size_t)nf * RIGID_POLY_MAX_VERTS, sizeof(int));
  int *fc = core_calloc((size_t)nf, sizeof(int));
  vec3 *fn = core_alloc((size_t)nf, sizeof(vec3));
  uint8_t *mark = core_alloc((size_t)m->nv, 1);
  if (!fv || !fc || !fn || !mark) goto oom;
  int total = 0;
  for (int f = 0; f < nf; f++) {
    memset(mark, 0, (size_t)m->nv);
    for (int t = 0; t < m->nt; t++)
      if (group[t] == f) {
        fn[f] = tn[t];
        for (int k = 0; k < 3; k++) mark[m->tri[3 * t + k]] = 1;
      }
    vec3 c = v3(0, 0, 0);
    for (int i = 0; i < m->nv; i++)
      if (mark[i]) fv[f * RIGID_POLY_MAX_VERTS + fc[f]++] = i, c = v3_add(c, m->v[i]);
    c = v3_scale(c, 1.0 / fc[f]);
    vec3 u = v3_normalize(v3_sub(m->v[fv[f * RIGID_POLY_MAX_VERTS]], c)), w = v3_cross(fn[f], u);
    int *l = fv + f * RIGID_POLY_MAX_VERTS;
    for (int i = 1; i < fc[f]; i++) /* insertion sort by angle: faces are small */
      for (int j = i; j > 0; j--) {
        vec3 pa = v3_sub(m->v[l[j - 1]], c), pb = v3_sub(m->v[l[j]], c);
        if (atan2(v3_dot(pa, w), v3_dot(pa, u)) <= atan2(v3_dot(pb, w), v3_dot(pb, u))) break;
        int t = l[j];
        l[j] = l[j - 1];
        l[j - 1] = t;
      }
    total += fc[f];
  }
  /* edges: each face's loop edges, once (with the face on each side) */
  int ne = total / 2;
  if (ne > RIGID_POLY_MAX_EDGES) {
    loom_fail("convex shape: the hull has %d edges (at most %d); simplify the mesh", ne, RIGID_POLY_MAX_EDGES);
    goto done;
  }
  rigid_poly *p = poly_alloc(m->nv, nf, total, ne + 1);
  if (!p) goto oom;
  p->edge_v = core_alloc((size_t)2 * ne, sizeof(int32_t));
  p->edge_f = core_alloc((size_t)2 * ne, sizeof(int32_t));
  if (!p->edge_v || !p->edge_f) {
    rigid_poly_free(p);
    goto oom;
  }
  memcpy(p->v, m->v, sizeof(vec3) * (size_t)m->nv);
  int at = 0;
  for (int f = 0; f < nf; f++) {
    p->face_first[f] = at;
    p->face_count[f] = fc[f];
    for (int i = 0; i < fc[f]; i++) p->face_v[at++] = fv[f * RIGID_POLY_MAX_VERTS + i];
  }
  poly_planes(p);
  int e = 0;
  for (int f = 0; f < nf; f++) {
    const int32_t *l = p->face_v + p->face_first[f];
    for (int i = 0; i < fc[f]; i++) {
      int a = l[i], b = l[(i + 1) % fc[f]];
      if (a > b) continue; /* the twin (b, a) in the neighbouring face records it */
      int other = -1;
      for (int g = 0; g < nf && other < 0; g++) {
        if (g == f) continue;
        const int32_t *lg = p->face_v + p->face_first[g];
        for (int k = 0; k < fc[g]; k++)
          if (lg[k] == b && lg[(k + 1) % fc[g]] == a) other = g;
      }
      if (other < 0 || e == ne) continue;
      p->edge_v[2 * e] = a;
      p->edge_v[2 * e + 1] = b;
      p->edge_f[2 * e] = f;
      p->edge_f[2 * e + 1] = other;
      e++;
    }
  }
  p->ne = e;
  /* distinct edge directions (the box and prism tests use them when there are few) */
  int nd = 0;
  for (int k = 0; k < e && nd < ne + 1; k++) {
    vec3 d = v3_normalize(v3_sub(p->v[p->edge_v[2 * k + 1]], p->v[p->edge_v[2 * k]]));
    int dup = 0;
    for (int j = 0; j < nd && !dup; j++) dup = v3_len2(v3_cross(p->dir[j], d)) < 1e-18;
    if (!dup) p->dir[nd++] = d;
  }
  p->ndir = nd;
  p->hull = 1;
  result = p;
  goto done;
oom:
  loom_fail("convex shape: out of memory");
done:
  core_free(group);
  core_free(tn);
  core_free(fv);
  core_free(fc);
  core_free(fn);
  core_free(mark);
  return result;
}
