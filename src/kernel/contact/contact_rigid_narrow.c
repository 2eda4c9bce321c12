/* contact_rigid_narrow.c — the narrow phase between two rigid bodies: manifolds of up to four
 * points with one normal each, pointing from body B towards body A (A is pushed along it); one
 * manifold per pair, several against a triangle mesh.
 *
 *   sphere – shape      the centre's signed distance to the other shape (exact for sphere, box,
 *                       capsule, cylinder and hull)
 *   capsule – shape     both end spheres, and the segment point nearest the other shape (the signed
 *                       distance of a convex shape is convex along the segment: ternary search)
 *   polytope – polytope boxes, cylinders (24-sided prisms) and convex hulls: separating axes over
 *                       the face normals of both and the cross products of their edge directions
 *                       (two hulls: only edge pairs that meet on the Gauss map, Gregorius 2013); a face
 *                       axis gives the incident face clipped by the reference face's side planes
 *                       (Sutherland–Hodgman), reduced to 4 points; an edge axis the closest points
 *                       of the two edges
 *   polytope – mesh     each triangle near it as a flat polytope (poly_pair), normals the mesh's
 *                       surface cannot have replaced by the triangle's face (inner edges, gentle
 *                       folds); the triangles' manifolds gathered by normal
 *   sphere, capsule – mesh  per triangle, the points nearest the axis, edge and corner points only
 *                       where the surface has them nearest; gathered the same way
 *
 * Points are made within `margin` of touching (speculative contacts); each carries the separation
 * (negative: overlap) and a feature id that stays the same while the same features touch. */
#include <string.h>

#include "contact/contact_rigid.h"
#include "math/math_lanes.h"

int rigid_narrow_reference = 0;

typedef struct posed {
  const rigid_body *r;
  vec3 p;
  quat q;
  mat3 R;
} posed;

static void add_point(rigid_manifold *m, vec3 p, double sep, uint32_t id) {
  if (m->count >= RIGID_MANIFOLD_MAX) return;
  m->pt[m->count].p = p;
  m->pt[m->count].sep = sep;
  m->pt[m->count].id = id;
  m->count++;
}

/* Signed distance from world point x to B's surface and B's outward normal there (world). */
static double shape_distance(const posed *B, vec3 x, vec3 *n) {
  vec3 l = m3_tmulv(&B->R, v3_sub(x, B->p)), nl;
  double d = rigid_local_distance(B->r, l, &nl);
  *n = m3_mulv(&B->R, nl);
  return d;
}

/* A sphere of radius ra at c against B. */
static void sphere_vs(rigid_manifold *m, vec3 c, double ra, const posed *B, double margin, uint32_t id) {
  vec3 n;
  double d = shape_distance(B, c, &n);
  double sep = d - ra;
  if (!(sep <= margin)) return;
  if (m->count == 0) m->n = n;
  add_point(m, v3_madd(c, n, -(ra + 0.5 * sep)), sep, id);
}

static void capsule_vs(rigid_manifold *m, const posed *A, const posed *B, double margin) {
  const double r = A->r->model.shape.radius, hh = A->r->model.shape.half_h;
  vec3 axis = v3(A->R.m[0][2], A->R.m[1][2], A->R.m[2][2]);
  vec3 e0 = v3_madd(A->p, axis, -hh), e1 = v3_madd(A->p, axis, hh);
  /* the nearest point of the segment (ternary search on a convex function) */
  double lo = 0, hi = 1;
  vec3 n;
  for (int it = 0; it < 40; it++) {
    double t1 = lo + (hi - lo) / 3, t2 = hi - (hi - lo) / 3;
    double d1 = shape_distance(B, v3_lerp(e0, e1, t1), &n), d2 = shape_distance(B, v3_lerp(e0, e1, t2), &n);
    if (d1 < d2) hi = t2;
    else lo = t1;
  }
  double tm = 0.5 * (lo + hi);
  vec3 nm;
  double dm = shape_distance(B, v3_lerp(e0, e1, tm), &nm);
  /* the manifold's normal is the deepest point's; end spheres use it too */
  vec3 n0, n1;
  double d0 = shape_distance(B, e0, &n0), d1 = shape_distance(B, e1, &n1);
  m->count = 0;
  vec3 nn = dm < d0 && dm < d1 ? nm : (d0 <= d1 ? n0 : n1);
  m->n = nn;
  const double ends[2] = {d0, d1};
  const vec3 ep[2] = {e0, e1};
  for (int k = 0; k < 2; k++)
    if (ends[k] - r <= margin) add_point(m, v3_madd(ep[k], nn, -(r + 0.5 * (ends[k] - r))), ends[k] - r, (uint32_t)k);
  if (tm > 0.02 && tm < 0.98 && dm - r <= margin && dm < d0 - 1e-9 && dm < d1 - 1e-9)
    add_point(m, v3_madd(v3_lerp(e0, e1, tm), nn, -(r + 0.5 * (dm - r))), dm - r, 2);
}

/* ---- polytopes -------------------------------------------------------------------------------- */

typedef struct wpoly {
  const rigid_poly *g;
  vec3 v[RIGID_POLY_MAX_VERTS];
  vec3 fn[RIGID_POLY_MAX_FACES];
  double fd[RIGID_POLY_MAX_FACES];
  vec3 dir[RIGID_POLY_MAX_EDGES + 1];
  vec3 centre;
} wpoly;

