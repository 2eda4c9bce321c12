/* bvh.c — static bounding-volume hierarchy over boxes: median-split build, refit, box and
 * segment queries, nearest triangle.
 *
 * Build: the items are sorted once per axis by centroid (stable merge sort, so equal centroids
 * stay in index order). A node takes the middle of its range along the longest axis of its
 * centroid bounds; the two other axis lists are partitioned stably, so every list stays sorted
 * in every sub-range. O(n log n), deterministic, and a split always halves the count (also
 * for identical boxes), which bounds the depth by ceil(log2 n).
 * Layout: nodes in pre-order (left child = parent + 1), so refit is one reverse sweep. */
#include "bvh/bvh.h"

#include <string.h>

#include "geom/geom.h"

static void bvh_clear(bvh *t) { memset(t, 0, sizeof *t); }

void bvh_free(bvh *t) {
  if (!t) return;
  core_free(t->nodes);
  core_free(t->items);
  core_free(t->item_lo);
  core_free(t->item_hi);
  core_free(t->node_elo);
  core_free(t->node_ehi);
  core_free(t->item_elo);
  core_free(t->item_ehi);
  bvh_clear(t);
}

typedef struct build_ctx {
  const vec3 *lo, *hi;
  double *key;       /* n x 3: lo + hi (twice the centroid) */
  int32_t *order[3]; /* per axis: items sorted by key, then index */
  int32_t *tmp;
  unsigned char *side;
  bvh *t;
  int leaf_size;
  int max_depth;
} build_ctx;

/* Stable bottom-up merge sort of idx[0..n) by key[idx * 3 + axis]. */
static void sort_axis(int32_t *idx, int32_t *tmp, const double *key, int axis, int n) {
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      int mid = lo + width < n ? lo + width : n;
      int hi = lo + 2 * width < n ? lo + 2 * width : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = key[idx[j] * 3 + axis] < key[idx[i] * 3 + axis] ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, sizeof(int32_t) * (size_t)n);
  }
}

/* The union of boxes [first, first + count) of lo[], hi[] (a leaf's items, start or end boxes). */
static void box_union(const vec3 *lo, const vec3 *hi, int first, int count, vec3 *ulo, vec3 *uhi) {
  vec3 a = lo[first], b = hi[first];
  for (int i = 1; i < count; i++) {
    a = v3_min(a, lo[first + i]);
    b = v3_max(b, hi[first + i]);
  }
  *ulo = a;
  *uhi = b;
}

static void node_box_from_items(const bvh *t, bvh_node *nd) {
  box_union(t->item_lo, t->item_hi, nd->right, nd->count, &nd->lo, &nd->hi);
}

static int32_t build_node(build_ctx *b, int begin, int end, int depth) {
  bvh *t = b->t;
  int32_t id = t->node_count++;
  if (depth > b->max_depth) b->max_depth = depth;
  int count = end - begin;
  if (count <= b->leaf_size) {
    bvh_node *nd = &t->nodes[id];
    nd->left = -1;
    nd->right = begin;
    nd->count = count;
    nd->pad = 0;
    for (int i = begin; i < end; i++) {
      int32_t it = b->order[0][i];
      t->items[i] = it;
      t->item_lo[i] = b->lo[it];
      t->item_hi[i] = b->hi[it];
    }
    node_box_from_items(t, nd);
    return id;
  }
  int axis = 0;
  double best = -1;
  for (int k = 0; k < 3; k++) {
    double ext = b->key[b->order[k][end - 1] * 3 + k] - b->key[b->order[k][begin] * 3 + k];
    if (ext > best) {
      best = ext;
      axis = k;
    }
  }
  int mid = begin + count / 2;
  for (int i = begin; i < end; i++) b->side[b->order[axis][i]] = i >= mid;
  for (int k = 0; k < 3; k++) {
    if (k == axis) continue;
    int32_t *o = b->order[k];
    int nl = begin, nr = mid;
    for (int i = begin; i < end; i++) b->tmp[b->side[o[i]] ? nr++ : nl++] = o[i];
    memcpy(o + begin, b->tmp + begin, sizeof(int32_t) * (size_t)count);
  }
  int32_t l = build_node(b, begin, mid, depth + 1);
  int32_t r = build_node(b, mid, end, depth + 1);
  bvh_node *nd = &t->nodes[id];
  nd->left = l;
  nd->right = r;
  nd->count = 0;
  nd->pad = 0;
  nd->lo = v3_min(t->nodes[l].lo, t->nodes[r].lo);
  nd->hi = v3_max(t->nodes[l].hi, t->nodes[r].hi);
  return id;
}

