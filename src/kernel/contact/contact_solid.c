/* contact_solid.c — solids against solids as document 002 does it (for solids with
 * contact = "penetration"; the others meet through the collision pipeline):
 *
 *  1. Teschner et al.'s optimized spatial hash (2003): every vertex of those solids goes into
 *     cell (floor(x/l), floor(y/l), floor(z/l)), l = their mean rest edge length, hashed as
 *     (x 73856093 xor y 19349663 xor z 83492791) mod n, n the first prime > 4/3 x the points;
 *     every tet visits the cells of its box and tests the points there against the box, then by
 *     barycentric coordinates (orientation independent). A point inside a tet of another solid
 *     collides.
 *  2. Heidelberger et al.'s consistent penetration depth (2004): border points (colliding, with
 *     a non-colliding neighbour) get the depth and direction of their edges' crossings with the
 *     other body's surface, h = sum w (x_e - x) . n_e / sum w, r = normalize(sum w n_e),
 *     w = 1 / |x_e - x|^2; depth then propagates inward ring by ring,
 *     h_i = sum w ((x_j - x_i) . r_j + h_j) / sum w. Distances below 1e-3 l count as 1e-3 l, so
 *     no weight is infinite; a colliding point no ring reaches takes the distance to the nearest
 *     surface triangle.
 *  3. Response: each colliding point moves out along r by the share k_other / (k_self + k_other)
 *     of its depth (two equally stiff bodies meet halfway); the relative velocity of the point
 *     and the tet's material point at it loses its approaching normal part (an inelastic impulse,
 *     shared with the tet's corners by barycentric weights: momentum is conserved), and its
 *     tangential part up to mu times that impulse (Coulomb on the relative velocity, static
 *     within the cone: document 002 used the point's own velocity and resting contacts slid). */
#include <string.h>

#include "contact/contact.h"
#include "solid/solid.h"

#define MAX_SOLIDS 256
#define SP_BOXES 8

typedef struct sp_point {
  int32_t body, tet; /* the penetrated solid (index in the list) and its tet; -1 = none */
  double w[4];
  double depth;
  vec3 dir;
  int32_t ring; /* -1 not reached; 0 border; k: k-th ring */
} sp_point;

typedef struct sp_body {
  int slot;
  solid_body *b;
  int offset;
  vec3 *tlo, *thi; /* surface triangle boxes */
  int tri_offset;  /* first global triangle */
  int32_t *big;    /* surface triangles too large to hash (their box spans > 64 cells) */
  int nbig;
  vec3 lo, hi;     /* the body's box now */
  vec3 clo[SP_BOXES], chi[SP_BOXES]; /* where other solids' boxes overlap it */
  int nbox;
} sp_body;

static inline int box_overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

/* 1 if the box (lo, hi) meets one of the body's overlap boxes. */
static inline int in_overlap(const sp_body *B, vec3 lo, vec3 hi) {
  for (int k = 0; k < B->nbox; k++)
    if (box_overlap(lo, hi, B->clo[k], B->chi[k])) return 1;
  return 0;
}

static void add_overlap(sp_body *B, vec3 lo, vec3 hi) {
  if (B->nbox < SP_BOXES) {
    B->clo[B->nbox] = lo, B->chi[B->nbox] = hi;
    B->nbox++;
  } else { /* many neighbours: the last box grows to cover the rest */
    B->clo[SP_BOXES - 1] = v3_min(B->clo[SP_BOXES - 1], lo);
    B->chi[SP_BOXES - 1] = v3_max(B->chi[SP_BOXES - 1], hi);
  }
}

static int next_prime(int n) {
  for (int c = n + 1;; c++) {
    int prime = c > 1;
    for (int d = 2; (long long)d * d <= c && prime; d++) prime = c % d != 0;
    if (prime) return c;
  }
}

static inline uint32_t cell_hash(int64_t x, int64_t y, int64_t z, uint32_t n) {
  const uint32_t h = ((uint32_t)x * 73856093u) ^ ((uint32_t)y * 19349663u) ^ ((uint32_t)z * 83492791u);
  return h % n;
}

static inline int64_t cell_of(double c, double inv_l) { return (int64_t)floor(c * inv_l); }

/* Surface triangles hashed into the same cells as the points (each into the cells of its box). */
typedef struct tri_hash {
  int32_t *head, *next, *tri; /* per table slot; per entry: next entry, global triangle */
  int32_t *stamp;             /* per global triangle: the last query that saw it */
  int32_t *tri_body;          /* per global triangle: its body (list index) */
  uint32_t size;
  int query;
  double inv_l;
} tri_hash;

/* Segment p + s (q - p), s in [0, 1], against triangle abc (Moller and Trumbore 1997, in floating
 * point: a depth estimate needs no exact predicate). 1 and *s on a hit. */
static inline int segment_hits_triangle(vec3 p, vec3 q, vec3 a, vec3 b, vec3 c, double *s) {
  const vec3 d = v3_sub(q, p), e1 = v3_sub(b, a), e2 = v3_sub(c, a);
  const vec3 h = v3_cross(d, e2);
  const double det = v3_dot(e1, h);
  if (fabs(det) < 1e-300) return 0;
  const double inv = 1.0 / det;
  const vec3 t = v3_sub(p, a);
  const double u = v3_dot(t, h) * inv;
  if (u < 0 || u > 1) return 0;
  const vec3 qq = v3_cross(t, e1);
  const double v = v3_dot(d, qq) * inv;
  if (v < 0 || u + v > 1) return 0;
  const double sp = v3_dot(e2, qq) * inv;
  if (sp < 0 || sp > 1) return 0;
  *s = sp;
  return 1;
}