static void place_poly(wpoly *w, const posed *P) {
  const rigid_poly *g = P->r->model.poly;
  w->g = g;
  for (int i = 0; i < g->nv; i++) w->v[i] = v3_add(P->p, m3_mulv(&P->R, g->v[i]));
  for (int f = 0; f < g->nf; f++) {
    w->fn[f] = m3_mulv(&P->R, g->face_n[f]);
    w->fd[f] = g->face_d[f] + v3_dot(w->fn[f], P->p);
  }
  for (int k = 0; k < g->ndir; k++) w->dir[k] = m3_mulv(&P->R, g->dir[k]);
}

static void extent(const wpoly *w, vec3 axis, double *lo, double *hi) {
  double a = INFINITY, b = -INFINITY;
  for (int i = 0; i < w->g->nv; i++) {
    double d = v3_dot(w->v[i], axis);
    a = d < a ? d : a;
    b = d > b ? d : b;
  }
  *lo = a;
  *hi = b;
}

/* Largest separation of B's vertices from A's face planes: the face and the value. */
static double face_axes(const wpoly *A, const wpoly *B, int *face) {
  double best = -INFINITY;
  *face = 0;
  for (int f = 0; f < A->g->nf; f++) {
    double lo, hi;
    extent(B, A->fn[f], &lo, &hi);
    double s = lo - A->fd[f];
    if (s > best) best = s, *face = f;
  }
  return best;
}

/* The face of P most anti-parallel to n. */
static int incident_face(const wpoly *P, vec3 n) {
  int best = 0;
  double bd = INFINITY;
  for (int f = 0; f < P->g->nf; f++) {
    double d = v3_dot(P->fn[f], n);
    if (d < bd) bd = d, best = f;
  }
  return best;
}

typedef struct cvert {
  vec3 p;
  uint32_t id;
  int32_t tri; /* against a mesh: the triangle the point touches */
} cvert;

#define CLIP_MAX (2 * RIGID_POLY_MAX_VERTS + 8)

/* Keeps the part of polygon in (n_in points) where dot(p, s) <= d. */
static int clip(const cvert *in, int n_in, vec3 s, double d, cvert *out, uint32_t plane) {
  int n = 0;
  for (int i = 0; i < n_in && n < CLIP_MAX - 1; i++) {
    const cvert *a = &in[i], *b = &in[(i + 1) % n_in];
    double da = v3_dot(a->p, s) - d, db = v3_dot(b->p, s) - d;
    if (da <= 0) out[n++] = *a;
    if ((da < 0 && db > 0) || (da > 0 && db < 0)) {
      double t = da / (da - db);
      out[n].p = v3_lerp(a->p, b->p, t);
      out[n].id = 0x100u | (plane << 1) | (da > 0);
      n++;
    }
  }
  return n;
}

/* Up to four of the points: the deepest, the farthest from it, then the largest triangles on
 * either side of their line (the support polygon survives). */
static int reduce(cvert *p, double *sep, int n, vec3 nrm) {
  if (n <= RIGID_MANIFOLD_MAX) return n;
  int pick[4];
  pick[0] = 0;
  for (int i = 1; i < n; i++)
    if (sep[i] < sep[pick[0]]) pick[0] = i;
  pick[1] = pick[0] == 0 ? 1 : 0;
  double best = -1;
  for (int i = 0; i < n; i++) {
    double d = v3_dist2(p[i].p, p[pick[0]].p);
    if (d > best) best = d, pick[1] = i;
  }
  double amax = -INFINITY, amin = INFINITY;
  pick[2] = pick[3] = -1;
  vec3 a = p[pick[0]].p, b = p[pick[1]].p;
  for (int i = 0; i < n; i++) {
    if (i == pick[0] || i == pick[1]) continue;
    double area = v3_dot(v3_cross(v3_sub(b, a), v3_sub(p[i].p, a)), nrm);
    if (area > amax) amax = area, pick[2] = i;
    if (area < amin) amin = area, pick[3] = i;
  }
  int k = 2;
  if (pick[2] >= 0) k = pick[3] >= 0 && pick[3] != pick[2] ? 4 : 3;
  cvert q[4];
  double s[4];
  for (int i = 0; i < k && i < 4; i++) q[i] = p[pick[i]], s[i] = sep[pick[i]];
  for (int i = 0; i < k && i < 4; i++) p[i] = q[i], sep[i] = s[i];
  return k < 4 ? k : 4;
}

/* The edge of P parallel to unit direction d that lies farthest along axis (sign +1) or least
 * (sign -1). */
static void support_edge(const wpoly *P, vec3 d, vec3 axis, double sign, vec3 *e0, vec3 *e1, int *id) {
  double best = -INFINITY;
  const rigid_poly *g = P->g;
  for (int f = 0; f < g->nf; f++) {
    const int32_t *l = g->face_v + g->face_first[f];
    const int k = g->face_count[f];
    for (int i = 0; i < k; i++) {
      int a = l[i], b = l[(i + 1) % k];
      vec3 e = v3_sub(P->v[b], P->v[a]);
      double len = v3_len(e);
      if (!(len > 0) || v3_len2(v3_cross(e, d)) > 1e-12 * len * len) continue;
      double s = sign * v3_dot(v3_add(P->v[a], P->v[b]), axis);
      if (s > best + 1e-12) {
        best = s;
        *e0 = P->v[a];
        *e1 = P->v[b];
        *id = a < b ? a * 64 + b : b * 64 + a;
      }
    }
  }
}