/* Sorts the items along the axes and builds the nodes into t's arrays (sized for n). */
static int build_into(bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size, double *key, int32_t *order[3],
                      int32_t *tmp, unsigned char *side) {
  build_ctx b = {lo, hi, key, {order[0], order[1], order[2]}, tmp, side, t, leaf_size, 0};
  for (int i = 0; i < n; i++) {
    b.key[i * 3 + 0] = lo[i].x + hi[i].x;
    b.key[i * 3 + 1] = lo[i].y + hi[i].y;
    b.key[i * 3 + 2] = lo[i].z + hi[i].z;
  }
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < n; i++) b.order[k][i] = i;
    sort_axis(b.order[k], b.tmp, b.key, k, n);
  }
  t->item_count = n;
  t->node_count = 0;
  build_node(&b, 0, n, 0);
  /* Guaranteed by the halving split; checked because the query stacks rely on it. */
  if (b.max_depth >= BVH_MAX_DEPTH) return loom_fail("bvh_build: depth %d exceeds %d (internal error)", b.max_depth, BVH_MAX_DEPTH);
  return 0;
}

static int check_boxes(const vec3 *lo, const vec3 *hi, int n, int leaf_size) {
  if (n < 0) return loom_fail("bvh_build: n must be >= 0 (got %d)", n);
  if (leaf_size < 1) return loom_fail("bvh_build: leaf_size must be >= 1 (got %d)", leaf_size);
  if (n > (1 << 30)) return loom_fail("bvh_build: %d boxes exceed the 2^30 limit of int32 node indices", n);
  if (n > 0 && (!lo || !hi)) return loom_fail("bvh_build: box arrays are NULL");
  for (int i = 0; i < n; i++)
    if (!v3_isfinite(lo[i]) || !v3_isfinite(hi[i])) return loom_fail("bvh_build: box %d is not finite", i);
  return 0;
}

int bvh_build(bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size) {
  bvh_clear(t);
  if (check_boxes(lo, hi, n, leaf_size)) return -1;
  if (n == 0) return 0;
  /* Pre-order node count is at most 2 * leaves - 1 and leaves <= n. */
  size_t nn = (size_t)n * 2 - 1;
  t->nodes = core_calloc(nn, sizeof(bvh_node));
  t->items = core_alloc((size_t)n, sizeof(int32_t));
  t->item_lo = core_alloc((size_t)n, sizeof(vec3));
  t->item_hi = core_alloc((size_t)n, sizeof(vec3));
  double *key = core_alloc((size_t)n * 3, sizeof(double));
  int32_t *order[3];
  for (int k = 0; k < 3; k++) order[k] = core_alloc((size_t)n, sizeof(int32_t));
  int32_t *tmp = core_alloc((size_t)n, sizeof(int32_t));
  unsigned char *side = core_alloc((size_t)n, 1);
  int ok = t->nodes && t->items && t->item_lo && t->item_hi && key && order[0] && order[1] && order[2] && tmp && side;
  int failed = !ok;
  if (ok) failed = build_into(t, lo, hi, n, leaf_size, key, order, tmp, side);
  core_free(key);
  for (int k = 0; k < 3; k++) core_free(order[k]);
  core_free(tmp);
  core_free(side);
  if (failed) {
    bvh_free(t);
    if (!ok) loom_error_prefix("bvh_build");
    return -1;
  }
  return 0;
}