/* Segment p -> q (box lo, hi) against surface triangle t of B: keeps the crossing nearest p. */
static void crossing_try(const sp_body *B, int t, vec3 p, vec3 q, vec3 lo, vec3 hi, double *best, vec3 *xe, vec3 *ne) {
  const particles *P = &B->b->p;
  if (!box_overlap(lo, hi, B->tlo[t], B->thi[t])) return;
  const int32_t *f = P->tri + 3 * t;
  double sp;
  if (!segment_hits_triangle(p, q, P->x[f[0]], P->x[f[1]], P->x[f[2]], &sp) || !(sp < *best)) return;
  *best = sp;
  *xe = v3_lerp(p, q, sp);
  *ne = v3_normalize(v3_cross(v3_sub(P->x[f[1]], P->x[f[0]]), v3_sub(P->x[f[2]], P->x[f[0]])));
}

/* The crossing of segment p -> q with body bi's surface nearest p: point and outward normal. */
static int surface_crossing(const sp_body *list, int bi, tri_hash *th, vec3 p, vec3 q, vec3 *xe, vec3 *ne) {
  const sp_body *B = &list[bi];
  const particles *P = &B->b->p;
  const vec3 lo = v3_min(p, q), hi = v3_max(p, q);
  const int64_t i0 = cell_of(lo.x, th->inv_l), i1 = cell_of(hi.x, th->inv_l), j0 = cell_of(lo.y, th->inv_l),
                j1 = cell_of(hi.y, th->inv_l), k0 = cell_of(lo.z, th->inv_l), k1 = cell_of(hi.z, th->inv_l);
  double best = INFINITY;
  const int qid = ++th->query;
  const int many = (i1 - i0 + 1) * (j1 - j0 + 1) * (k1 - k0 + 1) > 64;
  for (int64_t k = k0; k <= k1 && !many; k++)
    for (int64_t j = j0; j <= j1; j++)
      for (int64_t i = i0; i <= i1; i++)
        for (int e = th->head[cell_hash(i, j, k, th->size)]; e >= 0; e = th->next[e]) {
          const int g = th->tri[e];
          if (th->tri_body[g] != bi || th->stamp[g] == qid) continue;
          th->stamp[g] = qid;
          crossing_try(B, g - B->tri_offset, p, q, lo, hi, &best, xe, ne);
        }
  if (many) /* a segment longer than the cells: every triangle of the body */
    for (int t = 0; t < P->nt; t++) crossing_try(B, t, p, q, lo, hi, &best, xe, ne);
  else
    for (int k = 0; k < B->nbig; k++) crossing_try(B, B->big[k], p, q, lo, hi, &best, xe, ne);
  return best < INFINITY;
}

/* Nearest point of body B's surface to p and the outward normal there (the fallback depth). */
static double nearest_surface(const sp_body *B, vec3 p, vec3 *dir) {
  const particles *P = &B->b->p;
  double best = INFINITY;
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    const vec3 c = geom_closest_on_triangle(p, P->x[f[0]], P->x[f[1]], P->x[f[2]], NULL);
    const double d = v3_len(v3_sub(c, p));
    if (d < best) {
      best = d;
      const vec3 n = v3_normalize(v3_cross(v3_sub(P->x[f[1]], P->x[f[0]]), v3_sub(P->x[f[2]], P->x[f[0]])));
      *dir = n;
    }
  }
  return best;
}

/* Gives the pass's scratch back and says once per step that the contacts were skipped. */
static int hash_out_of_memory(loom_world *w, arena *A, arena_mark mark) {
  arena_release(A, mark);
  world_message(w, LOOM_ERROR, -1, "solids: out of scratch memory for the spatial hash; solid contacts skipped");
  return 0;
}