/* A mesh triangle's edges as poly_pair needs them: which have no neighbour (bit k: edge k -> k + 1),
 * which are convex folds, and the neighbours' unit normals (world). */
typedef struct tri_edges {
  int open, convex;
  vec3 nb[3];
} tri_edges;

/* Whether a contact of normal n (from the triangle towards the other body) can touch edge k of
 * triangle T: a boundary edge always; a convex fold (of more than 10 degrees) when n lies between
 * the normals of its two faces (the edge's normal cone); other edges never. */
static int edge_touchable(vec3 nt, const tri_edges *te, int k, vec3 n) {
  if ((te->open >> k) & 1) return 1;
  if (!((te->convex >> k) & 1)) return 0;
  const vec3 nu = te->nb[k], m = v3_cross(nt, nu);
  const double tol = -1e-6 * v3_len(m);
  return v3_dot(v3_cross(nt, n), m) >= tol && v3_dot(v3_cross(n, nu), m) >= tol;
}

/* Whether the feature of triangle T farthest along n (towards the other body) can carry a contact
 * of normal n: its face, a touchable edge, or a corner with a touchable edge. */
static int triangle_feature_touchable(const wpoly *T, const tri_edges *te, vec3 n) {
  double d[3], top = -INFINITY, len = 0;
  for (int k = 0; k < 3; k++) {
    d[k] = v3_dot(T->v[k], n);
    top = fmax(top, d[k]);
    len = fmax(len, v3_dist(T->v[k], T->v[(k + 1) % 3]));
  }
  int on = 0, mask = 0;
  for (int k = 0; k < 3; k++)
    if (d[k] >= top - 1e-3 * len) on++, mask |= 1 << k;
  if (on == 3) return 1;
  if (on == 2) return edge_touchable(T->fn[0], te, mask == 3 ? 0 : mask == 6 ? 1 : 2, n); /* edge k -> k + 1 */
  const int k = mask == 1 ? 0 : mask == 2 ? 1 : 2; /* corner k: edges k and k - 1 */
  return edge_touchable(T->fn[0], te, k, n) || edge_touchable(T->fn[0], te, (k + 2) % 3, n);
}

/* The manifold of polytope PA (centre ca) against polytope PB (centre cb). With te, PB is a mesh
 * triangle: a contact through an edge or a corner of it whose normal that edge cannot have (an
 * edge between coplanar or concave faces, a convex fold outside its normal cone) is made with
 * the triangle's face on PA's side instead — such normals come from inside the mesh's surface
 * and would stop a body sliding across (internal edges) or tilt the push at a fold. */
/* (4 doubles as one vector, math_lanes.h: an AVX2 register in the AVX2 build of poly_pair, picked
 * at load when the processor has it, two SSE2 registers otherwise) */