void bvh_work_free(bvh_work *wk) {
  if (!wk) return;
  core_free(wk->key);
  for (int k = 0; k < 3; k++) core_free(wk->order[k]);
  core_free(wk->tmp);
  core_free(wk->side);
  memset(wk, 0, sizeof *wk);
}

int bvh_work_reserve(bvh_work *wk, int n) {
  if (wk->cap >= n) return 0;
  bvh_work_free(wk);
  wk->key = core_alloc((size_t)n * 3, sizeof(double));
  for (int k = 0; k < 3; k++) wk->order[k] = core_alloc((size_t)n, sizeof(int32_t));
  wk->tmp = core_alloc((size_t)n, sizeof(int32_t));
  wk->side = core_alloc((size_t)n, 1);
  if (!wk->key || !wk->order[0] || !wk->order[1] || !wk->order[2] || !wk->tmp || !wk->side) {
    bvh_work_free(wk);
    return loom_fail("bvh_rebuild: out of memory for %d boxes", n);
  }
  wk->cap = n;
  return 0;
}

int bvh_rebuild(bvh *t, const vec3 *lo, const vec3 *hi, int n, int leaf_size, bvh_work *wk) {
  if (!t->nodes || t->item_count != n || n == 0) {
    /* first build (or another size): allocate the tree, then rebuild into it */
    bvh_free(t);
    if (bvh_build(t, lo, hi, n, leaf_size)) return -1;
  } else if (check_boxes(lo, hi, n, leaf_size)) {
    return -1;
  }
  if (n == 0) return 0;
  if (bvh_work_reserve(wk, n)) return -1;
  if (build_into(t, lo, hi, n, leaf_size, wk->key, wk->order, wk->tmp, wk->side)) {
    bvh_free(t);
    return -1;
  }
  return 0;
}

void bvh_refit(bvh *t, const vec3 *lo, const vec3 *hi) {
  for (int i = 0; i < t->item_count; i++) {
    t->item_lo[i] = lo[t->items[i]];
    t->item_hi[i] = hi[t->items[i]];
  }
  /* Pre-order: children have larger indices than their parent. */
  for (int id = t->node_count - 1; id >= 0; id--) {
    bvh_node *nd = &t->nodes[id];
    if (nd->left < 0) {
      node_box_from_items(t, nd);
    } else {
      nd->lo = v3_min(t->nodes[nd->left].lo, t->nodes[nd->right].lo);
      nd->hi = v3_max(t->nodes[nd->left].hi, t->nodes[nd->right].hi);
    }
  }
}

int bvh_enable_ends(bvh *t) {
  if (t->node_elo || t->item_count == 0) return 0;
  /* (room for every tree of this many items: a rebuild may shape it differently) */
  const size_t nn = 2 * (size_t)t->item_count - 1, ni = (size_t)t->item_count;
  t->node_elo = core_alloc(nn, sizeof(vec3));
  t->node_ehi = core_alloc(nn, sizeof(vec3));
  t->item_elo = core_alloc(ni, sizeof(vec3));
  t->item_ehi = core_alloc(ni, sizeof(vec3));
  if (t->node_elo && t->node_ehi && t->item_elo && t->item_ehi) return 0;
  core_free(t->node_elo);
  core_free(t->node_ehi);
  core_free(t->item_elo);
  core_free(t->item_ehi);
  t->node_elo = t->node_ehi = t->item_elo = t->item_ehi = NULL;
  return loom_fail("bvh: out of memory for the end boxes of %d items", t->item_count);
}