int contact_solid_respond(loom_world *w, const step_info *s) {
  sp_body list[MAX_SOLIDS];
  int nb = 0, total = 0;
  double lsum = 0;
  for (int o = 0; o < w->order_count && nb < MAX_SOLIDS; o++) {
    body_slot *bs = &w->bodies[w->order[o]];
    if (bs->ops->id != LOOM_KIND_SOLID || !bs->pts->depth_contact || bs->pts->frozen || !bs->pts->x_sub) continue;
    list[nb].slot = w->order[o];
    list[nb].b = solid_of(bs);
    list[nb].offset = total;
    total += bs->pts->n;
    lsum += list[nb].b->derived.rest_length;
    nb++;
  }
  if (nb < 2) return 0;
  /* boxes, and where they overlap: only tets and points there can collide */
  int any = 0;
  for (int a = 0; a < nb; a++) {
    const particles *P = &list[a].b->p;
    list[a].lo = v3(INFINITY, INFINITY, INFINITY), list[a].hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < P->n; i++) list[a].lo = v3_min(list[a].lo, P->x[i]), list[a].hi = v3_max(list[a].hi, P->x[i]);
    list[a].nbox = 0;
  }
  for (int a = 0; a < nb; a++)
    for (int c = a + 1; c < nb; c++) {
      /* (two solids that world:pair lets pass through each other have no overlap to look in) */
      if (world_pair_off(w, list[a].slot, list[c].slot) || !box_overlap(list[a].lo, list[a].hi, list[c].lo, list[c].hi)) continue;
      const vec3 lo = v3_max(list[a].lo, list[c].lo), hi = v3_min(list[a].hi, list[c].hi);
      add_overlap(&list[a], lo, hi);
      add_overlap(&list[c], lo, hi);
      any = 1;
    }
  if (!any) return 0;
  arena *A = &w->scratch;
  const arena_mark mark = arena_get_mark(A);
  const double l = lsum / nb, inv_l = 1.0 / l, eps = 1e-3 * l;
  const uint32_t nt = (uint32_t)next_prime(total * 4 / 3 + 1);
  int32_t *head = ARENA_NEW(A, int32_t, nt, "spatial hash");
  int32_t *next = ARENA_NEW(A, int32_t, total, "spatial hash chains");
  int32_t *stamp = ARENA_NEW(A, int32_t, total, "point stamps");
  sp_point *pt = ARENA_NEW(A, sp_point, total, "colliding points");
  int32_t *owner = ARENA_NEW(A, int32_t, total, "point owners");
  int ok = head && next && stamp && pt && owner;
  for (int a = 0; a < nb && ok; a++) {
    list[a].tlo = ARENA_NEW(A, vec3, list[a].b->p.nt, "surface boxes");
    list[a].thi = ARENA_NEW(A, vec3, list[a].b->p.nt, "surface boxes");
    ok = list[a].tlo && list[a].thi;
  }
  if (!ok) return hash_out_of_memory(w, A, mark);
  /* 1. hash every point */
  for (uint32_t i = 0; i < nt; i++) head[i] = -1;
  for (int a = 0; a < nb; a++) {
    const particles *P = &list[a].b->p;
    for (int i = 0; i < P->n; i++) {
      const int g = list[a].offset + i;
      const vec3 x = P->x[i];
      stamp[g] = -1;
      owner[g] = a;
      pt[g].body = pt[g].tet = -1;
      pt[g].ring = -1;
      pt[g].depth = 0;
      if (!in_overlap(&list[a], x, x)) continue; /* no other solid's box reaches it */
      const uint32_t h = cell_hash(cell_of(x.x, inv_l), cell_of(x.y, inv_l), cell_of(x.z, inv_l), nt);
      next[g] = head[h];
      head[h] = g;
    }
    for (int t = 0; t < P->nt; t++) {
      const int32_t *f = P->tri + 3 * t;
      list[a].tlo[t] = v3_min(P->x[f[0]], v3_min(P->x[f[1]], P->x[f[2]]));
      list[a].thi[t] = v3_max(P->x[f[0]], v3_max(P->x[f[1]], P->x[f[2]]));
    }
  }
  /* the surface triangles into the cells of their boxes (for the border edges' crossings) */
  tri_hash th = {0};
  th.inv_l = inv_l;
  int ntri = 0, nent = 0;
  for (int a = 0; a < nb; a++) {
    list[a].tri_offset = ntri;
    ntri += list[a].b->p.nt;
    for (int t = 0; t < list[a].b->p.nt; t++) {
      const vec3 lo = list[a].tlo[t], hi = list[a].thi[t];
      if (!in_overlap(&list[a], lo, hi)) continue;
      const int64_t c = (cell_of(hi.x, inv_l) - cell_of(lo.x, inv_l) + 1) * (cell_of(hi.y, inv_l) - cell_of(lo.y, inv_l) + 1) *
                        (cell_of(hi.z, inv_l) - cell_of(lo.z, inv_l) + 1);
      nent += c > 64 ? 0 : (int)c;
    }
  }
  th.size = (uint32_t)next_prime(nent * 4 / 3 + 1);
  th.head = ARENA_NEW(A, int32_t, th.size, "triangle hash");
  th.next = ARENA_NEW(A, int32_t, nent + 1, "triangle hash chains");
  th.tri = ARENA_NEW(A, int32_t, nent + 1, "triangle hash entries");
  th.stamp = ARENA_NEW(A, int32_t, ntri + 1, "triangle stamps");
  th.tri_body = ARENA_NEW(A, int32_t, ntri + 1, "triangle bodies");
  if (!th.head || !th.next || !th.tri || !th.stamp || !th.tri_body) return hash_out_of_memory(w, A, mark);
  for (int a = 0; a < nb; a++) {
    list[a].nbig = 0;
    list[a].big = ARENA_NEW(A, int32_t, list[a].b->p.nt + 1, "large triangles");
    if (!list[a].big) return hash_out_of_memory(w, A, mark);
  }
  for (uint32_t i = 0; i < th.size; i++) th.head[i] = -1;
  for (int a = 0, e = 0; a < nb; a++)
    for (int t = 0; t < list[a].b->p.nt; t++) {
      const int g = list[a].tri_offset + t;
      th.stamp[g] = 0;
      th.tri_body[g] = a;
      const vec3 lo = list[a].tlo[t], hi = list[a].thi[t];
      if (!in_overlap(&list[a], lo, hi)) continue; /* no crossing can be there */
      const int64_t i0 = cell_of(lo.x, inv_l), i1 = cell_of(hi.x, inv_l), j0 = cell_of(lo.y, inv_l),
                    j1 = cell_of(hi.y, inv_l), k0 = cell_of(lo.z, inv_l), k1 = cell_of(hi.z, inv_l);
      if ((i1 - i0 + 1) * (j1 - j0 + 1) * (k1 - k0 + 1) > 64) {
        list[a].big[list[a].nbig++] = t; /* every query tries it */
        continue;
      }
      for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = j0; j <= j1; j++)
          for (int64_t i = i0; i <= i1; i++) {
            const uint32_t h = cell_hash(i, j, k, th.size);
            th.tri[e] = g;
            th.next[e] = th.head[h];
            th.head[h] = e++;
          }
    }
  /* 2. tets against the points of their cells */
  int colliding = 0, serial = 0;
  for (int bi = 0; bi < nb; bi++) {
    const solid_body *B = list[bi].b;
    const vec3 *x = B->p.x;
    for (int t = 0; t < B->model.nt; t++, serial++) {
      const int32_t *q = B->model.tet + 4 * t;
      const vec3 lo = v3_min(v3_min(x[q[0]], x[q[1]]), v3_min(x[q[2]], x[q[3]]));
      const vec3 hi = v3_max(v3_max(x[q[0]], x[q[1]]), v3_max(x[q[2]], x[q[3]]));
      if (!in_overlap(&list[bi], lo, hi)) continue;
      const int64_t i0 = cell_of(lo.x, inv_l), i1 = cell_of(hi.x, inv_l), j0 = cell_of(lo.y, inv_l),
                    j1 = cell_of(hi.y, inv_l), k0 = cell_of(lo.z, inv_l), k1 = cell_of(hi.z, inv_l);
      if ((i1 - i0 + 1) * (j1 - j0 + 1) * (k1 - k0 + 1) > 512) continue; /* a degenerate, exploded tet */
      for (int64_t k = k0; k <= k1; k++)
        for (int64_t j = j0; j <= j1; j++)
          for (int64_t i = i0; i <= i1; i++)
            for (int g = head[cell_hash(i, j, k, nt)]; g >= 0; g = next[g]) {
              if (stamp[g] == serial) continue;
              stamp[g] = serial;
              const int a = owner[g];
              if (a == bi || pt[g].body >= 0) continue; /* own body; already inside one (the first wins) */
              if (world_pair_off(w, list[a].slot, list[bi].slot)) continue; /* (world:pair, collide = false) */
              const vec3 p = list[a].b->p.x[g - list[a].offset];
              if (p.x < lo.x || p.y < lo.y || p.z < lo.z || p.x > hi.x || p.y > hi.y || p.z > hi.z) continue;
              double wt[4];
              tet_barycentric(p, x[q[0]], x[q[1]], x[q[2]], x[q[3]], wt);
              if (wt[0] < 0 || wt[1] < 0 || wt[2] < 0 || wt[3] < 0) continue;
              pt[g].body = bi;
              pt[g].tet = t;
              memcpy(pt[g].w, wt, sizeof wt);
              colliding++;
            }
    }
  }
  w->stats.solid_points += colliding;
  if (!colliding) {
    arena_release(A, mark);
    return 0;
  }
  /* 3. depths: border points, then ring by ring */
  for (int a = 0; a < nb; a++) {
    const solid_body *S = list[a].b;
    for (int i = 0; i < S->p.n; i++) {
      sp_point *P = &pt[list[a].offset + i];
      if (P->body < 0) continue;
      const vec3 xi = S->p.x[i];
      double sw = 0, sh = 0;
      vec3 sr = v3(0, 0, 0);
      for (int k = S->model.adj_row[i]; k < S->model.adj_row[i + 1]; k++) {
        const int j = S->model.adj[k];
        if (pt[list[a].offset + j].body >= 0) continue;
        vec3 xe = xi, ne = v3(0, 0, 1);
        if (!surface_crossing(list, P->body, &th, xi, S->p.x[j], &xe, &ne)) continue;
        const double d = fmax(v3_len(v3_sub(xe, xi)), eps);
        const double wgt = 1.0 / (d * d);
        sw += wgt;
        sh += wgt * v3_dot(v3_sub(xe, xi), ne);
        sr = v3_madd(sr, ne, wgt);
      }
      if (sw > 0 && v3_len2(sr) > 0) {
        P->depth = fmax(sh / sw, 0);
        P->dir = v3_normalize(sr);
        P->ring = 0;
      }
    }
  }
  for (int ring = 1, changed = 1; changed && ring < 64; ring++) {
    changed = 0;
    for (int a = 0; a < nb; a++) {
      const solid_body *S = list[a].b;
      for (int i = 0; i < S->p.n; i++) {
        sp_point *P = &pt[list[a].offset + i];
        if (P->body < 0 || P->ring >= 0) continue;
        const vec3 xi = S->p.x[i];
        double sw = 0, sh = 0;
        vec3 sr = v3(0, 0, 0);
        for (int k = S->model.adj_row[i]; k < S->model.adj_row[i + 1]; k++) {
          const sp_point *Q = &pt[list[a].offset + S->model.adj[k]];
          if (Q->ring < 0 || Q->ring >= ring) continue;
          const vec3 d = v3_sub(S->p.x[S->model.adj[k]], xi);
          const double dl = fmax(v3_len(d), eps);
          const double wgt = 1.0 / (dl * dl);
          sw += wgt;
          sh += wgt * (v3_dot(d, Q->dir) + Q->depth);
          sr = v3_madd(sr, Q->dir, wgt);
        }
        if (sw > 0 && v3_len2(sr) > 0) {
          P->depth = fmax(sh / sw, 0);
          P->dir = v3_normalize(sr);
          P->ring = ring;
          changed = 1;
        }
      }
    }
  }
  /* 4. response */
  int moved = 0;
  for (int a = 0; a < nb; a++) {
    solid_body *S = list[a].b;
    for (int i = 0; i < S->p.n; i++) {
      sp_point *P = &pt[list[a].offset + i];
      if (P->body < 0) continue;
      solid_body *B = list[P->body].b;
      if (P->ring < 0) P->depth = nearest_surface(&list[P->body], S->p.x[i], &P->dir);
      if (!(P->depth >= 0) || !isfinite(P->depth) || !v3_isfinite(P->dir)) continue;
      const double ka = S->p.stiffness, kb = B->p.stiffness;
      const double share = ka + kb > 0 ? kb / (ka + kb) : 0.5;
      const double im = S->p.inv_m[i];
      if (im == 0) continue;
      const vec3 n = P->dir;
      S->p.x[i] = v3_madd(S->p.x[i], n, share * P->depth);
      const double mu = sqrt(S->p.friction * B->p.friction);
      int stuck = 0;
      /* static friction in positions: the point's tangential displacement relative to the tet's
       * material point over the substep is undone while it stays inside the cone of the normal
       * correction (position-based friction); beyond it, it is reduced by mu times that */
      {
        const int32_t *qq = B->model.tet + 4 * P->tet;
        vec3 db = v3(0, 0, 0);
        for (int c = 0; c < 4; c++) db = v3_madd(db, v3_sub(B->p.x[qq[c]], B->p.x_sub[qq[c]]), P->w[c]);
        const vec3 d = v3_sub(v3_sub(S->p.x[i], S->p.x_sub[i]), db);
        const vec3 dt = v3_madd(d, n, -v3_dot(d, n));
        const double dtl = v3_len(dt), cap = mu * share * P->depth;
        stuck = dtl <= cap;
        if (dtl > 0) S->p.x[i] = v3_madd(S->p.x[i], dt, -(stuck ? 1.0 : cap / dtl));
      }
      /* the tet's material point and its effective inverse mass */
      const int32_t *q = B->model.tet + 4 * P->tet;
      vec3 vb = v3(0, 0, 0);
      double imb = 0;
      for (int c = 0; c < 4; c++) {
        vb = v3_madd(vb, B->p.v[q[c]], P->w[c]);
        imb += P->w[c] * P->w[c] * B->p.inv_m[q[c]];
      }
      const vec3 vrel = v3_sub(S->p.v[i], vb);
      const double vn = v3_dot(vrel, n);
      const double K = im + imb;
      double jn = vn < 0 ? -vn / K : 0;
      vec3 J = v3_scale(n, jn);
      /* Coulomb friction on the relative tangential velocity. The normal load includes the
       * position correction (share x depth over the substep, as an impulse): a resting contact
       * is held by it, not by an approaching velocity, and without it rest would slide (002). */
      const vec3 vt = v3_madd(vrel, n, -(vn < 0 ? vn : 0) - (vn > 0 ? vn : 0));
      const double vtl = v3_len(vt);
      const double load = jn + share * P->depth / (s->h * K);
      if (vtl > 0 && (load > 0 || stuck)) {
        /* stuck in positions: no relative sliding velocity either (else it would push on) */
        const double jt = stuck ? vtl / K : fmin(vtl / K, mu * load);
        J = v3_madd(J, vt, -jt / vtl);
      }
      if (load > 0 || stuck) {
        S->p.v[i] = v3_madd(S->p.v[i], J, im);
        for (int c = 0; c < 4; c++) B->p.v[q[c]] = v3_madd(B->p.v[q[c]], J, -P->w[c] * B->p.inv_m[q[c]]);
      }
      S->p.contact[i] = 1;
      moved++;
      contact_work *kw;
      loom_contact *rec = contacts_push(w, &kw);
      if (rec) {
        memset(rec, 0, sizeof *rec);
        rec->body_a = world_handle(w, list[a].slot);
        rec->body_b = world_handle(w, list[P->body].slot);
        rec->type_a = LOOM_FEATURE_VERTEX;
        rec->feature_a = i;
        rec->type_b = LOOM_FEATURE_TET;
        rec->feature_b = P->tet;
        rec->solver = 6;
        rec->point = S->p.x[i];
        rec->normal = n;
        rec->depth = P->depth;
        rec->toi = -1;
        rec->impulse = v3_scale(J, 1.0);
        memset(kw, 0, sizeof *kw);
        kw->slot_a = list[a].slot;
        kw->slot_b = list[P->body].slot;
        kw->resolved = 1;
      }
    }
  }
  arena_release(A, mark);
  return moved;
}