LOOM_CLONES /* (the arc tests run as vectors; the same numbers) */
static void poly_pair(rigid_manifold *m, const wpoly *PA, const wpoly *PB, vec3 ca, vec3 cb, double margin,
                      const tri_edges *te) {
  int fa, fb;
  double sa = face_axes(PA, PB, &fa);
  if (sa > margin) return;
  double sb = face_axes(PB, PA, &fb);
  if (sb > margin) return;
  /* edge axes, oriented from A to B */
  double se = -INFINITY;
  int ea = -1, eb = -1;
  vec3 eaxis = v3(0, 0, 1);
  vec3 a0 = ca, a1 = ca, b0 = cb, b1 = cb;
  int ida = 0, idb = 0, supports = 0;
  if (PA->g->hull && PB->g->hull) {
    /* hulls: only edge pairs whose arcs cross on the Gauss map can be a separating direction
     * (the cross product of the edges is then a face normal of the Minkowski difference) */
    /* B's arcs once (struct of arrays: the inner loop is four dot products per pair) */
    static _Thread_local double gb[9][RIGID_POLY_MAX_EDGES + 4]; /* (+4: whole vectors past the end) */
    const int neb = PB->g->ne;
    for (int j = 0; j < neb; j++) {
      const vec3 nc = v3_neg(PB->fn[PB->g->edge_f[2 * j]]), nd = v3_neg(PB->fn[PB->g->edge_f[2 * j + 1]]);
      const vec3 dxc = v3_cross(nd, nc);
      gb[0][j] = nc.x, gb[1][j] = nc.y, gb[2][j] = nc.z;
      gb[3][j] = nd.x, gb[4][j] = nd.y, gb[5][j] = nd.z;
      gb[6][j] = dxc.x, gb[7][j] = dxc.y, gb[8][j] = dxc.z;
    }
    for (int i = 0; i < PA->g->ne; i++) {
      const vec3 na = PA->fn[PA->g->edge_f[2 * i]], nb = PA->fn[PA->g->edge_f[2 * i + 1]];
      const vec3 pa0 = PA->v[PA->g->edge_v[2 * i]], pa1 = PA->v[PA->g->edge_v[2 * i + 1]];
      const vec3 bxa = v3_cross(nb, na);
      /* the arcs' first test for all of B's edges in a branch-free pass, the crossing ones listed
       * (the sums in v3_dot's order: the same values as with vectors) */
      double cbas[RIGID_POLY_MAX_EDGES + 4], prod[RIGID_POLY_MAX_EDGES + 4];
      int pass[RIGID_POLY_MAX_EDGES], npass = 0;
      const lanes bx = {bxa.x, bxa.x, bxa.x, bxa.x}, by = {bxa.y, bxa.y, bxa.y, bxa.y}, bz = {bxa.z, bxa.z, bxa.z, bxa.z};
      for (int j = 0; j < neb; j += 4) { /* four edges of B at a time (lanes past neb unused) */
        const lanes cba = lanes_load(gb[0] + j) * bx + lanes_load(gb[1] + j) * by + lanes_load(gb[2] + j) * bz;
        const lanes dba = lanes_load(gb[3] + j) * bx + lanes_load(gb[4] + j) * by + lanes_load(gb[5] + j) * bz;
        const lanes pr = cba * dba;
        memcpy(cbas + j, &cba, sizeof cba);
        memcpy(prod + j, &pr, sizeof pr);
      }
      for (int j = 0; j < neb; j++) {
        pass[npass] = j;
        npass += prod[j] < 0;
      }
      int ncross = 0; /* the second test, the same way, over the listed ones */
      for (int k = 0; k < npass; k++) {
        const int j = pass[k];
        const double adc = na.x * gb[6][j] + na.y * gb[7][j] + na.z * gb[8][j];
        const double bdc = nb.x * gb[6][j] + nb.y * gb[7][j] + nb.z * gb[8][j];
        pass[ncross] = j;
        ncross += (adc * bdc < 0) & (cbas[j] * bdc > 0);
      }
      for (int k = 0; k < ncross; k++) {
        const int j = pass[k];
        const vec3 pb0 = PB->v[PB->g->edge_v[2 * j]], pb1 = PB->v[PB->g->edge_v[2 * j + 1]];
        vec3 ax = v3_cross(v3_sub(pa1, pa0), v3_sub(pb1, pb0));
        double l = v3_len(ax);
        if (l < 1e-9 * v3_dist(pa1, pa0) * v3_dist(pb1, pb0)) continue;
        ax = v3_scale(ax, 1.0 / l);
        if (v3_dot(ax, v3_sub(pa0, ca)) < 0) ax = v3_neg(ax); /* outward from A */
        double sep = v3_dot(ax, v3_sub(pb0, pa0));
        if (sep > margin) return;
        if (sep > se) {
          se = sep, ea = i, eb = j, eaxis = ax;
          a0 = pa0, a1 = pa1, b0 = pb0, b1 = pb1;
          ida = PA->g->edge_v[2 * i] * 256 + PA->g->edge_v[2 * i + 1];
          idb = PB->g->edge_v[2 * j] * 256 + PB->g->edge_v[2 * j + 1];
        }
      }
    }
  } else if (te && PA->g->edge_v && !rigid_narrow_reference) {
    /* a hull and a triangle: the same test, the triangle's edge j being a flat polytope's edge
     * whose Gauss arc is the half circle from its normal over its outward direction o_j to the
     * back (on -B's map: through -o_j). A's arc from na to nb crosses the plane across e_j at
     * x = na |db| + nb |da|, which must lie on the -o_j side. */
    const vec3 nt = PB->fn[0];
    for (int j = 0; j < 3; j++) {
      const vec3 ej = PB->dir[j], oj = v3_cross(ej, nt);
      const vec3 pb0 = PB->v[j], pb1 = PB->v[(j + 1) % 3];
      for (int i = 0; i < PA->g->ne; i++) {
        const vec3 na = PA->fn[PA->g->edge_f[2 * i]], nb = PA->fn[PA->g->edge_f[2 * i + 1]];
        const double da = v3_dot(na, ej), db = v3_dot(nb, ej);
        if (!(da * db < 0)) continue;
        if (!(v3_dot(v3_add(v3_scale(na, fabs(db)), v3_scale(nb, fabs(da))), oj) < 0)) continue;
        const vec3 pa0 = PA->v[PA->g->edge_v[2 * i]], pa1 = PA->v[PA->g->edge_v[2 * i + 1]];
        vec3 ax = v3_cross(v3_sub(pa1, pa0), ej);
        const double l = v3_len(ax);
        if (l < 1e-9 * v3_dist(pa1, pa0)) continue;
        ax = v3_scale(ax, 1.0 / l);
        if (v3_dot(ax, v3_sub(pa0, ca)) < 0) ax = v3_neg(ax); /* outward from A */
        const double sep = v3_dot(ax, v3_sub(pb0, pa0));
        if (sep > margin) return;
        if (sep > se) {
          se = sep, ea = i, eb = j, eaxis = ax;
          a0 = pa0, a1 = pa1, b0 = pb0, b1 = pb1;
          ida = PA->g->edge_v[2 * i] * 256 + PA->g->edge_v[2 * i + 1];
          idb = j;
        }
      }
    }
  } else {
    for (int i = 0; i < PA->g->ndir; i++)
      for (int j = 0; j < PB->g->ndir; j++) {
        vec3 ax = v3_cross(PA->dir[i], PB->dir[j]);
        double l = v3_len(ax);
        if (l < 1e-6) continue;
        ax = v3_scale(ax, 1.0 / l);
        if (v3_dot(ax, v3_sub(cb, ca)) < 0) ax = v3_neg(ax);
        double alo, ahi, blo, bhi;
        extent(PA, ax, &alo, &ahi);
        extent(PB, ax, &blo, &bhi);
        double s = blo - ahi;
        if (alo - bhi > s) s = alo - bhi, ax = v3_neg(ax); /* B on the other side than the centres say */
        if (s > margin) return;
        if (s > se) se = s, ea = i, eb = j, eaxis = ax;
      }
    supports = 1; /* the edges themselves are found below, if an edge wins */
  }
  const double tol = 0.1 * RIGID_SPECULATIVE * 0.1; /* prefer faces: they give whole manifolds */
  double sf = sa >= sb - tol ? sa : sb;
  int use_edge = ea >= 0 && se > sf + tol, ref_on_a = sa >= sb - tol;
  if (te && (use_edge || ref_on_a) && !triangle_feature_touchable(PB, te, use_edge ? v3_neg(eaxis) : v3_neg(PA->fn[fa]))) {
    use_edge = ref_on_a = 0;
    fb = v3_dot(PB->fn[0], ca) - PB->fd[0] >= 0 ? 0 : 1; /* the face on A's side */
  }
  if (use_edge) {
    if (supports) {
      support_edge(PA, PA->dir[ea], eaxis, 1, &a0, &a1, &ida);
      support_edge(PB, PB->dir[eb], eaxis, -1, &b0, &b1, &idb);
    }
    double s, t;
    geom_segment_segment(a0, a1, b0, b1, &s, &t);
    vec3 pa = v3_lerp(a0, a1, s), pb = v3_lerp(b0, b1, t);
    m->n = v3_neg(eaxis);
    add_point(m, v3_scale(v3_add(pa, pb), 0.5), se, 0x80000000u | (uint32_t)(ida & 0x7fff) << 15 | (uint32_t)(idb & 0x7fff));
    return;
  }
  /* face contact: the reference face on A (normal out of A) or on B */
  const wpoly *R = ref_on_a ? PA : PB, *I = ref_on_a ? PB : PA;
  const int rf = ref_on_a ? fa : fb;
  const vec3 rn = R->fn[rf];
  const double rd = R->fd[rf];
  const int inf = incident_face(I, rn);
  cvert buf0[CLIP_MAX], buf1[CLIP_MAX];
  int n = I->g->face_count[inf];
  const int32_t *il = I->g->face_v + I->g->face_first[inf];
  for (int i = 0; i < n; i++) buf0[i].p = I->v[il[i]], buf0[i].id = (uint32_t)il[i];
  const int32_t *rl = R->g->face_v + R->g->face_first[rf];
  const int rk = R->g->face_count[rf];
  cvert *in = buf0, *out = buf1;
  for (int e = 0; e < rk && n > 0; e++) {
    vec3 a = R->v[rl[e]], b = R->v[rl[(e + 1) % rk]];
    vec3 sdir = v3_normalize(v3_cross(v3_sub(b, a), rn));
    n = clip(in, n, sdir, v3_dot(sdir, a), out, (uint32_t)e);
    cvert *t = in;
    in = out;
    out = t;
  }
  double sep[CLIP_MAX];
  int k = 0;
  for (int i = 0; i < n; i++) {
    double s = v3_dot(rn, in[i].p) - rd;
    if (s <= margin) {
      in[k] = in[i];
      sep[k] = s;
      k++;
    }
  }
  k = reduce(in, sep, k, rn);
  m->n = ref_on_a ? v3_neg(rn) : rn;
  const uint32_t base = (uint32_t)(ref_on_a ? 0 : 1) << 30 | (uint32_t)rf << 22 | (uint32_t)inf << 14;
  for (int i = 0; i < k; i++) add_point(m, v3_madd(in[i].p, rn, -0.5 * sep[i]), sep[i], base | (in[i].id & 0x3fff));
}