void bvh_refit_ends(bvh *t, const vec3 *elo, const vec3 *ehi) {
  if (!t->node_elo) return;
  int differ = 0;
  for (int i = 0; i < t->item_count; i++) {
    const vec3 a = elo[t->items[i]], b = ehi[t->items[i]], lo = t->item_lo[i], hi = t->item_hi[i];
    t->item_elo[i] = a;
    t->item_ehi[i] = b;
    differ |= a.x != lo.x || a.y != lo.y || a.z != lo.z || b.x != hi.x || b.y != hi.y || b.z != hi.z;
  }
  t->ends_differ = differ;
  for (int id = t->node_count - 1; id >= 0; id--) {
    const bvh_node *nd = &t->nodes[id];
    if (nd->left < 0) {
      box_union(t->item_elo, t->item_ehi, nd->right, nd->count, &t->node_elo[id], &t->node_ehi[id]);
    } else {
      t->node_elo[id] = v3_min(t->node_elo[nd->left], t->node_elo[nd->right]);
      t->node_ehi[id] = v3_max(t->node_ehi[nd->left], t->node_ehi[nd->right]);
    }
  }
}

void bvh_ends_equal(bvh *t) { t->ends_differ = 0; }

/* A node's or an item's end box: its start box in a tree whose end boxes are its start boxes
 * (their arrays are then not kept up to date) */
static inline vec3 node_elo(const bvh *t, int id) { return t->ends_differ ? t->node_elo[id] : t->nodes[id].lo; }
static inline vec3 node_ehi(const bvh *t, int id) { return t->ends_differ ? t->node_ehi[id] : t->nodes[id].hi; }
static inline vec3 item_elo(const bvh *t, int i) { return t->ends_differ ? t->item_elo[i] : t->item_lo[i]; }
static inline vec3 item_ehi(const bvh *t, int i) { return t->ends_differ ? t->item_ehi[i] : t->item_hi[i]; }

int bvh_motion_overlap(vec3 alo, vec3 ahi, vec3 aelo, vec3 aehi, vec3 blo, vec3 bhi, vec3 belo, vec3 behi) {
  return (alo.x <= bhi.x || aelo.x <= behi.x) && (blo.x <= ahi.x || belo.x <= aehi.x) &&
         (alo.y <= bhi.y || aelo.y <= behi.y) && (blo.y <= ahi.y || belo.y <= aehi.y) &&
         (alo.z <= bhi.z || aelo.z <= behi.z) && (blo.z <= ahi.z || belo.z <= aehi.z);
}

int bvh_query_motion(const bvh *t, vec3 lo, vec3 hi, vec3 elo, vec3 ehi, int (*fn)(int item, void *ctx), void *ctx) {
  return bvh_query_motion_skip(t, NULL, -1, lo, hi, elo, ehi, fn, ctx);
}

static int query_box(const bvh *t, const int32_t *tag, int32_t skip, vec3 lo, vec3 hi, int (*fn)(int item, void *ctx),
                     void *ctx);

int bvh_query_motion_skip(const bvh *t, const int32_t *tag, int32_t skip, vec3 lo, vec3 hi, vec3 elo, vec3 ehi,
                          int (*fn)(int item, void *ctx), void *ctx) {
  if (!t || t->node_count == 0) return 0;
  if (skip < 0) tag = NULL;
  if (!t->ends_differ && lo.x == elo.x && lo.y == elo.y && lo.z == elo.z && hi.x == ehi.x && hi.y == ehi.y && hi.z == ehi.z)
    return query_box(t, tag, skip, lo, hi, fn, ctx); /* (the same test: start and end boxes are one) */
  int32_t stack[BVH_MAX_DEPTH];
  int sp = 0;
  int32_t id = 0;
  for (;;) {
    const bvh_node *nd = &t->nodes[id];
    if ((!tag || tag[id] != skip) && bvh_motion_overlap(nd->lo, nd->hi, node_elo(t, id), node_ehi(t, id), lo, hi, elo, ehi)) {
      if (nd->left >= 0) {
        stack[sp++] = nd->right;
        id = nd->left;
        continue;
      }
      for (int i = nd->right; i < nd->right + nd->count; i++) {
        if (bvh_motion_overlap(t->item_lo[i], t->item_hi[i], item_elo(t, i), item_ehi(t, i), lo, hi, elo, ehi)) {
          int r = fn(t->items[i], ctx);
          if (r) return r;
        }
      }
    }
    if (sp == 0) return 0;
    id = stack[--sp];
  }
}