/* ---- rigid shapes against solid surface triangles -----------------------------------------------
 * Vertex contacts keep a solid's vertices out of a rigid body, but a shape smaller than the
 * lattice's cells, or a corner or edge of one, would pass between them. Here each surface triangle
 * near a rigid shape is tested against the shape itself:
 *   - spheres and capsules at the triangle point nearest the shape's axis (the sphere's centre or
 *     the capsule's segment; alternating projections between the convex segment and triangle,
 *     8 rounds), in contact within the radius plus both skins;
 *   - boxes, cylinders and convex hulls (the shapes with a polytope) by separating axes: the
 *     triangle's normal, the polytope's face normals and the cross products of the triangle's edges
 *     with the polytope's edge directions (not when all three vertices touch the shape: the vertex
 *     contacts hold such a triangle; nor when no corner or edge of the polytope comes near the
 *     solid, as with the floor). A separation beyond both skins on any axis means no
 *     contact; otherwise the axis needing the smallest push (the triangle's own normal only
 *     inwards: the shape is outside the solid) gives the direction and depth; the contact point
 *     pair comes from alternating projections between the triangle and the shape's support
 *     feature in that direction (a corner, an edge or a face).
 * Then the triangle's vertices move along the direction so that the contact point reaches the
 * contact distance (weights w / sum w^2 of its barycentric coordinates), its approaching normal
 * velocity relative to the body is removed by an impulse shared between the vertices (by
 * barycentric weights and inverse masses) and a dynamic body (through the contact buffer, solver 2,
 * applied in contact_rigid_couple), with Coulomb friction up to mu times it. */