static void poly_vs_poly(rigid_manifold *m, const posed *A, const posed *B, double margin) {
  static _Thread_local wpoly PA, PB; /* ~5 kB each: kept off the stack */
  if (v3_dist(A->p, B->p) > A->r->model.poly->radius + B->r->model.poly->radius + margin) return;
  place_poly(&PA, A);
  place_poly(&PB, B);
  poly_pair(m, &PA, &PB, A->p, B->p, margin, NULL);
}

/* ---- polytope against a triangle mesh ------------------------------------------------------- */

/* A triangle as a flat polytope: its two sides are faces (0: front, 1: back), its edges the
 * directions; poly_pair handles it as any other. */
static int32_t tri_face_first[2] = {0, 3}, tri_face_count[2] = {3, 3}, tri_face_v[6] = {0, 1, 2, 0, 2, 1};
static const rigid_poly tri_poly = {.nv = 3, .nf = 2, .ndir = 3, .face_first = tri_face_first,
                                    .face_count = tri_face_count, .face_v = tri_face_v};

#define MESH_CLUSTER_POINTS 64
#define MESH_CLUSTER_COS 0.99999 /* normals within 0.26 degrees (coplanar triangles) share a manifold */

typedef struct mesh_cluster {
  vec3 n;
  int count;
  cvert p[MESH_CLUSTER_POINTS];
  double sep[MESH_CLUSTER_POINTS];
} mesh_cluster;

typedef struct mesh_query {
  const posed *B;
  double margin;
  double same; /* points closer than this are one (a point two triangles share) */
  mesh_cluster *c;
  int cap, nc;
  /* a polytope (PA, T its triangle scratch) or a sphere swept along [e0, e1] (radius r) */
  const wpoly *PA;
  wpoly *T;
  vec3 e0, e1;
  double r;
} mesh_query;

/* Adds triangle t's manifold to the manifold whose normal is this one's, else to a new one, else
 * to the one of the nearest normal. */