int bvh_box_overlap(vec3 alo, vec3 ahi, vec3 blo, vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}

/* Segment p0 + s d, s in [0, 1], against a closed box; inv = 1 / d per axis. Kay & Kajiya 1986
 * slabs. The entry/exit parameters are monotone in the box bounds (rounding is monotone), so a
 * segment that meets an item's box always meets every enclosing node box: the hierarchy never
 * loses an item the brute-force test would report. */
static int seg_box(vec3 p0, vec3 d, vec3 inv, vec3 lo, vec3 hi) {
  double t0 = 0, t1 = 1;
  for (int k = 0; k < 3; k++) {
    double pk = v3_comp(p0, k), dk = v3_comp(d, k), ik = v3_comp(inv, k);
    double lk = v3_comp(lo, k), hk = v3_comp(hi, k);
    if (dk == 0) {
      if (pk < lk || pk > hk) return 0;
      continue;
    }
    double ta = ((dk > 0 ? lk : hk) - pk) * ik;
    double tb = ((dk > 0 ? hk : lk) - pk) * ik;
    if (ta > t0) t0 = ta;
    if (tb < t1) t1 = tb;
    if (t0 > t1) return 0;
  }
  return 1;
}

static vec3 inv_dir(vec3 d) { return v3(d.x != 0 ? 1.0 / d.x : 0, d.y != 0 ? 1.0 / d.y : 0, d.z != 0 ? 1.0 / d.z : 0); }

int bvh_segment_box(vec3 p0, vec3 p1, vec3 lo, vec3 hi) {
  if (!v3_isfinite(p0) || !v3_isfinite(p1)) return 0;
  vec3 d = v3_sub(p1, p0);
  return seg_box(p0, d, inv_dir(d), lo, hi);
}

/* Depth-first traversal with an explicit stack of pending right children: at most one per
 * level, so depth <= BVH_MAX_DEPTH entries. */
int bvh_query_box(const bvh *t, vec3 lo, vec3 hi, int (*fn)(int item, void *ctx), void *ctx) {
  return query_box(t, NULL, -1, lo, hi, fn, ctx);
}

/* bvh_query_box passing over the nodes tagged skip (tag NULL: none) */
static int query_box(const bvh *t, const int32_t *tag, int32_t skip, vec3 lo, vec3 hi, int (*fn)(int item, void *ctx),
                     void *ctx) {
  if (!t || t->node_count == 0) return 0;
  int32_t stack[BVH_MAX_DEPTH];
  int sp = 0;
  int32_t id = 0;
  for (;;) {
    const bvh_node *nd = &t->nodes[id];
    if ((!tag || tag[id] != skip) && bvh_box_overlap(nd->lo, nd->hi, lo, hi)) {
      if (nd->left >= 0) {
        stack[sp++] = nd->right;
        id = nd->left;
        continue;
      }
      for (int i = nd->right; i < nd->right + nd->count; i++) {
        if (bvh_box_overlap(t->item_lo[i], t->item_hi[i], lo, hi)) {
          int r = fn(t->items[i], ctx);
          if (r) return r;
        }
      }
    }
    if (sp == 0) return 0;
    id = stack[--sp];
  }
}