typedef struct shape_pair {
  loom_world *w;
  int sa, sb; /* the solid's and the rigid body's slots */
  solid_body *S;
  rigid_body *r;
  vec3 pos;   /* the body's pose at the end of the substep */
  double mu;
  int dyn;
  mat3 Iinv;
} shape_pair;

/* Moves triangle t of the solid so that its point of barycentric coordinates `bary` goes `depth`
 * along n, removes the approaching velocity there relative to the body at cp, and records it. */
static void triangle_contact(const shape_pair *c, int t, const double bary[3], vec3 n, double depth, vec3 cp) {
  particles *P = &c->S->p;
  const rigid_body *r = c->r;
  const int32_t *f = P->tri + 3 * t;
  double w2 = 0, kt = 0;
  for (int v = 0; v < 3; v++) {
    w2 += bary[v] * bary[v] * (P->inv_m[f[v]] > 0);
    kt += bary[v] * bary[v] * P->inv_m[f[v]];
  }
  if (!(w2 > 0) || !(kt > 0)) return; /* pinned triangle */
  for (int v = 0; v < 3; v++)
    if (P->inv_m[f[v]] > 0) P->x[f[v]] = v3_madd(P->x[f[v]], n, depth * bary[v] / w2);
  vec3 vp = v3(0, 0, 0);
  for (int v = 0; v < 3; v++) vp = v3_madd(vp, P->v[f[v]], bary[v]);
  const vec3 vrel = v3_sub(vp, rigid_point_velocity(r, cp));
  const double vn = v3_dot(vrel, n);
  if (vn >= 0) return;
  const vec3 rc = v3_sub(cp, c->pos);
  double kr = 0;
  if (c->dyn) {
    const vec3 rn = v3_cross(rc, n);
    kr = (r->params.linear ? r->model.inv_mass : 0) + (r->params.angular ? v3_dot(rn, m3_mulv(&c->Iinv, rn)) : 0);
  }
  const double jn = -vn / (kt + kr);
  vec3 J = v3_scale(n, jn);
  const vec3 vt = v3_madd(vrel, n, -vn);
  const double vtl = v3_len(vt);
  if (vtl > 0) J = v3_madd(J, vt, -fmin(vtl / (kt + kr), c->mu * jn) / vtl);
  for (int v = 0; v < 3; v++) P->v[f[v]] = v3_madd(P->v[f[v]], J, bary[v] * P->inv_m[f[v]]);
  contact_work *kw;
  loom_contact *rec = contacts_push(c->w, &kw);
  if (!rec) return;
  memset(rec, 0, sizeof *rec);
  rec->body_a = world_handle(c->w, c->sa);
  rec->body_b = world_handle(c->w, c->sb);
  rec->type_a = LOOM_FEATURE_TRIANGLE;
  rec->feature_a = t;
  rec->type_b = LOOM_FEATURE_SHAPE;
  rec->feature_b = -1;
  rec->solver = 2;
  rec->point = cp;
  rec->normal = n;
  rec->depth = depth;
  rec->toi = -1;
  rec->impulse = J;
  memset(kw, 0, sizeof *kw);
  kw->slot_a = c->sa;
  kw->slot_b = c->sb;
  kw->resolved = 1;
}