static void cluster_add(mesh_query *q, int t, const rigid_manifold *tm) {
  int best = -1;
  double bd = -2;
  for (int i = 0; i < q->nc; i++) {
    const double d = v3_dot(q->c[i].n, tm->n);
    if (d > bd) bd = d, best = i;
  }
  if (bd < MESH_CLUSTER_COS && q->nc < q->cap) {
    best = q->nc++;
    q->c[best].n = tm->n;
    q->c[best].count = 0;
  }
  mesh_cluster *c = &q->c[best];
  for (int j = 0; j < tm->count; j++) {
    int dup = -1;
    for (int i = 0; i < c->count && dup < 0; i++)
      if (v3_dist2(c->p[i].p, tm->pt[j].p) <= q->same * q->same) dup = i;
    if (dup >= 0) {
      c->sep[dup] = fmin(c->sep[dup], tm->pt[j].sep);
      continue;
    }
    if (c->count == MESH_CLUSTER_POINTS) c->count = reduce(c->p, c->sep, c->count, c->n);
    /* points of one triangle keep their ids apart from another's */
    c->p[c->count].p = tm->pt[j].p;
    c->p[c->count].id = tm->pt[j].id ^ ((uint32_t)t + 1u) * 0x9e3779b1u;
    c->p[c->count].tri = t;
    c->sep[c->count] = tm->pt[j].sep;
    c->count++;
  }
}

/* The gathered manifolds into m (at most four points each); their count. A point on a convex fold
 * between two triangles of different manifolds is held by the one where it is deeper only: in
 * both, each plane would hold it from sliding down the other side. */
static int clusters_out(mesh_query *q, rigid_manifold *m) {
  const rigid_model *md = &q->B->r->model;
  mesh_cluster *cl = q->c;
  for (int i = 0; i < q->nc; i++)
    for (int j = i + 1; j < q->nc; j++)
      for (int a = 0; a < cl[i].count; a++)
        for (int b = 0; b < cl[j].count; b++) {
          if (v3_dist2(cl[i].p[a].p, cl[j].p[b].p) > q->same * q->same) continue;
          const int ta = cl[i].p[a].tri, tb = cl[j].p[b].tri;
          int fold = 0;
          for (int k = 0; k < 3; k++) fold |= md->tri_adj[3 * ta + k] == tb && ((md->tri_convex[ta] >> k) & 1);
          if (!fold) continue;
          mesh_cluster *drop = cl[j].sep[b] >= cl[i].sep[a] ? &cl[j] : &cl[i];
          const int at = drop == &cl[j] ? b : a;
          drop->p[at] = drop->p[drop->count - 1];
          drop->sep[at] = drop->sep[drop->count - 1];
          drop->count--;
          if (drop == &cl[i]) {
            a--;
            break;
          }
          b--;
        }
  int nm = 0;
  for (int i = 0; i < q->nc; i++) {
    mesh_cluster *c = &cl[i];
    if (!c->count) continue;
    const int k = reduce(c->p, c->sep, c->count, c->n);
    m[nm].n = c->n;
    m[nm].count = 0;
    for (int j = 0; j < k; j++) add_point(&m[nm], c->p[j].p, c->sep[j], c->p[j].id);
    nm++;
  }
  return nm;
}

/* The triangle t of the mesh in world coordinates; 0 for a degenerate one. */
static int world_triangle(const posed *B, int t, vec3 v[3], vec3 *out) {
  const loom_mesh *mesh = B->r->model.mesh;
  for (int k = 0; k < 3; k++) v[k] = v3_add(B->p, m3_mulv(&B->R, mesh->v[mesh->tri[3 * t + k]]));
  *out = m3_mulv(&B->R, B->r->model.tri_normal[t]);
  return v3_isfinite(*out);
}

/* Triangle t's edges: boundaries, and convex folds with their neighbours' normals (world) — folds
 * of any angle (shift 0) or of more than 10 degrees (shift 3). */
static tri_edges triangle_edges(const posed *B, int t, vec3 out, int shift) {
  tri_edges te = {0, (B->r->model.tri_convex[t] >> shift) & 7, {out, out, out}};
  for (int k = 0; k < 3; k++) {
    const int u = B->r->model.tri_adj[3 * t + k];
    if (u < 0) te.open |= 1 << k;
    else if ((te.convex >> k) & 1) te.nb[k] = m3_mulv(&B->R, B->r->model.tri_normal[u]);
  }
  return te;
}

static int mesh_triangle(int t, void *ctx) {
  mesh_query *q = ctx;
  const posed *B = q->B;
  wpoly *T = q->T;
  vec3 out;
  if (!world_triangle(B, t, T->v, &out)) return 0;
  /* beyond the polytope's bounding sphere: no contact (the tree's boxes are loose for a turned body) */
  const double reach = q->PA->g->radius + q->margin;
  if (fabs(v3_dot(out, v3_sub(q->PA->centre, T->v[0]))) > reach ||
      v3_dist2(geom_closest_on_triangle(q->PA->centre, T->v[0], T->v[1], T->v[2], NULL), q->PA->centre) > reach * reach)
    return 0;
  T->fn[0] = out;
  T->fd[0] = v3_dot(out, T->v[0]);
  T->fn[1] = v3_neg(out);
  T->fd[1] = -T->fd[0];
  for (int k = 0; k < 3; k++) T->dir[k] = v3_normalize(v3_sub(T->v[(k + 1) % 3], T->v[k]));
  const vec3 centre = v3_scale(v3_add(T->v[0], v3_add(T->v[1], T->v[2])), 1.0 / 3);
  const tri_edges te = triangle_edges(B, t, out, 3);
  rigid_manifold tm;
  tm.count = 0;
  poly_pair(&tm, q->PA, T, q->PA->centre, centre, q->margin, &te);
  if (tm.count) cluster_add(q, t, &tm);
  return 0;
}