int bvh_query_segment(const bvh *t, vec3 p0, vec3 p1, int (*fn)(int item, void *ctx), void *ctx) {
  if (!t || t->node_count == 0 || !v3_isfinite(p0) || !v3_isfinite(p1)) return 0;
  vec3 d = v3_sub(p1, p0), inv = inv_dir(d);
  int32_t stack[BVH_MAX_DEPTH];
  int sp = 0;
  int32_t id = 0;
  for (;;) {
    const bvh_node *nd = &t->nodes[id];
    if (seg_box(p0, d, inv, nd->lo, nd->hi)) {
      if (nd->left >= 0) {
        stack[sp++] = nd->right;
        id = nd->left;
        continue;
      }
      for (int i = nd->right; i < nd->right + nd->count; i++) {
        if (seg_box(p0, d, inv, t->item_lo[i], t->item_hi[i])) {
          int r = fn(t->items[i], ctx);
          if (r) return r;
        }
      }
    }
    if (sp == 0) return 0;
    id = stack[--sp];
  }
}

/* Pair and self traversal share one loop over a stack of node pairs (na from tree a, nb from
 * tree b). In self mode a and b are the same tree and an entry with na == nb stands for "all pairs
 * inside this subtree": an inner node expands into self(left), self(right) and pair(left, right);
 * a leaf tests its items i < j. A pair entry of distinct nodes whose boxes overlap expands the
 * node with the larger box (an inner node always before a leaf) into its two children.
 * Stack bound: a self entry at depth d has at most 2 d entries pending beneath it (two per
 * ancestor), and from a pair entry each expansion pushes one entry and adds one level to one of
 * the two sides, at most 2 D levels in all; so pending <= 2 D + 2 D + 2 for trees of depth <= D,
 * which BVH_PAIR_STACK covers for D = BVH_MAX_DEPTH. */
typedef struct pair_entry {
  int32_t na, nb;
} pair_entry;

static double box_extent(const bvh_node *nd) {
  return (nd->hi.x - nd->lo.x) + (nd->hi.y - nd->lo.y) + (nd->hi.z - nd->lo.z);
}

/* Items of two leaves; a leaf with itself (same) pairs slots i < j; ordered puts the smaller item
 * index first (self traversal). */
static int leaf_pairs(const bvh *a, const bvh_node *la, const bvh *b, const bvh_node *lb, int same, int ordered,
                      int ends, int (*fn)(int, int, void *), void *ctx) {
  for (int i = la->right; i < la->right + la->count; i++) {
    for (int j = same ? i + 1 : lb->right; j < lb->right + lb->count; j++) {
      if (ends ? !bvh_motion_overlap(a->item_lo[i], a->item_hi[i], item_elo(a, i), item_ehi(a, i), b->item_lo[j],
                                     b->item_hi[j], item_elo(b, j), item_ehi(b, j))
               : !bvh_box_overlap(a->item_lo[i], a->item_hi[i], b->item_lo[j], b->item_hi[j]))
        continue;
      int ia = a->items[i], ib = b->items[j];
      int r = ordered && ib < ia ? fn(ib, ia, ctx) : fn(ia, ib, ctx);
      if (r) return r;
    }
  }
  return 0;
}