static void rounded_vs_triangles(const shape_pair *c, quat q) {
  const rigid_body *r = c->r;
  const particles *P = &c->S->p;
  const double hh = r->model.shape_type == LOOM_SHAPE_CAPSULE ? r->model.shape.half_h : 0;
  const vec3 ax = q_rotate(q, v3(0, 0, hh));
  const vec3 c0 = v3_sub(c->pos, ax), c1 = v3_add(c->pos, ax);
  const double R = r->model.shape.radius, reach = R + particles_thickness(P) + r->params.thickness;
  const vec3 lo = v3_sub(v3_min(c0, c1), v3(reach, reach, reach)), hi = v3_add(v3_max(c0, c1), v3(reach, reach, reach));
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    const vec3 a = P->x[f[0]], b = P->x[f[1]], cc = P->x[f[2]];
    if (!box_overlap(lo, hi, v3_min(a, v3_min(b, cc)), v3_max(a, v3_max(b, cc)))) continue;
    double bary[3];
    vec3 cs;
    const vec3 pt = geom_segment_triangle_nearest(c0, c1, a, b, cc, 8, bary, &cs);
    const vec3 d = v3_sub(pt, cs);
    const double dist = v3_len(d);
    if (dist >= reach) continue;
    /* the separating direction: from the axis to the triangle; through the axis, the triangle's
     * outward normal reversed (the shape is outside the solid) */
    const vec3 n = dist > 1e-12 * reach ? v3_scale(d, 1.0 / dist) : v3_neg(v3_normalize(v3_cross(v3_sub(b, a), v3_sub(cc, a))));
    if (!v3_isfinite(n)) continue;
    triangle_contact(c, t, bary, n, reach - dist, v3_madd(cs, n, R));
  }
}

/* Projection of points p[0..k) on u: the least and the greatest. */
static void project(const vec3 *p, int k, vec3 u, double *lo, double *hi) {
  double a = INFINITY, b = -INFINITY;
  for (int i = 0; i < k; i++) {
    const double d = v3_dot(p[i], u);
    a = d < a ? d : a;
    b = d > b ? d : b;
  }
  *lo = a;
  *hi = b;
}

/* Orders the support feature's points (all in a plane across n) by angle about their centre c,
 * so that they form a convex polygon; the count kept (1 or 2: a corner or an edge). */
static int order_around(vec3 *p, int k, vec3 c, vec3 n) {
  if (k <= 2) return k;
  const vec3 e1 = v3_normalize(v3_sub(p[0], c)), e2 = v3_cross(n, e1);
  double ang[RIGID_POLY_MAX_VERTS];
  for (int i = 0; i < k; i++) ang[i] = atan2(v3_dot(v3_sub(p[i], c), e2), v3_dot(v3_sub(p[i], c), e1));
  for (int i = 1; i < k; i++) /* insertion sort: at most a cylinder cap's 24 */
    for (int j = i; j > 0 && ang[j] < ang[j - 1]; j--) {
      const double ta = ang[j];
      ang[j] = ang[j - 1];
      ang[j - 1] = ta;
      const vec3 tq = p[j];
      p[j] = p[j - 1];
      p[j - 1] = tq;
    }
  return k;
}

/* The point of the support feature (a point, a segment or the convex polygon p[0..k) about c)
 * nearest x. */
static vec3 closest_on_feature(const vec3 *p, int k, vec3 c, vec3 x) {
  if (k == 1) return p[0];
  if (k == 2) return geom_closest_on_segment(x, p[0], p[1], NULL);
  vec3 best = c;
  double bd = INFINITY;
  for (int i = 0; i < k; i++) {
    const vec3 q = geom_closest_on_triangle(x, c, p[i], p[(i + 1) % k], NULL);
    const double d = v3_dist2(q, x);
    if (d < bd) bd = d, best = q;
  }
  return best;
}