/* A sphere swept along [e0, e1] (a capsule; a sphere when e0 = e1) against triangle t: the
 * triangle points nearest the two ends and the segment point nearest the triangle (alternating
 * projections), each a contact within the radius plus the margin, its normal from the triangle
 * point to the axis (through the triangle: its face on the axis's side). */
static int mesh_triangle_rounded(int t, void *ctx) {
  mesh_query *q = ctx;
  vec3 v[3], out;
  if (!world_triangle(q->B, t, v, &out)) return 0;
  const vec3 front = out;
  const vec3 mid = v3_scale(v3_add(q->e0, q->e1), 0.5);
  if (v3_dot(out, v3_sub(mid, v[0])) < 0) out = v3_neg(out); /* the face on the axis's side */
  const tri_edges te = triangle_edges(q->B, t, front, 0);
  vec3 axis[3] = {q->e0, q->e1, mid};
  int na = v3_dist2(q->e0, q->e1) > 0 ? 3 : 1;
  if (na == 3) {
    geom_segment_triangle_nearest(q->e0, q->e1, v[0], v[1], v[2], 8, NULL, &axis[2]);
  } else {
    axis[0] = q->e0;
  }
  rigid_manifold tm;
  for (int k = 0; k < na; k++) {
    const vec3 c = axis[k];
    double bary[3];
    const vec3 p = geom_closest_on_triangle(c, v[0], v[1], v[2], bary);
    const vec3 d = v3_sub(c, p);
    const double dist = v3_len(d), sep = dist - q->r;
    if (!(sep <= q->margin)) continue;
    const vec3 n = dist > 1e-9 * q->r ? v3_scale(d, 1.0 / dist) : out;
    /* on an edge (bary 0 opposite it) or a corner: a contact only where the mesh's surface has
     * that point nearest — a boundary, or a convex fold with n in its cone; elsewhere a
     * neighbour's face is nearer, and the point's distance, linearised, would brake a ball rolling
     * across */
    int zeros = 0, on_edge = -1;
    for (int i = 0; i < 3; i++)
      if (bary[i] == 0) zeros++, on_edge = (i + 1) % 3; /* edge (i + 1) -> (i + 2) is opposite corner i */
    if (v3_dot(n, out) > 1 - 1e-9) zeros = 0; /* straight over the edge or corner: the face's contact */
    if (zeros == 1 && !edge_touchable(front, &te, on_edge, n)) continue;
    if (zeros == 2) {
      int corner = 0;
      for (int i = 0; i < 3; i++)
        if (bary[i] != 0) corner = i;
      if (!edge_touchable(front, &te, corner, n) && !edge_touchable(front, &te, (corner + 2) % 3, n)) continue;
    }
    tm.count = 0;
    tm.n = n;
    add_point(&tm, v3_madd(c, n, -(q->r + 0.5 * sep)), sep, (uint32_t)k);
    cluster_add(q, t, &tm);
  }
  return 0;
}

/* A polytope against a static or kinematic triangle mesh: every triangle near it by separating
 * axes (poly_pair; the mesh's inside edges and corners excluded), the triangles' manifolds
 * gathered by normal into at most cap manifolds of at most four points each. */
static int poly_vs_mesh(rigid_manifold *m, int cap, const posed *A, const posed *B, double margin) {
  static _Thread_local wpoly PA, T;
  static _Thread_local mesh_cluster cl[RIGID_PAIR_MANIFOLDS];
  place_poly(&PA, A);
  PA.centre = A->p;
  T.g = &tri_poly;
  /* the polytope's box in the mesh's frame */
  vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < PA.g->nv; i++) {
    const vec3 l = m3_tmulv(&B->R, v3_sub(PA.v[i], B->p));
    lo = v3_min(lo, l);
    hi = v3_max(hi, l);
  }
  const vec3 pad = v3(margin, margin, margin);
  mesh_query q = {B, margin, 1e-4 * PA.g->radius, cl, cap < RIGID_PAIR_MANIFOLDS ? cap : RIGID_PAIR_MANIFOLDS, 0,
                  &PA, &T, v3(0, 0, 0), v3(0, 0, 0), 0};
  bvh_query_box(&B->r->model.tree, v3_sub(lo, pad), v3_add(hi, pad), mesh_triangle, &q);
  return clusters_out(&q, m);
}

/* A sphere (hh = 0) or a capsule (the sphere of radius r swept along its axis) against a triangle
 * mesh: every triangle near it (mesh_triangle_rounded), gathered by normal as a polytope's. */
static int rounded_vs_mesh(rigid_manifold *m, int cap, const posed *A, double r, double hh, const posed *B, double margin) {
  static _Thread_local mesh_cluster cl[RIGID_PAIR_MANIFOLDS];
  const vec3 axis = v3(A->R.m[0][2], A->R.m[1][2], A->R.m[2][2]);
  const vec3 e0 = v3_madd(A->p, axis, -hh), e1 = v3_madd(A->p, axis, hh);
  const vec3 l0 = m3_tmulv(&B->R, v3_sub(e0, B->p)), l1 = m3_tmulv(&B->R, v3_sub(e1, B->p));
  const double pad = r + margin;
  mesh_query q = {B, margin, 1e-4 * r, cl, cap < RIGID_PAIR_MANIFOLDS ? cap : RIGID_PAIR_MANIFOLDS, 0,
                  NULL, NULL, e0, e1, r};
  bvh_query_box(&B->r->model.tree, v3_sub(v3_min(l0, l1), v3(pad, pad, pad)), v3_add(v3_max(l0, l1), v3(pad, pad, pad)),
                mesh_triangle_rounded, &q);
  return clusters_out(&q, m);
}