/* From the node pair (na, nb): in self mode na == nb stands for the subtree with itself. */
static int pair_traverse(const bvh *a, const bvh *b, int self, const int32_t *tag, int na0, int nb0,
                         int (*fn)(int, int, void *), void *ctx) {
  if (!a || !b || a->node_count == 0 || b->node_count == 0) return 0;
  pair_entry stack[BVH_PAIR_STACK];
  int sp = 0;
  pair_entry e = {na0, nb0};
  /* (trees whose end boxes are their start boxes: the motion test is the box test) */
  const int ends = a->ends_differ || b->ends_differ;
  for (;;) {
    const bvh_node *na = &a->nodes[e.na], *nb = &b->nodes[e.nb];
    if (tag && tag[e.na] >= 0 && tag[e.na] == tag[e.nb]) {
      /* (every pair of the two subtrees is one the caller skips: nothing to report) */
    } else if (self && e.na == e.nb) {
      if (na->left >= 0) {
        LOOM_ASSERT(sp + 2 <= BVH_PAIR_STACK, "bvh pair stack overflow");
        stack[sp++] = (pair_entry){na->left, na->right};
        stack[sp++] = (pair_entry){na->right, na->right};
        e = (pair_entry){na->left, na->left};
        continue;
      }
      int r = leaf_pairs(a, na, b, nb, 1, 1, ends, fn, ctx);
      if (r) return r;
    } else if (ends ? bvh_motion_overlap(na->lo, na->hi, node_elo(a, e.na), node_ehi(a, e.na), nb->lo, nb->hi,
                                         node_elo(b, e.nb), node_ehi(b, e.nb))
                    : bvh_box_overlap(na->lo, na->hi, nb->lo, nb->hi)) {
      int split_a = na->left >= 0 && (nb->left < 0 || box_extent(na) >= box_extent(nb));
      if (split_a || nb->left >= 0) {
        LOOM_ASSERT(sp + 1 <= BVH_PAIR_STACK, "bvh pair stack overflow");
        if (split_a) {
          stack[sp++] = (pair_entry){na->right, e.nb};
          e.na = na->left;
        } else {
          stack[sp++] = (pair_entry){e.na, nb->right};
          e.nb = nb->left;
        }
        continue;
      }
      int r = leaf_pairs(a, na, b, nb, 0, self, ends, fn, ctx);
      if (r) return r;
    }
    if (sp == 0) return 0;
    e = stack[--sp];
  }
}

int bvh_query_pairs(const bvh *a, const bvh *b, int (*fn)(int ia, int ib, void *ctx), void *ctx) {
  return pair_traverse(a, b, 0, NULL, 0, 0, fn, ctx);
}

int bvh_query_self(const bvh *t, int (*fn)(int i, int j, void *ctx), void *ctx) {
  return pair_traverse(t, t, 1, NULL, 0, 0, fn, ctx);
}

int bvh_query_pairs_part(const bvh *a, const bvh *b, int part, int (*fn)(int ia, int ib, void *ctx), void *ctx) {
  if (!a || !b || a->node_count == 0 || b->node_count == 0) return 0;
  const bvh_node *root = &a->nodes[0];
  if (root->left < 0) return part == 0 ? pair_traverse(a, b, 0, NULL, 0, 0, fn, ctx) : 0;
  return pair_traverse(a, b, 0, NULL, part == 0 ? root->left : root->right, 0, fn, ctx);
}

int bvh_query_self_part(const bvh *t, int part, int (*fn)(int i, int j, void *ctx), void *ctx) {
  return bvh_query_self_part_skip(t, NULL, part, fn, ctx);
}

int bvh_query_self_part_skip(const bvh *t, const int32_t *tag, int part, int (*fn)(int i, int j, void *ctx), void *ctx) {
  if (!t || t->node_count == 0) return 0;
  const bvh_node *root = &t->nodes[0];
  if (root->left < 0) return part == 0 ? pair_traverse(t, t, 1, tag, 0, 0, fn, ctx) : 0;
  if (part == 0) return pair_traverse(t, t, 1, tag, root->left, root->left, fn, ctx);
  const int r = pair_traverse(t, t, 1, tag, root->right, root->right, fn, ctx);
  return r ? r : pair_traverse(t, t, 1, tag, root->left, root->right, fn, ctx);
}

/* Squared distance from p to a closed box (0 inside). */
static double box_dist2(vec3 p, vec3 lo, vec3 hi) {
  double dx = fmax(fmax(lo.x - p.x, p.x - hi.x), 0);
  double dy = fmax(fmax(lo.y - p.y, p.y - hi.y), 0);
  double dz = fmax(fmax(lo.z - p.z, p.z - hi.z), 0);
  return dx * dx + dy * dy + dz * dz;
}