/* Whether segment [a, b] meets the box [lo, hi] (slabs). */
static int segment_meets_box(vec3 a, vec3 b, vec3 lo, vec3 hi) {
  double t0 = 0, t1 = 1;
  const double pa[3] = {a.x, a.y, a.z}, pb[3] = {b.x, b.y, b.z}, l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z};
  for (int k = 0; k < 3; k++) {
    const double d = pb[k] - pa[k];
    if (fabs(d) < 1e-300) {
      if (pa[k] < l[k] || pa[k] > h[k]) return 0;
      continue;
    }
    double u = (l[k] - pa[k]) / d, v = (h[k] - pa[k]) / d;
    if (u > v) {
      const double t = u;
      u = v;
      v = t;
    }
    t0 = fmax(t0, u);
    t1 = fmin(t1, v);
    if (t0 > t1) return 0;
  }
  return 1;
}

/* Whether a corner or an edge of the polytope (vertices pv) comes into the box: without one, the
 * solid can meet only the inside of the polytope's faces, where its vertices' contacts hold it (a
 * face cannot reach between vertices without a vertex on the wrong side) — the floor, a wall. */
static int features_in_box(const rigid_poly *g, const vec3 *pv, vec3 lo, vec3 hi) {
  for (int i = 0; i < g->nv; i++)
    if (pv[i].x >= lo.x && pv[i].x <= hi.x && pv[i].y >= lo.y && pv[i].y <= hi.y && pv[i].z >= lo.z && pv[i].z <= hi.z)
      return 1;
  for (int f = 0; f < g->nf; f++)
    for (int k = 0; k < g->face_count[f]; k++) {
      const int a = g->face_v[g->face_first[f] + k], b = g->face_v[g->face_first[f] + (k + 1) % g->face_count[f]];
      if (a < b && segment_meets_box(pv[a], pv[b], lo, hi)) return 1; /* (each edge once) */
    }
  return 0;
}

/* The box of a solid's surface triangles where they are now. */
static void surface_box(const particles *P, vec3 *lo, vec3 *hi) {
  *lo = v3(INFINITY, INFINITY, INFINITY);
  *hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int t = 0; t < 3 * P->nt; t++) {
    *lo = v3_min(*lo, P->x[P->tri[t]]);
    *hi = v3_max(*hi, P->x[P->tri[t]]);
  }
}

static void polytope_vs_triangles(const shape_pair *c, quat q) {
  const rigid_body *r = c->r;
  const rigid_poly *g = r->model.poly;
  const particles *P = &c->S->p;
  const mat3 R = q_to_mat3(q);
  vec3 pv[RIGID_POLY_MAX_VERTS], fn[RIGID_POLY_MAX_FACES], dir[RIGID_POLY_MAX_EDGES + 1];
  vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
  for (int i = 0; i < g->nv; i++) {
    pv[i] = v3_add(c->pos, m3_mulv(&R, g->v[i]));
    lo = v3_min(lo, pv[i]);
    hi = v3_max(hi, pv[i]);
  }
  for (int k = 0; k < g->nf; k++) fn[k] = m3_mulv(&R, g->face_n[k]);
  for (int k = 0; k < g->ndir; k++) dir[k] = m3_mulv(&R, g->dir[k]);
  const double reach = particles_thickness(P) + r->params.thickness;
  lo = v3_sub(lo, v3(reach, reach, reach));
  hi = v3_add(hi, v3(reach, reach, reach));
  const double size = v3_dist(lo, hi);
  vec3 slo, shi;
  surface_box(P, &slo, &shi);
  if (!features_in_box(g, pv, v3_sub(slo, v3(reach, reach, reach)), v3_add(shi, v3(reach, reach, reach)))) return;
  for (int t = 0; t < P->nt; t++) {
    const int32_t *f = P->tri + 3 * t;
    const vec3 tv[3] = {P->x[f[0]], P->x[f[1]], P->x[f[2]]};
    if (!box_overlap(lo, hi, v3_min(tv[0], v3_min(tv[1], tv[2])), v3_max(tv[0], v3_max(tv[1], tv[2])))) continue;
    const vec3 out = v3_normalize(v3_cross(v3_sub(tv[1], tv[0]), v3_sub(tv[2], tv[0])));
    if (!v3_isfinite(out)) continue; /* degenerate triangle */
    /* a triangle whose three vertices touch the shape is held by the vertex contacts (a face
     * pressed flat): the triangle contact is for corners and edges between vertices */
    int held = 0;
    for (int k = 0; k < 3; k++) {
      vec3 nl;
      held += rigid_local_distance(r, m3_tmulv(&R, v3_sub(tv[k], c->pos)), &nl) <= 1.5 * reach;
    }
    if (held == 3) continue;
    const vec3 e[3] = {v3_sub(tv[1], tv[0]), v3_sub(tv[2], tv[1]), v3_sub(tv[0], tv[2])};
    double best = INFINITY;
    vec3 n = v3_neg(out);
    int separated = 0;
    const int naxes = 1 + g->nf + 3 * g->ndir;
    for (int k = 0; k < naxes && !separated; k++) {
      vec3 u;
      if (k == 0) u = out;
      else if (k <= g->nf) u = fn[k - 1];
      else {
        const int j = k - 1 - g->nf;
        u = v3_cross(e[j / g->ndir], dir[j % g->ndir]);
        const double l = v3_len(u);
        if (!(l > 1e-9 * v3_len(e[j / g->ndir]))) continue; /* parallel edges: no axis */
        u = v3_scale(u, 1.0 / l);
      }
      double tlo, thi, plo, phi;
      project(tv, 3, u, &tlo, &thi);
      project(pv, g->nv, u, &plo, &phi);
      if (thi < plo - reach || phi < tlo - reach) {
        separated = 1;
        break;
      }
      /* the push that separates the triangle from the shape by `reach` along -u or +u */
      const double down = thi - plo + reach, up = phi - tlo + reach;
      if (down < best) best = down, n = v3_neg(u);
      if (k > 0 && up < best) best = up, n = u; /* the triangle's own normal: inwards only */
    }
    if (separated || !(best > 0) || !(best < INFINITY)) continue;
    /* the shape's support towards the triangle (along n): a corner, an edge or a face; the
     * contact point pair by alternating projections between it and the triangle */
    double top = -INFINITY;
    for (int i = 0; i < g->nv; i++) top = fmax(top, v3_dot(pv[i], n));
    vec3 sv[RIGID_POLY_MAX_VERTS], sc = v3(0, 0, 0);
    int ns = 0;
    for (int i = 0; i < g->nv; i++)
      if (v3_dot(pv[i], n) >= top - 1e-6 * size) sc = v3_add(sc, sv[ns++] = pv[i]);
    sc = v3_scale(sc, 1.0 / ns);
    const int nf = order_around(sv, ns, sc, n);
    double bary[3];
    vec3 sp = sc, tp = sc;
    for (int it = 0; it < 4; it++) {
      tp = geom_closest_on_triangle(sp, tv[0], tv[1], tv[2], bary);
      sp = closest_on_feature(sv, nf, sc, tp);
    }
    geom_closest_on_triangle(sp, tv[0], tv[1], tv[2], bary);
    triangle_contact(c, t, bary, n, best, sp);
  }
}