static int is_poly(const rigid_body *r) { return r->model.poly != NULL; }

/* A body whose centre lies inside a closed mesh (rigid.h, vert_pn: made there, or driven through
 * it): the triangles above would hold it against the inner side of the nearest face, the mesh a
 * shell; its signed distance pushes it out through the nearest surface instead. */
static int centre_inside(const posed *A, const posed *B) {
  if (!B->r->model.vert_pn) return 0;
  const vec3 l = m3_tmulv(&B->R, v3_sub(A->p, B->p)), lo = B->r->model.local_lo, hi = B->r->model.local_hi;
  if (l.x < lo.x || l.y < lo.y || l.z < lo.z || l.x > hi.x || l.y > hi.y || l.z > hi.z) return 0; /* (cheap: outside its box) */
  vec3 n;
  return shape_distance(B, A->p, &n) < 0;
}

/* A polytope with its centre inside a closed mesh: one manifold along the way out of the centre,
 * at the (at most four) deepest of the polytope's corners within the margin, each separated by
 * its own signed distance. */
static void poly_out_of_mesh(rigid_manifold *m, const posed *A, const posed *B, double margin) {
  static _Thread_local wpoly PA;
  place_poly(&PA, A);
  vec3 n, nv;
  shape_distance(B, A->p, &n);
  m->n = n;
  int pick[RIGID_MANIFOLD_MAX];
  double deep[RIGID_MANIFOLD_MAX];
  int k = 0;
  for (int i = 0; i < PA.g->nv; i++) {
    const double d = shape_distance(B, PA.v[i], &nv);
    if (!(d <= margin)) continue;
    int at = k < RIGID_MANIFOLD_MAX ? k++ : RIGID_MANIFOLD_MAX;
    while (at > 0 && deep[at - 1] > d) {
      if (at < RIGID_MANIFOLD_MAX) deep[at] = deep[at - 1], pick[at] = pick[at - 1];
      at--;
    }
    if (at < RIGID_MANIFOLD_MAX) deep[at] = d, pick[at] = i;
  }
  for (int j = 0; j < k; j++) add_point(m, v3_madd(PA.v[pick[j]], n, -0.5 * deep[j]), deep[j], (uint32_t)pick[j]);
}

int rigid_collide_all(const rigid_body *a, vec3 pa, quat qa, const rigid_body *b, vec3 pb, quat qb, double margin,
                      rigid_manifold *m, int cap) {
  posed A = {a, pa, qa, q_to_mat3(qa)}, B = {b, pb, qb, q_to_mat3(qb)};
  m->count = 0;
  m->n = v3(0, 0, 1);
  if (cap < 1) return 0;
  const int ta = a->model.shape_type, tb = b->model.shape_type;
  /* order: sphere, capsule, polytope, mesh — the first of the pair is the simpler */
  int rank_a = ta == LOOM_SHAPE_SPHERE ? 0 : ta == LOOM_SHAPE_CAPSULE ? 1 : ta == LOOM_SHAPE_MESH ? 3 : 2;
  int rank_b = tb == LOOM_SHAPE_SPHERE ? 0 : tb == LOOM_SHAPE_CAPSULE ? 1 : tb == LOOM_SHAPE_MESH ? 3 : 2;
  const posed *P = &A, *Q = &B;
  const int flip = rank_b < rank_a;
  if (flip) {
    P = &B, Q = &A;
    const int t = rank_a;
    rank_a = rank_b;
    rank_b = t;
  }
  int nm = 1;
  if (rank_a <= 2 && rank_b == 3 && centre_inside(P, Q)) {
    if (rank_a == 0) sphere_vs(m, P->p, P->r->model.shape.radius, Q, margin, 0);
    else if (rank_a == 1) capsule_vs(m, P, Q, margin);
    else if (is_poly(P->r)) poly_out_of_mesh(m, P, Q, margin);
  } else if (rank_a <= 1 && rank_b == 3) {
    nm = rounded_vs_mesh(m, cap, P, P->r->model.shape.radius, rank_a == 1 ? P->r->model.shape.half_h : 0, Q, margin);
  } else if (rank_a == 0) {
    sphere_vs(m, P->p, P->r->model.shape.radius, Q, margin, 0);
  } else if (rank_a == 1) {
    capsule_vs(m, P, Q, margin);
  } else if (rank_a == 2 && rank_b == 2 && is_poly(P->r) && is_poly(Q->r)) {
    poly_vs_poly(m, P, Q, margin);
  } else if (rank_a == 2 && rank_b == 3 && is_poly(P->r)) {
    nm = poly_vs_mesh(m, cap, P, Q, margin);
  }
  if (nm == 1 && m->count == 0) nm = 0;
  for (int i = 0; i < nm; i++)
    if (flip) m[i].n = v3_neg(m[i].n);
  return nm;
}

int rigid_collide(const rigid_body *a, vec3 pa, quat qa, const rigid_body *b, vec3 pb, quat qb, double margin,
                  rigid_manifold *m) {
  return rigid_collide_all(a, pa, qa, b, pb, qb, margin, m, 1) ? m->count : 0;
}