/* The nearest triangle found so far (best < 0: none yet, within sqrt(best2) inclusive). */
typedef struct closest_best {
  int best;
  double best2;
  vec3 q;
  double w[3];
} closest_best;

static closest_best closest_start(vec3 p, double max_dist) {
  closest_best c = {-1, max_dist >= 0 ? max_dist * max_dist : -1, p, {0, 0, 0}};
  return c;
}

/* Triangle `it` replaces the best when nearer (the first within the bound inclusive, then only
 * strictly nearer ones: ties keep the first found). */
static void closest_try(closest_best *c, const vec3 *v, const int32_t *tri, vec3 p, int it) {
  double w[3];
  const vec3 q = geom_closest_on_triangle(p, v[tri[3 * it]], v[tri[3 * it + 1]], v[tri[3 * it + 2]], w);
  const double d2 = v3_dist2(p, q);
  /* ties go to the lowest index, so that the tree and a scan agree whatever order they visit in */
  if (c->best >= 0 ? d2 < c->best2 || (d2 == c->best2 && it < c->best) : d2 <= c->best2) {
    c->best = it;
    c->best2 = d2;
    c->q = q;
    c->w[0] = w[0];
    c->w[1] = w[1];
    c->w[2] = w[2];
  }
}

static int closest_out(const closest_best *c, double *dist, vec3 *closest, double bary[3]) {
  if (dist) *dist = c->best >= 0 ? sqrt(c->best2) : INFINITY;
  if (closest) *closest = c->q;
  if (bary) {
    bary[0] = c->w[0];
    bary[1] = c->w[1];
    bary[2] = c->w[2];
  }
  return c->best;
}

int bvh_closest_triangle(const bvh *t, const vec3 *v, const int32_t *tri, vec3 p, double max_dist, double *dist,
                         vec3 *closest, double bary[3], double *tests) {
  closest_best c = closest_start(p, max_dist);
  if (t && t->node_count > 0 && v3_isfinite(p) && c.best2 >= 0) {
    int32_t stack[BVH_MAX_DEPTH];
    int sp = 0;
    int32_t id = 0;
    for (;;) {
      const bvh_node *nd = &t->nodes[id];
      double bd = box_dist2(p, nd->lo, nd->hi);
      /* Nothing in a box farther than the best can beat it (a box as far may hold a tie of a
       * lower index, which wins). */
      int prune = bd > c.best2;
      if (!prune) {
        if (nd->left >= 0) {
          /* Nearer child first; the other waits on the stack (one entry per level). */
          const bvh_node *l = &t->nodes[nd->left], *r = &t->nodes[nd->right];
          double dl = box_dist2(p, l->lo, l->hi), dr = box_dist2(p, r->lo, r->hi);
          if (dr < dl) {
            stack[sp++] = nd->left;
            id = nd->right;
          } else {
            stack[sp++] = nd->right;
            id = nd->left;
          }
          continue;
        }
        for (int i = nd->right; i < nd->right + nd->count; i++) closest_try(&c, v, tri, p, t->items[i]);
        if (tests) *tests += nd->count;
      }
      if (sp == 0) break;
      id = stack[--sp];
    }
  }
  return closest_out(&c, dist, closest, bary);
}

int bvh_closest_triangle_scan(int nt, const vec3 *v, const int32_t *tri, vec3 p, double max_dist, double *dist,
                              vec3 *closest, double bary[3], double *tests) {
  closest_best c = closest_start(p, max_dist);
  /* the same acceptance as the tree's leaves (and nothing for a non-finite point, as the tree) */
  if (v3_isfinite(p) && c.best2 >= 0) {
    for (int it = 0; it < nt; it++) closest_try(&c, v, tri, p, it);
    if (tests) *tests += nt;
  }
  return closest_out(&c, dist, closest, bary);
}