/* A triangle mesh obstacle's sharp features (rigid_features.c: corners, convex and boundary edges,
 * the vertices of smooth convex regions) against the surface triangles of a solid with
 * penetration contacts (the collision pipeline keeps other solids' surfaces off a mesh): each
 * feature a sphere or capsule of radius 0 in rounded_vs_triangles' way, except that a triangle
 * behind the feature (it came past: the feature pokes into the solid) is pushed back along its
 * normal turned to the feature's outward hint. */
static void mesh_features_vs_triangles(const shape_pair *c, quat q) {
  const rigid_model *md = &c->r->model;
  const particles *P = &c->S->p;
  vec3 slo, shi;
  surface_box(P, &slo, &shi);
  const double skin = particles_thickness(P) + c->r->params.thickness;
  for (int i = 0; i < md->nfeat_pt + md->nfeat_seg; i++) {
    const int seg = i >= md->nfeat_pt, k = seg ? i - md->nfeat_pt : i;
    const double rad = seg ? md->feat_seg_r[k] : md->feat_pt_r[k], reach = skin + rad;
    const vec3 f0 = v3_add(c->pos, q_rotate(q, seg ? md->feat_seg[2 * k] : md->feat_pt[k]));
    const vec3 f1 = seg ? v3_add(c->pos, q_rotate(q, md->feat_seg[2 * k + 1])) : f0;
    const vec3 hint = q_rotate(q, seg ? md->feat_seg_n[k] : md->feat_pt_n[k]);
    const vec3 e = v3(reach, reach, reach), lo = v3_sub(v3_min(f0, f1), e), hi = v3_add(v3_max(f0, f1), e);
    if (!box_overlap(lo, hi, slo, shi)) continue;
    for (int t = 0; t < P->nt; t++) {
      const int32_t *f = P->tri + 3 * t;
      const vec3 a = P->x[f[0]], b = P->x[f[1]], cc = P->x[f[2]];
      if (!box_overlap(lo, hi, v3_min(a, v3_min(b, cc)), v3_max(a, v3_max(b, cc)))) continue;
      double bary[3];
      vec3 cs;
      geom_segment_triangle_nearest(f0, f1, a, b, cc, 8, bary, &cs);
      const vec3 pt = geom_closest_on_triangle(cs, a, b, cc, bary);
      const vec3 d = v3_sub(pt, cs);
      const double dist = v3_len(d);
      if (dist >= reach) continue;
      vec3 nt = v3_normalize(v3_cross(v3_sub(b, a), v3_sub(cc, a)));
      if (!v3_isfinite(nt)) continue;
      if (v3_dot(nt, hint) < 0) nt = v3_neg(nt);
      vec3 n;
      double sep;
      if (dist > 1e-9 * reach && v3_dot(d, hint) >= 0) n = v3_scale(d, 1.0 / dist), sep = dist;
      else n = nt, sep = v3_dot(d, nt);
      triangle_contact(c, t, bary, n, reach - sep, v3_madd(cs, n, rad));
    }
  }
}

void contact_solid_shapes(loom_world *w, const step_info *s) {
  for (int k = 0; k < w->npairs; k++) {
    int sa = w->pairs[k].a, sb = w->pairs[k].b;
    if (w->bodies[sa].ops->id == LOOM_KIND_RIGID) {
      const int t = sa;
      sa = sb, sb = t;
    }
    if (w->bodies[sa].ops->id != LOOM_KIND_SOLID || w->bodies[sb].ops->id != LOOM_KIND_RIGID) continue;
    solid_body *S = solid_of(&w->bodies[sa]);
    rigid_body *r = rigid_of_slot(&w->bodies[sb]);
    const int st = r->model.shape_type;
    const int rounded = st == LOOM_SHAPE_SPHERE || st == LOOM_SHAPE_CAPSULE;
    const int mesh = st == LOOM_SHAPE_MESH && S->p.depth_contact;
    if ((!rounded && !r->model.poly && !mesh) || S->p.frozen) continue;
    shape_pair c;
    memset(&c, 0, sizeof c);
    c.w = w;
    c.sa = sa;
    c.sb = sb;
    c.S = S;
    c.r = r;
    quat q;
    rigid_pose_at(r, s->a1, &c.pos, &q);
    c.mu = sqrt(S->p.friction * r->params.friction);
    c.dyn = rigid_is_dynamic(r);
    if (c.dyn) c.Iinv = rigid_world_inv_inertia(r, q);
    if (rounded) rounded_vs_triangles(&c, q);
    else if (mesh) mesh_features_vs_triangles(&c, q);
    else polytope_vs_triangles(&c, q);
  }
}
